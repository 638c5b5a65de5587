// ranc/templates/hash_reduce.cuh: group-by without sorting the input (hash aggregation), for group
// keys that pack into one key word below 2^63 (the generator packs them order-preserving, the first
// key in the highest bits, so the word orders like the keys).
//
// Phase 1 (HashGroupAgent, a bounded grid whose blocks stride over the tiles): every block keeps a
// table of Capacity (key word, aggregate state) slots in dynamic shared memory, filled at most 3/4
// so a key that is absent is found absent after a short probe. The rows of a warp are first
// grouped by key (__match_any_sync) and each key's rows merged into one state by shuffles; then
// the lowest lane of each key finds or claims the slot of its key word (Fibonacci hashing, linear
// probing, atomicCAS on the word) and merges the state into the slot with shared-memory atomics
// (Agg::merge_atomic: 32-bit adds for integer states, common.cuh's atomic_add_words, since
// sm_90's 64-bit shared-memory atomicAdd is a compare-and-swap loop). A key that finds the table
// at its fill limit becomes a record of its own (the warp's state of that key). With Private > 0
// a block starts otherwise: while its table holds no key, a thread folds the rows of the block's
// first Private keys (claimed in a small shared array in the order the block meets them) into
// states of its own, in registers: no atomics and no shuffles, so few, hot groups (TPC-H Q1's
// four) cost a row a compare per private key and a predicated merge; a row of another key goes
// into the table by one atomic merge. Once the table holds a key (each warp reads the count per
// tile), the warp reduces its private states by shuffles, merges them into the table once per key
// (a record when the table is full) and goes on as above, its registers free. At the end the block
// writes its occupied slots as records. A record is (key word, state): keys[r], states[r] for
// an index r claimed from header[0]; records at r >= capacity are counted but not written, the
// blocks stop early (their work would be thrown away), and the last block to finish sets
// header[1] to the number of records, or to n when they passed capacity (which must then be
// below n: every record holds at least one row).
// With few groups the records are about (blocks x groups); with many they approach one per row,
// and the generator sorts and reduces the input instead (ra_ops/reduce/lowering.cpp).
// Phase 2 (the generator, with existing primitives): the records sorted by key word (SortPairs) and
// reduced by ReduceAgent (reduce.cuh) whose accumulate merges a record's state: the output is
// sorted by the group keys, as the sort-based reduce's.
// Floating-point sums are added in an order that depends on thread timing, so they can differ from
// a sequential sum in the last bits (ranc's documented tolerance for float aggregates).
//
// Kernels, in order on one stream (P = its policy, tiles = max(1, ceil(n / P::tile_items))):
//   1. HashGroupAgent<P, Capacity, Private>::run(temp, n, keep, key, agg, keys, states, capacity, header)
//      grid min(tiles, the generator's block limit), or that rounded to whole waves of the GPU
//      (rt::Launch::whole_waves: a block past the tiles does nothing), P::block_threads threads, dynamic shared
//      memory sizeof(TempStorageT<State>); header (3 x u64: claims, records, blocks done) zeroed before.
// Buffers: keys: capacity u64; states: capacity * sizeof(State) bytes (void*); header: 3 u64.
#pragma once

#include <ranc/templates/common.cuh>
#include <ranc/templates/contract.cuh>

namespace ranc::tpl {

// DenseGroupAgent's shared-memory tables take a step whose rows are all below n without a
// check of each row (0: every step checks; an A/B switch, RANC_JIT_DEFINE). On an H200, 2^28
// rows into 2^14 keys: 0.99 ms in all, against 1.14 with every step checked (session 52).
#ifndef RANC_DENSE_FULL_STEP
#define RANC_DENSE_FULL_STEP 1
#endif

/// The key word no packed key takes (packed keys are below 2^63).
constexpr u64 kEmptyKeyWord = ~0ull;

/// A well-mixed word of a key word (murmur3's 64-bit finaliser): the table's slot hash for
/// A/B measurements (HashGroupAgent::first_slot).
__device__ __forceinline__ u64 mix_key_word(u64 k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb53fe63ad4f9ull;
  k ^= k >> 33;
  return k;
}

template <class Policy, int Capacity, int Private>
struct HashGroupAgent {
  static_assert((Capacity & (Capacity - 1)) == 0, "the table capacity is a power of two");
  static_assert(Private >= 0 && Private <= 32, "at most 32 private states (a warp's lanes flush them)");
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;
  /// Slots a block fills at most (3/4): absent keys are found absent after a short probe.
  static constexpr int kFillLimit = Capacity / 4 * 3;
  /// A warp merges its rows of equal keys while its block's table holds at most this many.
  static constexpr int kWarpMergeKeys = 64;
  /// Whether a tile's rows are all loaded before the first is used (for_tile_rows): for states
  /// of up to 16 bytes, whose kItems copies take few registers (a large state, as TPC-H Q1's
  /// nine words, would spill beside the private states). RANC_HASH_LOAD_FIRST=0 (a macro:
  /// RANC_JIT_DEFINE) turns it off, for A/B measurements.
  template <class State>
  __host__ __device__ static constexpr bool load_first() {
#ifdef RANC_HASH_LOAD_FIRST
    if (!(RANC_HASH_LOAD_FIRST)) return false;
#endif
    return sizeof(State) <= 16;
  }

