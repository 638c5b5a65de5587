// ranc/templates/merge_path.cuh: merge-path partitioning of two sorted inputs and the block-level
// merge of one tile, plus the tile compactor used by merge-based skeletons with unknown output size.
//
// Inputs A (na rows) and B (nb rows) are sorted; the comparator hook sees row indices only, so a
// "row" can be a multi-column tuple:
//   Cmp: __device__ int operator()(long long i, long long j) const;  // A row i vs B row j: <0, 0, >0
// The merge is stable and takes A first on ties (A row i precedes B row j iff cmp(i, j) <= 0).
// Consequence used by set_ops.cuh: when A row i is output at merge position (i, j), every B row < A[i]
// is already out, so A[i] is in B iff j < nb && cmp(i, j) == 0; when B row j is output at (i, j),
// A[i-1] <= B[j], so B[j] is in A iff i > 0 && cmp(i - 1, j) == 0.
//
// Partition kernel (launch before any tile kernel that uses the partitions):
//   MergePathAgent<P>::partitions(na, nb, cmp, partitions) = merge_path_partitions(na, nb,
//   P::tile_items, cmp, partitions)
//   items = tiles + 1 where tiles = max(1, ceil((na + nb) / tile_items)); threads 256;
//   grid = ceil((tiles + 1) / 256). Buffer `partitions`: tiles + 1 int64 (A offsets of the diagonals
//   at tile boundaries; the B offset of boundary t is t * tile_items - partitions[t], clamped).
//   Each boundary's search probes the tile grid first (merge_path_search_grid: rows every
//   boundary's search shares, so they come from L2), then the one tile-wide bracket left.
//
// MergeTile<P>::merge(tile, na, nb, partitions, cmp, visit): each thread merges P::items_per_thread
// consecutive outputs of tile `tile` (blocked arrangement) and calls, in merged order,
//   visit(int k, bool from_b, long long i, long long j)   // the item is A[i] if !from_b, else B[j];
//                                                          // (i, j) = merge position before it
// for each of its items (k = item slot 0..IPT-1; slots past the end are not visited).
#pragma once

#include <ranc/templates/common.cuh>

