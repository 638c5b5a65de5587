#!/usr/bin/env bash
# Runs the GPU test suites, compute-sanitizer memcheck and the operator benchmark
# from a folder of built binaries (as collected by scripts/collect_gpu_binaries.sh),
# writing one log per step and a summary to $OUT (default /tmp/ranc-gpu-check).
#   scripts/gpu_check.sh BIN_DIR [steps...]
#   steps: suite suite_unfused runtime templates ops ops_more ops_unfused tpch random memcheck
#          racecheck large bench
#          merges merges_expand merges_tune joins_ab groupby sortedreduce hashpaged selvalues phj
#          partition tpch_orders
# Steps are independent: several invocations (each with its own OUT) may run at once.
# PACK=1 packs the step logs into $OUT/logs.tgz at the end (summary.txt stays beside it): the
# device tool brings back only a few files of a call.
set -u
BIN=${1:?usage: gpu_check.sh BIN_DIR [steps...]}
shift
STEPS=${*:-runtime ops ops_more tpch bench memcheck}
OUT=${OUT:-/tmp/ranc-gpu-check}
mkdir -p "$OUT"
export RANC_CACHE_DIR=${RANC_CACHE_DIR:-/tmp/ranc-kernel-cache}
export RANC_TPCH_CACHE_DIR=${RANC_TPCH_CACHE_DIR:-$BIN/tpch-data}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >>"$OUT/summary.txt" 2>&1
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "== $name: rc=$rc, $((SECONDS - t0)) s" >>"$OUT/summary.txt"
  grep -E "PASSED|FAILED|SKIPPED|ERROR SUMMARY" "$OUT/$name.log" | tail -4 >>"$OUT/summary.txt"
}
# Every test of gpu_tests but RandomPrograms and GpuOperatorsLarge (steps of their own), in
# SHARDS (default 14) parallel gtest shards of one NVRTC thread each, under `timeout $2`: the
# whole suite in about 6 minutes on the 16-core H100 host (session 33: 351 s fused, 328 s
# unfused), where one process takes well over the device's 10 minutes a command.
suite() {
  local name=$1 limit=$2 n=${SHARDS:-14} t0=$SECONDS
  for i in $(seq 0 $((n - 1))); do
    RANC_JIT_THREADS=1 GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i timeout "$limit" "$BIN/gpu_tests" \
      --gtest_filter='*-RandomPrograms.*:GpuOperatorsLarge.*' >"$OUT/$name.$i.log" 2>&1 &
  done
  wait
  echo "== $name: $n shards, $((SECONDS - t0)) s" >>"$OUT/summary.txt"
  for i in $(seq 0 $((n - 1))); do
    local f="$OUT/$name.$i.log" last
    last=$(grep -E '^\[  PASSED  \]' "$f" | head -1)
    echo "shard $i: $(grep -c '^\[       OK \]' "$f") ok | ${last:-NOT FINISHED, last: $(grep '^\[ RUN' "$f" | tail -1)}" \
      >>"$OUT/summary.txt"
    grep '^\[  FAILED  \].*(' "$f" >>"$OUT/summary.txt"
  done
}
for s in $STEPS; do
  case $s in
    # The whole suite, fused (the default) and with fusion off: the same results (assertions
    # about the default plan's shape, as waits or regrows, apply to the fused run only).
    suite) suite suite 480 ;;
    suite_unfused) RANC_NO_FUSION=1 suite suite_unfused 480 ;;
    runtime) step runtime 120 "$BIN/runtime_tests" ;;
    templates) [ -x "$BIN/templates_gpu_test" ] && step templates 300 "$BIN/templates_gpu_test" ;;
    # Split in two: with a cold kernel cache the whole set passed 560 s on the H100 (session 23).
    ops) step ops 560 "$BIN/gpu_tests" --gtest_filter='Sizes/*' ;;
    ops_more) step ops_more 400 "$BIN/gpu_tests" --gtest_filter='GpuOperatorsCoverage.*:GpuJoinKeys.*:GpuDeclared*:*GpuSort.*' ;;
    # The same suite with fusion off (every operator its own kernel): the same results.
    ops_unfused) RANC_NO_FUSION=1 step ops_unfused 560 "$BIN/gpu_tests" \
      --gtest_filter='Sizes/*:GpuOperatorsCoverage.*:GpuJoinKeys.*:GpuDeclared*' ;;
    # Every query fused and unfused against SQLite.
    tpch) step tpch 300 "$BIN/tpch_ra_tests" --gtest_filter='*Gpu*' ;;
    # 5000 random programs of 3 to 8 operators, each run fused and unfused; the units
    # compile on every core (most with --Ofast-compile=mid) and each batch runs as soon as
    # its units are in: about 6 minutes on the 16-core H100 host.
    random) step random 560 "$BIN/gpu_tests" --gtest_filter='RandomPrograms.*' ;;
    memcheck)
      step memcheck 400 compute-sanitizer --tool memcheck --error-exitcode 1 \
        "$BIN/gpu_tests" --gtest_filter='Sizes/*/n33_*:Sizes/*/n4097_*:GpuOperatorsCoverage.*' ;;
    racecheck)
      step racecheck 400 compute-sanitizer --tool racecheck --error-exitcode 1 \
        "$BIN/gpu_tests" --gtest_filter='Sizes/*/n4097_*:GpuOperatorsCoverage.*' ;;
    large) step large 300 "$BIN/gpu_tests" --gtest_filter='GpuOperatorsLarge.*' ;;
    bench) step bench 300 "$BIN/ra_bench" 26 28 ;;
    # Set operations, the sorted join and the sorted reduce at 2^28; the join once more
    # with its count + expand path (RANC_MERGE_JOIN=expand) for an A/B in the same run.
    merges) step merges 300 "$BIN/ra_bench" merges 28 ;;
    merges_expand) RANC_MERGE_JOIN=expand step merges_expand 300 "$BIN/ra_bench" merges 28 ;;
    # The one-pass merge join with and without its tile-range kernel (RANC_JOIN_RANGES=0), in
    # one call: the PK-FK join and the join chains.
    joins_ab)
      step joins_ranges 200 "$BIN/ra_bench" merges 28
      RANC_JOIN_RANGES=0 step joins_noranges 200 "$BIN/ra_bench" merges 28 ;;
    # A global reduce after a hash join streaming the join's pages instead of folding in the
    # join kernel (RANC_HASH_FOLD=0; CodegenOptions::fold_hash_joins is on by default).
    hashpaged)
      RANC_HASH_FOLD=0 step hashpaged_random 560 "$BIN/gpu_tests" --gtest_filter='RandomPrograms.*' ;;
    # The select chains with the kept rows staged by row number and by value (the default for
    # rows of up to 8 bytes); a cold run takes about 110 s.
    selvalues)
      RANC_SELECT_VALUES=0 step selchains_rows 200 "$BIN/ra_bench" selchains 28
      step selchains_values 200 "$BIN/ra_bench" selchains 28 ;;
    # The partitioned hash join at paper 004's sizes, hash vs sort-merge over probe and build
    # sizes, and the hash join's template tests.
    phj)
      step phj 150 "$BIN/ra_bench" joins 27
      step joinsizes 200 "$BIN/ra_bench" joinsizes 26
      [ -x "$BIN/templates_gpu_test" ] && step phj_templates 120 "$BIN/templates_gpu_test" --gtest_filter='*Hash*' ;;
    # Radix partitions moving several arrays: CUB per array (the default) and the one-pass
    # partitioner (RANC_PARTITION_COLUMNS=1), tests and the hash join at 2^26 both ways.
    partition)
      step partition_cub 120 "$BIN/runtime_tests" --gtest_filter='*PartitionGpu*'
      RANC_PARTITION_COLUMNS=1 step partition_columns 120 "$BIN/runtime_tests" --gtest_filter='*PartitionGpu*'
      step phj26_cub 120 "$BIN/ra_bench" joins 26
      RANC_PARTITION_COLUMNS=1 step phj26_columns 120 "$BIN/ra_bench" joins 26 ;;
    # Other tile shapes (RANC_TUNE, codegen.cpp) for the same rows.
    merges_tune) RANC_TUNE=${RANC_TUNE:-Reduce=256x8,JoinCount=128x8} step merges_tune 300 "$BIN/ra_bench" merges 28 ;;
    # Group-by of 2^28 rows into 4, 16, 2^10 and 2^24 groups and TPC-H Q1's shape: hashed with and
    # without private states, sorted, Thrust and CUB chains.
    groupby) step groupby 300 "$BIN/ra_bench" groupby 28 ;;
    # The sorted reduce through the generated plan (with Thrust), then its template's tile
    # shapes and state widths against CUB's ReduceByKey (bench/reduce_tile_bench.cu).
    sortedreduce)
      step sortedreduce 120 "$BIN/ra_bench" sortedreduce 28
      step reduce_tiles 120 "$BIN/reduce_tile_bench" 28 16 ;;
    # TPC-H SF 10 imported as .rcol (format 2.1, which records each table's order): every
    # query planned by the recorded orders (the default) and without (--no-recorded-order),
    # from the repository root; the data from TPCHGEN_CLI or the wheel in .whl/ when
    # $SF10_DIR (default /tmp/sf10) does not hold it. About 5 minutes with the data made.
    tpch_orders)
      d=${SF10_DIR:-/tmp/sf${TPCH_SF:-10}}
      if [ -z "${TPCHGEN_CLI:-}" ] && ! command -v tpchgen-cli >/dev/null; then
        pip install -q --no-deps --target /tmp/tg .whl/tpchgen*.whl && export TPCHGEN_CLI=/tmp/tg/bin/tpchgen-cli
      fi
      step tpch_gen 300 scripts/tpch_gen.sh "${TPCH_SF:-10}" "$d"
      mkdir -p "$d.rcol"
      step tpch_import 300 bash -c "'$BIN/ranc' import examples/tpch/q8.ra -o '$d.rcol' --data '$d' &&
        '$BIN/ranc' import examples/tpch/q9.ra -o '$d.rcol' --data '$d' --only partsupp"
      step tpch_orders 500 python3 -u bench/tpch/join_ab.py --ranc "$BIN/ranc" --data "$d.rcol" \
        --algos auto,auto+--no-recorded-order --repeat "${REPEAT:-2}"
      grep '^|' "$OUT/tpch_orders.log" >>"$OUT/summary.txt" ;;
    *) echo "unknown step $s" >>"$OUT/summary.txt" ;;
  esac
done
if [ "${PACK:-0}" = 1 ]; then
  tar czf /tmp/ranc-gpu-check-logs.tgz -C "$OUT" --exclude=logs.tgz --exclude=summary.txt . &&
    find "$OUT" -maxdepth 1 -name '*.log' -delete && mv /tmp/ranc-gpu-check-logs.tgz "$OUT/logs.tgz"
fi
cat "$OUT/summary.txt"
