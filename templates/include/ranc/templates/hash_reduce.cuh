// ranc/templates/hash_reduce.cuh: group-by without sorting the input (hash aggregation), for group
// keys that pack into one key word below 2^63 (the generator packs them order-preserving, the first
// key in the highest bits, so the word orders like the keys).
//
// Phase 1 (HashGroupAgent, a bounded grid whose blocks stride over the tiles): every block keeps a
// table of Capacity (key word, aggregate state) slots in shared memory, filled at most half so a key
// that is absent is found absent after a short probe. Every row the Keep hook keeps finds or claims
// the slot of its key word (linear probing, atomicCAS on the word) and folds itself into the slot's
// state with shared-memory atomics (Agg::accumulate_atomic). A row whose key finds the table at its
// fill limit becomes a record of its own (a state of one row, Agg::accumulate). At the end the block
// writes its occupied slots as records. A record is (key word, state): keys[r], states[r] for an
// index r claimed from header[0]; records at r >= capacity are counted but not written, and
// header[1] becomes the number of records, or n when a claim passed capacity. So with
// rt::Regrow{header, index 1} the executor relaunches once with room for n records, which always
// suffices: every record holds at least one row. With few groups the records are about
// (blocks x groups); with many they approach one per row.
// Phase 2 (the generator, with existing primitives): the records sorted by key word (SortPairs) and
// reduced by ReduceAgent (reduce.cuh) whose accumulate merges a record's state: the output is
// sorted by the group keys, as the sort-based reduce's.
// Floating-point sums are added in an order that depends on thread timing, so they can differ from
// a sequential sum in the last bits (ranc's documented tolerance for float aggregates).
//
// Kernels, in order on one stream (P = its policy, tiles = max(1, ceil(n / P::tile_items))):
//   1. HashGroupAgent<P, Capacity>::run(temp, n, keep, key, agg, keys, states, capacity, header)
//      grid min(tiles, max_blocks), P::block_threads threads; header (2 x u64) zeroed before.
// Buffers: keys: capacity u64; states: capacity * sizeof(State) bytes (void*); header: 2 u64.
#pragma once

#include <ranc/templates/common.cuh>
#include <ranc/templates/contract.cuh>

namespace ranc::tpl {

/// The key word no packed key takes (packed keys are below 2^63).
constexpr u64 kEmptyKeyWord = ~0ull;

/// A well-mixed slot number for a key word (murmur3's 64-bit finaliser).
__device__ __forceinline__ u64 mix_key_word(u64 k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb53fe63ad4f9ull;
  k ^= k >> 33;
  return k;
}

template <class Policy, int Capacity>
struct HashGroupAgent {
  static_assert((Capacity & (Capacity - 1)) == 0, "the table capacity is a power of two");
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;
  /// Slots a block fills at most: absent keys are found absent after a short probe.
  static constexpr int kFillLimit = Capacity / 2;
  /// Blocks at most (each strides over its share of the tiles): bounds the records of few groups.
  static constexpr int kMaxBlocks = 2048;

  template <class State>
  struct TempStorageT {
    u64 keys[Capacity];
    State states[Capacity];
    int filled;
  };

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    __device__ bool keep(i64 row) const;  // the row takes part (a fused select)
    __device__ u64 key(i64 row) const;    // the row's packed key word, below 2^63
    struct Agg {
      struct State;
      __device__ State init() const;                                 // the identity
      __device__ void accumulate(State& s, i64 row) const;           // fold a row into a private state
      __device__ void accumulate_atomic(State& s, i64 row) const;    // the same, with atomics (shared)
    } agg;
  };
  /// At most kMaxBlocks blocks over the tiles of n rows.
  static constexpr LaunchRule run_launch{Grid::tiles, "n", Policy::block_threads};

