"""A server written with the official Python SDK's MCPServer (mcp 2.x) whose tools return `str`.

The SDK answers such a tool with structuredContent {"result": "<the string>"} (its output schema
says so) and the same string as a text block. Offload's interop tests check that JSON held in
that string is stored as data, not as a one-cell table.

Usage: python str_server.py   (serves MCP on stdio)
"""

import json

from mcp.server.mcpserver import MCPServer

app = MCPServer("str-answers")


@app.tool()
def rows_json(n: int) -> str:
    """Return n rows as JSON text (a list of objects)."""
    return json.dumps(
        [{"id": i, "name": f"user {i}", "zip": f"{i:05d}"} for i in range(n)]
    )


@app.tool()
def greeting(name: str) -> str:
    """Return a plain sentence (not JSON)."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    app.run()
