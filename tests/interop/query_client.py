"""query_file checked against DuckDB, and Parquet checked with pyarrow, through `offload mcp`
driven by the official Python SDK.

Usage: query_client.py OFFLOAD_BIN
Writes its data files into Offload's default directory (from list_allowed_directories), runs
each query through Offload and through DuckDB on the same files, and compares the rows.
Prints one line per check; exits non-zero on the first failure.
"""

import asyncio
import datetime
import decimal
import json
import math
import os
import random
import sys

import duckdb
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from mcp import Client, StdioServerParameters

from checks import check


def write_data(d):
    rnd = random.Random(7)
    regions = ["north", "south", "east", "west"]
    with open(os.path.join(d, "sales.csv"), "w", newline="") as f:
        f.write("id,region,amount,day,note\n")
        for i in range(5000):
            region = "" if i % 97 == 0 else rnd.choice(regions)
            amount = "" if i % 53 == 0 else f"{rnd.randint(1, 100000) / 100:.2f}"
            day = (datetime.date(2024, 1, 1) + datetime.timedelta(days=rnd.randint(0, 365))).isoformat()
            note = rnd.choice(["plain", '"quoted, with comma"', '"two\nlines"', '"say ""hi"""'])
            f.write(f"{i},{region},{amount},{day},{note}\n")
    with open(os.path.join(d, "regions.csv"), "w") as f:
        f.write("region,manager,target\nnorth,Ann,30000\nsouth,Bo,25000\neast,Cy,20000\n")
    # The Parquet copy, written by pyarrow (snappy, its default).
    table = pacsv.read_csv(os.path.join(d, "sales.csv"), convert_options=pacsv.ConvertOptions(strings_can_be_null=True))
    pq.write_table(table, os.path.join(d, "sales.parquet"))
    with open(os.path.join(d, "nested.json"), "w") as f:
        json.dump({"items": [{"name": f"n{i}", "tags": ["a", "b"][: i % 3], "n": i} for i in range(50)]}, f)


def norm(v):
    if isinstance(v, float):
        return round(v, 6)
    if isinstance(v, decimal.Decimal):
        return round(float(v), 6)
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()
    return v


def rows_equal(a, b):
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        for x, y in zip(ra, rb):
            x, y = norm(x), norm(y)
            if isinstance(x, (int, float)) and isinstance(y, (int, float)):
                if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-6):
                    return False
            elif x != y:
                return False
    return True


QUERIES = [
    ("sum per region", "SELECT region, SUM(amount) AS total FROM data GROUP BY region ORDER BY region NULLS FIRST"),
    ("count, avg, min, max", "SELECT COUNT(*) AS n, COUNT(amount) AS with_amount, AVG(amount) AS mean, MIN(amount) AS lo, MAX(amount) AS hi FROM data"),
    ("nulls", "SELECT COUNT(*) AS n FROM data WHERE region IS NULL OR amount IS NULL"),
    ("dates", "SELECT MIN(day) AS first, MAX(day) AS last, COUNT(*) AS n FROM data WHERE day >= DATE '2024-07-01'"),
    ("quoted fields with line breaks", "SELECT note, COUNT(*) AS n, MAX(LENGTH(note)) AS len FROM data GROUP BY note ORDER BY note"),
    ("join", "SELECT r.manager, COUNT(*) AS n, SUM(d.amount) > MAX(r.target) AS met FROM data d JOIN regions r ON d.region = r.region GROUP BY r.manager ORDER BY r.manager"),
    ("window and CTE", "WITH m AS (SELECT region, DATE_TRUNC('month', day) AS month, SUM(amount) AS total FROM data WHERE region IS NOT NULL GROUP BY 1, 2) SELECT region, COUNT(*) AS months, MAX(total) AS best FROM m GROUP BY region ORDER BY region"),
]


