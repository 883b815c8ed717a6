"""What the interop client scripts share: one line per check, exit non-zero on the first failure;
a session with `offload mcp` in an exposure mode."""

import asyncio
import sys
from contextlib import asynccontextmanager

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


def check(cond, what):
    if not cond:
        print(f"FAIL {what}", flush=True)
        sys.exit(1)
    print(f"ok {what}", flush=True)


@asynccontextmanager
async def offload_session(offload: str, mode: str, env: dict):
    """A client session with `offload mcp` (embedded) in `mode` (`auto`: no `--expose`, as a new
    user has it), and an event set whenever it says its tools changed."""
    args = ["mcp", "--mode", "embedded"] + ([] if mode == "auto" else ["--expose", mode])
    changed = asyncio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with stdio_client(StdioServerParameters(command=offload, args=args, env=env)) as (r, w):
        async with ClientSession(r, w, message_handler=on_message) as s:
            await s.initialize()
            yield s, changed
