"""Scripts (`run_script`) through `offload mcp`, walked the way a model walks them, with the
official Python SDK as the client, in each exposure mode (meta, direct, and the default auto
with no `tools.expose` in the configuration).

Upstreams: a server written with the official Python SDK (rows_server.py: get_order,
list_orders) and published ones (mcp-server-time from PyPI, server-memory from npm).

  (a) the script is offered: run_script listed, and list_tool_details gives get_order as a
      TypeScript declaration.
  (b) for each of 200 CSV rows look the order up and total qty * price: one script, beside the
      same work step by step in that mode (query_file, then each order called by its name in
      direct and auto, through call_tool in meta). Both totals are checked; the bytes that
      reach the client are compared.
  (c) store -> query: a script stores 5,000 orders it fetched, counts them with offload.query,
      and the model then queries the stored file with query_file.
  (d) published servers inside a script: the time in Tokyo (JSON text, parsed for the
      script), entities written to and read back from server-memory.
  (e) failures a model meets: a tool's error caught as ToolError, an uncaught one typed
      `tool_error`, a script's mistake typed `script_error` with its line.

The last line is `figures {...}` (JSON) for the test to check and print.

Usage: python scripts_client.py OFFLOAD_BINARY WORK_DIR
"""

import asyncio
import json
import os
import sys
import time
from pathlib import Path

from checks import check, offload_session

OFFLOAD, WORK = sys.argv[1], Path(sys.argv[2])
HERE = Path(__file__).resolve().parent
PY = str(HERE / ".venv/bin/python")
MEMORY = str(HERE / "node_modules/@modelcontextprotocol/server-memory/dist/index.js")
ROWS = 200


def size(model) -> int:
    return len(model.model_dump_json(by_alias=True, exclude_none=True))


def order(i: int) -> dict:
    regions = ["north", "south", "east", "west"]
    return {"id": i, "customer": f"c{i % 997}", "region": regions[i % 4], "qty": i % 13,
            "price": round((i % 1000) * 0.25, 2)}


LOOKUP = """const rows = await offload.query("orders.csv", "SELECT id FROM data");
const orders = await Promise.all(rows.map(r => tools.rows.get_order({ id: r.id })));
let total = 0;
for (const o of orders) total += o.qty * o.price;
return { rows: rows.length, total };"""


