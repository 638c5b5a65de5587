// ranc/templates/reduce.cuh: segmented reduction (group-by) over input sorted by the group key.
//
// A row starts a group (a "head") if it is row 0 or same_group(i, i - 1) is false. Groups are
// numbered by their heads' order, so the output is sorted like the input. Two phases:
//   phase 1 (ReduceAgent, one block per tile): head flags, a block-wide segmented scan of
//     aggregate states, the global group number of every head through decoupled look-back over head
//     counts. Groups that end inside the tile are finished and emitted directly. A group still open
//     at the end of the tile stores its partial state in tail[tile]; the rows of a tile before its
//     first head (the end of a group begun in an earlier tile) store their state in carry[tile].
//     A tile of many small groups (fewer than 5 rows a group) whose release hook hands back a
//     staged copy (a key column) defers its emits instead: after the scan it folds its rows again,
//     collects a window of finished groups in that copy and emits them with the whole block in
//     group order, so a warp's stores land in consecutive rows (H200, 2^28 rows, sums of i32:
//     one row a group 9.7 -> 2.4 ms, four 2.0 -> 1.5 ms; CUB ReduceByKey 1.56 and 1.23 ms).
//   phase 2 (ReduceFixupAgent, one thread per tile): for every tile whose last group spills over,
//     merges carry[] of the following tiles up to the tile containing the next head (its carry is the
//     identity when that head is the tile's first row), and emits it.
//     (A group spanning T tiles costs T merges in one thread: fine for realistic skew; a group of
//     2^30 rows with 1024-row tiles is ~1M merges, a few ms.)
//
// Hooks: ReduceAgent::Hooks (same, agg, emit, stage, release) and ReduceFixupAgent::Hooks (agg,
// emit); the aggregate `agg` is a ReduceHooks::Agg (State: trivially copyable, default
// constructible; use 8-byte fields so sizeof is a multiple of 8; avg = a sum field and a count
// field, divided in emit). ReduceAgent folds at most kItems rows into a state with accumulate (from init()); all
// other combining is merge, so a state may accumulate in a narrower type than it merges in.
// Reduction with no group keys: same_group always true (one group if n > 0, none if n == 0; the
// generator emits the SQL "one row over empty input" itself if it wants it).
//
// Kernels, in order on one stream (P = reduce policy, tiles = max(1, ceil(n / P::tile_items))):
//   1. init:   init_tile_state(tile_state, tiles)      items tiles, threads 256, grid ceil(tiles/256)
//   2. reduce: ReduceAgent<P>::run(temp, n, same, agg, emit, tile_state, carry, tail, meta, out_count,
//                                  stage, release)
//              threads P::block_threads, grid = tiles (exactly)
//   3. fixup:  ReduceFixupAgent::run(tiles, agg, emit, carry, tail, meta)
//              items tiles, threads 256, grid = max(1, ceil(tiles / 256))
// Buffers: tile_state tile_state_elems(tiles) int64; carry and tail: tiles * sizeof(State) bytes each
//          (void* parameters); meta: 3 * tiles int64; out_count: 1 int64 = number of groups.
// Output columns: sized by n (upper bound on groups) or by *out_count read back after kernel 2.
//
// GlobalReduceAgent: the reduction with no group keys, at the end of any pipeline (no order
// needed, no look-back). Phase 1, one block per tile: every thread folds the rows the Keep hook
// keeps (warp-striped, coalesced), the block merges its threads' states (BlockReduce, block.cuh) and
// writes partials[tile]. Phase 2 (GlobalReduceFinish, one block): merges the partials in tile
// order and calls emit(state) once. Deterministic for a given tiling (floating-point sums are
// added in a fixed tree order, which differs from a sequential order).
//   Hooks: GlobalReduceAgent::Hooks (keep, agg; accumulate is called only on kept rows),
//          GlobalReduceFinish::Hooks (agg, emit: the state of all kept rows).
// Kernels: 1. GlobalReduceAgent<P>::run(temp, n, keep, agg, partials)   grid = tiles, P threads
//          2. GlobalReduceFinish<T>::run(temp, tiles, agg, partials, emit) grid 1, T threads
// Buffers: partials tiles * sizeof(State) bytes (void*).
#pragma once

