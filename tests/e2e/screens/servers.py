"""The Servers screen: adding, testing and toggling a server, secrets, per-tool control and pinning, prompts and resources, sign-in, a crash loop, edits on disk."""

import asyncio
import json
import time

from harness import INTEROP, FIXTURE, SECRET, assert_inside, assert_reachable, contrast, mcp_call, notifications_shown, settled_switch, start_oauth, wait_notification


def add_server(run):
    """Servers: add the fixture server through the editor, see its tools, toggle it."""
    config, wd = run.config, run.wd
    wd.click("[data-testid=nav-servers]")
    wd.find("[data-testid=no-servers]")
    wd.click("[data-testid=add-server]")
    wd.type("[data-testid=server-name]", "fixture")
    wd.type("[data-testid=server-command]", FIXTURE)
    # Test connection first: the server starts apart, lists its tools, and nothing is saved.
    assert_reachable(wd, "[data-testid=server-test]", "Test connection")
    wd.click("[data-testid=server-test]")
    trial = wd.wait_text("[data-testid=server-trial]", "Connected")
    assert "echo" in trial, trial
    assert "fixture" not in json.loads(config.read_text()).get("mcpServers", {}), "a test saved the server"
    print(f"test connection: {trial.strip()}")
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


def secret_in_keychain(run):
    """Secrets: a value marked secret in the editor goes to the keychain (a real Secret Service in
    this D-Bus session) and reaches the server's environment, never the file."""
    config, wd = run.config, run.wd
    wd.click("[data-testid=server-edit]")
    wd.click("[data-testid=server-env-add]")
    wd.type("[data-testid=server-env-key]", "API_KEY")
    wd.click("[data-testid=server-env-secret]")
    wd.type("[data-testid=server-env-value]", SECRET)
    wd.click("[data-testid=server-save]")
    wd.wait_text("[data-testid=server-secrets]", "API_KEY")
    entry = json.loads(config.read_text())["mcpServers"]["fixture"]
    assert entry["env"]["API_KEY"] == "${keyring:fixture_api_key}", entry
    assert SECRET not in config.read_text()
    wd.screenshot("server-secret.png")
    print("secret saved to the keychain")


def tool_control_and_pinning(run):
    """Per-tool control and pinning in the window: a switch turns a tool off for every client; a
    definition the server changed is held until it is approved here."""
    config, env, wd = run.config, run.env, run.wd
    wd.click("[data-testid=nav-servers]")
    wd.click("[data-testid=server-fixture]")
    # A switch is disabled while a change is applied (a restart from an earlier step may
    # still be listing the tools): click it once it takes clicks.
    settled_switch(wd, "[data-testid=tool-switch-counter]", True, "the counter switch never took clicks")
    wd.click("[data-testid=tool-switch-counter]")
    deadline = time.time() + 10
    while json.loads(config.read_text())["mcpServers"]["fixture"].get("disabledTools") != ["counter"]:
        assert time.time() < deadline, json.loads(config.read_text())["mcpServers"]["fixture"]
        time.sleep(0.1)
    # The switch is disabled while the change is applied and the tools are listed again.
    settled_switch(wd, "[data-testid=tool-switch-counter]", False, "the switch did not settle as off")
    wd.click("[data-testid=tool-switch-counter]")
    deadline = time.time() + 10
    while "disabledTools" in json.loads(config.read_text())["mcpServers"]["fixture"]:
        assert time.time() < deadline, "counter turned back on"
        time.sleep(0.1)
    assert asyncio.run(mcp_call(env, "change_echo", {})) == "echo changed"
    wd.click("[data-testid=nav-overview]")
    wd.click("[data-testid=nav-servers]")
    wd.click("[data-testid=server-fixture]")
    wd.wait_text("[data-testid=held-tool]", "echo changed since you approved it")
    wd.wait_text("[data-testid=held-now]", "id_rsa")
    wd.screenshot("held-tool.png")
    wd.click("[data-testid=approve-tool]")
    wd.gone("[data-testid=held-tool]")
    assert asyncio.run(mcp_call(env, "echo", {"text": "approved"})) == "approved"
    print("a tool switched off and on; a changed tool held, shown with its change, approved")


