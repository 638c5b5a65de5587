// ranc/templates/common.cuh: shared building blocks of the ranc CUDA templates.
//
// Everything here is device code compiled by NVRTC (-std=c++17, CCCL headers on the include path)
// or nvcc. Contents:
//   * Policy structs and the ONE per-architecture tuning table (TuningTable<Arch>).
//   * 64-bit index helpers (tile bases, grid sizes), so grids over more than 2^31 items work.
//   * Tile state for decoupled look-back (TileState, block.cuh) and its init kernel helper.
//   * The error flag (a kernel reports e.g. integer division by zero through *err_flag).
//   * Safe integer division / modulo, saturating float->int casts, IEEE totalOrder comparison.
//
// Conventions used by every skeleton (the code generator relies on them):
//   * Kernel parameters are 8-byte values only: device pointers and long long.
//   * Launch rule "grid = tiles(items, P)" means gridDim.x = max(1, ceil(items / P::tile_items)),
//     blockDim.x = P::block_threads. Every kernel helper accepts items == 0 (the one block then only
//     writes zero counts), so the runtime never launches an empty grid.
//   * Buffer sizes are given in int64 elements unless stated otherwise.
#pragma once

#include <ranc/templates/block.cuh>
#include <ranc/templates/contract.cuh>

namespace ranc::tpl {

using i64 = long long;
using u64 = unsigned long long;

// ---------------------------------------------------------------------------------------------
// Policies
// ---------------------------------------------------------------------------------------------

/// A tile of BlockThreads * ItemsPerThread items processed by one thread block.
template <int BlockThreads, int ItemsPerThread>
struct TilePolicy {
  static_assert(BlockThreads % 32 == 0, "BlockThreads must be a multiple of the warp size");
  static_assert(BlockThreads >= 32 && BlockThreads <= 1024, "BlockThreads must be in [32, 1024]");
  static_assert(ItemsPerThread >= 1, "ItemsPerThread must be positive");
  static constexpr int block_threads = BlockThreads;
  static constexpr int items_per_thread = ItemsPerThread;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;
  static constexpr int warps = BlockThreads / 32;
};

/// The one tuning table: policies per operator family and architecture. The code generator
/// should instantiate skeletons with these values (e.g. TuningTable<900>::Select) and use the
/// same tile_items for its launch rules. Arch = __CUDA_ARCH__ style number (800, 900).
///
///   family      sm_80 (threads x items)   sm_90 (threads x items)   note
///   Map         256 x 8                   256 x 16                  map / project / product / limit
///   Select      256 x 8                   256 x 16                  filter, unique
///   SelectSearch 256 x 1                  256 x 1                   filters that binary-search
///                                                                     (semi/anti join): latency
///                                                                     bound, so one row a thread
///   MapSearch   256 x 1                   256 x 1                   maps that binary-search
///                                                                     (a join's per-row ranges)
///   Merge       128 x 7                   256 x 15                  merge path, set operations
///   JoinCount   256 x 4                   256 x 4                   per-left-row bounds + scan
///   JoinExpand  256 x 8                   256 x 8                   load-balanced join write
///   Reduce      256 x 4                   256 x 15                  segmented reduction (odd
///                                                                     items: staged rows are
///                                                                     read without bank
///                                                                     conflicts)
///   HashJoin    512 x 8                   512 x 8                   build/probe per probe tile
///   HashGroup   512 x 4                   512 x 4                   hash group-by (shared tables)
template <int Arch>
struct TuningTable {  // sm_90 and newer: the default
  using Map = TilePolicy<256, 16>;
  using Select = TilePolicy<256, 16>;
  using SelectSearch = TilePolicy<256, 1>;
  using MapSearch = TilePolicy<256, 1>;
  using Merge = TilePolicy<256, 15>;
  using JoinCount = TilePolicy<256, 4>;
  using JoinExpand = TilePolicy<256, 8>;
  using Reduce = TilePolicy<256, 15>;
  using HashJoin = TilePolicy<512, 8>;
  using HashGroup = TilePolicy<512, 4>;
};
template <>
struct TuningTable<800> {
  using Map = TilePolicy<256, 8>;
  using Select = TilePolicy<256, 8>;
  using SelectSearch = TilePolicy<256, 1>;
  using MapSearch = TilePolicy<256, 1>;
  using Merge = TilePolicy<128, 7>;
  using JoinCount = TilePolicy<256, 4>;
  using JoinExpand = TilePolicy<256, 8>;
  using Reduce = TilePolicy<256, 4>;
  using HashJoin = TilePolicy<512, 8>;
  using HashGroup = TilePolicy<512, 4>;
};

// ---------------------------------------------------------------------------------------------
// 64-bit index helpers
// ---------------------------------------------------------------------------------------------

/// Number of tiles for `items` items (at least 1: every launch has one block).
__host__ __device__ __forceinline__ constexpr i64 num_tiles(i64 items, i64 tile_items) {
  return items <= 0 ? 1 : (items + tile_items - 1) / tile_items;
}
__device__ __forceinline__ i64 tile_index() { return static_cast<i64>(blockIdx.x); }
__device__ __forceinline__ i64 tile_base(i64 tile_items) {
  return static_cast<i64>(blockIdx.x) * tile_items;
}
__device__ __forceinline__ i64 global_thread_index() {
  return static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ i64 grid_stride() { return static_cast<i64>(gridDim.x) * blockDim.x; }
__host__ __device__ __forceinline__ constexpr i64 min64(i64 a, i64 b) { return a < b ? a : b; }
__host__ __device__ __forceinline__ constexpr i64 max64(i64 a, i64 b) { return a > b ? a : b; }

/// First index in [lo, hi) for which `pred(i)` is false, for a predicate that is true on a prefix.
template <class Pred>
__device__ __forceinline__ i64 partition_point(i64 lo, i64 hi, Pred pred) {
  while (lo < hi) {
    i64 mid = lo + ((hi - lo) >> 1);
    if (pred(mid)) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/// partition_point for an answer expected near `lo` (the end of a run of equal keys that starts
/// at lo): probes lo, lo + 1, lo + 3, lo + 7, ... and binary-searches the last step, so the
/// dependent loads grow with the log of the distance from lo, not of hi - lo (one or two for a
/// key that matches at most once, where a binary search over the whole range needs ~log2 n).
template <class Pred>
__device__ __forceinline__ i64 gallop_partition_point(i64 lo, i64 hi, Pred pred) {
  if (lo >= hi || !pred(lo)) return lo;
  i64 known = lo;  // pred(known) holds
  for (i64 step = 1;; step <<= 1) {
    const i64 probe = known + step;
    if (probe >= hi) return partition_point(known + 1, hi, pred);
    if (!pred(probe)) return partition_point(known + 1, probe, pred);
    known = probe;
  }
}

/// partition_point by the 32 lanes of a warp together (call from all of them; every lane gets
/// the answer): each round the lanes probe 32 evenly spaced points and a ballot keeps the gap
/// that holds the partition point, so a search over n items takes about log32(n) + 1 rounds of
/// one load a lane instead of log2(n) dependent loads. For the one search a block needs before
/// its threads can start (a tile's key range), which its other threads would wait for.
template <class Pred>
__device__ __forceinline__ i64 warp_partition_point(i64 lo, i64 hi, Pred pred) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  while (hi - lo > 32) {
    const i64 step = (hi - lo + 31) / 32;  // probes lo + step - 1, lo + 2 step - 1, ... (< hi)
    const i64 p = lo + (lane + 1) * step - 1;
    const bool in = p < hi;
    const unsigned below = __ballot_sync(0xffffffffu, in && pred(p));
    const int c = __popc(below);  // the probes where pred holds: a prefix of the lanes
    const i64 nlo = c == 0 ? lo : lo + c * step;  // one past the last probe that holds
    const i64 nhi = min64(hi, lo + (c + 1) * step - 1);  // the first probe that fails (or hi)
    lo = nlo;
    hi = nhi;
  }
  const i64 p = lo + lane;
  const unsigned below = __ballot_sync(0xffffffffu, p < hi && pred(p));
  return lo + __popc(below);
}

// ---------------------------------------------------------------------------------------------
// Decoupled look-back tile state
// ---------------------------------------------------------------------------------------------

/// Bytes of the tile-state scratch buffer for `tiles` tiles: 16 * (tiles + 32).
/// In int64 elements: tile_state_elems(tiles) = 2 * (tiles + 32).
__host__ __device__ __forceinline__ constexpr i64 tile_state_bytes(i64 tiles) { return 16 * (tiles + 32); }
__host__ __device__ __forceinline__ constexpr i64 tile_state_elems(i64 tiles) { return 2 * (tiles + 32); }

__device__ __forceinline__ TileState make_tile_state(void* tile_state) {
  TileState s;
  s.words = static_cast<u64*>(tile_state);
  return s;
}

/// Body of the tile-state init kernel. Launch: items = tiles, threads = 256,
/// grid = max(1, ceil(tiles / 256)). Must run (on the same stream) before every kernel that uses
/// the buffer; a buffer can be reused after re-initialising it. The initial state is all zero
/// bytes (TileState::kInvalid is 0), so a zeroed allocation serves as well: generated plans
/// allocate their tile states zeroed (LoweringContext::tile_state) and launch no init kernel.
///   extern "C" __global__ void nX_init(void* tile_state, long long tiles) {
///     ranc::tpl::init_tile_state(tile_state, tiles); }
__device__ __forceinline__ void init_tile_state(void* tile_state, i64 tiles) {
  TileState s = make_tile_state(tile_state);
  const i64 t = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < tiles) s.init(t);
}

/// Body of the init kernel of `count` tile states laid out one after another, each
/// tile_state_elems(tiles) int64 (SharedSelectAgent's). Launch as init_tile_state.
__device__ __forceinline__ void init_tile_states(void* tile_states, i64 tiles, int count) {
  for (int o = 0; o < count; ++o)
    init_tile_state(static_cast<i64*>(tile_states) + o * tile_state_elems(tiles), tiles);
}

/// Exclusive prefix over tiles of one long long per tile, computed in one pass (decoupled
/// look-back). Call from ALL threads of the block; returns the tile's exclusive prefix in every
/// thread and the inclusive prefix through `inclusive`.
struct TilePrefix {
  struct TempStorage {
    i64 exclusive;
    i64 inclusive;
  };
  __device__ __forceinline__ static i64 run(TempStorage& temp, TileState& state, i64 tile_aggregate,
                                            i64& inclusive) {
    const int tile = static_cast<int>(blockIdx.x);
    if (threadIdx.x < 32) {
      if (tile == 0) {
        if (threadIdx.x == 0) {
          state.SetInclusive(0, tile_aggregate);
          temp.exclusive = 0;
          temp.inclusive = tile_aggregate;
        }
      } else {
        const i64 excl = state.look_back(tile, tile_aggregate);
        if (threadIdx.x == 0) {
          temp.exclusive = excl;
          temp.inclusive = excl + tile_aggregate;
        }
      }
    }
    __syncthreads();
    inclusive = temp.inclusive;
    return temp.exclusive;
  }
};

/// 16 bytes from global to shared memory without passing through registers (cp.async, sm_80
/// and newer): the thread issues every copy of a tile before waiting for any, so all of them
/// are in flight at once. copy_async_wait() waits for the calling thread's copies.
__device__ __forceinline__ void copy_async16(void* smem, const void* gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
#else
  *static_cast<int4*>(smem) = *static_cast<const int4*>(gmem);
#endif
}
__device__ __forceinline__ void copy_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

/// Rows [lo, hi) of the column `src` copied into the shared array `smem` by the block's
/// `Threads` threads together (all of them call it; the caller synchronises afterwards).
/// Returns the column rebased onto the copy: result[r] == src[r] for r in [lo, hi), so a hook
/// that reads the column by row number reads shared memory instead, unchanged. The copy is
/// placed so that shared and global addresses agree modulo 16 bytes, and the bulk of it moves
/// as 16-byte vectors (one coalesced 512-byte transaction per warp instruction). `smem` is
/// 16-byte aligned and holds stage_elems<T>(hi - lo) elements; src is aligned to sizeof(T).
template <class T>
__host__ __device__ __forceinline__ constexpr i64 stage_elems(i64 rows) {
  return rows + 16 / static_cast<i64>(sizeof(T));
}
/// stage_rows without the wait: the caller calls copy_async_wait() (and synchronises) once
/// after issuing every copy of its tile, so the copies of several columns are in flight together.
template <int Threads, class T>
__device__ __forceinline__ const T* stage_rows_async(T* smem, const T* src, i64 lo, i64 hi) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8 ||
                    sizeof(T) == 16,
                "stage_rows: element size must divide 16");
  const T* s = src + lo;
  const unsigned mis = static_cast<unsigned>(reinterpret_cast<unsigned long long>(s) & 15u);
  T* d = smem + mis / sizeof(T);  // d and s agree modulo 16 bytes
  const i64 count = hi - lo;
  if (count <= 0) return d - lo;
  // Elements before s's first 16-byte boundary, the whole vectors after it, the rest.
  const i64 head = min64(count, static_cast<i64>(((16u - mis) & 15u) / sizeof(T)));
  const i64 vectors = (count - head) * static_cast<i64>(sizeof(T)) / 16;
  const i64 body_end = head + vectors * (16 / static_cast<i64>(sizeof(T)));
  for (i64 i = threadIdx.x; i < head; i += Threads) d[i] = s[i];
  const int4* sv = reinterpret_cast<const int4*>(s + head);
  int4* dv = reinterpret_cast<int4*>(d + head);
  for (i64 i = threadIdx.x; i < vectors; i += Threads) copy_async16(dv + i, sv + i);
  for (i64 i = body_end + threadIdx.x; i < count; i += Threads) d[i] = s[i];
  return d - lo;
}
template <int Threads, class T>
__device__ __forceinline__ const T* stage_rows(T* smem, const T* src, i64 lo, i64 hi) {
  const T* r = stage_rows_async<Threads>(smem, src, lo, hi);
  copy_async_wait();
  return r;
}
/// Two ranges staged one after the other in one shared array (the set operations stage A's and
/// B's rows of a column together): stage_pair_elems<T>(rows) elements hold any two ranges of
/// rows rows together; the second range starts stage_pair_offset(src, lo, hi) elements into the
/// array, past the first range stage_rows_async(smem, src, lo, hi) placed there.
template <class T>
__host__ __device__ __forceinline__ constexpr i64 stage_pair_elems(i64 rows) {
  return rows + 3 * (16 / static_cast<i64>(sizeof(T)));
}
template <class T>
__device__ __forceinline__ i64 stage_pair_offset(const T* src, i64 lo, i64 hi) {
  constexpr i64 kVec = 16 / static_cast<i64>(sizeof(T));
  const i64 used = static_cast<i64>((reinterpret_cast<unsigned long long>(src + lo) & 15u) / sizeof(T)) +
                   max64(0, hi - lo);
  return (used + kVec - 1) / kVec * kVec;
}

