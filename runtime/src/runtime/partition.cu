// Radix partition of key words that moves several value arrays in one pass per digit
// (builtins.h, partition_columns): the hash join's partitions (paper 004's GFTR) with every
// carried column at once, where a CUB sort per column re-reads and re-writes the keys each
// time.
//
// An LSD radix sort on bits [0, bits) in passes of at most 8 bits, each pass stable:
//   1. digit_counts: per tile of kTile keys, the count of each of the pass's 2^b digits,
//      stored digit-major (counts[d * tiles + tile]);
//   2. an exclusive scan of the counts (cub::DeviceScan): counts[d * tiles + tile] becomes
//      the first output row of the tile's keys with digit d (all keys of smaller digits,
//      then those of digit d in earlier tiles);
//   3. scatter: a tile loads its keys warp-striped (coalesced), ranks them stably in that
//      order (cub::BlockRadixRankMatch, whose ranks follow the warp-striped order), puts them
//      in shared memory in rank order and writes them from there (consecutive threads write
//      consecutive rows of a digit's run); then each value array the same way through the
//      same ranks.
// Passes alternate between a temporary copy and the outputs so that the last pass writes
// the outputs; the inputs are only read. Rows within a tile and tiles within a digit keep
// their order, so each pass, and the partition, is stable.
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_rank.cuh>
#include <cub/device/device_scan.cuh>

#include "builtins.h"

