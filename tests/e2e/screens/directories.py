"""The Directories screen: folders, URL patterns, a bucket, retention."""

import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from harness import WEED_KEY, WEED_SECRET, assert_inside, assert_reachable, contrast, free_port, human_bytes, mcp_read, start_weed, stop_weed


def add_folder(run):
    """Directories: the folder the picker would answer, given to the command it calls."""
    config, data, wd = run.config, run.data, run.wd
    wd.click("[data-testid=nav-directories]")
    wd.find("[data-testid=root-row]")
    wd.invoke("add_root", {"path": str(data), "writable": True})
    wd.wait_text("[data-testid=roots]", str(data))
    on_disk = json.loads(config.read_text())
    assert any(str(data) in json.dumps(r) for r in on_disk["roots"]), on_disk
    print("directory added")


def allow_url(run):
    """A URL pattern allowed on the same screen: a client of the app then reads a page of a local
    web server through it (fetched into the default folder)."""
    config, env, tmp, wd = run.config, run.env, run.tmp, run.wd
    site_dir = tmp / "site"
    site_dir.mkdir()
    (site_dir / "notes.txt").write_text("fetched through an allowed pattern\n")
    site_port = free_port()
    site = subprocess.Popen([sys.executable, "-m", "http.server", str(site_port), "--bind", "127.0.0.1",
                             "--directory", str(site_dir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wd.find("[data-testid=no-urls]")
        pattern = f"http://127.0.0.1:{site_port}/*"
        wd.type("[data-testid=url-pattern]", pattern)
        allow = assert_inside(wd, "[data-testid=url-allow]", "the URLs form's Allow")
        assert contrast(allow["color"], allow["background"]) >= 4.5, allow
        wd.click("[data-testid=url-allow]")
        wd.wait_text("[data-testid=urls]", pattern)
        assert_inside(wd, "[data-testid=url-row]", "the allowed pattern")
        assert json.loads(config.read_text())["urls"]["allow"] == [pattern]
        deadline = time.time() + 10
        while True:
            try:
                content = asyncio.run(mcp_read(env, f"http://127.0.0.1:{site_port}/notes.txt"))
                break
            except Exception as e:
                assert time.time() < deadline, f"the URL was not read: {e!r}"
                time.sleep(0.3)
        assert "fetched through an allowed pattern" in content, content
        print("a URL pattern allowed in Directories; a client read a page through it")
    finally:
        site.terminate()
        site.wait(timeout=10)
    wd.screenshot("directories.png")


def add_bucket(run):
    """A bucket through the form, against a real S3 server: checked, keys into the real keychain
    (not the file), and an object read back by a client of the app."""
    config, env, tmp, wd = run.config, run.env, run.tmp, run.wd
    weed, s3, filer = start_weed(tmp)
    try:
        put = urllib.request.Request(f"{filer}/buckets/e2e/team/hello.txt",
                                     data=b"hello from the bucket\n", method="PUT")
        urllib.request.urlopen(put, timeout=10).read()
        wd.click("[data-testid=add-bucket]")
        wd.type("[data-testid=bucket-url]", "s3://e2e/team")
        wd.type("[data-testid=bucket-endpoint]", s3)
        wd.type("[data-testid=bucket-region]", "us-east-1")
        wd.type("[data-testid=bucket-key]", WEED_KEY)
        wd.type("[data-testid=bucket-secret]", WEED_SECRET)
        save = assert_inside(wd, "[data-testid=bucket-save]", "the bucket form's Check and add")
        assert contrast(save["color"], save["background"]) >= 4.5, save
        assert_inside(wd, "[data-testid=bucket-secret]", "the secret key field")
        wd.click("[data-testid=bucket-save]")
        wd.gone("[data-testid=bucket-form]", timeout=40)
        wd.wait_text("[data-testid=roots]", "s3://e2e/team")
        text = config.read_text()
        assert WEED_SECRET not in text and WEED_KEY not in text, text
        assert "${keyring:bucket-e2e_secretaccesskey}" in text, text
        content = asyncio.run(mcp_read(env, "s3://e2e/team/hello.txt"))
        assert content == "hello from the bucket", content
        print("bucket added through the form; its keys read from the keychain by a client")
        wd.screenshot("directories-bucket.png")
    finally:
        stop_weed(weed)


def retention(run):
    """A retention rule on the data folder, set in the window: what it would delete is said before
    saving (nothing: every stored response is from today), then it is in the file."""
    config, data, expected, wd, work = run.config, run.data, run.expected, run.wd, run.work
    wd.click("[data-testid=nav-directories]")
    wd.wait_content("[data-testid=root-row]", str(data))
    opened = wd.s("POST", "/execute/sync", {"script": (
        "const row = [...document.querySelectorAll('[data-testid=root-row]')]"
        ".find(r => r.textContent.includes(arguments[0]));"
        "const b = row && row.querySelector('[data-testid=root-retention-edit]');"
        "if (b) b.click(); return !!b;"), "args": [str(data)]})
    assert opened, "no retention link on the data folder's row"
    wd.type("[data-testid=retention-days]", "30")
    wd.wait_text("[data-testid=retention-preview]", "Saving deletes nothing now")
    assert_reachable(wd, "[data-testid=retention-save]", "Save rule")
    wd.click("[data-testid=retention-save]")
    wd.wait_text("[data-testid=roots-notice]", "Rule saved for")
    entry = next(r for r in json.loads(config.read_text())["roots"]
                 if isinstance(r, dict) and r.get("path") == str(data))
    assert entry.get("retention") == {"days": 30}, entry
    wd.wait_content("[data-testid=root-retention]", "Deleted after 30 days")
    assert Path(work["stored"]).exists(), "a fresh response was deleted"
    wd.screenshot("directories-retention.png")
    print("retention rule set from the window: 30 days, nothing deleted yet")
    wd.click("[data-testid=nav-overview]")
    wd.wait_text("[data-testid=card-kept]", human_bytes(expected))
