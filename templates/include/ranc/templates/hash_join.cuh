// ranc/templates/hash_join.cuh: partitioned hash equi-join (paper 004): stable radix partitioning
// of (key, row) pairs of both inputs, then per-partition build + probe in shared memory producing
// (left position, right position) pairs; payload columns are gathered afterwards by the generator,
// either from the partitioned ("transformed") relations (GFTR: pass a Move hook to the scatter so
// payload columns are partitioned along with the keys, then gather by position) or from the
// original relations through the partitioned row ids.
//
// Keys: KeyT = unsigned int or unsigned long long, compared for equality only. The generator
// normalises keys: integers cast to unsigned; floats via total_order_key (so equal = same bits);
// composite keys packed into one word where they fit (otherwise use the sort-merge join).
// Row ids are 32-bit (unsigned int): each input must have fewer than 2^32 rows.
//
// Hooks: HashPartitionAgent::Hooks (key, keep, move), HashJoinAgent::Hooks (residual, emit).
//
// bits = radix bits (0..kMaxRadixBits), parts = 2^bits, the same for both sides. Suggested:
//   bits = clamp(ceil(log2(n_build / chunk)), 0, kMaxRadixBits), chunk = TableSlots / 2 (2048 for
//   32-bit keys, 1024 for 64-bit) with n_build the smaller input (the
//   RIGHT side is the build side: pass the smaller input as "right").
//
// Kernels, per input side X in {left, right} (H = HashPart policy, tilesX = max(1, ceil(nX / H::tile_items))):
//   1. hist:    HashPartitionAgent<H>::histogram(temp, nX, key, bits, hist)
//               threads H::block_threads, grid = tilesX. Buffer hist: parts * tilesX int64.
//   2. scan:    runtime exclusive scan over hist (parts * tilesX int64) -> parts * tilesX + 1 int64
//               (the last entry, the number of rows kept, ends the last partition)
//   3. scatter: HashPartitionAgent<H>::scatter(temp, nX, key, bits, hist_scanned, out_keys, out_rows, move)
//               grid = tilesX. Buffers out_keys nX KeyT, out_rows nX unsigned int (original row ids,
//               in partition order; stable within each partition).
// Then the join (J = HashJoin policy), grid = parts blocks, threads J::block_threads:
//   4. count:   HashJoinAgent<J, KeyT>::run<true>(temp, bits, nl, l_keys, l_hist, l_tiles,
//               nr, r_keys, r_hist, r_tiles, residual, NoJoinEmit{}, counts, nullptr)
//               Buffer counts: parts + 1 int64 (block 0 writes counts[parts] = 0).
//   5. scan:    runtime exclusive scan over counts (parts + 1) -> offsets; total = offsets[parts]
//               (read it directly or with copy_element(offsets, parts, out_count), common.cuh).
//   6. write:   HashJoinAgent<J, KeyT>::run<false>(temp, ..., residual, emit, nullptr, offsets)
//               emit(lpos, rpos, o) with o in [offsets[p], offsets[p+1]). The order of output rows
//               within a partition is unspecified (bag semantics).
//   7. gather:  generator-emitted map over the output: l_rows[lpos], r_rows[rpos] or GFTR payloads.
// Or, instead of 4-6, one pass writing a paged list (paged.cuh), grid = parts blocks:
//   4'. paged:  HashJoinAgent<J, KeyT>::run_paged<R>(temp, out, bits, ..., residual, emit) with
//               emit(lpos, rpos, h) at row handles h of `out`; heads has parts * J::warps
//               entries (one chain of pages per warp). The probe goes in rounds of one left row
//               per thread: each thread counts its matches (keeping the first kCache in
//               registers), its warp reserves that many rows of pages (WarpPageWriter: a warp
//               scan, no block barrier), then the matches are emitted (a thread with more than
//               kCache matches walks its chain again).
// A partition whose build side exceeds the shared-memory table is processed in chunks (each chunk
// probed by the whole probe partition): correct under any skew, slower for heavy skew.
#pragma once

