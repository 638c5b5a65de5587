// ranc/templates/hash_reduce.cuh: group-by without sorting the input (hash aggregation), for group
// keys that pack into one key word below 2^63 (the generator packs them order-preserving, the first
// key in the highest bits, so the word orders like the keys).
//
// Phase 1 (HashGroupAgent, a bounded grid whose blocks stride over the tiles): every block keeps a
// table of Capacity (key word, aggregate state) slots in dynamic shared memory, filled at most 3/4
// so a key that is absent is found absent after a short probe. The rows of a warp are first
// grouped by key (__match_any_sync) and each key's rows merged into one state by shuffles; then
// the lowest lane of each key finds or claims the slot of its key word (linear probing, atomicCAS
// on the word) and merges the state into the slot with shared-memory atomics
// (Agg::merge_atomic). A key that finds the table at its fill limit becomes a record of its own
// (the warp's state of that key). At the end the block writes its occupied slots as records. A
// record is (key word, state): keys[r], states[r] for an index r claimed from header[0]; records
// at r >= capacity are counted but not written (and the blocks stop early: the launch runs
// again), and the last block to finish sets header[1] to the number of records, or to n when
// they passed capacity. So with rt::Regrow{header, index 1} the executor relaunches
// once with room for n records, which always suffices: every record holds at least one row.
// With few groups the records are about (blocks x groups); with many they approach one per row.
// Phase 2 (the generator, with existing primitives): the records sorted by key word (SortPairs) and
// reduced by ReduceAgent (reduce.cuh) whose accumulate merges a record's state: the output is
// sorted by the group keys, as the sort-based reduce's.
// Floating-point sums are added in an order that depends on thread timing, so they can differ from
// a sequential sum in the last bits (ranc's documented tolerance for float aggregates).
//
// Kernels, in order on one stream (P = its policy, tiles = max(1, ceil(n / P::tile_items))):
//   1. HashGroupAgent<P, Capacity>::run(temp, n, keep, key, agg, keys, states, capacity, header)
//      grid min(tiles, the generator's block limit), P::block_threads threads, dynamic shared
//      memory sizeof(TempStorageT<State>); header (3 x u64: claims, records, blocks done) zeroed before.
// Buffers: keys: capacity u64; states: capacity * sizeof(State) bytes (void*); header: 3 u64.
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
  /// Slots a block fills at most (3/4): absent keys are found absent after a short probe.
  static constexpr int kFillLimit = Capacity / 4 * 3;
  /// A warp merges its rows of equal keys while its block's table holds at most this many.
  static constexpr int kWarpMergeKeys = 64;

  /// In dynamic shared memory (the table outgrows the 48 KB of static shared memory); the
  /// generator launches with at least sizeof(TempStorageT<State>) bytes of it.
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
      __device__ State init() const;                                    // the identity
      __device__ void accumulate(State& s, i64 row) const;              // fold a row into a state
      __device__ void merge(State& a, const State& b) const;            // a = a + b
      __device__ void merge_atomic(State& a, const State& b) const;     // the same, by atomics on a
    } agg;
  };
  /// A grid of at most max_blocks blocks (the launch's clamp) over the tiles of n rows.
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
    const int lane = static_cast<int>(threadIdx.x & 31);
    const i64 tiles = n / kTile + (n % kTile != 0);
    bool overflowed = false;
    for (i64 t = blockIdx.x; t < tiles; t += gridDim.x) {
      // Once the records passed capacity this launch only tells the executor to grow them
      // to n and run again (header[1]): the rest of its work would be thrown away.
      if (*static_cast<volatile u64*>(&header[0]) > static_cast<u64>(capacity)) {
        overflowed = true;
        break;
      }
      // Merging a warp's rows of equal keys pays while the block has seen few keys (many
      // rows of a warp share one); with many keys it rarely finds two and costs more than
      // it saves. The count is read by the warp at once, so the choice is warp-uniform.
      const bool merge_warp = *static_cast<volatile int*>(&temp.filled) <= kWarpMergeKeys;
      const i64 base = t * kTile;
      u64 spill_key[kItems];
      State spill_state[kItems];
      bool spill[kItems];
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const i64 i = base + k * kThreads + threadIdx.x;
        const bool live = i < n && keep(i);
        const u64 w = live ? key(i) : kEmptyKeyWord;
        State s = agg.init();
        if (live) agg.accumulate(s, i);
        // Rows of the warp with the same key are merged first, into the lowest lane of
        // them (the leader): one table update per key and warp instead of one per row,
        // which is what keeps few, hot groups from serialising on their slots' atomics.
        unsigned peers = 1u << lane;
        if (merge_warp) {
          peers = __match_any_sync(0xffffffffu, w);
          const int leader = __ffs(peers) - 1;
          const int trips =
              static_cast<int>(__reduce_max_sync(0xffffffffu, live ? __popc(peers) : 1u)) - 1;
          const State own = s;
          unsigned pending = peers & ~(1u << leader);
          for (int j = 0; j < trips; ++j) {
            const int src = pending ? __ffs(pending) - 1 : lane;
            pending &= pending - 1;
            const State other = shfl_words(own, src);
            if (live && lane == leader && src != lane) agg.merge(s, other);
          }
        }
        const bool mine = live && lane == __ffs(peers) - 1;
        int slot = -1;
        if (mine) {
          slot = find_or_claim(temp, w);
          if (slot >= 0) agg.merge_atomic(temp.states[slot], s);
        }
        // Keys that found the table full: records, claimed once per warp and tile below.
        spill[k] = mine && slot < 0;
        spill_key[k] = w;
        spill_state[k] = s;
      }
      emit_tile(spill, spill_key, spill_state, keys_out, states_out, capacity, header);
    }
    overflowed = __syncthreads_or(overflowed) ||
                 *static_cast<volatile u64*>(&header[0]) > static_cast<u64>(capacity);
    if (!overflowed) {
      // The table's occupied slots, as records (whole warps take part in every claim).
      for (int base = 0; base < Capacity; base += kThreads) {
        const int s = base + static_cast<int>(threadIdx.x);
        const bool used = s < Capacity && temp.keys[s] != kEmptyKeyWord;
        bool one[1] = {used};
        u64 key1[1] = {used ? temp.keys[s] : 0};
        State state1[1] = {used ? temp.states[s] : agg.init()};
        emit_tile(one, key1, state1, keys_out, states_out, capacity, header);
      }
    }
    // The last block to finish sets header[1]: the records, or n when they passed capacity.
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      if (atomicAdd(&header[2], 1ull) == gridDim.x - 1) {
        __threadfence();
        const u64 claimed = *static_cast<volatile u64*>(&header[0]);
        header[1] = claimed <= static_cast<u64>(capacity) ? claimed : static_cast<u64>(n);
      }
    }
  }

 private:
  /// Appends (key[k], state[k]) for the lanes and items with want[k] (called by whole warps):
  /// one claim of record numbers per warp for all K items.
  template <int K, class State>
  __device__ __forceinline__ static void emit_tile(const bool (&want)[K], const u64 (&key)[K],
                                                   const State (&state)[K], u64* keys_out,
                                                   State* states_out, i64 capacity, u64* header) {
    unsigned lanes[K];
    int total = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      lanes[k] = __ballot_sync(0xffffffffu, want[k]);
      total += __popc(lanes[k]);
    }
    if (total == 0) return;
    const int lane = static_cast<int>(threadIdx.x & 31);
    u64 first = 0;
    if (lane == 0) first = atomicAdd(&header[0], static_cast<u64>(total));
    first = __shfl_sync(0xffffffffu, first, 0);
    const unsigned below = (1u << lane) - 1u;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (want[k]) {
        const i64 r = static_cast<i64>(first) + __popc(lanes[k] & below);
        if (r < capacity) {
          keys_out[r] = key[k];
          states_out[r] = state[k];
        }
      }
      first += __popc(lanes[k]);
    }
  }

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
};

}  // namespace ranc::tpl
