// Tuples packed into one 64-bit word for a loop's resident rounds (builtins.h,
// rt::ResidentRounds): the merge of the tuples they found into the full relation's columns.
#include <cub/device/device_merge.cuh>

#include "builtins.h"

namespace ranc::rt::builtins {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks > (1 << 20)) blocks = 1 << 20;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

// The word's unsigned order is the tuple's ascending order: signed values with their sign
// bit flipped, the first attribute in the high half.
__device__ __forceinline__ uint64_t pack(Packing p, const void* const* cols, int64_t i) {
  switch (p) {
    case Packing::I32:
      return static_cast<uint32_t>(static_cast<const int32_t*>(cols[0])[i]) ^ 0x80000000u;
    case Packing::I32x2:
      return (static_cast<uint64_t>(static_cast<uint32_t>(static_cast<const int32_t*>(cols[0])[i]) ^
                                    0x80000000u)
              << 32) |
             (static_cast<uint32_t>(static_cast<const int32_t*>(cols[1])[i]) ^ 0x80000000u);
    default:
      return static_cast<uint64_t>(static_cast<const long long*>(cols[0])[i]) ^
             0x8000000000000000ull;
  }
}

struct Columns {
  void* c[2];
};

__global__ void pack_kernel(Packing p, Columns in, int64_t n, uint64_t* out) {
  const void* cols[2] = {in.c[0], in.c[1]};
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = pack(p, cols, i);
}

__global__ void unpack_kernel(Packing p, const uint64_t* in, int64_t n, Columns out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t w = in[i];
    switch (p) {
      case Packing::I32:
        static_cast<int32_t*>(out.c[0])[i] = static_cast<int32_t>(static_cast<uint32_t>(w) ^ 0x80000000u);
        break;
      case Packing::I32x2:
        static_cast<int32_t*>(out.c[0])[i] =
            static_cast<int32_t>(static_cast<uint32_t>(w >> 32) ^ 0x80000000u);
        static_cast<int32_t*>(out.c[1])[i] = static_cast<int32_t>(static_cast<uint32_t>(w) ^ 0x80000000u);
        break;
      default:
        static_cast<long long*>(out.c[0])[i] = static_cast<long long>(w ^ 0x8000000000000000ull);
        break;
    }
  }
}

Columns columns(Packing p, void* const* cols) {
  Columns c{{cols[0], p == Packing::I32x2 ? cols[1] : nullptr}};
  return c;
}

size_t align(size_t b) { return (b + 255) & ~size_t{255}; }

}  // namespace

int packing_columns(Packing p) { return p == Packing::I32x2 ? 2 : 1; }

size_t merge_packed_temp_bytes(int64_t full_rows, int64_t added_rows) {
  size_t cub_bytes = 0;
  if (cub::DeviceMerge::MergeKeys(nullptr, cub_bytes, static_cast<const uint64_t*>(nullptr),
                                  full_rows, static_cast<const uint64_t*>(nullptr), added_rows,
                                  static_cast<uint64_t*>(nullptr)) != cudaSuccess)
    return 0;
  return align(sizeof(uint64_t) * static_cast<size_t>(full_rows)) +
         align(sizeof(uint64_t) * static_cast<size_t>(full_rows + added_rows)) + align(cub_bytes);
}

cudaError_t merge_packed(Packing p, void* const* full_cols, int64_t full_rows,
                         const uint64_t* added_sorted, int64_t added_rows, void* const* out_cols,
                         void* temp, size_t temp_bytes, cudaStream_t stream) {
  char* t = static_cast<char*>(temp);
  auto* full_words = reinterpret_cast<uint64_t*>(t);
  t += align(sizeof(uint64_t) * static_cast<size_t>(full_rows));
  auto* merged = reinterpret_cast<uint64_t*>(t);
  t += align(sizeof(uint64_t) * static_cast<size_t>(full_rows + added_rows));
  const size_t used = static_cast<size_t>(t - static_cast<char*>(temp));
  if (used > temp_bytes) return cudaErrorInvalidValue;
  size_t cub_bytes = temp_bytes - used;
  if (full_rows > 0) {
    pack_kernel<<<grid_for(full_rows), kThreads, 0, stream>>>(p, columns(p, full_cols), full_rows,
                                                               full_words);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  if (cudaError_t e = cub::DeviceMerge::MergeKeys(t, cub_bytes, static_cast<const uint64_t*>(full_words),
                                                  full_rows, added_sorted, added_rows, merged,
                                                  ::cuda::std::less<>{}, stream);
      e != cudaSuccess)
    return e;
  return unpack(p, merged, full_rows + added_rows, out_cols, stream);
}

cudaError_t unpack(Packing p, const uint64_t* words, int64_t n, void* const* out_cols,
                   cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  unpack_kernel<<<grid_for(n), kThreads, 0, stream>>>(p, words, n, columns(p, out_cols));
  return cudaGetLastError();
}

}  // namespace ranc::rt::builtins