/// Body of a one-thread kernel copying src[idx] to *dst, for runtimes that read a count only from
/// the start of a buffer (e.g. the total of an exclusive scan over n+1 counts sits at index n).
/// Launch: grid 1, threads 1 (or any).
__device__ __forceinline__ void copy_element(const i64* src, i64 idx, i64* dst) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *dst = src[idx];
}

// ---------------------------------------------------------------------------------------------
// Error flag
// ---------------------------------------------------------------------------------------------

/// Error codes a kernel may report through `int* err_flag` (or a long long buffer viewed as int).
/// The first error wins; the runtime zeroes the flag before the launch and checks it after.
enum ErrorCode : int {
  kErrNone = 0,
  kErrDivisionByZero = 1,
  kErrOverflow = 2,
  kErrCapacity = 3,  // an internal capacity was exceeded (a bug or an unsupported input)
};

__device__ __forceinline__ void set_error(int* err_flag, int code) {
  if (err_flag != nullptr) atomicCAS(err_flag, 0, code);
}

// ---------------------------------------------------------------------------------------------
// Arithmetic helpers
// ---------------------------------------------------------------------------------------------

/// Integer division: x / 0 sets kErrDivisionByZero and yields 0; MIN / -1 wraps to MIN.
/// Floating-point types divide with IEEE semantics.
template <class T>
__device__ __forceinline__ T safe_div(T a, T b, int* err_flag) {
  if constexpr (is_integral_v<T>) {
    if (b == 0) {
      set_error(err_flag, kErrDivisionByZero);
      return T(0);
    }
    if constexpr (is_signed_v<T>) {
      if (b == T(-1)) return static_cast<T>(T(0) - static_cast<make_unsigned_t<T>>(a));
    }
    return a / b;
  } else {
    return a / b;
  }
}

