// The built-in device-wide primitives (see builtins.h), on CUB.
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <cstdlib>
#include <type_traits>

#include "builtins.h"

namespace ranc::rt::builtins {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks > (1 << 20)) blocks = 1 << 20;  // grid-stride loops cover the rest
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

// Order-preserving maps of each key type to an unsigned integer, and back.
template <SortKey K>
struct KeyBits;
template <>
struct KeyBits<SortKey::U8> {
  using Stored = uint8_t;
  using Bits = uint8_t;
  __device__ static Bits to(Stored x) { return x; }
  __device__ static Stored from(Bits b) { return b; }
};
template <>
struct KeyBits<SortKey::F32> {
  using Stored = uint32_t;
  using Bits = uint32_t;
  __device__ static Bits to(Stored x) { return (x & 0x80000000u) ? ~x : (x | 0x80000000u); }
  __device__ static Stored from(Bits b) { return (b & 0x80000000u) ? (b & 0x7fffffffu) : ~b; }
};
template <>
struct KeyBits<SortKey::F64> {
  using Stored = uint64_t;
  using Bits = uint64_t;
  __device__ static Bits to(Stored x) {
    return (x & 0x8000000000000000ull) ? ~x : (x | 0x8000000000000000ull);
  }
  __device__ static Stored from(Bits b) {
    return (b & 0x8000000000000000ull) ? (b & 0x7fffffffffffffffull) : ~b;
  }
};

template <SortKey K>
__global__ void encode_keys(const typename KeyBits<K>::Stored* in,
                            typename KeyBits<K>::Bits* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = KeyBits<K>::to(in[i]);
  }
}

template <SortKey K>
__global__ void decode_keys(typename KeyBits<K>::Bits* keys, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    keys[i] = KeyBits<K>::from(keys[i]);
  }
}

// CUB's radix sorts take their count as 32 bits here (every sort's rows are below 2^32:
// row ids are 32-bit, and Executor::exec(SortPairs) reports a larger sort as a SizeLimitError;
// a larger count is cudaErrorInvalidValue). CUB picks its offset type from the count's:
// a 64-bit count makes its onesweep tiles 384 x 17 items for 4-byte keys and values instead of
// 384 x 23, and the 2^28-row (u32, u32) pair sort took 8.55 ms against 7.47 ms on the H200
// (bench/RESULTS.md, session 41).
template <typename Bits>
cudaError_t radix_sort(bool descending, void* temp, size_t& temp_bytes, const Bits* keys_in,
                       Bits* keys_out, const uint32_t* values_in, uint32_t* values_out,
                       int64_t n64, cudaStream_t stream) {
  if (n64 > int64_t{UINT32_MAX}) return cudaErrorInvalidValue;
  const auto n = static_cast<uint32_t>(n64);  // a 32-bit count: see radix_sort
  if (descending) {
    return cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys_in, keys_out,
                                                     values_in, values_out, n, 0,
                                                     int(sizeof(Bits) * 8), stream);
  }
  return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in,
                                         values_out, n, 0, int(sizeof(Bits) * 8), stream);
}

template <SortKey K>
cudaError_t sort_typed(bool descending, const void* keys_in, void* keys_out,
                       const uint32_t* values_in, uint32_t* values_out, int64_t n,
                       void* key_scratch, void* temp, size_t temp_bytes, cudaStream_t stream) {
  using B = KeyBits<K>;
  auto* scratch = static_cast<typename B::Bits*>(key_scratch);
  auto* out = static_cast<typename B::Bits*>(keys_out);
  encode_keys<K><<<grid_for(n), kThreads, 0, stream>>>(
      static_cast<const typename B::Stored*>(keys_in), scratch, n);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  if (cudaError_t e = radix_sort<typename B::Bits>(descending, temp, temp_bytes, scratch, out,
                                                   values_in, values_out, n, stream);
      e != cudaSuccess) {
    return e;
  }
  decode_keys<K><<<grid_for(n), kThreads, 0, stream>>>(out, n);
  return cudaGetLastError();
}

template <typename T>
__global__ void gather_kernel(const T* src, const uint32_t* index, T* dst, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    dst[i] = src[index[i]];
  }
}

__global__ void iota_kernel(uint32_t* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = static_cast<uint32_t>(i);
  }
}

}  // namespace

int sort_key_bytes(SortKey k) {
  switch (k) {
    case SortKey::U8:
      return 1;
    case SortKey::F32:
      return 4;
    case SortKey::F64:
      return 8;
  }
  return 0;
}