  template <class Keep, class Key, class Agg>
  __device__ __forceinline__ static void run(TempStorageT<typename Agg::State>& temp, i64 n, Keep keep,
                                             Key key, Agg agg, u64* keys_out, void* states_buf,
                                             i64 capacity, u64* header) {
    using State = typename Agg::State;
    State* states_out = static_cast<State*>(states_buf);
    for (int s = threadIdx.x; s < Capacity; s += kThreads) {
      temp.keys[s] = kEmptyKeyWord;
      temp.states[s] = agg.init();
    }
    if (threadIdx.x == 0) temp.filled = 0;
    __syncthreads();
    const i64 tiles = n / kTile + (n % kTile != 0);
    for (i64 t = blockIdx.x; t < tiles; t += gridDim.x) {
      const i64 base = t * kTile;
#pragma unroll 4
      for (int k = 0; k < kItems; ++k) {
        const i64 i = base + k * kThreads + threadIdx.x;
        const bool live = i < n && keep(i);
        int slot = -1;
        u64 w = 0;
        if (live) {
          w = key(i);
          slot = find_or_claim(temp, w);
          if (slot >= 0) agg.accumulate_atomic(temp.states[slot], i);
        }
        // Rows whose key found the table full: one record each, claimed per warp.
        const bool spill = live && slot < 0;
        if (__any_sync(0xffffffffu, spill)) {
          State s = agg.init();
          if (spill) agg.accumulate(s, i);
          emit(spill, w, s, keys_out, states_out, capacity, n, header);
        }
      }
    }
    __syncthreads();
    // The table's occupied slots, as records (whole warps take part in every claim).
    for (int base = 0; base < Capacity; base += kThreads) {
      const int s = base + static_cast<int>(threadIdx.x);
      const bool used = s < Capacity && temp.keys[s] != kEmptyKeyWord;
      emit(used, used ? temp.keys[s] : 0, used ? temp.states[s] : agg.init(), keys_out, states_out,
           capacity, n, header);
    }
  }

 private:
  // The slot of key word w, claimed if absent and the table is below its fill limit; -1 when full.
  template <class Temp>
  __device__ __forceinline__ static int find_or_claim(Temp& temp, u64 w) {
    int h = static_cast<int>(mix_key_word(w) & (Capacity - 1));
    for (int probe = 0; probe < Capacity; ++probe) {
      u64 cur = *static_cast<volatile u64*>(&temp.keys[h]);
      if (cur == w) return h;
      if (cur == kEmptyKeyWord) {
        // The first empty slot on w's probe path: w is absent (slots are never freed).
        if (*static_cast<volatile int*>(&temp.filled) >= kFillLimit) return -1;
        if (atomicAdd(&temp.filled, 1) >= kFillLimit) {
          atomicSub(&temp.filled, 1);
          return -1;
        }
        cur = atomicCAS(&temp.keys[h], kEmptyKeyWord, w);
        if (cur == kEmptyKeyWord) return h;
        atomicSub(&temp.filled, 1);  // another thread took the slot
        if (cur == w) return h;
      }
      h = (h + 1) & (Capacity - 1);
    }
    return -1;
  }

  // Appends (w, s) for the lanes with `want` (called by whole warps): one claim per warp.
  template <class State>
  __device__ __forceinline__ static void emit(bool want, u64 w, const State& s, u64* keys_out,
                                              State* states_out, i64 capacity, i64 n, u64* header) {
    const unsigned lanes = __ballot_sync(0xffffffffu, want);
    if (lanes == 0) return;
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int leader = __ffs(lanes) - 1;
    u64 first = 0;
    if (lane == leader) {
      const u64 count = static_cast<u64>(__popc(lanes));
      first = atomicAdd(&header[0], count);
      const u64 end = first + count;
      atomicMax(&header[1], end <= static_cast<u64>(capacity) ? end : static_cast<u64>(n));
    }
    first = __shfl_sync(0xffffffffu, first, leader);
    if (!want) return;
    const i64 r = static_cast<i64>(first) + __popc(lanes & ((1u << lane) - 1u));
    if (r < capacity) {
      keys_out[r] = w;
      states_out[r] = s;
    }
  }
};

}  // namespace ranc::tpl
