// ranc/templates/join.cuh: sort-merge equi-join of two inputs sorted by the join key, duplicates
// allowed on both sides; inner join (optionally with a residual predicate), semi and anti joins.
//
// Hooks: JoinCountAgent::Hooks (cmp, keep), JoinExpandAgent::Hooks (residual, emit).
//
// Inner join, kernels in order on one stream (nl, nr = left/right rows):
//   C = JoinCount policy, E = JoinExpand policy; ctiles = max(1, ceil(nl / C::tile_items))
//   1. init:   init_tile_state(tile_state, ctiles)              items ctiles, threads 256
//   2. count:  JoinCountAgent<C>::run(temp, nl, nr, cmp, lo, offsets, tile_state, total)
//              threads C::block_threads, grid = ctiles (exactly). Writes lo[l] (first matching right
//              row) and offsets[l] (exclusive prefix of per-row match counts), *total = key matches.
//   -- runtime reads *total (= output rows without residual); etiles = max(1, ceil(total / E::tile_items))
//   Without residual:
//   3. expand: JoinExpandAgent<E>::run(temp, total, nl, lo, offsets, emit)
//              threads E::block_threads, grid = etiles. Each block takes a tile of OUTPUT rows and
//              finds their left rows by a load-balanced search over offsets (shared memory), so a
//              key with millions of matches is spread over many blocks.
//   With a residual (output size not known from key counts): the expansion space [0, total) is
//   compacted like a select (order kept: by left row, then right row):
//   3a. init:  init_tile_state(tile_state2, etiles)
//   3b. count: JoinExpandAgent<E>::run_residual<SelectMode::count_only>(temp, total, nl, lo,
//              offsets, residual, NoJoinEmit{}, tile_state2, out_count)   grid = etiles
//   -- runtime reads *out_count, allocates the output
//   3c. init:  init_tile_state(tile_state2, etiles)
//   3d. write: JoinExpandAgent<E>::run_residual(temp, total, nl, lo, offsets, residual, emit,
//              tile_state2, out_count)                                    grid = etiles
//   (3b/3c may be skipped by allocating `total` output rows, an upper bound.)
// Buffers: tile_state tile_state_elems(ctiles); tile_state2 tile_state_elems(etiles); lo nl int64;
//          offsets nl int64; total, out_count 1 int64 each.
//
// Inner join of a LEFT INPUT SORTED BY THE KEYS whose matches are all kept (no residual, no
// filter after it): one pass, no lo/offsets traffic for ordinary tiles, no read-back before
// the write (ctiles as above):
//   0. ranges: JoinTileRangeAgent<C>::run(nl, nr, 2 * ctiles, cmp, keep, ranges)   one thread a
//              bound (optional: the merge takes null ranges and searches per tile)
//   1. merge:  JoinMergeAgent<C>::run(temp, nl, nr, cmp, keep, lword, rword, emit, header, lo,
//              offsets, capacity, ranges)   threads C::block_threads, grid = ctiles (exactly); output sized by
//              `capacity` (the left rows); the runtime reads header[0] (the matches) and, when it
//              exceeds the capacity, grows the output, zeroes the header and runs it again.
//   2. heavy:  JoinHeavyExpandAgent<C>::run(temp, nl, ctiles, header, lo, offsets, emit)
//              threads C::block_threads, any grid (fixed); writes the tiles of heavy keys.
// Buffers: header 68 + 3 * ctiles int64 (layout at JoinMergeAgent), zeroed; lo, offsets nl int64;
//          ranges 2 * ctiles int64.
//
// Semi / anti join: a select over the left input (select.cuh) with predicate
//   JoinMatchPred<Cmp, Residual, Anti>{cmp, residual, nr}(l) = "left row l has a (residual-satisfying)
//   match" (Anti: has none). Binary search per left row; with a residual, candidates are scanned
//   in key order until the first one satisfying it.
#pragma once

#include <ranc/templates/select.cuh>

