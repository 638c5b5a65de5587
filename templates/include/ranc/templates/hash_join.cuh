// ranc/templates/hash_join.cuh: partitioned hash equi-join (paper 004's PHJ: radix partitions that
// lie contiguous in arrays, joined in shared memory, skew spread over blocks by probe tiles).
//
// Keys: KeyT = unsigned int or unsigned long long. The generator packs a row's join key into one
// word (integers as unsigned, floats via total_order_key, two 32-bit keys into 64 bits) and
// stores h = hash_key(word). hash_key is a bijection (murmur3's finaliser), so two keys are equal
// exactly when their h are: the join compares h and never needs the key itself, and the low bits
// of h are a well-mixed partition number whatever the keys' distribution.
// Row ids are 32-bit: each input has fewer than 2^32 rows. The RIGHT input is the build side.
//
// Launch sequence (ra_ops/join/hash_lowering.cpp), per side X in {left (probe), right (build)}:
//   1. h of every row that takes part (a fused select drops rows), compacted: keys_X[n_X]
//      (KeyT), and alongside it whatever the generator needs of the row later: 4-byte attribute
//      values and/or the row id. A map kernel, or a select kernel when a fused stage filters.
//   2. bits = min(kMaxRadixBits, ceil(log2(ceil(n_right / kTargetBuildRows)))): the fewest radix
//      bits that bring the average build partition to kTargetBuildRows. parts = 2^bits. Partition
//      p holds the rows with (h & (parts - 1)) == p. Or, for a build side of more than
//      kTargetBuildRows and at most the generator's global rows (one table that stays in L2),
//      bits = 0 and a GlobalJoinTable: zeroed, then global_join_insert(table, keys_right[j], j)
//      for every build row j (one thread a row); the join runs with Global = true.
//   3. A stable radix partition of h on bits [0, bits) moving every value array alike (CUB
//      onesweep sorts of 8 bits a pass, the keys with each array; paper 004's
//      GFTR, the join then reads the attributes it writes in partition order instead of
//      gathering them through row ids). With bits == 0 nothing is partitioned and the arrays
//      are read in row order.
//   4. partition_bounds_search(q, n_X, keys_X, bits, bounds_X) for q <= parts (one thread per
//      bound, a binary search each; bounds_X: parts + 1 int64): partition p is rows
//      [bounds_X[p], bounds_X[p + 1]).
// Then the join, over tiles of the partitioned probe side (J = HashJoin policy, tile =
// J::tile_items probe rows, grid = at least max(1, ceil(n_left / tile)) blocks, J::block_threads
// threads, dynamic shared memory sizeof(TempStorage); the probe rows spread evenly over the
// grid, so the generator may launch more blocks, e.g. one per two partitions more):
//   5. run<Global>(temp, bits, n_left, keys_left, bounds_left, keys_right, bounds_right, table, residual,
//      emit, capacity, header): Global false builds shared-memory tables of the partitions (the table
//      argument is not read), true probes `table` (bits 0, no build); the generator compiles one
//      kernel of each and its launch picks by size (rt::Launch::alt_kernel). header (1 x u64,
//      zeroed) counts the output rows claimed; emit(i, j, o)
//      (positions i, j in partition order) runs only for o < capacity. When header[0] ends above
//      capacity, the executor grows the output to header[0] rows and runs the kernel again
//      (rt::Regrow): an output sized by an estimate (the probe rows, exact for a foreign-key join)
//      needs no count pass.
//   5'. Or run_paged<PageRows, Global>(temp, out, bits, ...): the same, writing a paged list
//      (paged.cuh); one chain of pages per warp of each block: out.heads has
//      tiles * (J::block_threads / 32) entries.
// The probe rows of a partition are cut into pieces of at most a tile (J::tile_items rows),
// starting at the partition's first row; a piece belongs to the block whose even share of the
// probe rows holds its first row. For a piece the block builds the partition's build rows into
// a shared-memory table and probes it with the piece's rows, kept in registers: a partition of
// at most a tile of probe rows is built once. A partition with more build rows than kChunk (a
// heavy key, or a partition count capped at kMaxRadixBits) is built in chunks, each probed by
// the piece: correct under any skew. A heavy probe key spreads over as many blocks as its rows
// fill tiles. Each piece's matches are counted first (probes of the shared table), so a block
// claims its output rows with one global atomic per piece, and the warps then write their rows
// in order, coalesced. The order of output rows is unspecified (bag semantics).
#pragma once

