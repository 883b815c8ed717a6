"""A server written with the official Python SDK's MCPServer (mcp 2.x) that answers with many
rows, as data servers do: a list of dicts (the SDK sends it as structuredContent
{"result": [...]} and as JSON text), the same rows as a Python literal (`str(rows)`, as servers
that format their answers by hand do) and as pretty-printed JSON text; and one order at a
time (`get_order`), as lookups a script makes row by row.

Usage: python rows_server.py   (serves MCP on stdio; ROWS_START_DELAY=3 makes its start take 3 s
more, a slow server among fast ones)
"""

import json
import os
import time
from typing import Any

from mcp.server.mcpserver import MCPServer

time.sleep(float(os.environ.get("ROWS_START_DELAY", "0")))
app = MCPServer("orders")
REGIONS = ["north", "south", "east", "west"]


def order(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "customer": f"c{i % 997}",
        "region": REGIONS[i % 4],
        "qty": i % 13,
        "price": round((i % 1000) * 0.25, 2),
    }


def rows(n: int) -> list[dict[str, Any]]:
    return [order(i) for i in range(n)]


@app.tool()
def list_orders(n: int) -> list[dict[str, Any]]:
    """List the first n orders (id, customer, region, qty, price)."""
    return rows(n)


@app.tool()
def get_order(id: int) -> dict[str, Any]:
    """One order by its id: id, customer, region, qty, price."""
    return order(id)


@app.tool()
def orders_report(n: int) -> str:
    """The first n orders as the text of a Python list."""
    return str(rows(n))


@app.tool()
def orders_export(n: int) -> str:
    """The first n orders as indented JSON text."""
    return json.dumps(rows(n), indent=2)


if __name__ == "__main__":
    app.run()