#include <ranc/templates/join.cuh>
#include <ranc/templates/paged.cuh>
#include <ranc/templates/select.cuh>

namespace ranc::tpl {

constexpr int kMaxRadixBits = 12;

template <int BlockThreads, int ItemsPerThread>
using HashPolicy = TilePolicy<BlockThreads, ItemsPerThread>;

/// Move hook meaning "keys only" (no payload transformed with the partition).
struct NoMove {
  __device__ __forceinline__ void operator()(i64, i64) const {}
};

__device__ __forceinline__ unsigned int hash_partition(unsigned int k, int bits) {
  return bits == 0 ? 0u : (k * 0x9E3779B1u) >> (32 - bits);
}
__device__ __forceinline__ unsigned int hash_partition(unsigned long long k, int bits) {
  return bits == 0 ? 0u : static_cast<unsigned int>((k * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}
__device__ __forceinline__ unsigned int hash_slot(unsigned int k) {  // murmur3 fmix32
  k ^= k >> 16; k *= 0x85ebca6bu; k ^= k >> 13; k *= 0xc2b2ae35u; k ^= k >> 16;
  return k;
}
__device__ __forceinline__ unsigned int hash_slot(unsigned long long k) {  // murmur3 fmix64
  k ^= k >> 33; k *= 0xff51afd7ed558ccdull; k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ull; k ^= k >> 33;
  return static_cast<unsigned int>(k);
}

template <class Policy>
struct HashPartitionAgent {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;
  static constexpr int kMaxParts = 1 << kMaxRadixBits;
  using Sort = BlockRadixSort<unsigned int, kThreads, kItems, int>;

  struct TempStorage {
    union {
      typename Sort::TempStorage sort;
      unsigned int sorted_pid[kTile];
    } u;
    int counts[kMaxParts];  // histogram, then the first sorted slot of every partition in the tile
  };

  /// The hooks of histogram() and scatter() (contract.cuh).
  struct Hooks {
    struct KeyT;                          // the key word: unsigned int or unsigned long long
    __device__ KeyT key(i64 row) const;   // key of an input row
    // Optional (AlwaysTrue): the row takes part (a select fused into the partitioning); key is
    // evaluated only on kept rows.
    __device__ bool keep(i64 row) const;
    // Optional (NoMove): copy payload columns of row to partitioned position pos (GFTR).
    __device__ void move(i64 row, i64 pos) const;
  };
  /// Exactly `tiles` blocks, also for n == 0: every tile writes its column of the histogram.
  static constexpr LaunchRule histogram_launch{Grid::tiles_exact, "n", Policy::block_threads};
  static constexpr LaunchRule scatter_launch{Grid::tiles, "n", Policy::block_threads};

  template <class Key, class Keep = AlwaysTrue>
  __device__ __forceinline__ static void histogram(TempStorage& temp, i64 n, Key key, i64 bits, i64* hist,
                                                   Keep keep = {}) {
    const int parts = 1 << static_cast<int>(bits);
    const i64 tiles = num_tiles(n, kTile);
    for (int p = threadIdx.x; p < parts; p += kThreads) temp.counts[p] = 0;
    __syncthreads();
    const i64 base = tile_base(kTile);
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const i64 i = base + k * kThreads + threadIdx.x;
      if (i < n && keep(i)) atomicAdd(&temp.counts[hash_partition(key(i), static_cast<int>(bits))], 1);
    }
    __syncthreads();
    for (int p = threadIdx.x; p < parts; p += kThreads) hist[p * tiles + tile_index()] = temp.counts[p];
  }

  template <class Key, class KeyT, class Keep = AlwaysTrue, class Move = NoMove>
  __device__ __forceinline__ static void scatter(TempStorage& temp, i64 n, Key key, i64 bits, const i64* hist,
                                                 KeyT* out_keys, unsigned int* out_rows, Keep keep = {},
                                                 Move move = {}) {
    const int parts = 1 << static_cast<int>(bits);
    const i64 tiles = num_tiles(n, kTile);
    const i64 base = tile_base(kTile);
    unsigned int pid[kItems];
    int local[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      // Blocked arrangement so that the stable block sort keeps the input order within a partition.
      local[k] = threadIdx.x * kItems + k;
      const i64 i = base + local[k];
      pid[k] = i < n && keep(i) ? hash_partition(key(i), static_cast<int>(bits)) : static_cast<unsigned int>(parts);
    }
    Sort(temp.u.sort).Sort(pid, local, 0, static_cast<int>(bits) + 1);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kItems; ++k) temp.u.sorted_pid[threadIdx.x * kItems + k] = pid[k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int s = threadIdx.x * kItems + k;
      if (pid[k] < static_cast<unsigned int>(parts) && (s == 0 || temp.u.sorted_pid[s - 1] != pid[k]))
        temp.counts[pid[k]] = s;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int s = threadIdx.x * kItems + k;
      if (pid[k] < static_cast<unsigned int>(parts)) {
        const i64 i = base + local[k];
        const i64 dst = hist[pid[k] * tiles + tile_index()] + (s - temp.counts[pid[k]]);
        out_keys[dst] = key(i);
        out_rows[dst] = static_cast<unsigned int>(i);
        move(i, dst);
      }
    }
  }
};

/// Per-partition build (right) and probe (left). TableSlots: shared-memory hash table size
/// (power of two; default 4096 for 32-bit keys, 2048 for 64-bit keys: static shared memory is
/// limited to 48 KiB); the build side is inserted in chunks of TableSlots / 2 rows.
template <class Policy, class KeyT, int TableSlots = (sizeof(KeyT) == 8 ? 2048 : 4096)>
struct HashJoinAgent {
  static constexpr int kThreads = Policy::block_threads;
  static_assert((TableSlots & (TableSlots - 1)) == 0, "TableSlots must be a power of two");
  static constexpr int kChunk = TableSlots / 2;

