"""The Overview screen and the tray: the app starts, runs once, starts at login, counts what it kept out of context, charts it, notifies, and shows a connected client."""

import asyncio
import json
import subprocess
import time
from pathlib import Path

from harness import APP, assert_inside, assert_reachable, bar_pixels, human_bytes, mcp_connected_while, mcp_store_large, notifications_shown, wait_notification


def app_starts(run):
    """The app starts and shows that it runs."""
    wd = run.wd
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


def single_instance(run):
    """Single instance: a second launch hands over to the first and leaves."""
    env, log, wd = run.env, run.log, run.wd
    t = time.time()
    second = subprocess.run([APP], env=env, timeout=60, capture_output=True)
    assert second.returncode == 0, second
    wd.wait_text("[data-testid=status-line]", "Running")
    assert log.read_text().count("ready: offload mcp connects") == 1, "one host only"
    print(f"second launch handed over and left after {time.time() - t:.1f}s")


def start_at_login(run):
    """Start at login: the toggle writes and removes the login item."""
    home, wd = run.home, run.wd
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


def bytes_kept(run):
    """The headline figure against a known payload: bytes kept out of context are the files stored
    answers and scripts went to and the file a tool received, exactly."""
    data, env, wd, work = run.data, run.env, run.wd, run.work
    large = asyncio.run(mcp_store_large(env, 1_000_000))
    # The script's stored file (live_log.a_script) is kept out of context too.
    kept = (work["stored"], large, data / "users.csv", run.script_stored)
    expected = sum(Path(p).stat().st_size for p in kept)
    overview = wd.invoke("overview", {})
    assert overview["today"]["bytesKept"] == expected, (overview["today"], expected)
    wd.click("[data-testid=nav-overview]")
    wd.wait_text("[data-testid=card-kept]", human_bytes(expected))
    print(f"kept out of context: {overview['today']['bytesKept']:,} bytes = the stored and sent files")
    run.expected = expected


def activity_chart(run):
    """The same figure on the activity chart (Chart.js on a canvas): drawn inside the window, with
    bars painted, and its total the known payload's."""
    expected, wd = run.expected, run.wd
    choose = ("const s = document.querySelector('[data-testid=activity-metric]');"
              "s.value = arguments[0]; s.dispatchEvent(new Event('change', {bubbles: true}));")
    wd.s("POST", "/execute/sync", {"script": choose, "args": ["bytesKept"]})
    wd.wait_text("[data-testid=activity-total]", f"Kept out of context: {human_bytes(expected)} in the last day")
    series = wd.invoke("overview", {"span": "day"})["activity"]
    assert sum(series["total"]["bytesKept"]) == expected, (series["total"], expected)
    wd.s("POST", "/execute/sync", {"script": "document.querySelector('[data-testid=activity-chart]')"
                                    ".scrollIntoView({block: 'center'})", "args": []})
    chart = assert_inside(wd, "[data-testid=activity-chart] canvas", "the activity chart")
    assert chart["height"] >= 150, f"the chart is {chart['height']} px high"
    painted = bar_pixels(wd, "[data-testid=activity-chart]")
    assert painted > 200, f"the chart's bars are not on screen: {painted} pixels in bar colours"
    wd.click_with("[data-testid=activity-controls] button", "By server")
    wd.screenshot("overview-activity.png")
    wd.s("POST", "/execute/sync", {"script": choose, "args": ["calls"]})
    slowest = wd.content("[data-testid=slowest] tbody tr")
    assert "fixture/" in slowest and " s" in slowest, slowest
    print(f"activity chart: {chart['width']:.0f}x{chart['height']:.0f} px, "
          f"{painted} pixels of bars on screen, total = the known payload")


def notifications(run):
    """Desktop notifications: off by default, turned on in the Overview (one says so at once), then
    a server that stops working is said once however often it is retried."""
    config, wd = run.config, run.wd
    assert "notifications" not in json.loads(config.read_text())
    assert notifications_shown() == [], notifications_shown()
    wd.click("[data-testid=nav-overview]")
    assert_reachable(wd, "[data-testid=notifications]", "the notifications switch")
    wd.click("[data-testid=notifications]")
    wait_notification("Offload notifications are on")
    assert json.loads(config.read_text())["notifications"] is True
    print("notifications turned on in the window; the daemon showed the first")


def client_through_app(run):
    """A real MCP client through `offload mcp`, connected to the app: one client shown."""
    env, log, wd = run.env, run.log, run.wd
    def shows_one_client():
        wd.click("[data-testid=nav-overview]")
        wd.wait_text("[data-testid=status-line]", "1 client connected")
        wd.wait_text("[data-testid=clients]", "mcp")
        wd.screenshot("overview-client.png")
    asyncio.run(mcp_connected_while(env, shows_one_client))
    assert "connected to the Offload app" in log.read_text(), "the shim used the app"
    wd.wait_text("[data-testid=status-line]", "0 clients connected")
    print("MCP client through the app seen and gone")
