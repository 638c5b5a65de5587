// ranc/templates/resident.cuh: the building blocks of a fixpoint's resident rounds
// (rt::ResidentRounds, ra_ops/fixpoint/resident.cpp).
//
// A resident kernel runs semi-naive rounds of a thin recursion without returning to the
// host: one cooperative launch (all its blocks resident at once), a barrier between rounds,
// or, when the loop has no round limit, no rounds at all: a block only ever reads its own
// tuples, and the least fixpoint of monotone rules does not depend on the order in which
// tuples are found, so the block's warps evaluate its tuples from a queue, each as soon as it
// is found (the worklist, worklist()).
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
                    // kWords but after a worklist, whose delta is a copy after them
  // The worklist (no round limit: the host passes kWorklist):
  kAsyncWords = 8,  // the words found so far (each warp appends the tuples it takes by one atomic)
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
// The slot `rounds` of a launch whose blocks run a worklist (worklist()); the most tuples a
// block's queue holds (a power of two; its words are the two buffers of the rounds).
constexpr i64 kWorklist = 0x7fffffffffffffffll;
constexpr int kQueueSlots = 2 * kLocalRows;
// The words past the room a launch of `blocks` blocks may write (rt::ResidentRounds::
// kAsyncSlackBuffers): after the room was passed (or the stop asked), a block appends what its
// warps claim in at most two more batches each (32 x 32 words: a quarter of a buffer), the
// found ones among its pending tuples (at most a queue, two buffers) and copies its pending
// ones (two more).
__host__ __device__ constexpr i64 async_slack(i64 blocks) { return 5 * blocks * kLocalRows; }

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

// ---- The worklist: asynchronous tuples (slot `rounds` kWorklist) ----
// Without a round limit a block needs no rounds at all: its warps take its tuples from a queue
// in shared memory, up to 32 at once, evaluate the rules on them and push the new tuples they
// find (those the set takes) back, each at its own pace. A tuple's successors wait only for
// its own inserts, not for a round's slowest; no barrier, no atomic in device memory between a
// tuple and its successors. The warp that takes a tuple appends it to the launch's found
// words (one atomic a batch, after the batch's inserts and pushes).
// The queue: kQueueSlots words (the rounds' two buffers) and their tags, pushed and taken in
// order of position (a 32-bit count that wraps; position p is slot p % kQueueSlots). A tag is
// position << 32 | the tuple's depth (the round that would have found it), written after the
// word, or position << 32 | kFreed once its taker read it: the next push to the slot waits for
// that of the position kQueueSlots before its own, its taker for its own.
struct Queue {
  u64 claim;      // the next slot to take (bits 0-31), free slots not reserved (32-47), busy warps (48-63)
  unsigned tail;  // the slots pushes reserved
  int stop;       // the block stops (hands back)
};

constexpr u64 kFreed = 0xffffffffull;
__device__ __forceinline__ u64 tag(unsigned position, u64 low) { return (u64)position << 32 | low; }

// Where the inserts put the new tuples they find: the rounds' next round's tuples (`s` null:
// append()), or the worklist's queue, at depth `depth` (each push uses a slot its warp
// reserved when it took the tuples: their candidates' bound). One type for both, so that the
// generated kernel's `rules` lambda has one signature (NVRTC compiles no generic lambda).
struct Out {
  u64* local;
  int* count;
  u64* q;
  u64* qt;
  Queue* s;
  int depth;
  int pushed;  // this thread's pushes to the queue in the batch
  __device__ __forceinline__ void append(u64 w) {
    if (s == nullptr) {
      resident::append(w, local, count);
      return;
    }
    const unsigned m = __activemask();
    const int lane = threadIdx.x & 31;
    const int leader = __ffs(m) - 1;
    unsigned first = 0;
    if (lane == leader) first = atomicAdd(&s->tail, (unsigned)__popc(m));
    first = __shfl_sync(m, first, leader);
    const unsigned p = first + (unsigned)__popc(m & ((1u << lane) - 1u));
    const unsigned slot = p & (kQueueSlots - 1);
    volatile u64* t = qt;
    while (t[slot] != tag(p - kQueueSlots, kFreed)) {
    }  // the tuple kQueueSlots positions before is taken (the space reserved says so): its taker reads it now
    q[slot] = w;
    __threadfence_block();
    t[slot] = tag(p, (u64)(unsigned)depth);
    ++pushed;
  }
  // The rounds' (into `local`, counted by `count`).
  __device__ static Out rounds(u64* local, int* count) { return Out{local, count, nullptr, nullptr, nullptr, 0, 0}; }
};

