"""A scripted stand-in for the Anthropic Messages API, for running a real agent client (Claude
Code) against Offload with no model: an HTTP server on 127.0.0.1 that answers POST /v1/messages
(streamed as server-sent events, or as one JSON message) and POST /v1/messages/count_tokens.

The main conversation (the requests that carry tools: the user's prompt and every turn after a
tool result) is driven by `steps`, one per request: each is called with a `Turn` and returns
`ToolUse(name, input)` or `Text(text)`. Side requests the client makes on its own (a title, a
topic check, a quota probe: small-model requests without tools) get a short plain text and use
no step. A step that names a tool the request did not list, raises, or is missing (the client
asked for more turns than the script has) ends the conversation with a `STAND-IN: ...` text and
is recorded in `failures`.

Every request is recorded in order (`requests`; also appended to `record` as JSONL when given).
Standard library only.
"""

import gzip
import json
import secrets
import threading
import traceback
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Union
from urllib.parse import parse_qs, urlsplit

MCP_PREFIX = "mcp__"
SIDE_REPLY = "Stand-in reply."


@dataclass
class ToolUse:
    """The model calls `name` with `input`. `name` is the tool's name as the request lists it
    (`mcp__<server>__<tool>` for Claude Code's MCP tools) or, when exactly one listed MCP tool
    ends in `__<name>` (of `server`, when given), the tool's own name."""

    name: str
    input: dict = field(default_factory=dict)
    server: str | None = None
    text: str | None = None  # an optional text block before the call, as models often write


@dataclass
class Text:
    """The model answers `text` and ends its turn."""

    text: str


Step = Union[Callable[["Turn"], Union[ToolUse, Text]], ToolUse, Text]


def split_mcp_name(name: str) -> tuple[str | None, str]:
    """(`server`, `tool`) for Claude Code's `mcp__<server>__<tool>`; (None, name) otherwise. The
    server part never holds `__` (Claude Code replaces characters outside [A-Za-z0-9_-] but not
    `_`, so a server named `a__b` would be ambiguous; the tests name servers plainly)."""
    if name.startswith(MCP_PREFIX):
        rest = name[len(MCP_PREFIX):]
        server, sep, tool = rest.partition("__")
        if sep:
            return server, tool
    return None, name


def block_text(content) -> str:
    """The text a tool_result's content carries: the string itself, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def content_blocks(content) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def tool_results(messages: list[dict]) -> list[dict]:
    """Every tool_result block of the user messages, in order."""
    out = []
    for m in messages:
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            out += [b for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    return out


class Turn:
    """One request of the main conversation, as a step sees it."""

    def __init__(self, body: dict, index: int):
        self.body = body
        self.index = index  # 0 for the first main request
        self.messages: list[dict] = body.get("messages", [])
        self.tools: dict[str, dict] = {t["name"]: t for t in body.get("tools", []) if "name" in t}

    @property
    def tool_names(self) -> list[str]:
        """The names as the model sees them (Claude Code's `mcp__<server>__` prefix kept)."""
        return list(self.tools)

    def mcp_tools(self, server: str | None = None) -> list[str]:
        """The MCP tools' own names (prefix stripped), of `server` or of every server."""
        out = []
        for name in self.tools:
            s, tool = split_mcp_name(name)
            if s is not None and (server is None or s == server):
                out.append(tool)
        return out

    def resolve(self, name: str, server: str | None = None) -> str | None:
        if server is None and name in self.tools:
            return name
        if server is not None:
            full = f"{MCP_PREFIX}{server}__{name}"
            return full if full in self.tools else None
        matches = [n for n in self.tools if n.startswith(MCP_PREFIX) and split_mcp_name(n)[1] == name]
        return matches[0] if len(matches) == 1 else None

    @property
    def prompt(self) -> str:
        """The text of the first user message (Claude Code puts reminders before the prompt in
        the same message; the prompt is its last text block)."""
        for m in self.messages:
            if m.get("role") == "user":
                texts = [b for b in content_blocks(m.get("content")) if b.get("type") == "text"]
                return texts[-1]["text"] if texts else ""
        return ""

    @property
    def system_text(self) -> str:
        """Everything the model reads as system context: the system prompt and the system-role
        messages (where Claude Code puts its MCP servers' instructions)."""
        parts = []
        system = self.body.get("system")
        parts += [system] if isinstance(system, str) else [b.get("text", "") for b in system or [] if isinstance(b, dict)]
        for m in self.messages:
            if m.get("role") == "system":
                parts.append(block_text(m.get("content")))
        return "\n".join(parts)

    @property
    def last_tool_result(self) -> dict | None:
        """The last tool_result block of the last user message (what the previous step's call
        returned), or None. Claude Code may append a reminder of its own after it (a message
        with the role "system", e.g. about its task tools after several turns): skipped."""
        said = [m for m in self.messages if m.get("role") != "system"]
        if not said or said[-1].get("role") != "user":
            return None
        found = tool_results([said[-1]])
        return found[-1] if found else None

    @property
    def result_text(self) -> str:
        """The text of the last tool_result, as the model reads it ('' when there is none)."""
        r = self.last_tool_result
        return block_text(r.get("content")) if r else ""

    @property
    def result_blocks(self) -> list[dict]:
        """The raw content blocks of the last tool_result ([] when there is none)."""
        r = self.last_tool_result
        return content_blocks(r.get("content")) if r else []

    @property
    def result_is_error(self) -> bool:
        r = self.last_tool_result
        return bool(r and r.get("is_error"))


def default_is_main(body: dict) -> bool:
    """The main conversation carries the tools; the client's side requests (titles, topic
    detection, quota probes) carry none."""
    return bool(body.get("tools"))


def schema_example(schema: dict, text: str):
    """A small value that satisfies a simple JSON schema (objects, arrays, scalars, enums)."""
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0]
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {k: schema_example(v, text) for k, v in props.items() if k in schema.get("required", props)}
    if kind == "array":
        return []
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "null":
        return None
    return text


