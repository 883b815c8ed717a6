"""The harness against a published server, no Offload: Claude Code (the real CLI) with
@modelcontextprotocol/server-everything over stdio, the model played by a two-step script:

  1. call `echo` with a message (checking first that the client listed it);
  2. answer a final text that quotes the echo, read from the tool_result the client sent.

Checks that the echo reached the model and came back as the CLI's result; the last line is
`figures {...}` (JSON): tools listed, tool_result bytes, requests, seconds.

Usage: python3 agent/selftest.py [WORK_DIR]   (from tests/interop; a temporary directory when
WORK_DIR is not given)
"""

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.claude import run_claude  # noqa: E402
from agent.model import Text, ToolUse, Turn  # noqa: E402

HERE = Path(__file__).resolve().parent.parent
EVERYTHING = str(HERE / "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
MESSAGE = "stand-in says hello, \u00e9t\u00e9 \u2603"


def check(cond, what):
    if not cond:
        print(f"FAIL {what}", flush=True)
        sys.exit(1)
    print(f"ok {what}", flush=True)


def call_echo(turn: Turn):
    if "echo" not in turn.mcp_tools("everything"):
        raise AssertionError(f"echo not listed: {turn.tool_names}")
    return ToolUse("echo", {"message": MESSAGE}, server="everything")


def quote_echo(turn: Turn):
    if MESSAGE not in turn.result_text:
        raise AssertionError(f"the tool_result does not hold the message: {turn.result_blocks}")
    return Text(f"The server said: {turn.result_text}")


def main() -> None:
    work = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="agent-selftest-"))
    t = run_claude("Use the everything server's echo tool to echo a message back.",
                   {"everything": {"command": "node", "args": [EVERYTHING, "stdio"]}},
                   [call_echo, quote_echo], work, timeout=180)

    check(not t.failures, f"the stand-in recorded no failure {t.failures}")
    check(t.init.get("mcp_servers") == [{"name": "everything", "status": "connected"}],
          f"the CLI reports the server connected ({t.init.get('mcp_servers')})")
    check(len(t.main) == 2, f"two main requests ({len(t.main)})")
    listed = t.listed_of("everything")
    check(all("echo" in names for names in listed), f"echo listed on every main request ({len(listed[0])} tools)")
    results = t.tool_results
    check(len(results) == 1 and results[0].tool == "echo" and results[0].server == "everything",
          "one tool_result, for everything's echo")
    check(results[0].text == f"Echo: {MESSAGE}" and not results[0].is_error,
          f"the model read the echo ({results[0].text!r})")
    check(t.result.get("subtype") == "success" and t.result.get("result") == f"The server said: Echo: {MESSAGE}",
          f"the CLI's result quotes it ({t.result.get('result')!r})")

    definitions = [d for d in t.tool_definitions(0) if d["name"].startswith("mcp__everything__")]
    figures = {
        "seconds": round(t.seconds, 2),
        "tools_listed": len(listed[0]),
        "tools_listed_with_builtins": len(t.listed[0]),
        "listing_bytes": len(json.dumps(definitions, ensure_ascii=False).encode()),
        "tool_result_bytes": results[0].bytes,
        "main_requests": len(t.main),
        "side_requests": [f"{s['path']} {s['model']}" for s in t.side if s["kind"] == "side"],
        "other_requests": [s["path"] for s in t.side if s["kind"] == "other"],
    }
    print("figures " + json.dumps(figures, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