  struct TempStorage {
    KeyT keys[TableSlots];
    int idx[TableSlots];
    unsigned long long counter;
  };

  /// The hooks of run() and run_paged() (contract.cuh); lpos, rpos are positions in the
  /// partitioned relations.
  struct Hooks {
    __device__ bool residual(i64 lpos, i64 rpos) const;  // NoResidual = none
    // Write the match to output row out_row (run) or to row handle out_row of the pages (run_paged).
    __device__ void emit(i64 lpos, i64 rpos, i64 out_row) const;
  };
  static constexpr LaunchRule run_launch{Grid::partitions, "parts", Policy::block_threads};
  static constexpr LaunchRule run_paged_launch{Grid::partitions, "parts", Policy::block_threads};

  // The shared-memory table of build rows [c0, c1) (at most kChunk), ready for probing when it
  // returns (every thread must call it).
  __device__ __forceinline__ static void build(TempStorage& temp, const KeyT* r_keys, i64 c0, i64 c1) {
    for (int s = threadIdx.x; s < TableSlots; s += kThreads) temp.idx[s] = -1;
    __syncthreads();
    for (i64 r = c0 + threadIdx.x; r < c1; r += kThreads) {
      const KeyT k = r_keys[r];
      unsigned int s = hash_slot(k) & (TableSlots - 1);
      while (atomicCAS(&temp.idx[s], -1, static_cast<int>(r - c0)) != -1) s = (s + 1) & (TableSlots - 1);
      temp.keys[s] = k;
    }
    __syncthreads();
  }

