// ranc/templates/unique.cuh: distinct over input sorted by the whole tuple, and limit.
//
// distinct = select (select.cuh) with predicate UniquePred{same}: row i survives iff i == 0 or
// !same(i, i - 1). Kernels, buffers and launch rules are exactly those of SelectAgent:
//   1. init_tile_state(tile_state, tiles); 2. SelectAgent<P>::run(temp, n, UniquePred<Same>{same},
//   emit, tile_state, out_count), grid = tiles = max(1, ceil(n / P::tile_items)).
// Hook
//   Same: __device__ bool operator()(long long i, long long j) const;  // rows i, j equal (whole tuple;
//         floats compared by bits / totalOrder, see common.cuh total_equal)
//   Emit: as in select.cuh.
// The output keeps the first row of every run of equal rows and stays sorted.
//
// limit(k): a copy of the first min(k, n) rows (of an ordered input, if order matters): use MapAgent
// (select.cuh) over n' = min(k, n) with f(i) copying row i; the output count is n' (known on the
// host, no device counter). A limit fused after a select: run the select, then clamp *out_count to k
// on the host (outputs beyond k are simply ignored; size buffers by n or by min(n, k) + the select's
// tile size... simplest: by n).
#pragma once

#include <ranc/templates/select.cuh>

namespace ranc::tpl {

template <class Same>
struct UniquePred {
  Same same;
  __device__ __forceinline__ bool operator()(i64 i) const { return i == 0 || !same(i, i - 1); }
};

template <class Policy>
using UniqueAgent = SelectAgent<Policy>;

}  // namespace ranc::tpl