namespace ranc::rt::builtins {
namespace {

constexpr int kPartThreads = 512;
constexpr int kPartItems = 8;
constexpr int kTile = kPartThreads * kPartItems;
constexpr int kRadix = 8;  // the most bits a pass partitions on
constexpr int kDigits = 1 << kRadix;

// The pass's digit of a key: bits [shift, shift + log2(mask + 1)). (cub's digit extractor
// interface: BlockRadixRankMatch calls Digit.)
template <typename KeyT>
struct DigitOf {
  uint32_t shift, mask;
  __device__ __forceinline__ uint32_t Digit(KeyT k) const { return static_cast<uint32_t>(k >> shift) & mask; }
};

// Pass step 1: counts[d * tiles + tile] = keys of the tile with digit d, d < 2^b.
template <typename KeyT>
__global__ void __launch_bounds__(kPartThreads) digit_counts(const KeyT* keys, int64_t n, DigitOf<KeyT> dig,
                                                             int digits, int64_t tiles, uint32_t* counts) {
  __shared__ uint32_t hist[kDigits];
  for (int d = threadIdx.x; d < kDigits; d += kPartThreads) hist[d] = 0;
  __syncthreads();
  const int64_t base = static_cast<int64_t>(blockIdx.x) * kTile;
#pragma unroll
  for (int k = 0; k < kPartItems; ++k) {
    const int64_t i = base + k * kPartThreads + threadIdx.x;
    if (i < n) atomicAdd(&hist[dig.Digit(keys[i])], 1u);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < digits; d += kPartThreads)
    counts[static_cast<int64_t>(d) * tiles + blockIdx.x] = hist[d];
}

template <typename KeyT>
struct ScatterStorage {
  using Rank = cub::BlockRadixRankMatch<kPartThreads, kRadix, false>;
  union {
    typename Rank::TempStorage rank;
    KeyT keys[kTile];
    uint32_t values[2][kTile];
  } u;
  uint32_t start[kDigits];  // the tile's first rank of each digit
  int64_t out[kDigits];     // the output row of the tile's first key of each digit
};

// Pass step 3. `offsets` are the scanned counts; values_in / values_out: nv arrays each.
template <typename KeyT>
__global__ void __launch_bounds__(kPartThreads) scatter(const KeyT* keys_in, KeyT* keys_out, PartitionValues vin,
                                                        PartitionValues vout, int nv, int64_t n, DigitOf<KeyT> dig,
                                                        int64_t tiles, const uint32_t* offsets) {
  using S = ScatterStorage<KeyT>;
  __shared__ S temp;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * kTile;
  const int valid = static_cast<int>(n - base < kTile ? n - base : kTile);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Item k of this thread is tile row warp * 32 * kPartItems + k * 32 + lane (warp-striped).
  const int first = warp * 32 * kPartItems + lane;
  KeyT key[kPartItems];
#pragma unroll
  for (int k = 0; k < kPartItems; ++k) {
    const int r = first + k * 32;
    // Rows past the end get the largest digit: they rank after every real row.
    key[k] = r < valid ? keys_in[base + r] : ~KeyT(0);
  }
  int rank[kPartItems];
  int prefix[S::Rank::BINS_TRACKED_PER_THREAD];
  typename S::Rank ranker(temp.u.rank);
  ranker.RankKeys(key, rank, dig, prefix);
  if (threadIdx.x < kDigits) {
    temp.start[threadIdx.x] = static_cast<uint32_t>(prefix[0]);
    temp.out[threadIdx.x] = threadIdx.x <= dig.mask
                                ? static_cast<int64_t>(offsets[static_cast<int64_t>(threadIdx.x) * tiles + blockIdx.x])
                                : 0;
  }
  __syncthreads();  // the ranking's storage is reused below
#pragma unroll
  for (int k = 0; k < kPartItems; ++k) temp.u.keys[rank[k]] = key[k];
  __syncthreads();
  // Rows in rank order, a thread every kPartThreads: row p of the tile goes to out[d] + p - start[d]
  // (n < 2^32: 32-bit rows; kNone marks a row past the end).
  constexpr uint32_t kNone = 0xffffffffu;
  uint32_t dest[kPartItems];
#pragma unroll
  for (int k = 0; k < kPartItems; ++k) {
    const int p = k * kPartThreads + threadIdx.x;
    dest[k] = kNone;
    if (p < valid) {
      const KeyT x = temp.u.keys[p];
      const uint32_t d = dig.Digit(x);
      dest[k] = static_cast<uint32_t>(temp.out[d] + (p - static_cast<int64_t>(temp.start[d])));
      keys_out[dest[k]] = x;
    }
  }
  // The value arrays two at a time: both loads in flight together, half the barriers.
  for (int v = 0; v < nv; v += 2) {
    const int m = nv - v < 2 ? nv - v : 2;
    uint32_t val[2][kPartItems];
#pragma unroll
    for (int a = 0; a < 2; ++a)
#pragma unroll
      for (int k = 0; k < kPartItems; ++k) {
        const int r = first + k * 32;
        val[a][k] = a < m && r < valid ? vin.p[v + a][base + r] : 0u;
      }
    __syncthreads();  // the keys (or the previous arrays) have been read from shared memory
#pragma unroll
    for (int a = 0; a < 2; ++a)
#pragma unroll
      for (int k = 0; k < kPartItems; ++k)
        if (a < m && first + k * 32 < valid) temp.u.values[a][rank[k]] = val[a][k];
    __syncthreads();
#pragma unroll
    for (int a = 0; a < 2; ++a)
#pragma unroll
      for (int k = 0; k < kPartItems; ++k)
        if (a < m && dest[k] != kNone) vout.p[v + a][dest[k]] = temp.u.values[a][k * kPartThreads + threadIdx.x];
  }
}

int passes_for(int bits) { return (bits + kRadix - 1) / kRadix; }

template <typename KeyT>
size_t temp_layout(int64_t n, int nv, int bits, size_t* scan_bytes, size_t* counts_at, size_t* scan_at) {
  const int passes = passes_for(bits);
  const int64_t tiles = (n + kTile - 1) / kTile;
  auto align = [](size_t x) { return (x + 255) / 256 * 256; };
  size_t at = 0;
  if (passes > 1) at = align(static_cast<size_t>(n) * sizeof(KeyT)) + static_cast<size_t>(nv) * align(static_cast<size_t>(n) * 4);
  *counts_at = at;
  const int64_t entries = tiles * kDigits;
  at += align(static_cast<size_t>(entries) * 4);
  *scan_at = at;
  *scan_bytes = 0;
  const uint32_t* in = nullptr;
  uint32_t* out = nullptr;
  if (cub::DeviceScan::ExclusiveSum(nullptr, *scan_bytes, in, out, entries) != cudaSuccess) return 0;
  return at + *scan_bytes;
}

template <typename KeyT>
cudaError_t partition_typed(int bits, const void* keys_in_v, void* keys_out_v, const uint32_t* const* values_in,
                            uint32_t* const* values_out, int nv, int64_t n, void* temp, size_t temp_bytes,
                            cudaStream_t stream) {
  size_t scan_bytes = 0, counts_at = 0, scan_at = 0;
  const size_t need = temp_layout<KeyT>(n, nv, bits, &scan_bytes, &counts_at, &scan_at);
  if (need == 0 || temp_bytes < need) return cudaErrorInvalidValue;
  const int passes = passes_for(bits);
  const int64_t tiles = (n + kTile - 1) / kTile;
  auto* bytes = static_cast<unsigned char*>(temp);
  auto align = [](size_t x) { return (x + 255) / 256 * 256; };
  // The temporary copy of keys and values (two passes or more).
  auto* tkeys = reinterpret_cast<KeyT*>(bytes);
  PartitionValues tvals{}, in{}, out{};
  for (int v = 0; v < nv; ++v) {
    tvals.p[v] = reinterpret_cast<uint32_t*>(bytes + align(static_cast<size_t>(n) * sizeof(KeyT)) +
                                             static_cast<size_t>(v) * align(static_cast<size_t>(n) * 4));
    in.p[v] = const_cast<uint32_t*>(values_in[v]);
    out.p[v] = values_out[v];
  }
  auto* counts = reinterpret_cast<uint32_t*>(bytes + counts_at);
  void* scan_temp = bytes + scan_at;
  const auto* src_keys = static_cast<const KeyT*>(keys_in_v);
  PartitionValues src = in;
  // Passes of nearly equal width: 16 bits as 8 + 8, 12 as 6 + 6.
  int shift = 0;
  for (int pass = 0; pass < passes; ++pass) {
    const int b = (bits - shift) / (passes - pass);
    const DigitOf<KeyT> dig{static_cast<uint32_t>(shift), (1u << b) - 1u};
    // The last pass writes the outputs, the one before it the temporary copy, and so on back.
    const bool to_out = (passes - 1 - pass) % 2 == 0;
    KeyT* dst_keys = to_out ? static_cast<KeyT*>(keys_out_v) : tkeys;
    const PartitionValues dst = to_out ? out : tvals;
    digit_counts<KeyT><<<static_cast<unsigned>(tiles), kPartThreads, 0, stream>>>(src_keys, n, dig, 1 << b, tiles,
                                                                                   counts);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    if (cudaError_t e = cub::DeviceScan::ExclusiveSum(scan_temp, scan_bytes, counts, counts,
                                                      tiles * (int64_t{1} << b), stream);
        e != cudaSuccess)
      return e;
    scatter<KeyT><<<static_cast<unsigned>(tiles), kPartThreads, 0, stream>>>(src_keys, dst_keys, src, dst, nv, n,
                                                                             dig, tiles, counts);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    src_keys = dst_keys;
    src = dst;
    shift += b;
  }
  return cudaSuccess;
}

}  // namespace

size_t partition_columns_temp_bytes(Word w, int bits, int nv, int64_t n) {
  if (n <= 0 || bits <= 0) return 0;
  size_t a = 0, b = 0, c = 0;
  return word_bits(w) == 64 ? temp_layout<unsigned long long>(n, nv, bits, &a, &b, &c)
                            : temp_layout<unsigned int>(n, nv, bits, &a, &b, &c);
}

cudaError_t partition_columns(Word w, int bits, const void* keys_in, void* keys_out,
                              const uint32_t* const* values_in, uint32_t* const* values_out, int nv,
                              int64_t n, void* temp, size_t temp_bytes, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (bits <= 0 || bits > word_bits(w) || nv < 0 || nv > kPartitionMaxValues || n > int64_t{UINT32_MAX})
    return cudaErrorInvalidValue;
  return word_bits(w) == 64
             ? partition_typed<unsigned long long>(bits, keys_in, keys_out, values_in, values_out, nv, n, temp,
                                                   temp_bytes, stream)
             : partition_typed<unsigned int>(bits, keys_in, keys_out, values_in, values_out, nv, n, temp,
                                             temp_bytes, stream);
}

}  // namespace ranc::rt::builtins
