// The stream-ordered device pool.
#include "ranc/runtime/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>

#include "ranc/runtime/check.h"
#include "ranc/runtime/errors.h"

namespace ranc::rt {
namespace {
// Every allocation asks CUDA for at least this much, so zero-byte requests get a
// real, distinct pointer.
constexpr int64_t kMinAllocation = 256;

std::atomic<int64_t> g_calls{0};
std::atomic<int64_t> g_fail_at{-1};  // the call number that fails, -1 = none

// True when this call (number `call`) is the injected failure; consumes it.
bool injected_failure(int64_t call) {
  int64_t at = g_fail_at.load(std::memory_order_relaxed);
  return at >= 0 && call >= at && g_fail_at.compare_exchange_strong(at, -1);
}
}  // namespace

void inject_allocation_failure(int64_t n) {
  g_fail_at.store(n < 0 ? -1 : g_calls.load() + n);
}
bool allocation_failure_pending() { return g_fail_at.load() >= 0; }
int64_t allocation_calls() { return g_calls.load(); }

std::optional<int64_t> parse_byte_size(std::string_view text) {
  std::string t(text);
  if (t.empty() || t.size() > 40) return std::nullopt;
  size_t end = 0;
  double value = 0;
  try {
    value = std::stod(t, &end);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!(value >= 0) || !std::isdigit(static_cast<unsigned char>(t[0]))) return std::nullopt;
  std::string unit = t.substr(end);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "IB") unit.resize(unit.size() - 2);
  else if (!unit.empty() && unit.back() == 'B' && unit.size() <= 2) unit.pop_back();
  double scale = 1;
  if (unit == "K") scale = 1024.0;
  else if (unit == "M") scale = 1024.0 * 1024;
  else if (unit == "G") scale = 1024.0 * 1024 * 1024;
  else if (unit == "T") scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty()) return std::nullopt;
  const double bytes = value * scale;
  if (bytes >= 9.2e18) return std::nullopt;
  return static_cast<int64_t>(bytes);
}

DevicePool::DevicePool(int device, cudaStream_t stream) : device_(device), stream_(stream) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  RANC_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
  uint64_t threshold = UINT64_MAX;
  RANC_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold));
}

DevicePool::~DevicePool() {
  for (auto& [p, size] : sizes_) (void)cudaFreeAsync(const_cast<void*>(p), stream_);
  for (auto& [bytes, blocks] : cache_)
    for (void* p : blocks) (void)cudaFreeAsync(p, stream_);
  (void)cudaStreamSynchronize(stream_);
  if (pool_) (void)cudaMemPoolDestroy(pool_);
  (void)cudaGetLastError();
}

void DevicePool::reserve(int64_t bytes) {
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  bytes = std::min<int64_t>(bytes, static_cast<int64_t>(free_bytes / 2));
  if (limit_ > 0) bytes = std::min(bytes, limit_);
  if (bytes <= 0) return;
  void* p = nullptr;
  if (cudaMallocFromPoolAsync(&p, static_cast<size_t>(bytes), pool_, stream_) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  RANC_CUDA_CHECK(cudaFreeAsync(p, stream_));
  RANC_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void* DevicePool::allocate(int64_t bytes, std::string_view what) {
  if (bytes < 0) {
    throw OutOfMemoryError(std::string(what), bytes, stats_.bytes_in_use, stats_.peak_bytes,
                           "negative size (size computation overflowed?)");
  }
  if (injected_failure(g_calls.fetch_add(1))) {
    throw OutOfMemoryError(std::string(what), bytes, stats_.bytes_in_use, stats_.peak_bytes,
                           "injected allocation failure (test hook)");
  }
  if (limit_ > 0 && bytes > limit_ - stats_.bytes_in_use) {
    throw OutOfMemoryError(std::string(what), bytes, stats_.bytes_in_use, stats_.peak_bytes,
                           fmt::format("over the memory limit of {}", format_bytes(limit_)));
  }
  int64_t ask = bytes < kMinAllocation ? kMinAllocation : bytes;
  void* p = nullptr;
  cudaError_t err = cudaSuccess;
  if (ask <= kCachedBlockMax) {
    ask = class_bytes(ask);
    auto it = cache_.find(ask);
    if (it != cache_.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      cached_bytes_ -= ask;
    }
  }
  if (!p) err = cudaMallocFromPoolAsync(&p, static_cast<size_t>(ask), pool_, stream_);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    // Frees enqueued on the stream may not have completed, and cached blocks may be what
    // is missing: give those back, wait and retry once.
    release_cache();
    RANC_CUDA_CHECK(cudaStreamSynchronize(stream_));
    err = cudaMallocFromPoolAsync(&p, static_cast<size_t>(ask), pool_, stream_);
  }
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    size_t free_bytes = 0, total_bytes = 0;
    std::string detail;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      detail =
          fmt::format("device has {} free of {}", format_bytes(static_cast<int64_t>(free_bytes)),
                      format_bytes(static_cast<int64_t>(total_bytes)));
    }
    (void)cudaGetLastError();
    throw OutOfMemoryError(std::string(what), bytes, stats_.bytes_in_use, stats_.peak_bytes,
                           detail);
  }
  RANC_CUDA_CHECK(err);
  sizes_[p] = bytes;
  stats_.bytes_in_use += bytes;
  if (stats_.bytes_in_use > stats_.peak_bytes) stats_.peak_bytes = stats_.bytes_in_use;
  ++stats_.allocations;
  return p;
}

int64_t DevicePool::class_bytes(int64_t bytes) {
  // 2^k, 1.25 * 2^k, 1.5 * 2^k, 1.75 * 2^k: at most a quarter wasted.
  const int k = 63 - __builtin_clzll(static_cast<unsigned long long>(bytes));
  const int64_t base = int64_t{1} << k;
  if (k < 2) return bytes == base ? base : 2 * base;
  const int64_t step = base >> 2;
  return base + (bytes - base + step - 1) / step * step;
}

void DevicePool::release_cache() {
  for (auto& [bytes, blocks] : cache_) {
    for (void* p : blocks)
      if (cudaFreeAsync(p, stream_) != cudaSuccess) (void)cudaGetLastError();
    blocks.clear();
  }
  cached_bytes_ = 0;
}

void DevicePool::free(void* p) {
  if (!p) return;
  auto it = sizes_.find(p);
  internal_check(it != sizes_.end(), "DevicePool::free of a pointer it did not allocate");
  const int64_t bytes = it->second;
  stats_.bytes_in_use -= bytes;
  sizes_.erase(it);
  const int64_t ask = bytes < kMinAllocation ? kMinAllocation : bytes;
  if (ask <= kCachedBlockMax) {
    const int64_t cls = class_bytes(ask);
    if (cached_bytes_ + cls <= kCacheCapacity) {
      cache_[cls].push_back(p);
      cached_bytes_ += cls;
      return;
    }
  }
  RANC_CUDA_CHECK(cudaFreeAsync(p, stream_));
}

void DevicePool::free_noexcept(void* p) noexcept {
  try {
    free(p);
  } catch (...) {
    (void)cudaGetLastError();
  }
}

int64_t DevicePool::size_of(const void* p) const {
  auto it = sizes_.find(p);
  return it == sizes_.end() ? 0 : it->second;
}

void DevicePool::trim() {
  release_cache();
  RANC_CUDA_CHECK(cudaStreamSynchronize(stream_));
  RANC_CUDA_CHECK(cudaMemPoolTrimTo(pool_, 0));
}

}  // namespace ranc::rt