  /// In dynamic shared memory (the table outgrows the 48 KB of static shared memory); the
  /// generator launches with at least sizeof(TempStorageT<State>) bytes of it.
  template <class State>
  struct TempStorageT {
    u64 keys[Capacity];
    State states[Capacity];
    u64 private_keys[Private > 0 ? Private : 1];  // the keys of the threads' private states
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
    if (threadIdx.x < Private) temp.private_keys[threadIdx.x] = kEmptyKeyWord;
    if (threadIdx.x == 0) temp.filled = 0;
    __syncthreads();
    const i64 tiles = n / kTile + (n % kTile != 0);
    bool overflowed = false;
    i64 t = blockIdx.x;
    if constexpr (Private > 0)
      overflowed =
          private_tiles(temp, n, tiles, keep, key, agg, keys_out, states_out, capacity, header, t);
    for (; t < tiles; t += gridDim.x) {
      // Once the records passed capacity the launch only says so (header[1] = n): the
      // generator's plan then groups the input by sorting, and this work would be lost.
      if (passed_capacity(header, capacity)) {
        overflowed = true;
        break;
      }
      table_tile(temp, n, keep, key, agg, keys_out, states_out, capacity, header, t * kTile);
    }
    // (one answer for the block: the table's records below are written by whole warps)
    overflowed = __syncthreads_or(
        overflowed || *static_cast<volatile u64*>(&header[0]) > static_cast<u64>(capacity));
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
  // The tiles from t on while the block's table holds no key (each warp reads the count
  // once a tile, so each warp leaves on its own): a row of one of the block's private keys
  // folds into the thread's private state; another row's state goes into the table by a
  // shared-memory atomic (a record when the table is full). Then the warp's private states
  // go into the table (the flush at the end). The private states live in registers here only, so
  // the table tiles that follow (many keys) do not pay for them. Returns whether the records
  // passed capacity; t is left at the first tile not done.
  template <class Temp, class Keep, class Key, class Agg, class State>
  __device__ __forceinline__ static bool private_tiles(Temp& temp, i64 n, i64 tiles, Keep keep,
                                                       Key key, Agg agg, u64* keys_out,
                                                       State* states_out, i64 capacity,
                                                       u64* header, i64& t) {
    State mine[Private];
    unsigned used = 0;  // bit p: mine[p] holds a row
#pragma unroll
    for (int p = 0; p < Private; ++p) mine[p] = agg.init();
    bool overflowed = false;
    for (; t < tiles; t += gridDim.x) {
      if (passed_capacity(header, capacity)) {
        overflowed = true;
        break;
      }
      // A key in the table means the block has more keys than private states: their rows
      // would each pay an atomic on a few hot slots, which the table tiles' warp merge avoids
      // (H100, 2^28 rows into 16 groups: 5.36 ms staying here, 3.72 ms without private states).
      if (table_keys(temp) > 0) break;
      const i64 base = t * kTile;
      // A row: into its private state, else the table, else a record.
      auto fold = [&](int, u64 w, const State& s, bool row) {
        const int priv = row ? find_or_claim_private(temp, w) : -1;
#pragma unroll
        for (int p = 0; p < Private; ++p)
          if (priv == p) agg.merge(mine[p], s);
        if (priv >= 0) used |= 1u << priv;
        const bool rest = row && priv < 0;
        int slot = 0;
        if (rest) {
          slot = find_or_claim(temp, w);
          if (slot >= 0) agg.merge_atomic(temp.states[slot], s);
        }
        const bool spill = rest && slot < 0;
        if (__any_sync(0xffffffffu, spill)) {
          bool one[1] = {spill};
          u64 key1[1] = {w};
          State state1[1] = {s};
          emit_tile(one, key1, state1, keys_out, states_out, capacity, header);
        }
      };
      for_tile_rows<State>(base, n, keep, key, agg, fold);
    }
    if (!overflowed) {
      // The warp's private states, reduced over its lanes by shuffles, merged into the table
      // by lane 0 (a record of their own when the table is full). A key none of the warp's
      // rows had is skipped: every record holds a row, so records never outnumber rows.
      const int lane = static_cast<int>(threadIdx.x & 31);
#pragma unroll
      for (int p = 0; p < Private; ++p) {
        if (!__any_sync(0xffffffffu, (used >> p) & 1u)) continue;  // warp-uniform
        const u64 w = *static_cast<volatile u64*>(&temp.private_keys[p]);
        State s = mine[p];
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) {
          const State other = shfl_words(s, lane ^ d);
          agg.merge(s, other);
        }
        int slot = 0;
        if (lane == 0) {
          slot = find_or_claim(temp, w);
          if (slot >= 0) agg.merge_atomic(temp.states[slot], s);
        }
        bool one[1] = {lane == 0 && slot < 0};
        u64 key1[1] = {w};
        State state1[1] = {s};
        emit_tile(one, key1, state1, keys_out, states_out, capacity, header);
      }
    }
    return overflowed;
  }

  // One tile of rows from `base` into the block's table.
  template <class Temp, class Keep, class Key, class Agg, class State>
  __device__ __forceinline__ static void table_tile(Temp& temp, i64 n, Keep keep, Key key, Agg agg,
                                                    u64* keys_out, State* states_out, i64 capacity,
                                                    u64* header, i64 base) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    // Merging a warp's rows of equal keys pays while the block has seen few keys (many
    // rows of a warp share one); with many keys it rarely finds two and costs more than
    // it saves.
    const bool merge_warp = table_keys(temp) <= kWarpMergeKeys;
    u64 spill_key[kItems];
    State spill_state[kItems];
    bool spill[kItems];
    // Row k (key word w, state s): merged with the warp's rows of its key, into the table by
    // its leader; spill[k] when the table is full.
    auto add = [&](int k, u64 w, State s, bool live) {
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
    };
    for_tile_rows<State>(base, n, keep, key, agg, add);
    emit_tile(spill, spill_key, spill_state, keys_out, states_out, capacity, header);
  }

