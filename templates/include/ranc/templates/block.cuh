// ranc block-level primitives for the skeletons: type traits, warp and block scans and
// reductions, a block radix sort, and the decoupled look-back tile state. Compiles with
// NVRTC and nvcc.
//
// Why not CUB here: CUB's headers pull in libcu++ (cuda/std). With NVRTC 13.0, parsing
// them costs 0.7-1.1 s of every program's compile (an empty program that includes
// <cub/block/block_scan.cuh> takes ~1.1 s; without it ~0.03 s), more than the rest of a
// TPC-H query's compile, and NVRTC's precompiled headers cannot be kept across processes
// (a PCH file is only valid for the NVRTC instance and heap address that wrote it). These
// few primitives are all the skeletons need; the device-wide sorts and scans compiled
// ahead of time (runtime/src/runtime/builtins.cu) still use CUB.
//
// Contracts (the same as CUB's, so the skeletons read the same):
//   * Every thread of the block calls a block primitive (they contain __syncthreads()).
//   * blockDim.x == the Threads template argument, a multiple of 32.
//   * A primitive's TempStorage may be reused right after it returns (they end with a barrier).
//   * Scan operators are applied as op(earlier, later) and need only be associative.
#pragma once

namespace ranc::tpl {

using i64 = long long;
using u64 = unsigned long long;

// ---------------------------------------------------------------------------------------------
// Type traits (the few the templates use; libcu++'s <type_traits> alone costs ~0.5 s in NVRTC)
// ---------------------------------------------------------------------------------------------

template <class T> struct is_integral { static constexpr bool value = false; };
#define RANC_TPL_INTEGRAL(T) template <> struct is_integral<T> { static constexpr bool value = true; };
RANC_TPL_INTEGRAL(bool)
RANC_TPL_INTEGRAL(char)
RANC_TPL_INTEGRAL(signed char)
RANC_TPL_INTEGRAL(unsigned char)
RANC_TPL_INTEGRAL(short)
RANC_TPL_INTEGRAL(unsigned short)
RANC_TPL_INTEGRAL(int)
RANC_TPL_INTEGRAL(unsigned int)
RANC_TPL_INTEGRAL(long)
RANC_TPL_INTEGRAL(unsigned long)
RANC_TPL_INTEGRAL(long long)
RANC_TPL_INTEGRAL(unsigned long long)
#undef RANC_TPL_INTEGRAL
template <class T> struct is_integral<const T> : is_integral<T> {};
template <class T> inline constexpr bool is_integral_v = is_integral<T>::value;

template <class T> struct is_floating_point { static constexpr bool value = false; };
template <> struct is_floating_point<float> { static constexpr bool value = true; };
template <> struct is_floating_point<double> { static constexpr bool value = true; };
template <class T> struct is_floating_point<const T> : is_floating_point<T> {};
template <class T> inline constexpr bool is_floating_point_v = is_floating_point<T>::value;

template <class T> inline constexpr bool is_signed_v = (is_integral_v<T> || is_floating_point_v<T>) && T(-1) < T(0);

template <bool B, class T, class F> struct conditional { using type = T; };
template <class T, class F> struct conditional<false, T, F> { using type = F; };
template <bool B, class T, class F> using conditional_t = typename conditional<B, T, F>::type;

template <class A, class B> inline constexpr bool is_same_v = false;
template <class A> inline constexpr bool is_same_v<A, A> = true;

template <class T> struct make_unsigned;
template <> struct make_unsigned<char> { using type = unsigned char; };
template <> struct make_unsigned<signed char> { using type = unsigned char; };
template <> struct make_unsigned<unsigned char> { using type = unsigned char; };
template <> struct make_unsigned<short> { using type = unsigned short; };
template <> struct make_unsigned<unsigned short> { using type = unsigned short; };
template <> struct make_unsigned<int> { using type = unsigned int; };
template <> struct make_unsigned<unsigned int> { using type = unsigned int; };
template <> struct make_unsigned<long> { using type = unsigned long; };
template <> struct make_unsigned<unsigned long> { using type = unsigned long; };
template <> struct make_unsigned<long long> { using type = unsigned long long; };
template <> struct make_unsigned<unsigned long long> { using type = unsigned long long; };
template <class T> using make_unsigned_t = typename make_unsigned<T>::type;

/// min(), max() and digits (value bits, as std::numeric_limits) of an integer type.
template <class T>
struct int_limits {
  static_assert(is_integral_v<T>, "int_limits: integer types only");
  static constexpr bool is_signed = T(-1) < T(0);
  static constexpr int digits = static_cast<int>(sizeof(T) * 8) - (is_signed ? 1 : 0);
  __host__ __device__ static constexpr T max() {
    return is_signed ? static_cast<T>((static_cast<u64>(1) << (digits - 1)) - 1 + (static_cast<u64>(1) << (digits - 1)))
                     : static_cast<T>(~static_cast<make_unsigned_t<T>>(0));
  }
  __host__ __device__ static constexpr T min() { return is_signed ? static_cast<T>(-max() - 1) : T(0); }
};

// ---------------------------------------------------------------------------------------------
// Warp primitives over any trivially copyable type (moved as 32-bit words)
// ---------------------------------------------------------------------------------------------

namespace detail {
template <class T>
struct Words {
  static constexpr int kCount = static_cast<int>((sizeof(T) + 3) / 4);
  unsigned int w[kCount];
};
template <class T>
__device__ __forceinline__ Words<T> to_words(const T& v) {
  Words<T> r{};
  memcpy(r.w, &v, sizeof(T));
  return r;
}
template <class T>
__device__ __forceinline__ T from_words(const Words<T>& r) {
  T v;
  memcpy(&v, r.w, sizeof(T));
  return v;
}
/// Raw, suitably aligned storage for N values of T in shared memory (no constructors run, so
/// it may sit in a union).
template <class T, int N>
struct alignas(alignof(T) > 8 ? alignof(T) : 8) RawArray {
  unsigned char bytes[sizeof(T) * N];
  __device__ __forceinline__ T* data() { return reinterpret_cast<T*>(bytes); }
};
}  // namespace detail

constexpr unsigned int kFullMask = 0xffffffffu;

template <class T>
__device__ __forceinline__ T shfl_up(const T& v, int delta) {
  detail::Words<T> w = detail::to_words(v);
#pragma unroll
  for (int i = 0; i < detail::Words<T>::kCount; ++i) w.w[i] = __shfl_up_sync(kFullMask, w.w[i], delta);
  return detail::from_words<T>(w);
}
template <class T>
__device__ __forceinline__ T shfl_down(const T& v, int delta) {
  detail::Words<T> w = detail::to_words(v);
#pragma unroll
  for (int i = 0; i < detail::Words<T>::kCount; ++i) w.w[i] = __shfl_down_sync(kFullMask, w.w[i], delta);
  return detail::from_words<T>(w);
}

/// Inclusive scan across the 32 lanes of a full warp: lane l gets x_0 op ... op x_l.
template <class T, class Op>
__device__ __forceinline__ T warp_inclusive_scan(T x, Op op) {
  const int lane = static_cast<int>(threadIdx.x & 31);
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const T y = shfl_up(x, d);
    if (lane >= d) x = op(y, x);
  }
  return x;
}