namespace ranc::tpl {

template <int BlockThreads, int ItemsPerThread>
using JoinPolicy = TilePolicy<BlockThreads, ItemsPerThread>;

/// Residual hook meaning "no residual predicate".
struct NoResidual {
  __device__ __forceinline__ bool operator()(i64, i64) const { return true; }
};
/// Emit hook that does nothing (count-only passes).
struct NoJoinEmit {
  __device__ __forceinline__ void operator()(i64, i64, i64) const {}
};

/// Order-check hook meaning "the left input is known to be ordered".
struct NoOrderCheck {
  __device__ __forceinline__ bool operator()(i64) const { return false; }
};

/// First right row r in [lo, hi) with right[r] >= left[l].
template <class Cmp>
__device__ __forceinline__ i64 join_lower_bound(i64 l, i64 lo, i64 hi, Cmp cmp) {
  return partition_point(lo, hi, [&](i64 r) { return cmp(l, r) > 0; });
}
/// First right row r in [lo, hi) with right[r] > left[l]; lo is usually the lower bound, so the
/// search gallops from it (the range of equal keys is short).
template <class Cmp>
__device__ __forceinline__ i64 join_upper_bound(i64 l, i64 lo, i64 hi, Cmp cmp) {
  return gallop_partition_point(lo, hi, [&](i64 r) { return cmp(l, r) >= 0; });
}

/// The right rows [tlo, thi) that can match the left rows base .. last of a tile (sorted by the
/// keys): from the lower bound of the first row's key to the upper bound of the last's, when the
/// left input keeps those rows (otherwise all right rows). Warps 0 and 1 search with
/// warp_partition_point (about 6 rounds of parallel loads instead of ~28 dependent ones, which
/// the rest of the block would wait for). Call from all threads; `bounds`: 2 i64 of shared memory.
template <int Threads, class Cmp, class Keep>
__device__ __forceinline__ void join_tile_range(i64* bounds, i64 base, i64 last, i64 nr, Cmp cmp, Keep keep,
                                                i64& tlo, i64& thi) {
  static_assert(Threads >= 64, "join_tile_range: two warps search the tile's key range");
  const int warp = static_cast<int>(threadIdx.x >> 5);
  if (warp == 0) {
    const i64 b = base <= last && keep(base) ? warp_partition_point(0, nr, [&](i64 r) { return cmp(base, r) > 0; }) : 0;
    if (threadIdx.x == 0) bounds[0] = b;
  } else if (warp == 1) {
    const i64 b = base > last  ? 0
                  : keep(last) ? warp_partition_point(0, nr, [&](i64 r) { return cmp(last, r) >= 0; })
                               : nr;
    if (threadIdx.x == 32) bounds[1] = b;
  }
  __syncthreads();
  tlo = bounds[0];
  thi = bounds[1];
}

/// The right rows [ranges[2t], ranges[2t + 1]) that can match the left rows of tile t (tiles of
/// Policy::tile_items rows), as join_tile_range finds them, for every tile at once: one thread a
/// bound, all searches in flight together, launched before the tiles' kernel
/// (JoinMergeAgent's tile_ranges), whose tiles then start from their range instead of waiting
/// for its search (about 6 rounds of loads a tile, with the block stalled at the barrier).
template <class Policy>
struct JoinTileRangeAgent {
  static constexpr int kTile = Policy::tile_items;

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    __device__ int cmp(i64 l, i64 r) const;  // left key of row l vs right key of row r
    __device__ bool keep(i64 l) const;       // left row l takes part
  };
  /// One thread per bound: bounds = 2 * tiles.
  static constexpr LaunchRule run_launch{Grid::threads, "bounds", 0};

  template <class Cmp, class Keep>
  __device__ __forceinline__ static void run(i64 nl, i64 nr, i64 bounds, Cmp cmp, Keep keep, i64* ranges) {
    const i64 t = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t >= bounds) return;
    const i64 base = (t >> 1) * kTile, last = min64(base + kTile, nl) - 1;
    i64 b = 0;
    if (base <= last) {
      if ((t & 1) == 0)
        b = keep(base) ? partition_point(0, nr, [&](i64 r) { return cmp(base, r) > 0; }) : 0;
      else
        b = keep(last) ? partition_point(0, nr, [&](i64 r) { return cmp(last, r) >= 0; }) : nr;
    }
    ranges[t] = b;
  }
};

/// Key-word hooks meaning "no packed keys": JoinMergeAgent searches with cmp in global memory.
struct NoKeyWords {
  __device__ __forceinline__ u64 operator()(i64) const { return 0; }
};

