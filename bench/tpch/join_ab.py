#!/usr/bin/env python3
"""TPC-H execute times of ranc's join algorithms side by side (issue 9's `--join=auto`).

For each query, runs `ranc run qN.ra --data DIR --gpu --time --join=ALGO` once per ALGO to
compile (and warm the kernel cache), then --repeat more times; prints the median execute
time per algorithm and whether every algorithm's output equals the first one's (same rows
after sorting; numbers to a relative 1e-6, since float sums may add in another order).

  python3 bench/tpch/join_ab.py --ranc build/compiler/src/cli/ranc --data DIR \\
      [--queries 3,5,9] [--algos merge,hash,auto] [--repeat 2]

An algorithm may carry environment settings after '+': `hash+RANC_HASH_GLOBAL_ROWS=0` is
--join=hash with the hash join's global table off (each variant compiles its own kernels);
a setting that starts with '--' is a command-line option: `auto+--observe-order`.

Needs a GPU and TPC-H .tbl (or .rcol) files in DIR (scripts/tpch_gen.sh).
"""
import argparse
import csv
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXEC_RE = re.compile(r"execute ([\d.]+) s")


def output_name(query):
    with open(os.path.join(ROOT, "examples", "tpch", f"q{query}.ra")) as f:
        names = re.findall(r"^\s*output\s+(\w+)", f.read(), re.M)
    return names[-1] if names else None


def run(ranc, query, data, algo, out_csv, cache):
    join, *settings = algo.split("+")
    cmd = [ranc, "run", os.path.join(ROOT, "examples", "tpch", f"q{query}.ra"), "--data", data,
           "--gpu", "--time", f"--join={join}"]
    name = output_name(query)
    if name:
        cmd += ["--output", f"{name}={out_csv}"]
    cmd += [s for s in settings if s.startswith("--")]
    env = dict(os.environ, RANC_CACHE_DIR=cache)
    env.update(s.split("=", 1) for s in settings if not s.startswith("--"))
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"q{query} --join={algo} failed ({p.returncode}): {p.stderr.strip()}")
    m = EXEC_RE.search(p.stderr)
    if not m:
        raise RuntimeError(f"no time line from q{query}: {p.stderr}")
    return float(m.group(1))


def rows(path):
    with open(path, newline="") as f:
        return sorted(list(csv.reader(f))[1:])


def same(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if len(x) != len(y):
            return False
        for u, v in zip(x, y):
            if u == v:
                continue
            try:
                if not math.isclose(float(u), float(v), rel_tol=1e-6, abs_tol=1e-6):
                    return False
            except ValueError:
                return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranc", default=os.path.join(ROOT, "build/compiler/src/cli/ranc"))
    ap.add_argument("--data", required=True)
    ap.add_argument("--queries", default="2,3,5,7,8,9,10,13,18,21")
    ap.add_argument("--algos", default="merge,hash,auto")
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    algos = a.algos.split(",")
    cache = tempfile.mkdtemp(prefix="ranc-join-ab-")
    print("| query | " + " | ".join(f"--join={x} (ms)" for x in algos) + " | same output |")
    print("| --- | " + " | ".join("---:" for _ in algos) + " | --- |")
    bad = 0
    for q in [int(x) for x in a.queries.split(",")]:
        times, outs = [], []
        for algo in algos:
            out = os.path.join(cache, f"q{q}-{algo}.csv")
            run(a.ranc, q, a.data, algo, out, cache)
            times.append(statistics.median(
                run(a.ranc, q, a.data, algo, out, cache) for _ in range(a.repeat)))
            outs.append(rows(out) if os.path.exists(out) else None)
        ok = all(o is not None and same(outs[0], o) for o in outs)
        bad += not ok
        print(f"| Q{q} | " + " | ".join(f"{t * 1e3:.2f}" for t in times) +
              f" | {'yes' if ok else 'NO'} |", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
