// A file written in full or not at all: the bytes go to a temporary file beside the
// target, which commit() syncs and renames over it; an AtomicFile destroyed before
// committing (an error, an exception) removes its temporary file. Used by the kernel
// cache, the columnar writer and ahead-of-time packages.
#pragma once

#include <cstddef>
#include <string>

namespace ranc {

class AtomicFile {
 public:
  // Creates the temporary file; error() says why when that failed.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends n bytes; false (and error() set) on failure. Does nothing after a failure.
  bool write(const void* data, size_t n);
  // Syncs, closes and renames the file over the target. false (error() set) on failure.
  bool commit();
  // "" while all is well, else e.g. "write failed: No space left on device".
  const std::string& error() const { return error_; }

 private:
  bool fail(const char* what);
  std::string path_, tmp_, error_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace ranc
