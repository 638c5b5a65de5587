// ranc/templates/join_reduce.cuh: a reduction with no group keys folded into the write stage of
// the one-pass sort-merge join (join.cuh's JoinMergeAgent): the matches are never written.
//
// JoinMergeReduceAgent runs JoinMergeAgent's merge of one tile of left rows (the left input
// sorted by the join keys) with an emit that folds the match (l, r) into the thread's aggregate
// state (agg.fold, which also applies the stages fused after the join: a select's predicate, a
// project's expressions), then merges the block's states (BlockReduce) and writes
// partials[tile]. The merge still publishes its tiles' match counts by look-back and lists the
// tiles of heavy keys with their rows' ranges, as JoinMergeAgent does; JoinHeavyReduceAgent
// folds those over a fixed grid (one heavy key's matches spread over every block) and writes
// one partial per block. GlobalReduceFinish (reduce.cuh) merges all partials.
//
// Hooks: JoinMergeReduceAgent::Hooks (cmp, keep, agg, out_of_order), JoinHeavyReduceAgent::Hooks
// (agg); agg is a JoinFoldHooks::Agg: ReduceHooks::Agg with the match (l, r) in place of a row.
// Integer sums: a thread folds the matches of its rows (at most JoinMergeAgent::kHeavy a tile) or
// of its heavy-key chunks before its state is merged; merges check for overflow (reduce.cuh).
//
// Kernels, in order on one stream (C = JoinCount policy, ctiles = max(1, ceil(nl / C::tile_items)),
// H = any fixed number of blocks):
//   0. ranges: JoinTileRangeAgent<C>::run(nl, nr, 2 * ctiles, cmp, keep, ranges) (join.cuh)
//   1. merge:  JoinMergeReduceAgent<C>::run(temp, nl, nr, cmp, keep, lword, rword, agg, header, lo, offsets,
//              ranges, partials)   threads C::block_threads, grid = ctiles (exactly); partials[0, ctiles)
//   2. heavy:  JoinHeavyReduceAgent<C>::run(temp, nl, ctiles, header, lo, offsets, agg,
//              partials + ctiles * sizeof(State))   threads C::block_threads, grid = H;
//              partials[ctiles, ctiles + H)
//   3. finish: GlobalReduceFinish<T>::run(temp, ctiles + H, agg, partials, emit)   one block
// Buffers: header 68 + 3 * ctiles int64 (JoinMergeAgent's layout), zeroed; lo, offsets nl int64
// (written for heavy tiles only); ranges 2 * ctiles int64; partials (ctiles + H) * sizeof(State)
// bytes.
//
// HashJoinReduceAgent does the same for the partitioned hash join (hash_join.cuh): its join kernel
// (step 5 there, the same grid and dynamic shared memory) passes every match to agg.fold instead of
// claiming output rows, each block writes partials[blockIdx.x], and GlobalReduceFinish merges the
// grid's partials. A thread merges its state into a second one every kFoldsPerState matches, so an
// integer sum's state folds a bounded number of values between the checked merges whatever the
// skew (a heavy key's matches all fold in the threads probing it).
#pragma once

#include <ranc/templates/hash_join.cuh>
#include <ranc/templates/join.cuh>
#include <ranc/templates/reduce.cuh>

namespace ranc::tpl {

/// The aggregate hook `agg` of the join reductions (contract.cuh): an object the generator writes.
struct JoinFoldHooks {
  struct State;  // the generator's aggregate state
  struct Agg {
    using State = JoinFoldHooks::State;
    __device__ State init() const;                          // identity
    __device__ void fold(State& s, i64 l, i64 r) const;     // fold the match (l, r) in, if kept
    __device__ void merge(State& a, const State& b) const;  // a = a (+) b, b later
  };
};

/// No output to outgrow: JoinMergeAgent's capacity for a fold.
constexpr i64 kUnboundedCapacity = 0x7fffffffffffffffll;

template <class Policy>
struct JoinMergeReduceAgent {
  static constexpr int kThreads = Policy::block_threads;
  using Merge = JoinMergeAgent<Policy>;

  template <class State>
  struct TempStorageT {
    typename Merge::TempStorage merge;
    typename BlockReduce<State, kThreads>::TempStorage reduce;
  };

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    __device__ int cmp(i64 l, i64 r) const;  // left key of row l vs right key of row r
    __device__ bool keep(i64 l) const;       // left row l takes part (a chain fused before the join)
    __device__ u64 lword(i64 l) const;       // packed join keys, as JoinMergeAgent's (NoKeyWords: none)
    __device__ u64 rword(i64 r) const;
    JoinFoldHooks::Agg agg;
    __device__ bool out_of_order(i64 l) const;  // as JoinMergeAgent's
  };
  /// Exactly `tiles` blocks: every tile writes its partial state.
  static constexpr LaunchRule run_launch{Grid::tiles_exact, "nl", Policy::block_threads};

