#!/usr/bin/env python3
"""TPC-H: ranc next to DuckDB on the same machine, per phase (issue 10).

Generates TPC-H .tbl files with tpchgen-cli at scale factor SF (scripts/tpch_gen.sh),
then for every query ranc has (examples/tpch/qN.ra):
  - ranc, as a user runs it: `ranc run qN.ra --data DIR --gpu --time`, once with an
    empty kernel cache (cold compile) and --repeat times with it warm (cached); the
    load, upload, compile and execute times come from ranc's --time line (medians of
    the cached runs, the cold run's compile);
  - DuckDB (Python package): all eight tables loaded once into an in-memory database
    (DOUBLE for decimals, as ranc's f64), then each query of examples/tpch/sql run
    --repeat times after one warm-up; the median;
  - whether the two results agree (same rows; numbers to a relative 1e-6).
Also the loader alone: DuckDB's read_csv of lineitem with the columns Q1 needs, next
to ranc's load time of Q1 (which reads exactly those columns).

With --rcol DIR, ranc reads columnar files instead: `ranc import` writes the eight
tables there once (reused when DIR already holds them), and each `ranc run` takes
--data DIR, so it plans the tables by the orders the files record (README, "Inputs
that arrive sorted"); DuckDB still loads the .tbl files.

  python3 bench/tpch/tpch_bench.py --sf 10 --ranc build/compiler/src/cli/ranc \\
      [--data DIR] [--rcol DIR] [--queries 1,6] [--repeat 3] [--threads 16] [--markdown OUT.md]

Needs: duckdb and tpchgen-cli (pip; the GPU machine takes them as wheels, see
bench/RESULTS.md), a GPU for ranc (without one, ranc runs its CPU reference: --cpu).
"""
import argparse
import csv
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUERIES = list(range(1, 23))

SCHEMAS = {
    "region": "r_regionkey INTEGER, r_name VARCHAR, r_comment VARCHAR",
    "nation": "n_nationkey INTEGER, n_name VARCHAR, n_regionkey INTEGER, n_comment VARCHAR",
    "supplier": "s_suppkey INTEGER, s_name VARCHAR, s_address VARCHAR, s_nationkey INTEGER, "
                "s_phone VARCHAR, s_acctbal DOUBLE, s_comment VARCHAR",
    "customer": "c_custkey INTEGER, c_name VARCHAR, c_address VARCHAR, c_nationkey INTEGER, "
                "c_phone VARCHAR, c_acctbal DOUBLE, c_mktsegment VARCHAR, c_comment VARCHAR",
    "part": "p_partkey INTEGER, p_name VARCHAR, p_mfgr VARCHAR, p_brand VARCHAR, p_type VARCHAR, "
            "p_size INTEGER, p_container VARCHAR, p_retailprice DOUBLE, p_comment VARCHAR",
    "partsupp": "ps_partkey INTEGER, ps_suppkey INTEGER, ps_availqty INTEGER, "
                "ps_supplycost DOUBLE, ps_comment VARCHAR",
    "orders": "o_orderkey BIGINT, o_custkey INTEGER, o_orderstatus VARCHAR, o_totalprice DOUBLE, "
              "o_orderdate DATE, o_orderpriority VARCHAR, o_clerk VARCHAR, "
              "o_shippriority INTEGER, o_comment VARCHAR",
    "lineitem": "l_orderkey BIGINT, l_partkey INTEGER, l_suppkey INTEGER, l_linenumber INTEGER, "
                "l_quantity DOUBLE, l_extendedprice DOUBLE, l_discount DOUBLE, l_tax DOUBLE, "
                "l_returnflag VARCHAR, l_linestatus VARCHAR, l_shipdate DATE, "
                "l_commitdate DATE, l_receiptdate DATE, l_shipinstruct VARCHAR, "
                "l_shipmode VARCHAR, l_comment VARCHAR",
}
Q1_COLUMNS = ["l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_returnflag",
              "l_linestatus", "l_shipdate"]

TIME_RE = re.compile(
    r"time: load ([\d.]+) s \(([\d.]+) MB/s\), codegen ([\d.]+) s, compile ([\d.]+) s "
    r"\((\w+)[^)]*\), upload ([\d.]+) s, execute ([\d.]+) s, download ([\d.]+) s")


def log(msg):
    print(msg, flush=True)


def read_csv_spec(table):
    """DuckDB read_csv arguments for a .tbl file: '|' with a trailing '|' (one extra,
    empty column, dropped)."""
    cols = [c.strip().split(" ") for c in SCHEMAS[table].split(",")]
    spec = ", ".join(f"'{n}': '{t}'" for n, t in cols) + ", '_end': 'VARCHAR'"
    return spec, [n for n, _ in cols]