size_t sort_pairs_temp_bytes(SortKey key, bool descending, int64_t n) {
  size_t bytes = 0;
  cudaError_t e = cudaSuccess;
  switch (sort_key_bytes(key)) {
    case 1:
      e = radix_sort<uint8_t>(descending, nullptr, bytes, nullptr, nullptr, nullptr, nullptr, n,
                              nullptr);
      break;
    case 4:
      e = radix_sort<uint32_t>(descending, nullptr, bytes, nullptr, nullptr, nullptr, nullptr, n,
                               nullptr);
      break;
    default:
      e = radix_sort<uint64_t>(descending, nullptr, bytes, nullptr, nullptr, nullptr, nullptr, n,
                               nullptr);
      break;
  }
  return e == cudaSuccess ? bytes : 0;
}

cudaError_t sort_pairs(SortKey key, bool descending, const void* keys_in, void* keys_out,
                       const uint32_t* values_in, uint32_t* values_out, int64_t n,
                       void* key_scratch, void* temp, size_t temp_bytes, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  switch (key) {
    case SortKey::U8:
      return sort_typed<SortKey::U8>(descending, keys_in, keys_out, values_in, values_out, n,
                                     key_scratch, temp, temp_bytes, stream);
    case SortKey::F32:
      return sort_typed<SortKey::F32>(descending, keys_in, keys_out, values_in, values_out, n,
                                      key_scratch, temp, temp_bytes, stream);
    case SortKey::F64:
      return sort_typed<SortKey::F64>(descending, keys_in, keys_out, values_in, values_out, n,
                                      key_scratch, temp, temp_bytes, stream);
  }
  return cudaErrorInvalidValue;
}

