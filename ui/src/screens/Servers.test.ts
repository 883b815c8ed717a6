import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { mockIPC } from "@tauri-apps/api/mocks";
import Servers from "./Servers.svelte";
import * as f from "../lib/fixtures";
import type { ServerView } from "../lib/types";

describe("Servers", () => {
  it("says what to do when there is no server", async () => {
    mockIPC((cmd) => (cmd === "servers" ? [] : undefined));
    render(Servers);
    expect(await screen.findByTestId("no-servers")).toHaveTextContent("mcpServers");
  });

  it("shows a server's state, tools, last error and stderr", async () => {
    mockIPC((cmd, args) => {
      if (cmd === "servers") return [f.server({ lastError: "crashed once", stderr: "booting\nready" })];
      if (cmd === "server_tools") {
        expect(args).toEqual({ name: "fx" });
        return [{ name: "echo", description: "Echoes" }];
      }
    });
    render(Servers);
    expect(await screen.findByTestId("server-tools")).toHaveTextContent("echo");
    expect(screen.getByTestId("server-status")).toHaveTextContent("ready");
    expect(screen.getByTestId("server-last-error")).toHaveTextContent("crashed once");
    expect(screen.getByTestId("server-stderr")).toHaveTextContent("booting");
  });

  it("toggles a server off through set_server_enabled", async () => {
    let current: ServerView = f.server();
    const calls: unknown[] = [];
    mockIPC((cmd, args) => {
      if (cmd === "servers") return [current];
      if (cmd === "server_tools") return [];
      if (cmd === "set_server_enabled") {
        calls.push(args);
        current = f.server({ status: "disabled", spec: { ...current.spec, enabled: false } });
      }
    });
    render(Servers);
    await userEvent.click(await screen.findByTestId("server-enabled"));
    await waitFor(() => expect(screen.getByTestId("server-status")).toHaveTextContent("disabled"));
    expect(calls).toEqual([{ name: "fx", enabled: false }]);
    expect(screen.getByText("Enable the server to see its tools.")).toBeInTheDocument();
  });

  it("adds a server with the editor and shows the engine's error in place", async () => {
    const puts: any[] = [];
    mockIPC((cmd, args: any) => {
      if (cmd === "servers") return puts.length > 1 ? [f.server({ name: "everything" })] : [];
      if (cmd === "server_tools") return [];
      if (cmd === "put_server") {
        puts.push(args);
        if (puts.length === 1) throw { code: "invalid_arguments", message: "a stdio server needs a command to run" };
      }
    });
    render(Servers);
    await userEvent.click(await screen.findByTestId("add-server"));
    await userEvent.type(screen.getByTestId("server-name"), "everything");
    await userEvent.click(screen.getByTestId("server-save"));
    expect(await screen.findByTestId("editor-error")).toHaveTextContent("needs a command");

    await userEvent.type(screen.getByTestId("server-command"), "npx");
    await userEvent.type(screen.getByTestId("server-args"), '-y "@scope/server everything"');
    await userEvent.click(screen.getByTestId("server-save"));
    await waitFor(() => expect(screen.getByTestId("server-everything")).toBeInTheDocument());
    expect(puts[1]).toMatchObject({
      previous: null,
      name: "everything",
      spec: { transport: "stdio", command: "npx", args: ["-y", "@scope/server everything"], enabled: true },
    });
  });
});