/// Reduction across the 32 lanes of a full warp, in lane order; the result is valid in lane 0.
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T x, Op op) {
#pragma unroll
  for (int d = 16; d >= 1; d >>= 1) {
    const T y = shfl_down(x, d);
    if (static_cast<int>(threadIdx.x & 31) + d < 32) x = op(x, y);
  }
  return x;
}

struct Sum {
  template <class T>
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return a + b; }
};

// ---------------------------------------------------------------------------------------------
// Block scan
// ---------------------------------------------------------------------------------------------

/// Exclusive scans over one value per thread or over a blocked arrangement (thread t holds items
/// t*N .. t*N+N-1), like cub::BlockScan's ExclusiveSum / ExclusiveScan.
template <class T, int Threads>
struct BlockScan {
  static_assert(Threads % 32 == 0 && Threads >= 32 && Threads <= 1024, "BlockScan: Threads");
  static constexpr int kWarps = Threads / 32;
  struct TempStorage {
    detail::RawArray<T, kWarps> warp_total;
  };
  TempStorage& temp;
  __device__ __forceinline__ explicit BlockScan(TempStorage& t) : temp(t) {}

  /// output = init op x_0 op ... op x_{t-1} (thread 0 gets init); aggregate = x_0 op ... op x_last
  /// (without init), in every thread.
  template <class Op>
  __device__ __forceinline__ void ExclusiveScan(T input, T& output, T init, Op op, T& aggregate) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const T incl = warp_inclusive_scan(input, op);
    T* totals = temp.warp_total.data();
    if (lane == 31) totals[warp] = incl;
    __syncthreads();
    T prefix = init;
    T agg = totals[0];
    for (int w = 0; w < kWarps; ++w) {
      if (w < warp) prefix = op(prefix, totals[w]);
      if (w > 0) agg = op(agg, totals[w]);
    }
    const T before = shfl_up(incl, 1);
    output = lane == 0 ? prefix : op(prefix, before);
    aggregate = agg;
    __syncthreads();
  }
  template <class Op>
  __device__ __forceinline__ void ExclusiveScan(T input, T& output, T init, Op op) {
    T aggregate;
    ExclusiveScan(input, output, init, op, aggregate);
  }
  __device__ __forceinline__ void ExclusiveSum(T input, T& output, T& aggregate) {
    ExclusiveScan(input, output, T(0), Sum{}, aggregate);
  }
  __device__ __forceinline__ void ExclusiveSum(T input, T& output) {
    T aggregate;
    ExclusiveScan(input, output, T(0), Sum{}, aggregate);
  }
  /// Blocked arrangement: output[k] = sum of every item before item k of this thread.
  template <int N>
  __device__ __forceinline__ void ExclusiveSum(const T (&input)[N], T (&output)[N], T& aggregate) {
    T mine = T(0);
#pragma unroll
    for (int k = 0; k < N; ++k) mine = mine + input[k];
    T run;
    ExclusiveSum(mine, run, aggregate);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      output[k] = run;
      run = run + input[k];
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Block reduce
// ---------------------------------------------------------------------------------------------

/// x_0 op x_1 op ... over the block's threads in thread order, like cub::BlockReduce::Reduce.
/// The result is valid in thread 0 only.
template <class T, int Threads>
struct BlockReduce {
  static_assert(Threads % 32 == 0 && Threads >= 32 && Threads <= 1024, "BlockReduce: Threads");
  static constexpr int kWarps = Threads / 32;
  struct TempStorage {
    detail::RawArray<T, kWarps> warp_total;
  };
  TempStorage& temp;
  __device__ __forceinline__ explicit BlockReduce(TempStorage& t) : temp(t) {}

  template <class Op>
  __device__ __forceinline__ T Reduce(T input, Op op) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const T w = warp_reduce(input, op);
    T* totals = temp.warp_total.data();
    if (lane == 0) totals[warp] = w;
    __syncthreads();
    T r = totals[0];
    if (threadIdx.x == 0)
      for (int i = 1; i < kWarps; ++i) r = op(r, totals[i]);
    __syncthreads();
    return r;
  }
};

