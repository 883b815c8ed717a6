"""A stand-in for the user's web browser in sign-in tests: it opens the authorization URL,
follows redirects with cookies, fills in and submits the authorization server's HTML forms (the
login form: any name and password; a consent form: confirm), and finally loads the redirect
to Offload's loopback callback, as a browser would. The OAuth flow itself is the real one.

Usage: python fake_browser.py URL      (Offload runs it as the "browser" through OFFLOAD_BROWSER)
Writes what it did to the file named by FAKE_BROWSER_LOG, if set; exits non-zero on failure.
"""

import html
import http.cookiejar
import os
import re
import sys
import urllib.error
import urllib.request
from urllib.parse import urlencode, urljoin

FORM = re.compile(r"<form[^>]*action=\"([^\"]+)\"[^>]*>(.*?)</form>", re.S | re.I)
INPUT = re.compile(r"<input([^>]*)>", re.I)
ATTR = re.compile(r"(\w+)=\"([^\"]*)\"")


def log(line):
    path = os.environ.get("FAKE_BROWSER_LOG")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


class Page:
    def __init__(self, response):
        self.status = response.status
        self.url = response.geturl()
        self.type = response.headers.get("content-type", "")
        self.text = response.read().decode("utf-8", "replace")


def fetch(browser, url, data=None):
    body = urlencode(data).encode() if data is not None else None
    try:
        return Page(browser.open(url, body, timeout=30))
    except urllib.error.HTTPError as e:
        return Page(e)


def main(url):
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    page = fetch(browser, url)
    for _ in range(6):
        log(f"{page.status} {page.url}")
        form = FORM.search(page.text) if "text/html" in page.type else None
        if form is None:
            break
        action = urljoin(page.url, html.unescape(form.group(1)))
        fields = {}
        for attrs in INPUT.findall(form.group(2)):
            a = dict(ATTR.findall(attrs))
            if "name" in a:
                fields[a["name"]] = html.unescape(a.get("value", ""))
        if "login" in fields:
            fields["login"] = fields["login"] or "offload-tester"
        if "password" in fields:
            fields["password"] = "correct horse"
        if not fields:
            break
        page = fetch(browser, action, fields)
    log(f"done {page.status} {page.url}")
    return 0 if page.status < 400 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
