"""A new user's first session through a real agent client: Claude Code (the CLI, headless) with
`offload mcp` as its one MCP server, the model played by a scripted stand-in (agent/), in each
exposure mode — meta, direct, and the default auto (no `tools.expose`) — each cold: a fresh
HOME for Claude Code, servers not yet started (a new `offload mcp` each time). The first session
(meta) is Offload's first start ever; the later ones list every server's tools from what Offload
remembered while the servers start. (The first list of a first start ever with a direct mode is
`cli it first_minute`'s, with a server whose start takes a fixed time: Python-SDK servers take 2 s
and more to import on a loaded 2-core machine, past what Claude Code waits for its servers.) The configuration is written by hand as users write it: the published
mcp-server-time (PyPI), server-memory and server-filesystem (npm), and servers written with the official Python
SDK — `data`, whose start takes 1 s more than a Python-SDK server's (a slow server among fast ones), answering 50,000 orders,
and `db`, a SQLite bulk insert.

The client waits for its servers (MCP_CONNECTION_NONBLOCKING=false, as a user's first turn
does) and lists once. Per mode, one session of scripted steps:

  1. the slow server's tool in the first list (direct, auto) — or `call_tool` (meta);
  2. store -> query: 50,000 orders exported (stored, a link reaches the model), then counted
     with query_file; checked against the rows the server makes; a second question of the
     same file (the quantity per region) once its columnar copy is on disk, answered from the
     copy (Offload's log says so: `offload_engine::columns` at debug); a user's Parquet file
     (200,000 sales written by pyarrow, as pandas does) read as a model does — its columns with
     get_file_schema, which warms the query engine during the model's turn (the log says so),
     then totals per region with query_file; then a mid-size answer (700
     orders, over the 16 KiB inline budget) stored with its preview, and summed from the file;
     a mid-size text (server-filesystem reading a 60 KB Markdown guide) stored as Markdown with
     its headings, and one line of it read back with read_file;
  3. file -> tool: a 20,000-row CSV into the bulk tool with call_tool_with_file_content;
     checked in SQLite;
  4. a save in the home folder: server-memory, confined by default, remembers an entity in the
     memory file the configuration names in the user's home (its save writes a temporary file
     beside it and renames it over the file); checked on disk. The bulk tool's SQLite database
     is in the home folder too (its journal goes beside it);
     In meta, the memory tool is first found with list_available_tools asked as models ask
     ("remember a fact about a person": none of server-memory's words), the sentence model
     installed: server-memory's tools first, create_entities or add_observations among five;
  5. search -> call: the current time in a time zone (found with list_available_tools in meta,
     listed by its own name otherwise), then called.

Every step asserts the answer, and the bytes of each tool_result the client sent to the model
are counted. The last line is `figures {...}` (JSON).

Usage: python agent_workflows.py OFFLOAD_BINARY WORK_DIR SENTENCE_MODEL
"""

import json
import re
import sqlite3
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from agent.claude import run_claude
from agent.model import Text, ToolUse, Turn
from checks import check