#include <ranc/templates/common.cuh>

namespace ranc::tpl {

template <int BlockThreads, int ItemsPerThread>
using ReducePolicy = TilePolicy<BlockThreads, ItemsPerThread>;

/// The aggregate hook `agg` of the reduce skeletons (contract.cuh): an object the generator writes.
struct ReduceHooks {
  struct State;  // the generator's aggregate state
  struct Agg {
    using State = ReduceHooks::State;
    __device__ State init() const;                          // identity
    __device__ void accumulate(State& s, i64 row) const;    // fold one row in
    __device__ void merge(State& a, const State& b) const;  // a = a (+) b, b later
  };
};

/// The aggregate hook of a stage that only merges states (GlobalReduceFinish): any Agg of the
/// reduce or join-reduce skeletons.
struct MergeHooks {
  struct State;  // the generator's aggregate state
  struct Agg {
    using State = MergeHooks::State;
    __device__ State init() const;                          // identity
    __device__ void merge(State& a, const State& b) const;  // a = a (+) b, b later
  };
};

template <class State>
struct SegmentItem {
  i64 head_row;  // the last group head in the covered rows; -1 when they contain none
  State state;   // aggregate of the rows since that head (or of all rows when head_row < 0)
};

template <class Agg>
struct SegmentOp {
  Agg agg;
  using Item = SegmentItem<typename Agg::State>;
  __device__ __forceinline__ Item operator()(const Item& a, const Item& b) const {
    if (b.head_row >= 0) return b;
    Item r = a;
    agg.merge(r.state, b.state);
    return r;
  }
};

/// ReduceAgent's kDeferRowsPerGroup: Policy::defer_rows_per_group where the policy has one (a
/// benchmark's or a tuning's), else 5.
template <class Policy, class = void>
struct DeferRowsPerGroup {
  static constexpr int value = 5;
};
template <class Policy>
struct DeferRowsPerGroup<Policy, decltype(void(Policy::defer_rows_per_group))> {
  static constexpr int value = Policy::defer_rows_per_group;
};

template <class Policy>
struct ReduceAgent {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;
  static_assert(kItems < 32, "ReduceAgent: head flags are bits of one word");
  using CountScan = BlockScan<int, kThreads>;

