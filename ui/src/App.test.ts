import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { mockWindows } from "@tauri-apps/api/mocks";
import { mockCommands } from "./lib/mock";
import { emit } from "@tauri-apps/api/event";
import App from "./App.svelte";
import * as f from "./lib/fixtures";

function backend() {
  let paused = false;
  mockWindows("main");
  mockCommands(
    {
      status: () => f.status({ paused }),
      set_paused: (args) => {
        paused = args.paused;
        return f.status({ paused });
      },
      overview: () => f.overview(),
      autostart: () => false,
      servers: () => [],
      roots: () => [],
    },
    { events: true },
  );
}

describe("App", () => {
  it("pauses and resumes proxying from the header", async () => {
    backend();
    render(App);
    expect(await screen.findByTestId("status-line")).toHaveTextContent("Running · 0 clients connected");
    await userEvent.click(screen.getByTestId("pause"));
    await waitFor(() => expect(screen.getByTestId("status-line")).toHaveTextContent("Paused"));
    expect(screen.getByTestId("pause")).toHaveTextContent("Resume proxying");
  });

  it("follows the app's change events and shows a broken config file", async () => {
    backend();
    render(App);
    await screen.findByTestId("status-line");
    await emit("offload://changed", f.status({ clients: 2, configError: "config.json is not valid JSON at line 3" }));
    await waitFor(() => expect(screen.getByTestId("status-line")).toHaveTextContent("2 clients connected"));
    expect(screen.getByTestId("config-error")).toHaveTextContent("line 3");
  });

  it("switches screens", async () => {
    backend();
    render(App);
    await userEvent.click(screen.getByTestId("nav-servers"));
    expect(await screen.findByTestId("no-servers")).toBeInTheDocument();
    await userEvent.click(screen.getByTestId("nav-directories"));
    expect(await screen.findByRole("heading", { name: "Directories" })).toBeInTheDocument();
  });
});