  /// f(k, key word, state, kept) for this thread's kItems rows of the tile from `base` (as
  /// load_row), in order. With load_first<State>() every row is loaded before the first call,
  /// so a warp has its tile's reads in flight at once (between rows, the table's atomics keep
  /// the compiler from moving the next row's loads up; H100, 2^28 rows of one i32 sum: 4
  /// groups 1.99 -> 1.63 ms, 2^10 groups 2.19 -> 1.81 ms, session 18); else row by row.
  template <class State, class Keep, class Key, class Agg, class F>
  __device__ __forceinline__ static void for_tile_rows(i64 base, i64 n, Keep keep, Key key, Agg agg,
                                                       F& f) {
    if constexpr (load_first<State>()) {
      u64 w[kItems];
      State s[kItems];
      bool live[kItems];
#pragma unroll
      for (int k = 0; k < kItems; ++k)
        live[k] = load_row(base + k * kThreads + threadIdx.x, n, keep, key, agg, w[k], s[k]);
#pragma unroll
      for (int k = 0; k < kItems; ++k) f(k, w[k], s[k], live[k]);
    } else {
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        u64 w;
        State s;
        const bool live = load_row(base + k * kThreads + threadIdx.x, n, keep, key, agg, w, s);
        f(k, w, s, live);
      }
    }
  }

  /// Row i when it is below n and kept (true): its key word and its state of one row; else the
  /// empty word and the identity.
  template <class Keep, class Key, class Agg, class State>
  __device__ __forceinline__ static bool load_row(i64 i, i64 n, Keep keep, Key key, Agg agg, u64& w,
                                                  State& s) {
    const bool row = i < n && keep(i);
    w = row ? key(i) : kEmptyKeyWord;
    s = agg.init();
    if (row) agg.accumulate(s, i);
    return row;
  }

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

  // Every choice that leads to a warp-wide primitive (__match_any_sync, shuffles, ballots) is
  // made once for the whole warp from one read: the table's count and the claims move while
  // other warps run, and lanes of one warp need not read them at the same moment, so a count
  // read by each lane could send some lanes into a primitive the others never reach.
  // The keys in the block's table, as lane 0 read them.
  template <class Temp>
  __device__ __forceinline__ static int table_keys(Temp& temp) {
    return __shfl_sync(0xffffffffu, *static_cast<volatile int*>(&temp.filled), 0);
  }
  // Whether the records passed capacity, as lane 0 read it.
  __device__ __forceinline__ static bool passed_capacity(u64* header, i64 capacity) {
    const bool passed = *static_cast<volatile u64*>(&header[0]) > static_cast<u64>(capacity);
    return __shfl_sync(0xffffffffu, passed ? 1 : 0, 0) != 0;
  }

  // The private state of key word w: its index among the block's private keys, claimed in
  // order if absent; -1 when all Private are other keys'. Claims are never undone.
  template <class Temp>
  __device__ __forceinline__ static int find_or_claim_private(Temp& temp, u64 w) {
#pragma unroll
    for (int p = 0; p < Private; ++p) {
      u64 cur = *static_cast<volatile u64*>(&temp.private_keys[p]);
      if (cur == kEmptyKeyWord) cur = atomicCAS(&temp.private_keys[p], kEmptyKeyWord, w);
      if (cur == kEmptyKeyWord || cur == w) return p;
    }
    return -1;
  }

  /// log2(Capacity).
  __host__ __device__ static constexpr int slot_bits() {
    int b = 0;
    while ((1 << b) < Capacity) ++b;
    return b;
  }
  /// The first slot of key word w's probe path: Fibonacci hashing, the high bits of one
  /// multiply by 2^64 / phi (H100, 2^28 rows into 2^10 groups: 1.38 ms, against 1.82 ms with
  /// murmur3's finaliser, two 64-bit multiplies, which RANC_HASH_SLOT_MIX=1 restores for A/B
  /// measurements; bench/RESULTS.md, session 18).
  __device__ __forceinline__ static int first_slot(u64 w) {
#if defined(RANC_HASH_SLOT_MIX) && RANC_HASH_SLOT_MIX
    return static_cast<int>(mix_key_word(w) & (Capacity - 1));
#else
    return static_cast<int>((w * 0x9E3779B97F4A7C15ull) >> (64 - slot_bits()));
#endif
  }

  // The slot of key word w, claimed if absent and the table is below its fill limit; -1 when full.
  template <class Temp>
  __device__ __forceinline__ static int find_or_claim(Temp& temp, u64 w) {
    int h = first_slot(w);
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

/// The dense way's key bounds (DenseGroupAgent::bounds): bounds[0] holds the largest key word
/// (packed keys are below 2^63) minus the smallest word, so both bounds grow by atomicMax from
/// zeroed memory and read back as int64 >= 0.
constexpr u64 kDenseTop = 0x7fffffffffffffffull;
/// The smallest key word of the dense way's bounds (its table's slot 0).
__device__ __forceinline__ u64 dense_smallest(const u64* bounds) {
  return kDenseTop - bounds[0];
}

/// The dense way of the hash group-by, for when phase 1's records pass their room (many groups)
/// and the kept rows' key words span few values, or before phase 1 when a sample of the rows
/// spans few enough for the shared-memory tables (early_run): one table in device memory indexed by
/// a key word's distance from the smallest, so a row costs one atomic merge into its group's state
/// and no probe (a group-by into keys 0..2^20 is one L2 atomic a row, where sorting the input takes
/// two radix passes over it). The generator sizes the table by the span the bounds kernel finds
/// and takes this way only while the table stays small (at most phase 1's room of records, so it
/// stays in L2); past that, it sorts the input (ra_ops/reduce/lowering.cpp). The table's present
/// slots are the groups in key order: DenseWriteAgent writes them as the output.
// Kernels, in order on one stream (P = the HashGroup policy):
//   1. DenseGroupAgent<P>::bounds(n, keep, key, bounds)        a strided grid (the generator bounds
//      it), P::block_threads threads; bounds (2 x u64) zeroed before. bounds[0] = kDenseTop - the
//      smallest key word of a kept row, bounds[1] = the largest (0 and 0 when no row is kept).
//   2. DenseGroupAgent<P>::init(slots, agg, table)   one thread a slot: table[s] = init().
//   3. DenseGroupAgent<P>::run(n, keep, key, agg, bounds, table, flags)   one block a tile.
//      Every kept row's state merged into table[w - smallest] (merge_global: atomics in device
//      memory), and flags[w - smallest] = 1 where the merge may be the slot's first; flags
//      (slots bytes) zeroed before.
//   3'. DenseGroupAgent<P, SharedSlots>::shared_run(temp, n, keep, key, agg, bounds, slots,
//      table, flags)   instead of 3 for spans the generator gives it: a grid of at most one wave
//      (the blocks stride over the rows), dynamic shared memory sizeof(TempStorageT<State>).
//      Each block merges its rows of one range of SharedSlots key words (a part of the span)
//      into a table in shared memory (merge_atomic), then its present slots into the device
//      table as 3 does (merge_global, flags).
//   3''. DenseGroupAgent<P, SharedSlots>::speculative_run(temp, n, keep, key, agg, bounds, slots,
//      table, flags, missed)   before 1, as 3' over the span of phase 1's records' key words
//      (bounds: theirs, as 1 writes them; slots: their span rounded up to whole tables), with
//      missed (one u64) zeroed before: set when a kept row's word lies outside the span, and
//      then the table is not used (the generator's plan reads missed back, and only when it is
//      set runs 1, 2 and 3 or 3' over the input's bounds).
//   3'''. DenseGroupAgent<P, SharedSlots>::early_run(temp, n, keep, key, agg, low, slots, table,
//      flags, missed, table_bounds)   before phase 1, as 3'' over a span sampled by 1 (low:
//      kDenseTop - its slot 0, which it stores in table_bounds[0]); when missed stays 0 the
//      generator's plan runs phase 1 and the rest over no rows.
//   4. DenseWriteAgent (below) writes the flagged slots, in key order, as the output.
// Buffers: table: slots * sizeof(State) bytes (void*); flags: slots bytes.
template <class Policy, int SharedSlots>
struct DenseGroupAgent {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;

  static_assert(SharedSlots >= 0, "the shared-memory table's slots");

  /// shared_run's table, in dynamic shared memory (the generator launches with at least its
  /// size): a state and a presence byte a slot.
  template <class State>
  struct TempStorageT {
    State states[SharedSlots > 0 ? SharedSlots : 1];
    unsigned char present[SharedSlots > 0 ? SharedSlots : 1];
  };

  /// The hooks of the entry points (contract.cuh).
  struct Hooks {
    __device__ bool keep(i64 row) const;  // the row takes part (a fused select)
    __device__ u64 key(i64 row) const;    // the row's packed key word, below 2^63
    struct Agg {
      struct State;
      __device__ State init() const;                          // the identity
      __device__ void accumulate(State& s, i64 row) const;    // fold a row into a state
      __device__ void merge(State& a, const State& b) const;  // a = a + b
      // a = a + b by atomics on a in shared memory (HashGroupAgent's merge_atomic)
      __device__ void merge_atomic(State& a, const State& b) const;
      // a = a + b by atomics on a in device memory; true when a's first field was at its
      // identity before (a merge that finds the slot without rows always returns true)
      __device__ bool merge_global(State& a, const State& b) const;
    } agg;
  };

  static constexpr LaunchRule bounds_launch{Grid::strided, "n", Policy::block_threads};
  template <class Keep, class Key>
  __device__ __forceinline__ static void bounds(i64 n, Keep keep, Key key, u64* bounds) {
    u64 low = 0, high = 0;  // kDenseTop - the smallest word, the largest
    // Four tiles' rows a step, all read before any is compared: 16 reads in flight a thread
    // (with 4, a grid of a few waves keeps too few bytes in flight to stream the keys).
    constexpr int kLoads = 4 * kItems;
    constexpr i64 kStep = static_cast<i64>(kLoads) * kThreads;
    const i64 steps = n / kStep + (n % kStep != 0);
    for (i64 t = blockIdx.x; t < steps; t += gridDim.x) {
      u64 w[kLoads];
      bool live[kLoads];
#pragma unroll
      for (int k = 0; k < kLoads; ++k) {
        const i64 i = t * kStep + k * kThreads + threadIdx.x;
        live[k] = i < n && keep(i);
        w[k] = live[k] ? key(i) : 0;
      }
#pragma unroll
      for (int k = 0; k < kLoads; ++k) {
        if (!live[k]) continue;
        low = max(low, kDenseTop - w[k]);
        high = max(high, w[k]);
      }
    }
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
      low = max(low, __shfl_xor_sync(0xffffffffu, low, d));
      high = max(high, __shfl_xor_sync(0xffffffffu, high, d));
    }
    // One atomic a warp and bound (the generator bounds the grid: a few thousand in all).
    if ((threadIdx.x & 31) == 0 && (low | high) != 0) {
      atomicMax(&bounds[0], low);
      atomicMax(&bounds[1], high);
    }
  }

  static constexpr LaunchRule init_launch{Grid::threads, "slots", 0};
  template <class Agg>
  __device__ __forceinline__ static void init(i64 slots, Agg agg, void* table) {
    const i64 s = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s < slots) static_cast<typename Agg::State*>(table)[s] = agg.init();
  }

  static constexpr LaunchRule run_launch{Grid::tiles, "n", Policy::block_threads};
  template <class Keep, class Key, class Agg>
  __device__ __forceinline__ static void run(i64 n, Keep keep, Key key, Agg agg, const u64* bounds,
                                             void* table_buf, unsigned char* flags) {
    using State = typename Agg::State;
    State* table = static_cast<State*>(table_buf);
    const u64 smallest = dense_smallest(bounds);
    const i64 base = static_cast<i64>(blockIdx.x) * kTile;
    const int lane = static_cast<int>(threadIdx.x & 31);
    // Row k (slot d, state s): merged with the warp's rows of its slot first (as phase 1's
    // table tiles: a heavy key costs one atomic a warp, not one a row), then by its leader
    // into the table. Distinct keys pay a match and a reduction, no shuffle.
    auto add = [&](unsigned d, State s, bool live) {
      const unsigned peers = __match_any_sync(0xffffffffu, d);
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
      // The slot's flag is stored only by merges that may be its first: a store a row would
      // double the L2 traffic of the atomics (H200, 2^28 rows into 2^20 keys: 7.3 ms in all,
      // against 2.8 for the atomics alone), and a flag stored by every row of a few keys
      // serialises on their sectors.
      if (live && lane == leader && agg.merge_global(table[d], s)) flags[d] = 1;
    };
    auto load = [&](int k, unsigned& d, State& s) {
      const i64 i = base + k * kThreads + threadIdx.x;
      const bool live = i < n && keep(i);
      d = live ? static_cast<unsigned>(key(i) - smallest) : ~0u;
      s = agg.init();
      if (live) agg.accumulate(s, i);
      return live;
    };
    if constexpr (sizeof(State) <= 16) {
      // Every row of the tile loaded before the first merge (small states; as phase 1).
      unsigned d[kItems];
      State s[kItems];
      bool live[kItems];
#pragma unroll
      for (int k = 0; k < kItems; ++k) live[k] = load(k, d[k], s[k]);
#pragma unroll
      for (int k = 0; k < kItems; ++k) add(d[k], s[k], live[k]);
    } else {
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        unsigned d;
        State s;
        const bool live = load(k, d, s);
        add(d, s, live);
      }
    }
  }

  /// A grid of at most one wave, whose blocks stride over the rows (LaunchShape::one_wave):
  /// each block merges its share into a table of its own in shared memory, then the table into
  /// the device's. Spans too large for phase 1's hashed tables but within shared memory (a few
  /// thousand to ~20 thousand keys) would make contended device atomics, a few thousand rows
  /// a slot, in run(); here a row is one shared-memory atomic and a block's flush one device
  /// atomic a present slot (one wave: the fewest flushes). A span of more than SharedSlots is
  /// cut into parts = ceil(slots / SharedSlots) ranges of key words, each taken by
  /// gridDim.x / parts of the blocks (or, with fewer blocks than parts, a block takes several
  /// in turn): every part's blocks read all the rows, so a span of p parts reads them p times
  /// (the generator allows few parts).
  static constexpr LaunchRule shared_run_launch{Grid::tiles, "n", Policy::block_threads};
  template <class Keep, class Key, class Agg>
  __device__ __forceinline__ static void shared_run(TempStorageT<typename Agg::State>& temp, i64 n,
                                                    Keep keep, Key key, Agg agg, const u64* bounds,
                                                    i64 slots, void* table_buf,
                                                    unsigned char* flags) {
    run_parts<false>(temp, n, keep, key, agg, bounds, slots, table_buf, flags, nullptr);
  }

  /// shared_run over a span the generator guessed from phase 1's records (their bounds: the
  /// rows phase 1 read before it gave up), so that no pass over the input finds the bounds
  /// first: slot 0 is the records' smallest key word and the table has `slots` (the records'
  /// span rounded up to whole tables, so keys a little past the records' largest still fit).
  /// A kept row whose key word lies outside the span is a miss: its block sets *missed
  /// (zeroed before), every block stops at its next step once one has, and the generator's
  /// plan reads the flag and, when set, throws the table away and finds the bounds as before
  /// (an input whose first rows hold only some of its keys, such as one ordered by them).
  /// The generator plans it with CodegenOptions::hash_dense_speculate (on by default). Its
  /// first form took 2.0-2.3 ms over 2^28 rows into 2^12-2^14 keys on an H200 where shared_run
  /// takes 0.73 ms over the same rows (bench/RESULTS.md, session 51), since its checks, done as
  /// each key arrived, made the loads wait for the keys one by one (SASS: a key load's result
  /// used 1-13 instructions later, against 29-163 in shared_run). Its checks now wait until
  /// the step's loads are in flight (shared_part's take; SASS: 26-194 instructions later): 0.95
  /// ms, and the plan in all 7-12% faster than finding the bounds first; with whole steps
  /// unchecked and one part's rows unranged (shared_part), 0.59 ms (session 52).
  static constexpr LaunchRule speculative_run_launch{Grid::tiles, "n", Policy::block_threads};
  template <class Keep, class Key, class Agg>
  __device__ __forceinline__ static void speculative_run(TempStorageT<typename Agg::State>& temp,
                                                         i64 n, Keep keep, Key key, Agg agg,
                                                         const u64* bounds, i64 slots,
                                                         void* table_buf, unsigned char* flags,
                                                         u64* missed) {
    run_parts<true>(temp, n, keep, key, agg, bounds, slots, table_buf, flags, missed);
  }

  /// speculative_run before phase 1, over a span the generator guessed from a sample of the
  /// rows (bounds, as 1 writes them, over every (n / samples)-th row), widened on both sides to
  /// whole tables: `low` is kDenseTop - the table's slot 0, which every block stores in
  /// table_bounds[0] (DenseWriteAgent reads it there). When no row misses, phase 1 and the rest
  /// of the plan run over no rows: few groups whose keys are dense make records (blocks x
  /// groups) whose sort and merge cost more than this run (H200, 2^28 rows into 2^10 keys: 0.68
  /// ms this way, 1.32 by phase 1; into 4 keys 0.78 against 1.67; session 53).
  static constexpr LaunchRule early_run_launch{Grid::tiles, "n", Policy::block_threads};
  template <class Keep, class Key, class Agg>
  __device__ __forceinline__ static void early_run(TempStorageT<typename Agg::State>& temp, i64 n,
                                                   Keep keep, Key key, Agg agg, i64 low, i64 slots,
                                                   void* table_buf, unsigned char* flags,
                                                   u64* missed, u64* table_bounds) {
    // Every block stores it and reads it back after its first barrier (shared_part's), as the
    // other runs read their bounds where a part starts: passed on as a value, slot 0 stayed
    // live across the part's clearing and its loop (NVRTC's all-states compile, 64-register
    // runs: 8 bytes of spills).
    if (threadIdx.x == 0) table_bounds[0] = static_cast<u64>(low);
    run_parts<true>(temp, n, keep, key, agg, table_bounds, slots, table_buf, flags, missed);
  }

 private:
  // shared_run (Checked false), speculative_run and early_run (Checked: *missed) over a span of
  // `slots`: its parts = ceil(slots / SharedSlots) ranges of key words, each by its share of the
  // blocks.
  template <bool Checked, class Keep, class Key, class Agg>
  __device__ __forceinline__ static void run_parts(TempStorageT<typename Agg::State>& temp, i64 n,
                                                   Keep keep, Key key, Agg agg, const u64* bounds,
                                                   i64 slots, void* table_buf, unsigned char* flags,
                                                   u64* missed) {
    static_assert(SharedSlots > 0, "the shared-memory runs need a table");
    if (slots <= 0) return;
    const int parts = static_cast<int>((slots + SharedSlots - 1) / SharedSlots);
    const int members = max(1, static_cast<int>(gridDim.x) / parts);  // blocks a part
    const int units = members * parts;
    // One part (the span within a table): no range check, the loads and merges of session 50's
    // measurement (H200, 2^28 rows into 2^14 keys: 1.48 ms in all, against 1.77 ranged); when
    // Checked, a row outside the span (below it or past the table) is a miss anyway. (A Checked
    // large state keeps the range check: without, NVRTC spills the all-states test's
    // 64-register run, codegen_test.cpp's HashGroupByDenseWayEveryState.)
    if constexpr (!Checked || sizeof(typename Agg::State) <= 16) {
      if (parts == 1) {
        shared_part<false, Checked>(temp, n, keep, key, agg, bounds, slots, table_buf, flags, 0,
                                    blockIdx.x, gridDim.x, missed);
        return;
      }
    }
    for (int u = blockIdx.x; u < units; u += gridDim.x)
      shared_part<true, Checked>(temp, n, keep, key, agg, bounds, slots, table_buf, flags,
                                 u % parts, u / parts, members, missed);
  }

  // shared_run's part `part` (key words smallest + part x SharedSlots on, SharedSlots of them or
  // the span's rest), by the block `member` of `members`: its rows are those of every
  // members-th step of 4 tiles from the member-th. Ranged: the span has several parts, or the
  // speculative run's states are large (else every kept row is the part's). Checked
  // (speculative_run, early_run): a kept row outside the span sets *missed, and the block's
  // warps stop at their next step once it is set; Checked and not Ranged (one part), such a row
  // merges into any slot (its slot clamped into the table), since the plan throws a missed
  // run's tables away.
  template <bool Ranged, bool Checked, class Keep, class Key, class Agg>
  __device__ __forceinline__ static void shared_part(TempStorageT<typename Agg::State>& temp, i64 n,
                                                     Keep keep, Key key, Agg agg, const u64* bounds,
                                                     i64 slots, void* table_buf,
                                                     unsigned char* flags, int part, int member,
                                                     int members, u64* missed) {
    using State = typename Agg::State;
    static_assert(Ranged || !Checked || sizeof(State) <= 16,
                  "an unranged checked part clamps its slots in take (small states)");
    State* table = static_cast<State*>(table_buf);
    const i64 first = static_cast<i64>(part) * SharedSlots;
    const int width = static_cast<int>(slots - first < SharedSlots ? slots - first : SharedSlots);
    __syncthreads();  // (a block's previous part flushed)
    for (int s = threadIdx.x; s < width; s += kThreads) {
      temp.states[s] = agg.init();
      temp.present[s] = 0;
    }
    __syncthreads();
    const u64 lowest = dense_smallest(bounds) + static_cast<u64>(first);
    // A row of the part: its key word's distance from the part's first below width (the rows
    // of other parts wrap to large unsigned distances). Its columns are read whatever its part,
    // so their loads need not wait for the key's: with one block an SM, loads that waited for
    // the key took 2.0 ms where these take 1.5 (H200, 2^28 rows into 2^12 keys, one part).
    // Checked: the largest distance of a kept row's word from slot 0 (wrapping past 2^63 for a
    // word below it; kept as its high word's bits, far_high, and its low word's largest,
    // far_low, two instructions a row), so the span holds every row read while far_high is 0
    // and far_low below `slots`; the part's rows are then those of 32-bit distances below width
    // (one part: every row, its slot clamped into the table). The key words are kept as loaded
    // and all of this waits until every load of the step is in flight (take, below): done as
    // each key arrived, the checks made the loads wait for the keys one by one (ptxas placed
    // each right after its load; SASS for sm_90, session 51).
    // Large states go row by row, and their checks are made as each row is loaded (`outside`:
    // far_high's and far_low's answer), which keeps the fewest values alive beside the state.
    unsigned far_high = 0, far_low = 0;
    bool outside = false;
    constexpr bool kDefer = Checked && sizeof(State) <= 16;
    // (full: the step's rows are all below n, a constant at each call, so that a step of whole
    // rows checks none: with an unfiltered input its rows merge without a branch. NVRTC takes
    // no generic lambda in device code, so not a type.)
    auto load_word = [&](bool full, i64 i, State& s, u64& word) {
      const bool live = (full || i < n) && keep(i);
      word = live ? key(i) : 0;
      s = agg.init();
      if (live) agg.accumulate(s, i);
      return live;
    };
    auto load = [&](bool full, i64 i, unsigned& d, State& s) {
      const bool live = (full || i < n) && keep(i);
      const u64 w = live ? key(i) - lowest : 0;
      d = static_cast<unsigned>(w);
      s = agg.init();
      if (live) agg.accumulate(s, i);
      if constexpr (Checked)
        outside |= live && w + static_cast<u64>(first) >= static_cast<u64>(slots);
      return Ranged ? live && w < static_cast<u64>(width) : live;
    };
    // Whether a row load_word loaded (live: its answer) merges into this part's table, at d.
    auto take = [&](bool live, u64 word, unsigned& d) {
      const u64 w = word - lowest;  // (+ first: the distance from slot 0)
      if (live) {
        const u64 from0 = w + static_cast<u64>(first);
        far_high |= static_cast<unsigned>(from0 >> 32);
        far_low = max(far_low, static_cast<unsigned>(from0));
      }
      d = static_cast<unsigned>(w);
      if constexpr (!Ranged) {
        d = min(d, static_cast<unsigned>(width - 1));
        return live;
      }
      return live && d < static_cast<unsigned>(width);
    };
    // Whether a row of this thread's lay outside the span.
    auto out_of_span = [&] {
      if constexpr (kDefer) return far_high != 0 || far_low >= static_cast<u64>(slots);
      return outside;
    };
    // Checked, at the end of a step: whether the warp stops (a warp-wide answer), when its rows
    // missed (it says so first) or when lane 0 read the flag set (`seen`, read as the step
    // began, so the step's loads do not wait for it).
    auto poll = [&]() -> u64 {
      u64 seen = 0;
      if (Checked && (threadIdx.x & 31) == 0) seen = *static_cast<volatile u64*>(missed);
      return seen;
    };
    auto stop = [&](u64 seen) {
      if constexpr (Checked) {
        if (__any_sync(0xffffffffu, out_of_span())) {
          if ((threadIdx.x & 31) == 0)
            atomicExch(reinterpret_cast<unsigned long long*>(missed), 1ull);
          return true;
        }
        return __shfl_sync(0xffffffffu, seen, 0) != 0;
      }
      return false;
    };
    // No warp merge: with thousands of keys a warp's rows rarely share one, and rows that do
    // serialise on the same shared-memory word only. The presence byte is a plain store (every
    // writer stores 1).
    auto add = [&](unsigned d, const State& s) {
      agg.merge_atomic(temp.states[d], s);
      temp.present[d] = 1;
    };
    if constexpr (sizeof(State) <= 16) {
      // Four tiles' rows a step, all loaded before the first merge: 16 rows in flight a thread
      // (a wave is one or two blocks an SM).
      constexpr int kLoads = 4 * kItems;
      constexpr i64 kStep = static_cast<i64>(kLoads) * kThreads;
      const i64 steps = n / kStep + (n % kStep != 0);
      auto step = [&](bool full, i64 t) {
        unsigned d[kLoads];
        State s[kLoads];
        bool live[kLoads];
        if constexpr (kDefer) {
          u64 word[kLoads];
#pragma unroll
          for (int k = 0; k < kLoads; ++k)
            live[k] = load_word(full, t * kStep + k * kThreads + threadIdx.x, s[k], word[k]);
#pragma unroll
          for (int k = 0; k < kLoads; ++k)
            if (take(live[k], word[k], d[k])) add(d[k], s[k]);
        } else {
#pragma unroll
          for (int k = 0; k < kLoads; ++k)
            live[k] = load(full, t * kStep + k * kThreads + threadIdx.x, d[k], s[k]);
#pragma unroll
          for (int k = 0; k < kLoads; ++k)
            if (live[k]) add(d[k], s[k]);
        }
      };
      for (i64 t = member; t < steps; t += members) {
        const u64 seen = poll();
#if RANC_DENSE_FULL_STEP
        if ((t + 1) * kStep <= n)
          step(true, t);
        else
#endif
          step(false, t);
        if (stop(seen)) break;
      }
    } else {
      const i64 tiles = n / kTile + (n % kTile != 0);
      for (i64 t = member; t < tiles; t += members) {
        const u64 seen = poll();
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
          unsigned d;
          State s;
          if (load(false, t * kTile + k * kThreads + threadIdx.x, d, s)) add(d, s);
        }
        if (stop(seen)) break;
      }
    }
    if constexpr (Checked) {
      if (__syncthreads_or(out_of_span()) && threadIdx.x == 0)
        atomicExch(reinterpret_cast<unsigned long long*>(missed), 1ull);
      // (a table the plan throws away: no flush)
      if (*static_cast<volatile u64*>(missed) != 0) return;
    } else {
      __syncthreads();
    }
    // The block's present slots into the device table, each block from its own place in the
    // part, so the blocks' atomics on one slot do not meet at once.
    const int start = static_cast<int>(static_cast<i64>(member) * width / members);
    for (int i = threadIdx.x; i < width; i += kThreads) {
      const int s = i + start < width ? i + start : i + start - width;
      if (temp.present[s] && agg.merge_global(table[first + s], temp.states[s]))
        flags[first + s] = 1;
    }
  }
};

