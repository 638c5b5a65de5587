#!/usr/bin/env python3
"""TPC-H validation: ranc's answers at SF 1 against the specification's answer set.

The TPC-H specification gives, for the qualification database (SF 1) and the validation
parameters, the answer of every query; the TPC-H tools ship them as dbgen/answers/qN.out
('|'-separated, one header line). This script runs every examples/tpch/qN.ra as a user
would (`ranc run qN.ra --data DIR --output NAME=FILE`, on the GPU unless --cpu), reads
the output and compares it with qN.out row by row under the specification's precision
rules (clause 2.1.3.5): strings, integers and counts exactly; sums within 100; averages
and ratios within 1% (after rounding to 1/100); other money values to the cent. A query
whose answer lists fewer rows than ranc returns (a LIMIT in the SQL) compares that prefix.

  python3 bench/tpch/check_answers.py --answers TPCH_KIT/dbgen/answers --data SF1_DIR \\
      [--ranc build/compiler/src/cli/ranc] [--cpu] [--queries 1,6]

The answer files are TPC's and are not part of ranc: point --answers at a copy of the TPC-H
tools. The data must be SF 1 as dbgen writes it (tpchgen-cli writes the same tables).
Exit code 0 when every query matches.
"""
import argparse
import csv
import math
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The kind of each output column, by query, from what the column is (clause 2.1.3.5):
# str: exact text; int: exact integer (keys, years, sizes); cnt: a count, exact; num: a
# money value to the cent; sum: a SUM, within 100; avg/rat: an AVG or a ratio, within 1%.
KINDS = {
    1: "str str sum sum sum sum avg avg avg cnt",
    2: "num str str int str str str str",
    3: "int sum str int",
    4: "str cnt",
    5: "str sum",
    6: "sum",
    7: "str str int sum",
    8: "int rat",
    9: "str int sum",
    10: "int str sum num str str str str",
    11: "int sum",
    12: "str sum sum",
    13: "cnt cnt",
    14: "rat",
    15: "int str str str sum",
    16: "str str int cnt",
    17: "sum",
    18: "str int int str num sum",
    19: "sum",
    20: "str str",
    21: "str cnt",
    22: "str cnt sum",
}


def same(kind, got, want):
    if kind == "str":
        return got.strip() == want.strip()
    if got.strip() == "" or want.strip() == "":
        return got.strip() == want.strip()
    g, w = float(got), float(want)
    if kind in ("int", "cnt"):
        return g == w
    if kind == "num":
        return abs(g - w) <= 0.01 + 1e-9
    if kind == "sum":
        return abs(g - w) <= 100
    # avg, rat: within 1% once reported to the nearest 1/100th, rounded up
    return abs(math.ceil(g * 100 - 1e-9) / 100 - w) <= 0.01 * abs(w) + 0.01


def read_answer(path):
    with open(path) as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    return [[v for v in line.split("|")] for line in lines[1:]]


def run_ranc(ranc, q, data, gpu, out_csv):
    ra = os.path.join(ROOT, "examples", "tpch", f"q{q}.ra")
    name = re.findall(r"^output (\w+)", open(ra).read(), re.M)[-1]
    cmd = [ranc, "run", ra, "--data", data, "--output", f"{name}={out_csv}",
           "--gpu" if gpu else "--cpu"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"ranc failed ({p.returncode}): {p.stderr.strip()[:300]}")
    with open(out_csv, newline="") as f:
        return list(csv.reader(f))[1:]


def check(q, got, want):
    kinds = KINDS[q].split()
    if len(got) < len(want):
        return f"{len(got)} rows, the answer has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if len(g) != len(kinds) or len(w) != len(kinds):
            return f"row {i}: {len(g)} columns, the answer {len(w)}, expected {len(kinds)}"
        for k, (x, y) in enumerate(zip(g, w)):
            if not same(kinds[k], x, y):
                return f"row {i} column {k + 1} ({kinds[k]}): ranc {x!r}, answer {y.strip()!r}"
    return "yes"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--answers", required=True, help="dbgen/answers of the TPC-H tools")
    ap.add_argument("--data", required=True, help="SF 1 .tbl files")
    ap.add_argument("--ranc", default=os.path.join(ROOT, "build/compiler/src/cli/ranc"))
    ap.add_argument("--queries", default=",".join(map(str, range(1, 23))))
    ap.add_argument("--cpu", action="store_true", help="ranc's CPU reference executor")
    a = ap.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for q in [int(x) for x in a.queries.split(",")]:
            want = read_answer(os.path.join(a.answers, f"q{q}.out"))
            try:
                got = run_ranc(a.ranc, q, a.data, not a.cpu, os.path.join(tmp, f"q{q}.csv"))
                verdict = check(q, got, want)
                rows = f"{len(want)} of {len(got)} rows" if len(got) != len(want) else f"{len(got)} rows"
            except RuntimeError as e:
                verdict, rows = str(e), "-"
            ok = ok and verdict == "yes"
            print(f"| Q{q} | {rows} | {verdict} |", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