/// Integer modulo (sign of the dividend, like C++): x % 0 sets the flag and yields 0;
/// MIN % -1 yields 0. Floating point uses fmod.
template <class T>
__device__ __forceinline__ T safe_mod(T a, T b, int* err_flag) {
  if constexpr (is_integral_v<T>) {
    if (b == 0) {
      set_error(err_flag, kErrDivisionByZero);
      return T(0);
    }
    if constexpr (is_signed_v<T>) {
      if (b == T(-1)) return T(0);
    }
    return a % b;
  } else {
    return fmod(a, b);
  }
}

/// Wrapping (two's complement) signed arithmetic, without undefined behaviour.
template <class T>
__device__ __forceinline__ T wrap_add(T a, T b) {
  using U = make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
__device__ __forceinline__ T wrap_sub(T a, T b) {
  using U = make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
__device__ __forceinline__ T wrap_mul(T a, T b) {
  using U = make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}
template <class T>
__device__ __forceinline__ T wrap_neg(T a) {
  using U = make_unsigned_t<T>;
  return static_cast<T>(U(0) - static_cast<U>(a));
}

/// Saturating float -> integer cast: NaN -> 0, values beyond the range clamp to MIN / MAX,
/// otherwise truncation toward zero.
template <class To, class From>
__device__ __forceinline__ To saturating_cast(From f) {
  static_assert(is_integral_v<To>, "saturating_cast: target must be integral");
  if constexpr (is_floating_point_v<From>) {
    using L = int_limits<To>;
    const double x = static_cast<double>(f);
    if (x != x) return To(0);
    // 2^digits is exactly representable; (double)L::max() may round up to it.
    const double hi = static_cast<double>(u64(1) << (L::digits - 1)) * 2.0;  // 2^digits
    if (x >= hi) return L::max();
    if constexpr (is_signed_v<To>) {
      if (x < -hi) return L::min();
    } else {
      if (x <= -1.0) return To(0);
    }
    return static_cast<To>(x);
  } else {
    return static_cast<To>(f);
  }
}

/// IEEE 754 totalOrder key: unsigned integer whose natural order is
/// -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN. Same transform as radix sort.
__device__ __forceinline__ unsigned int total_order_key(float f) {
  unsigned int b = __float_as_uint(f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ u64 total_order_key(double d) {
  u64 b = static_cast<u64>(__double_as_longlong(d));
  return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
}
/// The inverses: the float (double) whose total_order_key is k.
__device__ __forceinline__ float from_total_order_key(unsigned int k) {
  return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}
__device__ __forceinline__ double from_total_order_key(u64 k) {
  return __longlong_as_double(
      static_cast<long long>((k & 0x8000000000000000ull) ? (k & 0x7fffffffffffffffull) : ~k));
}

/// Three-way comparison: integers by value, floats by IEEE totalOrder (equal iff same bits).
/// Returns -1, 0 or 1.
template <class T>
__device__ __forceinline__ int cmp3(T a, T b) {
  if constexpr (is_floating_point_v<T>) {
    auto ka = total_order_key(a), kb = total_order_key(b);
    return (ka > kb) - (ka < kb);
  } else {
    return (a > b) - (a < b);
  }
}
template <class T>
__device__ __forceinline__ bool total_less(T a, T b) { return cmp3(a, b) < 0; }
template <class T>
__device__ __forceinline__ bool total_equal(T a, T b) { return cmp3(a, b) == 0; }

/// Lexicographic three-way comparison of several columns: cmp3_chain(cmp3(a0,b0), cmp3(a1,b1), ...)
/// Generated comparators should short-circuit instead where loads are expensive.
__device__ __forceinline__ int cmp3_chain(int c) { return c; }
template <class... Rest>
__device__ __forceinline__ int cmp3_chain(int c, Rest... rest) {
  return c != 0 ? c : cmp3_chain(rest...);
}

/// Exact integer sums (program.h: an integer sum that leaves the i64 range is an error):
/// a 128-bit two's-complement accumulator as a low and a high 64-bit word.
__device__ __forceinline__ void add128(unsigned long long& lo, unsigned long long& hi, long long v) {
  const unsigned long long old = lo;
  lo += (unsigned long long)v;
  hi += (v < 0 ? ~0ull : 0ull) + (lo < old ? 1ull : 0ull);
}
__device__ __forceinline__ void merge128(unsigned long long& lo, unsigned long long& hi,
                                         unsigned long long blo, unsigned long long bhi) {
  const unsigned long long old = lo;
  lo += blo;
  hi += bhi + (lo < old ? 1ull : 0ull);
}
/// *acc += b modulo 2^(64 W) for a little-endian accumulator of W 64-bit words in shared or
/// global memory, by 32-bit atomic adds: sm_90 has no 64-bit atomic add in shared memory
/// (atomicAdd on 64 bits compiles to a compare-and-swap loop, ATOMS.CAST.SPIN.64, which retries
/// while other threads update the word: slow on the few hot slots of a small group-by). Each
/// 32-bit add returns its old value, which decides the carry into the next word; a word above
/// the lowest whose increment (its part of b plus the carry) is zero is left alone, so a small
/// positive value costs one atomic (the lowest word's add is made whatever its part, which
/// keeps a branch out of a row's merge: 18 instructions a row of a one-word sum's dense
/// shared_run, against 23, SASS for sm_90). Exact: every wrap of a word is seen by exactly one add,
/// the one that caused it, so once all adds are done the words hold the sum; while adds are in
/// flight a reader may see a torn value (the hash group-by reads its table only after a barrier).
template <int W>
__device__ __forceinline__ void atomic_add_words(unsigned long long* acc, const unsigned long long (&b)[W]) {
  unsigned* w = reinterpret_cast<unsigned*>(acc);
  unsigned carry = 0;
#pragma unroll
  for (int i = 0; i < 2 * W; ++i) {
    const unsigned part = static_cast<unsigned>(b[i / 2] >> (32 * (i % 2)));
    const unsigned inc = part + carry;
    unsigned next = inc < carry ? 1u : 0u;  // part + carry wrapped (part = ~0u, carry = 1)
    if (i == 0 || inc != 0) {
      const unsigned old = atomicAdd(&w[i], inc);
      if (i + 1 < 2 * W && old + inc < old) next = 1;
    }
    carry = next;
  }
}
/// An unsigned 64-bit count += b by atomics. `fits`: the count stays below 2^32 (the caller
/// knows its input has fewer rows), so one 32-bit add of the low word whose result is not
/// waited for; else atomic_add_words.
__device__ __forceinline__ void atomic_add_count(unsigned long long* a, unsigned long long b, bool fits) {
  if (fits)
    atomicAdd(reinterpret_cast<unsigned*>(a), static_cast<unsigned>(b));
  else
    atomic_add_words<1>(a, {b});
}
/// The 128-bit value at acc (low word first) += (lo, hi), by 64-bit atomics in device memory
/// (native there): each adder takes its own carry out of the low word from the value its add
/// met, so concurrent adds sum exactly (mod 2^128); the high word's add returns nothing.
/// Returns the low word's old value.
__device__ __forceinline__ unsigned long long atomic_add_128(unsigned long long* acc,
                                                             unsigned long long lo,
                                                             unsigned long long hi) {
  const unsigned long long old = atomicAdd(&acc[0], lo);
  const unsigned long long up = hi + (old + lo < old ? 1ull : 0ull);
  if (up != 0) atomicAdd(&acc[1], up);
  return old;
}
/// a += b in two's complement; returns whether the exact sum leaves the i64 range.
__device__ __forceinline__ bool add_overflows(long long& a, long long b) {
  const long long r = static_cast<long long>(static_cast<unsigned long long>(a) +
                                             static_cast<unsigned long long>(b));
  const bool over = ((a ^ r) & (b ^ r)) < 0;
  a = r;
  return over;
}
/// Whether the 128-bit value (lo, hi) is an i64.
__device__ __forceinline__ bool fits_i64(unsigned long long lo, unsigned long long hi) {
  return (long long)hi == ((long long)lo >> 63);
}

/// __shfl_sync of a trivially copyable value of 8-byte words (an aggregate state) from lane
/// `src`, word by word; every lane of the warp calls it.
template <class T>
__device__ __forceinline__ T shfl_words(const T& v, int src) {
  static_assert(sizeof(T) % 8 == 0 && alignof(T) >= 8, "a value of whole 8-byte words");
  T r;
  const unsigned long long* a = reinterpret_cast<const unsigned long long*>(&v);
  unsigned long long* b = reinterpret_cast<unsigned long long*>(&r);
#pragma unroll
  for (int w = 0; w < static_cast<int>(sizeof(T) / 8); ++w) b[w] = __shfl_sync(0xffffffffu, a[w], src);
  return r;
}

}  // namespace ranc::tpl