  template <class State>
  struct TempStorageT {
    typename BlockScan<SegmentItem<State>, kThreads>::TempStorage seg_scan;
    typename CountScan::TempStorage count_scan;
    TilePrefix::TempStorage prefix;
    int open_last;  // deferred emits: the tile's last group continues past it (1) or ends (0)
  };
  // A tile of fewer than kDeferRowsPerGroup rows a group (more than kTile / kDeferRowsPerGroup
  // heads) whose release hook frees shared memory for at least kMinWindow groups defers its
  // groups' stores: each thread storing the groups it finishes scatters a warp's stores over as
  // many sectors as lanes (H200, 2^28 rows, one row a group: 9.7 ms against CUB's 1.55). 5 by
  // default (DeferRowsPerGroup), from reduce_tile_bench's kernels with six blocks an SM (H200,
  // session 47, 2^28 rows, ms): groups of random sizes averaging 5 / 6 / 8 rows took 1.53 /
  // 1.48 / 1.36 deferred below 5 against 1.60 / 1.57 / 1.44 below 8 (the default until then),
  // 4 and 4.5 rows the same both ways; groups of exactly 4 rows 1.55 deferred, 1.97 in place;
  // of exactly 5, 1.34 in place, 1.44 deferred.
  static constexpr int kDeferRowsPerGroup = DeferRowsPerGroup<Policy>::value;
  static_assert(kDeferRowsPerGroup >= 1, "ReduceAgent: defer_rows_per_group must be positive");
  static constexpr int kMinWindow = kThreads / 4 > 0 ? kThreads / 4 : 1;

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    using State = ReduceHooks::State;
    __device__ bool same(i64 i, i64 j) const;  // rows i and j = i - 1 are in one group
    ReduceHooks::Agg agg;
    // Output row `group`: key columns from input row first_row, aggregates finalised from s.
    __device__ void emit(i64 group, i64 first_row, const State& s) const;
    // Called by every thread before any other hook with the rows [lo, hi) the tile's hooks
    // read (same(r, r - 1) for the tile's rows and the row after it, accumulate and emit's
    // first row within the tile). It may copy those rows of the columns the hooks read into
    // shared memory (stage_rows, common.cuh) and point the hooks at the copy; it returns
    // whether it did (then the block synchronises). Thread t folds rows t * kItems onwards,
    // so with an odd kItems its shared-memory reads of 4-byte values hit 32 distinct banks.
    __device__ bool stage(i64 lo, i64 hi);
    // Called by every thread, only when stage() returned true and the tile has many groups
    // (block-uniform), after same() has read every row it reads and before any emit: it may
    // hand back a staged copy that accumulate does not read (a key column), pointing the
    // hooks that read it (emit) at global memory again: `mem` its start (16-byte aligned), the
    // result its size in bytes (0: none). run() then collects the tile's finished groups there
    // after the fold, a window at a time, and stores each window with the whole block in group
    // order (consecutive groups by consecutive threads).
    __device__ int release(void*& mem);
  };
  /// The rows the hooks of one tile read: [stage_lo(n), stage_hi(n)), at most max_stage_rows.
  static constexpr i64 max_stage_rows = kTile + 2;
  __device__ __forceinline__ static i64 stage_lo(i64 n) { return min64(max64(tile_base(kTile) - 1, 0), n); }
  __device__ __forceinline__ static i64 stage_hi(i64 n) { return min64(tile_base(kTile) + kTile + 1, n); }
  /// Exactly `tiles` blocks, also for n == 0: the last block writes *out_count.
  static constexpr LaunchRule run_launch{Grid::tiles_exact, "n", Policy::block_threads};