def typescript_server_offers(run):
    """A server written with the official TypeScript SDK: its prompts and resources on its page,
    and the log messages it sent while a client's call ran, in its Log tab."""
    config, env, wd = run.config, run.env, run.wd
    doc = json.loads(config.read_text())
    doc["mcpServers"]["conformance"] = {
        "command": "node", "args": [str(INTEROP / "conformance_server.mjs")]}
    config.write_text(json.dumps(doc, indent=2))
    wd.click("[data-testid=nav-overview]")
    wd.click("[data-testid=nav-servers]")
    wd.click("[data-testid=server-conformance]")
    wd.wait_text("[data-testid=server-tools]", "test_tool_with_logging", timeout=30)
    assert asyncio.run(mcp_call(env, "test_tool_with_logging", {}, server="conformance")) == \
        "Tool with logging executed successfully"
    wd.click("[data-testid=server-tab-offers]")
    wd.wait_text("[data-testid=server-prompts]", "test_prompt_with_arguments")
    wd.wait_text("[data-testid=server-prompts]", "as conformance__test_prompt_with_arguments")
    wd.wait_text("[data-testid=server-resources]", "test://template/{id}/data")
    assert_inside(wd, "[data-testid=server-prompts]", "the prompts")
    wd.screenshot("server-prompts-resources.png")
    wd.click("[data-testid=server-tab-log]")
    wd.wait_text("[data-testid=server-log]", "Tool execution completed", timeout=10)
    rows = wd.s("POST", "/execute/sync", {"script":
        "return [...document.querySelectorAll('[data-testid=server-log] tr')].map(r => r.innerText)", "args": []})
    assert len(rows) == 3 and "Tool execution started" in rows[0] and "info" in rows[0], rows
    assert_inside(wd, "[data-testid=server-log] tr:last-child", "the last log line")
    wd.screenshot("server-log.png")
    wd.click("[data-testid=server-tab-tools]")
    print("a server's prompts, resources and log messages shown on its page")


def oauth_sign_in(run):
    """A remote server behind OAuth (node-oidc-provider, a Python-SDK server): it shows "sign in",
    Sign in completes through the (stand-in) browser, and it turns ready."""
    config, env, log, tmp, wd = run.config, run.env, run.log, run.tmp, run.wd
    provider, protected, protected_url = start_oauth(tmp)
    try:
        doc = json.loads(config.read_text())
        doc["mcpServers"]["protected"] = {"type": "http", "url": protected_url}
        config.write_text(json.dumps(doc, indent=2))
        wd.click("[data-testid=nav-overview]")
        wd.click("[data-testid=nav-servers]")
        wd.click("[data-testid=server-protected]")
        wd.wait_text("[data-testid=server-status]", "sign in", timeout=30)
        wd.wait_text("[data-testid=server-sign-in-needed]", "protected needs you to sign in")
        button = assert_inside(wd, "[data-testid=server-sign-in]", "the Sign in button")
        assert "0, 0, 0, 0" not in button["background"] and contrast(button["color"], button["background"]) >= 4.5, button
        wd.screenshot("server-sign-in.png")
        wd.click("[data-testid=server-sign-in]")
        wd.wait_text("[data-testid=server-status]", "ready", timeout=60)
        wd.wait_text("[data-testid=server-tools]", "whoami", timeout=30)
        wd.gone("[data-testid=server-sign-in-needed]")
        assert asyncio.run(mcp_call(env, "whoami", {}, server="protected")) == "signed in"
        assert "eyJ" not in log.read_text() and "eyJ" not in config.read_text(), "a token leaked"
    finally:
        provider.terminate()
        protected.terminate()
        doc = json.loads(config.read_text())
        doc["mcpServers"].pop("protected", None)
        config.write_text(json.dumps(doc, indent=2))
    print("a remote server signed in with Sign in (OAuth, tokens in the keychain) and turned ready")


def crash_loop_turned_off(run):
    """A crash-looping server is turned off at once: its state within a second, and no start after
    it."""
    config, tmp, wd = run.config, run.tmp, run.wd
    # In a folder of its own: tmp holds Offload's configuration and log, and a confined server
    # cannot create files in a folder that holds Offload's.
    (tmp / "looping").mkdir(exist_ok=True)
    starts = tmp / "looping" / "starts.log"
    doc = json.loads(config.read_text())
    doc["mcpServers"]["looping"] = {"command": FIXTURE, "args": ["--starts-log", str(starts), "--fail-start"]}
    config.write_text(json.dumps(doc, indent=2))
    wd.click("[data-testid=nav-servers]")
    wd.click("[data-testid=server-looping]", )
    deadline = time.time() + 20
    while not (starts.exists() and len(starts.read_text().split()) >= 2):
        assert time.time() < deadline, "the looping server was not retried"
        time.sleep(0.1)
    wd.wait_text("[data-testid=server-status]", "error")
    wd.wait_text("[data-testid=server-error]", "refusing to start")
    wd.find("[data-testid=server-retry]")
    wait_notification("looping stopped working")
    t = time.time()
    wd.click("[data-testid=server-enabled]")
    wd.wait_text("[data-testid=server-status]", "disabled", timeout=5)
    took = time.time() - t
    assert took < 1.0, f"turning the looping server off took {took:.2f} s"
    seen = len(starts.read_text().split())
    time.sleep(4)
    assert len(starts.read_text().split()) == seen, "it was started again after it was turned off"
    assert json.loads(config.read_text())["mcpServers"]["looping"]["disabled"] is True
    print(f"crash-looping server turned off in {took * 1000:.0f} ms; no start after")
    shown = notifications_shown()
    assert shown.count("looping stopped working") == 1, (seen, shown)
    print(f"notified once for a server started {seen} times: {shown}")