def estimate_tokens(obj) -> int:
    return max(1, len(json.dumps(obj)) // 4)


class ModelStandIn:
    """The stand-in server. Use as a context manager, or start()/stop(); `base_url` is what the
    client's ANTHROPIC_BASE_URL should be."""

    def __init__(self, steps: list[Step], record: str | Path | None = None, is_main=default_is_main,
                 side_reply: str = SIDE_REPLY):
        self.steps = list(steps)
        self.record = Path(record) if record else None
        self.is_main = is_main
        self.side_reply = side_reply
        self.requests: list[dict] = []  # every request: {seq, method, path, query, headers, body, kind, ...}
        self.failures: list[str] = []
        self.main_turns = 0  # main requests answered
        self.finished = False  # a step answered Text (or the conversation was ended)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle

    def start(self) -> "ModelStandIn":
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                stand_in._handle(self, "POST")

            def do_GET(self):
                stand_in._handle(self, "GET")

            def do_HEAD(self):
                stand_in._handle(self, "HEAD")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        if self.record:
            self.record.write_text("")
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def main_requests(self) -> list[dict]:
        return [r["body"] for r in self.requests if r["kind"] == "main"]

    # ---- requests

    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        url = urlsplit(h.path)
        raw = h.rfile.read(int(h.headers.get("Content-Length") or 0)) if method == "POST" else b""
        if h.headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        with self._lock:
            entry = {
                "seq": len(self.requests),
                "method": method,
                "path": url.path,
                "query": {k: v[0] for k, v in parse_qs(url.query).items()},
                "headers": {k.lower(): v for k, v in h.headers.items() if k.lower() not in ("x-api-key", "authorization")},
                "body": body,
            }
            self.requests.append(entry)
            if method == "POST" and url.path == "/v1/messages" and isinstance(body, dict):
                status, payload, sse = self._messages(entry, body)
            elif method == "POST" and url.path == "/v1/messages/count_tokens" and isinstance(body, dict):
                entry["kind"] = "count_tokens"
                status, payload, sse = 200, {"input_tokens": estimate_tokens(body)}, False
            else:
                entry["kind"] = "other"
                status, sse = 404, False
                payload = {"type": "error", "error": {"type": "not_found_error", "message": f"stand-in: no {method} {url.path}"}}
            entry["status"] = status
            if self.record:
                with self.record.open("a") as f:
                    f.write(json.dumps(entry) + "\n")
        if sse:
            data = "".join(f"event: {e['type']}\ndata: {json.dumps(e, separators=(',', ':'))}\n\n" for e in payload).encode()
            ctype = "text/event-stream; charset=utf-8"
        else:
            data = json.dumps(payload).encode()
            ctype = "application/json"
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(data)))
        h.send_header("request-id", "req_standin_" + secrets.token_hex(8))
        if sse:
            h.send_header("Cache-Control", "no-cache")
        h.end_headers()
        if method != "HEAD":
            h.wfile.write(data)
            h.wfile.flush()

    def _messages(self, entry: dict, body: dict):
        main = self.is_main(body)
        entry["kind"] = "main" if main else "side"
        if not main:
            fmt = (body.get("output_config") or {}).get("format") or {}
            text = self.side_reply
            if fmt.get("type") == "json_schema":  # e.g. Claude Code's session title: {"title": ...}
                text = json.dumps(schema_example(fmt.get("schema") or {}, self.side_reply))
            blocks, stop = [{"type": "text", "text": text}], "end_turn"
        else:
            turn = Turn(body, self.main_turns)
            entry["turn"] = self.main_turns
            self.main_turns += 1
            blocks, stop = self._step(turn)
            entry["answer"] = blocks
        message = {
            "id": "msg_standin_" + secrets.token_hex(12),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-stand-in"),
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": estimate_tokens(body.get("messages", [])),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": estimate_tokens(blocks),
                "service_tier": "standard",
            },
        }
        if body.get("stream"):
            return 200, sse_events(message), True
        return 200, message, False

    def _fail(self, why: str):
        self.failures.append(why)
        self.finished = True
        return [{"type": "text", "text": f"STAND-IN: {why}"}], "end_turn"

    def _step(self, turn: Turn):
        if self.finished:
            return self._fail(f"main request {turn.index} after the conversation ended")
        if turn.index >= len(self.steps):
            return self._fail(f"no step for main request {turn.index} (the script has {len(self.steps)})")
        step = self.steps[turn.index]
        try:
            action = step(turn) if callable(step) else step
        except Exception as e:  # a step's own check failed: the failure is the test's answer
            return self._fail(f"step {turn.index} raised {type(e).__name__}: {e}\n{traceback.format_exc()}")
        if isinstance(action, Text):
            self.finished = True
            return [{"type": "text", "text": action.text}], "end_turn"
        if isinstance(action, ToolUse):
            name = turn.resolve(action.name, action.server)
            if name is None:
                wanted = action.name if action.server is None else f"{action.server}/{action.name}"
                return self._fail(f"tool {wanted} not listed; listed: {turn.tool_names}")
            blocks = [{"type": "text", "text": action.text}] if action.text else []
            blocks.append({"type": "tool_use", "id": "toolu_" + secrets.token_hex(12), "name": name, "input": action.input})
            return blocks, "tool_use"
        return self._fail(f"step {turn.index} returned {action!r}, not ToolUse or Text")