/// The dense way's output, in key order (the table is indexed by the key word, so its present
/// slots in slot order are the groups in key order): no records, no sort, no merge. Each block
/// takes kTile consecutive slots (kItems a thread).
// Kernels, in order on one stream (P = the HashGroup policy), after DenseGroupAgent's run or
// shared_run:
//   1. DenseWriteAgent<P>::count(slots, agg, flags, counts)   one block a tile of slots:
//      counts[b] = the present slots of tile b.
//   2. DenseWriteAgent<P>::write(temp, slots, agg, bounds, table, flags, counts, groups)   the
//      same grid: each present slot s becomes group g (the present slots before it) by
//      agg.write(g, smallest word + s, table[s]); the last block stores the groups in groups[0].
// Buffers: counts: one i64 a tile of slots.
template <class Policy>
struct DenseWriteAgent {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;
  using Scan = BlockScan<i64, kThreads>;
  using Reduce = BlockReduce<i64, kThreads>;
  struct TempStorage {
    typename Scan::TempStorage scan;
    typename Reduce::TempStorage reduce;
    i64 before;
  };

  /// The hooks of the entry points (contract.cuh).
  struct Hooks {
    struct Agg {
      struct State;
      // the group g's output row: its key word and state
      __device__ void write(i64 g, u64 word, const State& s) const;
    } agg;
  };

