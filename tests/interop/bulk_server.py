"""A bulk-insert MCP server built with the official Python SDK (mcp 2.x) over SQLite.

Usage: python bulk_server.py DB_PATH   (serves MCP on stdio)
Tools: insert_rows(table, rows) inserts a list of objects; query(sql) returns rows.
Used by Offload's interop tests as a real database tool behind call_tool_with_file_content.
"""

import sqlite3
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer

# Tools may run on worker threads.
db = sqlite3.connect(sys.argv[1], check_same_thread=False)
app = MCPServer("bulk-insert")


@app.tool()
def insert_rows(table: str, rows: list[dict[str, Any]]) -> dict[str, int]:
    """Insert rows (objects keyed by column name) into a table, creating it when needed."""
    if not table.isidentifier():
        raise ValueError("bad table name")
    columns = list(rows[0].keys()) if rows else []
    for c in columns:
        if not c.isidentifier():
            raise ValueError(f"bad column name {c!r}")
    if columns:
        db.execute(f"create table if not exists {table} ({', '.join(columns)})")
        marks = ", ".join("?" for _ in columns)
        db.executemany(
            f"insert into {table} ({', '.join(columns)}) values ({marks})",
            [tuple(r.get(c) for c in columns) for r in rows],
        )
        db.commit()
    return {"inserted": len(rows)}


@app.tool()
def query(sql: str) -> list[list[Any]]:
    """Run a read-only SQL query and return its rows."""
    return [list(r) for r in db.execute(sql).fetchall()]


if __name__ == "__main__":
    app.run("stdio")
