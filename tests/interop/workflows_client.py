"""Everyday workflows through `offload mcp`, walked the way a model walks them, with the official
Python SDK as the client, in each exposure mode (meta, direct, and the default auto with no
`tools.expose` in the configuration), beside the same work done connected to the servers
directly.

Upstreams: published servers (server-memory from npm, mcp-server-time from PyPI) and servers
written with the official Python SDK (rows_server.py: 50,000-row answers; bulk_server.py: a
SQLite bulk insert).

  (a) total per region over a >= 100 MB CSV: get_file_schema, then query_file; checked
      against DuckDB; then a second question of it, once its columnar copy is on disk (made
      after the first answer; the same copy serves the later sessions), read from the copy
      (Offload's log says so) and checked against DuckDB.
  (b) a 50,000-row answer stored automatically (as structured rows, as a Python literal, as
      pretty-printed JSON text), then counted with query_file.
  (c) a 20,000-row CSV into the bulk tool with call_tool_with_file_content; checked in SQLite.
  (d) one call among four servers: found (list_available_tools in meta, tools/list otherwise)
      and called.

Each step asserts the answer; the bytes that reach the client are counted as the SDK holds
them (the JSON of each result, and of the tool listing a client keeps in context). The last
line is `figures {...}` (JSON) for the test to check and print.

Usage: python workflows_client.py OFFLOAD_BINARY WORK_DIR
"""

import asyncio
import datetime
import json
import math
import os
import sqlite3
import sys
import time
from pathlib import Path

import duckdb
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from checks import check, offload_session

OFFLOAD, WORK = sys.argv[1], Path(sys.argv[2])
HERE = Path(__file__).resolve().parent
PY = str(HERE / ".venv/bin/python")
MEMORY = str(HERE / "node_modules/@modelcontextprotocol/server-memory/dist/index.js")
FILESYSTEM = str(HERE / "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
ROWS = 50_000
USERS = 20_000
REGIONS = ["north", "south", "east", "west", "central"]


def size(model) -> int:
    return len(model.model_dump_json(by_alias=True, exclude_none=True))


def write_sales(path: Path, megabytes: int = 100) -> int:
    """A CSV of at least `megabytes` MB: id,region,amount,day,customer,note."""
    days = [(datetime.date(2024, 1, 1) + datetime.timedelta(days=d)).isoformat() for d in range(366)]
    notes = ["plain", "\"quoted, with comma\"", "repeat order", "\"say \"\"hi\"\"\""]
    n = 0
    with open(path, "w", newline="") as f:
        f.write("id,region,amount,day,customer,note\n")
        while f.tell() < megabytes * 1_000_000:
            chunk = []
            for i in range(n, n + 100_000):
                amount = f"{(i * 37) % 100_000 / 100:.2f}"
                chunk.append(f"{i},{REGIONS[(i * 7) % 5]},{amount},{days[i % 366]},c{i % 10007},{notes[i % 4]}\n")
            f.write("".join(chunk))
            n += 100_000
    return n


def write_users(path: Path) -> None:
    with open(path, "w") as f:
        f.write("name,email,age,city\n")
        for i in range(USERS):
            f.write(f"user {i},u{i}@example.org,{18 + i % 60},{REGIONS[i % 5]}\n")


class Model:
    """One client session, used the way a model uses Offload: it keeps the tool listing in its
    context and counts what each answer costs."""

    def __init__(self, session: ClientSession, mode: str):
        self.s = session
        self.mode = mode
        self.listing = 0
        self.tools: dict[str, types.Tool] = {}
        self.listings = 0  # tools/list requests (the SDK's own included)

    async def list_until(self, wanted: list[str], changed: asyncio.Event) -> None:
        """Lists the tools once, right after `initialize`, as most clients do (Claude Code
        headless, most SDK programs): the wanted ones must be in that first list, also while
        their servers are still starting."""
        listed = await self.s.list_tools()
        self.listing = size(listed)
        self.tools = {t.name: t for t in listed.tools}
        missing = [w for w in wanted if w not in self.tools]
        check(not missing, f"{self.mode}: tools {missing} in the first tools/list")

    async def call(self, name: str, args: dict) -> tuple[types.CallToolResult, int]:
        r = await self.s.call_tool(name, args)
        return r, size(r)

    async def upstream(self, server: str, tool: str, args: dict) -> tuple[types.CallToolResult, int]:
        """An upstream tool: by its own name in direct and auto (listed), through call_tool in meta."""
        if self.mode == "meta":
            return await self.call("call_tool", {"server": server, "tool_name": tool, "tool_args": args})
        return await self.call(f"{server}__{tool}", args)


async def directly(params: StdioServerParameters, work):
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            return await work(s)


def close(a, b) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)