/// Predicate for semi (Anti = false) and anti (Anti = true) joins; use with SelectAgent.
template <class Cmp, class Residual = NoResidual, bool Anti = false>
struct JoinMatchPred {
  Cmp cmp;
  Residual residual;
  i64 nr;
  __device__ __forceinline__ bool operator()(i64 l) const {
    i64 r = join_lower_bound(l, 0, nr, cmp);
    bool match = false;
    if constexpr (is_same_v<Residual, NoResidual>) {
      match = r < nr && cmp(l, r) == 0;
    } else {
      for (; r < nr && cmp(l, r) == 0; ++r) {
        if (residual(l, r)) {
          match = true;
          break;
        }
      }
    }
    return Anti ? !match : match;
  }
};

/// Per-left-row match ranges and their exclusive scan (one pass, decoupled look-back).
template <class Policy>
struct JoinCountAgent {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;
  using BlockScanT = BlockScan<i64, kThreads>;

  struct TempStorage {
    typename BlockScanT::TempStorage scan;
    TilePrefix::TempStorage prefix;
    i64 bounds[2];
  };

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    __device__ int cmp(i64 l, i64 r) const;  // left key of row l vs right key of row r: <0, 0, >0
    // Optional (AlwaysTrue): left row l takes part (a select fused into the join's left input);
    // cmp is evaluated only on kept rows.
    __device__ bool keep(i64 l) const;
    // Optional (NoOrderCheck, with order_flag null): row l - 1 orders after row l in the left
    // input's declared order (l >= 1); such a row sets *order_flag, so the declared order
    // needs no separate check pass (every adjacent pair is compared, whatever the data).
    __device__ bool out_of_order(i64 l) const;
  };
  /// Exactly `ctiles` blocks, also for nl == 0: the last block writes *total.
  static constexpr LaunchRule run_launch{Grid::tiles_exact, "nl", Policy::block_threads};

  template <class Cmp, class Keep = AlwaysTrue, class OutOfOrder = NoOrderCheck>
  __device__ __forceinline__ static void run(TempStorage& temp, i64 nl, i64 nr, Cmp cmp, i64* lo_out,
                                             i64* offsets, void* tile_state, i64* total, Keep keep = {},
                                             OutOfOrder out_of_order = {}, int* order_flag = nullptr) {
    const i64 base = tile_base(kTile);
    const i64 last = min64(base + kTile, nl) - 1;
    // Narrow every search of the tile to the right rows matching the tile's key range.
    i64 tlo, thi;
    join_tile_range<kThreads>(temp.bounds, base, last, nr, cmp, keep, tlo, thi);
    count_and_scan(temp, nl, tlo, thi, cmp, lo_out, offsets, tile_state, total, keep, out_of_order,
                   order_flag);
  }

  /// run() for a left input in no particular order: each row searches all right rows (no
  /// narrowing to the tile's key range); the same outputs, in one pass where a map of the
  /// ranges and a separate scan of the counts took two (and CUB's scan two kernels).
  static constexpr LaunchRule run_unsorted_launch{Grid::tiles_exact, "nl", Policy::block_threads};
  template <class Cmp, class Keep = AlwaysTrue>
  __device__ __forceinline__ static void run_unsorted(TempStorage& temp, i64 nl, i64 nr, Cmp cmp,
                                                      i64* lo_out, i64* offsets, void* tile_state,
                                                      i64* total, Keep keep = {}) {
    count_and_scan(temp, nl, 0, nr, cmp, lo_out, offsets, tile_state, total, keep, NoOrderCheck{},
                   nullptr);
  }

 private:
  template <class Cmp, class Keep, class OutOfOrder>
  __device__ __forceinline__ static void count_and_scan(TempStorage& temp, i64 nl, i64 tlo, i64 thi,
                                                        Cmp cmp, i64* lo_out, i64* offsets,
                                                        void* tile_state, i64* total, Keep keep,
                                                        OutOfOrder out_of_order, int* order_flag) {
    TileState state = make_tile_state(tile_state);
    const i64 base = tile_base(kTile);
    i64 lo[kItems], cnt[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const i64 l = base + static_cast<i64>(threadIdx.x) * kItems + k;
      lo[k] = 0;
      cnt[k] = 0;
      if (l < nl && keep(l)) {
        lo[k] = join_lower_bound(l, tlo, thi, cmp);
        cnt[k] = join_upper_bound(l, lo[k], thi, cmp) - lo[k];
      }
      if (order_flag != nullptr && l < nl && l > 0 && out_of_order(l)) *order_flag = 1;
    }
    i64 excl[kItems], aggregate;
    BlockScanT(temp.scan).ExclusiveSum(cnt, excl, aggregate);
    i64 inclusive;
    const i64 prefix = TilePrefix::run(temp.prefix, state, aggregate, inclusive);
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const i64 l = base + static_cast<i64>(threadIdx.x) * kItems + k;
      if (l < nl) {
        lo_out[l] = lo[k];
        offsets[l] = prefix + excl[k];
      }
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0 && total != nullptr) *total = inclusive;
  }
};

