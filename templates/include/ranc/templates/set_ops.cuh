// ranc/templates/set_ops.cuh: union / intersect / difference (and merge-all) of two sorted inputs.
//
// Preconditions: A and B are each sorted by the whole tuple, in the same order; duplicates within
// an input are allowed (the DupA/DupB hooks recognise them, so no distinct pass is needed first).
// Output: sorted and duplicate-free (for SetOp::merge_all: the stable merge of both inputs,
// duplicates kept). One pass per tile: merge path + order-preserving compaction with decoupled
// look-back (TileCompactor), no count-then-write.
//
// With A-first tie-breaking, a row A[i] is merged when B[0..j) < A[i] <= B[j], and a row B[j] when
// A[0..i) <= B[j] < A[i]. So A[i] is the first copy of its value when !DupA(i); it is in B when
// B[j] == A[i]; and B[j] is new to the union when !DupB(j) and A[i-1] != B[j].
//
// Hooks: SetOpAgent::Hooks (cmp, dup_a, dup_b, emit).
//
// Kernels, in order on one stream (P = merge policy, tiles = max(1, ceil((na + nb) / P::tile_items))):
//   1. init:       init_tile_state(tile_state, tiles)            items tiles, threads 256,
//                                                                 grid max(1, ceil(tiles / 256))
//   2. partition:  MergePathAgent<P>::partitions(na, nb, cmp, partitions)   (merge_path.cuh)
//                  items tiles + 1, threads 256, grid ceil((tiles + 1) / 256)
//   3. set op:     SetOpAgent<P, Op>::run(temp, na, nb, partitions, cmp, dup_a, dup_b, emit, tile_state,
//                                         out_count)
//                  threads P::block_threads, grid = tiles (exactly)
// Buffers: tile_state tile_state_elems(tiles) int64; partitions tiles + 1 int64; out_count 1 int64.
// Output columns sized by the upper bound: union/merge_all na + nb, intersect min(na, nb),
// difference na. The exact size is *out_count.
#pragma once

#include <ranc/templates/merge_path.cuh>

namespace ranc::tpl {

enum class SetOp { set_union, set_intersect, set_difference, merge_all };

template <class Policy, SetOp Op>
struct SetOpAgent {
  static constexpr int kItems = Policy::items_per_thread;
  using Compactor = TileCompactor<Policy>;
  using TempStorage = typename Compactor::TempStorage;

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    __device__ int cmp(i64 i, i64 j) const;  // A row i vs B row j, whole tuple: <0, 0, >0
    __device__ bool dup_a(i64 i) const;      // i > 0 and A row i equals A row i - 1
    __device__ bool dup_b(i64 j) const;      // j > 0 and B row j equals B row j - 1 (false when
                                             // the input is known to be duplicate-free)
    // Copy A row `row` (from_b false) or B row `row` (from_b true) to output row out_row.
    __device__ void emit(bool from_b, i64 row, i64 out_row) const;
  };
  /// Exactly `tiles` blocks, also for empty inputs: the last block writes *out_count.
  static constexpr LaunchRule run_launch{Grid::tiles_exact, "na + nb", Policy::block_threads};

  template <class Cmp, class DupA, class DupB, class Emit>
  __device__ __forceinline__ static void run(TempStorage& temp, i64 na, i64 nb, const i64* partitions,
                                             Cmp cmp, DupA dup_a, DupB dup_b, Emit emit, void* tile_state,
                                             i64* out_count) {
    TileState state = make_tile_state(tile_state);
    bool keep[kItems];
    i64 tags[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      keep[k] = false;
      tags[k] = 0;
    }
    MergeTile<Policy>::merge(tile_index(), na, nb, partitions, cmp, [&](int k, bool from_b, i64 i, i64 j) {
      bool kept;
      if (!from_b) {
        if constexpr (Op == SetOp::merge_all) {
          kept = true;
        } else {
          kept = !dup_a(i);
          if (Op != SetOp::set_union && kept) {
            const bool in_b = j < nb && cmp(i, j) == 0;
            kept = Op == SetOp::set_intersect ? in_b : !in_b;
          }
        }
        tags[k] = i;
      } else {
        if constexpr (Op == SetOp::set_union) {
          kept = !dup_b(j) && !(i > 0 && cmp(i - 1, j) == 0);
        } else {
          kept = Op == SetOp::merge_all;
        }
        tags[k] = ~j;  // negative tags mark B rows
      }
      keep[k] = kept;
    });
    Compactor::run(temp, keep, tags, state, out_count, [&](i64 tag, i64 o) {
      if (tag >= 0) emit(false, tag, o); else emit(true, ~tag, o);
    });
  }
};

}  // namespace ranc::tpl
