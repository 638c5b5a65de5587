// ranc/templates/select.cuh: filter with order-preserving compaction (select), and map (project).
//
// SelectAgent: one pass, decoupled look-back. Each warp evaluates a contiguous run of 32*IPT rows
// with coalesced (warp-striped) accesses, ranks survivors with ballots, the block combines warp
// totals, the tile's global offset comes from the look-back over previous tiles, and survivors are
// staged in shared memory so that the emit phase writes consecutive output positions with
// consecutive threads (coalesced writes). Output order = input order (sorted inputs stay sorted).
//
// Hooks: SelectAgent::Hooks (pred: keep input row i < n?; emit: copy row i to output row o).
//
// Kernels the generator emits, in this order on one stream (P = the select policy):
//   1. init:   ranc::tpl::init_tile_state(tile_state, tiles)
//              items = tiles, threads 256, grid = max(1, ceil(tiles / 256))
//   2. select: SelectAgent<P>::run(temp, n, pred, emit, tile_state, out_count)
//              items = n, threads = P::block_threads, grid = tiles = max(1, ceil(n / P::tile_items))
//              (the grid must be exactly `tiles`: the last block writes *out_count)
// Buffers: tile_state: tile_state_elems(tiles) = 2 * (tiles + 32) int64;
//          out_count: 1 int64 (written by the kernel, no zeroing needed);
//          output columns: n rows (upper bound), or exact if the count is known some other way.
// Shared memory: `__shared__ typename SelectAgent<P>::TempStorage temp;` (4 * tile_items + ~200 B).
//
// Variants (template member run<Mode>): SelectMode::staged (default), SelectMode::direct (emit
// called in place with a non-coalesced output position; no staging area used), SelectMode::count_only
// (no emit; only *out_count, e.g. to size an output before a second pass).
//
// SelectValuesAgent<P>: the same pass staging the kept rows' output values (the generator uses
// it for rows of at most 8 bytes) instead of their row numbers. Hooks: pred(i); value(i) -> Row
// (called for kept rows only); store(o, row). TempStorageT<Row> (4 * tile_items * sizeof(Row) + ~200 B). Kernels and
// buffers as SelectAgent's.
//
// SharedSelectAgent<P, Outputs>: input sharing (fuse_pipelines). `Outputs` (1..4) selects over
// the same n rows in one pass: each warp evaluates every output's predicate on its rows (the rows'
// attributes are loaded once, the other predicates hit the cache), then per output the block
// ranks the survivors, looks back over that output's tile states and writes them staged, as
// SelectAgent does.
//   Hooks (SharedSelectAgent::Hooks): pred(out, i): keep row i in output `out`?;
//          emit(out, i, o): copy row i to row o of output `out`.
//   Kernels: 1. init: ranc::tpl::init_tile_states(tile_states, tiles, Outputs)
//               items = tiles, threads 256, grid = max(1, ceil(tiles / 256))
//            2. run(temp, n, pred, emit, tile_states, out_counts)
//               items = n, threads P::block_threads, grid = tiles = max(1, ceil(n / P::tile_items))
//   Buffers: tile_states: Outputs * tile_state_elems(tiles) int64 (output o's states at
//            o * tile_state_elems(tiles)); out_counts: Outputs int64 (written by the last block).
//
// MapAgent: out-of-place element-wise map (project, limit, fused project chains).
//   Hook f (MapAgent::Hooks): produce output row i.
//   Kernel: MapAgent<P>::run(n, f); items = n, threads P::block_threads,
//           grid = max(1, ceil(n / P::tile_items)). No scratch. limit(k) = map over min(k, n) rows.
//   map_grid_stride(n, f): any grid (e.g. fixed #SMs * 4 blocks), any block size.
#pragma once

#include <ranc/templates/common.cuh>