/// One-pass inner join of a left input sorted by the join keys, writing its output directly
/// (no per-left-row bound or offset buffers, no read-back before the write). Per tile of left
/// rows: the right range matching the tile's keys (two searches), each row's lower bound and
/// count within it, the block's scan of the counts, the tile's output offset by decoupled
/// look-back, then the block expands its matches into output rows prefix .. prefix + count - 1
/// (left order, then right order: the layout JoinExpandAgent writes). A tile with more than
/// kHeavy matches (a heavy key) writes its rows' bounds and offsets instead and is listed for
/// JoinHeavyExpandAgent, whose blocks share its matches, so skew spreads over the GPU.
///
/// The output is sized by `capacity` (the left rows: exact for a join with unique right keys).
/// Tiles whose matches end past it write nothing; the runtime reads the total (header[0]),
/// grows the output and runs the kernel again (rt::Regrow, header zeroed).
/// header (int64, zeroed): [0] total matches, [1] heavy tiles listed, [2, 4) unused,
///   [4, 4 + tile_state_elems(tiles)) the look-back state, then the list of heavy tiles
///   (tiles entries): 4 + tile_state_elems(tiles) + tiles = 68 + 3 tiles in all.
/// Buffers lo and offsets: nl int64 each, written only for the rows of heavy tiles.
template <class Policy>
struct JoinMergeAgent {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;
  static constexpr i64 kHeavy = 16 * static_cast<i64>(kTile);
  // A tile whose rows all have at most this many matches writes them row by row (a thread
  // a row); otherwise each output row finds its left row by a search of the tile's offsets.
  static constexpr i64 kRowMatches = 4;
  using BlockScanT = BlockScan<i64, kThreads>;

  // Right key words a tile stages in shared memory (lword/rword hooks): a tile whose range of
  // right rows is longer searches in global memory with cmp.
  static constexpr int kStage = kTile;

