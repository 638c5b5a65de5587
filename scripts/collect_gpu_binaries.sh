#!/usr/bin/env bash
# Copies the GPU test and benchmark binaries of a Release build, and the SF 0.01
# TPC-H data the TPC-H tests use, into one folder to carry to a GPU machine.
#   scripts/collect_gpu_binaries.sh BUILD_DIR DEST_DIR
set -euo pipefail
B=${1:?build dir}
D=${2:?destination}
mkdir -p "$D"
cp "$B/tests/runtime/runtime_tests" "$B/tests/gpu/gpu_tests" "$B/tests/tpch/tpch_ra_tests" \
  "$B/bench/ra_bench" "$B/bench/upload_bench" "$B/tests/io/io_bench/io_bench" \
  "$B/bench/jit_bench" "$B/compiler/src/cli/ranc" "$D/"
[ -f "$B/tests/templates/templates_gpu_test" ] && cp "$B/tests/templates/templates_gpu_test" "$D/"
[ -f "$B/tests/tpch/recursion_oracle_tests" ] && cp "$B/tests/tpch/recursion_oracle_tests" "$D/"
[ -f "$B/bench/reduce_tile_bench" ] && cp "$B/bench/reduce_tile_bench" "$D/"
if [ -d "$B/tpch-data/sf0.01" ]; then
  mkdir -p "$D/tpch-data"
  cp -r "$B/tpch-data/sf0.01" "$D/tpch-data/"
fi
du -sh "$D"
