// A stream-ordered device memory pool with accounting. Allocations come from a
// dedicated cudaMemPool_t whose release threshold is unlimited, so memory freed by
// one step is reused by the next without going back to the driver. Small blocks (up to
// kCachedBlockMax bytes, in size classes a quarter of a power of two apart) are also
// kept on the host side when freed and handed out again without a CUDA call: a plan
// step's allocation or free then costs no driver work, which the thin rounds of a
// recursion (some 20 allocations each) measured. All use is ordered on the pool's one
// stream, so a block freed by one step is safe to give to a later one. Running out of
// memory throws OutOfMemoryError naming what the memory was for.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ranc::rt {

struct MemoryStats {
  int64_t bytes_in_use = 0;  // requested bytes currently allocated
  int64_t peak_bytes = 0;    // maximum of bytes_in_use since creation or reset_peak()
  int64_t allocations = 0;   // number of allocate() calls that succeeded
};

// Fault injection (a test hook): the allocate() call `n` calls from now, of any pool
// (0 = the next one), fails as if the device were full: it throws OutOfMemoryError
// naming what the memory was for, with "injected allocation failure" in its detail.
// One failure per injection; a negative n cancels a pending one. Thread-safe.
void inject_allocation_failure(int64_t n);
bool allocation_failure_pending();
// allocate() calls of every pool in this process so far (successful or not), so a
// test can count the allocations of a run and inject a failure at each in turn.
int64_t allocation_calls();

// A size in bytes from text: "1073741824", "512M", "8G", "1.5GiB" (K, M, G, T are powers
// of 1024, optionally followed by B or iB, any case); nullopt when `text` is no size.
std::optional<int64_t> parse_byte_size(std::string_view text);

class DevicePool {
 public:
  // Needs a GPU (throws CudaError otherwise). All allocations and frees are ordered
  // on `stream`.
  DevicePool(int device, cudaStream_t stream);
  ~DevicePool();
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  // `bytes` of device memory, 256-byte aligned. Zero bytes gives a valid, distinct,
  // non-null pointer (a small real allocation). Throws OutOfMemoryError naming `what`.
  void* allocate(int64_t bytes, std::string_view what);
  // Frees memory from allocate(); nullptr is ignored. Stream-ordered.
  void free(void* p);
  // Frees, ignoring CUDA errors (for destructors and error paths).
  void free_noexcept(void* p) noexcept;
  // Size requested for p (0 when unknown).
  int64_t size_of(const void* p) const;

  // Allocations that would take the bytes in use past `bytes` fail as if the device were
  // full, with an OutOfMemoryError that names the limit (0: no limit but the device's).
  void set_limit(int64_t bytes) { limit_ = bytes; }
  int64_t limit() const { return limit_; }

  MemoryStats stats() const { return stats_; }
  void reset_peak() { stats_.peak_bytes = stats_.bytes_in_use; }
  cudaStream_t stream() const { return stream_; }
  // Returns unused reserved memory (and the cached small blocks) to the driver.
  void trim();
  // Grows the pool by `bytes` of physical memory ahead of use (an allocation freed at once:
  // the pool keeps freed memory), so that a first run's allocations are carved from it instead
  // of each mapping new memory. Best effort: capped at half the device's free memory and the
  // limit; nothing is reserved when that allocation fails.
  void reserve(int64_t bytes);

  static constexpr int64_t kCachedBlockMax = int64_t{4} << 20;
  static constexpr int64_t kCacheCapacity = int64_t{64} << 20;  // bytes of cached blocks at most
  // The size class of a small block: its bytes (> 0) rounded up to a quarter of a power of two.
  static int64_t class_bytes(int64_t bytes);

 private:
  void release_cache();

  int device_;
  cudaStream_t stream_;
  cudaMemPool_t pool_ = nullptr;
  std::unordered_map<const void*, int64_t> sizes_;
  std::unordered_map<int64_t, std::vector<void*>> cache_;  // free small blocks by class bytes
  int64_t cached_bytes_ = 0;
  MemoryStats stats_;
  int64_t limit_ = 0;
};

// An owning device buffer allocated from a DevicePool (move-only).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DevicePool& pool, int64_t bytes, std::string_view what)
      : pool_(&pool), ptr_(pool.allocate(bytes, what)), bytes_(bytes) {}
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : pool_(o.pool_), ptr_(o.ptr_), bytes_(o.bytes_) {
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      pool_ = o.pool_;
      ptr_ = o.ptr_;
      bytes_ = o.bytes_;
      o.ptr_ = nullptr;
      o.bytes_ = 0;
    }
    return *this;
  }
  void reset() noexcept {
    if (ptr_ && pool_) pool_->free_noexcept(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  void* get() const { return ptr_; }
  int64_t bytes() const { return bytes_; }
  // Gives up ownership: the memory is the caller's to free (DevicePool::free).
  void* release() noexcept {
    void* p = ptr_;
    ptr_ = nullptr;
    bytes_ = 0;
    return p;
  }

 private:
  DevicePool* pool_ = nullptr;
  void* ptr_ = nullptr;
  int64_t bytes_ = 0;
};

}  // namespace ranc::rt
