#!/usr/bin/env python3
"""Makes the public tool-retrieval sets `offload-bench search` scores, from the published
repositories (run `fetch` for each first; the outputs are committed, so the bench needs no
network):

- MetaTool (github.com/HowieHwong/MetaTool, MIT): 199 ChatGPT plugins described in one line
  each, and 20,614 requests that name the plugin that answers them.
- BFCL (github.com/ShishirPatil/gorilla, berkeley-function-call-leaderboard, Apache-2.0): the
  functions of its simple, multiple, live simple and live multiple categories pooled into one
  catalog (name, description, parameters; a name met again keeps its first description), and
  each request with the function its answer calls. The live ones were written by real users.

Each set becomes crates/bench/data/search/<set>.json.gz:
{"source", "licence", "tools": [{"name", "description", "params": [[name, description]]}],
 "queries": [{"q", "relevant": [tool index]}]}.

usage: scripts/search-sets.py METATOOL_GIT_DIR GORILLA_GIT_DIR
"""
import csv
import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "crates/bench/data/search"


def show(git_dir, path):
    return subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"HEAD:{path}"],
        check=True, capture_output=True,
    ).stdout.decode()


def write(name, data):
    OUT.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    # mtime 0: the same input makes the same bytes.
    with open(OUT / f"{name}.json.gz", "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", mtime=0, compresslevel=9) as z:
            z.write(raw)
    print(f"{name}: {len(data['tools'])} tools, {len(data['queries'])} queries")


def metatool(git_dir):
    des = json.loads(show(git_dir, "dataset/plugin_des.json"))
    names = sorted(des)
    index = {n: i for i, n in enumerate(names)}
    queries = []
    for row in csv.DictReader(io.StringIO(show(git_dir, "dataset/data/all_clean_data.csv"))):
        if row["Tool"] in index and row["Query"].strip():
            queries.append({"q": row["Query"].strip(), "relevant": [index[row["Tool"]]]})
    write("metatool", {
        "source": "MetaTool, github.com/HowieHwong/MetaTool (dataset/plugin_des.json, dataset/data/all_clean_data.csv)",
        "licence": "MIT, Copyright (c) 2023 Yue Huang",
        "tools": [{"name": n, "description": des[n], "params": []} for n in names],
        "queries": queries,
    })


def bfcl(git_dir):
    base = "berkeley-function-call-leaderboard/bfcl_eval/data"
    tools, index, queries = [], {}, []
    for category in ["simple_python", "multiple", "live_simple", "live_multiple"]:
        items = [json.loads(l) for l in show(git_dir, f"{base}/BFCL_v4_{category}.json").splitlines() if l.strip()]
        answers = {
            a["id"]: a for a in
            (json.loads(l) for l in show(git_dir, f"{base}/possible_answer/BFCL_v4_{category}.json").splitlines() if l.strip())
        }
        for item in items:
            for f in item["function"]:
                props = (f.get("parameters") or {}).get("properties") or {}
                params = [[p, (v or {}).get("description", "")] for p, v in props.items()]
                key = f["name"]
                if key not in index:
                    index[key] = len(tools)
                    tools.append({"name": f["name"], "description": f.get("description", ""), "params": params})
            answer = answers.get(item["id"])
            turns = item["question"][0] if item["question"] else []
            q = " ".join(t["content"] for t in turns if t.get("role") == "user").strip()
            if not answer or not q:
                continue
            called = {name for call in answer["ground_truth"] for name in call}
            relevant = sorted({index[f["name"]] for f in item["function"] if f["name"] in called})
            if relevant:
                queries.append({"q": q, "relevant": relevant})
    write("bfcl", {
        "source": "Berkeley Function Calling Leaderboard v4, github.com/ShishirPatil/gorilla (berkeley-function-call-leaderboard/bfcl_eval/data: simple_python, multiple, live_simple, live_multiple and their possible answers)",
        "licence": "Apache-2.0, the Gorilla authors",
        "tools": tools,
        "queries": queries,
    })


if __name__ == "__main__":
    metatool(sys.argv[1])
    bfcl(sys.argv[2])
