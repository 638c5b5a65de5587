// Thrust/CUB operator-at-a-time baselines and the copy-bandwidth ceiling for the
// ranc benchmark. Compiled by nvcc; the driver (ra_bench.cpp) is plain C++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

// A benchmark's check of a CUDA call: on an error, the call, the error and where go to
// stderr and the process exits with code 2 (the caller includes cuda_runtime.h).
#define RANC_BENCH_CK(expr)                                                                    \
  do {                                                                                         \
    cudaError_t e_ = (expr);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #expr, cudaGetErrorString(e_), __FILE__, \
                   __LINE__);                                                                  \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)

namespace ranc::bench {

// One measured operation: the median time of several runs and the bytes it reads
// once plus writes.
struct Measurement {
  std::string op;
  size_t tuples = 0;
  double seconds = 0;
  double bytes = 0;
  double gbps() const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
};

// Device name, or an empty string when no GPU is usable.
std::string device_name();
// device_name(), having printed "SKIPPED: no GPU available" when it is empty (a bench's main
// then returns 0: binaries start and pass on machines without a GPU).
std::string device_or_skip();
// The median seconds of `runs` calls of f after one warm-up, timed by CUDA events on the
// default stream (f enqueues its work there).
double time_median(const std::function<void()>& f, int runs = 5);
// Device-to-device copy of `bytes` bytes; bytes counted = 2 * bytes (read + write).
Measurement measure_copy(size_t bytes);
// The baselines for n tuples of (i32 key, i32 value), uniform keys:
// select 50% (copy_if), map (transform), set union/intersection/difference
// (sorted unique inputs, set_*_by_key), sort_by_key, PK-FK join on sorted inputs
// (vectorized lower_bound + gathers, 100% match), reduce_by_key over sorted keys; and
// CUB radix sorts without copies: "cub sort pairs" (i32 key, i32 value), "cub sort keys"
// (i32 keys) and "cub sort words" (each row as one 64-bit word, keys only).
std::vector<Measurement> run_thrust_baselines(size_t n);
// Operator-at-a-time baselines for fused operator chains: each operator is one or a
// few Thrust calls that materialise their result, so every intermediate goes through
// memory. One Measurement per chain; op names and bytes (read once + final writes):
//   "select-select-project": k < 2^30, then v % 2 == 0, then (k + 1, 3v + 1);
//                            bytes 8n + 8 * out_rows.
//   "select-project-join":   R(k = 2(i/4), v = i), S(pk = 2i, pv = i + 7) of n/4 rows;
//                            v % 2 == 0, (k, w = 3v), join k = pk -> (k, w, pv);
//                            bytes 8n + 8(n/4) + 12 * out_rows.
//   "join-select-reduce":    the same R and S; join -> (k, v, pv), v % 2 == 0,
//                            sum of (i64)(v + pv); bytes 8n + 8(n/4) + 8.
//   "two-selects":           k < 2^30 and k >= 3 * 2^29 over the same R;
//                            bytes 8n + 8 * (rows1 + rows2).
//   "select-project-reduce": k < 2^30, x = (i64)v * 2 + 1, sum of x; bytes 8n + 8.
// R is n uniform (k, v) rows (the same generator as run_thrust_baselines) except in
// the two join chains. Each chain's result is checked once against the CPU; on a
// mismatch (or n not a multiple of 4 for the join chains) it prints a line to stderr
// and its seconds is -1.
std::vector<Measurement> run_thrust_chains(size_t n);
// Group-by of n unsorted (g, v) rows (device arrays of i32) into sum((i64)v) per g, as the
// sort + reduce_by_key chain of an operator-at-a-time system: "thrust group-by" (copies of
// g and v, sort_by_key, reduce_by_key) and "cub group-by" (DeviceRadixSort::SortPairs into
// new arrays, DeviceReduce::ReduceByKey). Bytes: 8n + 12 * groups (read once, write the
// (i32 key, i64 sum) rows). The result of each is checked against a CPU sum once (stderr
// and seconds -1 on a mismatch).
std::vector<Measurement> run_group_by_baselines(const int32_t* g, const int32_t* v, size_t n);

}  // namespace ranc::bench
