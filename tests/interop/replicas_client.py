"""Two `offload serve --http` replicas behind round-robin in the client: every HTTP request the
official Python SDK makes goes to the next replica. On 2026-07-28 (stateless) nothing a request
needs lives in one replica's memory, so a whole session works across both.

Usage: replicas_client.py URL_A URL_B TOKEN ROOT
Prints one line per check; exits non-zero on the first failure.
"""

import asyncio
import itertools
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from checks import check


async def main(url_a, url_b, token, root):
    ports = itertools.cycle([url_a, url_b])
    served = {url_a: 0, url_b: 0}

    async def next_replica(request):
        target = next(ports)
        served[target] += 1
        request.url = request.url.copy_with(port=int(target.split(":")[2].split("/")[0]))

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    http.event_hooks["request"].append(next_replica)
    async with Client(streamable_http_client(url_a, http_client=http), mode="auto", raise_exceptions=True) as client:
        check(client.protocol_version == "2026-07-28", "stateless protocol")
        for i in range(6):
            r = await client.call_tool("call_tool", {"server": "fx", "tool_name": "echo", "tool_args": {"text": f"n{i}"}})
            check(not r.is_error and f"n{i}" in r.content[0].text, f"call {i}")
        r = await client.call_tool("call_tool_and_store", {"server": "fx", "tool_name": "echo", "tool_args": {"text": "shared"}, "filename": "shared.json"})
        check(not r.is_error, "stored on one replica")
        path = r.structured_content["path"]
        r = await client.call_tool("read_file", {"path": path})
        check(not r.is_error and "shared" in r.content[0].text, "read back through the other")
    check(served[url_a] > 2 and served[url_b] > 2, f"both replicas served ({served[url_a]} and {served[url_b]} requests)")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
