// Host-to-device copies of columns at the host link's speed (issue 10).
//
// A copy from pageable memory (a std::vector) goes through the driver's own small
// staging buffer one piece at a time, with the CPU copy and the DMA serialised: a
// fraction of what the link does from pinned memory. The Uploader instead owns pinned
// staging buffers and several worker threads: each worker fills one of its buffers
// with the next piece of some column (a memcpy, or a recode of dictionary codes
// through a map, which then costs no separate pass), starts its DMA on the worker's
// own stream, and fills its other buffer meanwhile. Copies of all queued columns
// overlap; run() returns when every byte is on the device.
//
// Small transfers (below kDirectBytes in all) skip the staging: the pinned buffers
// are allocated on the first large upload and kept for the Uploader's lifetime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "ranc/data/host_relation.h"

namespace ranc::rt {

class Uploader {
 public:
  static constexpr size_t kDirectBytes = size_t{1} << 20;

  // threads = 0: up to 16, at most the hardware threads. piece_bytes: the staging
  // buffer size (two per thread).
  explicit Uploader(unsigned threads = 0, size_t piece_bytes = size_t{8} << 20);
  ~Uploader();
  Uploader(const Uploader&) = delete;
  Uploader& operator=(const Uploader&) = delete;

  // Queues a copy of `bytes` from host `src` to device `dst`. With `map`, src and dst
  // are int32 codes and dst[i] = map[src[i]] (map has map_size entries; a code outside
  // it is an InternalError). `src` and `map` must stay valid until run() returns.
  void add(void* dst, const void* src, size_t bytes, const int32_t* map = nullptr,
           size_t map_size = 0);
  // Queues a whole column; a string column whose dictionary is not `dict` (a superset
  // of it) has its codes recoded into `dict` on the way. `col` must stay valid until
  // run() returns.
  void add_column(void* dst, const Column& col, const Dictionary* dict);
  // Performs every queued copy; returns when all are complete on the device (`stream`
  // is where the small ones go; the rest is ordered before return by synchronising).
  // Throws CudaError (or InternalError for a bad code) after all workers stopped.
  void run(cudaStream_t stream);

  size_t queued_bytes() const { return queued_bytes_; }
  // Creates the worker streams and allocates the pinned staging buffers now (run()
  // does it on first use), e.g. on another thread while the inputs are read.
  void prepare() { ensure_staging(); }

 private:
  struct Copy {
    void* dst;
    const void* src;
    size_t bytes;
    const int32_t* map;
    size_t map_size;
  };
  struct Slot {
    void* pinned = nullptr;
    cudaEvent_t done = nullptr;
  };
  void ensure_staging();
  void run_direct(cudaStream_t stream);

  unsigned threads_;
  size_t piece_bytes_;
  std::vector<Copy> copies_;
  std::vector<std::vector<int32_t>> maps_;  // add_column's recode maps, until run()
  size_t queued_bytes_ = 0;
  std::vector<cudaStream_t> streams_;  // one per worker
  std::vector<Slot> slots_;            // two per worker
};

}  // namespace ranc::rt