// ---------------------------------------------------------------------------------------------
// Block radix sort
// ---------------------------------------------------------------------------------------------

/// Stable LSD radix sort of unsigned keys with values in a blocked arrangement (thread t holds
/// items t*Items .. t*Items+Items-1, in and out), like cub::BlockRadixSort::Sort over bits
/// [begin_bit, end_bit). Two bits per pass: the four digit counts of a thread travel packed in
/// one 64-bit word (16 bits each) through a single block scan.
template <class Key, int Threads, int Items, class Value>
struct BlockRadixSort {
  static constexpr int kTile = Threads * Items;
  static_assert(kTile < 65536, "BlockRadixSort: the packed digit counts hold 16 bits");
  using Scan = BlockScan<u64, Threads>;
  struct TempStorage {
    union {
      typename Scan::TempStorage scan;
      struct {
        detail::RawArray<Key, kTile> keys;
        detail::RawArray<Value, kTile> values;
      } exchange;
    } u;
  };
  TempStorage& temp;
  __device__ __forceinline__ explicit BlockRadixSort(TempStorage& t) : temp(t) {}

  __device__ __forceinline__ void Sort(Key (&keys)[Items], Value (&values)[Items], int begin_bit, int end_bit) {
    for (int bit = begin_bit; bit < end_bit; bit += 2) {
      const int width = end_bit - bit >= 2 ? 2 : 1;
      const unsigned int mask = (1u << width) - 1u;
      int digit[Items];
      u64 counts = 0;
#pragma unroll
      for (int k = 0; k < Items; ++k) {
        digit[k] = static_cast<int>((static_cast<u64>(keys[k]) >> bit) & mask);
        counts += u64(1) << (16 * digit[k]);
      }
      u64 before, total;
      Scan(temp.u.scan).ExclusiveSum(counts, before, total);  // ends with a barrier
      int next[4];
      int base = 0;
#pragma unroll
      for (int d = 0; d < 4; ++d) {
        next[d] = base + static_cast<int>((before >> (16 * d)) & 0xffff);
        base += static_cast<int>((total >> (16 * d)) & 0xffff);
      }
      Key* sk = temp.u.exchange.keys.data();
      Value* sv = temp.u.exchange.values.data();
#pragma unroll
      for (int k = 0; k < Items; ++k) {
        int slot = 0;
#pragma unroll
        for (int d = 0; d < 4; ++d)
          if (digit[k] == d) slot = next[d]++;
        sk[slot] = keys[k];
        sv[slot] = values[k];
      }
      __syncthreads();
#pragma unroll
      for (int k = 0; k < Items; ++k) {
        keys[k] = sk[threadIdx.x * Items + k];
        values[k] = sv[threadIdx.x * Items + k];
      }
      __syncthreads();
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Decoupled look-back tile state (Merrill & Garland, "Single-pass Parallel Prefix Scan with
// Decoupled Look-back"), for prefix sums of NON-NEGATIVE 64-bit counts below 2^61.
// ---------------------------------------------------------------------------------------------

/// One 64-bit word per tile: value << 2 | status, so a tile's value and status are published
/// and read together by a single (naturally atomic) 8-byte store and load. The buffer keeps the
/// 16-byte-per-tile layout of its size rule (tile_state_bytes); words[2 * tile] is used.
struct TileState {
  static constexpr u64 kInvalid = 0, kPartial = 1, kInclusive = 2;
  u64* words = nullptr;

  __device__ __forceinline__ void init(i64 tile) { words[2 * tile] = kInvalid; }
  __device__ __forceinline__ void set(i64 tile, u64 status, i64 value) {
    const u64 w = (static_cast<u64>(value) << 2) | status;
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(words + 2 * tile), "l"(w) : "memory");
  }
  __device__ __forceinline__ u64 get(i64 tile) const {
    u64 w;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(words + 2 * tile) : "memory");
    return w;
  }
  __device__ __forceinline__ void SetInclusive(i64 tile, i64 value) { set(tile, kInclusive, value); }
  __device__ __forceinline__ void SetPartial(i64 tile, i64 value) { set(tile, kPartial, value); }

  /// Called by the 32 lanes of one warp of tile `tile` (> 0): publishes the tile's aggregate,
  /// looks back over the predecessors' published values 32 tiles at a time until one holds an
  /// inclusive prefix, publishes the tile's inclusive prefix and returns its exclusive prefix
  /// (in every lane).
  __device__ __forceinline__ i64 look_back(i64 tile, i64 aggregate) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    if (lane == 0) SetPartial(tile, aggregate);
    i64 exclusive = 0;
    for (i64 top = tile - 1;; top -= 32) {
      const i64 t = top - lane;
      u64 w = kInclusive;  // before tile 0: an inclusive prefix of 0
      bool waiting;
      do {
        if (t >= 0) w = get(t);
        waiting = __any_sync(kFullMask, (w & 3) == kInvalid);
      } while (waiting);
      const unsigned int inclusive = __ballot_sync(kFullMask, (w & 3) == kInclusive);
      const int stop = inclusive ? __ffs(inclusive) - 1 : 31;  // the nearest inclusive lane
      i64 v = lane <= stop ? static_cast<i64>(w >> 2) : 0;
#pragma unroll
      for (int d = 16; d >= 1; d >>= 1) v += __shfl_xor_sync(kFullMask, v, d);
      exclusive += v;
      if (inclusive) break;
    }
    if (lane == 0) SetInclusive(tile, exclusive + aggregate);
    return exclusive;
  }
};
// Generated plans allocate tile states zeroed instead of launching an init kernel
// (LoweringContext::tile_state): every tile starts kInvalid only because that is 0.
static_assert(TileState::kInvalid == 0, "a zeroed tile state must read as kInvalid");

}  // namespace ranc::tpl
