"""End-to-end test of the real desktop app, driven through WebDriver (tauri-driver +
WebKitWebDriver) under Xvfb and a private D-Bus session, with a real MCP client (the official
Python SDK) launching `offload mcp`.

Run by scripts/e2e.sh, which builds everything and wraps this in `xvfb-run -a dbus-run-session`.
Usage: app_e2e.py APP_BINARY OFFLOAD_BINARY FIXTURE_BINARY TAURI_DRIVER SCREENSHOT_DIR
"""

import asyncio
import base64
import http.client
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

APP, OFFLOAD, FIXTURE, DRIVER, SHOTS = sys.argv[1:6]
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


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
        self.s("POST", f"/element/{self.find(css)}/click", {})

    def type(self, css: str, text: str):
        self.s("POST", f"/element/{self.find(css)}/value", {"text": text})

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
        png = base64.b64decode(self.s("GET", "/screenshot"))
        Path(SHOTS, name).write_bytes(png)
        print(f"  screenshot {name} ({len(png)} bytes)")


async def mcp_call(env: dict, text: str) -> str:
    params = StdioServerParameters(command=OFFLOAD, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("call_tool", {
                "server": "fixture", "tool_name": "echo", "tool_args": {"text": text}})
            assert not result.is_error, result
            return result.content[0].text


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


def main():
    Path(SHOTS).mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="offload-e2e-"))
    home, run, data = tmp / "home", tmp / "run", tmp / "data"
    for d in (home, run, data):
        d.mkdir(mode=0o700)
    config = tmp / "config.json"
    config.write_text(json.dumps({"mcpServers": {}}, indent=2))
    log = tmp / "offload.log"
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local/share"), XDG_RUNTIME_DIR=str(run),
               OFFLOAD_CONFIG=str(config), OFFLOAD_LOG_FILE=str(log), OFFLOAD_LOG="debug")
    env.pop("OFFLOAD_SOCKET", None)

    port = free_port()
    driver_log = open(tmp / "driver.log", "wb")
    driver = subprocess.Popen([DRIVER, "--port", str(port), "--native-port", str(free_port())],
                              env=env, stdout=driver_log, stderr=subprocess.STDOUT)
    wd = WebDriver(port)
    try:
        for _ in range(100):
            try:
                wd.call("GET", "/status")
                break
            except Exception:
                time.sleep(0.1)
        wd.start(APP)
        print("app started")
        wd.wait_text("[data-testid=status-line]", "Running")
        wd.find("[data-testid=no-clients]")
        wd.screenshot("overview.png")

        # Single instance: a second launch hands over to the first and leaves.
        t = time.time()
        second = subprocess.run([APP], env=env, timeout=60, capture_output=True)
        assert second.returncode == 0, second
        wd.wait_text("[data-testid=status-line]", "Running")
        assert log.read_text().count("ready: offload mcp connects") == 1, "one host only"
        print(f"second launch handed over and left after {time.time() - t:.1f}s")

        # Start at login: the toggle writes and removes the login item.
        autostart = home / ".config" / "autostart"
        wd.click("[data-testid=autostart]")
        deadline = time.time() + 10
        while not list(autostart.glob("*.desktop")) and time.time() < deadline:
            time.sleep(0.1)
        entries = list(autostart.glob("*.desktop"))
        assert entries and APP in entries[0].read_text(), entries
        wd.click("[data-testid=autostart]")
        deadline = time.time() + 10
        while list(autostart.glob("*.desktop")) and time.time() < deadline:
            time.sleep(0.1)
        assert not list(autostart.glob("*.desktop")), "login item removed"
        print("start at login turned on and off")

        # Directories: the folder the picker would answer, given to the command it calls.
        wd.click("[data-testid=nav-directories]")
        wd.find("[data-testid=root-row]")
        wd.invoke("add_root", {"path": str(data), "writable": True})
        wd.wait_text("[data-testid=roots]", str(data))
        on_disk = json.loads(config.read_text())
        assert any(str(data) in json.dumps(r) for r in on_disk["roots"]), on_disk
        print("directory added")
        wd.screenshot("directories.png")

        # Servers: add the fixture server through the editor, see its tools, toggle it.
        wd.click("[data-testid=nav-servers]")
        wd.find("[data-testid=no-servers]")
        wd.click("[data-testid=add-server]")
        wd.type("[data-testid=server-name]", "fixture")
        wd.type("[data-testid=server-command]", FIXTURE)
        wd.click("[data-testid=server-save]")
        wd.wait_text("[data-testid=server-tools]", "echo")
        assert json.loads(config.read_text())["mcpServers"]["fixture"]["command"] == FIXTURE
        print("server added; tools listed")
        wd.screenshot("servers.png")
        wd.click("[data-testid=server-enabled]")
        wd.wait_text("[data-testid=server-status]", "disabled")
        assert json.loads(config.read_text())["mcpServers"]["fixture"]["disabled"] is True
        wd.click("[data-testid=server-enabled]")
        wd.wait_text("[data-testid=server-tools]", "echo")
        assert "disabled" not in json.loads(config.read_text())["mcpServers"]["fixture"]
        print("server toggled off and on")

        # config.json edited on disk: the window follows.
        doc = json.loads(config.read_text())
        doc["mcpServers"]["edited-on-disk"] = {"command": FIXTURE}
        config.write_text(json.dumps(doc, indent=2))
        wd.find("[data-testid=server-edited-on-disk]", timeout=20)
        print("hand edit of config.json picked up")

        # A real MCP client through `offload mcp`, connected to the app: one client shown.
        def shows_one_client():
            wd.click("[data-testid=nav-overview]")
            wd.wait_text("[data-testid=status-line]", "1 client connected")
            wd.wait_text("[data-testid=clients]", "mcp")
            wd.screenshot("overview-client.png")
        asyncio.run(mcp_connected_while(env, shows_one_client))
        assert "connected to the Offload app" in log.read_text(), "the shim used the app"
        wd.wait_text("[data-testid=status-line]", "0 clients connected")
        print("MCP client through the app seen and gone")
    except BaseException:
        print("--- tauri-driver, WebKitWebDriver and the app said:")
        print((tmp / "driver.log").read_text(errors="replace")[-4000:])
        subprocess.run(["pgrep", "-a", "-f", "offload-app|WebKitWebDriver|WebKitWebProcess"])
        raise
    finally:
        wd.quit()
        driver.terminate()
        driver.wait(timeout=10)

    # With the app stopped, `offload mcp` answers on its own.
    time.sleep(0.5)
    answer = asyncio.run(mcp_call(env, "embedded"))
    assert "embedded" in answer, answer
    assert "serving in embedded mode" in log.read_text()
    print("app stopped: offload mcp answered in embedded mode")
    print("e2e: all passed")


if __name__ == "__main__":
    main()
