// ranc/templates/resident.cuh: the building blocks of a fixpoint's resident rounds
// (rt::ResidentRounds, ra_ops/fixpoint/resident.cpp).
//
// A resident kernel runs semi-naive rounds of a thin recursion without returning to the
// host: one cooperative launch (all its blocks resident at once), a barrier between rounds,
// or, when the loop has no round limit, none: a block's rounds then only ever read its own
// tuples, and the least fixpoint of monotone rules does not depend on the order in which
// tuples are found, so each block runs its rounds at its own pace until it finds nothing new
// (asynchronous rounds; a round then costs the block's inserts and one atomic).
// Tuples are packed into one 64-bit word whose unsigned order is the tuples' ascending
// order (pack_*). A launch of the kernel's prologue first inserts the full relation's words
// into a hash set; a candidate is new when the set takes it. Each block keeps the new
// tuples it finds in shared memory and evaluates the rules on them in the next round: no
// block reads another's tuples, so a round ends with one atomic a block (block_barrier),
// which also reserves the block's place in `words`, where it copies its tuples for the
// host. Each round's tuples are a contiguous range of `words`. Small invariants (the
// rules' join inputs, binary-searched) are read from copies in shared memory. The control
// block (long long[32 + joins], zeroed before the launches) holds the state the host reads
// back once, at the end.
#pragma once

