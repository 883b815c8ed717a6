#!/usr/bin/env python3
"""Makes the third set `offload-bench search` scores: the tools of the servers Offload is tested
with, as they list them (server-memory, server-filesystem, server-everything from npm;
mcp-server-git, mcp-server-time from PyPI; installed by scripts/setup-interop.sh), and the
requests in crates/bench/data/search/own-requests.txt, ten or more a tool.

Writes crates/bench/data/search/own.json.gz in the format of scripts/search-sets.py, each tool
with its server. usage: scripts/search-own.py
"""
import asyncio
import gzip
import json
import subprocess
import tempfile
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
INTEROP = ROOT / "tests/interop"
DATA = ROOT / "crates/bench/data/search"


def servers():
    repo = tempfile.mkdtemp()
    subprocess.run(["git", "init", "-q", repo], check=True)
    node = lambda package, *args: ("node", [str(INTEROP / f"node_modules/@modelcontextprotocol/{package}/dist/index.js"), *args])
    return {
        "memory": node("server-memory"),
        "filesystem": node("server-filesystem", tempfile.mkdtemp()),
        "everything": node("server-everything", "stdio"),
        "git": (str(INTEROP / ".venv/bin/mcp-server-git"), ["--repository", repo]),
        "time": (str(INTEROP / ".venv/bin/mcp-server-time"), []),
    }


async def listed():
    tools = []
    for server, (command, args) in servers().items():
        async with stdio_client(StdioServerParameters(command=command, args=args)) as (r, w):
            async with ClientSession(r, w) as session:
                await session.initialize()
                for t in (await session.list_tools()).tools:
                    props = (t.input_schema or {}).get("properties") or {}
                    tools.append({
                        "server": server,
                        "name": t.name,
                        "description": t.description or "",
                        "params": [[k, v.get("description", "") if isinstance(v, dict) else ""] for k, v in props.items()],
                    })
    return tools


def main():
    tools = asyncio.run(listed())
    index = {(t["server"], t["name"]): i for i, t in enumerate(tools)}
    queries, wanted = [], None
    for line in (DATA / "own-requests.txt").read_text().splitlines():
        line = line.strip()
        if line.startswith("# ") and len(line.split()) == 3 and (line.split()[1], line.split()[2]) in index:
            wanted = index[(line.split()[1], line.split()[2])]
        elif line and not line.startswith("#"):
            queries.append({"q": line, "relevant": [wanted]})
    counts = [sum(q["relevant"] == [i] for q in queries) for i in range(len(tools))]
    short = [tools[i]["name"] for i, c in enumerate(counts) if c < 10]
    assert not short, f"fewer than ten requests for {short}"
    data = {
        "source": "the tools of server-memory, server-filesystem, server-everything (npm), mcp-server-git, mcp-server-time (PyPI) as listed; requests from own-requests.txt",
        "licence": "tool definitions: MIT (the servers' authors); requests: this repository's",
        "tools": tools,
        "queries": queries,
    }
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    with open(DATA / "own.json.gz", "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", mtime=0, compresslevel=9) as z:
            z.write(raw)
    print(f"own: {len(tools)} tools, {len(queries)} queries")


if __name__ == "__main__":
    main()