def duckdb_load(con, data, table, columns=None):
    spec, names = read_csv_spec(table)
    sel = ", ".join(columns or names)
    con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute(
        f"CREATE TABLE {table} AS SELECT {sel} FROM read_csv('{data}/{table}.tbl', delim='|', "
        f"header=false, columns={{{spec}}}, auto_detect=false)")


def ranc_run(ranc, query, data, cache_dir, out_csv, output_name, gpu, extra=()):
    env = dict(os.environ, RANC_CACHE_DIR=cache_dir)
    cmd = [ranc, "run", os.path.join(ROOT, "examples", "tpch", f"q{query}.ra"), "--data", data,
           "--time", "--output", f"{output_name}={out_csv}", "--gpu" if gpu else "--cpu",
           *extra]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"ranc q{query} failed ({p.returncode}): {p.stderr.strip()}")
    m = TIME_RE.search(p.stderr)
    if not m:
        # CPU reference: load and execute only.
        m2 = re.search(r"time: load ([\d.]+) s \(([\d.]+) MB/s\), execute \(CPU reference\) "
                       r"([\d.]+) s", p.stderr)
        if not m2:
            raise RuntimeError(f"no time line from ranc q{query}: {p.stderr}")
        return {"load": float(m2.group(1)), "load_mbs": float(m2.group(2)), "codegen": 0,
                "compile": 0, "source": "-", "upload": 0, "execute": float(m2.group(3)),
                "download": 0}
    g = m.groups()
    return {"load": float(g[0]), "load_mbs": float(g[1]), "codegen": float(g[2]),
            "compile": float(g[3]), "source": g[4], "upload": float(g[5]),
            "execute": float(g[6]), "download": float(g[7])}


def same_value(a, b):
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except (TypeError, ValueError):
        return str(a) == str(b)
    return math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-6)