// A thread's candidates waiting for their inserts.
struct Batch {
  u64 w[kBatch];
  int n = 0;
};

// Keeps the candidate `w` for flush(); when the batch is full, inserts it (and appends it
// to `out` when new) at once.
__device__ __forceinline__ void push(Batch& b, u64 w, u64* table, i64 mask, i64* ctl, Out& out) {
  if (b.n < kBatch) {
    b.w[b.n++] = w;
    return;
  }
  if (insert(table, mask, w, ctl)) out.append(w);
}

// Inserts the batch's candidates, their first probes issued together, and appends the new
// to `out`: first those the first probe took (most), then those that probed on, so that
// a collision delays only its own candidate's successors.
__device__ __forceinline__ void flush(Batch& b, u64* table, i64 mask, i64* ctl, Out& out) {
  u64 prev[kBatch];
#pragma unroll
  for (int c = 0; c < kBatch; ++c) {
    prev[c] = kEmpty;
    if (c < b.n && b.w[c] != kEmpty) prev[c] = atomicCAS(table + (mix(b.w[c]) & (u64)mask), kEmpty, b.w[c]);
  }
#pragma unroll
  for (int c = 0; c < kBatch; ++c)
    if (c < b.n && b.w[c] != kEmpty && prev[c] == kEmpty) out.append(b.w[c]);
#pragma unroll
  for (int c = 0; c < kBatch; ++c) {
    if (c < b.n) {
      const u64 w = b.w[c];
      bool fresh = false;
      if (w == kEmpty)
        fresh = atomicCAS(reinterpret_cast<u64*>(ctl + kMaxWord), 0ull, 1ull) == 0ull;
      else if (prev[c] != kEmpty && prev[c] != w)
        fresh = probe(table, mask, w, mix(w) & (u64)mask);
      if (fresh) out.append(w);
    }
  }
  b.n = 0;
}

enum : int { kTake = 0, kWait = 1, kIdle = 2, kStop = 3 };

// Thread 0 of a warp: takes up to 32 of the block's queued tuples, reserving the slots their
// candidates may need (`bound` each); `*head`, `*take`: the first slot and the count. kWait:
// none to take now; kIdle: none queued and no warp busy (nothing can come); kStop: the block
// stops (the queue holds more than `max_rows`, or no warp is busy and the queue has no room
// for one tuple's candidates).
__device__ __forceinline__ int take_tuples(Queue* s, i64 bound, i64 max_rows, unsigned* head, int* take) {
  volatile Queue* v = s;
  while (true) {
    if (v->stop) return kStop;
    const u64 c = v->claim;
    __threadfence_block();  // a busy warp's pushes come before its release
    const unsigned tail = v->tail;
    const unsigned h = (unsigned)c;
    const i64 avail = (i64)(tail - h), space = (i64)((c >> 32) & 0xffff), busy = (i64)(c >> 48);
    if (avail == 0) return busy == 0 ? kIdle : kWait;
    if (avail > max_rows) return kStop;
    i64 n = avail < 32 ? avail : 32;
    if (bound > 1 && n > space / (bound - 1)) n = space / (bound - 1);
    if (n == 0) return busy == 0 ? kStop : kWait;
    const u64 next = (u64)(h + (unsigned)n) | ((u64)(space + n - n * bound) << 32) | ((u64)(busy + 1) << 48);
    if (atomicCAS(&s->claim, c, next) == c) {
      *head = h;
      *take = (int)n;
      return kTake;
    }
  }
}

