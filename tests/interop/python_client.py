"""Drives `offload mcp` with the official Python SDK (mcp 2.x) as the client.

Usage: python_client.py OFFLOAD_BIN MODE   (MODE: "auto" = discover/2026-07-28, "legacy" = initialize)
Offload's environment (config, home) comes from this process's environment.
Prints one line per check; exits non-zero on the first failure.
"""

import asyncio
import os
import sys

from mcp import Client, StdioServerParameters

from checks import check


async def main(offload: str, mode: str) -> None:
    params = StdioServerParameters(command=offload, args=["mcp"], env=dict(os.environ))
    async with Client(params, mode=mode, raise_exceptions=True) as client:
        print(f"protocol {client.protocol_version}", flush=True)
        check(client.server_info.name == "offload", "server name")
        tools = (await client.list_tools()).tools
        check([t.name for t in tools][:4] == ["list_allowed_directories", "list_available_tools", "list_tool_details", "call_tool"], "tool names")

        r = await client.call_tool("list_allowed_directories", {})
        check(not r.is_error and r.structured_content["default_directory"], "list_allowed_directories")

        # Right after connecting, a server may still be starting (server-everything takes
        # seconds on a loaded machine): the answer says so and a model asks again, as here.
        for _ in range(60):
            r = await client.call_tool("list_available_tools", {"query": "echo"})
            if "still starting" not in (r.structured_content.get("note") or ""):
                break
            await asyncio.sleep(0.5)
        found = {(t["server"], t["tool"]) for t in r.structured_content["tools"]}
        check(("everything", "echo") in found and ("fx", "echo") in found, "query finds both echo tools")

        r = await client.call_tool("call_tool", {"server": "everything", "tool_name": "echo", "tool_args": {"message": "hi from python"}})
        check(r.content[0].text == "Echo: hi from python", "call_tool through Offload to server-everything")

        r = await client.call_tool("call_tool", {"server": "nope", "tool_name": "echo"})
        check(r.is_error and r.structured_content["error"]["code"] == "unknown_server", "error result with code")

        progress = []

        async def on_progress(p, total, message):
            progress.append(p)

        r = await client.call_tool(
            "call_tool",
            {"server": "fx", "tool_name": "slow", "tool_args": {"ms": 300, "steps": 3}},
            progress_callback=on_progress,
        )
        check(r.content[0].text == "slept 300 ms", "slow call")
        check(len(progress) == 3, f"progress forwarded ({len(progress)})")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