  static constexpr LaunchRule count_launch{Grid::tiles, "slots", Policy::block_threads};
  template <class Agg>
  __device__ __forceinline__ static void count(i64 slots, Agg agg, const unsigned char* flags,
                                               i64* counts) {
    (void)agg;  // (an entry point takes the hooks: the writer's, unused here)
    __shared__ typename Reduce::TempStorage temp;
    const i64 first = static_cast<i64>(blockIdx.x) * kTile + static_cast<i64>(threadIdx.x) * kItems;
    i64 mine = 0;
#pragma unroll
    for (int k = 0; k < kItems; ++k) mine += first + k < slots && flags[first + k] != 0;
    const i64 total = Reduce(temp).Reduce(mine, Sum{});
    if (threadIdx.x == 0) counts[blockIdx.x] = total;
  }

  static constexpr LaunchRule write_launch{Grid::tiles, "slots", Policy::block_threads};
  template <class Agg>
  __device__ __forceinline__ static void write(TempStorage& temp, i64 slots, Agg agg,
                                               const u64* bounds, const void* table_buf,
                                               const unsigned char* flags, const i64* counts,
                                               i64* groups) {
    using State = typename Agg::State;
    const State* table = static_cast<const State*>(table_buf);
    // The groups of the tiles before this one (at most a few thousand counts, from L2).
    i64 before = 0;
    for (i64 j = threadIdx.x; j < static_cast<i64>(blockIdx.x); j += kThreads) before += counts[j];
    before = Reduce(temp.reduce).Reduce(before, Sum{});
    if (threadIdx.x == 0) temp.before = before;
    __syncthreads();
    before = temp.before;
    const i64 first = static_cast<i64>(blockIdx.x) * kTile + static_cast<i64>(threadIdx.x) * kItems;
    i64 present[kItems], at[kItems], total;
#pragma unroll
    for (int k = 0; k < kItems; ++k) present[k] = first + k < slots && flags[first + k] != 0;
    Scan(temp.scan).ExclusiveSum(present, at, total);
    const u64 smallest = dense_smallest(bounds);
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      if (present[k])
        agg.write(before + at[k], smallest + static_cast<u64>(first + k), table[first + k]);
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) groups[0] = before + total;
  }
};