#include <ranc/templates/join.cuh>
#include <ranc/templates/paged.cuh>
#include <ranc/templates/select.cuh>

namespace ranc::tpl {

constexpr int kMaxRadixBits = 16;

/// A bijection of the key word (murmur3 fmix32 / fmix64): equal h <=> equal keys.
__device__ __forceinline__ unsigned int hash_key(unsigned int k) {
  k ^= k >> 16; k *= 0x85ebca6bu; k ^= k >> 13; k *= 0xc2b2ae35u; k ^= k >> 16;
  return k;
}
__device__ __forceinline__ unsigned long long hash_key(unsigned long long k) {
  k ^= k >> 33; k *= 0xff51afd7ed558ccdull; k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ull; k ^= k >> 33;
  return k;
}
/// The inverses: the key word whose hash_key is h (the join recovers key attributes from h).
__device__ __forceinline__ unsigned int hash_key_inverse(unsigned int h) {
  h ^= h >> 16; h *= 0x7ed1b41du; h ^= (h >> 13) ^ (h >> 26); h *= 0xa5cb9243u; h ^= h >> 16;
  return h;
}
__device__ __forceinline__ unsigned long long hash_key_inverse(unsigned long long h) {
  h ^= h >> 33; h *= 0x9cb4b2f8129337dbull; h ^= h >> 33; h *= 0x4f74430c22a54005ull; h ^= h >> 33;
  return h;
}
/// The table slot of h: bits above the partition bits (at most kMaxRadixBits).
__device__ __forceinline__ unsigned int hash_slot(unsigned int h) { return h >> 16; }
__device__ __forceinline__ unsigned int hash_slot(unsigned long long h) {
  return static_cast<unsigned int>(h >> 32);
}

/// Step 4: with one thread per partition q <= parts (= 2^bits), bounds[q] = the first row of the
/// n partitioned keys whose partition is q or later (bounds[parts] = n), by a binary search over
/// the keys' partition numbers, which the partition leaves non-decreasing (the bounds need no
/// zeroing; an empty side gets all 0). About 2^16 searches of ~log2 n dependent loads, the first
/// ones the same for every thread: 0.2-0.25 ms less a side than a pass over all n keys at 2^27
/// rows (H100, bench/RESULTS.md, session 27).
template <class KeyT>
__device__ __forceinline__ void partition_bounds_search(i64 q, i64 n, const KeyT* keys, i64 bits, i64* bounds) {
  const i64 parts = i64(1) << bits;
  if (q < 0 || q > parts) return;
  const KeyT mask = static_cast<KeyT>((KeyT(1) << bits) - 1);
  i64 lo = q == parts ? n : 0, hi = n;
  while (lo < hi) {
    const i64 mid = lo + (hi - lo) / 2;
    if (static_cast<i64>(keys[mid] & mask) < q) lo = mid + 1;
    else hi = mid;
  }
  bounds[q] = lo;
}

/// hash_set_insert and hash_set_find (below) of a key whose hash_key is h: the global join
/// table's 64-bit keys use the same set of slots.
template <class KeyT>
__device__ __forceinline__ i64 hash_set_insert_hashed(KeyT* slots, i64 capacity, KeyT h) {
  const KeyT mark = static_cast<KeyT>(~h);
  if (mark == 0) {
    slots[capacity] = 1;  // every writer stores the same value
    return capacity;
  }
  const i64 mask = capacity - 1;
  for (i64 at = static_cast<i64>(h) & mask;; at = (at + 1) & mask) {
    // A slot only goes from empty to a key, so a stale empty read is caught by the CAS, and
    // a key already present (a duplicate right key) costs a load, not an atomic.
    KeyT cur = slots[at];
    if (cur == 0) cur = atomicCAS(slots + at, KeyT(0), mark);
    if (cur == 0 || cur == mark) return at;
  }
}
template <class KeyT>
__device__ __forceinline__ i64 hash_set_find_hashed(const KeyT* slots, i64 capacity, KeyT h) {
  const KeyT mark = static_cast<KeyT>(~h);
  if (mark == 0) return slots[capacity] != 0 ? capacity : -1;
  const i64 mask = capacity - 1;
  for (i64 at = static_cast<i64>(h) & mask;; at = (at + 1) & mask) {
    const KeyT cur = slots[at];
    if (cur == mark) return at;
    if (cur == 0) return -1;
  }
}

/// The build side in one table in device memory, for build sides too large for one shared-memory
/// table and small enough that the table stays in L2 (hash_lowering.cpp's global rows): nothing is
/// partitioned (bits == 0) and the probe side is read once, in row order. Every distinct key has one
/// slot; the build rows of a key form a chain (its latest row in the slot, each row's predecessor in
/// next[]), so a heavy build key costs only the probes that match it, and the table's clusters stay
/// as short as for distinct keys. A chain word is a build position (bits 0-30: build sides of fewer
/// than 2^31 - 1 rows) with bit 31 set when an older row of the key follows (next[position]).
/// Zeroed before the build; every word is stored complemented, so 0 marks a free slot:
///   32-bit keys: slots[capacity] of ~(h << 32 | chain word): a probe step is one load.
///   64-bit keys: slots[capacity + 1] of the hash set's (hash_set_insert_hashed: ~h, the key
///                whose h is ~0 marked in slots[capacity]) and heads[capacity + 1] of ~chain word.
///   next[build rows]: the chain word of the row of the same key inserted before it.
/// The join's entry points take it with their template value Global: true, they probe only it;
/// false, they build shared-memory tables of partitions only (the table is not read). One way's
/// code a kernel.
struct GlobalJoinTable {
  unsigned long long* slots;
  unsigned int* heads;  // 64-bit keys only
  unsigned int* next;
  i64 capacity;         // a power of two of at least twice the build rows
};
constexpr unsigned int kChainMore = 0x80000000u;

/// Inserts build position `pos` (below 2^31 - 1) of key hash h (one thread per build row).
__device__ __forceinline__ void global_join_insert(const GlobalJoinTable& t, unsigned int h, unsigned int pos) {
  const i64 mask = t.capacity - 1;
  i64 s = static_cast<i64>(h) & mask;
  unsigned long long cur = 0;  // first a claim, not a load: most build keys find their slot free
  for (;;) {
    if (cur == 0) {  // free: claim it for the key
      cur = atomicCAS(&t.slots[s], 0ull, ~((static_cast<unsigned long long>(h) << 32) | pos));
      if (cur == 0) return;
      continue;  // taken meanwhile: look at what is there now
    }
    const unsigned long long e = ~cur;
    if (static_cast<unsigned int>(e >> 32) == h) {  // the key's slot: become its chain's head
      const unsigned long long old =
          atomicCAS(&t.slots[s], cur, ~((static_cast<unsigned long long>(h) << 32) | pos | kChainMore));
      if (old == cur) {
        t.next[pos] = static_cast<unsigned int>(e);
        return;
      }
      cur = old;
      continue;
    }
    s = (s + 1) & mask;
    cur = t.slots[s];
  }
}
__device__ __forceinline__ void global_join_insert(const GlobalJoinTable& t, unsigned long long h,
                                                   unsigned int pos) {
  const i64 s = hash_set_insert_hashed(t.slots, t.capacity, h);
  unsigned int cur = t.heads[s];
  for (;;) {
    const unsigned int want = cur == 0 ? ~pos : ~(pos | kChainMore);
    const unsigned int old = atomicCAS(&t.heads[s], cur, want);
    if (old == cur) {
      if (cur != 0) t.next[pos] = ~cur;
      return;
    }
    cur = old;
  }
}

/// f(j) for the build position j of every row of key hash h in the global table.
template <class F>
__device__ __forceinline__ void global_join_chain(const GlobalJoinTable& t, unsigned int w, F& f) {
  for (;;) {
    f(w & ~kChainMore);
    if (!(w & kChainMore)) return;
    w = t.next[w & ~kChainMore];
  }
}
template <class F>
__device__ __forceinline__ void global_join_each(const GlobalJoinTable& t, unsigned int h, F& f) {
  const i64 mask = t.capacity - 1;
  for (i64 s = static_cast<i64>(h) & mask;; s = (s + 1) & mask) {
    const unsigned long long cur = t.slots[s];
    if (cur == 0) return;
    const unsigned long long e = ~cur;
    if (static_cast<unsigned int>(e >> 32) == h) {
      global_join_chain(t, static_cast<unsigned int>(e), f);
      return;
    }
  }
}
template <class F>
__device__ __forceinline__ void global_join_each(const GlobalJoinTable& t, unsigned long long h, F& f) {
  const i64 s = hash_set_find_hashed<unsigned long long>(t.slots, t.capacity, h);
  if (s < 0) return;
  const unsigned int w = t.heads[s];
  if (w != 0) global_join_chain(t, ~w, f);
}

template <class Policy, class KeyT, int TableSlots>
struct HashJoinReduceAgent;  // join_reduce.cuh

/// HashJoinAgent's shared-memory table: per slot the key's h and the build position. 32-bit keys
/// share one 64-bit word with their position (h << 32 | position; ~0 marks a free slot), so a
/// probe step is one shared load and an insert one 64-bit compare-and-swap; 64-bit keys keep
/// two arrays (a position of kEmpty marks a free slot).
template <class KeyT, int Slots>
struct HashJoinTable {
  KeyT keys[Slots];
  unsigned int rows[Slots];
};
template <int Slots>
struct HashJoinTable<unsigned int, Slots> {
  unsigned long long slots[Slots];
};

/// Build and probe in shared memory. TableSlots: the largest table (a power of two); a
/// partition's build rows go in chunks of kChunk = TableSlots / 2, each into the smallest table
/// of at least twice its rows.
template <class Policy, class KeyT, int TableSlots = 8192>
struct HashJoinAgent {
  // run_fold is HashJoinReduceAgent's (join_reduce.cuh), not an entry point of its own.
  template <class, class, int>
  friend struct HashJoinReduceAgent;
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;
  static constexpr int kWarps = kThreads / 32;
  static_assert((TableSlots & (TableSlots - 1)) == 0, "TableSlots must be a power of two");
  static constexpr int kChunk = TableSlots / 2;
  /// The average build rows per partition the radix bits aim at (step 2): half a chunk, so
  /// that partitions rarely need a second chunk.
  static constexpr i64 kTargetBuildRows = kChunk / 2;
  static constexpr unsigned int kEmpty = 0xffffffffu;