  // Each thread takes kItems consecutive rows. In order:
  //   0. the stage hook (Hooks::stage) may copy the tile's rows into shared memory;
  //   1. head flags (bits of one word) and their count; the block's exclusive sum of the
  //      counts and the look-back over tiles give every head its global group number, so
  //   2. one pass folds each row once: a group whose head and end are both in the thread's
  //      rows is emitted right there; the rows before the thread's first head (`pre`) and
  //      the open group after its last head (`cur`) are what the threads share:
  //   3. a block-wide segmented scan of (last head, state) hands each thread the state of
  //      the group its first rows continue, which ends in this thread (emit, or carry[]
  //      when its head is in an earlier tile) or at the tile's end (tail[] or carry[]);
  //   4. a tile of many groups whose release hook gave back memory (it deferred the emits of
  //      2 and 3) folds its rows again (from the staged copies) a window of groups at a time,
  //      collects the window's finished groups in that memory and stores them block-wide.
  // Only two states per thread are live (no per-row states): the registers decide the
  // occupancy, and the occupancy the memory parallelism.
  template <class SameGroup, class Agg, class Emit, class Stage, class Release>
  __device__ __forceinline__ static void run(TempStorageT<typename Agg::State>& temp, i64 n, SameGroup same,
                                             Agg agg, Emit emit, void* tile_state, void* carry_buf,
                                             void* tail_buf, i64* meta, i64* out_count, Stage stage,
                                             Release release) {
    using State = typename Agg::State;
    using Item = SegmentItem<State>;
    TileState ts = make_tile_state(tile_state);
    State* carry = static_cast<State*>(carry_buf);
    State* tail = static_cast<State*>(tail_buf);
    const i64 tile = tile_index();
    const i64 base = tile_base(kTile);
    const i64 tile_last = min64(base + kTile, n) - 1;  // < base when the tile is empty (n == 0)
    const bool staged = stage(stage_lo(n), stage_hi(n));
    if (staged) __syncthreads();
    const i64 first = base + static_cast<i64>(threadIdx.x) * kItems;
    // The thread's rows: first .. first + valid - 1.
    const int valid = static_cast<int>(max64(0, min64(static_cast<i64>(kItems), tile_last - first + 1)));

    // 1. Bit k: row first + k starts a group, for k <= valid (bit `valid`: the row after the
    // thread's last row starts one or does not exist, so the thread's last group ends there).
    unsigned head = 0;
    if (valid > 0) {
#pragma unroll
      for (int k = 0; k <= kItems; ++k) {
        const i64 r = first + k;
        if (k <= valid && (r >= n || r == 0 || !same(r, r - 1))) head |= 1u << k;
      }
    }
    const unsigned rows_mask = (1u << valid) - 1;
    int heads_before, tile_heads;
    CountScan(temp.count_scan).ExclusiveSum(__popc(head & rows_mask), heads_before, tile_heads);
    i64 inclusive;
    const i64 prefix = TilePrefix::run(temp.prefix, ts, static_cast<i64>(tile_heads), inclusive);
    // Deferred emits (4): the window's groups, window_cap of them at a time (block-uniform).
    // The count scan's barriers separate same()'s last reads of the released copy from here.
    void* window_mem = nullptr;
    int window_cap = 0;
    if (staged && static_cast<i64>(tile_heads) * kDeferRowsPerGroup > kTile) {
      window_cap = release(window_mem) / static_cast<int>(sizeof(State) + sizeof(unsigned));
      if (window_cap < kMinWindow) window_cap = 0;
    }

    // carry[tile] must be defined for every tile the fixup may visit: when the tile's first
    // row starts a group, the rows "before its first head" are none.
    if (threadIdx.x == 0 && valid > 0 && (head & 1u)) carry[tile] = agg.init();

    const bool defer = window_cap > 0;

    // 2. Fold the rows; emit the groups that start and end in them (unless deferred: the
    // loop is compiled twice so that the direct one tests no flag a row).
    State pre = agg.init(), cur = agg.init();
    i64 cur_head = -1;
    i64 group = prefix + heads_before - 1;  // the number of the group cur_head starts
    if (defer)
      fold_rows<false>(agg, emit, head, valid, first, pre, cur, cur_head, group);
    else
      fold_rows<true>(agg, emit, head, valid, first, pre, cur, cur_head, group);

    // 3. The group the thread's first rows continue.
    Item carry_in;
    const Item identity{-1, agg.init()};
    BlockScan<Item, kThreads>(temp.seg_scan).ExclusiveScan(Item{cur_head, cur}, carry_in, identity,
                                                           SegmentOp<Agg>{agg});
    const bool holds_last = valid > 0 && first + valid - 1 == tile_last;
    const unsigned ends = head & (rows_mask | (1u << valid));  // bits 1..valid: a group ends before
    if (valid > 0 && !(head & 1u)) {
      // Rows first .. first + e - 1 belong to the group of carry_in (e >= 1).
      State s = carry_in.state;
      agg.merge(s, cur_head >= 0 ? pre : cur);
      if (ends != 0) {  // it ends in this thread
        if (carry_in.head_row < 0)
          carry[tile] = s;  // begun in an earlier tile: the fixup finishes it
        else if (!defer)
          emit(prefix + heads_before - 1, carry_in.head_row, s);
      } else if (holds_last) {  // open at the tile's end, and no head in this thread
        if (carry_in.head_row >= 0) {
          tail[tile] = s;
          meta[3 * tile + 0] = prefix + heads_before - 1;
          meta[3 * tile + 1] = carry_in.head_row;
        } else {  // no head in the whole tile
          carry[tile] = s;
          meta[3 * tile + 0] = -1;
          meta[3 * tile + 1] = -1;
        }
      }
    }
    if (holds_last && cur_head >= 0) {
      // The group of the thread's last head: ended (emitted above) or open at the tile's end.
      const bool open = !((head >> valid) & 1u);
      if (open) tail[tile] = cur;
      meta[3 * tile + 0] = open ? group : -1;
      meta[3 * tile + 1] = cur_head;
    } else if (holds_last && ends != 0) {
      // No head in the thread, its first rows' group ends at the tile's last row.
      meta[3 * tile + 0] = -1;
      meta[3 * tile + 1] = -1;
    }
    if (threadIdx.x == 0) {
      meta[3 * tile + 2] = tile_heads;
      if (tile_last < base) {
        meta[3 * tile + 0] = -1;
        meta[3 * tile + 1] = -1;
      }
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0 && out_count != nullptr) *out_count = inclusive;
    if (!defer) return;

    // 4. Deferred emits. The tile's finished groups are its groups 0 .. tile_heads - 1 (by
    // number in the tile), less the last when it continues past the tile. This thread
    // finishes those of its heads that end in it and, when its first row is no head, the
    // group of carry_in (number heads_before - 1) if that began in this tile; it folds its
    // rows again for each window that holds one of them, with carry_in's state in front of
    // its first rows.
    State* wstate = static_cast<State*>(window_mem);
    unsigned* wfirst = reinterpret_cast<unsigned*>(wstate + window_cap);  // first row - base
    if (holds_last) temp.open_last = (head >> valid) & 1u ? 0 : 1;
    const int my_lo = heads_before - 1, my_hi = heads_before + __popc(head & rows_mask);
    for (int w0 = 0; w0 < tile_heads; w0 += window_cap) {
      const int w1 = w0 + window_cap;
      if (valid > 0 && my_lo < w1 && my_hi > w0) {
        State c = agg.init();
        int c_head = -1;  // the row of c's group (relative to first); -1: carry_in's group
        int local = heads_before - 1;
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
          if (k < valid) {
            if ((head >> k) & 1u) {
              c = agg.init();
              c_head = k;
              ++local;
            }
            agg.accumulate(c, first + k);
            if ((head >> (k + 1)) & 1u) {  // a group ends at row first + k
              if (c_head >= 0) {
                if (local >= w0 && local < w1) {
                  wstate[local - w0] = c;
                  wfirst[local - w0] = static_cast<unsigned>(first + c_head - base);
                }
              } else if (carry_in.head_row >= 0 && local >= w0 && local < w1) {
                State s = carry_in.state;
                agg.merge(s, c);
                wstate[local - w0] = s;
                wfirst[local - w0] = static_cast<unsigned>(carry_in.head_row - base);
              }
            }
          }
        }
      }
      __syncthreads();
      const int done = min(w1, tile_heads - temp.open_last);
      for (int i = w0 + static_cast<int>(threadIdx.x); i < done; i += kThreads)
        emit(prefix + i, base + wfirst[i - w0], wstate[i - w0]);
      __syncthreads();  // the window's slots are read before the next window writes them
    }
  }

 private:
  // Step 2 of run(): folds the thread's rows first .. first + valid - 1 (head: their head
  // bits) into pre (the rows before the first head) and cur (the group of the last head, which
  // starts at row cur_head and is number `group`); with kEmit, emits each group that starts
  // and ends in them.
  template <bool kEmit, class Agg, class Emit>
  __device__ __forceinline__ static void fold_rows(Agg agg, Emit emit, unsigned head, int valid, i64 first,
                                                   typename Agg::State& pre, typename Agg::State& cur,
                                                   i64& cur_head, i64& group) {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      if (k < valid) {
        const i64 r = first + k;
        if ((head >> k) & 1u) {
          if (cur_head < 0) pre = cur;
          cur = agg.init();
          cur_head = r;
          ++group;
        }
        agg.accumulate(cur, r);
        if constexpr (kEmit)
          if (((head >> (k + 1)) & 1u) && cur_head >= 0) emit(group, cur_head, cur);
      }
    }
  }
};