async def main(offload: str) -> None:
    params = StdioServerParameters(command=offload, args=["mcp"], env=dict(os.environ))
    async with Client(params, raise_exceptions=True) as client:
        r = await client.call_tool("list_allowed_directories", {})
        d = r.structured_content["default_directory"]
        write_data(d)
        db = duckdb.connect()
        db.execute(f"CREATE VIEW data AS SELECT * FROM read_csv('{d}/sales.csv', header=true)")
        db.execute(f"CREATE VIEW regions AS SELECT * FROM read_csv('{d}/regions.csv', header=true)")
        db.execute(f"CREATE VIEW pdata AS SELECT * FROM read_parquet('{d}/sales.parquet')")
        # The same queries on the Parquet copy, in DuckDB too.
        pdb = duckdb.connect()
        pdb.execute(f"CREATE VIEW data AS SELECT * FROM read_parquet('{d}/sales.parquet')")
        pdb.execute(f"CREATE VIEW regions AS SELECT * FROM read_csv('{d}/regions.csv', header=true)")

        for name, sql in QUERIES:
            for path, ref in [("sales.csv", db), ("sales.parquet", pdb)]:
                expected = ref.execute(sql).fetchall()
                r = await client.call_tool("query_file", {"path": path, "sql": sql, "tables": {"regions": "regions.csv"}})
                check(not r.is_error, f"{name} on {path} runs: {r.content[0].text[:300]}")
                got = r.structured_content["rows"]
                check(rows_equal(got, expected), f"{name} on {path} equals DuckDB ({got[:3]} vs {expected[:3]})")

        r = await client.call_tool("query_file", {"path": "sales.csv", "sql": "SELECT * FROM data", "limit": 5})
        s = r.structured_content
        check(s["row_count"] == 5000 and len(s["rows"]) == 5 and s["truncated"], "limit bounds the rows, not the count")
        check([c["name"] for c in s["columns"]] == ["id", "region", "amount", "day", "note"], "columns in order")

        # Errors a model can fix.
        r = await client.call_tool("query_file", {"path": "sales.csv", "sql": "SELECT regin FROM data"})
        e = r.structured_content["error"]
        check(r.is_error and e["code"] == "query_error" and "did you mean `region`" in e["message"] and "column 8" in e["message"], f"unknown column: {e['message'][:200]}")
        for sql in ["DROP TABLE data", f"COPY data TO '{d}/copy.csv'", f"SELECT * FROM '{d}/regions.csv'", "SELECT 1; SELECT 2"]:
            r = await client.call_tool("query_file", {"path": "sales.csv", "sql": sql})
            check(r.is_error and r.structured_content["error"]["code"] == "query_error", f"refused: {sql[:40]}")
        check(not os.path.exists(f"{d}/copy.csv"), "COPY wrote nothing")
        r = await client.call_tool("query_file", {"path": "sales.csv", "sql": "SELECT * FROM data", "tables": {"secret": "/etc/passwd"}})
        check(r.is_error and r.structured_content["error"]["code"] == "path_outside_roots", "a table outside the roots is refused")

        # The whole result stored as Parquet, read back by pyarrow; and as CSV.
        sql = "SELECT region, day, SUM(amount) AS total FROM data GROUP BY region, day ORDER BY region NULLS FIRST, day"
        r = await client.call_tool("query_file", {"path": "sales.csv", "sql": sql, "file_format": "parquet", "filename": "per_day.parquet", "description": "total per region and day"})
        check(not r.is_error, f"stored as parquet: {r.content[-1].text[:200]}")
        stored = r.structured_content
        expected = db.execute(sql).fetchall()
        back = pq.read_table(stored["path"])
        check(back.num_rows == len(expected) == stored["summary"]["rows"], f"parquet rows {back.num_rows} = {len(expected)}")
        check(rows_equal([tuple(x.values()) for x in back.to_pylist()], expected), "parquet read back by pyarrow equals DuckDB")
        r = await client.call_tool("query_file", {"path": "sales.parquet", "sql": sql, "filename": "per_day.csv"})
        check(not r.is_error and r.structured_content["format"] == "csv", "stored as csv")
        back = db.execute(f"SELECT * FROM read_csv('{r.structured_content['path']}', header=true)").fetchall()
        check(rows_equal(back, expected), "csv read back by DuckDB equals the query")
        r = await client.call_tool("query_file", {"path": "sales.csv", "sql": sql, "filename": "per_day.parquet"})
        check(r.is_error and r.structured_content["error"]["code"] == "file_exists", "never overwrites")

        # Parquet as an input: schema from the footer, rows by offset.
        r = await client.call_tool("get_file_schema", {"path": "sales.parquet"})
        s = r.structured_content
        check(s["format"] == "parquet" and s["rows"] == 5000 and [c["name"] for c in s["columns"]] == ["id", "region", "amount", "day", "note"], "parquet schema from the footer")
        check(s["columns"][0]["min"] == "0" and s["columns"][0]["max"] == "4999", "parquet statistics")
        r = await client.call_tool("read_file", {"path": "sales.parquet", "offset": 4998, "length": 10})
        # The page travels once, as text: a header line, the column names, a JSON row a line;
        # its numbers in _meta.
        s = r.meta["dev.offload/page"]
        rows = [json.loads(line) for line in r.content[0].text.split("\n")[2:]]
        exp = db.execute("SELECT * FROM pdata WHERE id >= 4998 ORDER BY id").fetchall()
        check(s["kind"] == "table" and s["total"] == 5000 and rows_equal(rows, exp), "read_file pages a parquet file")

        # Parquet into a tool's arguments (call_tool_with_file_content, $file as data), and an
        # upstream answer stored as Parquet read back by pyarrow.
        first = db.execute("SELECT * FROM pdata ORDER BY id LIMIT 1").fetchall()[0]
        r = await client.call_tool("call_tool_with_file_content", {"server": "fx", "tool_name": "received", "file_path": "sales.parquet", "data_key": "rows"})
        got = r.structured_content
        check(not r.is_error and got["rows"] == 5000 and got["first"]["id"] == 0 and got["first"]["region"] == first[1] and got["first"]["day"] == first[3].isoformat(), f"parquet rows into a tool: {str(got)[:200]}")
        r = await client.call_tool("call_tool", {"server": "fx", "tool_name": "received", "tool_args": {"rows": {"$file": "sales.parquet", "as": "data"}}})
        check(not r.is_error and r.structured_content["rows"] == 5000, "$file with a parquet file as data")
        r = await client.call_tool("call_tool", {"server": "fx", "tool_name": "rows", "tool_args": {"n": 100}})
        answer = json.loads(r.content[0].text)
        r = await client.call_tool("call_tool_and_store", {"server": "fx", "tool_name": "rows", "tool_args": {"n": 100}, "file_format": "parquet"})
        check(not r.is_error and r.structured_content["format"] == "parquet", "an upstream answer stored as parquet")
        back = pq.read_table(r.structured_content["path"])
        check(back.to_pylist() == answer, "pyarrow reads the stored parquet back as the answer")
        check(str(back.schema.field("id").type) == "int64" and str(back.schema.field("active").type) == "bool" and str(back.schema.field("score").type) == "double", f"typed columns: {back.schema}")

        # jq over nested JSON.
        r = await client.call_tool("query_file", {"path": "nested.json", "jq": "[.items[] | select(.tags | length > 1) | .n] | add"})
        data = json.load(open(f"{d}/nested.json"))
        want = sum(x["n"] for x in data["items"] if len(x["tags"]) > 1)
        check(not r.is_error and r.structured_content["results"] == [want], f"jq sum {r.structured_content}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