  template <bool CountOnly, class Residual, class Emit>
  __device__ __forceinline__ static void run(TempStorage& temp, i64 bits, i64 nl, const KeyT* l_keys,
                                             const i64* l_hist, i64 l_tiles, i64 nr, const KeyT* r_keys,
                                             const i64* r_hist, i64 r_tiles, Residual residual, Emit emit,
                                             i64* counts, const i64* offsets) {
    const i64 parts = i64(1) << bits;
    const i64 p = tile_index();
    if (p >= parts) return;
    // The scanned histograms hold parts * tiles + 1 entries: the last is the number of rows kept.
    const i64 l0 = l_hist[p * l_tiles], l1 = l_hist[(p + 1) * l_tiles];
    const i64 r0 = r_hist[p * r_tiles], r1 = r_hist[(p + 1) * r_tiles];
    if (threadIdx.x == 0) temp.counter = 0;
    unsigned long long my_count = 0;
    const i64 out_base = CountOnly ? 0 : offsets[p];
    for (i64 c0 = r0; c0 < r1; c0 += kChunk) {
      const i64 c1 = min64(c0 + kChunk, r1);
      build(temp, r_keys, c0, c1);
      for (i64 l = l0 + threadIdx.x; l < l1; l += kThreads) {
        const KeyT k = l_keys[l];
        unsigned int s = hash_slot(k) & (TableSlots - 1);
        for (int e = temp.idx[s]; e >= 0; s = (s + 1) & (TableSlots - 1), e = temp.idx[s]) {
          if (temp.keys[s] == k && residual(l, c0 + e)) {
            if constexpr (CountOnly) {
              ++my_count;
            } else {
              const i64 o = out_base + static_cast<i64>(atomicAdd(&temp.counter, 1ull));
              emit(l, c0 + e, o);
            }
          }
        }
      }
      __syncthreads();
    }
    if constexpr (CountOnly) {
      if (my_count) atomicAdd(&temp.counter, my_count);
      __syncthreads();
      if (threadIdx.x == 0) {
        counts[p] = static_cast<i64>(temp.counter);
        if (p == 0) counts[parts] = 0;
      }
    }
  }

  static constexpr int kCache = 4;  // matches per probe row kept in registers by run_paged

  template <int PageRows, class Residual, class Emit>
  __device__ __forceinline__ static void run_paged(TempStorage& temp, const PagedOut& out, i64 bits, i64 nl, const KeyT* l_keys,
                                                   const i64* l_hist, i64 l_tiles, i64 nr, const KeyT* r_keys,
                                                   const i64* r_hist, i64 r_tiles, Residual residual,
                                                   Emit emit) {
    const i64 parts = i64(1) << bits;
    const i64 p = tile_index();
    if (p >= parts) return;
    const i64 l0 = l_hist[p * l_tiles], l1 = l_hist[(p + 1) * l_tiles];
    const i64 r0 = r_hist[p * r_tiles], r1 = r_hist[(p + 1) * r_tiles];
    WarpPageWriter<PageRows> w;
    for (i64 c0 = r0; c0 < r1 && l0 < l1; c0 += kChunk) {
      const i64 c1 = min64(c0 + kChunk, r1);
      build(temp, r_keys, c0, c1);
      for (i64 b = l0; b < l1; b += kThreads) {  // the same trip count in every thread
        const i64 l = b + threadIdx.x;
        int cache[kCache];
        int found = 0;
        KeyT k{};
        if (l < l1) {
          k = l_keys[l];
          unsigned int s = hash_slot(k) & (TableSlots - 1);
          for (int e = temp.idx[s]; e >= 0; s = (s + 1) & (TableSlots - 1), e = temp.idx[s]) {
            if (temp.keys[s] == k && residual(l, c0 + e)) {
              if (found < kCache) cache[found] = e;
              ++found;
            }
          }
        }
        i64 x = w.reserve(out, found);
        if (found <= kCache) {
          for (int m = 0; m < found; ++m, ++x) {
            const i64 h = w.handle(out, x);
            if (h >= 0) emit(l, c0 + cache[m], h);
          }
        } else {
          unsigned int s = hash_slot(k) & (TableSlots - 1);
          for (int e = temp.idx[s]; e >= 0; s = (s + 1) & (TableSlots - 1), e = temp.idx[s]) {
            if (temp.keys[s] == k && residual(l, c0 + e)) {
              const i64 h = w.handle(out, x++);
              if (h >= 0) emit(l, c0 + e, h);
            }
          }
        }
      }
      __syncthreads();
    }
    w.finish(out, p * (kThreads / 32) + threadIdx.x / 32);
  }
};

}  // namespace ranc::tpl