  static constexpr bool kPacked = sizeof(KeyT) == 4;  // HashJoinTable's one-word slots
  static constexpr unsigned long long kEmptySlot = ~0ull;
  struct TempStorage {
    HashJoinTable<KeyT, TableSlots> table;
    unsigned long long base;        // run: the first output row of the segment's matches
    unsigned int total;             // run: the round's matches, added by the warps
    unsigned int claimed;           // run: the round's matches, claimed in the output
    unsigned int cursor;            // run: matches of the round taken by warps so far
  };

  /// The hooks of run() and run_paged() (contract.cuh); i is a left (probe) position, j a right
  /// (build) position, both in partition order (the generator reads the rows' attributes from
  /// columns partitioned alike, or through partitioned row ids).
  struct Hooks {
    __device__ bool residual(i64 i, i64 j) const;  // NoResidual = none
    // Write the match to output row out_row (run) or to row handle out_row of the pages (run_paged).
    __device__ void emit(i64 i, i64 j, i64 out_row) const;
  };
  static constexpr LaunchRule run_launch{Grid::tiles, "nl", Policy::block_threads};
  static constexpr LaunchRule run_paged_launch{Grid::tiles, "nl", Policy::block_threads};
  // (Grid::tiles is the fewest blocks; more spread the probe rows thinner.)

