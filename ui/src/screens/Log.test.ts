import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { mockCommands } from "../lib/mock";
import { emit } from "@tauri-apps/api/event";
import Log from "./Log.svelte";
import * as f from "../lib/fixtures";

describe("Live log", () => {
  it("says what will appear when there is no call yet", async () => {
    mockCommands({ call_log: () => [] }, { events: true });
    render(Log);
    expect(await screen.findByTestId("no-calls")).toHaveTextContent("offload mcp");
  });

  it("folds the calls a script made under its row, and shows them on their own until it ends", async () => {
    const run = 4242;
    const made = [
      f.event({ time: "2026-11-21T10:00:01Z", kind: "call", tool: "tools.rows.get_order", server: "rows", upstream_tool: "get_order", script: run }),
      f.event({ time: "2026-11-21T10:00:02Z", kind: "call", tool: "tools.rows.get_order", server: "rows", upstream_tool: "get_order", script: run, outcome: "upstream_tool_error" }),
      f.event({ time: "2026-11-21T10:00:03Z", kind: "store", tool: "offload.store", server: null, upstream_tool: null, script: run, stored: "/data/kept.json" }),
    ];
    mockCommands({ call_log: () => [f.event({ server: "crm" }), ...made] }, { events: true });
    render(Log);
    // The script is still running: its calls are rows of their own.
    await waitFor(() => expect(screen.getAllByTestId("log-row")).toHaveLength(4));
    await emit("offload://calls", [f.event({ time: "2026-11-21T10:00:04Z", kind: "script", tool: "run_script", server: null, upstream_tool: null, script: run })]);
    // It ended: one row for it, newest first, and the call before it.
    await waitFor(() => expect(screen.getAllByTestId("log-row")).toHaveLength(2));
    const [script] = screen.getAllByTestId("log-row");
    expect(script).toHaveTextContent("script");
    expect(script).toHaveTextContent("run_script · 3 calls");
    expect(script).toHaveAttribute("aria-expanded", "false");
    expect(screen.queryAllByTestId("log-row-nested")).toHaveLength(0);
    // Opened: its calls under it, oldest first, the failed one marked.
    await userEvent.click(script);
    const nested = screen.getAllByTestId("log-row-nested");
    expect(nested.map((r) => r.textContent)).toEqual([
      expect.stringContaining("rows · get_order"),
      expect.stringContaining("upstream_tool_error"),
      expect.stringContaining("offload.store"),
    ]);
    expect(nested[1]).toHaveClass("bad");
    expect(screen.getByTestId("log-detail")).toHaveTextContent("run_script");
    await userEvent.click(nested[2]);
    expect(screen.getByTestId("log-detail")).toHaveTextContent("In a script");
    expect(screen.getByTestId("log-detail-stored")).toHaveTextContent("/data/kept.json");
    // Closed again.
    await userEvent.click(screen.getAllByTestId("log-row")[0]);
    expect(screen.queryAllByTestId("log-row-nested")).toHaveLength(0);
  });

  it("shows the engine's error", async () => {
    mockCommands(
      {
        call_log: () => {
          throw { code: "internal", message: "audit log unreadable" };
        },
      },
      { events: true },
    );
    render(Log);
    expect(await screen.findByRole("alert")).toHaveTextContent("audit log unreadable");
  });

  it("shows history, streams new calls, filters, pauses and shows details", async () => {
    mockCommands(
      {
        call_log: (args) => {
          expect(args).toEqual({ limit: 5000 });
          return [f.event(), f.event({ kind: "file_content", server: "db", upstream_tool: "insert", rows: 200, file: "/data/u.csv" })];
        },
      },
      { events: true },
    );
    render(Log);
    await waitFor(() => expect(screen.getByTestId("log-count")).toHaveTextContent("2 shown"));
    // Newest first.
    expect(screen.getAllByTestId("log-row")[0]).toHaveTextContent("file-content");
    // Each row names the server and tool; the client and the file are in the details.
    expect(screen.getAllByTestId("log-row")[0]).toHaveTextContent("db · insert");

    await emit("offload://calls", [f.event({ outcome: "upstream_timeout", server: "slow" })]);
    await waitFor(() => expect(screen.getByTestId("log-count")).toHaveTextContent("3 shown"));

    await userEvent.click(screen.getByTestId("log-errors-only"));
    expect(screen.getByTestId("log-count")).toHaveTextContent("1 shown");
    await userEvent.click(screen.getByTestId("log-errors-only"));
    await userEvent.click(screen.getByTestId("log-files-only"));
    expect(screen.getByTestId("log-count")).toHaveTextContent("1 shown");
    await userEvent.click(screen.getByTestId("log-files-only"));
    await userEvent.selectOptions(screen.getByTestId("log-server"), "crm");
    expect(screen.getByTestId("log-count")).toHaveTextContent("1 shown");
    await userEvent.selectOptions(screen.getByTestId("log-server"), "");

    await userEvent.click(screen.getByTestId("log-pause"));
    await emit("offload://calls", [f.event(), f.event()]);
    await waitFor(() => expect(screen.getByTestId("log-pause")).toHaveTextContent("Show 2 new"));
    expect(screen.getByTestId("log-count")).toHaveTextContent("3 shown");
    await userEvent.click(screen.getByTestId("log-pause"));
    expect(screen.getByTestId("log-count")).toHaveTextContent("5 shown");

    const db = screen.getAllByTestId("log-row").find((r) => r.textContent?.includes("db"))!;
    await userEvent.click(db);
    expect(screen.getByTestId("log-detail")).toHaveTextContent("/data/u.csv");
    expect(screen.getByTestId("log-detail")).toHaveTextContent("200");
    expect(screen.getByTestId("log-detail")).toHaveTextContent("claude/1.0");
  });

  it("shows an error's message and the file a stored answer went to", async () => {
    let revealed: string | null = null;
    mockCommands(
      {
        call_log: () => [
          f.event({ kind: "store", outcome: "ok", stored: "/data/answer.csv", bytes_kept: 1_048_576 }),
          f.event({ outcome: "server_unavailable", message: "server 'crm' is not available: refusing to start; Offload retries in 4 s" }),
        ],
        reveal: ({ path }) => {
          revealed = path;
          return null;
        },
      },
      { events: true },
    );
    render(Log);
    const rows = await screen.findAllByTestId("log-row");
    await userEvent.click(rows[0]);
    expect(screen.getByTestId("log-detail-message")).toHaveTextContent("refusing to start; Offload retries in 4 s");
    await userEvent.click(rows[1]);
    expect(screen.getByTestId("log-detail-stored")).toHaveTextContent("/data/answer.csv");
    expect(screen.getByTestId("log-detail")).toHaveTextContent("1.0 MB");
    await userEvent.click(screen.getByRole("button", { name: "Show in folder" }));
    expect(revealed).toBe("/data/answer.csv");
  });

  it("keeps the selected call while new ones stream in", async () => {
    mockCommands({ call_log: () => [f.event({ server: "db" })] }, { events: true });
    render(Log);
    await userEvent.click(await screen.findByTestId("log-row"));
    expect(screen.getByTestId("log-detail")).toHaveTextContent("db");
    await emit("offload://calls", [f.event(), f.event()]);
    await waitFor(() => expect(screen.getByTestId("log-count")).toHaveTextContent("3 shown"));
    expect(screen.getByTestId("log-detail")).toHaveTextContent("db");
  });

  it("keeps at most 5,000 calls", async () => {
    mockCommands({ call_log: () => [] }, { events: true });
    render(Log);
    await screen.findByTestId("no-calls");
    for (let i = 0; i < 6; i++) await emit("offload://calls", Array.from({ length: 1000 }, () => f.event()));
    await waitFor(() => expect(screen.getByTestId("log-count")).toHaveTextContent("5,000 shown"));
  });

  it("searches, filters by client and time, and exports what is shown", async () => {
    const now = Date.now();
    const ago = (minutes: number) => new Date(now - minutes * 60_000).toISOString();
    const saved: Record<string, string> = {};
    let asked: any = null;
    mockCommands(
      {
        call_log: () => [
          f.event({ time: ago(3 * 24 * 60), client: "cursor/2.1", server: "git", upstream_tool: "log" }),
          f.event({ time: ago(90), client: "claude/1.0", server: "crm", upstream_tool: "contacts", file: "/data/leads.csv" }),
          f.event({ time: ago(5), client: "claude/1.0", server: "db", upstream_tool: "insert", outcome: "upstream_error", message: "duplicate key" }),
        ],
        save_text: ({ path, contents }) => {
          saved[path] = contents;
          return null;
        },
      },
      {
        events: true,
        plugins: {
          "plugin:dialog|save": (args) => {
            asked = args.options;
            return `/home/me/${args.options.defaultPath}`;
          },
        },
      },
    );
    render(Log);
    await waitFor(() => expect(screen.getByTestId("log-count")).toHaveTextContent("3 shown"));

    await userEvent.type(screen.getByTestId("log-search"), "duplicate");
    expect(screen.getByTestId("log-count")).toHaveTextContent("1 shown");
    await userEvent.clear(screen.getByTestId("log-search"));
    await userEvent.type(screen.getByTestId("log-search"), "LEADS.csv");
    expect(screen.getByTestId("log-count")).toHaveTextContent("1 shown");
    await userEvent.clear(screen.getByTestId("log-search"));

    await userEvent.selectOptions(screen.getByTestId("log-client"), "claude/1.0");
    expect(screen.getByTestId("log-count")).toHaveTextContent("2 shown");
    await userEvent.selectOptions(screen.getByTestId("log-since"), "1h");
    expect(screen.getByTestId("log-count")).toHaveTextContent("1 shown");
    await userEvent.selectOptions(screen.getByTestId("log-since"), "24h");
    expect(screen.getByTestId("log-count")).toHaveTextContent("2 shown");

    // The export holds what is shown, oldest first.
    await userEvent.click(screen.getByTestId("log-export-jsonl"));
    expect(await screen.findByTestId("log-notice")).toHaveTextContent("Saved 2 calls to /home/me/offload-calls.jsonl");
    expect(asked.filters[0].extensions).toEqual(["jsonl"]);
    const lines = saved["/home/me/offload-calls.jsonl"].trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => l.server)).toEqual(["crm", "db"]);
    await userEvent.click(screen.getByTestId("log-export-csv"));
    await waitFor(() => expect(saved["/home/me/offload-calls.csv"]).toBeDefined());
    const csv = saved["/home/me/offload-calls.csv"].trimEnd().split("\r\n");
    expect(csv).toHaveLength(3);
    expect(csv[2]).toContain("duplicate key");
  });

  it("says nothing was saved when the save dialog is cancelled, and why a save failed", async () => {
    let answer: string | null = null;
    mockCommands(
      {
        call_log: () => [f.event()],
        save_text: () => {
          throw { code: "write_failed", message: "cannot save '/ro/x.csv': read-only file system" };
        },
      },
      { events: true, plugins: { "plugin:dialog|save": () => answer } },
    );
    render(Log);
    await waitFor(() => expect(screen.getByTestId("log-count")).toHaveTextContent("1 shown"));
    await userEvent.click(screen.getByTestId("log-export-csv"));
    expect(screen.queryByTestId("log-notice")).toBeNull();
    expect(screen.queryByRole("alert")).toBeNull();
    answer = "/ro/x.csv";
    await userEvent.click(screen.getByTestId("log-export-csv"));
    expect(await screen.findByRole("alert")).toHaveTextContent("read-only file system");
  });
});
