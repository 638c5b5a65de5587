// ranc/templates/resident.cuh: the building blocks of a fixpoint's resident rounds
// (rt::ResidentRounds, ra_ops/fixpoint/resident.cpp).
//
// A resident kernel runs semi-naive rounds of a thin recursion without returning to the
// host: one cooperative launch (all its blocks resident at once), a grid barrier between
// rounds. Tuples are packed into one 64-bit word whose unsigned order is the tuples'
// ascending order (pack_*). The kernel first inserts the full relation's words into a hash
// set; a candidate is new when the set takes it. New words are appended to `words`, so each
// round's new tuples are a contiguous range of it: the next round's delta. Small invariants
// (the rules' join inputs, binary-searched) are read from copies in shared memory. The control block (long long[16 + joins], zeroed before the
// launch) holds the state the host reads back once, at the end.
#pragma once

namespace ranc::tpl::resident {

using i64 = long long;
using u64 = unsigned long long;

// Control block slots.
enum : int {
  kWords = 0,       // words appended: where the next goes (out: all of them)
  kDeltaBegin = 1,  // the unprocessed delta is words[kDeltaBegin, kWords) (out)
  kRounds = 2,      // rounds run (out)
  kStatus = 3,      // why the kernel stopped (out): Status
  kOverflow = 4,    // 1: a word past the room (a bound was wrong; the host fails)
  kMaxWord = 5,     // 1: the word ~0 (the hash set's empty mark) was taken
  kArrivals = 6,    // the grid barrier: blocks arrived, over all barriers
  kRelease = 7,     // the grid barrier: the last barrier every block arrived at
  kEnd = 8,         // kWords when barrier g released, at kEnd + g % 2
  kRuns = 10,       // the longest run of equal keys of each join's sorted input
};
enum Status : int { kFixpoint = 0, kRoundLimit = 1, kHandBack = 2 };

constexpr u64 kEmpty = ~0ull;
// Shared memory a block stages the rules' invariant columns in (stage()).
constexpr int kStageBytes = 40 * 1024;

__device__ __forceinline__ u64 pack_i32(int a) { return (unsigned)a ^ 0x80000000u; }
__device__ __forceinline__ u64 pack_i32x2(int a, int b) {
  return ((u64)((unsigned)a ^ 0x80000000u) << 32) | (u64)((unsigned)b ^ 0x80000000u);
}
__device__ __forceinline__ u64 pack_i64(long long a) { return (u64)a ^ 0x8000000000000000ull; }
__device__ __forceinline__ int unpack_i32(u64 w) { return (int)((unsigned)w ^ 0x80000000u); }
__device__ __forceinline__ int unpack_i32_hi(u64 w) { return (int)((unsigned)(w >> 32) ^ 0x80000000u); }
__device__ __forceinline__ long long unpack_i64(u64 w) { return (long long)(w ^ 0x8000000000000000ull); }

// Barrier `g` (1, 2, ...) of all blocks of a cooperative launch. The last block to arrive
// records kWords (every word of the rounds before is appended) at kEnd + g % 2 before it
// releases the others; returns that count. Each block arrives with one atomic and waits
// for one flag; the counters only grow, so nothing is reset between barriers.
__device__ __forceinline__ i64 grid_sync(i64* ctl, i64 g) {
  __shared__ i64 words_at_release;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    const u64 arrived = atomicAdd(reinterpret_cast<u64*>(ctl + kArrivals), 1ull) + 1;
    if (arrived == (u64)g * gridDim.x) {
      const i64 words = *reinterpret_cast<volatile i64*>(ctl + kWords);
      *reinterpret_cast<volatile i64*>(ctl + kEnd + (g & 1)) = words;
      __threadfence();
      *reinterpret_cast<volatile i64*>(ctl + kRelease) = g;
    } else {
      while (*reinterpret_cast<volatile i64*>(ctl + kRelease) < g) {
      }
    }
    __threadfence();
    words_at_release = *reinterpret_cast<volatile i64*>(ctl + kEnd + (g & 1));
  }
  __syncthreads();
  return words_at_release;
}

