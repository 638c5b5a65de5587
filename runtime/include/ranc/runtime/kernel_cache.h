// The kernel cache: compiled CUBIN kept in memory and in a directory on disk.
//
// Key: SHA-256 over the source, the NVRTC options (without --pch), the NVRTC
// version, the target architecture, the template bundle hash and the entry format
// version. Directory: env RANC_CACHE_DIR when set and non-empty, else
// $XDG_CACHE_HOME/ranc, else ~/.cache/ranc. RANC_CACHE=off (or 0, false, no)
// turns the disk cache off (the in-memory cache stays). When the directory cannot
// be created or written, the cache silently works from memory and counts the
// failure in stats().
//
// Entry file <dir>/<key hex>.cubin: a 96-byte header (magic "RANCKCE\0", format
// version u32, header size u32, key [32], payload size u64, payload SHA-256 [32],
// 8 reserved bytes) then the CUBIN. A file that is short, has another magic,
// version or key, or whose checksum fails is counted as corrupt, recompiled and
// overwritten. Writes go to a unique temporary file in the same directory that is
// then renamed over the entry, so concurrent writers (threads or processes) never
// leave a torn entry and readers see either no entry or a complete one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ranc/runtime/hash.h"
#include "ranc/runtime/jit.h"

namespace ranc::rt {

enum class CacheSource : uint8_t { Memory, Disk, Compiled };
std::string_view cache_source_name(CacheSource s);  // "memory", "disk", "compiled"

struct CacheStats {
  int64_t memory_hits = 0;
  int64_t disk_hits = 0;
  int64_t misses = 0;           // compiled
  int64_t corrupt_entries = 0;  // bad files found on disk (then recompiled)
  int64_t disk_errors = 0;      // directory or file could not be written
  double compile_seconds = 0;   // total NVRTC time of misses
  double disk_read_seconds = 0;
};

struct CacheLookup {
  std::shared_ptr<const std::vector<char>> cubin;
  CacheSource source = CacheSource::Compiled;
  double seconds = 0;  // time spent in this lookup (compile or read)
  Digest key{};
};

class KernelCache {
 public:
  // A cache over `dir` (created on first write); nullopt keeps it in memory only.
  explicit KernelCache(std::optional<std::filesystem::path> dir);
  // The directory chosen by the environment (see above); nullopt when off.
  static std::optional<std::filesystem::path> default_dir();
  // The process-wide cache over default_dir().
  static KernelCache& global();

  // The CUBIN for the request: from memory, from disk, or compiled and stored.
  // Throws JitError when the source does not compile.
  CacheLookup get_or_compile(const JitRequest& request);

  // Stores a CUBIN compiled elsewhere (an ahead-of-time package) in memory under the
  // request's key, so get_or_compile serves it without compiling.
  void insert(const JitRequest& request, std::vector<char> cubin);

  static Digest key_for(const JitRequest& request);
  const std::optional<std::filesystem::path>& dir() const { return dir_; }
  std::filesystem::path entry_path(const Digest& key) const;
  CacheStats stats() const;
  void clear_memory();

  // Entry file helpers (public for tests and `ranc cache` tooling).
  static std::vector<char> encode_entry(const Digest& key, const std::vector<char>& payload);
  // The payload, or nullopt when the bytes are not a valid entry for `key`.
  static std::optional<std::vector<char>> decode_entry(const Digest& key,
                                                       const std::vector<char>& bytes);

 private:
  enum class ReadResult { Ok, Missing, Corrupt };
  ReadResult read_entry(const Digest& key, std::vector<char>& payload) const;
  bool write_entry(const Digest& key, const std::vector<char>& payload) const;

  std::optional<std::filesystem::path> dir_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const std::vector<char>>> memory_;
  CacheStats stats_;
};

}  // namespace ranc::rt