def compare(ranc_csv, duck_rows):
    with open(ranc_csv, newline="") as f:
        rows = list(csv.reader(f))[1:]
    duck = [[("" if v is None else str(v)) for v in r] for r in duck_rows]
    if len(rows) != len(duck):
        return f"{len(rows)} rows vs DuckDB's {len(duck)}"
    key = lambda r: [str(v) for v in r]  # noqa: E731
    for i, (a, b) in enumerate(zip(sorted(rows, key=key), sorted(duck, key=key))):
        if len(a) != len(b) or not all(same_value(x, y) for x, y in zip(a, b)):
            return f"row {i}: {a} vs DuckDB {b}"
    return "yes"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sf", default="1")
    ap.add_argument("--data")
    ap.add_argument("--rcol", help="ranc reads .rcol files imported into this folder")
    ap.add_argument("--ranc", default=os.path.join(ROOT, "build/compiler/src/cli/ranc"))
    ap.add_argument("--queries", default=",".join(map(str, QUERIES)))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--cpu", action="store_true", help="ranc on its CPU reference executor")
    ap.add_argument("--markdown")
    ap.add_argument("--ranc-arg", action="append", default=[],
                    help="pass this option to every ranc run (e.g. --ranc-arg=--join=hash)")
    a = ap.parse_args()
    import duckdb  # noqa: E402  (after --help works without it)

    data = a.data or os.path.join(ROOT, "build", "tpch-data", f"sf{a.sf}")
    t0 = time.time()
    subprocess.run([os.path.join(ROOT, "scripts", "tpch_gen.sh"), a.sf, data], check=True)
    log(f"data: {data} (SF {a.sf}; ready in {time.time() - t0:.1f} s)")
    queries = [int(q) for q in a.queries.split(",")]
    ranc_data = data
    if a.rcol:
        t0 = time.time()
        os.makedirs(a.rcol, exist_ok=True)
        # Q8 declares seven of the tables, Q9 the eighth (partsupp); each with all attributes.
        for q, only in ((8, None), (9, "partsupp")):
            todo = [t for t in ([only] if only else ["part", "supplier", "lineitem", "orders",
                                                     "customer", "nation", "region"])
                    if not os.path.exists(os.path.join(a.rcol, f"{t}.rcol"))]
            if todo:
                p = subprocess.run([a.ranc, "import", os.path.join(ROOT, "examples", "tpch",
                                                                   f"q{q}.ra"),
                                    "--data", data, "-o", a.rcol, "--only", ",".join(todo)],
                                   capture_output=True, text=True)
                if p.returncode != 0:
                    raise SystemExit(f"ranc import failed: {p.stderr.strip()}")
                log(p.stdout.strip())
        log(f"columnar files: {a.rcol} (ready in {time.time() - t0:.1f} s)")
        ranc_data = a.rcol

    con = duckdb.connect()
    con.execute(f"SET threads={a.threads}")
    log(f"duckdb {duckdb.__version__}, {a.threads} threads")

    # The loader alone: lineitem with Q1's columns.
    size_mb = os.path.getsize(f"{data}/lineitem.tbl") / 1e6
    t = time.time()
    duckdb_load(con, data, "lineitem", Q1_COLUMNS)
    duck_q1_load = time.time() - t
    con.execute("DROP TABLE lineitem")
    log(f"loader: DuckDB read_csv lineitem.tbl ({size_mb:.0f} MB), Q1's 7 columns: "
        f"{duck_q1_load:.2f} s = {size_mb / duck_q1_load:.0f} MB/s")

    load = {}
    for table in SCHEMAS:
        t = time.time()
        duckdb_load(con, data, table)
        load[table] = time.time() - t
    duck_load = sum(load.values())
    log(f"DuckDB loads all 8 tables in {duck_load:.2f} s")

    results = []
    tmp = tempfile.mkdtemp(prefix="ranc_tpch_")
    try:
        for q in queries:
            ra = open(os.path.join(ROOT, "examples", "tpch", f"q{q}.ra")).read()
            output_name = re.findall(r"^output (\w+)", ra, re.M)[-1]
            sql = open(os.path.join(ROOT, "examples", "tpch", "sql", f"q{q}.sql")).read()
            con.execute(sql).fetchall()  # warm-up
            dt = []
            for _ in range(max(a.repeat, 1)):
                t = time.time()
                duck_rows = con.execute(sql).fetchall()
                dt.append(time.time() - t)
            cache = os.path.join(tmp, f"cache{q}")
            shutil.rmtree(cache, ignore_errors=True)
            out_csv = os.path.join(tmp, f"q{q}.csv")
            try:
                cold = ranc_run(a.ranc, q, ranc_data, cache, out_csv, output_name, not a.cpu,
                                a.ranc_arg)
                warm = [ranc_run(a.ranc, q, ranc_data, cache, out_csv, output_name, not a.cpu,
                                 a.ranc_arg)
                        for _ in range(max(a.repeat, 1))]
            except RuntimeError as e:  # recorded; the other queries still run
                log(f"Q{q}: {e}")
                results.append({"q": q, "error": str(e).splitlines()[0][:200],
                                "duck": statistics.median(dt)})
                continue
            med = lambda k: statistics.median(w[k] for w in warm)  # noqa: E731
            r = {"q": q, "load": med("load"), "load_mbs": med("load_mbs"),
                 "upload": med("upload"), "compile_cold": cold["compile"],
                 "compile_cached": med("compile"), "execute": med("execute"),
                 "ranc_total": med("load") + med("upload") + med("compile") + med("execute") +
                 med("download") + med("codegen"),
                 "duck": statistics.median(dt), "agree": compare(out_csv, duck_rows)}
            results.append(r)
            log(f"Q{q}: ranc load {r['load']:.2f} s ({r['load_mbs']:.0f} MB/s), upload "
                f"{r['upload']:.3f} s, compile {r['compile_cold']:.2f} s cold / "
                f"{r['compile_cached'] * 1e3:.1f} ms cached, execute {r['execute'] * 1e3:.2f} ms; "
                f"DuckDB {r['duck'] * 1e3:.1f} ms; x{r['duck'] / max(r['execute'], 1e-9):.1f}; "
                f"agree: {r['agree']}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    lines = [
        f"| query | ranc load (s) | load MB/s | upload (s) | compile cold (s) | compile cached "
        f"(ms) | ranc execute (ms) | DuckDB (ms) | DuckDB / ranc execute | agree |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        if "error" in r:
            lines.append(f"| Q{r['q']} | - | - | - | - | - | - | {r['duck'] * 1e3:.1f} | - | "
                         f"ranc failed: {r['error']} |")
            continue
        lines.append(
            f"| Q{r['q']} | {r['load']:.2f} | {r['load_mbs']:.0f} | {r['upload']:.3f} | "
            f"{r['compile_cold']:.2f} | {r['compile_cached'] * 1e3:.1f} | "
            f"{r['execute'] * 1e3:.2f} | {r['duck'] * 1e3:.1f} | "
            f"{r['duck'] / max(r['execute'], 1e-9):.1f}x | {r['agree']} |")
    lines.append(f"\nDuckDB loads all eight tables in {duck_load:.2f} s; its read_csv of "
                 f"lineitem with Q1's columns: {duck_q1_load:.2f} s "
                 f"({size_mb / duck_q1_load:.0f} MB/s of file).")
    text = "\n".join(lines)
    log("\n" + text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")
    return 0 if all(r.get("agree") == "yes" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