namespace ranc::tpl {

template <int BlockThreads, int ItemsPerThread>
using MergePolicy = TilePolicy<BlockThreads, ItemsPerThread>;

/// Number of A rows among the first `diag` merged rows of A[a0, a1) and B[b0, b1) (A first on ties).
/// Returns an offset relative to a0.
template <class Cmp>
__device__ __forceinline__ i64 merge_path_search(i64 diag, i64 a0, i64 a1, i64 b0, i64 b1, Cmp cmp) {
  const i64 na = a1 - a0, nb = b1 - b0;
  i64 lo = max64(0, diag - nb), hi = min64(diag, na);
  while (lo < hi) {
    const i64 mid = lo + ((hi - lo) >> 1);
    if (cmp(a0 + mid, b0 + diag - 1 - mid) <= 0) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/// merge_path_search(diag, 0, na, 0, nb, cmp) for a diagonal diag = p * grid (or na + nb), in
/// two steps: first over the A offsets that are multiples of `grid`, then within the bracket of
/// `grid` offsets they leave. With diag a multiple of grid, the first step's probes are A[c *
/// grid] and B[(p - c) * grid - 1]: the same rows for every boundary's search, so after the
/// first searches they come from L2, and only the second step's (a range of grid rows, its last
/// probes in the same sectors) reach DRAM. A plain binary search over 2^29 rows sent each of
/// its last ~15 probes to DRAM at a random row (H100, a union of 2^28 + 2^28 rows: the
/// partition kernel took 1.2 ms of the 7.0 ms).
template <class Cmp>
__device__ __forceinline__ i64 merge_path_search_grid(i64 diag, i64 na, i64 nb, i64 grid, Cmp cmp) {
  i64 lo = max64(0, diag - nb), hi = min64(diag, na);
  // The answer is the first mid in [lo, hi) with cmp(mid, diag - 1 - mid) > 0, else hi.
  i64 c0 = (lo + grid - 1) / grid, c1 = hi > 0 ? (hi - 1) / grid + 1 : 0;  // c * grid in [lo, hi)
  const i64 first = c0;
  while (c0 < c1) {
    const i64 c = c0 + ((c1 - c0) >> 1);
    if (cmp(c * grid, diag - 1 - c * grid) <= 0) c0 = c + 1; else c1 = c;
  }
  // Every grid point below c0 * grid precedes the answer; c0 * grid (when below hi) does not.
  if (c0 > first) lo = max64(lo, (c0 - 1) * grid + 1);
  hi = min64(hi, c0 * grid);
  while (lo < hi) {
    const i64 mid = lo + ((hi - lo) >> 1);
    if (cmp(mid, diag - 1 - mid) <= 0) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/// Body of the partition kernel (see the header comment for the launch rule).
template <class Cmp>
__device__ __forceinline__ void merge_path_partitions(i64 na, i64 nb, i64 tile_items, Cmp cmp,
                                                      i64* partitions) {
  const i64 tiles = num_tiles(na + nb, tile_items);
  const i64 p = global_thread_index();
  if (p > tiles) return;
  const i64 diag = min64(p * tile_items, na + nb);
  partitions[p] = merge_path_search_grid(diag, na, nb, tile_items, cmp);
}

/// The partition kernel as a skeleton: the diagonals at the tile boundaries of policy P's tiles.
template <class Policy>
struct MergePathAgent {
  /// The hook of partitions() (contract.cuh).
  struct Hooks {
    __device__ int cmp(i64 i, i64 j) const;  // A row i vs B row j: <0, 0, >0
  };
  static constexpr LaunchRule partitions_launch{Grid::threads, "tiles + 1", 0};

  template <class Cmp>
  __device__ __forceinline__ static void partitions(i64 na, i64 nb, Cmp cmp, i64* partitions) {
    merge_path_partitions(na, nb, Policy::tile_items, cmp, partitions);
  }
};

template <class Policy>
struct MergeTile {
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;

  template <class Cmp, class Visit>
  __device__ __forceinline__ static void merge(i64 tile, i64 na, i64 nb, const i64* partitions, Cmp cmp,
                                               Visit visit) {
    const i64 diag0 = min64(tile * kTile, na + nb);
    const i64 diag1 = min64(diag0 + kTile, na + nb);
    const i64 a0 = partitions[tile], a1 = partitions[tile + 1];
    const i64 b0 = diag0 - a0, b1 = diag1 - a1;
    const i64 d = min64(static_cast<i64>(threadIdx.x) * kItems, diag1 - diag0);
    i64 i = a0 + merge_path_search(d, a0, a1, b0, b1, cmp);
    i64 j = b0 + (d - (i - a0));
    const int count = static_cast<int>(min64(kItems, diag1 - diag0 - d));
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      if (k < count) {
        const bool take_a = i < a1 && (j >= b1 || cmp(i, j) <= 0);
        visit(k, !take_a, i, j);
        if (take_a) ++i; else ++j;
      }
    }
  }
};

/// Order-preserving compaction of a tile whose items are in blocked arrangement (thread t holds
/// items t*IPT .. t*IPT+IPT-1), with decoupled look-back for the tile's global offset and output
/// staged in shared memory so emit writes are coalesced. Each kept item carries a tag (Tag: i64,
/// or int for tags relative to the tile, which take half the registers and staging) that is
/// handed back to emit(tag, out_pos). The last block of the grid writes *out_count.
template <class Policy, class Tag = i64>
struct TileCompactor {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;
  using BlockScanT = BlockScan<int, kThreads>;

  struct TempStorage {
    union {
      typename BlockScanT::TempStorage scan;
      Tag stage[kTile];
    } u;
    TilePrefix::TempStorage prefix;
  };

  template <bool CountOnly = false, class Emit>
  __device__ __forceinline__ static void run(TempStorage& temp, const bool (&keep)[kItems],
                                             const Tag (&tags)[kItems], TileState& state, i64* out_count,
                                             Emit emit) {
    int count = 0;
#pragma unroll
    for (int k = 0; k < kItems; ++k) count += keep[k] ? 1 : 0;
    int excl, aggregate;
    BlockScanT(temp.u.scan).ExclusiveSum(count, excl, aggregate);
    i64 inclusive;
    const i64 prefix = TilePrefix::run(temp.prefix, state, aggregate, inclusive);  // syncs
    if constexpr (!CountOnly) {
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        if (keep[k]) temp.u.stage[excl++] = tags[k];
      }
      __syncthreads();
      for (int j = threadIdx.x; j < aggregate; j += kThreads) emit(temp.u.stage[j], prefix + j);
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0 && out_count != nullptr) *out_count = inclusive;
  }
};

}  // namespace ranc::tpl