struct ReduceFixupAgent {
  /// The hooks of run() (contract.cuh): those of ReduceAgent.
  struct Hooks {
    using State = ReduceHooks::State;
    ReduceHooks::Agg agg;
    __device__ void emit(i64 group, i64 first_row, const State& s) const;
  };
  /// One thread per tile.
  static constexpr LaunchRule run_launch{Grid::threads, "tiles", 0};

  template <class Agg, class Emit>
  __device__ __forceinline__ static void run(i64 tiles, Agg agg, Emit emit, const void* carry_buf,
                                             const void* tail_buf, const i64* meta) {
    using State = typename Agg::State;
    const State* carry = static_cast<const State*>(carry_buf);
    const State* tail = static_cast<const State*>(tail_buf);
    const i64 t = global_thread_index();
    if (t >= tiles) return;
    const i64 group = meta[3 * t];
    if (group < 0) return;
    State s = tail[t];
    for (i64 k = t + 1; k < tiles; ++k) {
      agg.merge(s, carry[k]);
      if (meta[3 * k + 2] > 0) break;
    }
    emit(group, meta[3 * t + 1], s);
  }
};

/// Merge operator over states for BlockReduce.
template <class Agg>
struct MergeOp {
  Agg agg;
  __device__ __forceinline__ typename Agg::State operator()(const typename Agg::State& a,
                                                            const typename Agg::State& b) const {
    typename Agg::State r = a;
    agg.merge(r, b);
    return r;
  }
};