async def run_mode(mode: str, env: dict, db_path: Path, expected: dict, figures: dict) -> None:
    async with offload_session(OFFLOAD, mode, env) as (s, changed):
        m = Model(s, mode)
        inner = s.list_tools

        async def counted(*a, **k):
            m.listings += 1
            return await inner(*a, **k)

        s.list_tools = counted
        upstream = ["rows__list_orders", "db__insert_rows", "time__get_current_time", "memory__read_graph"]
        wanted = ["call_tool", "query_file"] + ([] if mode == "meta" else upstream)
        await m.list_until(wanted, changed)
        if mode == "meta":
            check(not any("__" in n for n in m.tools), "meta: only Offload's own tools are listed")
        else:
            check("list_available_tools" not in m.tools, f"{mode}: every tool listed, nothing to search")
        mine = {"listing": m.listing, "tools": len(m.tools)}

        # (a) total per region over the big CSV.
        used = 0
        r, n = await m.call("get_file_schema", {"path": "sales.csv"})
        used += n
        schema = r.structured_content
        check(not r.is_error and schema["row_count"] == expected["sales_rows"] and schema["row_count_exact"],
              f"{mode} (a): the schema counts {expected['sales_rows']} rows exactly")
        check([c["name"] for c in schema["columns"]][:3] == ["id", "region", "amount"], f"{mode} (a): columns")
        sql = "SELECT region, SUM(amount) AS total, COUNT(*) AS n FROM data GROUP BY region ORDER BY region"
        r, n = await m.call("query_file", {"path": "sales.csv", "sql": sql})
        used += n
        check(not r.is_error, f"{mode} (a): query_file runs: {r.content[0].text[:300]}")
        got = r.structured_content["rows"]
        want = expected["per_region"]
        check(len(got) == len(want) and all(g[0] == w[0] and close(g[1], w[1]) and g[2] == w[2] for g, w in zip(got, want)),
              f"{mode} (a): totals per region equal DuckDB's ({got[:2]} vs {want[:2]})")
        # A second question of the same file, from its columnar copy.
        copies = Path(os.environ["XDG_DATA_HOME"]) / "offload/columns"
        log = Path(os.environ["OFFLOAD_LOG_FILE"])
        deadline = time.monotonic() + 120
        while not list(copies.glob("*.parquet")):
            check(time.monotonic() < deadline, f"{mode} (a): the CSV's columnar copy is made within 120 s")
            await asyncio.sleep(0.1)
        read_before = log.read_text().count("reads the columnar copy of")
        r, n = await m.call("query_file", {"path": "sales.csv", "sql": "SELECT COUNT(*) AS n, MAX(amount) AS top FROM data WHERE region = 'north'"})
        used += n
        check(not r.is_error, f"{mode} (a): the second question runs: {r.content[0].text[:300]}")
        (count, top), = r.structured_content["rows"]
        want_count, want_top = expected["north"]
        check(count == want_count and close(top, want_top), f"{mode} (a): north's count and top amount equal DuckDB's ({count}, {top} vs {want_count}, {want_top})")
        read = [line for line in log.read_text().splitlines() if "reads the columnar copy of" in line]
        check(len(read) > read_before and "sales.csv" in read[-1], f"{mode} (a): the second question read the columnar copy ({len(read) - read_before} reads)")
        mine["a"] = used

        # (b) 50,000 rows stored automatically, then counted; three shapes of answer.
        used = 0
        for tool, shape in [("list_orders", "structured rows"), ("orders_report", "a Python literal"), ("orders_export", "pretty-printed JSON text")]:
            r, n = await m.upstream("rows", tool, {"n": ROWS})
            used += n
            stored = r.structured_content or {}
            check(not r.is_error and stored.get("path"), f"{mode} (b): {ROWS} rows as {shape} are stored, not inlined ({n} bytes)")
            check(n < 4_000, f"{mode} (b): the stored answer costs {n} bytes")
            r, n = await m.call("query_file", {"path": stored["path"], "sql": "SELECT COUNT(*) AS n, SUM(qty) AS q, COUNT(DISTINCT region) AS r FROM data"})
            used += n
            check(not r.is_error, f"{mode} (b): query_file reads the stored {shape}: {r.content[0].text[:300]}")
            check(r.structured_content["rows"] == [[ROWS, expected["qty"], 4]], f"{mode} (b): counted {r.structured_content['rows']}")
        mine["b"] = used

        # (c) a 20,000-row CSV into the bulk tool, in batches.
        table = f"users_{mode}"
        r, n = await m.call("call_tool_with_file_content", {
            "server": "db", "tool_name": "insert_rows", "file_path": "users.csv",
            "data_key": "rows", "tool_args": {"table": table}, "batch_size": 5000})
        check(not r.is_error, f"{mode} (c): the file reaches the tool: {r.content[0].text[:300]}")
        with sqlite3.connect(db_path) as db:
            count, ages = db.execute(f"select count(*), sum(age) from {table}").fetchone()
        check((count, ages) == (USERS, expected["ages"]), f"{mode} (c): {count} rows in SQLite, ages add up")
        mine["c"] = n

        # (d) one call among four servers: found, then called.
        used = 0
        if mode == "meta":
            deadline = time.monotonic() + 60
            while True:
                r, n = await m.call("list_available_tools", {"query": "current time in a time zone"})
                found = r.structured_content["tools"]
                if found and found[0]["tool"] == "get_current_time":
                    used += n
                    break
                check(time.monotonic() < deadline, f"meta (d): search finds get_current_time first: {found[:3]}")
                await asyncio.sleep(0.5)
            check(found[0]["server"] == "time", "meta (d): on the time server")
            check(len(found) <= 5 and n <= 1500, f"meta (d): the search answers the best five within 1,500 bytes ({len(found)}, {n})")
            check(0 < found[0]["confidence"] <= 1, f"meta (d): with a confidence: {found[0]}")
        else:
            check("time__get_current_time" in m.tools, f"{mode} (d): listed by its own name")
        r, n = await m.upstream("time", "get_current_time", {"timezone": "Asia/Tokyo"})
        used += n
        check(not r.is_error and "Asia/Tokyo" in r.content[0].text, f"{mode} (d): the call answers: {r.content[0].text[:200]}")
        mine["d"] = used

        # call_tool costs the same in every mode: listed, so a client that checks answers
        # against output schemas (this SDK) does not list the tools again before each call.
        before = m.listings
        for i in range(20):
            r, _ = await m.call("call_tool", {"server": "time", "tool_name": "get_current_time", "tool_args": {"timezone": "UTC"}})
            if i == 0:
                check(not r.is_error, f"{mode}: call_tool answers")
        check(m.listings == before, f"{mode}: 20 call_tool calls listed the tools {m.listings - before} more times")
        figures[mode] = mine


