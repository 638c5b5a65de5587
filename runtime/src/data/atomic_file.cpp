#include "ranc/data/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace ranc {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  const std::filesystem::path target(path_);
  const std::filesystem::path dir =
      target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  tmp_ = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  fd_ = ::mkstemp(tmp_.data());
  if (fd_ < 0) {
    fail("create");
    tmp_.clear();
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
}

bool AtomicFile::fail(const char* what) {
  if (error_.empty()) error_ = std::string(what) + " failed: " + std::strerror(errno);
  return false;
}

bool AtomicFile::write(const void* data, size_t n) {
  if (!error_.empty() || fd_ < 0) return false;
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return fail("write");
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool AtomicFile::commit() {
  if (!error_.empty() || fd_ < 0) return false;
  // mkstemp creates 0600; give the file the usual permissions.
  if (::fchmod(fd_, 0644) != 0) return fail("chmod");
  if (::fsync(fd_) != 0) return fail("fsync");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return fail("close");
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) return fail("rename");
  committed_ = true;
  return true;
}

}  // namespace ranc