def config_edited_on_disk(run):
    """config.json edited on disk: the window follows."""
    config, wd = run.config, run.wd
    wd.click("[data-testid=nav-servers]")
    wd.find("[data-testid=server-fixture]")
    doc = json.loads(config.read_text())
    doc["mcpServers"]["edited-on-disk"] = {"command": FIXTURE}
    config.write_text(json.dumps(doc, indent=2))
    wd.find("[data-testid=server-edited-on-disk]", timeout=20)
    print("hand edit of config.json picked up")


def network_refused_and_allowed(run):
    """Confinement in the window: a confined server (the native hostile one) with a network
    allow-list fetches a host its proxy refuses; the refusal shows on its screen with the host
    and port, and Allow writes the host into its entry, after which the same fetch goes through."""
    import http.server
    import threading
    from pathlib import Path

    config, env, wd = run.config, run.env, run.wd

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"hello")

        def log_message(self, *args):
            pass

    web = http.server.HTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    port = web.server_address[1]
    hostile = str(Path(FIXTURE).with_name("offload-hostile"))
    doc = json.loads(config.read_text())
    doc["mcpServers"]["net"] = {"command": hostile, "sandbox": {"network": {"allow": ["localhost:1"]}}}
    config.write_text(json.dumps(doc, indent=2))
    wd.click("[data-testid=nav-servers]")
    wd.find("[data-testid=server-net]", timeout=20)
    wd.click("[data-testid=server-net]")
    line = wd.wait_text("[data-testid=server-confinement]", "network: localhost:1")
    url = f"http://127.0.0.1:{port}/"
    refused = asyncio.run(mcp_call(env, "attempt", {"kind": "fetch", "path": url}, server="net"))
    assert refused.startswith("refused: HTTP/1.1 403"), refused
    shown = wd.wait_text("[data-testid=network-refused]", f"127.0.0.1:{port}")
    assert "once" in shown, shown
    assert_reachable(wd, "[data-testid='allow-host-127.0.0.1']", "Allow")
    wd.screenshot("server-network-refused.png")
    wd.click("[data-testid='allow-host-127.0.0.1']")
    deadline = time.time() + 10
    while f"127.0.0.1:{port}" not in json.dumps(json.loads(config.read_text())["mcpServers"]["net"]):
        assert time.time() < deadline, config.read_text()
        time.sleep(0.1)
    assert json.loads(config.read_text())["mcpServers"]["net"]["sandbox"] == {
        "network": {"allow": ["localhost:1", f"127.0.0.1:{port}"]}}
    wd.wait_text("[data-testid=server-confinement]", f"127.0.0.1:{port}")
    wd.gone("[data-testid=network-refused]")
    fetched = asyncio.run(mcp_call(env, "attempt", {"kind": "fetch", "path": url}, server="net"))
    assert fetched == "ok: hello", fetched
    web.shutdown()
    print(f"confinement: {line.strip()}; a refused host shown, allowed with one click, then reached")

    # A path outside what it may touch: it says so on stderr; the window offers it; allowed.
    outside = run.tmp / "outside-net"
    outside.mkdir(exist_ok=True)
    (outside / "data.csv").write_text("a,b\n")
    wanted = str(outside / "data.csv")
    refused = asyncio.run(mcp_call(env, "attempt", {"kind": "read", "path": wanted}, server="net"))
    assert refused.startswith("refused"), refused
    wd.wait_text("[data-testid=paths-refused]", wanted)
    wd.click("[data-testid=allow-read]")
    deadline = time.time() + 10
    while wanted not in json.dumps(json.loads(config.read_text())["mcpServers"]["net"]):
        assert time.time() < deadline, config.read_text()
        time.sleep(0.1)
    assert json.loads(config.read_text())["mcpServers"]["net"]["sandbox"]["read"] == [wanted]
    wd.gone("[data-testid=paths-refused]")
    read = asyncio.run(mcp_call(env, "attempt", {"kind": "read", "path": wanted}, server="net"))
    assert read == "ok: a,b\n", read
    print("a refused path shown, allowed for reading with one click, then read")