namespace ranc::tpl {

template <int BlockThreads, int ItemsPerThread>
using SelectPolicy = TilePolicy<BlockThreads, ItemsPerThread>;
template <int BlockThreads, int ItemsPerThread>
using MapPolicy = TilePolicy<BlockThreads, ItemsPerThread>;

enum class SelectMode { staged, direct, count_only };

/// Predicate that is always true (select = copy, e.g. for the staged gather of a whole relation).
struct AlwaysTrue {
  __device__ __forceinline__ bool operator()(i64) const { return true; }
};
/// Emit hook that does nothing (count-only selects).
struct NoEmit {
  __device__ __forceinline__ void operator()(i64, i64) const {}
};

/// The ranking step of SelectAgent and SelectValuesAgent: from each warp's ballots of its kept
/// rows, the warps' output offsets within the tile (one warp scans the warp totals) and the tile's
/// offset in the output (decoupled look-back). Every thread calls it; it synchronises the block.
template <int Warps>
struct SelectRank {
  struct TempStorage {
    TilePrefix::TempStorage prefix;
    int warp_total[Warps];
    int warp_offset[Warps];
  };
  /// Returns the tile's first output row; `inclusive` = that plus the tile's kept rows, and
  /// `warp_pos` the tile-relative output row of the calling warp's first kept row.
  template <int Items>
  __device__ __forceinline__ static i64 run(TempStorage& temp, TileState state,
                                            const unsigned (&masks)[Items], i64& inclusive,
                                            int& warp_pos) {
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    int warp_count = 0;
#pragma unroll
    for (int k = 0; k < Items; ++k) warp_count += __popc(masks[k]);
    if (lane == 0) temp.warp_total[warp] = warp_count;
    __syncthreads();

    i64 tile_count = 0;
    if (warp == 0) {
      int v = lane < Warps ? temp.warp_total[lane] : 0;
      int incl = v;
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        int o = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += o;
      }
      if (lane < Warps) temp.warp_offset[lane] = incl - v;
      tile_count = __shfl_sync(0xffffffffu, incl, 31);
    }
    const i64 prefix = TilePrefix::run(temp.prefix, state, tile_count, inclusive);
    warp_pos = temp.warp_offset[warp];
    return prefix;
  }
};

template <class Policy>
struct SelectAgent {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;
  static constexpr int kWarps = Policy::warps;
  static_assert(kItems <= 32, "SelectAgent: at most 32 items per thread");

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    __device__ bool pred(i64 row) const;               // keep input row `row` (< n)?
    __device__ void emit(i64 row, i64 out_row) const;  // copy input row `row` to out_row
  };
  /// Exactly `tiles` blocks, also for n == 0: the last block writes *out_count.
  static constexpr LaunchRule run_launch{Grid::tiles_exact, "n", Policy::block_threads};

  struct TempStorage {
    typename SelectRank<kWarps>::TempStorage rank;
    int stage[kTile];  // tile-local row offsets of survivors, in output order
  };

  template <SelectMode Mode = SelectMode::staged, class Pred, class Emit>
  __device__ __forceinline__ static void run(TempStorage& temp, i64 n, Pred pred, Emit emit,
                                             void* tile_state, i64* out_count) {
    TileState state = make_tile_state(tile_state);
    const i64 base = tile_base(kTile);
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const unsigned lt_mask = (1u << lane) - 1u;
    const i64 wbase = base + static_cast<i64>(warp) * 32 * kItems;

    // Every row's predicate first, then the ballots: the loads of all kItems rows are in
    // flight at once (a full tile, the common case, without a bound check per row).
    bool keep[kItems];
    if (base + kTile <= n) {
#pragma unroll
      for (int k = 0; k < kItems; ++k) keep[k] = pred(wbase + k * 32 + lane);
    } else {
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const i64 i = wbase + k * 32 + lane;
        keep[k] = i < n && pred(i);
      }
    }
    unsigned masks[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k) masks[k] = __ballot_sync(0xffffffffu, keep[k]);
    i64 inclusive;
    int pos;
    const i64 prefix = SelectRank<kWarps>::run(temp.rank, state, masks, inclusive, pos);
    const i64 tile_count = inclusive - prefix;

#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      if (masks[k] & (1u << lane)) {
        const int p = pos + __popc(masks[k] & lt_mask);
        const int local = warp * 32 * kItems + k * 32 + lane;
        if constexpr (Mode == SelectMode::staged) {
          temp.stage[p] = local;
        } else if constexpr (Mode == SelectMode::direct) {
          emit(base + local, prefix + p);
        }
      }
      pos += __popc(masks[k]);
    }
    if constexpr (Mode == SelectMode::staged) {
      __syncthreads();
      // Unrolled by the tile's bound so that the loads of several rows are in flight at once.
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const int j = k * kThreads + static_cast<int>(threadIdx.x);
        if (j < tile_count) emit(base + temp.stage[j], prefix + j);
      }
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0 && out_count != nullptr) *out_count = inclusive;
  }
};