OFFLOAD, WORK, MODEL = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
# Said as a model asks for a tool, in other words than server-memory's (issue 56).
MEMORY_REQUEST = "remember a fact about a person"
HERE = Path(__file__).resolve().parent
PY = str(HERE / ".venv/bin/python")
MEMORY = str(HERE / "node_modules/@modelcontextprotocol/server-memory/dist/index.js")
ORDERS = 50_000
USERS = 20_000
QTY = sum(i % 13 for i in range(ORDERS))
# The orders' regions (rows_server.py gives the i-th order REGIONS[i % 4]), the sales' too.
REGIONS = ["north", "south", "east", "west"]
QTY_BY_REGION = {r: sum(i % 13 for i in range(ORDERS) if i % 4 == k) for k, r in enumerate(REGIONS)}
MID = 700  # a mid-size answer: 47 KB of structured rows (and their text twin), over 16 KiB
MID_QTY = sum(i % 13 for i in range(MID))
AGES = sum(18 + i % 60 for i in range(USERS))
FILESYSTEM = str(HERE / "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
# A mid-size text answer: a 60 KB Markdown guide, read by server-filesystem.
GUIDE = "# Guide\n\n" + "".join(
    f"## Step {i}\n\nDo thing {i} with care; it takes {i % 7 + 1} minutes and one cup of tea.\n"
    f"Then check the result of thing {i} against the list, line by line, and note the time.\n\n"
    for i in range(370))
GUIDE_LINE = 2 + 5 * 150  # "## Step 150"
# A user's Parquet file: 200,000 sales in row groups of 50,000, written by pyarrow.
SALES = 200_000
SALES_BY_REGION = {r: sum(i % 97 for i in range(SALES) if i % 4 == k) for k, r in enumerate(REGIONS)}



def stored_path(text: str) -> str:
    """The stored file's path as the model reads it: Claude Code shows a resource link and the
    structured content (`"path": ...`); a client showing the text block reads "Stored ... at"."""
    m = re.search(r'"path":\s*"([^"]+)"', text) or re.search(r" at (/[^ ]+?)(?:\.(?:\s|$)| \()", text)
    if not m:
        raise AssertionError(f"no stored path in the answer: {text[:400]}")
    return m.group(1)


def totals(text: str) -> dict:
    """The `[region, total]` rows of a query_file answer, as a dict."""
    return {r: int(q) for r, q in re.findall(r'\["(' + "|".join(REGIONS) + r')",\s*(\d+)\]', text)}


def upstream(mode: str, server: str, tool: str, args: dict) -> ToolUse:
    if mode == "meta":
        return ToolUse("call_tool", {"server": server, "tool_name": tool, "tool_args": args}, server="offload")
    return ToolUse(f"{server}__{tool}", args, server="offload")


def column_copies(home: Path) -> set[Path]:
    """The columnar copies in Offload's data directory (XDG_DATA_HOME below `home`)."""
    return set((home / ".local/share/offload/columns").glob("*.parquet"))


def session(mode: str, work: Path, config: Path, data: Path, db_path: Path, memory_path: Path) -> dict:
    seen: dict = {}
    home = WORK / "offload-home"

    def first(turn: Turn):
        seen["copies"] = column_copies(home)
        names = turn.mcp_tools("offload")
        seen["first_list"] = names
        if mode == "meta":
            if "call_tool" not in names or any("__" in n for n in names):
                raise AssertionError(f"meta lists Offload's own tools: {names}")
        else:
            for wanted in ["data__list_orders", "db__insert_rows", "time__get_current_time", "memory__read_graph"]:
                if wanted not in names:
                    raise AssertionError(f"{wanted} not in the first list: {names}")
        return upstream(mode, "data", "list_orders", {"n": ORDERS})

    def count(turn: Turn):
        seen["export"] = turn.result_text
        seen["export_bytes"] = len(turn.result_text.encode())
        return ToolUse("query_file", {"path": stored_path(turn.result_text),
                                      "sql": "SELECT COUNT(*) AS n, SUM(qty) AS q FROM data"}, server="offload")

    def per_region(turn: Turn):
        seen["count"] = turn.result_text
        seen["count_bytes"] = len(turn.result_text.encode())
        # A model's next turn takes seconds; the stand-in's takes milliseconds, so it asks once
        # the stored answer's columnar copy (made apart, at once) is on disk.
        deadline = time.monotonic() + 60
        while not column_copies(home) - seen["copies"]:
            if time.monotonic() > deadline:
                raise AssertionError("no columnar copy of the stored orders within 60 s")
            time.sleep(0.05)
        return ToolUse("query_file", {"path": stored_path(seen["export"]),
                                      "sql": "SELECT region, SUM(qty) AS q FROM data GROUP BY region ORDER BY region"},
                       server="offload")

    def sales_columns(turn: Turn):
        seen["regions"] = turn.result_text
        seen["regions_bytes"] = len(turn.result_text.encode())
        return ToolUse("get_file_schema", {"path": str(data / "sales.parquet")}, server="offload")

    def sales_totals(turn: Turn):
        seen["sales_schema"] = turn.result_text
        seen["sales_schema_bytes"] = len(turn.result_text.encode())
        return ToolUse("query_file", {"path": str(data / "sales.parquet"),
                                      "sql": "SELECT region, SUM(amount) AS total FROM data GROUP BY region"},
                       server="offload")

    def midsize(turn: Turn):
        seen["sales"] = turn.result_text
        seen["sales_bytes"] = len(turn.result_text.encode())
        return upstream(mode, "data", "list_orders", {"n": MID})

    def mid_query(turn: Turn):
        seen["mid"] = turn.result_text
        seen["mid_bytes"] = len(turn.result_text.encode())
        return ToolUse("query_file", {"path": stored_path(turn.result_text),
                                      "sql": "SELECT SUM(qty) AS q FROM data"}, server="offload")

    def midtext(turn: Turn):
        seen["mid_sum"] = turn.result_text
        return upstream(mode, "files", "read_text_file", {"path": str(data / "guide.md")})

    def mid_line(turn: Turn):
        seen["text"] = turn.result_text
        seen["text_bytes"] = len(turn.result_text.encode())
        return ToolUse("read_file", {"path": stored_path(turn.result_text), "offset": GUIDE_LINE,
                                     "length": 1}, server="offload")

    def load(turn: Turn):
        seen["line"] = turn.result_text
        return ToolUse("call_tool_with_file_content", {
            "server": "db", "tool_name": "insert_rows", "file_path": str(data / "users.csv"),
            "data_key": "rows", "tool_args": {"table": f"users_{mode}"}, "batch_size": 5000}, server="offload")

    def remember_call() -> ToolUse:
        return upstream(mode, "memory", "create_entities", {"entities": [
            {"name": f"Tokyo trip ({mode})", "entityType": "plan", "observations": ["book the hotel"]}]})

    def find_memory(turn: Turn):
        seen["load"] = turn.result_text
        seen["load_bytes"] = len(turn.result_text.encode())
        if mode != "meta":
            return remember_call()
        # In other words than the tools': the sentence model (installed beside offload, here
        # named by OFFLOAD_SEARCH_MODEL) finds server-memory's tools.
        return ToolUse("list_available_tools", {"query": MEMORY_REQUEST}, server="offload")

    def remember(turn: Turn):
        seen["memory_search"] = turn.result_text
        seen["memory_search_bytes"] = len(turn.result_text.encode())
        found = json.loads(turn.result_text)["tools"]
        first = [(t["server"], t["tool"]) for t in found[:5]]
        if any(server != "memory" for server, _ in first[:3]) or not (
                {("memory", "create_entities"), ("memory", "add_observations")} & set(first)):
            raise AssertionError(f"{MEMORY_REQUEST!r} did not find server-memory's tools first: {first}")
        return remember_call()

    def find(turn: Turn):
        seen["memory"] = turn.result_text
        if mode == "meta":
            return ToolUse("list_available_tools", {"query": "current time in a time zone"}, server="offload")
        return upstream(mode, "time", "get_current_time", {"timezone": "Asia/Tokyo"})

    def call_found(turn: Turn):
        if mode != "meta":
            return answer(turn)
        seen["search"] = turn.result_text
        seen["search_bytes"] = len(turn.result_text.encode())
        found = json.loads(turn.result_text) if turn.result_text.lstrip().startswith("{") else None
        if found is None and "time/get_current_time" not in turn.result_text and "get_current_time" not in turn.result_text:
            raise AssertionError(f"the search did not find get_current_time: {turn.result_text[:500]}")
        return upstream(mode, "time", "get_current_time", {"timezone": "Asia/Tokyo"})

    def answer(turn: Turn):
        seen["time"] = turn.result_text
        seen["time_bytes"] = len(turn.result_text.encode())
        return Text(f"orders: {seen['count']}\nloaded: {seen['load'][:200]}\ntime: {turn.result_text[:200]}")

    steps = [first, count, per_region, sales_columns, sales_totals, midsize, mid_query, midtext, mid_line, load, find_memory] + \
        ([remember] if mode == "meta" else []) + [find, call_found] + ([answer] if mode == "meta" else [])
    # One Offload installation for the three sessions, as on a user's machine: the first (meta)
    # is its first start ever; the later ones start every server again (a new process each) with
    # the tool lists remembered. Offload's log goes to a file (info, and where a question read
    # a columnar copy).
    work.mkdir(parents=True, exist_ok=True)
    log = work / "offload.log"
    env = {
        "OFFLOAD_LOG_FILE": str(log),
        "OFFLOAD_LOG": "info,offload_engine::columns=debug,offload_engine::server::tools::get_file_schema=debug",
        "OFFLOAD_CONFIG": str(config),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_RUNTIME_DIR": str(home / ".run"),
        "OFFLOAD_SEARCH_MODEL": MODEL,
    }
    args = ["mcp"] + ([] if mode == "auto" else ["--expose", mode])
    started = time.monotonic()
    t = run_claude(
        "Export the 50,000 orders and count them with their total quantity, total sales.parquet by "
        "region, load users.csv into "
        "the users table, remember my Tokyo trip, and tell me the time in Tokyo.",
        {"offload": {"command": OFFLOAD, "args": args, "env": env}},
        steps, work / "claude", timeout=600)
    seconds = time.monotonic() - started

    check(not t.failures, f"{mode}: the stand-in recorded no failure {t.failures}")
    check([s["status"] for s in t.init.get("mcp_servers", [])] == ["connected"],
          f"{mode}: the client connected to Offload ({t.init.get('mcp_servers')})")
    check(len(t.main) == len(steps), f"{mode}: {len(steps)} model turns ({len(t.main)})")
    check("stored" in seen["export"].lower() and seen["export_bytes"] < 4_000,
          f"{mode}: the 50,000 orders were stored; {seen['export_bytes']} bytes reached the model")
    check(str(ORDERS) in seen["count"] and str(QTY) in seen["count"],
          f"{mode}: query_file counts {ORDERS} orders, qty {QTY}: {seen['count'][:200]}")
    check(totals(seen["regions"]) == QTY_BY_REGION,
          f"{mode}: the quantity per region of the stored orders {QTY_BY_REGION}: {seen['regions'][:300]}")
    export = Path(stored_path(seen["export"])).name
    check(any(export in line for line in log.read_text().splitlines() if "reads the columnar copy of" in line),
          f"{mode}: the second question read the stored orders' columnar copy (log {log})")
    check("parquet" in seen["sales_schema"].lower() and "amount" in seen["sales_schema"]
          and re.search(r"\b200,?000\b", seen["sales_schema"]) and seen["sales_schema_bytes"] < 4_096,
          f"{mode}: get_file_schema shows the Parquet file's columns and {SALES} rows; "
          f"{seen['sales_schema_bytes']} bytes reached the model: {seen['sales_schema'][:300]}")
    check(sum("query engine warmed up" in line for line in log.read_text().splitlines()) == 1,
          f"{mode}: reading the Parquet file's columns warmed the query engine, once (log {log})")
    check(totals(seen["sales"]) == SALES_BY_REGION,
          f"{mode}: query_file totals the Parquet file's sales per region {SALES_BY_REGION}: {seen['sales'][:300]}")
    check("stored" in seen["mid"].lower() and "First rows (CSV)" in seen["mid"]
          and seen["mid_bytes"] < 4_096,
          f"{mode}: the {MID} orders were stored with a preview; {seen['mid_bytes']} bytes reached the model")
    check(str(MID_QTY) in seen["mid_sum"], f"{mode}: their qty adds up to {MID_QTY}: {seen['mid_sum'][:200]}")
    check("stored" in seen["text"].lower() and "## Step 1" in seen["text"] and seen["text_bytes"] < 4_096,
          f"{mode}: the {len(GUIDE) // 1000} KB guide was stored with its headings; {seen['text_bytes']} bytes reached the model")
    check(seen["line"].rstrip().endswith(GUIDE.splitlines()[GUIDE_LINE]),
          f"{mode}: read_file answers line {GUIDE_LINE} of the stored guide: {seen['line'][:300]}")
    with sqlite3.connect(db_path) as db:
        n, ages = db.execute(f"select count(*), sum(age) from users_{mode}").fetchone()
    check((n, ages) == (USERS, AGES), f"{mode}: {n} users in SQLite, ages add up")
    # server-memory saves beside its file in the home folder (a temporary file renamed over it),
    # confined by default.
    saved = [json.loads(line) for line in memory_path.read_text().splitlines()]
    check(f"Tokyo trip ({mode})" in seen["memory"] and any(e.get("name") == f"Tokyo trip ({mode})" for e in saved),
          f"{mode}: server-memory saved the entity in {memory_path}: {seen['memory'][:200]}")
    check("Asia/Tokyo" in seen["time"], f"{mode}: the time in Tokyo: {seen['time'][:200]}")
    check(str(ORDERS) in t.result.get("result", ""), f"{mode}: the session's answer quotes the count")
    return {
        "seconds": round(seconds, 1),
        "listed": len(seen["first_list"]),
        "listing_bytes": len(json.dumps([tl for tl in t.main[0]["tools"] if tl["name"].startswith("mcp__offload__")]).encode()),
        "export": seen["export_bytes"],
        "count": seen["count_bytes"],
        "regions": seen["regions_bytes"],
        "parquet_schema": seen["sales_schema_bytes"],
        "parquet_query": seen["sales_bytes"],
        "midsize": seen["mid_bytes"],
        "midtext": seen["text_bytes"],
        "load": seen["load_bytes"],
        "search": seen.get("search_bytes", 0),
        "memory_search": seen.get("memory_search_bytes", 0),
        "time": seen["time_bytes"],
    }


def main() -> None:
    data = WORK / "data"
    data.mkdir(parents=True, exist_ok=True)
    # The database and the memory file in the user's home folder, as READMEs show them (the
    # servers are confined by default: each saves beside its file, a journal or a renamed
    # temporary file).
    home = WORK / "offload-home"
    home.mkdir(parents=True, exist_ok=True)
    db_path = home / "bulk.db"
    memory_path = home / "memory.jsonl"
    with open(data / "users.csv", "w") as f:
        f.write("name,email,age,city\n")
        for i in range(USERS):
            f.write(f"user {i},u{i}@example.org,{18 + i % 60},c{i % 5}\n")
    (data / "guide.md").write_text(GUIDE)
    pq.write_table(pa.table({
        "day": [f"2026-{1 + i % 12:02}-{1 + i % 28:02}" for i in range(SALES)],
        "region": [REGIONS[i % 4] for i in range(SALES)],
        "amount": pa.array([i % 97 for i in range(SALES)], pa.int64()),
    }), data / "sales.parquet", row_group_size=50_000)
    config = WORK / "config.json"
    # Written by hand, as a user pastes servers from their READMEs.
    config.write_text(json.dumps({
        "roots": [str(data)],
        "mcpServers": {
            "data": {"command": PY, "args": [str(HERE / "rows_server.py")], "env": {"ROWS_START_DELAY": "1"}},
            "db": {"command": PY, "args": [str(HERE / "bulk_server.py"), str(db_path)]},
            "time": {"command": str(HERE / ".venv/bin/mcp-server-time")},
            "memory": {"command": "node", "args": [MEMORY], "env": {"MEMORY_FILE_PATH": str(memory_path)}},
            "files": {"command": "node", "args": [FILESYSTEM, str(data)]},
        },
    }, indent=2))
    figures = {}
    for mode in ["meta", "direct", "auto"]:
        figures[mode] = session(mode, WORK / mode, config, data, db_path, memory_path)
    print("figures " + json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
