import { describe, expect, it } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { mockCommands } from "../lib/mock";
import { emit } from "@tauri-apps/api/event";
import Responses from "./Responses.svelte";
import * as f from "../lib/fixtures";
import type { ResponseView } from "../lib/types";

const many = (n: number): ResponseView[] =>
  Array.from({ length: n }, (_, i) =>
    f.response({
      path: `/data/r${i}.json`,
      name: `r${i}.json`,
      server: i % 2 ? "crm" : "search",
      tool: i % 2 ? "contacts" : "web",
      format: i % 3 ? "json" : "csv",
    }),
  );

describe("Responses", () => {
  it("says what to do when nothing is stored", async () => {
    mockCommands({ responses: () => ({ items: [], truncated: false }) });
    render(Responses);
    expect(await screen.findByTestId("no-responses")).toHaveTextContent("call_tool_and_store");
  });

  it("shows the engine's error", async () => {
    mockCommands({
      responses: () => {
        throw { code: "internal", message: "index unreadable" };
      },
    });
    render(Responses);
    expect(await screen.findByRole("alert")).toHaveTextContent("index unreadable");
  });

  it("renders only the rows in view of 10,000 and filters them", async () => {
    mockCommands({ responses: () => ({ items: many(10_000), truncated: false }) });
    render(Responses);
    expect(await screen.findByTestId("responses-count")).toHaveTextContent("10,000 stored files");
    expect(screen.getAllByTestId("response-row").length).toBeLessThan(60);

    await userEvent.selectOptions(screen.getByTestId("filter-server"), "crm");
    expect(screen.getByTestId("responses-count")).toHaveTextContent("5,000 shown of 10,000 stored files");
    await userEvent.selectOptions(screen.getByTestId("filter-format"), "csv");
    expect(screen.getByTestId("responses-count")).toHaveTextContent("1,667 shown of 10,000");
    await userEvent.type(screen.getByTestId("responses-search"), "r9998");
    expect(screen.getByTestId("responses-count")).toHaveTextContent("0 shown of 10,000");
    expect(screen.getByText("Nothing matches these filters.")).toBeInTheDocument();
  });

  it("sorts by age, size and name", async () => {
    mockCommands({
      responses: () => ({
        items: [
          f.response({ path: "/d/b.json", name: "b.json", bytes: 10, time: "2026-11-24T10:00:00Z", description: null }),
          f.response({ path: "/d/c.json", name: "c.json", bytes: 3000, time: "2026-11-23T10:00:00Z", description: null }),
          f.response({ path: "/d/a.json", name: "a.json", bytes: 200, time: "2026-11-22T10:00:00Z", description: null }),
        ],
        truncated: false,
      }),
    });
    render(Responses);
    const names = async () => (await screen.findAllByTestId("response-name")).map((n) => n.textContent);
    expect(await names()).toEqual(["b.json", "c.json", "a.json"]);
    for (const [order, expected] of [
      ["oldest", ["a.json", "c.json", "b.json"]],
      ["largest", ["c.json", "a.json", "b.json"]],
      ["smallest", ["b.json", "a.json", "c.json"]],
      ["name", ["a.json", "b.json", "c.json"]],
    ] as const) {
      await userEvent.selectOptions(screen.getByTestId("sort"), order);
      await waitFor(async () => expect(await names()).toEqual(expected));
    }
  });

  it("shows the model's description, tells apart names that differ at the end, and hides a filtered-out preview", async () => {
    const long = "everything-get-structured-content-20261124T034321Z";
    mockCommands({
      responses: () => ({
        items: [
          f.response({ path: "/data/a.json", name: `${long}-aaaa11.json`, description: "Weather in Lyon", server: "weather", tool: "now" }),
          f.response({ path: "/data/b.json", name: `${long}-bbbb22.json`, description: null, server: "crm", tool: "contacts" }),
        ],
        truncated: false,
      }),
      file_summary: () => f.summary(),
      file_schema: () => f.schema(),
      file_content: () => f.page(),
    });
    render(Responses);
    const rows = await screen.findAllByTestId("response-row");
    expect(within(rows[0]).getByTestId("response-description")).toHaveTextContent("Weather in Lyon");
    const names = screen.getAllByTestId("response-name").map((n) => n.textContent ?? "");
    expect(names[0]).toContain("aaaa11.json");
    expect(names[1]).toContain("bbbb22.json");
    expect(names[0]).not.toEqual(names[1]);

    await userEvent.click(rows[0]);
    expect(await screen.findByTestId("preview")).toBeInTheDocument();
    await userEvent.selectOptions(screen.getByTestId("filter-server"), "crm");
    expect(screen.queryByTestId("preview")).toBeNull();
    expect(screen.getByTestId("selection-hidden")).toHaveTextContent("hidden by the filters");
    await userEvent.selectOptions(screen.getByTestId("filter-server"), "");
    expect(await screen.findByTestId("preview")).toBeInTheDocument();
  });

  it("previews the selected response: summary, schema columns, a table page, its call", async () => {
    mockCommands({
      responses: () => ({ items: [f.response()], truncated: false }),
      file_summary: () => f.summary(),
      file_schema: () => f.schema(),
      file_content: (args) => {
        expect(args).toMatchObject({ path: f.response().path, offset: 0, length: 100 });
        return f.page();
      },
      response_call: () => ({ server: "crm", tool: "contacts", arguments: { query: "all", api_key: "[redacted]" }, description: null, time: "2026-11-21T10:00:00Z", durationMs: 12, bytes: 2048, format: "csv", files: [], complete: true }),
    });
    render(Responses);
    await userEvent.click(await screen.findByTestId("response-row"));
    expect(await screen.findByTestId("preview-head")).toHaveTextContent("id,name");
    await userEvent.click(screen.getByTestId("tab-schema"));
    const columns = await screen.findByTestId("schema-columns");
    expect(within(columns).getByText("id")).toBeInTheDocument();
    expect(within(columns).getByText("integer")).toBeInTheDocument();
    await userEvent.click(screen.getByTestId("tab-content"));
    const table = await screen.findByTestId("content-table");
    expect(within(table).getByText("Grace")).toBeInTheDocument();
    expect(screen.getByTestId("content-position")).toHaveTextContent("1–2 of 2");
    await userEvent.click(screen.getByTestId("tab-call"));
    expect(await screen.findByTestId("call-arguments")).toHaveTextContent("[redacted]");
  });

  it("queries a table file: runs with Ctrl+Enter, shows errors in place, saves the result", async () => {
    const asked: any[] = [];
    mockCommands({
      responses: () => ({ items: [f.response()], truncated: false }),
      file_summary: () => f.summary(),
      file_query: (args) => {
        asked.push(args);
        if (args.sql.includes("regin")) throw { code: "query_error", message: "unknown column `regin` — did you mean `region`? at line 1, column 8" };
        return { columns: [["region", "string"], ["total", "number"]], rows: [["north", "12.5"], ["south", "3"]], rowCount: 2, truncated: false, millis: 4 };
      },
      save_query: () => "/data/offload-query_file-1.csv",
    });
    render(Responses);
    await userEvent.click(await screen.findByTestId("response-row"));
    await userEvent.click(await screen.findByTestId("tab-query"));
    const box = screen.getByTestId("query-sql");
    expect(box).toHaveValue("SELECT * FROM data LIMIT 100");
    expect(screen.getByTestId("query-save")).toBeDisabled();

    await userEvent.clear(box);
    await userEvent.type(box, "SELECT regin FROM data");
    await userEvent.keyboard("{Control>}{Enter}{/Control}");
    expect(await screen.findByTestId("query-error")).toHaveTextContent("did you mean `region`?");
    expect(asked[0]).toMatchObject({ path: f.response().path, sql: "SELECT regin FROM data" });

    await userEvent.clear(box);
    await userEvent.type(box, "SELECT region, SUM(amount) AS total FROM data GROUP BY region");
    await userEvent.click(screen.getByTestId("query-run"));
    const table = await screen.findByTestId("query-table");
    expect(within(table).getByText("north")).toBeInTheDocument();
    expect(screen.queryByTestId("query-error")).toBeNull();
    expect(screen.getByTestId("query-count")).toHaveTextContent("2 of 2 rows");

    await userEvent.click(screen.getByTestId("query-save"));
    expect(await screen.findByTestId("query-saved")).toHaveTextContent("offload-query_file-1.csv");
  });

  it("offers no Query tab for files that are not tables", async () => {
    mockCommands({
      responses: () => ({ items: [f.response({ path: "/data/notes.md", name: "notes.md", format: "md" })], truncated: false }),
      file_summary: () => f.summary(),
    });
    render(Responses);
    await userEvent.click(await screen.findByTestId("response-row"));
    await screen.findByTestId("tab-content");
    expect(screen.queryByTestId("tab-query")).toBeNull();
  });

  it("shows a preview's error in place and images as images", async () => {
    mockCommands({
      responses: () => ({ items: [f.response(), f.response({ path: "/data/p.png", name: "p.png", format: "png" })], truncated: false }),
      file_summary: () => {
        throw { code: "unsupported_format", message: "this is a PNG image: use read_file" };
      },
      file_content: () => f.page({ kind: "image", image: "data:image/png;base64,AAAA", rows: null, columns: null }),
    });
    render(Responses);
    await userEvent.click((await screen.findAllByTestId("response-row"))[1]);
    expect(await screen.findByTestId("preview-error")).toHaveTextContent("PNG image");
    await userEvent.click(screen.getByTestId("tab-content"));
    expect(await screen.findByRole("img")).toHaveAttribute("src", "data:image/png;base64,AAAA");
  });

  it("renders a Markdown file in a sandbox that runs and loads nothing, and shows its source on request", async () => {
    const asked: [number, number][] = [];
    const markdown = "# Quarterly\n\n<script>alert(1)</script>\n\n![x](https://tracker.example/p.png)\n";
    mockCommands({
      responses: () => ({ items: [f.response({ path: "/data/notes.md", name: "notes.md", format: "md", recorded: false })], truncated: false }),
      file_summary: () => f.summary(),
      file_content: (args) => {
        asked.push([args.offset, args.length]);
        return f.page({ kind: "text", text: markdown, rows: null, columns: null, count: 5, nextOffset: args.length < 10 ? null : 5000 });
      },
    });
    render(Responses);
    await userEvent.click(await screen.findByTestId("response-row"));
    await userEvent.click(screen.getByTestId("tab-content"));
    const frame = (await screen.findByTestId("preview-rendered")) as HTMLIFrameElement;
    expect(frame.getAttribute("sandbox")).toBe("");
    const doc = new DOMParser().parseFromString(frame.getAttribute("srcdoc") ?? "", "text/html");
    expect(doc.querySelector("h1")?.textContent).toBe("Quarterly");
    expect(doc.querySelector("script")).toBeNull();
    expect(doc.querySelector("img")?.getAttribute("src") ?? null).toBeNull();
    expect(doc.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute("content")).toContain("default-src 'none'");
    expect(screen.getByTestId("rendered-note")).toHaveTextContent("Rendered the first 5 lines; Source shows the rest.");
    expect(asked).toEqual([[0, 5000]]);

    // The tabs take arrow keys, the focus following.
    screen.getByTestId("tab-content").focus();
    await userEvent.keyboard("{ArrowLeft}");
    expect(screen.getByTestId("tab-schema")).toHaveFocus();
    expect(screen.getByTestId("tab-schema")).toHaveAttribute("aria-selected", "true");
    await userEvent.keyboard("{ArrowRight}");
    expect(screen.getByTestId("tab-content")).toHaveFocus();
    await screen.findByTestId("preview-rendered");

    await userEvent.click(screen.getByTestId("view-source"));
    expect(await screen.findByText(/# Quarterly/)).toBeInTheDocument();
    expect(screen.queryByTestId("preview-rendered")).toBeNull();
    expect(screen.getByTestId("content-position")).toBeInTheDocument();
    expect(asked.at(-1)).toEqual([0, 100]);
  });

  it("previews JSON Lines as the table the engine gives", async () => {
    mockCommands({
      responses: () => ({ items: [f.response({ path: "/data/e.jsonl", name: "e.jsonl", format: "jsonl" })], truncated: false }),
      file_summary: () => f.summary(),
      file_content: () => f.page({ kind: "table", columns: ["id", "name"], rows: [["1", "Ada"], ["2", ""]], count: 2 }),
    });
    render(Responses);
    await userEvent.click(await screen.findByTestId("response-row"));
    await userEvent.click(screen.getByTestId("tab-content"));
    const table = await screen.findByTestId("content-table");
    expect(within(table).getAllByRole("row")).toHaveLength(3);
    expect(screen.queryByTestId("view-rendered")).toBeNull();
  });

  it("keeps the focus: Keep is focused, Escape returns to Delete…, and the next row takes a deleted one's place", async () => {
    let items = [f.response({ path: "/d/a.json", name: "a.json" }), f.response({ path: "/d/b.json", name: "b.json" }), f.response({ path: "/d/c.json", name: "c.json" })];
    mockCommands({
      responses: () => ({ items, truncated: false }),
      delete_response: (args) => {
        items = items.filter((r) => r.path !== args.path);
        return null;
      },
      file_summary: () => f.summary(),
    });
    render(Responses);
    await userEvent.click((await screen.findAllByTestId("response-row"))[1]);
    await userEvent.click(screen.getByTestId("delete-response"));
    expect(screen.getByTestId("keep")).toHaveFocus();
    await userEvent.keyboard("{Escape}");
    expect(screen.getByTestId("delete-response")).toHaveFocus();
    await userEvent.click(screen.getByTestId("delete-response"));
    await userEvent.click(screen.getByTestId("confirm-delete"));
    await waitFor(() => expect(screen.getAllByTestId("response-row")).toHaveLength(2));
    const next = screen.getAllByTestId("response-row")[1];
    expect(next).toHaveTextContent("c.json");
    await waitFor(() => expect(next).toHaveFocus());
    expect(next).toHaveAttribute("aria-pressed", "true");
    expect(screen.getByTestId("response-path")).toHaveTextContent("/d/c.json");
  });

  it("deletes after confirmation and appears on the app's event", async () => {
    let items = [f.response()];
    const deleted: unknown[] = [];
    mockCommands(
      {
        responses: () => ({ items, truncated: false }),
        delete_response: (args) => {
          deleted.push(args.path);
          items = [];
          return null;
        },
        file_summary: () => f.summary(),
      },
      { events: true },
    );
    render(Responses);
    await userEvent.click(await screen.findByTestId("response-row"));
    await userEvent.click(screen.getByTestId("delete-response"));
    await userEvent.keyboard("{Escape}");
    expect(screen.queryByTestId("confirm-delete")).toBeNull();
    await userEvent.click(screen.getByTestId("delete-response"));
    await userEvent.click(screen.getByTestId("confirm-delete"));
    expect(await screen.findByTestId("no-responses")).toBeInTheDocument();
    expect(deleted).toEqual([f.response().path]);

    items = [f.response({ name: "new.json", path: "/data/new.json" })];
    await emit("offload://responses", null);
    await waitFor(() => expect(screen.getByTestId("response-name")).toHaveTextContent("new.json"));
  });

  it("keeps the open tab when the list reloads", async () => {
    let schemas = 0;
    mockCommands(
      {
        responses: () => ({ items: [f.response()], truncated: false }),
        file_summary: () => f.summary(),
        file_schema: () => {
          schemas += 1;
          return f.schema();
        },
      },
      { events: true },
    );
    render(Responses);
    await userEvent.click(await screen.findByTestId("response-row"));
    await userEvent.click(await screen.findByTestId("tab-schema"));
    await screen.findByTestId("schema-columns");
    await emit("offload://responses", null);
    await emit("offload://responses", null);
    await new Promise((r) => setTimeout(r, 50));
    expect(screen.getByTestId("schema-columns")).toBeInTheDocument();
    expect(schemas).toBe(1);
  });

  it("marks several with Ctrl- and Shift-click or all shown, and deletes them together, keeping read-only ones", async () => {
    let items = many(6).map((r, i) => ({ ...r, deletable: i !== 3, bytes: 1024 }));
    const deleted: string[] = [];
    mockCommands({
      responses: () => ({ items, truncated: false }),
      delete_response: (args) => {
        deleted.push(args.path);
        items = items.filter((r) => r.path !== args.path);
        return null;
      },
    });
    render(Responses);
    const row = async (name: string) => (await screen.findAllByTestId("response-row")).find((r) => r.textContent?.includes(name))!;
    await userEvent.click(await row("r0.json"));
    expect(screen.queryByTestId("several-selected")).toBeNull();
    const user = userEvent.setup();
    await user.keyboard("{Control>}");
    await user.click(await row("r2.json"));
    await user.keyboard("{/Control}{Shift>}");
    await user.click(await row("r4.json"));
    await user.keyboard("{/Shift}");
    expect(screen.getByTestId("several-selected")).toHaveTextContent("4 responses selected");
    expect(screen.getByText(/4\.0 KB in all; 1 is in read-only directories/)).toBeInTheDocument();
    expect((await row("r3.json")).getAttribute("aria-pressed")).toBe("true");
    expect((await row("r1.json")).getAttribute("aria-pressed")).toBe("false");
    await userEvent.click(screen.getByTestId("delete-several"));
    expect(screen.getByText("Delete 3 files for good?")).toBeInTheDocument();
    await userEvent.click(screen.getByTestId("confirm-delete"));
    await waitFor(() => expect(screen.getByRole("status")).toHaveTextContent("Deleted 3 responses. 1 file in read-only directories kept."));
    expect(deleted).toEqual(["/data/r0.json", "/data/r2.json", "/data/r4.json"]);
    expect(screen.getByTestId("responses-count")).toHaveTextContent("3 stored files");

    // All that the filters show: only those.
    await userEvent.selectOptions(screen.getByTestId("filter-server"), "crm");
    await userEvent.click(screen.getByTestId("select-all"));
    expect(screen.getByTestId("several-selected")).toHaveTextContent("3 responses selected");
    await userEvent.selectOptions(screen.getByTestId("filter-format"), "json");
    expect(screen.getByTestId("several-selected")).toHaveTextContent("2 responses selected");
  });

  it("moves the selection with the arrow keys, Home and End", async () => {
    mockCommands({ responses: () => ({ items: many(50), truncated: false }) });
    render(Responses);
    const rows = await screen.findAllByTestId("response-row");
    await userEvent.click(rows[0]);
    expect(screen.getByTestId("response-path")).toHaveTextContent("/data/r0.json");
    await userEvent.keyboard("{ArrowDown}{ArrowDown}");
    expect(screen.getByTestId("response-path")).toHaveTextContent("/data/r2.json");
    expect(document.activeElement).toHaveAttribute("title", "/data/r2.json");
    await userEvent.keyboard("{ArrowUp}");
    expect(screen.getByTestId("response-path")).toHaveTextContent("/data/r1.json");
    await userEvent.keyboard("{End}");
    await waitFor(() => expect(screen.getByTestId("response-path")).toHaveTextContent("/data/r49.json"));
    expect(document.activeElement).toHaveAttribute("title", "/data/r49.json");
    await userEvent.keyboard("{Home}");
    await waitFor(() => expect(document.activeElement).toHaveAttribute("title", "/data/r0.json"));
  });

  it("tells stored files from other files, as Directories counts them, and lists images beside a response", async () => {
    mockCommands({
      responses: () => ({
        items: [
          f.response({ path: "/data/shot.json", name: "shot.json", description: null, server: "browser", tool: "screenshot", format: "json" }),
          f.response({ path: "/data/shot.1.png", name: "shot.1.png", description: null, server: "browser", tool: "screenshot", format: "png", recorded: false, beside: "/data/shot.json" }),
          f.response({ path: "/data/input.csv", name: "input.csv", description: null, server: null, tool: null, recorded: false, stored: false }),
        ],
        truncated: false,
      }),
    });
    render(Responses);
    expect(await screen.findByTestId("responses-count")).toHaveTextContent("2 stored files and 1 other file");
    const rows = screen.getAllByTestId("response-row");
    expect(rows.find((r) => r.textContent?.includes("shot.1.png"))).toHaveTextContent("beside shot.json");
    expect(rows.find((r) => r.textContent?.includes("input.csv"))).toHaveTextContent("not stored by Offload");
    await userEvent.selectOptions(screen.getByTestId("filter-kind"), "other");
    expect(screen.getByTestId("responses-count")).toHaveTextContent("1 shown of 2 stored files and 1 other file");
    expect(screen.getAllByTestId("response-row")).toHaveLength(1);
    await userEvent.selectOptions(screen.getByTestId("filter-kind"), "stored");
    expect(screen.getAllByTestId("response-row")).toHaveLength(2);
  });
});
