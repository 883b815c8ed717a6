#!/usr/bin/env python3
"""Makes the third set `offload-bench search` scores: the tools of the servers Offload is tested
with, as they list them (server-memory, server-filesystem, server-everything from npm;
mcp-server-git, mcp-server-time from PyPI; installed by scripts/setup-interop.sh), and the
requests in crates/bench/data/search/own-requests.txt, ten or more a tool.

Writes crates/bench/data/search/own.json.gz in the format of scripts/search-sets.py, each tool
with its server. With `models`, the fourth set: the same servers and mcp-server-fetch (`uvx`,
PyPI), mcp-server-sqlite and mcp-server-motherduck (the interop virtualenvs), with the requests
in model-requests.txt (written as models phrase a `list_available_tools` query), into
models.json.gz. A header "# server tool | server2 tool2" makes several tools right for the
requests below it. usage: scripts/search-own.py [own|models]
"""
import asyncio
import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
INTEROP = ROOT / "tests/interop"
DATA = ROOT / "crates/bench/data/search"

SETS = {
    "own": ("own-requests.txt", "the tools of server-memory, server-filesystem, server-everything (npm), mcp-server-git, mcp-server-time (PyPI) as listed; requests from own-requests.txt"),
    "models": ("model-requests.txt", "the tools of server-memory, server-filesystem, server-everything (npm), mcp-server-git, mcp-server-time, mcp-server-fetch, mcp-server-sqlite, mcp-server-motherduck (PyPI) as listed; requests from model-requests.txt, written as models phrase list_available_tools queries"),
}


def servers(name):
    repo = tempfile.mkdtemp()
    subprocess.run(["git", "init", "-q", repo], check=True)
    node = lambda package, *args: ("node", [str(INTEROP / f"node_modules/@modelcontextprotocol/{package}/dist/index.js"), *args])
    found = {
        "memory": node("server-memory"),
        "filesystem": node("server-filesystem", tempfile.mkdtemp()),
        "everything": node("server-everything", "stdio"),
        "git": (str(INTEROP / ".venv/bin/mcp-server-git"), ["--repository", repo]),
        "time": (str(INTEROP / ".venv/bin/mcp-server-time"), []),
    }
    if name == "models":
        db = tempfile.mkdtemp()
        found |= {
            # uvx fetches it from PyPI: it needs this environment's certificates and proxy.
            "fetch": (str(INTEROP / ".venv/bin/uvx"), ["mcp-server-fetch@2026.10.24"], dict(os.environ)),
            "sqlite": (str(INTEROP / ".venv-legacy/bin/mcp-server-sqlite"), ["--db-path", f"{db}/test.db"]),
            "motherduck": (str(INTEROP / ".venv-tables/bin/mcp-server-motherduck"), ["--db-path", f"{db}/shop.duckdb"]),
        }
    return found


async def listed(name):
    tools = []
    for server, (command, args, *env) in servers(name).items():
        params = StdioServerParameters(command=command, args=args, env=env[0] if env else None)
        async with stdio_client(params) as (r, w):
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


def wanted_by(line, index):
    """The tools a header line "# server tool | server2 tool2" names, or None for a comment."""
    pairs = [tuple(part.split()) for part in line[2:].split("|")]
    if line.startswith("# ") and all(p in index for p in pairs):
        return sorted(index[p] for p in pairs)
    servers = {s for s, _ in index}
    assert not any(p and p[0] in servers for p in pairs), f"a header naming no listed tool: {line}"
    return None


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "own"
    requests, source = SETS[name]
    tools = asyncio.run(listed(name))
    index = {(t["server"], t["name"]): i for i, t in enumerate(tools)}
    queries, wanted = [], None
    for line in (DATA / requests).read_text().splitlines():
        line = line.strip()
        if line.startswith("#"):
            wanted = wanted_by(line, index) or wanted
        elif line:
            queries.append({"q": line, "relevant": wanted})
    counts = [sum(i in q["relevant"] for q in queries) for i in range(len(tools))]
    short = [tools[i]["name"] for i, c in enumerate(counts) if c < 10]
    assert not short, f"fewer than ten requests for {short}"
    data = {
        "source": source,
        "licence": "tool definitions: MIT (the servers' authors); requests: this repository's",
        "tools": tools,
        "queries": queries,
    }
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    with open(DATA / f"{name}.json.gz", "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", mtime=0, compresslevel=9) as z:
            z.write(raw)
    print(f"{name}: {len(tools)} tools, {len(queries)} queries")


if __name__ == "__main__":
    main()