  struct TempStorage {
    typename BlockScanT::TempStorage scan;
    TilePrefix::TempStorage prefix;
    i64 bounds[2];
    i64 lo[kTile];
    int offs[kTile];  // within the tile: at most kHeavy, so int
    u64 words[kStage];
  };

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    __device__ int cmp(i64 l, i64 r) const;  // left key of row l vs right key of row r
    __device__ bool keep(i64 l) const;       // left row l takes part (AlwaysTrue: all)
    // The join keys of left row l and right row r packed into order words whose unsigned
    // order is cmp's (NoKeyWords for both: no staging). With them, a tile copies the words
    // of its right range into shared memory and searches there.
    __device__ u64 lword(i64 l) const;
    __device__ u64 rword(i64 r) const;
    __device__ void emit(i64 l, i64 r, i64 out_row) const;  // write the match to out_row
    // Row l - 1 orders after row l in the left input's declared order (NoOrderCheck when
    // order_flag is null): sets *order_flag, as JoinCountAgent's.
    __device__ bool out_of_order(i64 l) const;
  };
  /// Exactly `tiles` blocks, also for nl == 0: the last block writes header[0].
  static constexpr LaunchRule run_launch{Grid::tiles_exact, "nl", Policy::block_threads};

  /// tile_ranges: JoinTileRangeAgent's ranges for these tiles, or null (each tile searches its own).
  template <class Cmp, class Keep, class LWord, class RWord, class Emit, class OutOfOrder = NoOrderCheck>
  __device__ __forceinline__ static void run(TempStorage& temp, i64 nl, i64 nr, Cmp cmp, Keep keep,
                                             LWord lword, RWord rword, Emit emit, i64* header, i64* lo_out,
                                             i64* offsets, i64 capacity, const i64* tile_ranges,
                                             OutOfOrder out_of_order = {}, int* order_flag = nullptr) {
    TileState state = make_tile_state(header + 4);
    const i64 tiles = gridDim.x;
    const i64 base = tile_base(kTile);
    const i64 last = min64(base + kTile, nl) - 1;
    // The right rows matching the tile's key range.
    i64 tlo, thi;
    if (tile_ranges != nullptr) {
      tlo = tile_ranges[2 * tile_index()];
      thi = tile_ranges[2 * tile_index() + 1];
    } else {
      join_tile_range<kThreads>(temp.bounds, base, last, nr, cmp, keep, tlo, thi);
    }
    // Each thread's rows are consecutive and sorted: a row's range starts where the previous
    // kept row's ends (or is the same range, for an equal key), so after the first search the
    // others gallop from there.
    i64 lo[kItems], cnt[kItems];
    i64 from = tlo, prev_lo = -1, prev_cnt = 0;
    bool many = false;  // a row with more than kRowMatches matches
    constexpr bool kWords = !is_same_v<LWord, NoKeyWords>;
    // Packed keys: a range that fits is staged (block-uniform), then searched in shared memory.
    const bool staged = kWords && thi >= tlo && thi - tlo <= kStage;
    if (staged) {
      for (i64 j = threadIdx.x; j < thi - tlo; j += kThreads) temp.words[j] = rword(tlo + j);
      __syncthreads();
    }
    u64 prev_word = 0;
    bool unordered = false;
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const i64 l = base + static_cast<i64>(threadIdx.x) * kItems + k;
      lo[k] = 0;
      cnt[k] = 0;
      if (l < nl && keep(l)) {
        if (staged) {
          // The same search over the staged words (tile-relative positions).
          const u64 w = lword(l);
          if (prev_cnt > 0 && w == prev_word) {
            lo[k] = prev_lo;
            cnt[k] = prev_cnt;
          } else {
            const i64 a = partition_point(from - tlo, thi - tlo, [&](i64 j) { return temp.words[j] < w; });
            const i64 b = gallop_partition_point(a, thi - tlo, [&](i64 j) { return temp.words[j] <= w; });
            lo[k] = tlo + a;
            cnt[k] = b - a;
          }
          prev_word = w;
        } else if (prev_cnt > 0 && cmp(l, prev_lo) == 0) {
          lo[k] = prev_lo;
          cnt[k] = prev_cnt;
        } else {
          lo[k] = prev_lo < 0 ? join_lower_bound(l, tlo, thi, cmp)
                              : gallop_partition_point(from, thi, [&](i64 r) { return cmp(l, r) > 0; });
          cnt[k] = join_upper_bound(l, lo[k], thi, cmp) - lo[k];
        }
        prev_lo = lo[k];
        prev_cnt = cnt[k];
        from = lo[k] + cnt[k];
        many = many || cnt[k] > kRowMatches;
      }
      // Unordered input makes the searches above return short or empty ranges (never out of
      // bounds); the flag turns the result into an error after the kernel. (Gathered, stored
      // once: a store after each row kept the next row's loads behind it, SASS for sm_90.)
      unordered |= order_flag != nullptr && l < nl && l > 0 && out_of_order(l);
    }
    if (unordered) *order_flag = 1;
    i64 excl[kItems], aggregate;
    BlockScanT(temp.scan).ExclusiveSum(cnt, excl, aggregate);
    i64 inclusive;
    const i64 prefix = TilePrefix::run(temp.prefix, state, aggregate, inclusive);
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) header[0] = inclusive;
    if (prefix + aggregate > capacity) return;  // the runtime grows the output and reruns
    if (aggregate > kHeavy) {
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const i64 l = base + static_cast<i64>(threadIdx.x) * kItems + k;
        if (l < nl) {
          lo_out[l] = lo[k];
          offsets[l] = prefix + excl[k];
        }
      }
      if (threadIdx.x == 0) {
        const unsigned long long slot = atomicAdd(reinterpret_cast<unsigned long long*>(header + 1), 1ull);
        header[4 + tile_state_elems(tiles) + static_cast<i64>(slot)] = tile_index();
      }
      return;
    }
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int t = static_cast<int>(threadIdx.x) * kItems + k;
      temp.lo[t] = lo[k];
      temp.offs[t] = static_cast<int>(excl[k]);
    }
    const int total = static_cast<int>(aggregate);
    if (!__syncthreads_or(many)) {
      // Every row has at most kRowMatches matches: thread t writes the matches of rows
      // t, t + kThreads, ... (consecutive rows of a warp write consecutive output rows).
      for (int t = threadIdx.x; t < kTile; t += kThreads) {
        const int o0 = temp.offs[t], o1 = t + 1 < kTile ? temp.offs[t + 1] : total;
        for (int o = o0; o < o1; ++o) emit(base + t, temp.lo[t] + (o - o0), prefix + o);
      }
      return;
    }
    for (int o = threadIdx.x; o < total; o += kThreads) {
      // The last row whose offset is <= o (rows without matches share the next row's offset).
      int a = 1, b = kTile;
      while (a < b) {
        const int m = (a + b) >> 1;
        if (temp.offs[m] <= o) a = m + 1; else b = m;
      }
      const int t = a - 1;
      emit(base + t, temp.lo[t] + (o - temp.offs[t]), prefix + o);
    }
  }
};