/// Merges the block's per-thread states `s` (BlockReduce in tree order) and has thread 0 write
/// the result to partials[slot] (a GlobalReduceFinish input). Call from all threads.
template <int Threads, class Agg>
__device__ __forceinline__ void store_block_state(
    typename BlockReduce<typename Agg::State, Threads>::TempStorage& temp, const typename Agg::State& s,
    Agg agg, void* partials, i64 slot) {
  using State = typename Agg::State;
  const State total = BlockReduce<State, Threads>(temp).Reduce(s, MergeOp<Agg>{agg});
  if (threadIdx.x == 0) static_cast<State*>(partials)[slot] = total;
}

template <class Policy>
struct GlobalReduceAgent {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;

  template <class State>
  struct TempStorageT {
    typename BlockReduce<State, kThreads>::TempStorage reduce;
  };

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    __device__ bool keep(i64 row) const;  // the row takes part (a fused select)
    ReduceHooks::Agg agg;
  };
  /// Exactly `tiles` blocks: every tile writes its partial state.
  static constexpr LaunchRule run_launch{Grid::tiles_exact, "n", Policy::block_threads};

  template <class Keep, class Agg>
  __device__ __forceinline__ static void run(TempStorageT<typename Agg::State>& temp, i64 n, Keep keep, Agg agg,
                                             void* partials_buf) {
    using State = typename Agg::State;
    const i64 base = tile_base(kTile);
    State s = agg.init();
    // Every row's keep first, then the kept rows' values: the loads of each phase are
    // independent of each other, so a thread has kItems of them in flight at once.
    bool kept[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const i64 i = base + k * kThreads + threadIdx.x;
      kept[k] = i < n && keep(i);
    }
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      if (kept[k]) agg.accumulate(s, base + k * kThreads + threadIdx.x);
    store_block_state<kThreads>(temp.reduce, s, agg, partials_buf, tile_index());
  }
};

template <int BlockThreads>
struct GlobalReduceFinish {
  template <class State>
  struct TempStorageT {
    typename BlockReduce<State, BlockThreads>::TempStorage reduce;
  };

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    using State = MergeHooks::State;
    MergeHooks::Agg agg;
    __device__ void emit(const State& s) const;  // the state of all kept rows
  };
  static constexpr LaunchRule run_launch{Grid::one_block, "tiles", BlockThreads};

  template <class Agg, class Emit>
  __device__ __forceinline__ static void run(TempStorageT<typename Agg::State>& temp, i64 tiles, Agg agg,
                                             const void* partials_buf, Emit emit) {
    using State = typename Agg::State;
    const State* partials = static_cast<const State*>(partials_buf);
    State s = agg.init();
    for (i64 t = threadIdx.x; t < tiles; t += BlockThreads) agg.merge(s, partials[t]);
    const State total = BlockReduce<State, BlockThreads>(temp.reduce).Reduce(s, MergeOp<Agg>{agg});
    if (threadIdx.x == 0) emit(total);
  }
};

}  // namespace ranc::tpl
