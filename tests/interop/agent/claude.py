"""Runs Claude Code (the real CLI, npm `@anthropic-ai/claude-code`, installed in
tests/interop/node_modules) headless against the scripted model stand-in (model.py): one
`claude -p` session, cold (a fresh HOME: no memory, settings, or credentials), with the given MCP
servers, and a `Transcript` of what the client listed and what bytes reached the model.

    from agent.claude import run_claude
    from agent.model import ToolUse, Text

    t = run_claude("say hi", {"everything": {"command": "node", "args": [...]}},
                   [lambda turn: ToolUse("echo", {"message": "hi"}),
                    lambda turn: Text(turn.result_text)], workdir)

Standard library only.
"""

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .model import MCP_PREFIX, ModelStandIn, Step, block_text, content_blocks, split_mcp_name, tool_results

HERE = Path(__file__).resolve().parent.parent  # tests/interop
CLAUDE = HERE / "node_modules/.bin/claude"

# Inherited variables that would change what the CLI does (a real key, another endpoint, a
# config directory, a sandbox flag) are dropped; the session gets only what is set below.
DROP_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "CLAUDECODE", "MCP_", "OTEL_", "IS_SANDBOX")


@dataclass
class ToolResult:
    tool_use_id: str
    name: str | None  # the tool as the model called it (`mcp__<server>__<tool>`)
    server: str | None
    tool: str | None  # its own name
    text: str  # the text the model reads
    blocks: list[dict]  # the content blocks as sent
    is_error: bool

    @property
    def bytes(self) -> int:
        """UTF-8 length of the text the model reads."""
        return len(self.text.encode())

    @property
    def block_bytes(self) -> int:
        """Length of the content blocks' JSON as the client sent them (images and all)."""
        return len(json.dumps(self.blocks, ensure_ascii=False, separators=(",", ":")).encode())


@dataclass
class Transcript:
    result: dict  # the CLI's result (what `--output-format json` prints)
    events: list[dict]  # every stream-json event the CLI printed (the first is system/init)
    requests: list[dict]  # every request the stand-in received, in order
    failures: list[str]  # failures the stand-in recorded (unlisted tools, step errors, ...)
    seconds: float
    stderr: str = ""
    main: list[dict] = field(default_factory=list)  # bodies of the main conversation's requests

    @property
    def init(self) -> dict:
        """The CLI's system/init event: its tools and its MCP servers' status."""
        return next((e for e in self.events if e.get("type") == "system" and e.get("subtype") == "init"), {})

    @property
    def listed(self) -> list[list[str]]:
        """Per main request, the tool names the model was shown (Claude Code's prefix kept)."""
        return [[t["name"] for t in b.get("tools", [])] for b in self.main]

    @property
    def listed_mcp(self) -> list[list[str]]:
        """Per main request, the MCP tools the model was shown, by their own names."""
        return [[split_mcp_name(n)[1] for n in names if n.startswith(MCP_PREFIX)] for names in self.listed]

    def listed_of(self, server: str) -> list[list[str]]:
        """Per main request, the tools of one MCP server the model was shown, by their own names."""
        return [[split_mcp_name(n)[1] for n in names if split_mcp_name(n)[0] == server] for names in self.listed]

    def tool_definitions(self, turn: int = 0) -> list[dict]:
        """The tool definitions (name, description, input_schema) of one main request."""
        return self.main[turn].get("tools", []) if self.main else []

    @property
    def tool_results(self) -> list[ToolResult]:
        """Every tool_result the client sent the model, in order (the last main request holds
        the whole conversation)."""
        if not self.main:
            return []
        messages = self.main[-1].get("messages", [])
        names = {}
        for m in messages:
            if m.get("role") == "assistant" and isinstance(m.get("content"), list):
                for b in m["content"]:
                    if isinstance(b, dict) and b.get("type") == "tool_use":
                        names[b["id"]] = b["name"]
        out = []
        for b in tool_results(messages):
            name = names.get(b.get("tool_use_id"))
            server, tool = split_mcp_name(name) if name else (None, None)
            out.append(ToolResult(b.get("tool_use_id"), name, server, tool, block_text(b.get("content")),
                                  content_blocks(b.get("content")), bool(b.get("is_error"))))
        return out

    @property
    def side(self) -> list[dict]:
        """The client's side requests: path, model, and the first words of their system prompt."""
        out = []
        for r in self.requests:
            if r.get("kind") == "main":
                continue
            body = r.get("body") or {}
            system = body.get("system")
            if isinstance(system, list):
                system = " ".join(b.get("text", "") for b in system if isinstance(b, dict))
            out.append({"path": r["path"], "kind": r.get("kind"), "model": body.get("model"),
                        "max_tokens": body.get("max_tokens"), "system": (system or "")[:120]})
        return out