/// The partitioned way of the hash group-by (CodegenOptions::hash_partitioned, off by default),
/// for key words that span too many values for DenseGroupAgent's shared-memory tables, each of
/// whose parts reads every row, but at most kPartsMost tables of Width slots: the rows are
/// counted by part (Width consecutive key words from the table's slot 0, kDenseTop - low), each
/// kept row's distance from slot 0 and its one-row state are moved once into its part, and each
/// part's rows are merged by its blocks into a table in shared memory, whose present slots go
/// into the device table as DenseGroupAgent's runs flush theirs (DenseWriteAgent then writes the
/// output). A kept row outside the parts is a miss: the generator's plan reads the flag back and
/// then groups by phase 1 instead. (H200, bench/groupby_partition_bench, 2^28 rows of (i32 key,
/// i32 value) into 2^24 keys, the same passes over 8-byte rows: 4.07 ms, against 8.8 for CUB's
/// sort and ReduceByKey and 5.5 for the best two-pass partition; session 54.)
// Kernels, in order on one stream (P = the HashGroup policy, T = P::block_threads):
//   0. sample(n, keep, key, bits, distinct)   one thread a row of the early run's sample (its
//      hooks map a sample's row to the input's); bits (kSampleBits bits) and *distinct zeroed
//      before: each kept row's key word hashed to a bit, *distinct = the bits set (a linear
//      count of the sample's distinct keys, which the generator takes the way from).
//   1. count(n, keep, key, low, parts, counts, flags)   a strided grid of T threads; counts
//      (kPartsMost + 1 u64) and flags (two u64) zeroed before. counts[p] = the kept rows whose
//      key word's distance from slot 0 lies in [p Width, (p + 1) Width), p < parts; flags[1] =
//      their number (what the plan sizes the parts' rows by); any other kept row sets flags[0]
//      (a miss).
//   2. starts(parts, low, agg, counts, cursors, table_bounds)   one block of T threads: counts[0, parts]
//      replaced by their exclusive sum (part p's first row; counts[parts] the rows), cursors[p] =
//      counts[p] too; table_bounds[0] = low (DenseWriteAgent's bounds).
//   3. scatter(temp, n, keep, key, agg, low, parts, cursors, offsets, states)   one block a tile of
//      T x ScatterItems rows, dynamic shared memory sizeof(TempStorageT<State>): each kept row's
//      distance from slot 0 into offsets[] and its one-row state into states[], at a row of its
//      part's run, which the tile claims from cursors[p] (one device atomic a part in the tile).
//      The tile's rows are first placed in shared memory in part order, so that consecutive
//      threads store consecutive rows of a run. The order of a part's rows depends on timing.
//   4. run(temp, parts, starts, offsets, states, agg, table, flags)   any grid (the generator's:
//      at least a few waves), dynamic shared memory sizeof(TempStorageT<State>): block b takes
//      the rows [b rows / grid, (b + 1) rows / grid) of the parts' rows in part order (an even
//      share, however the rows fall into parts: a heavy key's part gets many blocks), and for
//      each part they cover merges its rows into a table of Width slots (merge_atomic, presence
//      bytes), then its present slots into table[p x Width + s] (merge_global; flags[...] = 1
//      where the merge may be the slot's first).
// Buffers: bits: kSampleBits / 64 u64, zeroed; counts, cursors: kPartsMost + 1 u64 each;
// offsets: rows u32; states: rows x sizeof(State) bytes (void*); table: parts x Width x
// sizeof(State) bytes (void*, init() states); flags: parts x Width bytes, zeroed.
template <class Policy, int Width, int ScatterItems>
struct PartitionGroupAgent {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kScatterTile = kThreads * ScatterItems;
  /// The parts at most (the scatter's shared-memory runs: 16 bytes a part).
  static constexpr int kPartsMost = 2048;
  /// Below this many parts a warp's rows of one part take one shared-memory atomic (peers found
  /// by __match_any_sync, which costs more than the atomics with many parts: 2.3 against 0.28 ms
  /// to count 2^28 keys into 1024 parts on an H200, session 54).
  static constexpr int kMatchBelow = 64;
  static_assert(Width >= 256 && (Width & (Width - 1)) == 0, "parts of a power of two of keys");
  static_assert(ScatterItems >= 1, "the scatter's rows a thread");
  __host__ __device__ static constexpr int shift_of(int w) { return w <= 1 ? 0 : 1 + shift_of(w / 2); }
  static constexpr int kShift = shift_of(Width);

