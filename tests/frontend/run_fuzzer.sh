#!/usr/bin/env bash
# Builds the .ra parser fuzzer with clang's libFuzzer + AddressSanitizer and runs it
# for a bounded time (default 60 s) with a seed corpus made of examples/ra and the
# malformed corpus. Crashing inputs are written to build-fuzz/artifacts/.
#
#   tests/frontend/run_fuzzer.sh [seconds] [extra libFuzzer flags...]
#   RANC_FUZZ_CHECK=1 tests/frontend/run_fuzzer.sh 120   # also run ranc::check
#   RANC_FUZZ_PLAN=1 tests/frontend/run_fuzzer.sh 600    # and plan + generate every checked
#                                                          # program, fused and unfused (needs
#                                                          # a build's generated template
#                                                          # registry: RANC_BUILD_DIR, default build)
#
# Needs clang with libFuzzer (Debian: clang-14, which ships libclang_rt.fuzzer) and
# libfmt-dev. Exit status: 0 when no crash was found.
set -euo pipefail
seconds="${1:-60}"
shift || true
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${RANC_FUZZ_DIR:-$root/build-fuzz}"
cxx="${CXX_FUZZ:-}"
if [[ -z "$cxx" ]]; then
  for c in clang++-14 clang++; do
    if command -v "$c" >/dev/null; then cxx="$c"; break; fi
  done
fi
if [[ -z "$cxx" ]]; then
  echo "run_fuzzer.sh: clang++ not found (install Debian's clang-14)" >&2
  exit 2
fi
mkdir -p "$out/corpus" "$out/artifacts"

sources=(
  "$root"/compiler/src/frontend/*.cpp
  "$root"/compiler/src/ir/*.cpp
  "$root"/runtime/src/data/*.cpp
  "$root/tests/frontend/ra_parser_fuzz.cpp"
)
defs=(-DFMT_HEADER_ONLY -include "$root/tests/frontend/fuzz_source_location_shim.h")
if [[ "${RANC_FUZZ_PLAN:-0}" == 1 ]]; then
  RANC_FUZZ_CHECK=1
  registry="${RANC_BUILD_DIR:-$root/build}/compiler/template_registry.gen.cpp"
  if [[ ! -f "$registry" ]]; then
    echo "run_fuzzer.sh: RANC_FUZZ_PLAN needs $registry (build the tree first)" >&2
    exit 2
  fi
fi
if [[ "${RANC_FUZZ_CHECK:-0}" == 1 ]]; then
  defs+=(-DRANC_FUZZ_CHECK)
  mapfile -t more < <(find "$root/compiler/src/check" "$root/compiler/src/dsl" "$root/ra_ops" -name '*.cpp')
  sources+=("${more[@]}")
  if [[ "${RANC_FUZZ_PLAN:-0}" == 1 ]]; then
    # The whole planner and code generator (no GPU: the plan and its source only).
    defs+=(-DRANC_FUZZ_PLAN)
    mapfile -t plan < <(find "$root/compiler/src/passes" "$root/compiler/src/codegen" -name '*.cpp')
    sources+=("${plan[@]}" "$registry")
  else
    # What the operators' lowerings call of the planner and the code generator (a link).
    sources+=("$root/compiler/src/codegen/sort_layout.cpp" "$root/compiler/src/passes/plan_sort_orders.cpp")
  fi
fi
echo "building $out/ra_parser_fuzz with $cxx" >&2
"$cxx" -std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined "${defs[@]}" \
  -I"$root/compiler/include" -I"$root/runtime/include" -I"$root/ra_ops/include" \
  "${sources[@]}" -o "$out/ra_parser_fuzz"

# Seed corpus: the examples (with the TPC-H queries and the recursions, whose plans reach
# most of the planner) and the malformed files (copied so libFuzzer can add to it).
cp -n "$root"/examples/ra/*.ra "$out/corpus/" 2>/dev/null || true
for f in "$root"/examples/tpch/*.ra "$root"/bench/recursion/*.ra; do
  cp -n "$f" "$out/corpus/$(basename "$(dirname "$f")")_$(basename "$f")" 2>/dev/null || true
done
cp -n "$root"/tests/frontend/malformed/*.ra "$out/corpus/" 2>/dev/null || true

# -max_len 4096 keeps inputs small enough to explore; -timeout flags a slow input
# (a hang or a quadratic blowup) as a failure; -rss_limit_mb bounds memory.
"$out/ra_parser_fuzz" "$out/corpus" -max_total_time="$seconds" -max_len=4096 -timeout=5 \
  -rss_limit_mb=2048 -dict="$root/tests/frontend/ra.dict" -artifact_prefix="$out/artifacts/" -print_final_stats=1 "$@"
