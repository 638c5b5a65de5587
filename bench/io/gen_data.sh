#!/usr/bin/env bash
# Generates the loader benchmark's input: TPC-H lineitem at scale factor SF
# (default 1.4, about 1 GB) as lineitem.tbl and as lineitem.csv (with a header and
# quoted comments), with tpchgen-cli. Nothing here is committed.
#   bench/io/gen_data.sh [SF] [OUTDIR]      (default OUTDIR: build/bench-io-data)
set -euo pipefail
sf="${1:-1.4}"
out="${2:-build/bench-io-data}"
mkdir -p "$out"
[[ -s "$out/lineitem.tbl" ]] || tpchgen-cli tbl -s "$sf" -T lineitem -o "$out" --no-progress -q
[[ -s "$out/lineitem.csv" ]] || tpchgen-cli csv -s "$sf" -T lineitem -o "$out" --no-progress -q
ls -l "$out"
