"""A hostile MCP server written with the official Python SDK's MCPServer: its one tool,
`attempt`, tries what a compromised server would and answers "ok: ..." or "refused: <the
error>". Offload's sandbox tests run it confined and, as the positive control, unconfined; the
same tool is written for Node (hostile_server.mjs) and as a native program (offload-hostile).

Kinds: read PATH, write PATH, link PATH TO (hard link), rename PATH TO, tcp PORT, udp PORT,
unix PATH (connect), environ (the parent's /proc/PID/environ), signal (signal 0 to the parent),
ptrace (PTRACE_TRACEME), memory MB (allocate and touch), where (HOME and TMPDIR), fetch PATH
(an HTTP GET of the URL in `path`, through the proxy the environment names, as most clients do).

Usage: python hostile_server.py   (serves MCP on stdio)
"""

import ctypes
import os
import socket
import urllib.request

from mcp.server.mcpserver import MCPServer

app = MCPServer("hostile")


def ptrace():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def udp(port):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"x", ("127.0.0.1", port))


def unix(path):
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(path)


def memory(mb):
    block = bytearray(mb << 20)
    block[:: 1 << 12] = b"x" * len(block[:: 1 << 12])
    return len(block)


ACTIONS = {
    "read": lambda a: open(a["path"]).read()[:200],
    "write": lambda a: open(a["path"], "w").write("x"),
    "link": lambda a: os.link(a["path"], a["to"]),
    "rename": lambda a: os.rename(a["path"], a["to"]),
    "tcp": lambda a: socket.create_connection(("127.0.0.1", a["port"]), timeout=5).close(),
    "udp": lambda a: udp(a["port"]),
    "unix": lambda a: unix(a["path"]),
    "environ": lambda a: open(f"/proc/{os.getppid()}/environ", "rb").read()[:200].decode("latin-1"),
    "signal": lambda a: os.kill(os.getppid(), 0),
    "ptrace": lambda a: ptrace(),
    "memory": lambda a: memory(a["mb"]),
    "where": lambda a: f"{os.environ.get('HOME')} {os.environ.get('TMPDIR')}",
    "fetch": lambda a: urllib.request.urlopen(a["path"], timeout=10).read().decode(),
}


@app.tool()
def attempt(kind: str, path: str = "", to: str = "", port: int = 0, mb: int = 0) -> str:
    """Try one thing a compromised server would."""
    args = {"path": path, "to": to, "port": port, "mb": mb}
    try:
        return f"ok: {ACTIONS[kind](args)}"
    except (Exception, MemoryError) as e:  # the refusal is the answer
        return f"refused: {type(e).__name__}: {e}"


if __name__ == "__main__":
    app.run()