  template <bool Global, class Residual, class Emit>
  __device__ __forceinline__ static void run(TempStorage& temp, i64 bits, i64 nl, const KeyT* l_keys,
                                             const i64* l_bounds, const KeyT* r_keys, const i64* r_bounds,
                                             GlobalJoinTable table, Residual residual, Emit emit, i64 capacity,
                                             unsigned long long* header) {
    WarpPageWriter<1> unused;
    drive<false, 1, false, Global>(temp, unused, PagedOut{}, bits, nl, l_keys, l_bounds, r_keys, r_bounds, table,
                                   residual, emit, capacity, header);
  }

  template <int PageRows, bool Global, class Residual, class Emit>
  __device__ __forceinline__ static void run_paged(TempStorage& temp, const PagedOut& out, i64 bits, i64 nl,
                                                   const KeyT* l_keys, const i64* l_bounds, const KeyT* r_keys,
                                                   const i64* r_bounds, GlobalJoinTable table, Residual residual,
                                                   Emit emit) {
    WarpPageWriter<PageRows> w;
    drive<true, PageRows, false, Global>(temp, w, out, bits, nl, l_keys, l_bounds, r_keys, r_bounds, table,
                                         residual, emit, 0, nullptr);
    w.finish(out, tile_index() * kWarps + threadIdx.x / 32);
  }