namespace {
// pairs: values_in/values_out carry uint32 values; else keys only. With temp == nullptr
// CUB only sizes its storage.
// Keys-only ascending sorts of unsigned order words on all their bits (the packed keys of a
// sort, a distinct, a recursion's candidates), of more keys than CUB's radix sort sorts in
// one tile and at most merge_sort_max() (2^18): a merge sort. Onesweep radix sort runs a
// histogram, a scan and a memset and a kernel for each of 8 (64-bit) passes, about 19
// stream operations whatever the size; a merge sort runs a block sort and a partition and
// merge kernel per doubling of sorted runs, about 7 for 2^15 keys. Equal words are equal
// keys, so the merge sort's instability changes nothing. Measured on the H100 through the
// recursion benchmark, whose rounds sort 10^3-10^6 candidates (best of three, execute):
// grid 60 x 60 closure 23.5-23.9 ms with radix sort only, 21.8 ms with merge sorts up to
// 2^16 keys and 19.8-20.2 ms up to 2^18-2^22; grid 100 x 100 86.5 -> 84.1 / 77.8-83.6 ms;
// the random graphs and the 3-ary tree within noise. The default is 2^18 (the GPU tests run
// the merge sort on both sides of it, GpuSortWords.MergeSortBounds); RANC_MERGE_SORT_MAX=N
// sets it (0: never).
constexpr int64_t kRadixSingleTile = 256 * 19;  // CUB's sm_90 single-tile policy
int64_t merge_sort_max() {
  static const int64_t max = [] {
    const char* v = std::getenv("RANC_MERGE_SORT_MAX");
    return v && *v ? std::atoll(v) : int64_t{1} << 18;
  }();
  return max;
}
template <typename Bits>
struct WordLess {
  __device__ bool operator()(Bits a, Bits b) const { return a < b; }
};

template <typename Bits, typename V>
cudaError_t sort_words_typed(bool descending, bool pairs, void* temp, size_t& temp_bytes,
                             int begin_bit, int end_bit, const void* keys_in, void* keys_out,
                             const V* values_in, V* values_out, int64_t n64,
                             cudaStream_t stream) {
  if (n64 > int64_t{UINT32_MAX}) return cudaErrorInvalidValue;
  const auto n = static_cast<uint32_t>(n64);  // a 32-bit count: see radix_sort
  const auto* kin = static_cast<const Bits*>(keys_in);
  auto* kout = static_cast<Bits*>(keys_out);
  if constexpr (std::is_unsigned_v<Bits>) {
    if (!pairs && !descending && begin_bit == 0 && end_bit == int(8 * sizeof(Bits)) &&
        n > kRadixSingleTile && n <= merge_sort_max()) {
      return cub::DeviceMergeSort::SortKeysCopy(temp, temp_bytes, kin, kout, n, WordLess<Bits>{},
                                                stream);
    }
  }
  using R = cub::DeviceRadixSort;
  if (!pairs) {
    return descending
               ? R::SortKeysDescending(temp, temp_bytes, kin, kout, n, begin_bit, end_bit, stream)
               : R::SortKeys(temp, temp_bytes, kin, kout, n, begin_bit, end_bit, stream);
  }
  return descending ? R::SortPairsDescending(temp, temp_bytes, kin, kout, values_in, values_out,
                                             n, begin_bit, end_bit, stream)
                    : R::SortPairs(temp, temp_bytes, kin, kout, values_in, values_out, n,
                                   begin_bit, end_bit, stream);
}

template <typename V>
cudaError_t sort_words_values(Word w, bool descending, bool pairs, void* temp, size_t& temp_bytes,
                              int begin_bit, int end_bit, const void* keys_in, void* keys_out,
                              const void* values_in, void* values_out, int64_t n,
                              cudaStream_t stream) {
  const auto* vin = static_cast<const V*>(values_in);
  auto* vout = static_cast<V*>(values_out);
  switch (w) {
    case Word::U32:
      return sort_words_typed<uint32_t, V>(descending, pairs, temp, temp_bytes, begin_bit, end_bit,
                                           keys_in, keys_out, vin, vout, n, stream);
    case Word::U64:
      return sort_words_typed<uint64_t, V>(descending, pairs, temp, temp_bytes, begin_bit, end_bit,
                                           keys_in, keys_out, vin, vout, n, stream);
    case Word::I32:
      return sort_words_typed<int32_t, V>(descending, pairs, temp, temp_bytes, begin_bit, end_bit,
                                          keys_in, keys_out, vin, vout, n, stream);
    case Word::I64:
      return sort_words_typed<int64_t, V>(descending, pairs, temp, temp_bytes, begin_bit, end_bit,
                                          keys_in, keys_out, vin, vout, n, stream);
  }
  return cudaErrorInvalidValue;
}

// Values of 4 bytes (row ids, 4-byte payloads) or 8 (an 8-byte payload column: no row ids
// and no gather after the sort).
cudaError_t sort_words_any(Word w, bool descending, bool pairs, void* temp, size_t& temp_bytes,
                           int begin_bit, int end_bit, const void* keys_in, void* keys_out,
                           const void* values_in, void* values_out, int64_t n,
                           cudaStream_t stream, int value_bytes) {
  if (value_bytes == 8)
    return sort_words_values<uint64_t>(w, descending, pairs, temp, temp_bytes, begin_bit, end_bit,
                                       keys_in, keys_out, values_in, values_out, n, stream);
  if (value_bytes == 4)
    return sort_words_values<uint32_t>(w, descending, pairs, temp, temp_bytes, begin_bit, end_bit,
                                       keys_in, keys_out, values_in, values_out, n, stream);
  return cudaErrorInvalidValue;
}

// out[0] |= keys[i * stride] ^ keys[0] over all i < m, and out[1] = 1 when a key read comes
// after one it should precede (a larger one ascending, a smaller one descending, in T's order:
// signed for a signed key column): a grid-stride pass, a warp and block OR, one atomicOr per
// block and word.
template <typename T>
__global__ void differing_bits_kernel(const T* keys, int64_t m, int64_t stride, bool descending,
                                      unsigned long long* out) {
  using Bits = std::make_unsigned_t<T>;
  const unsigned long long first = static_cast<Bits>(keys[0]);
  unsigned long long x = 0;
  bool disorder = false;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < m;
       i += int64_t(gridDim.x) * blockDim.x) {
    const T k = keys[i * stride];
    x |= static_cast<unsigned long long>(static_cast<Bits>(k)) ^ first;
    if (i + 1 < m) {
      const T next = keys[(i + 1) * stride];
      disorder |= descending ? k < next : next < k;
    }
  }
  for (int o = 16; o > 0; o /= 2) x |= __shfl_xor_sync(0xffffffffu, x, o);
  disorder = __any_sync(0xffffffffu, disorder);
  __shared__ unsigned long long warp_or[kThreads / 32];
  __shared__ bool warp_disorder[kThreads / 32];
  if (threadIdx.x % 32 == 0) {
    warp_or[threadIdx.x / 32] = x;
    warp_disorder[threadIdx.x / 32] = disorder;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long b = 0;
    bool d = false;
    for (int k = 0; k < kThreads / 32; ++k) {
      b |= warp_or[k];
      d = d || warp_disorder[k];
    }
    if (b != 0) atomicOr(&out[0], b);
    if (d) atomicOr(&out[1], 1ull);
  }
}
}  // namespace