namespace ranc::tpl::resident {

using i64 = long long;
using u64 = unsigned long long;

// Control block slots.
enum : int {
  kWords = 0,       // out: the words appended
  kDeltaBegin = 1,  // out: the last round's words are words[kDeltaBegin, kWords)
  kRounds = 2,      // out: rounds run
  kStatus = 3,      // out: why the kernel stopped: Status
  kOverflow = 4,    // 1: a word past the room (a bound was wrong; the host fails)
  kMaxWord = 5,     // 1: the word ~0 (the hash set's empty mark) was taken
  kCounter = 6,     // the barrier: arrivals, heavy blocks and words, over all barriers
  kFound = 7,       // out: the words found (merged into the full relation): words[0, kFound);
                    // kWords but after asynchronous rounds, whose delta is a copy after them
  // Asynchronous rounds (no round limit: the host passes kAsyncRounds or more):
  kAsyncWords = 8,  // the words found so far (each block appends its rounds' by one atomic)
  kAsyncStop = 9,   // 1: a block asked every block to stop (hand back)
  kArrived = 10,    // blocks that stopped
  kAsyncDelta = 11, // words of the blocks' pending tuples copied after the found words
  kDone = 12,       // blocks done copying them
  kRelease = 16,    // the barrier: the last release (g << kGenShift | heavy | words), on a
                    // cache line of its own (blocks poll it while others arrive at kCounter)
  kRuns = 32,       // the longest run of equal keys of each join's sorted input
                    // (rt::ResidentRounds::kControlHeader)
};
enum Status : int { kFixpoint = 0, kRoundLimit = 1, kHandBack = 2 };

// kCounter's fields: words (bits 0-33), blocks that found too many tuples to hold (34-43),
// arrivals (44-63). kRelease: words, one bit "some block was heavy", the barrier (35-63).
constexpr int kWordBits = 34;
constexpr u64 kWordMask = (1ull << kWordBits) - 1;
constexpr int kArrivalShift = 44;
constexpr u64 kHeavyMask = (1ull << (kArrivalShift - kWordBits)) - 1;
constexpr int kGenShift = 35;
// A launch stops before its arrivals could overflow their field.
constexpr i64 kMaxArrivals = 1ll << (64 - kArrivalShift);

constexpr u64 kEmpty = ~0ull;
// Shared memory a block stages the rules' invariant columns in (stage()).
constexpr int kStageBytes = 40 * 1024;
// The tuples a block holds in each of its two shared buffers (this round's, the next's):
// the launch's dynamic shared memory (rt::ResidentRounds::kLocalBytes) is both.
constexpr int kLocalRows = 4096;
// Candidates a thread collects before their inserts (whose round trips then overlap).
constexpr int kBatch = 8;
// A launch runs its rounds asynchronously (each block on its own tuples, without barriers)
// when the loop has no round limit: the host then passes a round limit of at least this.
constexpr i64 kAsyncRounds = 1ll << 62;
// The words past the room a launch of `blocks` blocks may write: every block may append one
// round's tuples (at most kLocalRows) after the room was passed, and then copy its pending ones.
__host__ __device__ constexpr i64 async_slack(i64 blocks) { return 2 * blocks * kLocalRows; }

__device__ __forceinline__ u64 pack_i32(int a) { return (unsigned)a ^ 0x80000000u; }
__device__ __forceinline__ u64 pack_i32x2(int a, int b) {
  return ((u64)((unsigned)a ^ 0x80000000u) << 32) | (u64)((unsigned)b ^ 0x80000000u);
}
__device__ __forceinline__ u64 pack_i64(long long a) { return (u64)a ^ 0x8000000000000000ull; }
__device__ __forceinline__ int unpack_i32(u64 w) { return (int)((unsigned)w ^ 0x80000000u); }
__device__ __forceinline__ int unpack_i32_hi(u64 w) { return (int)((unsigned)(w >> 32) ^ 0x80000000u); }
__device__ __forceinline__ long long unpack_i64(u64 w) { return (long long)(w ^ 0x8000000000000000ull); }

// Barrier `g` (1, 2, ...) of the launch's blocks, called by all threads of each block after
// a __syncthreads (the block's `count` found tuples are in its shared memory). The block's
// thread 0 adds its arrival, its count and whether it is `heavy` to kCounter in one atomic,
// whose old value places the block's tuples at words[offset, offset + count): barrier g's
// arrivals all come after barrier g - 1's, so a round's tuples follow the round before's.
// The last block to arrive releases the others with the words and "some block was heavy".
// `copy(offset)` runs (on all threads) while the block waits; `*local_count` is zeroed for
// the next round. Returns the release word. The counters only grow: nothing is reset
// between barriers. No block reads another's tuples, so no fence is needed.
template <class Copy>
__device__ __forceinline__ u64 block_barrier(i64* ctl, i64 g, int count, bool heavy, int* local_count,
                                             const Copy& copy) {
  __shared__ i64 offset;
  __shared__ u64 release;
  if (threadIdx.x == 0) {
    const u64 add = (1ull << kArrivalShift) | ((u64)heavy << kWordBits) | (u64)count;
    const u64 now = atomicAdd(reinterpret_cast<u64*>(ctl + kCounter), add) + add;
    offset = (i64)(now & kWordMask) - count;
    if ((now >> kArrivalShift) == (u64)g * gridDim.x) {
      const u64 any_heavy = ((now >> kWordBits) & kHeavyMask) != 0 ? 1ull << kWordBits : 0ull;
      *reinterpret_cast<volatile u64*>(ctl + kRelease) = ((u64)g << kGenShift) | any_heavy | (now & kWordMask);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) *local_count = 0;  // every thread read it before the barrier
  copy(offset);
  if (threadIdx.x == 0) {
    u64 r;
    while (((r = *reinterpret_cast<volatile u64*>(ctl + kRelease)) >> kGenShift) < (u64)g) {
    }
    release = r;
  }
  __syncthreads();
  return release;
}

__device__ __forceinline__ u64 mix(u64 k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

// The open-addressing set: mask + 1 slots (a power of two, at most a quarter full by the
// host's sizing), linear probing from slot mix(w) & mask; a slot only goes from empty to a
// word, so `w` is in the set when it is before the first empty slot of its probe sequence.
// The first probe is a CAS (mostly empty: one round trip); the rest of a round's slowest
// insert bounds the round, so after a collision the next eight slots are read at once
// (from L2: another block may have just written them) and the first empty one is CASed.

// Goes on inserting `w` after its probe at slot `h` found another word. True: it was not
// there (now it is).
__device__ __forceinline__ bool probe(u64* table, i64 mask, u64 w, u64 h) {
  u64 at = (h + 1) & (u64)mask;
  while (true) {
    u64 s[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) s[k] = __ldcg(table + ((at + k) & (u64)mask));
    int k = 8;  // the first empty slot
#pragma unroll
    for (int j = 7; j >= 0; --j)
      if (s[j] == kEmpty) k = j;
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (j < k && s[j] == w) return false;
    if (k == 8) {
      at = (at + 8) & (u64)mask;
      continue;
    }
    const u64 slot = (at + k) & (u64)mask;
    const u64 prev = atomicCAS(table + slot, kEmpty, w);
    if (prev == kEmpty) return true;
    if (prev == w) return false;
    at = slot;  // another word took it: read on from there
  }
}

// Inserts `w` into the set. True: it was not there.
__device__ __forceinline__ bool insert(u64* table, i64 mask, u64 w, i64* ctl) {
  if (w == kEmpty)
    return atomicCAS(reinterpret_cast<u64*>(ctl + kMaxWord), 0ull, 1ull) == 0ull;
  const u64 h = mix(w) & (u64)mask;
  const u64 prev = atomicCAS(table + h, kEmpty, w);
  if (prev == kEmpty) return true;
  if (prev == w) return false;
  return probe(table, mask, w, h);
}

// Appends `w` to the block's next tuples: the threads of a warp that append at once take
// their places with one shared-memory atomic.
__device__ __forceinline__ void append(u64 w, u64* local, int* local_count) {
  const unsigned m = __activemask();
  const int lane = threadIdx.x & 31;
  const int leader = __ffs(m) - 1;
  int first = 0;
  if (lane == leader) first = atomicAdd(local_count, __popc(m));
  first = __shfl_sync(m, first, leader);
  local[first + __popc(m & ((1u << lane) - 1u))] = w;
}

// A thread's candidates waiting for their inserts.
struct Batch {
  u64 w[kBatch];
  int n = 0;
};

// Keeps the candidate `w` for flush(); when the batch is full, inserts it (and appends it
// when new) at once.
__device__ __forceinline__ void push(Batch& b, u64 w, u64* table, i64 mask, i64* ctl, u64* local,
                                     int* local_count) {
  if (b.n < kBatch) {
    b.w[b.n++] = w;
    return;
  }
  if (insert(table, mask, w, ctl)) append(w, local, local_count);
}

// Inserts the batch's candidates, their first probes issued together, and appends the new.
__device__ __forceinline__ void flush(Batch& b, u64* table, i64 mask, i64* ctl, u64* local,
                                      int* local_count) {
  u64 prev[kBatch];
#pragma unroll
  for (int c = 0; c < kBatch; ++c) {
    prev[c] = kEmpty;
    if (c < b.n && b.w[c] != kEmpty) prev[c] = atomicCAS(table + (mix(b.w[c]) & (u64)mask), kEmpty, b.w[c]);
  }
#pragma unroll
  for (int c = 0; c < kBatch; ++c) {
    if (c < b.n) {
      const u64 w = b.w[c];
      bool fresh;
      if (w == kEmpty)
        fresh = atomicCAS(reinterpret_cast<u64*>(ctl + kMaxWord), 0ull, 1ull) == 0ull;
      else if (prev[c] == kEmpty)
        fresh = true;
      else if (prev[c] == w)
        fresh = false;
      else
        fresh = probe(table, mask, w, mix(w) & (u64)mask);
      if (fresh) append(w, local, local_count);
    }
  }
  b.n = 0;
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