/// The matches of the heavy tiles JoinMergeAgent listed, kTile output rows a block-step:
/// every block walks the list and takes every gridDim.x-th chunk, so one heavy key's matches
/// spread over all blocks. The tiles' output ranges come from the look-back state (every tile
/// published its inclusive prefix). Launch after JoinMergeAgent (and its regrow) with the
/// same Policy and `tiles`; any grid (a fixed number of blocks); with no heavy tile it returns
/// at once.
template <class Policy>
struct JoinHeavyExpandAgent {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kTile = Policy::tile_items;

  struct TempStorage {
    i64 rows[2];
    i64 offs[kTile];
  };

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    __device__ void emit(i64 l, i64 r, i64 out_row) const;
  };
  /// A fixed grid: blocks share the heavy tiles' chunks.
  static constexpr LaunchRule run_launch{Grid::strided, "tiles", Policy::block_threads};

  template <class Emit>
  __device__ __forceinline__ static void run(TempStorage& temp, i64 nl, i64 tiles, const i64* header,
                                             const i64* lo, const i64* offsets, Emit emit) {
    const i64 heavy = header[1];
    if (heavy == 0) return;
    TileState state = make_tile_state(const_cast<i64*>(header) + 4);
    const i64* list = header + 4 + tile_state_elems(tiles);
    auto inclusive = [&](i64 t) { return t < 0 ? i64{0} : static_cast<i64>(state.get(t) >> 2); };
    i64 chunk0 = 0;  // the first chunk index of list entry e
    for (i64 e = 0; e < heavy; ++e) {
      const i64 t = list[e];
      const i64 p0 = inclusive(t - 1), p1 = inclusive(t);  // the tile's output rows [p0, p1)
      const i64 chunks = (p1 - p0 + kTile - 1) / kTile;
      // This block's chunks of the entry: c = chunk0 + j with c % gridDim.x == blockIdx.x.
      i64 j = (static_cast<i64>(blockIdx.x) - chunk0 % gridDim.x + gridDim.x) % gridDim.x;
      for (; j < chunks; j += gridDim.x) {
        const i64 o0 = p0 + j * kTile, o1 = min64(o0 + kTile, p1) - 1;
        const i64 r_lo = t * kTile, r_hi = min64(r_lo + kTile, nl);  // the tile's rows
        auto row_of = [&](i64 o) { return partition_point(r_lo, r_hi, [&](i64 i) { return offsets[i] <= o; }) - 1; };
        __syncthreads();  // temp is reused from the previous chunk
        if (threadIdx.x == 0) temp.rows[0] = row_of(o0);
        if (threadIdx.x == 32 % kThreads) temp.rows[1] = row_of(o1);
        __syncthreads();
        const i64 a0 = temp.rows[0], a1 = temp.rows[1];
        for (i64 i = a0 + threadIdx.x; i <= a1; i += kThreads) temp.offs[i - a0] = offsets[i];
        __syncthreads();
        for (i64 o = o0 + threadIdx.x; o <= o1; o += kThreads) {
          i64 a = a0 + 1, b = a1 + 1;
          while (a < b) {
            const i64 m = a + ((b - a) >> 1);
            if (temp.offs[m - a0] <= o) a = m + 1; else b = m;
          }
          const i64 l = a - 1;
          emit(l, lo[l] + (o - temp.offs[l - a0]), o);
        }
      }
      chunk0 += chunks;
    }
  }
};

/// Load-balanced expansion of key matches into output rows.
template <class Policy>
struct JoinExpandAgent {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;
  static constexpr int kRowCap = kTile + 1;  // left rows of a tile cached in shared memory