async def run_mode(mode: str, env: dict, figures: dict, want: float) -> None:
    async with offload_session(OFFLOAD, mode, env) as (s, changed):
        mine = {}

        # (a) offered; the tool as a script calls it.
        wanted = ["run_script"] + ([] if mode == "meta" else ["rows__get_order"])
        # Listed once right after initialize, as clients do: the first list has them.
        listed = await s.list_tools()
        names = {t.name for t in listed.tools}
        check(all(w in names for w in wanted), f"{mode} (a): {wanted} in the first tools/list ({sorted(names)[:20]})")
        details = await s.call_tool("list_tool_details", {"server": "rows", "tool_name": "get_order"})
        declared = (details.structured_content or {}).get("typescript", "")
        check("tools.rows.get_order(args: { id: number }): Promise<" in declared and "qty" in declared,
              f"{mode} (a): get_order declared for scripts: {declared}")

        # (b) 200 lookups: one script beside step by step.
        started = time.monotonic()
        r = await s.call_tool("run_script", {"code": LOOKUP})
        script_s = time.monotonic() - started
        check(not r.is_error, f"{mode} (b): the script runs: {r.content[0].text[:300]}")
        result = r.structured_content["result"]
        check(result["rows"] == ROWS and abs(result["total"] - want) < 1e-6,
              f"{mode} (b): the script totals {result} (want {want})")
        lookups = r.structured_content["calls"][1]
        check((lookups["call"], lookups["count"], lookups["failed"]) == ("tools.rows.get_order", ROWS, 0),
              f"{mode} (b): the calls are tallied: {r.structured_content['calls']}")
        script_bytes = len(json.dumps({"code": LOOKUP})) + size(r)

        started = time.monotonic()
        ask = {"path": "orders.csv", "sql": "SELECT id FROM data", "limit": ROWS}
        q = await s.call_tool("query_file", ask)
        step_bytes = len(json.dumps(ask)) + size(q)
        total = 0.0
        for (i,) in q.structured_content["rows"]:
            if mode == "meta":
                ask = {"server": "rows", "tool_name": "get_order", "tool_args": {"id": i}}
                a = await s.call_tool("call_tool", ask)
            else:
                ask = {"id": i}
                a = await s.call_tool("rows__get_order", ask)
            check(not a.is_error, f"{mode} (b): order {i} step by step")
            step_bytes += len(json.dumps(ask)) + size(a)
            o = a.structured_content.get("result", a.structured_content)
            total += o["qty"] * o["price"]
        steps_s = time.monotonic() - started
        check(abs(total - want) < 1e-6, f"{mode} (b): step by step totals {total}")
        mine["script_bytes"], mine["step_bytes"] = script_bytes, step_bytes
        mine["script_ms"], mine["step_ms"] = round(script_s * 1000), round(steps_s * 1000)

        # (c) store -> query, inside the script and then by the model.
        name = f"orders_{mode}.json"
        r = await s.call_tool("run_script", {"code": f"""
            const orders = await tools.rows.list_orders({{ n: 5000 }});
            const kept = await offload.store(orders, {{ name: "{name}" }});
            const [c] = await offload.query(kept.path, "SELECT COUNT(*) AS n, SUM(qty) AS q FROM data");
            return {{ path: kept.path, n: c.n, q: c.q }};"""})
        check(not r.is_error, f"{mode} (c): the script stores and queries: {r.content[0].text[:300]}")
        got = r.structured_content["result"]
        q_want = sum(i % 13 for i in range(5000))
        check(got["n"] == 5000 and got["q"] == q_want, f"{mode} (c): counted in the script: {got}")
        check(size(r) < 1500, f"{mode} (c): 5,000 orders cost the client {size(r)} bytes")
        q = await s.call_tool("query_file", {"path": got["path"], "sql": "SELECT MAX(id) FROM data"})
        check(not q.is_error and q.structured_content["rows"] == [[4999]], f"{mode} (c): the model queries the stored file")

        # (d) published servers inside a script.
        r = await s.call_tool("run_script", {"code": """
            const now = await tools.time.get_current_time({ timezone: "Asia/Tokyo" });
            await tools.memory.create_entities({ entities: [
              { name: "offload", entityType: "project", observations: ["scripts run next to the data"] },
              { name: "quickjs", entityType: "engine", observations: ["runs the scripts"] } ] });
            const graph = await tools.memory.read_graph({});
            return { zone: now.timezone, entities: graph.entities.map(e => e.name).sort() };"""})
        check(not r.is_error, f"{mode} (d): published servers answer the script: {r.content[0].text[:300]}")
        got = r.structured_content["result"]
        check(got["zone"] == "Asia/Tokyo", f"{mode} (d): the time server's JSON text parsed: {got}")
        check({"offload", "quickjs"} <= set(got["entities"]), f"{mode} (d): server-memory kept the entities: {got}")

        # (e) failures.
        r = await s.call_tool("run_script", {"code": """
            try { await tools.rows.get_order({ id: "not a number" }); return "called"; }
            catch (e) { return [e.name, e.server, e.tool]; }"""})
        check(r.structured_content["result"] == ["ToolError", "rows", "get_order"], f"{mode} (e): caught: {r.structured_content}")
        r = await s.call_tool("run_script", {"code": "await tools.rows.get_order({});"})
        check(r.is_error and r.structured_content["error"]["code"] == "tool_error", f"{mode} (e): uncaught: {r.structured_content}")
        r = await s.call_tool("run_script", {"code": "const a = 1;\nconsole.log(a.b.c);"})
        err = r.structured_content["error"]
        check(r.is_error and err["code"] == "script_error" and err["line"] == 2, f"{mode} (e): where: {err}")
        figures[mode] = mine


async def main() -> None:
    data = WORK / "data"
    data.mkdir(parents=True, exist_ok=True)
    with open(data / "orders.csv", "w") as f:
        f.write("id,note\n")
        for i in range(ROWS):
            f.write(f"{i * 7},order {i}\n")
    want = sum(order(i * 7)["qty"] * order(i * 7)["price"] for i in range(ROWS))
    # server-memory's file in a folder of its own: WORK holds Offload's configuration, where no
    # confined server may write.
    (WORK / "memory").mkdir(exist_ok=True)
    config = WORK / "config.json"
    config.write_text(json.dumps({
        "roots": [str(data)],
        "mcpServers": {
            "rows": {"command": PY, "args": [str(HERE / "rows_server.py")]},
            "time": {"command": str(HERE / ".venv/bin/mcp-server-time")},
            "memory": {"command": "node", "args": [MEMORY], "env": {"MEMORY_FILE_PATH": str(WORK / "memory" / "memory.jsonl")}},
        },
    }))
    env = dict(os.environ, OFFLOAD_CONFIG=str(config))
    figures = {}
    for mode in ["meta", "direct", "auto"]:
        await run_mode(mode, env, figures, want)
    print("figures " + json.dumps(figures), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
