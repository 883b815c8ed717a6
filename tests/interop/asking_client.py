"""An upstream that asks while it serves a call, behind Offload, driven by the official Python
SDK as Offload's client: its elicitation and sampling requests must reach this client's
callbacks with the upstream's request intact, the answers must reach the upstream, its log
messages must arrive, and its `roots/list` is answered with Offload's roots. Run once per
protocol mode ("auto": 2026-07-28, where the asking travels in `input_required` results, and
"legacy": the initialize handshake, where it travels as requests mid-call).

Offload speaks to the upstream on UPSTREAM (default 2025-11-25, where the upstream asks with
requests mid-call; 2026-07-28, where it answers `input_required` and Offload answers for the
client and calls again).

Usage: python asking_client.py OFFLOAD_BINARY MODE WORK_DIR [UPSTREAM]
Prints "ok ..." lines; exits non-zero on the first mismatch.
"""

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters, types

from checks import check

OFFLOAD, MODE, WORK = sys.argv[1:4]
UPSTREAM = sys.argv[4] if len(sys.argv) > 4 else "2025-11-25"
HERE = Path(__file__).resolve().parent


async def main():
    work = Path(WORK)
    data = work / "data"
    data.mkdir(exist_ok=True)
    config = work / "config.json"
    config.write_text(json.dumps({
        "roots": [str(data)],
        "tools": {"expose": "direct"},
        "mcpServers": {"asking": {"command": sys.executable, "args": [str(HERE / "asking_server.py")],
                                  "protocol": UPSTREAM}},
    }))
    env = dict(os.environ, OFFLOAD_CONFIG=str(config), HOME=str(work),
               XDG_DATA_HOME=str(work / "share"), XDG_RUNTIME_DIR=str(work / "run"))

    asked = {"elicit": [], "sample": [], "roots": 0}
    logged = []

    async def on_elicit(context, params):
        asked["elicit"].append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_sample(context, params):
        asked["sample"].append(params)
        return types.CreateMessageResult(role="assistant", model="test-model",
                                         content=types.TextContent(type="text", text="short"))

    async def on_roots(context):
        asked["roots"] += 1
        return types.ListRootsResult(roots=[types.Root(uri="file:///client/own/root")])

    async def on_log(params):
        logged.append(params)

    params = StdioServerParameters(command=OFFLOAD, args=["mcp", "--mode", "embedded"], env=env)
    async with Client(params, mode=MODE, elicitation_callback=on_elicit, sampling_callback=on_sample,
                      list_roots_callback=on_roots, logging_callback=on_log, log_level="info",
                      read_timeout_seconds=60) as client:
        print(f"protocol {client.protocol_version}, upstream {UPSTREAM}", flush=True)
        r = await client.call_tool("asking__greet", {})
        check(not r.is_error and r.content[0].text == "Hello, Ada!", f"elicitation answered through Offload: {r.content}")
        check(len(asked["elicit"]) == 1, "the client was asked once")
        e = asked["elicit"][0]
        check(e.message == "What is your name?" and e.requested_schema["properties"]["name"]["type"] == "string",
              "the upstream's elicitation reached the client intact")

        r = await client.call_tool("asking__summarize", {"text": "a long text"})
        check(not r.is_error and r.content[0].text == "summary: short", f"sampling answered through Offload: {r.content}")
        s = asked["sample"][0]
        check(s.max_tokens == 50 and s.messages[0].content.text == "Summarize: a long text",
              "the upstream's sampling request reached the client intact")

        r = await client.call_tool("asking__roots", {})
        check(not r.is_error and r.content[0].text == data.resolve().as_uri(),
              f"the upstream's roots/list answered with Offload's roots: {r.content}")
        check(asked["roots"] == 0, "the client's own roots are not what the upstream sees")

        r = await client.call_tool("asking__work", {})
        check(not r.is_error and r.content[0].text == "done", "a tool that logs")
        check(any(l.data == "working on it" and (l.logger or "").startswith("asking") for l in logged),
              f"its log message reached the client with the server as logger: {logged}")

        # Through call_tool as well, the asking reaches the client.
        r = await client.call_tool("call_tool_and_store", {"server": "asking", "tool_name": "greet"})
        check(not r.is_error and len(asked["elicit"]) == 2, "asking from a stored call reaches the client too")
        stored = r.structured_content["path"]
        check(Path(stored).read_text().find("Hello, Ada!") >= 0, "and only the final answer is stored")


if __name__ == "__main__":
    asyncio.run(main())
