import { describe, expect, it } from "vitest";
import { render, screen } from "@testing-library/svelte";
import { mockIPC } from "@tauri-apps/api/mocks";
import Overview from "./Overview.svelte";
import * as f from "../lib/fixtures";

describe("Overview", () => {
  it("shows the figures and says how to connect when no client is connected", async () => {
    mockIPC((cmd) => {
      if (cmd === "overview") return f.overview();
      if (cmd === "autostart") return false;
    });
    render(Overview);
    expect(await screen.findByTestId("no-clients")).toHaveTextContent('["mcp"]');
    expect(screen.getByTestId("card-calls")).toHaveTextContent("12");
    expect(screen.getByTestId("card-calls")).toHaveTextContent("1 error");
    expect(screen.getByTestId("card-kept")).toHaveTextContent("5.0 MB");
    expect(screen.getByTestId("card-kept")).toHaveTextContent("300 MB in all recorded calls");
  });

  it("lists connected clients", async () => {
    mockIPC((cmd) => {
      if (cmd === "overview")
        return f.overview({
          status: f.status({ clients: 1 }),
          clients: [{ id: 1, client: "claude-ai", version: "0.9", since: new Date().toISOString() }],
        });
      if (cmd === "autostart") return true;
    });
    render(Overview);
    expect(await screen.findByTestId("clients")).toHaveTextContent("claude-ai");
    expect(screen.getByTestId("card-clients")).toHaveTextContent("1");
    expect(await screen.findByTestId("autostart")).toBeChecked();
  });

  it("shows an error where the overview failed", async () => {
    mockIPC((cmd) => {
      if (cmd === "overview") throw { code: "internal", message: "engine gone" };
      if (cmd === "autostart") return false;
    });
    render(Overview);
    expect(await screen.findByRole("alert")).toHaveTextContent("engine gone");
  });
});
