// Thrust/CUB operator-at-a-time baselines and the copy-bandwidth ceiling for the
// ranc benchmark. Compiled by nvcc; the driver (ra_bench.cpp) is plain C++.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

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
// Device-to-device copy of `bytes` bytes; bytes counted = 2 * bytes (read + write).
Measurement measure_copy(size_t bytes);
// The baselines for n tuples of (i32 key, i32 value), uniform keys:
// select 50% (copy_if), map (transform), set union/intersection/difference
// (sorted unique inputs, set_*_by_key), sort_by_key, PK-FK join on sorted inputs
// (vectorized lower_bound + gathers, 100% match), reduce_by_key over sorted keys.
std::vector<Measurement> run_thrust_baselines(size_t n);

}  // namespace ranc::bench