  /// The scatter's and the run's shared memory (dynamic: the generator launches both with at
  /// least sizeof(TempStorageT<State>)), one at a time.
  template <class State>
  struct ScatterStorage {
    i64 base[kPartsMost];  // the tile's first row of each part's run (claimed)
    int count[kPartsMost];
    int first[kPartsMost];  // the part's first place in the tile's order
    unsigned offsets[kScatterTile];
    State states[kScatterTile];
    typename BlockScan<int, kThreads>::TempStorage scan;
  };
  template <class State>
  struct RunStorage {
    State states[Width];
    unsigned char present[Width];
  };
  template <class State>
  struct TempStorageT {
    alignas(16) unsigned char bytes[sizeof(ScatterStorage<State>) > sizeof(RunStorage<State>)
                                        ? sizeof(ScatterStorage<State>)
                                        : sizeof(RunStorage<State>)];
  };

  /// The hooks of the entry points (contract.cuh).
  struct Hooks {
    __device__ bool keep(i64 row) const;  // the row takes part (a fused select)
    __device__ u64 key(i64 row) const;    // the row's packed key word, below 2^63
    struct Agg {
      struct State;
      __device__ State init() const;                        // the identity
      __device__ void accumulate(State& s, i64 row) const;  // fold a row into a state
      // a = a + b by atomics on a in shared memory (HashGroupAgent's merge_atomic)
      __device__ void merge_atomic(State& a, const State& b) const;
      // a = a + b by atomics on a in device memory; true when a's first field was at its
      // identity before (DenseGroupAgent's)
      __device__ bool merge_global(State& a, const State& b) const;
    } agg;
  };