// The block's worklist over q[0, rows) (its share of the delta, depth 0): `rules(tuple,
// batch, out)` evaluates the rules on one tuple, pushing candidates (push()). Returns the
// tuples still queued when the block stopped (the room passed, another block asked, or
// take_tuples's kStop), at q[(*first + k) % kQueueSlots]; `*deepest` (shared): the depth of
// the deepest tuple evaluated (-1: none).
template <class Rules>
__device__ __forceinline__ i64 worklist(const Rules& rules, u64* table, i64 mask, i64* ctl, u64* words,
                                        i64 room, i64 max_rows, i64 bound, i64 rows, u64* q, u64* qt,
                                        Queue* s, unsigned* first, int* deepest) {
  const int lane = threadIdx.x & 31;
  const i64 limit = room + async_slack(gridDim.x);
  for (int k = threadIdx.x; k < kQueueSlots; k += blockDim.x)
    qt[k] = k < rows ? tag((unsigned)k, 0) : tag((unsigned)k - kQueueSlots, kFreed);
  if (threadIdx.x == 0) {
    s->claim = (u64)(kQueueSlots - rows) << 32;
    s->tail = (unsigned)rows;
    s->stop = 0;
  }
  __syncthreads();
  int deep = -1, idle = 0;
  while (true) {
    int code = kWait, take = 0;
    unsigned head = 0;
    if (lane == 0) {
      code = take_tuples(s, bound, max_rows, &head, &take);
      if (code == kStop) {
        s->stop = 1;
        atomicExch(reinterpret_cast<u64*>(ctl + kAsyncStop), 1ull);
      } else if (code == kWait && (++idle & 31) == 0 && __ldcg(ctl + kAsyncStop) != 0) {
        s->stop = 1;
        code = kStop;
      }
    }
    code = __shfl_sync(~0u, code, 0);
    if (code == kIdle || code == kStop) break;
    if (code == kWait) {
      __nanosleep(64);
      continue;
    }
    head = __shfl_sync(~0u, head, 0);
    take = __shfl_sync(~0u, take, 0);
    u64 w = 0;
    int d = 0;
    if (lane < take) {
      const unsigned p = head + (unsigned)lane, slot = p & (kQueueSlots - 1);
      volatile u64* t = qt;
      u64 g;
      while ((g = t[slot]) >> 32 != p || (g & kFreed) == kFreed) {
      }  // its pusher reserved it and writes it now
      d = (int)(unsigned)g;
      __threadfence_block();
      w = q[slot];
      __threadfence_block();
      t[slot] = tag(p, kFreed);
    }
    Out out{nullptr, nullptr, q, qt, s, d + 1, 0};
    Batch batch;
    if (lane < take) {
      rules(w, batch, out);
      deep = d > deep ? d : deep;
    }
    flush(batch, table, mask, ctl, out);
    const int pushed = __reduce_add_sync(~0u, out.pushed);
    // The tuples taken but the delta's (depth 0) are found words, appended after the inserts:
    // a push's fence (Out::append) would wait for any access to device memory still under
    // way, so none is (another block's stop is read here too).
    const unsigned fresh = __ballot_sync(~0u, lane < take && d > 0);
    i64 at = 0, stop = 0;
    if (lane == 0) {
      stop = __ldcg(ctl + kAsyncStop);
      if (fresh) at = (i64)atomicAdd(reinterpret_cast<u64*>(ctl + kAsyncWords), (u64)__popc(fresh));
    }
    at = __shfl_sync(~0u, at, 0);
    if (fresh & (1u << lane)) {
      const i64 k = at + __popc(fresh & ((1u << lane) - 1u));
      if (k < limit)
        words[k] = w;
      else
        ctl[kOverflow] = 1;
    }
    if (lane == 0) {
      if (fresh && at + __popc(fresh) > room) {
        stop = 1;
        atomicExch(reinterpret_cast<u64*>(ctl + kAsyncStop), 1ull);
      }
      if (stop) s->stop = 1;
      __threadfence_block();  // the pushes before the release (take_tuples's kIdle)
      atomicAdd(&s->claim, ((u64)((i64)take * bound - pushed) << 32) - (1ull << 48));
    }
  }
  __syncthreads();
  deep = __reduce_max_sync(~0u, deep);
  if (lane == 0) atomicMax(deepest, deep);
  const unsigned h = (unsigned)s->claim;
  *first = h;
  return (i64)(s->tail - h);
}

