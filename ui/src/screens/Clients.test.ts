import { describe, expect, it } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { mockCommands } from "../lib/mock";
import Clients from "./Clients.svelte";
import type { ClientView, ToolsView } from "../lib/types";

const client = (over: Partial<ClientView> = {}): ClientView => ({
  id: "claude-desktop",
  name: "Claude Desktop",
  path: "/home/me/.config/Claude/claude_desktop_config.json",
  present: true,
  connected: false,
  servers: ["sqlite", "github"],
  error: null,
  ...over,
});

describe("Clients", () => {
  it("shows what each way of seeing the tools costs a client's model with every request", async () => {
    mockCommands({
      clients: () => [client()],
      tools_view: () =>
        ({
          mode: "meta",
          why: "auto: 1,096 upstream tools, more than 40",
          exposed: [],
          held: [],
          skipped: [],
          cost: { directBytes: 410_000, directTools: 1_105, metaBytes: 7_900, metaTools: 11 },
        }) as ToolsView,
    });
    render(Clients);
    const direct = await screen.findByTestId("mode-cost-direct");
    expect(direct).toHaveTextContent("each tool listed1,105 tools≈ 102,500 tokens (400 KB)");
    const meta = screen.getByTestId("mode-cost-meta");
    expect(meta).toHaveTextContent("through call_tool11 tools, the rest found by search≈ 1,975 tokens (7.7 KB)");
    // The mode in effect is marked, and why it is.
    expect(meta).toHaveClass("current");
    expect(direct).not.toHaveClass("current");
    expect(screen.getByTestId("mode-now")).toHaveTextContent("through call_tool (auto: 1,096 upstream tools, more than 40)");
  });

  it("appears whole: nothing moves under the pointer when the cost table comes after the list", async () => {
    let answer: (view: ToolsView) => void = () => {};
    const view = new Promise<ToolsView>((resolve) => (answer = resolve));
    mockCommands({ clients: () => [client()], tools_view: () => view });
    render(Clients);
    await screen.findByText("Looking for clients…");
    // The clients are known, the costs not yet: neither the checkbox nor a Connect button is there to aim at.
    await new Promise((r) => setTimeout(r, 50));
    expect(screen.queryByTestId("clients-all")).not.toBeInTheDocument();
    expect(screen.queryByTestId("client-connect")).not.toBeInTheDocument();
    answer({
      mode: "direct",
      why: "auto",
      exposed: [],
      held: [],
      skipped: [],
      cost: { directBytes: 4_000, directTools: 10, metaBytes: 7_900, metaTools: 11 },
    } as ToolsView);
    // Then all at once, the table above the checkbox.
    const all = await screen.findByTestId("clients-all");
    const table = screen.getByTestId("mode-cost");
    expect(table.compareDocumentPosition(all) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(screen.getByTestId("client-connect")).toBeInTheDocument();
  });

  it("says so when no known client is on the machine, and can show them all", async () => {
    mockCommands({ clients: () => [client({ present: false, servers: [] })] });
    render(Clients);
    expect(await screen.findByTestId("no-clients-found")).toBeInTheDocument();
    await userEvent.click(screen.getByTestId("clients-all"));
    expect(screen.getByTestId("client-state")).toHaveTextContent("not found");
  });

  it("connects and disconnects, naming the backup", async () => {
    let connected = false;
    mockCommands({
      clients: () => [client({ connected })],
      connect_client: (args) => {
        expect(args).toEqual({ id: "claude-desktop", expose: null });
        connected = true;
        return { backup: "/home/me/.config/Claude/claude_desktop_config.json.offload-backup-1", client: client({ connected }) };
      },
      disconnect_client: () => {
        connected = false;
        return { backup: null, client: client() };
      },
    });
    render(Clients);
    await userEvent.click(await screen.findByTestId("client-connect"));
    await waitFor(() => expect(screen.getByTestId("client-state")).toHaveTextContent("connected"));
    expect(screen.getByTestId("client-note")).toHaveTextContent("offload-backup-1");
    // Connect became Disconnect: the focus is on it, not dropped.
    await waitFor(() => expect(screen.getByTestId("client-disconnect")).toHaveFocus());
    await userEvent.click(screen.getByTestId("client-disconnect"));
    await waitFor(() => expect(screen.getByTestId("client-state")).toHaveTextContent("not connected"));
    await waitFor(() => expect(screen.getByTestId("client-connect")).toHaveFocus());
  });

  it("imports servers, optionally moving them, and reports what was skipped", async () => {
    const calls: unknown[] = [];
    mockCommands({
      clients: () => [client()],
      import_client_servers: (args) => {
        calls.push(args);
        return { servers: [{ name: "sqlite", skipped: null }, { name: "github", skipped: "Offload has a server of that name" }], backup: "/b" };
      },
    });
    render(Clients);
    const card = await screen.findByTestId("client-claude-desktop");
    await userEvent.click(within(card).getByRole("checkbox"));
    await userEvent.click(within(card).getByTestId("client-import"));
    expect(await within(card).findByTestId("client-note")).toHaveTextContent("Imported 1 server. The previous file is kept as /b.");
    expect(within(card).getByText("github: Offload has a server of that name")).toBeInTheDocument();
    expect(calls).toEqual([{ id: "claude-desktop", removeFromClient: true }]);
  });

  it("shows a client file that does not parse and offers nothing to do with it", async () => {
    mockCommands({ clients: () => [client({ error: "does not parse, so it is left alone" })] });
    render(Clients);
    expect(await screen.findByText(/left alone/)).toBeInTheDocument();
    expect(screen.queryByTestId("client-connect")).not.toBeInTheDocument();
  });

  it("shows the engine's error in place", async () => {
    mockCommands({
      clients: () => [client()],
      connect_client: () => {
        throw { code: "server_unavailable", message: "cannot find the offload program" };
      },
    });
    render(Clients);
    await userEvent.click(await screen.findByTestId("client-connect"));
    expect(await screen.findByTestId("client-note")).toHaveTextContent("cannot find the offload program");
  });

  it("connects with the chosen way of showing tools and shows the entry to paste, with a copy button", async () => {
    const calls: [string, unknown][] = [];
    mockCommands(
      {
        clients: () => [client({ id: "claude-code", name: "Claude Code", present: true, connected: false })],
        client_snippet: () => ({ text: '{\n  "mcpServers": {"offload": {"command": "/o/offload", "args": ["mcp", "--expose", "direct"]}}\n}', command: "claude mcp add offload -- /o/offload mcp --expose direct" }),
        connect_client: () => ({ backup: null, client: client({ id: "claude-code", connected: true }) }),
      },
      { calls },
    );
    render(Clients);
    await userEvent.selectOptions(await screen.findByTestId("client-expose"), "direct");
    await userEvent.click(screen.getByTestId("client-snippet-toggle"));
    expect(await screen.findByTestId("client-snippet")).toHaveTextContent('"--expose", "direct"');
    expect(screen.getByTestId("client-snippet-command")).toHaveTextContent("claude mcp add offload");
    expect(calls).toContainEqual(["client_snippet", { id: "claude-code", expose: "direct" }]);
    await userEvent.click(screen.getByTestId("client-connect"));
    expect(calls).toContainEqual(["connect_client", { id: "claude-code", expose: "direct" }]);
  });
});
