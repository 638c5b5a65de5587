// ranc/templates/topk.cuh: the rows among the first k of a sort order, found without sorting
// (a top-k in front of a sort whose rows only limits read; passes/plan_top_k.h).
//
// A radix select on w, the first (most significant) order word of each row (sort_layout.h: the
// packed sort keys). It finds a threshold T such that the rows with w <= T number at least
// min(k, n) and so contain the first k rows of the order (whatever the later words say, a row
// with a larger first word comes after every row with w <= T). The generator then compacts those
// rows (SelectAgent with keep w(i) <= T) and sorts only them.
//
//   1. TopKFirstAgent: the smallest and largest w (block reductions, one atomicMax each of ~w
//      and w per block) and the level-0 histogram of w's top 11 bits (w >> first_shift).
//   2. topk_pick (one block) after each level's histogram: the bin b where the running count
//      reaches k. When b holds at most min(bin_rows, max(kTopKMinBinRows, n / 16)) rows (a
//      bin that small costs less to sort than another pass over the n rows) or its digits are
//      single values, T is b's last value (at most the largest w) and the select is done;
//      otherwise the next level
//      counts digits (w - base) >> shift over b's values that lie in [smallest w, largest w],
//      shift = max(0, bits(that span) - 11), so the 2^11 bins cover it however narrow the keys
//      are (small integers, dates and codes all fall into one top-11-bit bin). Level 0 also
//      ends the select at once when n <= k or every w is equal (every row is kept).
//   3. Per later level: TopKHistogramAgent (a shared-memory histogram per block, one 64-bit
//      atomic per non-empty bin and block), then topk_pick. The generator skips their launches
//      when n <= min(bin_rows, kTopKMinBinRows) (level 0's bin then holds few enough rows); a
//      launch after the select is done returns at once.
//   Result: state.threshold (T) and state.kept (the rows with w <= T, the compaction's exact
//   output size, read back once). Uniform keys need one pass (level 0 ends it); narrow keys two.
//   Heavy ties in w (most rows with the same first word) cannot be split: then most rows are
//   kept and the sort after it does the work, correctly.
//
// Kernels, in order on one stream (state: a zeroed TopKState, sizeof(TopKState) / 8 int64):
//   1. TopKFirstAgent<T>::run(temp, n, first_shift, word, state)    Grid::strided over n
//   2. topk_pick<T>(temp, state, n, k, bin_rows, first_shift)        one block of T threads
//   3. per later level: TopKHistogramAgent<T>::run(temp, n, word, state)   Grid::strided
//                       topk_pick<T>(temp, state, n, k, bin_rows, -1)      one block
#pragma once

#include <ranc/templates/common.cuh>
#include <ranc/templates/contract.cuh>