async def main() -> None:
    data = WORK / "data"
    data.mkdir(parents=True, exist_ok=True)
    # The database server's files in a folder of their own: WORK holds Offload's configuration,
    # and a confined server cannot create files (its journal) in a folder that holds Offload's.
    (WORK / "db").mkdir(exist_ok=True)
    db_path = WORK / "db" / "bulk.db"
    started = time.monotonic()
    sales_rows = write_sales(data / "sales.csv")
    write_users(data / "users.csv")
    sales_bytes = (data / "sales.csv").stat().st_size
    check(sales_bytes >= 100_000_000, f"a {sales_bytes / 1e6:.0f} MB CSV of {sales_rows} rows written in {time.monotonic() - started:.1f} s")
    ddb = duckdb.connect()
    per_region = ddb.execute(
        f"SELECT region, SUM(amount), COUNT(*) FROM read_csv('{data}/sales.csv', header=true) GROUP BY region ORDER BY region").fetchall()
    north = ddb.execute(
        f"SELECT COUNT(*), MAX(amount) FROM read_csv('{data}/sales.csv', header=true) WHERE region = 'north'").fetchone()
    expected = {
        "north": list(north),
        "sales_rows": sales_rows,
        "per_region": [list(r) for r in per_region],
        "qty": sum(i % 13 for i in range(ROWS)),
        "ages": sum(18 + i % 60 for i in range(USERS)),
    }
    config = WORK / "config.json"
    config.write_text(json.dumps({
        "roots": [str(data)],
        "mcpServers": {
            "rows": {"command": PY, "args": [str(HERE / "rows_server.py")]},
            "db": {"command": PY, "args": [str(HERE / "bulk_server.py"), str(db_path)]},
            "time": {"command": str(HERE / ".venv/bin/mcp-server-time")},
            "memory": {"command": "node", "args": [MEMORY], "env": {"MEMORY_FILE_PATH": str(WORK / "memory.jsonl")}},
        },
    }))
    env = dict(os.environ, OFFLOAD_CONFIG=str(config))
    figures = {"sales_mb": round(sales_bytes / 1e6), "sales_rows": sales_rows}
    for mode in ["meta", "direct", "auto"]:
        await run_mode(mode, env, db_path, expected, figures)

    # The same work connected to the servers directly: what reaches the client then.
    base = {}

    async def whole_file(s):
        r = await s.call_tool("read_text_file", {"path": str(data / "sales.csv")})
        check(not r.is_error and len(r.content[0].text) == sales_bytes, "directly (a): server-filesystem reads the whole CSV")
        return size(r)

    base["a"] = await directly(StdioServerParameters(command="node", args=[FILESYSTEM, str(data)]), whole_file)

    async def all_rows(s):
        # The same three answers, read whole by the model.
        total = 0
        for tool in ["list_orders", "orders_report", "orders_export"]:
            r = await s.call_tool(tool, {"n": ROWS})
            check(not r.is_error, f"directly (b): the rows server answers {tool}")
            total += size(r)
        return total

    base["b"] = await directly(StdioServerParameters(command=PY, args=[str(HERE / "rows_server.py")]), all_rows)

    async def insert(s):
        with open(data / "users.csv") as f:
            header = f.readline().strip().split(",")
            rows = [dict(zip(header, line.strip().split(","))) for line in f]
        for row in rows:
            row["age"] = int(row["age"])
        args = {"table": "users_direct_client", "rows": rows}
        r = await s.call_tool("insert_rows", args)
        check(not r.is_error, "directly (c): the rows are inserted")
        # The model writes the arguments itself, then reads the answer.
        return len(json.dumps(args)) + size(r)

    base["c"] = await directly(StdioServerParameters(command=PY, args=[str(HERE / "bulk_server.py"), str(db_path)]), insert)

    async def listing(s):
        return size(await s.list_tools())

    servers = [
        StdioServerParameters(command=PY, args=[str(HERE / "rows_server.py")]),
        StdioServerParameters(command=PY, args=[str(HERE / "bulk_server.py"), str(db_path)]),
        StdioServerParameters(command=str(HERE / ".venv/bin/mcp-server-time")),
        StdioServerParameters(command="node", args=[MEMORY], env=dict(os.environ, MEMORY_FILE_PATH=str(WORK / "memory2.jsonl"))),
    ]
    base["listing"] = sum([await directly(p, listing) for p in servers])

    async def now(s):
        r = await s.call_tool("get_current_time", {"timezone": "Asia/Tokyo"})
        return size(r)

    base["d"] = await directly(servers[2], now)
    figures["directly"] = base
    print("figures " + json.dumps(figures), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
