// The in-memory and on-disk kernel cache.
#include "ranc/runtime/kernel_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "env.h"
#include "ranc/data/atomic_file.h"
#include "ranc/runtime/errors.h"

namespace fs = std::filesystem;

namespace ranc::rt {
namespace {

constexpr char kMagic[8] = {'R', 'A', 'N', 'C', 'K', 'C', 'E', '\0'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderSize = 8 + 4 + 4 + 32 + 8 + 32 + 8;  // 96

void put_u32(std::vector<char>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void put_u64(std::vector<char>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
uint64_t get_le(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

bool env_disabled() { return env_switch("RANC_CACHE") == false; }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool read_file(const fs::path& path, std::vector<char>& out, bool& missing) {
  missing = false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    missing = errno == ENOENT;
    return false;
  }
  out.clear();
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
  }
  ::close(fd);
  return true;
}

}  // namespace

std::string_view cache_source_name(CacheSource s) {
  switch (s) {
    case CacheSource::Memory:
      return "memory";
    case CacheSource::Disk:
      return "disk";
    case CacheSource::Compiled:
      return "compiled";
  }
  return "?";
}

KernelCache::KernelCache(std::optional<fs::path> dir) : dir_(std::move(dir)) {}

std::optional<fs::path> KernelCache::default_dir() {
  if (env_disabled()) return std::nullopt;
  if (const char* d = std::getenv("RANC_CACHE_DIR"); d && *d) return fs::path(d);
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "ranc";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "ranc";
  return std::nullopt;
}

KernelCache& KernelCache::global() {
  static KernelCache cache(default_dir());
  return cache;
}

Digest KernelCache::key_for(const JitRequest& req) {
  Sha256 h;
  h.update_field(fmt::format("ranc kernel cache v{}", kFormatVersion));
  h.update_field(req.source);
  // The thread count NVRTC splits the work over does not change the CUBIN.
  for (const auto& o : jit_options(req, /*with_pch=*/false))
    if (!o.starts_with("--split-compile")) h.update_field(o);
  h.update_field("nvrtc " + nvrtc_version());
  h.update_field(fmt::format("sm_{}", req.arch));
  h.update_field(template_bundle_hash());
  // The embedded headers themselves too: a bundle hash that was not bumped must not
  // serve stale code.
  for (const auto& hd : embedded_headers()) {
    h.update_field(hd.name);
    h.update_field(hd.contents);
  }
  return h.finish();
}

fs::path KernelCache::entry_path(const Digest& key) const {
  internal_check(dir_.has_value(), "KernelCache::entry_path without a directory");
  return *dir_ / (to_hex(key) + ".cubin");
}

CacheStats KernelCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void KernelCache::clear_memory() {
  std::lock_guard<std::mutex> lock(mu_);
  memory_.clear();
}

std::vector<char> KernelCache::encode_entry(const Digest& key, const std::vector<char>& payload) {
  std::vector<char> out;
  out.reserve(kHeaderSize + payload.size());
  out.insert(out.end(), kMagic, kMagic + 8);
  put_u32(out, kFormatVersion);
  put_u32(out, static_cast<uint32_t>(kHeaderSize));
  out.insert(out.end(), key.begin(), key.end());
  put_u64(out, payload.size());
  Digest sum = sha256(payload.data(), payload.size());
  out.insert(out.end(), sum.begin(), sum.end());
  put_u64(out, 0);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

std::optional<std::vector<char>> KernelCache::decode_entry(const Digest& key,
                                                           const std::vector<char>& bytes) {
  if (bytes.size() < kHeaderSize) return std::nullopt;
  const char* p = bytes.data();
  if (std::memcmp(p, kMagic, 8) != 0) return std::nullopt;
  if (get_le(p + 8, 4) != kFormatVersion || get_le(p + 12, 4) != kHeaderSize) return std::nullopt;
  if (std::memcmp(p + 16, key.data(), 32) != 0) return std::nullopt;
  uint64_t size = get_le(p + 48, 8);
  if (size != bytes.size() - kHeaderSize) return std::nullopt;
  Digest sum = sha256(p + kHeaderSize, size);
  if (std::memcmp(p + 56, sum.data(), 32) != 0) return std::nullopt;
  return std::vector<char>(bytes.begin() + kHeaderSize, bytes.end());
}

KernelCache::ReadResult KernelCache::read_entry(const Digest& key,
                                                std::vector<char>& payload) const {
  std::vector<char> bytes;
  bool missing = false;
  if (!read_file(entry_path(key), bytes, missing)) {
    return missing ? ReadResult::Missing : ReadResult::Corrupt;
  }
  auto decoded = decode_entry(key, bytes);
  if (!decoded) return ReadResult::Corrupt;
  payload = std::move(*decoded);
  return ReadResult::Ok;
}

bool KernelCache::write_entry(const Digest& key, const std::vector<char>& payload) const {
  std::error_code ec;
  fs::create_directories(*dir_, ec);
  if (ec) return false;
  AtomicFile f(entry_path(key).string());
  const std::vector<char> bytes = encode_entry(key, payload);
  return f.write(bytes.data(), bytes.size()) && f.commit();
}

void KernelCache::insert(const JitRequest& req, std::vector<char> cubin) {
  auto shared = std::make_shared<const std::vector<char>>(std::move(cubin));
  std::string hex = to_hex(key_for(req));
  std::lock_guard<std::mutex> lock(mu_);
  memory_[hex] = std::move(shared);
}

CacheLookup KernelCache::get_or_compile(const JitRequest& req) {
  auto t0 = std::chrono::steady_clock::now();
  CacheLookup out;
  out.key = key_for(req);
  std::string hex = to_hex(out.key);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = memory_.find(hex); it != memory_.end()) {
      ++stats_.memory_hits;
      out.cubin = it->second;
      out.source = CacheSource::Memory;
      out.seconds = seconds_since(t0);
      return out;
    }
  }
  bool corrupt = false;
  if (dir_) {
    std::vector<char> payload;
    ReadResult r = read_entry(out.key, payload);
    if (r == ReadResult::Ok) {
      auto cubin = std::make_shared<const std::vector<char>>(std::move(payload));
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.disk_hits;
      stats_.disk_read_seconds += seconds_since(t0);
      memory_.emplace(hex, cubin);
      out.cubin = cubin;
      out.source = CacheSource::Disk;
      out.seconds = seconds_since(t0);
      return out;
    }
    corrupt = r == ReadResult::Corrupt;
  }
  // Compiled outside the lock: other kernels may hit meanwhile. Two threads missing
  // the same key both compile; the results are identical.
  JitResult jit = compile_to_cubin(req);
  auto cubin = std::make_shared<const std::vector<char>>(std::move(jit.cubin));
  bool written = !dir_ || write_entry(out.key, *cubin);
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.misses;
  if (corrupt) ++stats_.corrupt_entries;
  if (!written) ++stats_.disk_errors;
  stats_.compile_seconds += jit.seconds;
  auto [it, inserted] = memory_.emplace(hex, cubin);
  out.cubin = it->second;
  out.source = CacheSource::Compiled;
  out.seconds = seconds_since(t0);
  return out;
}

}  // namespace ranc::rt