/// SelectAgent that stages the kept rows' output values, not their row numbers: each thread
/// computes the output row of every kept row it evaluated (value(i), from the loads its predicate
/// made), writes it to the tile's stage in output order, and after one barrier consecutive threads
/// store consecutive output rows. The write phase reads no input again (SelectAgent's emit reads
/// each kept row's attributes once more, from L1 or L2). The stage holds a tile of rows (32 KB:
/// 4096 rows of 8 bytes with P::Select); the generator uses it for rows of at most 8 bytes (rows
/// of 9 to 16 bytes in tiles half as long measured slower than staging their row numbers).
template <class Policy>
struct SelectValuesAgent {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;
  static constexpr int kWarps = Policy::warps;
  static_assert(kItems <= 32, "SelectValuesAgent: at most 32 items per thread");

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    struct Row;                                         // the generator's output row
    __device__ bool pred(i64 in_row) const;                  // keep input row `in_row` (< n)?
    __device__ Row value(i64 in_row) const;                  // the output row of a kept row
    __device__ void store(i64 out_row, const Row& r) const;  // write it at out_row
  };
  /// Exactly `tiles` blocks, also for n == 0: the last block writes *out_count.
  static constexpr LaunchRule run_launch{Grid::tiles_exact, "n", Policy::block_threads};

  template <class Row>
  struct TempStorageT {
    typename SelectRank<kWarps>::TempStorage rank;
    Row stage[kTile];  // the kept rows' output values, in output order
  };

  template <class Row, class Pred, class Value, class Store>
  __device__ __forceinline__ static void run(TempStorageT<Row>& temp, i64 n, Pred pred, Value value,
                                             Store store, void* tile_state, i64* out_count) {
    static_assert(sizeof(Row) <= 16 && sizeof(Row) * kTile <= 40 * 1024,
                  "SelectValuesAgent: rows of at most 16 bytes, a stage of at most 40 KB");
    TileState state = make_tile_state(tile_state);
    const i64 base = tile_base(kTile);
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const unsigned lt_mask = (1u << lane) - 1u;
    const i64 wbase = base + static_cast<i64>(warp) * 32 * kItems;

    bool keep[kItems];
    Row rows[kItems];
    if (base + kTile <= n) {
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const i64 i = wbase + k * 32 + lane;
        keep[k] = pred(i);
        if (keep[k]) rows[k] = value(i);
      }
    } else {
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const i64 i = wbase + k * 32 + lane;
        keep[k] = i < n && pred(i);
        if (keep[k]) rows[k] = value(i);
      }
    }
    unsigned masks[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k) masks[k] = __ballot_sync(0xffffffffu, keep[k]);
    i64 inclusive;
    int pos;
    const i64 prefix = SelectRank<kWarps>::run(temp.rank, state, masks, inclusive, pos);
    const i64 tile_count = inclusive - prefix;

#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      if (masks[k] & (1u << lane)) temp.stage[pos + __popc(masks[k] & lt_mask)] = rows[k];
      pos += __popc(masks[k]);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int j = k * kThreads + static_cast<int>(threadIdx.x);
      if (j < tile_count) store(prefix + j, temp.stage[j]);
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0 && out_count != nullptr) *out_count = inclusive;
  }
};

