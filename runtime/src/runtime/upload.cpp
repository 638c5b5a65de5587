// The staged uploader (see ranc/runtime/upload.h).
#include "ranc/runtime/upload.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "ranc/runtime/check.h"
#include "ranc/runtime/dictionary_params.h"

namespace ranc::rt {

Uploader::Uploader(unsigned threads, size_t piece_bytes) {
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  threads_ = threads ? threads : std::min(16u, hw);
  // Whole int32 codes per piece, so a recoded piece never splits a code.
  piece_bytes_ = std::max<size_t>(piece_bytes & ~size_t{3}, 4096);
}

Uploader::~Uploader() {
  // Destructors do not throw: release what was acquired, ignoring errors.
  for (auto& s : slots_) {
    if (s.done) (void)cudaEventDestroy(s.done);
    if (s.pinned) (void)cudaFreeHost(s.pinned);
  }
  for (auto s : streams_)
    if (s) (void)cudaStreamDestroy(s);
}

void Uploader::add(void* dst, const void* src, size_t bytes, const int32_t* map,
                   size_t map_size) {
  if (bytes == 0) return;
  internal_check(!map || bytes % 4 == 0, "Uploader::add: recoded bytes are not whole codes");
  copies_.push_back({dst, src, bytes, map, map_size});
  queued_bytes_ += bytes;
}

void Uploader::add_column(void* dst, const Column& col, const Dictionary* dict) {
  const void* src = col.raw();  // finishes pending strings first
  if (col.type() == Type::String && col.dictionary() && dict &&
      col.dictionary()->size() != dict->size()) {
    const auto& map = maps_.emplace_back(recode_map(*col.dictionary(), *dict));
    add(dst, src, col.bytes(), map.data(), map.size());
  } else {
    add(dst, src, col.bytes());
  }
}

void Uploader::ensure_staging() {
  if (!slots_.empty()) return;
  streams_.assign(threads_, nullptr);
  for (auto& s : streams_) RANC_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  slots_.assign(size_t{2} * threads_, Slot{});
  for (auto& s : slots_) {
    RANC_CUDA_CHECK(cudaHostAlloc(&s.pinned, piece_bytes_, cudaHostAllocDefault));
    RANC_CUDA_CHECK(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming));
  }
}

namespace {

void recode(int32_t* dst, const int32_t* src, size_t n, const int32_t* map, size_t map_size) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t c = static_cast<uint32_t>(src[i]);
    if (c >= map_size)
      throw InternalError(fmt::format("upload: string code {} outside its dictionary of {}",
                                      src[i], map_size));
    dst[i] = map[c];
  }
}

}  // namespace

void Uploader::run_direct(cudaStream_t stream) {
  // Few bytes: the staging would cost more than it saves. Recoded copies need a
  // host buffer that lives until the copy is done.
  std::vector<std::vector<int32_t>> recoded;
  for (const Copy& c : copies_) {
    const void* src = c.src;
    if (c.map) {
      auto& v = recoded.emplace_back(c.bytes / 4);
      recode(v.data(), static_cast<const int32_t*>(c.src), v.size(), c.map, c.map_size);
      src = v.data();
    }
    RANC_CUDA_CHECK(cudaMemcpyAsync(c.dst, src, c.bytes, cudaMemcpyHostToDevice, stream));
  }
  RANC_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void Uploader::run(cudaStream_t stream) {
  struct Clear {
    Uploader& u;
    ~Clear() {
      u.copies_.clear();
      u.maps_.clear();
      u.queued_bytes_ = 0;
    }
  } clear{*this};
  if (copies_.empty()) return;
  if (queued_bytes_ < kDirectBytes) return run_direct(stream);
  ensure_staging();
  // Work was queued on `stream` before (allocations, earlier kernels): the workers'
  // streams wait for it.
  cudaEvent_t ready = nullptr;
  RANC_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  struct EventGuard {
    cudaEvent_t e;
    ~EventGuard() { (void)cudaEventDestroy(e); }
  } guard{ready};
  RANC_CUDA_CHECK(cudaEventRecord(ready, stream));

  // Pieces: (copy, offset), in queue order.
  std::vector<std::pair<size_t, size_t>> pieces;
  for (size_t i = 0; i < copies_.size(); ++i)
    for (size_t off = 0; off < copies_[i].bytes; off += piece_bytes_) pieces.push_back({i, off});

  int device = 0;
  RANC_CUDA_CHECK(cudaGetDevice(&device));
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  std::mutex m;
  auto worker = [&](unsigned t) {
    try {
      RANC_CUDA_CHECK(cudaSetDevice(device));
      cudaStream_t s = streams_[t];
      RANC_CUDA_CHECK(cudaStreamWaitEvent(s, ready, 0));
      for (unsigned k = 0;; ++k) {
        size_t p = next.fetch_add(1);
        if (p >= pieces.size() || failed.load()) break;
        const Copy& c = copies_[pieces[p].first];
        const size_t off = pieces[p].second;
        const size_t n = std::min(piece_bytes_, c.bytes - off);
        Slot& slot = slots_[2 * t + (k & 1)];
        RANC_CUDA_CHECK(cudaEventSynchronize(slot.done));  // its last DMA is done
        const char* src = static_cast<const char*>(c.src) + off;
        if (c.map)
          recode(static_cast<int32_t*>(slot.pinned), reinterpret_cast<const int32_t*>(src), n / 4,
                 c.map, c.map_size);
        else
          std::memcpy(slot.pinned, src, n);
        RANC_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(c.dst) + off, slot.pinned, n,
                                        cudaMemcpyHostToDevice, s));
        RANC_CUDA_CHECK(cudaEventRecord(slot.done, s));
      }
      RANC_CUDA_CHECK(cudaStreamSynchronize(s));
    } catch (...) {
      failed = true;
      std::lock_guard<std::mutex> lock(m);
      if (!first) first = std::current_exception();
    }
  };
  const unsigned n = static_cast<unsigned>(std::min<size_t>(threads_, pieces.size()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (auto& th : pool) th.join();
  if (first) {
    // Leave no DMA running from a staging buffer.
    for (auto s : streams_) (void)cudaStreamSynchronize(s);
    std::rethrow_exception(first);
  }
}

}  // namespace ranc::rt