namespace ranc::tpl {

constexpr int kTopKDigitBits = 11;
constexpr int kTopKBins = 1 << kTopKDigitBits;
constexpr long long kTopKMinBinRows = 4096;

struct TopKState {
  u64 lo_complement;  // ~(smallest w): an atomicMax of ~w (the zeroed state is "no rows")
  u64 hi;             // the largest w
  u64 base;           // this level counts the digits (w - base) >> shift of the w >= base
  u64 threshold;      // result: the rows with w <= threshold are kept
  i64 below;          // rows with w < base (all kept)
  i64 kept;           // result: the number of rows kept (element 5: read back by the plan)
  i64 shift;
  i64 active;         // 1 while another level is to be counted
  u64 hist[kTopKBins];
};
static_assert(sizeof(TopKState) == (8 + kTopKBins) * 8, "TopKState: the plan sizes it so");

struct MaxU64 {
  __device__ __forceinline__ u64 operator()(u64 a, u64 b) const { return a > b ? a : b; }
};

/// The shared-memory histogram of a block, added to the state's (one atomic per non-empty bin).
__device__ __forceinline__ void topk_merge_bins(const unsigned int* bins, TopKState* s, int threads) {
  for (int b = threadIdx.x; b < kTopKBins; b += threads)
    if (bins[b] != 0) atomicAdd(&s->hist[b], static_cast<u64>(bins[b]));
}

/// Calls visit(w) with the first order word of every row a thread takes in a grid-strided walk
/// over n rows; the words of 4 rows are loaded before any is visited (independent loads).
template <class Word, class Visit>
__device__ __forceinline__ void topk_for_each_word(i64 n, Word word, Visit visit) {
  constexpr int kUnroll = 4;
  const i64 stride = grid_stride();
  for (i64 i0 = global_thread_index(); i0 < n; i0 += kUnroll * stride) {
    u64 w[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const i64 i = i0 + u * stride;
      w[u] = i < n ? word(i) : 0;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (i0 + u * stride < n) visit(w[u]);
  }
}

template <int BlockThreads>
struct TopKFirstAgent {
  struct TempStorage {
    unsigned int bins[kTopKBins];
    typename BlockReduce<u64, BlockThreads>::TempStorage lo, hi;
  };
  /// The hooks of run() (contract.cuh).
  struct Hooks {
    __device__ u64 word(i64 row) const;  // the row's first order word
  };
  static constexpr LaunchRule run_launch{Grid::strided, "n", BlockThreads};

  /// first_shift: the word's used bits - 11 (0 for 11 bits or fewer).
  template <class Word>
  __device__ __forceinline__ static void run(TempStorage& temp, i64 n, i64 first_shift, Word word,
                                             void* state_buf) {
    TopKState* s = static_cast<TopKState*>(state_buf);
    const int shift = static_cast<int>(first_shift);
    for (int b = threadIdx.x; b < kTopKBins; b += BlockThreads) temp.bins[b] = 0;
    __syncthreads();
    u64 lo_c = 0, hi = 0;
    topk_for_each_word(n, word, [&](u64 w) {
      lo_c = lo_c > ~w ? lo_c : ~w;
      hi = hi > w ? hi : w;
      atomicAdd(&temp.bins[w >> shift], 1u);
    });
    lo_c = BlockReduce<u64, BlockThreads>(temp.lo).Reduce(lo_c, MaxU64{});
    hi = BlockReduce<u64, BlockThreads>(temp.hi).Reduce(hi, MaxU64{});
    if (threadIdx.x == 0) {
      atomicMax(&s->lo_complement, lo_c);
      atomicMax(&s->hi, hi);
    }
    topk_merge_bins(temp.bins, s, BlockThreads);
  }
};

template <int BlockThreads>
struct TopKHistogramAgent {
  struct TempStorage {
    unsigned int bins[kTopKBins];
  };
  /// The hooks of run() (contract.cuh).
  struct Hooks {
    __device__ u64 word(i64 row) const;  // the row's first order word
  };
  static constexpr LaunchRule run_launch{Grid::strided, "n", BlockThreads};

  template <class Word>
  __device__ __forceinline__ static void run(TempStorage& temp, i64 n, Word word, void* state_buf) {
    TopKState* s = static_cast<TopKState*>(state_buf);
    if (!s->active) return;  // the same value in every thread: the block leaves together
    const u64 base = s->base;
    const int shift = static_cast<int>(s->shift);
    for (int b = threadIdx.x; b < kTopKBins; b += BlockThreads) temp.bins[b] = 0;
    __syncthreads();
    topk_for_each_word(n, word, [&](u64 w) {
      if (w < base) return;
      const u64 d = (w - base) >> shift;
      if (d < kTopKBins) atomicAdd(&temp.bins[d], 1u);
    });
    __syncthreads();
    topk_merge_bins(temp.bins, s, BlockThreads);
  }
};

template <int BlockThreads>
struct TopKPickTemp {
  typename BlockScan<i64, BlockThreads>::TempStorage scan;
};

/// After a level's histogram, in one block of BlockThreads threads: the bin where the running
/// count reaches k; the result, or the next level inside that bin. Zeroes the histogram.
/// first_shift >= 0: level 0 (TopKFirstAgent's histogram of w >> first_shift); -1: a later one.
template <int BlockThreads>
__device__ __forceinline__ void topk_pick(TopKPickTemp<BlockThreads>& temp, void* state_buf, i64 n,
                                          i64 k, i64 bin_rows, i64 first_shift) {
  static_assert(kTopKBins % BlockThreads == 0, "topk_pick: threads must divide the bins");
  constexpr int kPer = kTopKBins / BlockThreads;
  TopKState* s = static_cast<TopKState*>(state_buf);
  const u64 lo = ~s->lo_complement, hi = s->hi;
  if (first_shift >= 0) {
    if (n <= k || hi == lo) {  // every row is kept (also n == 0: hi = 0, kept = 0)
      if (threadIdx.x == 0) {
        s->threshold = hi;
        s->kept = n;
        s->active = 0;
      }
#pragma unroll
      for (int j = 0; j < kPer; ++j) s->hist[threadIdx.x * kPer + j] = 0;
      return;
    }
  } else if (!s->active) {
    return;
  }
  const u64 base = first_shift >= 0 ? 0 : s->base;
  const int shift = static_cast<int>(first_shift >= 0 ? first_shift : s->shift);
  const i64 below0 = first_shift >= 0 ? 0 : s->below;
  i64 h[kPer], before[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) h[j] = static_cast<i64>(s->hist[threadIdx.x * kPer + j]);
  const i64 need = k - below0;  // >= 1 while active
  i64 small = n / 16 > kTopKMinBinRows ? n / 16 : kTopKMinBinRows;  // a bin not worth a pass
  small = small < bin_rows ? small : bin_rows;
  i64 total;
  BlockScan<i64, BlockThreads>(temp.scan).ExclusiveSum(h, before, total);
  // One bin crosses: the level's rows all lie in the previous level's bin, which held >= need.
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    if (!(before[j] < need && need <= before[j] + h[j])) continue;
    const u64 b = static_cast<u64>(threadIdx.x * kPer + j);
    // The bin's values that occur: [first, last], inside [lo, hi].
    const u64 start = base + (b << shift);
    const u64 width = (u64{1} << shift) - 1;
    const u64 first = start > lo ? start : lo;
    const u64 last = hi - start <= width ? hi : start + width;
    const i64 below = below0 + before[j];
    if (h[j] <= small || first == last) {
      s->threshold = last;
      s->kept = below + h[j];
      s->active = 0;
    } else {
      const int bits = 64 - __clzll(static_cast<long long>(last - first));
      s->base = first;
      s->below = below;
      s->shift = bits > kTopKDigitBits ? bits - kTopKDigitBits : 0;
      s->active = 1;
    }
  }
#pragma unroll
  for (int j = 0; j < kPer; ++j) s->hist[threadIdx.x * kPer + j] = 0;
}

}  // namespace ranc::tpl