 private:
  // The matches passed to fold(i, j) instead of written (join_reduce.cuh's HashJoinReduceAgent):
  // no output rows are claimed. Returns with the whole block, after a barrier.
  template <bool Global, class Residual, class Fold>
  __device__ __forceinline__ static void run_fold(TempStorage& temp, i64 bits, i64 nl, const KeyT* l_keys,
                                                  const i64* l_bounds, const KeyT* r_keys, const i64* r_bounds,
                                                  const GlobalJoinTable& table, Residual residual, Fold fold) {
    WarpPageWriter<1> unused;
    auto emit = [&](i64 i, i64 j, i64) { fold(i, j); };
    drive<false, 1, true, Global>(temp, unused, PagedOut{}, bits, nl, l_keys, l_bounds, r_keys, r_bounds, table,
                                  residual, emit, 0, nullptr);
  }

  // The table of build rows [c0, c1) (at most kChunk), ready for probing when it returns (every
  // thread calls it); returns the table's slot mask.
  __device__ __forceinline__ static unsigned int build(TempStorage& temp, const KeyT* r_keys, i64 c0, i64 c1) {
    const unsigned int n = static_cast<unsigned int>(c1 - c0);
    unsigned int size = 64;
    while (size < 2 * n) size <<= 1;
    const unsigned int mask = size - 1;
    // The chunk's keys are loaded before the table is cleared: all of a thread's loads in
    // flight at once, their latency behind the clearing and its barrier.
    constexpr int kPer = (kChunk + kThreads - 1) / kThreads;
    KeyT hs[kPer];
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const unsigned int r = threadIdx.x + k * kThreads;
      hs[k] = r < n ? r_keys[c0 + r] : KeyT(0);
    }
    if constexpr (kPacked) {
      for (unsigned int s = threadIdx.x; s < size; s += kThreads) temp.table.slots[s] = kEmptySlot;
    } else {
      for (unsigned int s = threadIdx.x; s < size; s += kThreads) temp.table.rows[s] = kEmpty;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const unsigned int r = threadIdx.x + k * kThreads;
      if (r < n) {
        unsigned int s = hash_slot(hs[k]) & mask;
        if constexpr (kPacked) {
          // Positions are below kEmpty (fewer than 2^32 - 1 build rows), so no entry is ~0.
          const unsigned long long e =
              (static_cast<unsigned long long>(hs[k]) << 32) | static_cast<unsigned int>(c0 + r);
          while (atomicCAS(&temp.table.slots[s], kEmptySlot, e) != kEmptySlot) s = (s + 1) & mask;
        } else {
          while (atomicCAS(&temp.table.rows[s], kEmpty, static_cast<unsigned int>(c0 + r)) != kEmpty)
            s = (s + 1) & mask;
          temp.table.keys[s] = hs[k];
        }
      }
    }
    __syncthreads();
    return mask;
  }

  // f(j) for the build position j of every entry of key h in the table, in probe order.
  template <class F>
  __device__ __forceinline__ static void each_match(const TempStorage& temp, unsigned int mask, KeyT h, F f) {
    unsigned int s = hash_slot(h) & mask;
    if constexpr (kPacked) {
      for (unsigned long long e = temp.table.slots[s]; e != kEmptySlot; s = (s + 1) & mask, e = temp.table.slots[s])
        if (static_cast<unsigned int>(e >> 32) == h) f(static_cast<unsigned int>(e));
    } else {
      for (unsigned int j = temp.table.rows[s]; j != kEmpty; s = (s + 1) & mask, j = temp.table.rows[s])
        if (temp.table.keys[s] == h) f(j);
    }
  }
  // The tables a piece probes: a chunk's in shared memory, or the global one.
  struct SharedMatch {
    const TempStorage& temp;
    unsigned int mask;
    template <class F>
    __device__ __forceinline__ void each(KeyT h, F f) const { each_match(temp, mask, h, f); }
  };
  struct GlobalMatch {
    const GlobalJoinTable& g;
    template <class F>
    __device__ __forceinline__ void each(KeyT h, F f) const { global_join_each(g, h, f); }
  };

