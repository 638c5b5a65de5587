#!/usr/bin/env python3
"""The benchmark's queries in DuckDB (WITH RECURSIVE ... UNION: set semantics, like the
fixpoint), on the same CSV files, with every core. Prints one JSON line:
{"system": "duckdb", "query", "file", "rows", "load_s", "query_s"} (best of REPS runs).

Usage: duckdb_recursive.py tc|sg FILE.csv [REPS]
"""
import json
import os
import sys
import time

import duckdb

QUERIES = {
    "tc": """WITH RECURSIVE tc(src, dst) AS (
               SELECT src, dst FROM edges
               UNION
               SELECT tc.src, e.dst FROM tc JOIN edges e ON tc.dst = e.src)
             SELECT count(*) FROM tc""",
    "sg": """WITH RECURSIVE sg(x, y) AS (
               SELECT a.child, b.child FROM parent a JOIN parent b ON a.par = b.par
                 WHERE a.child <> b.child
               UNION
               SELECT a.child, b.child FROM parent a JOIN sg ON a.par = sg.x
                 JOIN parent b ON sg.y = b.par)
             SELECT count(*) FROM sg""",
}


def main():
    query, path = sys.argv[1], sys.argv[2]
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    con = duckdb.connect()
    con.execute(f"SET threads TO {os.cpu_count()}")
    table = "edges" if query == "tc" else "parent"
    t0 = time.perf_counter()
    con.execute(f"CREATE TABLE {table} AS SELECT * FROM read_csv_auto('{path}')")
    load = time.perf_counter() - t0
    best, rows = None, None
    for _ in range(reps):
        t0 = time.perf_counter()
        rows = con.execute(QUERIES[query]).fetchone()[0]
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    print(json.dumps({"system": "duckdb", "threads": os.cpu_count(), "query": query,
                      "file": os.path.basename(path), "rows": rows, "load_s": round(load, 4),
                      "query_s": round(best, 4)}))


if __name__ == "__main__":
    main()
