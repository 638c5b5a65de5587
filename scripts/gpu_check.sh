#!/usr/bin/env bash
# Runs the GPU test suites, compute-sanitizer memcheck and the operator benchmark
# from a folder of built binaries (as collected by scripts/collect_gpu_binaries.sh),
# writing one log per step and a summary to $OUT (default /tmp/ranc-gpu-check).
#   scripts/gpu_check.sh BIN_DIR [steps...]   steps: runtime ops tpch bench memcheck random random2 large
set -u
BIN=${1:?usage: gpu_check.sh BIN_DIR [steps...]}
shift
STEPS=${*:-runtime ops tpch bench memcheck}
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
for s in $STEPS; do
  case $s in
    runtime) step runtime 120 "$BIN/runtime_tests" ;;
    ops) step ops 330 "$BIN/gpu_tests" --gtest_filter='Sizes/*:GpuOperatorsCoverage.*:GpuJoinKeys.*:GpuDeclared*' ;;
    tpch) step tpch 120 "$BIN/tpch_ra_tests" --gtest_filter='*Gpu*' ;;
    bench) step bench 240 "$BIN/ra_bench" 26 28 ;;
    memcheck)
      step memcheck 300 compute-sanitizer --tool memcheck --error-exitcode 1 \
        "$BIN/gpu_tests" --gtest_filter='Sizes/*/n33_*:Sizes/*/n4097_*:GpuOperatorsCoverage.*' ;;
    # 1000 random programs in two halves of 25 batches x 20 chains (one half fits a
    # 10-minute device call on an H100).
    random) RANC_RANDOM_BATCHES=25 step random 560 "$BIN/gpu_tests" --gtest_filter='RandomPrograms.*' ;;
    random2) RANC_SEED=20261147 RANC_RANDOM_BATCHES=25 step random2 560 "$BIN/gpu_tests" \
      --gtest_filter='RandomPrograms.MatchTheReferenceOnTheGpu' ;;
    large) step large 300 "$BIN/gpu_tests" --gtest_filter='GpuOperatorsLarge.*' ;;
    *) echo "unknown step $s" >>"$OUT/summary.txt" ;;
  esac
done
cat "$OUT/summary.txt"