  // Matches of probe key h (position i) in the table: their number, and the first one's build
  // position.
  template <class Match, class Residual>
  __device__ __forceinline__ static int probe(const Match& m, KeyT h, i64 i, Residual& residual,
                                              unsigned int& first) {
    int found = 0;
    m.each(h, [&](unsigned int j) {
      if (residual(i, static_cast<i64>(j))) {
        if (found == 0) first = j;
        ++found;
      }
    });
    return found;
  }

  // Passes the `found` matches of probe position i to place(i, j, m), m = 0, 1, ...
  template <class Match, class Residual, class Emit, class Place>
  __device__ __forceinline__ static void write(const Match& mt, KeyT h, i64 i, int found, unsigned int first,
                                               Residual& residual, Emit& emit, Place place) {
    if (found == 1) {
      place(i, static_cast<i64>(first), 0);
    } else if (found > 1) {
      int m = 0;
      mt.each(h, [&](unsigned int j) {
        if (residual(i, static_cast<i64>(j))) place(i, static_cast<i64>(j), m++);
      });
    }
  }

  // The probe rows li[k] < seg_end (keys h[k]) of a piece against one table: their matches
  // folded, written to pages, or written to rows claimed by one global atomic. Returns after a
  // barrier (the table, claimed and cursor may then be rewritten).
  template <bool Paged, int PageRows, bool Fold, class Match, class Residual, class Emit>
  __device__ __forceinline__ static void probe_piece(TempStorage& temp, WarpPageWriter<PageRows>& w,
                                                     const PagedOut& out, const Match& match,
                                                     const KeyT (&h)[kItems], const i64 (&li)[kItems],
                                                     i64 seg_end, Residual& residual, Emit& emit,
                                                     i64 capacity, unsigned long long* header) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    int found[kItems];
    unsigned int first[kItems];
    int mine = 0;
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      found[k] = 0;
      first[k] = 0;
      if (li[k] < seg_end) {
        found[k] = probe(match, h[k], li[k], residual, first[k]);
        mine += found[k];
      }
    }
    if constexpr (Fold) {
#pragma unroll
      for (int k = 0; k < kItems; ++k)
        write(match, h[k], li[k], found[k], first[k], residual, emit, [&](i64 i, i64 j, int) { emit(i, j, 0); });
    } else if constexpr (Paged) {
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const i64 x = w.reserve(out, found[k]);  // every lane of the warp, also with nothing
        write(match, h[k], li[k], found[k], first[k], residual, emit, [&](i64 i, i64 j, int m) {
          const i64 hdl = w.handle(out, x + m);
          if (hdl >= 0) emit(i, j, hdl);
        });
      }
    } else {
      // The segment's matches: one global claim, then warps take their rows in order.
      int wsum = mine;
#pragma unroll
      for (int d = 16; d > 0; d >>= 1) wsum += __shfl_xor_sync(0xffffffffu, wsum, d);
      if (lane == 0 && wsum) atomicAdd(&temp.total, static_cast<unsigned int>(wsum));
      __syncthreads();
      if (threadIdx.x == 0) {
        // total is zeroed here, before the barrier that the next round's adds come after.
        temp.claimed = temp.total;
        temp.total = 0;
        temp.cursor = 0;
        if (temp.claimed) temp.base = atomicAdd(header, static_cast<unsigned long long>(temp.claimed));
      }
      __syncthreads();
      if (temp.claimed) {
        const i64 base = static_cast<i64>(temp.base);
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
          // The lanes' offsets: a ballot when no lane has more than one match (a foreign
          // key's join), else a scan of the counts.
          int incl, wtotal;
          const unsigned int one = __ballot_sync(0xffffffffu, found[k] == 1);
          if (!__any_sync(0xffffffffu, found[k] > 1)) {
            incl = __popc(one & (0xffffffffu >> (31 - lane)));
            wtotal = __popc(one);
          } else {
            incl = found[k];
#pragma unroll
            for (int d = 1; d < 32; d <<= 1) {
              const int v = __shfl_up_sync(0xffffffffu, incl, d);
              if (lane >= d) incl += v;
            }
            wtotal = __shfl_sync(0xffffffffu, incl, 31);
          }
          if (wtotal == 0) continue;  // uniform in the warp
          unsigned int wbase = 0;
          if (lane == 31) wbase = atomicAdd(&temp.cursor, static_cast<unsigned int>(wtotal));
          wbase = __shfl_sync(0xffffffffu, wbase, 31);
          const i64 o = base + wbase + (incl - found[k]);
          write(match, h[k], li[k], found[k], first[k], residual, emit, [&](i64 i, i64 j, int m) {
            if (o + m < capacity) emit(i, j, o + m);
          });
        }
      }
    }
    __syncthreads();  // claimed and cursor (and after the last chunk the table) are rewritten
  }

  template <bool Paged, int PageRows, bool Fold, bool Global, class Residual, class Emit>
  __device__ __forceinline__ static void drive(TempStorage& temp, WarpPageWriter<PageRows>& w, const PagedOut& out,
                                               i64 bits, i64 nl, const KeyT* l_keys, const i64* l_bounds,
                                               const KeyT* r_keys, const i64* r_bounds, const GlobalJoinTable& table,
                                               Residual& residual, Emit& emit, i64 capacity,
                                               unsigned long long* header) {
    // The probe rows spread evenly over the grid: a grid of more blocks than probe tiles gives
    // a small probe side against a large build side a block per partition or two, instead of
    // a few blocks each building many partitions' tables; a grid of fewer blocks (paged
    // outputs: fewer page chains) gives each block several tiles.
    //
    // Pieces: a partition's probe rows [p0, p1) split at p0, p0 + kTile, p0 + 2 kTile, ...; a
    // piece belongs to the block whose range [start, end) holds its first row, and that block
    // probes all of it (up to kTile rows, past `end` too). A partition of at most kTile probe
    // rows is then one piece, built into a table once, where cutting partitions at the blocks'
    // ranges built most partitions twice (measured on the H100 at 2^27 rows: see bench/RESULTS.md),
    // and a heavy partition's pieces still spread over the blocks its rows span.
    const i64 per_block = (nl + gridDim.x - 1) / gridDim.x;
    const i64 start = tile_index() * per_block;
    if (start >= nl) return;  // the whole block: no rows
    const i64 end = min64(start + per_block, nl);
    const KeyT pmask = static_cast<KeyT>((KeyT(1) << bits) - 1);
    if (threadIdx.x == 0) temp.total = 0;  // the first build's barriers order it before any add
    // The partition holding row `start`, and its first piece that starts at or after `start`
    // (every thread reads the same words).
    i64 part = static_cast<i64>(l_keys[start] & pmask);
    i64 part_end = l_bounds[part + 1];
    i64 pos = l_bounds[part] + (start - l_bounds[part] + kTile - 1) / kTile * kTile;
    for (;;) {
      if (pos >= part_end) {  // the next partition's first piece starts at part_end
        if (part_end >= end) break;
        pos = part_end;
        part = static_cast<i64>(l_keys[pos] & pmask);
        part_end = l_bounds[part + 1];
      }
      if (pos >= end) break;
      // The piece [pos, seg_end) of partition `part`: one round of the probe tile.
      const i64 seg_end = min64(pos + kTile, part_end);
      // The piece's probe keys (at most a tile: kItems a thread), loaded before its build so
      // that their loads overlap the build's, and all in flight at once (loaded inside the
      // probe loop, each waited for the one before it: its branches kept the compiler from
      // hoisting them).
      KeyT h[kItems];
      i64 li[kItems];
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        li[k] = pos + k * kThreads + threadIdx.x;
        h[k] = li[k] < seg_end ? l_keys[li[k]] : KeyT(0);
      }
      if constexpr (Global) {  // the global table (bits == 0): no build
        probe_piece<Paged, PageRows, Fold>(temp, w, out, GlobalMatch{table}, h, li, seg_end, residual, emit,
                                           capacity, header);
      } else {
        const i64 r0 = r_bounds[part], r1 = r_bounds[part + 1];
        for (i64 c0 = r0; c0 < r1; c0 += kChunk) {
          const unsigned int mask = build(temp, r_keys, c0, min64(c0 + kChunk, r1));
          probe_piece<Paged, PageRows, Fold>(temp, w, out, SharedMatch{temp, mask}, h, li, seg_end, residual, emit,
                                             capacity, header);
        }
      }
      pos = seg_end;
    }
  }
};

