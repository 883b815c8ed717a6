"""Reads files Offload stored back with standard parsers and compares them with the original data.

Usage: roundtrip.py ORIGINAL.json FORMAT=PATH ...
The table layout is re-implemented here from the convention documented in docs/guide/files.md (rows = a list
of objects, or the one list of objects inside an object; nested objects as dotted columns; lists
JSON-encoded; null as empty), independently of Offload's code. Exits non-zero on a mismatch.
"""

import csv
import html
import io
import json
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import yaml
from markdown_it import MarkdownIt
from ruamel.yaml import YAML


def leaf(v):
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def flatten(obj, prefix, out):
    for k, v in obj.items():
        name = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict) and v:
            flatten(v, name, out)
        else:
            out.append((name, leaf(v)))


def table(value):
    rows = value
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)]
        assert len(lists) == 1, "test data must be table-shaped"
        rows = lists[0]
    columns, flat_rows = [], []
    for r in rows:
        cells = []
        flatten(r, "", cells)
        for name, _ in cells:
            if name not in columns:
                columns.append(name)
        flat_rows.append(dict(cells))
    return columns, [[fr.get(c, "") for c in columns] for fr in flat_rows]


def xml_value(el):
    kind = el.get("type")
    if kind == "null":
        return None
    if kind == "boolean":
        return el.text == "true"
    if kind == "number":
        return json.loads(el.text)
    if kind == "list":
        return [xml_value(c) for c in el]
    if len(el):
        return {c.get("key", c.tag): xml_value(c) for c in el}
    return el.text or ""


class Cells(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows, self.cell, self.in_cell = [], None, False

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.cell, self.in_cell = [], True
        elif tag == "br" and self.in_cell:
            self.cell.append("\n")

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.rows[-1].append("".join(self.cell))
            self.in_cell = False

    def handle_data(self, data):
        if self.in_cell:
            self.cell.append(data)


def html_table(text):
    p = Cells()
    p.feed(text)
    return p.rows[0], p.rows[1:]


def norm(cell):
    """Numbers are compared by value: Rust writes -3.25e-7 where Python writes -3.25e-07."""
    try:
        v = json.loads(cell)
    except (ValueError, TypeError):
        return cell
    return repr(v) if isinstance(v, float) else cell


def norm_rows(rows):
    return [[norm(c) for c in r] for r in rows]


def same(what, got, want):
    if isinstance(got, list) and got and isinstance(got[0], list):
        got, want = norm_rows(got), norm_rows(want)
    if got != want:
        print(f"FAIL {what}\n got: {got!r}\nwant: {want!r}")
        sys.exit(1)
    print(f"ok {what}")


def main():
    import time
    started = time.monotonic()
    original = json.load(open(sys.argv[1], encoding="utf-8"))
    for arg in sys.argv[2:]:
        fmt, path = arg.split("=", 1)
        if fmt in ("csv", "tsv", "md", "html"):
            columns, rows = table(original)
        text = open(path, encoding="utf-8", newline="").read()
        if fmt in ("csv", "tsv"):
            got = list(csv.reader(io.StringIO(text), delimiter="," if fmt == "csv" else "\t"))
            same(f"{fmt} header", got[0], columns)
            same(f"{fmt} rows", got[1:], rows)
        elif fmt == "yaml":
            same("yaml (PyYAML, YAML 1.1)", yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)), original)
            if len(text) < 1_000_000:  # the pure-Python 1.2 reader takes minutes on big files
                same("yaml (ruamel, YAML 1.2)", YAML(typ="safe", pure=True).load(text), original)
        elif fmt == "xml":
            root = ET.fromstring(text.encode("utf-8"))
            same("xml (ElementTree)", xml_value(root), json.loads(json.dumps(original).replace("\\u0007", "\\ufffd")))
        elif fmt == "md":
            rendered = MarkdownIt("commonmark").enable("table").render(text)
            header, body = html_table(rendered)
            same("md header (markdown-it)", header, columns)
            same("md rows (markdown-it)", body, [[c.replace("\r\n", "\n").replace("\r", "\n") for c in r] for r in rows])
        elif fmt == "html":
            header, body = html_table(text)
            same("html header (html.parser)", header, columns)
            same("html rows (html.parser)", body, rows)
        elif fmt == "json":
            same("json", json.loads(text), original)
        elif fmt == "jsonl":
            lines = [json.loads(l) for l in text.splitlines()]
            # A list is one line per item; anything else is one line.
            same("jsonl", lines if isinstance(original, list) else lines[0], original)
        else:
            raise SystemExit(f"unknown format {fmt}")
        print(f"   {fmt} checked at {time.monotonic() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