def sse_events(message: dict) -> list[dict]:
    """The events the Messages API streams for `message`: message_start (content empty, the
    input usage), per block content_block_start / _delta / _stop (a tool_use starts with an empty
    input and its JSON arrives as input_json_delta pieces; text as text_delta), a ping after the
    first block starts, then message_delta (stop_reason, output usage) and message_stop."""
    usage = message["usage"]
    start = dict(message, content=[], stop_reason=None, stop_sequence=None, usage=dict(usage, output_tokens=1))
    events: list[dict] = [{"type": "message_start", "message": start}]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
            if i == 0:
                events.append({"type": "ping"})
            for piece in chunks(block["text"]):
                events.append({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": piece}})
        elif block["type"] == "tool_use":
            events.append({"type": "content_block_start", "index": i,
                           "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})
            if i == 0:
                events.append({"type": "ping"})
            events.append({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": ""}})
            for piece in chunks(json.dumps(block["input"])):
                events.append({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": piece}})
        else:
            raise ValueError(f"stand-in cannot stream a {block['type']} block")
        events.append({"type": "content_block_stop", "index": i})
    events.append({
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": usage["output_tokens"]},
    })
    events.append({"type": "message_stop"})
    return events


def chunks(s: str, n: int = 64) -> list[str]:
    """`s` in pieces of at most `n` characters (at least one piece, as the API sends)."""
    return [s[i:i + n] for i in range(0, len(s), n)] or [""]
