"""Files and folders dropped on the window."""

import json

from harness import assert_reachable


def dropped_file(run):
    """A dropped file (what the drop handler does, without a real drag): outside the roots,
    previewed, its folder offered."""
    config, tmp, wd = run.config, run.tmp, run.wd
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.md").write_text("# Dropped\nhello from outside\n")
    wd.s("POST", "/execute/sync", {"script": "window.offloadDrop(arguments[0])",
                                   "args": [[str(elsewhere / "notes.md")]]})
    wd.wait_text("[data-testid=preview-head]", "hello from outside")
    wd.find("[data-testid=dropped-outside]")
    wd.screenshot("dropped.png")
    wd.click("[data-testid=allow-folder]")
    wd.find("[data-testid=dropped-inside]")
    roots = json.loads(config.read_text())["roots"]
    assert {"path": str(elsewhere), "writable": False} in roots, roots
    print("dropped file previewed; its folder allowed read-only")


def dropped_folder(run):
    """A dropped folder is offered as an allowed directory itself."""
    config, tmp, wd = run.config, run.tmp, run.wd
    dropped_folder = tmp / "dropped-folder"
    dropped_folder.mkdir()
    (dropped_folder / "a.csv").write_text("a\n1\n")
    wd.s("POST", "/execute/sync", {"script": "window.offloadDrop(arguments[0])",
                                   "args": [[str(dropped_folder)]]})
    wd.find("[data-testid=dropped-folder]")
    assert_reachable(wd, "[data-testid=allow-dropped-folder]", "Allow read-only (a dropped folder)")
    wd.click("[data-testid=allow-dropped-folder]")
    wd.wait_text("[data-testid=dropped-inside]", "already use its files")
    roots = json.loads(config.read_text())["roots"]
    assert {"path": str(dropped_folder.resolve()), "writable": False} in roots, roots
    print("dropped folder allowed read-only")
