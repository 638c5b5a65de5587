// Pieces the readers share (csv.cpp, columnar.cpp): a file's bytes, mapped where
// possible, and a parallel loop over tasks. Internal to ranc_io.
#pragma once

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ranc/data/error.h"

namespace ranc::io_detail {

// UserError(Data) located at the file `path`.
[[noreturn]] inline void file_error(const std::string& path, std::string msg,
                                    std::string hint = {}) {
  throw UserError(
      Diagnostic{ErrorKind::Data, std::move(msg), SourceLoc{path, 0, 0}, std::move(hint)});
}

// A file's bytes: mapped read-only where possible, else (pipes, empty files, mmap
// failure) read into an 8-byte aligned buffer, so sections can be read in place.
class FileBytes {
 public:
  // `sequential`: the whole file will be read front to back (the text readers).
  explicit FileBytes(const std::string& path, bool sequential = false) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) file_error(path, fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      int e = errno;
      ::close(fd);
      file_error(path, fmt::format("cannot read '{}': {}", path, std::strerror(e)));
    }
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      file_error(path, fmt::format("cannot read '{}': it is a directory", path));
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
      void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        map_ = p;
        size_ = static_cast<size_t>(st.st_size);
        if (sequential) {
          ::madvise(p, size_, MADV_SEQUENTIAL);
          ::madvise(p, size_, MADV_WILLNEED);
        }
        ::close(fd);
        return;
      }
    }
    std::string bytes;
    char buf[1 << 16];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        int e = errno;
        ::close(fd);
        file_error(path, fmt::format("cannot read '{}': {}", path, std::strerror(e)));
      }
      if (n == 0) break;
      bytes.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    size_ = bytes.size();
    owned_.resize((bytes.size() + 7) / 8);
    if (!bytes.empty()) std::memcpy(owned_.data(), bytes.data(), bytes.size());
  }
  ~FileBytes() {
    if (map_) ::munmap(map_, size_);
  }
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  const uint8_t* data() const {
    return map_ ? static_cast<const uint8_t*>(map_)
                : reinterpret_cast<const uint8_t*>(owned_.data());
  }
  uint64_t size() const { return size_; }
  std::string_view view() const { return {reinterpret_cast<const char*>(data()), size_}; }
  // Asks the kernel to read [off, off + n) ahead (the sections a read needs).
  void will_need(uint64_t off, uint64_t n) const {
    if (!map_ || n == 0) return;
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t start = off / page * page;
    ::madvise(static_cast<char*>(map_) + start, static_cast<size_t>(off + n - start),
              MADV_WILLNEED);
  }

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
  std::vector<uint64_t> owned_;
};

// Runs fn(i) for i in [0, n) on up to `threads` threads (the calling thread alone
// when that is 1 and there is nothing to report). When `report` is set, the calling
// thread calls it about every 100 ms until all tasks are done. Every task runs; the
// exception of the lowest i that threw is rethrown afterwards, so which error is
// reported does not depend on timing.
template <typename Fn>
void parallel_for(size_t n, unsigned threads, Fn fn, const std::function<void()>& report = {}) {
  if (n == 0) return;
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const size_t workers = std::min<size_t>(std::max(threads, 1u), n);
  if (workers == 1 && !report) {
    work();
  } else {
    std::mutex m;
    std::condition_variable cv;
    size_t finished = 0;
    std::vector<std::thread> pool;
    for (size_t w = 0; w < workers; ++w)
      pool.emplace_back([&] {
        work();
        std::lock_guard<std::mutex> lock(m);
        ++finished;
        cv.notify_all();
      });
    {
      std::unique_lock<std::mutex> lock(m);
      while (finished < workers) {
        cv.wait_for(lock, std::chrono::milliseconds(100));
        if (report) {
          lock.unlock();
          report();
          lock.lock();
        }
      }
    }
    for (auto& t : pool) t.join();
  }
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace ranc::io_detail