  struct TempStorage {
    typename SelectAgent<Policy>::TempStorage select;
    i64 row_offsets[kRowCap];
    i64 rows[2];
  };

  /// The hooks of run() and run_residual() (contract.cuh).
  struct Hooks {
    // Extra condition on a key match of left row l and right row r (NoResidual = none).
    __device__ bool residual(i64 l, i64 r) const;
    __device__ void emit(i64 l, i64 r, i64 out_row) const;  // write the match to output row out_row
  };
  static constexpr LaunchRule run_launch{Grid::tiles, "total", Policy::block_threads};
  /// A compaction (SelectAgent): exactly `etiles` blocks, the last block writes *out_count.
  static constexpr LaunchRule run_residual_launch{Grid::tiles_exact, "total", Policy::block_threads};

  /// Locates the left row and right row of expansion position o (within this block's tile).
  struct Locator {
    const TempStorage* temp;
    const i64* offsets;
    const i64* lo;
    i64 r0, r1;
    bool cached;
    __device__ __forceinline__ void operator()(i64 o, i64& l, i64& r) const {
      // Last row in [r0, r1] whose offset is <= o (rows with no matches share the next offset).
      i64 a = r0 + 1, b = r1 + 1;
      if (cached) {
        while (a < b) {
          const i64 m = a + ((b - a) >> 1);
          if (temp->row_offsets[m - r0] <= o) a = m + 1; else b = m;
        }
        l = a - 1;
        r = lo[l] + (o - temp->row_offsets[l - r0]);
      } else {
        while (a < b) {
          const i64 m = a + ((b - a) >> 1);
          if (offsets[m] <= o) a = m + 1; else b = m;
        }
        l = a - 1;
        r = lo[l] + (o - offsets[l]);
      }
    }
  };

  __device__ __forceinline__ static Locator prepare(TempStorage& temp, i64 total, i64 nl, const i64* lo,
                                                    const i64* offsets) {
    const i64 o0 = tile_base(kTile);
    const i64 o1 = min64(o0 + kTile, total) - 1;
    auto row_of = [&](i64 o) { return partition_point(0, nl, [&](i64 i) { return offsets[i] <= o; }) - 1; };
    if (threadIdx.x == 0) temp.rows[0] = o0 <= o1 ? row_of(o0) : 0;
    if (threadIdx.x == 32 % kThreads) temp.rows[1] = o0 <= o1 ? row_of(o1) : -1;
    __syncthreads();
    Locator loc{&temp, offsets, lo, temp.rows[0], temp.rows[1], false};
    if (loc.r1 >= loc.r0 && loc.r1 - loc.r0 + 1 <= kRowCap) {
      loc.cached = true;
      for (i64 i = loc.r0 + threadIdx.x; i <= loc.r1; i += kThreads) temp.row_offsets[i - loc.r0] = offsets[i];
    }
    __syncthreads();
    return loc;
  }

  /// Inner join without residual: output row o for every o in [0, total).
  template <class Emit>
  __device__ __forceinline__ static void run(TempStorage& temp, i64 total, i64 nl, const i64* lo,
                                             const i64* offsets, Emit emit) {
    const Locator loc = prepare(temp, total, nl, lo, offsets);
    const i64 base = tile_base(kTile);
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const i64 o = base + k * kThreads + threadIdx.x;
      if (o < total) {
        i64 l, r;
        loc(o, l, r);
        emit(l, r, o);
      }
    }
  }

  /// Inner join with residual: compaction of the expansion space (see the header comment).
  template <SelectMode Mode = SelectMode::staged, class Residual, class Emit>
  __device__ __forceinline__ static void run_residual(TempStorage& temp, i64 total, i64 nl, const i64* lo,
                                                      const i64* offsets, Residual residual, Emit emit,
                                                      void* tile_state, i64* out_count) {
    const Locator loc = prepare(temp, total, nl, lo, offsets);
    auto pred = [&](i64 o) {
      i64 l, r;
      loc(o, l, r);
      return residual(l, r);
    };
    auto put = [&](i64 o, i64 out) {
      i64 l, r;
      loc(o, l, r);
      emit(l, r, out);
    };
    SelectAgent<Policy>::template run<Mode>(temp.select, total, pred, put, tile_state, out_count);
  }
};

}  // namespace ranc::tpl