class ClaudeFailed(RuntimeError):
    pass


def run_claude(prompt: str, mcp_servers: dict, steps: list[Step], workdir, env_extra: dict | None = None,
               timeout: float = 300, extra_args: list[str] | None = None, model: str | None = None) -> Transcript:
    """One headless Claude Code session: `prompt` with `mcp_servers` (Claude Code's `mcpServers`
    map: {name: {"command", "args", "env"} or {"type": "http", "url", "headers"}}), the model
    played by `steps`. Everything lands under `workdir`: home/ (the fresh HOME), project/ (the
    session's working directory), mcp.json, requests.jsonl, stdout.jsonl, stderr.txt."""
    work = Path(workdir).resolve()
    home, project = work / "home", work / "project"
    home.mkdir(parents=True, exist_ok=True)
    project.mkdir(parents=True, exist_ok=True)
    config = work / "mcp.json"
    config.write_text(json.dumps({"mcpServers": mcp_servers}, indent=2))

    stand_in = ModelStandIn(steps, record=work / "requests.jsonl")
    with stand_in:
        env = {k: v for k, v in os.environ.items() if not k.startswith(DROP_PREFIXES)}
        env.update({
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_STATE_HOME": str(home / ".local/state"),
            "ANTHROPIC_BASE_URL": stand_in.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-stand-in",
            # Wait for every MCP server before the first request, as a user's first turn does.
            "MCP_CONNECTION_NONBLOCKING": "false",
            "MCP_TIMEOUT": "120000",
            "MCP_TOOL_TIMEOUT": "300000",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        })
        for k, v in (env_extra or {}).items():  # None removes a variable
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        # MCP tools ask for permission by default; `--allowedTools mcp__<server>` allows every
        # tool of a server, and works as root (bypassPermissions is refused as root).
        allowed = [f"{MCP_PREFIX}{name}" for name in mcp_servers]
        args = [str(CLAUDE), "-p", prompt,
                "--mcp-config", str(config), "--strict-mcp-config",
                "--output-format", "stream-json", "--verbose",
                "--no-session-persistence"]
        if allowed:
            args += ["--allowedTools", ",".join(allowed)]
        if model:
            args += ["--model", model]
        args += extra_args or []
        started = time.monotonic()
        # Its own process group, so a timeout ends the CLI and the MCP servers it started.
        p = subprocess.Popen(args, cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            (work / "stdout.jsonl").write_text(out)
            (work / "stderr.txt").write_text(err)
            raise ClaudeFailed(f"claude timed out after {timeout} s\n--- stdout\n{out[-8000:]}\n--- stderr\n{err[-8000:]}"
                               f"\n--- stand-in failures\n{stand_in.failures}") from None
        seconds = time.monotonic() - started
    (work / "stdout.jsonl").write_text(out)
    (work / "stderr.txt").write_text(err)
    events = []
    for line in out.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            pass
    result = next((e for e in reversed(events) if e.get("type") == "result"), None)
    if p.returncode != 0 or result is None:
        raise ClaudeFailed(f"claude exited {p.returncode}\n--- stdout\n{out[-8000:]}\n--- stderr\n{err[-8000:]}"
                           f"\n--- stand-in failures\n{stand_in.failures}")
    return Transcript(result=result, events=events, requests=stand_in.requests, failures=stand_in.failures,
                      seconds=seconds, stderr=err, main=stand_in.main_requests)