template <class Policy, int Outputs>
struct SharedSelectAgent {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;
  static constexpr int kWarps = Policy::warps;
  static_assert(kItems <= 32, "SharedSelectAgent: at most 32 items per thread");
  static_assert(Outputs >= 1 && Outputs <= 4, "SharedSelectAgent: 1 to 4 outputs");

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    __device__ bool pred(int out, i64 row) const;               // keep row `row` in output `out`?
    __device__ void emit(int out, i64 row, i64 out_row) const;  // copy it to out_row of `out`
  };
  /// Exactly `tiles` blocks, also for n == 0: the last block writes out_counts.
  static constexpr LaunchRule run_launch{Grid::tiles_exact, "n", Policy::block_threads};

  struct TempStorage {
    TilePrefix::TempStorage prefix[Outputs];
    int warp_total[Outputs][kWarps];
    int warp_offset[Outputs][kWarps];
    int stage[kTile];
  };

  template <class Pred, class Emit>
  __device__ __forceinline__ static void run(TempStorage& temp, i64 n, Pred pred, Emit emit,
                                             void* tile_states, i64* out_counts) {
    const i64 tiles = gridDim.x;
    const i64 base = tile_base(kTile);
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const unsigned lt_mask = (1u << lane) - 1u;
    const i64 wbase = base + static_cast<i64>(warp) * 32 * kItems;

    // Every output's predicate on the warp's rows: one read of their attributes, all rows'
    // loads in flight before the ballots (as SelectAgent).
    bool keep[Outputs][kItems];
    if (base + kTile <= n) {
#pragma unroll
      for (int k = 0; k < kItems; ++k)
#pragma unroll
        for (int o = 0; o < Outputs; ++o) keep[o][k] = pred(o, wbase + k * 32 + lane);
    } else {
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const i64 i = wbase + k * 32 + lane;
#pragma unroll
        for (int o = 0; o < Outputs; ++o) keep[o][k] = i < n && pred(o, i);
      }
    }
    unsigned masks[Outputs][kItems];
    int warp_count[Outputs];
#pragma unroll
    for (int o = 0; o < Outputs; ++o) warp_count[o] = 0;
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
#pragma unroll
      for (int o = 0; o < Outputs; ++o) {
        masks[o][k] = __ballot_sync(0xffffffffu, keep[o][k]);
        warp_count[o] += __popc(masks[o][k]);
      }
    }
    if (lane == 0) {
#pragma unroll
      for (int o = 0; o < Outputs; ++o) temp.warp_total[o][warp] = warp_count[o];
    }
    __syncthreads();

    // The tile's counts, then every output's look-back before any output is written, so that
    // each output's tile prefix is published as early as SelectAgent publishes its one.
    i64 tile_count[Outputs], prefix[Outputs], inclusive[Outputs];
#pragma unroll
    for (int o = 0; o < Outputs; ++o) {
      tile_count[o] = 0;
      if (warp == 0) {
        const int v = lane < kWarps ? temp.warp_total[o][lane] : 0;
        int incl = v;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
          const int x = __shfl_up_sync(0xffffffffu, incl, d);
          if (lane >= d) incl += x;
        }
        if (lane < kWarps) temp.warp_offset[o][lane] = incl - v;
        tile_count[o] = __shfl_sync(0xffffffffu, incl, 31);
      }
    }
#pragma unroll
    for (int o = 0; o < Outputs; ++o) {
      TileState state = make_tile_state(static_cast<i64*>(tile_states) + o * tile_state_elems(tiles));
      prefix[o] = TilePrefix::run(temp.prefix[o], state, tile_count[o], inclusive[o]);
    }

#pragma unroll
    for (int o = 0; o < Outputs; ++o) {
      int pos = temp.warp_offset[o][warp];
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        if (masks[o][k] & (1u << lane))
          temp.stage[pos + __popc(masks[o][k] & lt_mask)] = warp * 32 * kItems + k * 32 + lane;
        pos += __popc(masks[o][k]);
      }
      __syncthreads();
      const i64 count = inclusive[o] - prefix[o];
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const int j = k * kThreads + static_cast<int>(threadIdx.x);
        if (j < count) emit(o, base + temp.stage[j], prefix[o] + j);
      }
      if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) out_counts[o] = inclusive[o];
      __syncthreads();  // the stage is the next output's
    }
  }
};

template <class Policy>
struct MapAgent {
  /// The hook of run() (contract.cuh).
  struct Hooks {
    __device__ void f(i64 row) const;  // produce output row `row` (< n)
  };
  static constexpr LaunchRule run_launch{Grid::tiles, "n", Policy::block_threads};

  template <class F>
  __device__ __forceinline__ static void run(i64 n, F f) {
    const i64 base = tile_base(Policy::tile_items);
#pragma unroll
    for (int k = 0; k < Policy::items_per_thread; ++k) {
      const i64 i = base + k * Policy::block_threads + threadIdx.x;
      if (i < n) f(i);
    }
  }
};

/// Grid-stride map for any launch configuration.
template <class F>
__device__ __forceinline__ void map_grid_stride(i64 n, F f) {
  for (i64 i = global_thread_index(); i < n; i += grid_stride()) f(i);
}

}  // namespace ranc::tpl
