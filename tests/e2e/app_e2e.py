"""End-to-end test of the real desktop app, driven through WebDriver (tauri-driver +
WebKitWebDriver) under Xvfb and a private D-Bus session, with a real MCP client (the official
Python SDK) launching `offload mcp`. The steps, one module per screen in `screens/`, run in
order on one app (a later step builds on what an earlier one set up).

Run by scripts/e2e.sh, which builds everything and wraps this in `xvfb-run -a dbus-run-session`.
Usage: app_e2e.py APP_BINARY OFFLOAD_BINARY FIXTURE_BINARY TAURI_DRIVER SCREENSHOT_DIR FIGURES
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import (DRIVER, FIGURES, FIGURES_FILE, OFFLOAD, SECRET, SHOTS, Run, WebDriver,
                     free_port, mcp_call)
from screens import clients, directories, dropped, live_log, overview, responses, secrets, servers, sharing

STEPS = [
    overview.app_starts,
    overview.single_instance,
    overview.start_at_login,
    directories.add_folder,
    directories.allow_url,
    directories.add_bucket,
    servers.add_server,
    servers.secret_in_keychain,
    responses.stored_response,
    responses.query_tab,
    responses.markdown_preview,
    live_log.search,
    live_log.a_script,
    overview.bytes_kept,
    directories.retention,
    overview.activity_chart,
    live_log.nothing_cut,
    servers.tool_control_and_pinning,
    servers.typescript_server_offers,
    servers.oauth_sign_in,
    sharing.serve_and_tokens,
    secrets.secrets_never_shown,
    dropped.dropped_file,
    dropped.dropped_folder,
    clients.connect_and_import,
    responses.ten_thousand_files,
    live_log.under_load,
    overview.notifications,
    servers.crash_loop_turned_off,
    servers.config_edited_on_disk,
    servers.network_refused_and_allowed,
    overview.client_through_app,
]


def main():
    Path(SHOTS).mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="offload-e2e-"))
    home, runtime, data = tmp / "home", tmp / "run", tmp / "data"
    for d in (home, runtime, data):
        d.mkdir(mode=0o700)
    config = tmp / "config.json"
    config.write_text(json.dumps({"mcpServers": {}}, indent=2))
    log = tmp / "offload.log"
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local/share"), XDG_RUNTIME_DIR=str(runtime),
               OFFLOAD_CONFIG=str(config), OFFLOAD_LOG_FILE=str(log), OFFLOAD_LOG="debug")
    env.pop("OFFLOAD_SOCKET", None)
    # Sign-in pages open in a stand-in browser that submits the provider's forms over HTTP.
    browser = tmp / "browser.sh"
    browser.write_text(f"#!/bin/sh\nexec '{sys.executable}' "
                       f"'{Path(__file__).resolve().parent.parent / 'interop/fake_browser.py'}' \"$@\"\n")
    browser.chmod(0o755)
    env["OFFLOAD_BROWSER"] = str(browser)

    # The real notification daemon the app's notifications go to, on this D-Bus session.
    dunst = subprocess.Popen(["dunst"], stdout=open(tmp / "dunst.log", "wb"), stderr=subprocess.STDOUT)
    deadline = time.time() + 10
    while subprocess.run(["dunstctl", "is-paused"], capture_output=True).returncode != 0:
        assert time.time() < deadline, (tmp / "dunst.log").read_text()
        time.sleep(0.1)

    port = free_port()
    driver_log = open(tmp / "driver.log", "wb")
    driver = subprocess.Popen([DRIVER, "--port", str(port), "--native-port", str(free_port())],
                              env=env, stdout=driver_log, stderr=subprocess.STDOUT)
    wd = WebDriver(port)
    try:
        run = Run(wd=wd, env=env, tmp=tmp, home=home, data=data, config=config, log=log)
        for step in STEPS:
            step(run)
    except BaseException:
        try:
            wd.screenshot("failure.png")
            print("--- the window shows:")
            print(wd.s("POST", "/execute/sync", {"script": "return document.body.innerText", "args": []}))
        except Exception as e:
            print(f"(no window to show: {e})")
        print("--- tauri-driver, WebKitWebDriver and the app said:")
        print((tmp / "driver.log").read_text(errors="replace")[-4000:])
        subprocess.run(["pgrep", "-a", "-f", "offload-app|WebKitWebDriver|WebKitWebProcess"])
        raise
    finally:
        wd.quit()
        driver.terminate()
        driver.wait(timeout=10)
        dunst.terminate()

    # With the app stopped, `offload mcp` answers on its own.
    # WebKitWebDriver ends the app when the session is deleted; on a loaded machine that has
    # once taken longer than 15 s, so after 20 s it is ended here (what is tested next is the
    # shim without a host, not how the driver stops the app).
    deadline = time.time() + 20
    while subprocess.run(["pgrep", "-x", "offload-app"], capture_output=True).returncode == 0:
        if time.time() > deadline:
            print("  (the driver had not ended the app after 20 s: ending it)")
            subprocess.run(["pkill", "-TERM", "-x", "offload-app"])
            deadline = time.time() + 15
            while subprocess.run(["pgrep", "-x", "offload-app"], capture_output=True).returncode == 0:
                assert time.time() < deadline, "the app did not stop"
                time.sleep(0.1)
            break
        time.sleep(0.1)
    # A fresh fixture process has echo's first description again, which the pins (holding the
    # approved, changed one) now see as a change: held, until approved from a terminal.
    out = subprocess.run([OFFLOAD, "tools", "list"], env=env, capture_output=True, text=True, check=True)
    assert "held: fixture/echo (changed: description)" in out.stdout, out.stdout
    subprocess.run([OFFLOAD, "tools", "approve", "fixture", "echo"], env=env, check=True,
                   capture_output=True)
    print("offload tools list showed the held tool; offload tools approve released it")
    answer = asyncio.run(mcp_call(env, "echo", {"text": "embedded"}))
    assert "embedded" in answer, answer
    assert "serving in embedded mode" in log.read_text()
    print("app stopped: offload mcp answered in embedded mode")

    # Embedded, `offload mcp` reads the keychain itself; `offload secret set` changes the value.
    assert asyncio.run(mcp_call(env, "env", {"name": "API_KEY"})) == SECRET
    subprocess.run([OFFLOAD, "secret", "set", "fixture_api_key"], input="rotated\n", text=True,
                   env=env, check=True)
    assert asyncio.run(mcp_call(env, "env", {"name": "API_KEY"})) == "rotated"
    print("embedded offload mcp read the keychain; offload secret set rotated the value")
    Path(FIGURES_FILE).write_text(json.dumps(FIGURES, indent=2) + "\n")
    # A passing run leaves nothing behind (a failing one keeps its logs and data to look at).
    shutil.rmtree(tmp, ignore_errors=True)
    print("e2e: all passed")


if __name__ == "__main__":
    main()
