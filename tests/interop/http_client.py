"""Drives `offload serve --http` with the official Python SDK (mcp 2.x) as a streamable-HTTP
client, with access tokens.

Usage: http_client.py URL FULL_TOKEN READ_TOKEN MODE   (MODE: "auto" = 2026-07-28, stateless;
"legacy" = the initialize handshake and a session)
Prints one line per check; exits non-zero on the first failure.
"""

import asyncio
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from checks import check


def connect(url, token, mode):
    headers = {"Authorization": f"Bearer {token}"} if token else None
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    return Client(transport, mode=mode, raise_exceptions=True)


async def main(url, full, read, mode):
    # Without a token the server answers 401 before any MCP is spoken.
    try:
        async with connect(url, None, mode) as client:
            await client.list_tools()
        check(False, "no token is refused")
    except Exception as e:  # the SDK raises its own error types for HTTP failures
        check("401" in repr(e) or "Unauthorized" in repr(e) or isinstance(e, (httpx2.HTTPStatusError, ExceptionGroup)), f"no token is refused ({type(e).__name__})")

    async with connect(url, full, mode) as client:
        print(f"protocol {client.protocol_version}", flush=True)
        check(client.server_info.name == "offload", "server name")
        names = [t.name for t in (await client.list_tools()).tools]
        check("call_tool" in names and "read_file" in names, "tools listed over HTTP")
        r = await client.call_tool("call_tool", {"server": "fx", "tool_name": "echo", "tool_args": {"text": "hello over http"}})
        check(not r.is_error and "hello over http" in r.content[0].text, "call_tool over HTTP")
        r = await client.call_tool("call_tool", {"server": "fx", "tool_name": "large", "tool_args": {"bytes": 300000}})
        check(not r.is_error and r.structured_content.get("uri", "").startswith("file://"), "a big answer arrives stored and linked")

    async with connect(url, read, mode) as client:
        r = await client.call_tool("list_allowed_directories", {})
        check(not r.is_error, "read scope lists directories")
        r = await client.call_tool("call_tool", {"server": "fx", "tool_name": "echo", "tool_args": {"text": "x"}})
        check(r.is_error and r.structured_content["error"]["code"] == "forbidden", "read scope may not call")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
