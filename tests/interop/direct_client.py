"""Offload in direct mode, seen by the official Python SDK as a client: server-everything and
server-filesystem behind Offload (`offload mcp --expose direct`), compared with the same servers
connected directly.

Usage: python direct_client.py OFFLOAD_BINARY EVERYTHING_INDEX FILESYSTEM_INDEX WORK_DIR
Prints "ok ..." lines; exits non-zero on the first mismatch.
"""

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

OFFLOAD, EVERYTHING, FILESYSTEM, WORK = sys.argv[1:5]


async def tools_of(params):
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            return {t.name: t for t in (await s.list_tools()).tools}


async def main():
    work = Path(WORK)
    data = work / "data"
    data.mkdir(exist_ok=True)
    (data / "big.txt").write_text("line of text\n" * 30_000)  # ~390 KB
    (data / "note.txt").write_text("from a file")
    config = work / "config.json"
    config.write_text(json.dumps({
        "roots": [str(data)],
        "mcpServers": {
            "everything": {"command": "node", "args": [EVERYTHING, "stdio"], "disabledTools": ["get-env"]},
            "fs": {"command": "node", "args": [FILESYSTEM, str(data)]},
        },
    }))
    env = dict(os.environ, OFFLOAD_CONFIG=str(config), HOME=str(work),
               XDG_DATA_HOME=str(work / "share"), XDG_RUNTIME_DIR=str(work / "run"))
    direct = await tools_of(StdioServerParameters(command="node", args=[EVERYTHING, "stdio"]))
    offload = StdioServerParameters(command=OFFLOAD, args=["mcp", "--expose", "direct", "--mode", "embedded"], env=env)
    async with stdio_client(offload) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            listed = {t.name: t for t in (await s.list_tools()).tools}
            for name, tool in direct.items():
                ours = listed.get(f"everything__{name}")
                if name == "get-env":
                    assert ours is None, f"{name} must not be listed"
                    continue
                assert ours is not None, f"everything__{name} missing from {sorted(listed)}"
                assert ours.description == tool.description, name
                assert ours.input_schema == tool.input_schema, name
                assert ours.annotations == tool.annotations, (name, ours.annotations, tool.annotations)
                assert ours.icons == tool.icons, name
            print(f"ok {len(direct) - 1} server-everything tools listed directly with their own "
                  "descriptions, schemas, annotations and icons (the task-only one too: Offload runs it as a task)")
            assert "fs__read_text_file" in listed and "list_available_tools" not in listed
            r = await s.call_tool("everything__get-sum", {"a": 2, "b": 3})
            assert not r.is_error and "5" in r.content[0].text, r
            r = await s.call_tool("everything__get-structured-content", {"location": "New York"})
            assert not r.is_error and r.structured_content, r
            print("ok direct calls answer as the upstream does (structured content included)")
            r = await s.call_tool("everything__echo", {"message": {"$file": str(data / "note.txt")}})
            assert "from a file" in r.content[0].text, r
            print("ok $file reaches a direct tool")
            r = await s.call_tool("fs__read_text_file", {"path": str(data / "big.txt")})
            assert not r.is_error, r
            size = len(json.dumps(r.model_dump(by_alias=True, exclude_none=True)))
            assert size < 102_400 and r.structured_content and r.structured_content.get("path"), size
            assert any(getattr(c, "type", "") == "resource_link" for c in r.content), r.content
            print(f"ok a 390 KB answer arrives stored and linked ({size} bytes in context)")
            try:
                r = await s.call_tool("everything__get-env", {})
                raise AssertionError(f"a disabled tool answered: {r}")
            except Exception as e:  # the SDK raises the JSON-RPC error (-32602 unknown tool)
                assert "unknown tool" in str(e), e
            print("ok a disabled tool is neither listed nor callable")


asyncio.run(main())