  /// The sample's bitmap of hashed keys (8 KB).
  static constexpr int kSampleBits = 1 << 16;
  static constexpr LaunchRule sample_launch{Grid::threads, "n", 0};
  template <class Keep, class Key>
  __device__ __forceinline__ static void sample(i64 n, Keep keep, Key key, u64* bits,
                                                u64* distinct) {
    const i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n || !keep(i)) return;
    const u64 h = mix_key_word(key(i)) & (kSampleBits - 1);
    const unsigned long long bit = 1ull << (h & 63);
    if ((atomicOr(reinterpret_cast<unsigned long long*>(&bits[h >> 6]), bit) & bit) == 0)
      atomicAdd(reinterpret_cast<unsigned long long*>(distinct), 1ull);
  }

  static constexpr LaunchRule count_launch{Grid::strided, "n", Policy::block_threads};
  template <class Keep, class Key>
  __device__ __forceinline__ static void count(i64 n, Keep keep, Key key, i64 low, i64 parts,
                                               u64* counts, u64* flags) {
    __shared__ int h[kPartsMost];
    for (int p = threadIdx.x; p < parts; p += kThreads) h[p] = 0;
    __syncthreads();
    const u64 smallest = kDenseTop - static_cast<u64>(low);
    const u64 span = static_cast<u64>(parts) << kShift;
    const bool match = parts < kMatchBelow;
    bool out = false;
    // Four tiles' rows a step, all read before any is counted (as DenseGroupAgent::bounds).
    constexpr int kLoads = 4 * kItems;
    constexpr i64 kStep = static_cast<i64>(kLoads) * kThreads;
    const i64 steps = n / kStep + (n % kStep != 0);
    for (i64 t = blockIdx.x; t < steps; t += gridDim.x) {
      int part[kLoads];
#pragma unroll
      for (int k = 0; k < kLoads; ++k) {
        const i64 i = t * kStep + k * kThreads + threadIdx.x;
        const bool live = i < n && keep(i);
        const u64 d = live ? key(i) - smallest : 0;
        out |= live && d >= span;
        part[k] = live && d < span ? static_cast<int>(d >> kShift) : -1;
      }
#pragma unroll
      for (int k = 0; k < kLoads; ++k) rank(part[k], h, match);
    }
    if (__syncthreads_or(out) && threadIdx.x == 0)
      atomicExch(reinterpret_cast<unsigned long long*>(&flags[0]), 1ull);
    u64 rows = 0;
    for (int p = threadIdx.x; p < parts; p += kThreads)
      if (h[p] != 0) {
        atomicAdd(reinterpret_cast<unsigned long long*>(&counts[p]),
                  static_cast<unsigned long long>(h[p]));
        rows += static_cast<u64>(h[p]);
      }
    // (one atomic a warp for the rows' total)
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) rows += __shfl_xor_sync(0xffffffffu, rows, d);
    if ((threadIdx.x & 31) == 0 && rows != 0)
      atomicAdd(reinterpret_cast<unsigned long long*>(&flags[1]),
                static_cast<unsigned long long>(rows));
  }

  static constexpr LaunchRule starts_launch{Grid::one_block, "parts", Policy::block_threads};
  template <class Agg>
  __device__ __forceinline__ static void starts(i64 parts, i64 low, Agg agg, u64* counts,
                                                u64* cursors, u64* table_bounds) {
    (void)agg;  // (an entry point takes the hooks: the run's, unused here)
    __shared__ typename BlockScan<u64, kThreads>::TempStorage temp;
    constexpr int kPer = (kPartsMost + 1 + kThreads - 1) / kThreads;
    const i64 items = parts + 1;
    u64 mine[kPer], at[kPer], total;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const i64 p = static_cast<i64>(threadIdx.x) * kPer + j;
      mine[j] = p < parts ? counts[p] : 0;
    }
    BlockScan<u64, kThreads>(temp).ExclusiveSum(mine, at, total);
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const i64 p = static_cast<i64>(threadIdx.x) * kPer + j;
      if (p < items) counts[p] = cursors[p] = at[j];
    }
    if (threadIdx.x == 0) table_bounds[0] = static_cast<u64>(low);
  }

  static constexpr LaunchRule scatter_launch{Grid::strided, "n", Policy::block_threads};
  template <class Keep, class Key, class Agg>
  __device__ __forceinline__ static void scatter(TempStorageT<typename Agg::State>& temp, i64 n,
                                                 Keep keep, Key key, Agg agg, i64 low, i64 parts,
                                                 u64* cursors, unsigned* offsets, void* states_buf) {
    using State = typename Agg::State;
    auto& t = *reinterpret_cast<ScatterStorage<State>*>(temp.bytes);
    State* states = static_cast<State*>(states_buf);
    const u64 smallest = kDenseTop - static_cast<u64>(low);
    const u64 span = static_cast<u64>(parts) << kShift;
    const bool match = parts < kMatchBelow;
    const int per = static_cast<int>((parts + kThreads - 1) / kThreads);  // parts a thread scans
    const i64 tiles = n / kScatterTile + (n % kScatterTile != 0);
    for (i64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      const i64 b0 = tile * kScatterTile;
      for (int p = threadIdx.x; p < parts; p += kThreads) t.count[p] = 0;
      unsigned dist[ScatterItems];
      int part[ScatterItems], place[ScatterItems];
#pragma unroll
      for (int k = 0; k < ScatterItems; ++k) {
        const i64 i = b0 + k * kThreads + threadIdx.x;
        const bool live = i < n && keep(i);
        const u64 d = live ? key(i) - smallest : 0;
        dist[k] = static_cast<unsigned>(d);
        // (a row outside the parts is not moved: the count's miss flag kept the plan off this way)
        part[k] = live && d < span ? static_cast<int>(d >> kShift) : -1;
      }
      __syncthreads();  // (the counts cleared; the previous tile's stores done)
#pragma unroll
      for (int k = 0; k < ScatterItems; ++k) place[k] = rank(part[k], t.count, match);
      __syncthreads();
      int sum = 0;
      for (int j = 0; j < per; ++j) {
        const int p = static_cast<int>(threadIdx.x) * per + j;
        if (p < parts) sum += t.count[p];
      }
      int before = 0, total = 0;
      BlockScan<int, kThreads>(t.scan).ExclusiveSum(sum, before, total);
      for (int j = 0; j < per; ++j) {
        const int p = static_cast<int>(threadIdx.x) * per + j;
        if (p >= parts) break;
        t.first[p] = before;
        if (t.count[p] != 0)
          t.base[p] = static_cast<i64>(atomicAdd(reinterpret_cast<unsigned long long*>(&cursors[p]),
                                                 static_cast<unsigned long long>(t.count[p])));
        before += t.count[p];
      }
      __syncthreads();
      // The rows' states (their columns read here, once) at their places in part order.
#pragma unroll
      for (int k = 0; k < ScatterItems; ++k)
        if (part[k] >= 0) {
          const int at = t.first[part[k]] + place[k];
          State s = agg.init();
          agg.accumulate(s, b0 + k * kThreads + threadIdx.x);
          t.offsets[at] = dist[k];
          t.states[at] = s;
        }
      __syncthreads();
      for (int r = threadIdx.x; r < total; r += kThreads) {
        const unsigned d = t.offsets[r];
        const int p = static_cast<int>(d >> kShift);
        const i64 to = t.base[p] + (r - t.first[p]);
        offsets[to] = d;
        states[to] = t.states[r];
      }
    }
  }

  static constexpr LaunchRule run_launch{Grid::strided, "parts", Policy::block_threads};
  template <class Agg>
  __device__ __forceinline__ static void run(TempStorageT<typename Agg::State>& temp, i64 parts,
                                             const u64* starts, const unsigned* offsets,
                                             const void* states_buf, Agg agg, void* table_buf,
                                             unsigned char* flags) {
    using State = typename Agg::State;
    __shared__ i64 first_part;
    if (parts <= 0) return;
    auto& t = *reinterpret_cast<RunStorage<State>*>(temp.bytes);
    const State* states = static_cast<const State*>(states_buf);
    State* table = static_cast<State*>(table_buf);
    const i64 rows = static_cast<i64>(starts[parts]);
    const i64 lo = rows * blockIdx.x / gridDim.x, hi = rows * (blockIdx.x + 1) / gridDim.x;
    if (lo >= hi) return;
    // The part of row lo: the last p with starts[p] <= lo (at most 11 steps over 2048 parts).
    if (threadIdx.x == 0) {
      i64 a = 0, b = parts - 1;
      while (a < b) {
        const i64 mid = (a + b + 1) / 2;
        if (static_cast<i64>(starts[mid]) <= lo)
          a = mid;
        else
          b = mid - 1;
      }
      first_part = a;
    }
    __syncthreads();
    // (each block's flush starts at its own eighth of a part, so that the blocks of one part do
    // not meet on its slots at once)
    const int start = static_cast<int>(blockIdx.x % 8) * (Width / 8);
    for (i64 p = first_part, from = lo; from < hi; ++p) {
      const i64 to = min64(hi, static_cast<i64>(starts[p + 1]));
      if (to <= from) continue;  // (an empty part)
      __syncthreads();           // (the previous part flushed)
      for (int s = threadIdx.x; s < Width; s += kThreads) {
        t.states[s] = agg.init();
        t.present[s] = 0;
      }
      __syncthreads();
      // Rows a thread a step, all loaded before the first merge: 8 of one-word states (at one
      // block an SM, 48 KB of rows in flight an SM; the bench's part sums, 1024 threads x 8 rows,
      // took 0.65 ms for 2^28 8-byte rows on an H200), else 4 (8 of two words spilled).
      constexpr int kLoads = sizeof(State) <= 8 ? 8 : 4;
      const unsigned* part_offsets = offsets + from;
      const State* part_states = states + from;
      const i64 count = to - from;
      for (i64 b = threadIdx.x; b < count; b += static_cast<i64>(kLoads) * kThreads) {
        unsigned d[kLoads];
        State st[kLoads];
#pragma unroll
        for (int k = 0; k < kLoads; ++k) {
          const i64 i = b + k * kThreads;
          d[k] = i < count ? part_offsets[i] & (Width - 1) : ~0u;
          st[k] = i < count ? part_states[i] : agg.init();
        }
#pragma unroll
        for (int k = 0; k < kLoads; ++k)
          if (d[k] != ~0u) {
            agg.merge_atomic(t.states[d[k]], st[k]);
            t.present[d[k]] = 1;
          }
      }
      __syncthreads();
      State* part_table = table + p * Width;
      unsigned char* part_flags = flags + p * Width;
      for (int i = threadIdx.x; i < Width; i += kThreads) {
        const int s = i + start < Width ? i + start : i + start - Width;
        if (t.present[s] && agg.merge_global(part_table[s], t.states[s])) part_flags[s] = 1;
      }
      from = to;
    }
  }

 private:
  // A row's place among its part's rows counted so far in h[part] (part -1: no row, 0). match:
  // by its warp's peers of the same part (their leader adds their count), else one atomic a row.
  __device__ __forceinline__ static int rank(int part, int* h, bool match) {
    if (!match) return part >= 0 ? atomicAdd(&h[part], 1) : 0;
    const unsigned peers = __match_any_sync(0xffffffffu, part);
    const int lane = static_cast<int>(threadIdx.x & 31), leader = __ffs(peers) - 1;
    int first = 0;
    if (lane == leader && part >= 0) first = atomicAdd(&h[part], __popc(peers));
    first = __shfl_sync(0xffffffffu, first, leader);
    return first + __popc(peers & ((1u << lane) - 1u));
  }
};

}  // namespace ranc::tpl
