"""Offload as the client of the MCP conformance suite's `auth` scenarios.

Usage (the suite appends the server URL):
    conformance client --command "python conformance_auth_client.py OFFLOAD_BINARY FAKE_BROWSER" ...

It does what a user does: the scenario's server goes into Offload's config as a remote server
(with the scenario's pre-registered client, when it has one, and `protocol` from
MCP_CONFORMANCE_PROTOCOL_VERSION); the official Python SDK connects to `offload mcp` and calls
the server's `test-tool` through Offload; when Offload answers `auth_required`, it signs in with
`offload auth login` (the "browser" being FAKE_BROWSER, which follows the suite's
authorization redirect to Offload's loopback listener) and calls again, at most three times
(a second sign-in is the step-up a server asking for more scope needs).

The keychain is the caller's (the test runs the suite with a private Secret Service). Exits
non-zero when the call never succeeds.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

from mcp import Client, StdioServerParameters

OFFLOAD, BROWSER, URL = sys.argv[1], sys.argv[2], sys.argv[-1]
SCENARIO = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
CONTEXT = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
VERSION = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")
# A name of its own per server URL: scenarios run in parallel against one keychain.
NAME = f"conformance-{zlib.crc32(URL.encode()):08x}"


def configure(home: Path) -> dict:
    entry = {"type": "http", "url": URL}
    if VERSION == "2026-07-28":
        entry["protocol"] = "2026-07-28"
    oauth = {
        # The document a user would point Offload at for authorization servers that take client
        # ID metadata documents (used only when the server advertises support).
        "clientMetadataUrl": "https://conformance-test.local/client-metadata.json",
    }
    if "client_id" in CONTEXT:
        oauth["clientId"] = CONTEXT["client_id"]
    if "client_secret" in CONTEXT:
        oauth["clientSecret"] = "${env:CONFORMANCE_CLIENT_SECRET}"
    entry["oauth"] = oauth
    config = home / "config.json"
    config.write_text(json.dumps({"mcpServers": {NAME: entry}, "roots": [], "tools": {"expose": "meta"}}))
    env = dict(os.environ)
    env.update({
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_RUNTIME_DIR": str(home / ".run"),
        "OFFLOAD_CONFIG": str(config),
        "OFFLOAD_LOG_FILE": str(home / "offload.log"),
        "OFFLOAD_LOG": "debug",
        "OFFLOAD_BROWSER": BROWSER,
        "CONFORMANCE_CLIENT_SECRET": CONTEXT.get("client_secret", ""),
    })
    return env


def sign_in(env) -> bool:
    done = subprocess.run([OFFLOAD, "auth", "login", NAME], env=env, capture_output=True, text=True, timeout=60)
    print(f"sign-in: exit {done.returncode}: {done.stdout.strip()} {done.stderr.strip()[-400:]}", flush=True)
    return done.returncode == 0


async def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        env = configure(home)
        params = StdioServerParameters(command=OFFLOAD, args=["mcp", "--mode", "embedded"], env=env)
        async with Client(params, mode="legacy") as offload:
            for attempt in range(4):
                r = await offload.call_tool("call_tool", {"server": NAME, "tool_name": "test-tool"})
                text = " ".join(getattr(c, "text", "") for c in r.content)
                print(f"call {attempt + 1}: {'error' if r.is_error else 'ok'}: {text[:300]}", flush=True)
                if not r.is_error:
                    return 0
                if "auth_required" not in text or attempt == 3 or not sign_in(env):
                    break
        print((home / "offload.log").read_text()[-3000:], file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