// ---- Hash semi and anti joins: a global hash set of the build side's keys ----
// A semi or anti join only asks whether a left row has a matching right row, so the right
// side is not partitioned: its keys go into one open-addressing table in device memory
// (linear probing, capacity a power of two of at least twice the right rows, so it is at
// most half full), and the join is a predicate over the left rows that probes it (a fused
// stage of whatever kernel streams the left side; the left order is kept).
//   slots: capacity + 1 KeyT, zeroed. A slot holds ~hash_key(word) (0 = empty); the one key
//          whose hash is all ones would store 0, so it is recorded in slots[capacity] instead.
//   heads, next (only with a residual, which must see the matching right rows): heads
//          (capacity + 1 int64, zeroed) holds per slot 1 + the last right row inserted with
//          its key, next (one int64 per right row) 1 + the row inserted before it (0 ends
//          the chain). The residual walks the chain of the left row's key.
// Build: one thread per right row, hash_set_insert, then with chains hash_chain_push.
// Probe: hash_set_find; -1 when the key is absent.
// Build in windows (without a residual, CodegenOptions::hash_build_window_bits = W >= 0): the
// inserts of a set larger than L2 are random accesses to device memory (2^27 keys: 12.5 of
// the semi join's 18.2 ms on the H100, bench/RESULTS.md session 11). So the right keys are
// first written as hash_window_word<W> (h rotated right by W bits), radix-partitioned on
// their low bits [0, log2(capacity) - W) (the slot's bits above a window of 2^W slots), and
// inserted in that order (window_unrotate<W> gives h back): the warps in flight insert into
// a few windows at a time, which stay in L2. The inner join's GlobalJoinTable is built the
// same way from its window_rotate'd hashes, with the build positions alongside.

