"""Two `offload serve --http` replicas sharing state, each in front of its own process of an
upstream that asks while it serves (`asking_server.py`), behind round-robin in the client: the
official Python SDK on 2026-07-28 gets the upstream's question in an `input_required` result
from one replica, and its retry with the answer goes to the other, which hands it to the
replica holding the call. Every call must end with the answer built from the client's reply.

Usage: asking_replicas_client.py URL_A URL_B TOKEN
Prints one line per check; exits non-zero on the first failure.
"""

import asyncio
import itertools
import json
import sys

from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from checks import check


async def main(url_a, url_b, token):
    ports = itertools.cycle([url_a, url_b])
    calls = []

    async def next_replica(request):
        target = next(ports)
        body = {}
        if request.method == "POST":
            try:
                body = json.loads(request.content)
            except ValueError:
                pass
        params = body.get("params") or {}
        calls.append((target, body.get("method"), "requestState" in params))
        request.url = request.url.copy_with(port=int(target.split(":")[2].split("/")[0]))

    names = iter(["Ada", "Grace", "Edsger", "Barbara", "Alan", "Frances"])

    async def on_elicit(context, params):
        return types.ElicitResult(action="accept", content={"name": next(names)})

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    http.event_hooks["request"].append(next_replica)
    async with Client(streamable_http_client(url_a, http_client=http), mode="auto",
                      elicitation_callback=on_elicit, raise_exceptions=True) as client:
        check(client.protocol_version == "2026-07-28", "stateless protocol")
        for name in ["Ada", "Grace", "Edsger", "Barbara", "Alan", "Frances"]:
            before = len(calls)
            r = await client.call_tool("asking__greet", {})
            check(not r.is_error and r.content[0].text == f"Hello, {name}!", f"answered {name}: {r.content}")
            first = [t for t, method, retry in calls[before:] if method == "tools/call" and not retry]
            retries = [t for t, method, retry in calls[before:] if method == "tools/call" and retry]
            check(len(first) == 1 and len(retries) == 1 and first[0] != retries[0],
                  f"asked by one replica, answered through the other ({first} then {retries})")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
