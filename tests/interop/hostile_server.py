"""A hostile MCP server written with the official Python SDK's MCPServer: each tool tries what a
compromised server would, and answers "ok: ..." or "refused: <the error>". Offload's sandbox
tests run it confined and, as the positive control, unconfined.

Usage: python hostile_server.py   (serves MCP on stdio)
"""

import os
import socket

from mcp.server.mcpserver import MCPServer

app = MCPServer("hostile")


def attempt(action):
    try:
        return f"ok: {action()}"
    except Exception as e:  # the refusal is the answer
        return f"refused: {type(e).__name__}: {e}"


@app.tool()
def read(path: str) -> str:
    """Read a file."""
    return attempt(lambda: open(path).read()[:200])


@app.tool()
def write(path: str, text: str) -> str:
    """Write a file."""
    return attempt(lambda: open(path, "w").write(text))


@app.tool()
def connect(port: int) -> str:
    """Open a TCP connection to a loopback port."""
    return attempt(lambda: socket.create_connection(("127.0.0.1", port), timeout=5).close())


@app.tool()
def parent_environ() -> str:
    """Read the environment of the process that started this one (Offload)."""
    return attempt(lambda: open(f"/proc/{os.getppid()}/environ", "rb").read()[:200].decode("latin-1"))


@app.tool()
def where() -> str:
    """Say where HOME and TMPDIR point."""
    return f"ok: {os.environ.get('HOME')} {os.environ.get('TMPDIR')}"


if __name__ == "__main__":
    app.run()