/// h rotated right by W bits (0 <= W < the word's bits), and back.
template <int W, class KeyT>
__device__ __forceinline__ KeyT window_rotate(KeyT h) {
  constexpr int kBits = 8 * static_cast<int>(sizeof(KeyT));
  static_assert(W >= 0 && W < kBits, "a window's bits are fewer than the key word's");
  if constexpr (W == 0) {
    return h;
  } else {
    return static_cast<KeyT>((h >> W) | (h << (kBits - W)));
  }
}
template <int W, class KeyT>
__device__ __forceinline__ KeyT window_unrotate(KeyT w) {
  constexpr int kBits = 8 * static_cast<int>(sizeof(KeyT));
  return window_rotate<(kBits - W) % kBits>(w);
}
/// hash_key(word) rotated right by W bits.
template <int W, class KeyT>
__device__ __forceinline__ KeyT hash_window_word(KeyT word) {
  return window_rotate<W>(hash_key(word));
}

/// Inserts `word`'s key (if absent) and returns its slot (capacity for the all-ones hash).
template <class KeyT>
__device__ __forceinline__ i64 hash_set_insert(KeyT* slots, i64 capacity, KeyT word) {
  return hash_set_insert_hashed(slots, capacity, hash_key(word));
}

/// The slot of `word`'s key, or -1 when the set does not hold it.
template <class KeyT>
__device__ __forceinline__ i64 hash_set_find(const KeyT* slots, i64 capacity, KeyT word) {
  return hash_set_find_hashed(slots, capacity, hash_key(word));
}

/// Links right row j into the chain of its key's slot.
__device__ __forceinline__ void hash_chain_push(i64* heads, i64* next, i64 slot, i64 j) {
  next[j] = static_cast<i64>(atomicExch(reinterpret_cast<unsigned long long*>(heads + slot),
                                        static_cast<unsigned long long>(j + 1)));
}

/// Does some right row of the chain of `slot` (-1: none) satisfy pred(j)?
template <class Pred>
__device__ __forceinline__ bool hash_chain_any(const i64* heads, const i64* next, i64 slot, Pred pred) {
  if (slot < 0) return false;
  for (i64 e = heads[slot]; e != 0; e = next[e - 1])
    if (pred(e - 1)) return true;
  return false;
}

}  // namespace ranc::tpl
