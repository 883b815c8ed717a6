"""The Live log screen: search, layout at common window sizes, and 200 calls a second."""

import asyncio
import os
import threading
import time

from harness import (FIGURES, FRAMES_START, FRAMES_STOP, assert_inside, box, contrast, mcp_calls_at, mcp_script,
                     rss_mib, set_window, settled_switch)

SCRIPT = """const a = await tools.fixture.echo({ text: "20" });
let b = "none";
try { await tools.fixture.fail({ message: "on purpose" }); } catch (e) { b = e.message; }
const kept = await offload.store([{ n: Number(a) }, { n: 22 }], { name: "from-a-script.json" });
const [sum] = await offload.query(kept.path, "SELECT SUM(n) AS s FROM data");
return { sum: sum.s, caught: b, path: kept.path };"""


def a_script(run):
    """A model's script through a real client: one row in the Live log with its four calls
    under it (the failed one marked), and the file it stored in Responses."""
    env, wd = run.env, run.wd
    answer = asyncio.run(mcp_script(env, SCRIPT))
    assert answer["result"]["sum"] == 42 and answer["result"]["caught"] == "on purpose", answer
    run.script_stored = answer["result"]["path"]
    wd.click("[data-testid=nav-log]")
    wd.clear("[data-testid=log-search]")
    wd.type("[data-testid=log-search]", "run_script")
    wd.wait_content("[data-testid=log-row]", "run_script · 4 calls")
    wd.click_with("[data-testid=log-row]", "run_script · 4 calls")
    nested = wd.wait_content("[data-testid=log-row-nested]", "offload.query")
    for call in ("fixture · echo", "fixture · fail", "offload.store"):
        assert call in nested, nested
    bad = wd.s("POST", "/execute/sync", {"script": (
        "return [...document.querySelectorAll('[data-testid=log-row-nested].bad')].map(e => e.textContent)"), "args": []})
    assert len(bad) == 1 and "fail" in bad[0], bad
    wd.screenshot("log-script.png")
    wd.click_with("[data-testid=log-row]", "run_script · 4 calls")
    wd.clear("[data-testid=log-search]")
    wd.click("[data-testid=nav-responses]")
    rows = wd.wait_content("[data-testid=response-row]", "from-a-script.json")
    row = next(r for r in rows.split("\n") if "from-a-script.json" in r)
    assert "stored by a script" in row, row
    print("a script: one Live log row with its 4 calls under it; its file in Responses")


def search(run):
    """Search: the real calls filtered by what they name."""
    wd = run.wd
    wd.type("[data-testid=log-search]", "no-call-names-this")
    wd.wait_text("[data-testid=log-count]", "0 shown")
    wd.clear("[data-testid=log-search]")
    wd.type("[data-testid=log-search]", "users.csv")
    searched = wd.text("[data-testid=log-count]")
    assert searched != "0 shown", searched
    wd.clear("[data-testid=log-search]")
    print("calls in the live log, searched")


def nothing_cut(run):
    """Nothing is cut at the sizes people use: the log's details pane inside the window, the
    Connect button visible with readable text, badges one line high."""
    wd = run.wd
    for width, height in ((800, 600), (1040, 700), (1440, 900)):
        set_window(wd, width, height)
        wd.click("[data-testid=nav-log]")
        wd.click("[data-testid=log-row]")
        wd.find("[data-testid=log-detail]")
        assert_inside(wd, "[data-testid=log-detail-pane]", f"the call details at {width}x{height}")
        assert_inside(wd, "[data-testid=log-row]", f"a log row at {width}x{height}")
        page = box(wd, "body")
        assert page["scrollWidth"] <= page["vw"] + 1, f"the page scrolls sideways at {width}x{height}: {page}"
        wd.click("[data-testid=nav-clients]")
        wd.click("[data-testid=clients-all]")
        settled_switch(wd, "[data-testid=clients-all]", True, f"Show all did not take the click at {width}x{height}")
        b = assert_inside(wd, "[data-testid=client-connect]", f"Connect at {width}x{height}")
        assert "0, 0, 0, 0" not in b["background"] and contrast(b["color"], b["background"]) >= 4.5, \
            f"Connect is not readable: {b}"
        wd.click("[data-testid=clients-all]")
        settled_switch(wd, "[data-testid=clients-all]", False, f"Show all did not take the second click at {width}x{height}")
        wd.click("[data-testid=nav-servers]")
        badge = box(wd, "[data-testid=server-fixture] .state")
        assert badge["height"] < 26, f"a server's badge is {badge['height']} px high at {width}x{height}"
        wd.screenshot(f"layout-{width}x{height}.png")
    set_window(wd, 1040, 700)
    print("log details, Connect and badges checked at 800x600, 1040x700 and 1440x900")


def under_load(run):
    """Figures: the live log under 200 calls a second for 10 seconds."""
    env, wd = run.env, run.wd
    wd.click("[data-testid=nav-log]")
    wd.find("[data-testid=log-list]")
    samples = []
    sampling = threading.Event()

    def sample():
        while not sampling.wait(1):
            samples.append((rss_mib("-x", "offload-app"), rss_mib("-f", "WebKitWebProcess")))
    sampler = threading.Thread(target=sample)
    sampler.start()
    wd.s("POST", "/execute/sync", {"script": FRAMES_START, "args": []})
    seconds = float(os.environ.get("OFFLOAD_E2E_LOG_SECONDS", "10"))
    calls = asyncio.run(mcp_calls_at(env, 200, seconds))
    time.sleep(1)
    frames = wd.s("POST", "/execute/sync", {"script": FRAMES_STOP, "args": []})
    sampling.set()
    sampler.join()
    deadline = time.time() + 20
    while int(wd.text("[data-testid=log-count]").split()[0].replace(",", "")) < min(calls, 5000):
        assert time.time() < deadline, wd.text("[data-testid=log-count]")
        time.sleep(0.2)
    FIGURES["log_calls"] = calls
    FIGURES["log_frames"] = frames
    FIGURES["log_rss_mib_each_second"] = {"app": [round(a) for a, _ in samples],
                                           "webview": [round(w) for _, w in samples]}
    print(f"figure: live log under {calls / seconds:.0f} calls/s for {seconds:.0f} s: {frames['frames']} frames, "
          f"longest {frames['max']:.0f} ms, p99 {frames['p99']:.0f} ms, {frames['over200']} over "
          f"200 ms (target: none); RSS each second, app: "
          f"{' '.join(str(round(a)) for a, _ in samples)} MiB; webview: "
          f"{' '.join(str(round(w)) for _, w in samples)} MiB")
