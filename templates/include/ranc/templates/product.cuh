// ranc/templates/product.cuh: cartesian product a x b.
//
// Output row o (0 <= o < na * nb) pairs a-row o / nb with b-row o % nb: the inner side b varies
// fastest, so consecutive threads read consecutive b rows and write consecutive output rows
// (coalesced); a rows are broadcast. The 64-bit division happens once per thread; later items step
// by block_threads with a cheap carry.
//
// Hook: ProductAgent::Hooks (emit: write the pair (a_row, b_row) to output row o).
//
// Kernel: ProductAgent<P>::run(na, nb, emit), items = na * nb (64-bit; the generator must check
//   the product does not overflow int64 and that the output fits in memory), threads
//   P::block_threads, grid = max(1, ceil(na * nb / P::tile_items)). No scratch buffers.
// A select fused after a product (theta join) is SelectAgent over n = na * nb with
//   pred(o) = p(o / nb, o % nb) and emit(o, out) = e(o / nb, o % nb, out); see select.cuh.
#pragma once

#include <ranc/templates/common.cuh>

namespace ranc::tpl {

template <int BlockThreads, int ItemsPerThread>
using ProductPolicy = TilePolicy<BlockThreads, ItemsPerThread>;

template <class Policy>
struct ProductAgent {
  /// The hook of run() (contract.cuh).
  struct Hooks {
    __device__ void emit(i64 a_row, i64 b_row, i64 out_row) const;
  };
  static constexpr LaunchRule run_launch{Grid::tiles, "na * nb", Policy::block_threads};

  template <class Emit>
  __device__ __forceinline__ static void run(i64 na, i64 nb, Emit emit) {
    if (na <= 0 || nb <= 0) return;
    const i64 total = na * nb;
    i64 o = tile_base(Policy::tile_items) + threadIdx.x;
    if (o >= total) return;
    i64 a = o / nb;
    i64 b = o - a * nb;
#pragma unroll
    for (int k = 0; k < Policy::items_per_thread; ++k) {
      if (o < total) emit(a, b, o);
      o += Policy::block_threads;
      b += Policy::block_threads;
      if (b >= nb) {
        if (b < 2 * nb) {
          b -= nb;
          a += 1;
        } else {
          a += b / nb;
          b %= nb;
        }
      }
    }
  }
};

}  // namespace ranc::tpl