// The end of a worklist's block (all its threads): the found tuples among the pending ones
// (not the delta's, depth 0) are appended to the found words; the block arrives; once every
// block has (no word is found after), the pending tuples are copied after the found words
// (the delta the host goes on with); the last block done writes the control words out.
__device__ __forceinline__ void finish_worklist(i64* ctl, u64* words, i64 room, const u64* q, const u64* qt,
                                                i64 pending, unsigned first, int deepest) {
  __shared__ int fresh;
  __shared__ i64 at;
  const i64 limit = room + async_slack(gridDim.x);
  if (threadIdx.x == 0) fresh = 0;
  __syncthreads();
  int mine = 0;
  for (i64 k = threadIdx.x; k < pending; k += blockDim.x)
    mine += (unsigned)qt[(first + (unsigned)k) & (kQueueSlots - 1)] != 0u;
  mine = __reduce_add_sync(~0u, mine);
  if ((threadIdx.x & 31) == 0 && mine > 0) atomicAdd(&fresh, mine);
  __syncthreads();
  if (threadIdx.x == 0) {
    at = fresh > 0 ? (i64)atomicAdd(reinterpret_cast<u64*>(ctl + kAsyncWords), (u64)fresh) : 0;
    fresh = 0;
  }
  __syncthreads();
  for (i64 k = threadIdx.x; k < pending; k += blockDim.x) {
    const unsigned slot = (first + (unsigned)k) & (kQueueSlots - 1);
    if ((unsigned)qt[slot] != 0u) {
      const i64 j = at + atomicAdd(&fresh, 1);
      if (j < limit)
        words[j] = q[slot];
      else
        ctl[kOverflow] = 1;
    }
  }
  __syncthreads();  // (every thread read `at`)
  if (threadIdx.x == 0) {
    atomicMax(ctl + kRounds, (i64)deepest + 1);
    __threadfence();
    atomicAdd(reinterpret_cast<u64*>(ctl + kArrived), 1ull);
    if (pending > 0) {
      while (*reinterpret_cast<volatile i64*>(ctl + kArrived) < (i64)gridDim.x) {
      }
      at = __ldcg(ctl + kAsyncWords) + (i64)atomicAdd(reinterpret_cast<u64*>(ctl + kAsyncDelta), (u64)pending);
    }
  }
  __syncthreads();
  for (i64 k = threadIdx.x; k < pending; k += blockDim.x) {
    if (at + k < limit)
      words[at + k] = q[(first + (unsigned)k) & (kQueueSlots - 1)];
    else
      ctl[kOverflow] = 1;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(reinterpret_cast<u64*>(ctl + kDone), 1ull) == gridDim.x - 1) {
      const i64 found = (i64)atomicAdd(reinterpret_cast<u64*>(ctl + kAsyncWords), 0ull);
      const i64 delta = (i64)atomicAdd(reinterpret_cast<u64*>(ctl + kAsyncDelta), 0ull);
      const bool stopped = atomicAdd(reinterpret_cast<u64*>(ctl + kAsyncStop), 0ull) != 0;
      ctl[kFound] = found;
      ctl[kDeltaBegin] = found;
      ctl[kWords] = found + delta;
      ctl[kStatus] = stopped ? kHandBack : kFixpoint;
    }
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