int word_bits(Word w) {
  return w == Word::U32 || w == Word::I32 ? 32 : 64;
}

cudaError_t differing_bits(Word w, const void* keys, int64_t n, unsigned long long* out,
                           cudaStream_t stream, int64_t samples, bool descending) {
  if (cudaError_t e = cudaMemsetAsync(out, 0, 2 * sizeof *out, stream); e != cudaSuccess) return e;
  if (n <= 1) return cudaSuccess;
  // Every key, or about `samples` of them evenly spaced (the first included).
  const int64_t stride = samples > 0 && samples < n ? n / samples : 1;
  const int64_t m = (n + stride - 1) / stride;
  // A few blocks per SM: the pass is bandwidth-bound and the atomics stay few.
  int64_t blocks = (m + kThreads - 1) / kThreads;
  if (blocks > 1024) blocks = 1024;
  const auto grid = static_cast<unsigned>(blocks);
  // The raw bits: a signed key differs where its unsigned bits do; the order is the word's.
  auto launch = [&](auto* typed) {
    differing_bits_kernel<<<grid, kThreads, 0, stream>>>(typed, m, stride, descending, out);
  };
  switch (w) {
    case Word::U32: launch(static_cast<const uint32_t*>(keys)); break;
    case Word::I32: launch(static_cast<const int32_t*>(keys)); break;
    case Word::U64: launch(static_cast<const uint64_t*>(keys)); break;
    case Word::I64: launch(static_cast<const int64_t*>(keys)); break;
  }
  return cudaGetLastError();
}

size_t sort_words_temp_bytes(Word w, bool descending, bool pairs, int begin_bit, int end_bit,
                             int64_t n, int value_bytes) {
  size_t bytes = 0;
  cudaError_t e = sort_words_any(w, descending, pairs, nullptr, bytes, begin_bit, end_bit,
                                 nullptr, nullptr, nullptr, nullptr, n, nullptr, value_bytes);
  return e == cudaSuccess ? bytes : 0;
}

cudaError_t sort_words(Word w, bool descending, int begin_bit, int end_bit, const void* keys_in,
                       void* keys_out, const void* values_in, void* values_out, int64_t n,
                       void* temp, size_t temp_bytes, cudaStream_t stream, int value_bytes) {
  if (n <= 0) return cudaSuccess;
  return sort_words_any(w, descending, values_in != nullptr, temp, temp_bytes, begin_bit, end_bit,
                        keys_in, keys_out, values_in, values_out, n, stream, value_bytes);
}

size_t scan_int64_temp_bytes(int64_t n) {
  size_t bytes = 0;
  if (n <= 0) return 0;
  const int64_t* in = nullptr;
  int64_t* out = nullptr;
  if (cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, n) != cudaSuccess) return 0;
  return bytes;
}

cudaError_t scan_int64(const int64_t* in, int64_t* out, int64_t n, void* temp, size_t temp_bytes,
                       cudaStream_t stream) {
  if (cudaError_t e = cudaMemsetAsync(out, 0, sizeof(int64_t), stream); e != cudaSuccess) return e;
  if (n <= 0) return cudaSuccess;
  return cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out + 1, n, stream);
}

cudaError_t gather(const void* src, const uint32_t* index, void* dst, int elem_size, int64_t n,
                   cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  switch (elem_size) {
    case 1:
      gather_kernel<<<grid_for(n), kThreads, 0, stream>>>(
          static_cast<const uint8_t*>(src), index, static_cast<uint8_t*>(dst), n);
      break;
    case 4:
      gather_kernel<<<grid_for(n), kThreads, 0, stream>>>(
          static_cast<const uint32_t*>(src), index, static_cast<uint32_t*>(dst), n);
      break;
    case 8:
      gather_kernel<<<grid_for(n), kThreads, 0, stream>>>(
          static_cast<const uint64_t*>(src), index, static_cast<uint64_t*>(dst), n);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t iota(uint32_t* out, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  iota_kernel<<<grid_for(n), kThreads, 0, stream>>>(out, n);
  return cudaGetLastError();
}

}  // namespace ranc::rt::builtins