  template <class Cmp, class Keep, class LWord, class RWord, class Agg, class OutOfOrder = NoOrderCheck>
  __device__ __forceinline__ static void run(TempStorageT<typename Agg::State>& temp, i64 nl, i64 nr, Cmp cmp,
                                             Keep keep, LWord lword, RWord rword, Agg agg, i64* header,
                                             i64* lo_out, i64* offsets,
                                             const i64* tile_ranges, void* partials_buf,
                                             OutOfOrder out_of_order = {}, int* order_flag = nullptr) {
    using State = typename Agg::State;
    State s = agg.init();
    Merge::run(temp.merge, nl, nr, cmp, keep, lword, rword, [&](i64 l, i64 r, i64) { agg.fold(s, l, r); },
               header, lo_out, offsets, kUnboundedCapacity, tile_ranges, out_of_order, order_flag);
    // Every path of Merge::run returns with the whole block (its branches are block-uniform).
    store_block_state<kThreads>(temp.reduce, s, agg, partials_buf, tile_index());
  }
};

template <class Policy>
struct JoinHeavyReduceAgent {
  static constexpr int kThreads = Policy::block_threads;
  using Heavy = JoinHeavyExpandAgent<Policy>;

  template <class State>
  struct TempStorageT {
    typename Heavy::TempStorage heavy;
    typename BlockReduce<State, kThreads>::TempStorage reduce;
  };

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    JoinFoldHooks::Agg agg;
  };
  /// A fixed grid: blocks share the heavy tiles' chunks; each writes partials[blockIdx.x].
  static constexpr LaunchRule run_launch{Grid::strided, "tiles", Policy::block_threads};

  template <class Agg>
  __device__ __forceinline__ static void run(TempStorageT<typename Agg::State>& temp, i64 nl, i64 tiles,
                                             const i64* header, const i64* lo, const i64* offsets, Agg agg,
                                             void* partials_buf) {
    using State = typename Agg::State;
    if (header[1] == 0) {  // no heavy tile (the usual case): the identity
      if (threadIdx.x == 0) static_cast<State*>(partials_buf)[blockIdx.x] = agg.init();
      return;
    }
    State s = agg.init();
    Heavy::run(temp.heavy, nl, tiles, header, lo, offsets, [&](i64 l, i64 r, i64) { agg.fold(s, l, r); });
    store_block_state<kThreads>(temp.reduce, s, agg, partials_buf, blockIdx.x);
  }
};

template <class Policy, class KeyT, int TableSlots = 8192>
struct HashJoinReduceAgent {
  static constexpr int kThreads = Policy::block_threads;
  using Join = HashJoinAgent<Policy, KeyT, TableSlots>;
  using TempStorage = typename Join::TempStorage;
  static constexpr i64 kFoldsPerState = 1 << 16;

  /// The hooks of run() (contract.cuh); i is a left (probe) position, j a right (build) position,
  /// both in partition order, as HashJoinAgent's.
  struct Hooks {
    __device__ bool residual(i64 i, i64 j) const;  // NoResidual = none
    JoinFoldHooks::Agg agg;
  };
  /// HashJoinAgent::run's grid (at least the probe tiles); every block writes partials[blockIdx.x].
  static constexpr LaunchRule run_launch{Grid::tiles, "nl", Policy::block_threads};

  template <bool Global, class Residual, class Agg>
  __device__ __forceinline__ static void run(TempStorage& temp, i64 bits, i64 nl, const KeyT* l_keys,
                                             const i64* l_bounds, const KeyT* r_keys, const i64* r_bounds,
                                             GlobalJoinTable table, Residual residual, Agg agg, void* partials_buf) {
    using State = typename Agg::State;
    using Reduce = BlockReduce<State, kThreads>;
    static_assert(sizeof(typename Reduce::TempStorage) <= sizeof(TempStorage),
                  "HashJoinReduceAgent: the block reduce reuses the join's table");
    State acc = agg.init(), s = agg.init();
    i64 folded = 0;
    Join::template run_fold<Global>(temp, bits, nl, l_keys, l_bounds, r_keys, r_bounds, table, residual, [&](i64 i, i64 j) {
      agg.fold(s, i, j);
      if (++folded == kFoldsPerState) {
        agg.merge(acc, s);
        s = agg.init();
        folded = 0;
      }
    });
    agg.merge(acc, s);
    __syncthreads();  // the table's memory becomes the reduce's
    store_block_state<kThreads>(*reinterpret_cast<typename Reduce::TempStorage*>(&temp), acc, agg, partials_buf,
                                blockIdx.x);
  }
};

}  // namespace ranc::tpl