__device__ __forceinline__ u64 mix(u64 k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

// Inserts `w` into the open-addressing set (mask + 1 slots, a power of two, at most half
// full by the host's sizing). True: it was not there.
__device__ __forceinline__ bool insert(u64* table, i64 mask, u64 w, i64* ctl) {
  if (w == kEmpty)
    return atomicCAS(reinterpret_cast<u64*>(ctl + kMaxWord), 0ull, 1ull) == 0ull;
  u64 h = mix(w) & (u64)mask;
  while (true) {
    const u64 prev = atomicCAS(table + h, kEmpty, w);  // mostly empty: one round trip
    if (prev == kEmpty) return true;
    if (prev == w) return false;
    h = (h + 1) & (u64)mask;
  }
}

// Is `w` one of the n words full.word(0..n), ascending?
template <class Full>
__device__ __forceinline__ bool contains(const Full& full, i64 n, u64 w) {
  i64 lo = 0, hi = n;
  while (lo < hi) {
    const i64 mid = lo + ((hi - lo) >> 1);
    if (full.word(mid) < w)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && full.word(lo) == w;
}

// Appends `w` when the set takes it (new: not found before, nor in the full relation when
// its words are in the set). The threads of a warp that append at once take their places
// at kWords with one atomic.
__device__ __forceinline__ void add(u64 w, u64* words, i64 room, u64* table, i64 mask, i64* ctl) {
  if (!insert(table, mask, w, ctl)) return;
  const unsigned m = __activemask();
  const int lane = threadIdx.x & 31;
  const int leader = __ffs(m) - 1;
  u64 first = 0;
  if (lane == leader) first = atomicAdd(reinterpret_cast<u64*>(ctl + kWords), (u64)__popc(m));
  first = __shfl_sync(m, first, leader);
  const i64 at = (i64)first + __popc(m & ((1u << lane) - 1u));
  if (at >= room) {
    atomicExch(reinterpret_cast<u64*>(ctl + kOverflow), 1ull);
    return;
  }
  words[at] = w;
}

// Copies n elements of `src` into the block's shared staging area at `*used` when they fit
// in `capacity` bytes, and returns where the kernel reads them: the copy, or `src`.
template <class T>
__device__ __forceinline__ const T* stage(const T* src, i64 n, unsigned char* area, i64 capacity,
                                          i64* used) {
  const i64 bytes = (n * (i64)sizeof(T) + 15) & ~15ll;
  if (n <= 0 || *used + bytes > capacity) return src;
  T* dst = reinterpret_cast<T*>(area + *used);
  *used += bytes;
  for (i64 i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
  return dst;
}

// The number of rows from `first` on (first < n) whose keys equal first's: `same(i)` says
// whether row i's keys equal first's (rows are sorted, so the equal ones are a run).
template <class Same>
__device__ __forceinline__ i64 run_length(i64 first, i64 n, const Same& same) {
  i64 lo = first, step = 1;  // same(lo) holds
  while (lo + step < n && same(lo + step)) {
    lo += step;
    step <<= 1;
  }
  i64 hi = lo + step < n ? lo + step : n;  // same(hi) fails or hi == n
  while (hi - lo > 1) {
    const i64 mid = lo + ((hi - lo) >> 1);
    if (same(mid))
      lo = mid;
    else
      hi = mid;
  }
  return lo - first + 1;
}

// a * b, saturating at 2^62.
__device__ __forceinline__ i64 mul_sat(i64 a, i64 b) {
  const i64 cap = 1ll << 62;
  if (a == 0 || b == 0) return 0;
  if (a > cap / b) return cap;
  return a * b;
}

// a + b, saturating at 2^62 (both at most 2^62).
__device__ __forceinline__ i64 add_sat(i64 a, i64 b) {
  const i64 cap = 1ll << 62;
  return a > cap - b ? cap : a + b;
}

}  // namespace ranc::tpl::resident
