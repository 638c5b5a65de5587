// The kernel cache: miss, memory hit, disk hit, corrupt entries recompiled, keys,
// environment, and concurrent writers (threads and a forked process).
#include "ranc/runtime/kernel_cache.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

namespace ranc::rt {
namespace {

namespace fs = std::filesystem;

class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ranc-cache-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  JitRequest request(const std::string& tag) const {
    JitRequest r;
    r.source = "// " + tag + "\nextern \"C\" __global__ void k(int* x) { x[threadIdx.x] += 1; }\n";
    r.program_name = tag + ".cu";
    r.arch = 90;
    return r;
  }
  static std::vector<char> read_bytes(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  }
  static void write_bytes(const fs::path& p, const std::vector<char>& b) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(b.data(), static_cast<std::streamsize>(b.size()));
  }
  fs::path dir_;
};

TEST_F(KernelCacheTest, MissThenMemoryHitThenDiskHit) {
  JitRequest req = request("miss_hit");
  KernelCache cache(dir_);
  CacheLookup a = cache.get_or_compile(req);
  EXPECT_EQ(a.source, CacheSource::Compiled);
  EXPECT_TRUE(fs::exists(cache.entry_path(a.key)));
  CacheLookup b = cache.get_or_compile(req);
  EXPECT_EQ(b.source, CacheSource::Memory);
  EXPECT_EQ(*a.cubin, *b.cubin);

  KernelCache fresh(dir_);  // a new process, as far as memory goes
  CacheLookup c = fresh.get_or_compile(req);
  EXPECT_EQ(c.source, CacheSource::Disk);
  EXPECT_EQ(*a.cubin, *c.cubin);

  CacheStats s = cache.stats();
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.memory_hits, 1);
  EXPECT_GT(s.compile_seconds, 0);
  EXPECT_EQ(fresh.stats().disk_hits, 1);
  // No temporary files left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".cubin") << e.path();
  }
  EXPECT_EQ(files, 1);
}

TEST_F(KernelCacheTest, MemoryOnlyWithoutDirectory) {
  KernelCache cache(std::nullopt);
  JitRequest req = request("memory_only");
  EXPECT_EQ(cache.get_or_compile(req).source, CacheSource::Compiled);
  EXPECT_EQ(cache.get_or_compile(req).source, CacheSource::Memory);
  EXPECT_EQ(cache.stats().disk_errors, 0);
}

TEST_F(KernelCacheTest, TruncatedEntryIsRecompiledAndOverwritten) {
  JitRequest req = request("truncated");
  KernelCache cache(dir_);
  CacheLookup a = cache.get_or_compile(req);
  fs::path p = cache.entry_path(a.key);
  auto bytes = read_bytes(p);
  for (size_t keep : {size_t{0}, size_t{40}, bytes.size() - 1}) {
    write_bytes(p, std::vector<char>(bytes.begin(), bytes.begin() + static_cast<long>(keep)));
    KernelCache fresh(dir_);
    CacheLookup b = fresh.get_or_compile(req);
    EXPECT_EQ(b.source, CacheSource::Compiled) << "kept " << keep;
    EXPECT_EQ(fresh.stats().corrupt_entries, 1);
    EXPECT_EQ(*b.cubin, *a.cubin);
    EXPECT_EQ(read_bytes(p), bytes) << "entry not rewritten";
  }
}

TEST_F(KernelCacheTest, FlippedByteIsDetected) {
  JitRequest req = request("flipped");
  KernelCache cache(dir_);
  CacheLookup a = cache.get_or_compile(req);
  fs::path p = cache.entry_path(a.key);
  auto bytes = read_bytes(p);
  // A byte in the header's key, in the checksum and in the payload.
  for (size_t at : {size_t{20}, size_t{60}, bytes.size() / 2, bytes.size() - 1}) {
    auto bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ 0x40);
    write_bytes(p, bad);
    KernelCache fresh(dir_);
    CacheLookup b = fresh.get_or_compile(req);
    EXPECT_EQ(b.source, CacheSource::Compiled) << "flipped byte " << at;
    EXPECT_EQ(*b.cubin, *a.cubin);
    EXPECT_EQ(read_bytes(p), bytes);
  }
}

TEST_F(KernelCacheTest, EntryEncodingRoundTrip) {
  Digest key = sha256("k", 1);
  std::vector<char> payload = {'\x7f', 'E', 'L', 'F', 1, 2, 3};
  auto bytes = KernelCache::encode_entry(key, payload);
  EXPECT_EQ(bytes.size(), 96 + payload.size());
  EXPECT_EQ(KernelCache::decode_entry(key, bytes), payload);
  EXPECT_FALSE(KernelCache::decode_entry(sha256("j", 1), bytes));  // another key
  bytes.push_back(0);
  EXPECT_FALSE(KernelCache::decode_entry(key, bytes));  // trailing garbage
  EXPECT_EQ(KernelCache::decode_entry(key, KernelCache::encode_entry(key, {})),
            std::vector<char>{});
}

TEST_F(KernelCacheTest, KeyCoversSourceOptionsAndArch) {
  JitRequest a = request("key");
  JitRequest b = a;
  EXPECT_EQ(KernelCache::key_for(a), KernelCache::key_for(b));
  b.arch = 80;
  EXPECT_NE(KernelCache::key_for(a), KernelCache::key_for(b));
  b = a;
  b.options = {"-DX=1"};
  EXPECT_NE(KernelCache::key_for(a), KernelCache::key_for(b));
  b = a;
  b.source += " ";
  EXPECT_NE(KernelCache::key_for(a), KernelCache::key_for(b));
  b = a;
  b.use_pch = !a.use_pch;  // PCH does not change the CUBIN
  EXPECT_EQ(KernelCache::key_for(a), KernelCache::key_for(b));
  // Nor does the number of threads NVRTC splits the work over.
  b = a;
  b.options = {"--split-compile=3"};
  EXPECT_EQ(KernelCache::key_for(a), KernelCache::key_for(b));
  setenv("RANC_JIT_THREADS", "1", 1);
  EXPECT_EQ(KernelCache::key_for(a), KernelCache::key_for(b));
  unsetenv("RANC_JIT_THREADS");
}

TEST_F(KernelCacheTest, DefaultDirFromEnvironment) {
  setenv("RANC_CACHE_DIR", "/tmp/somewhere", 1);
  EXPECT_EQ(KernelCache::default_dir(), fs::path("/tmp/somewhere"));
  setenv("RANC_CACHE", "off", 1);
  EXPECT_FALSE(KernelCache::default_dir().has_value());
  unsetenv("RANC_CACHE");
  setenv("RANC_CACHE_DIR", "", 1);
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(KernelCache::default_dir(), fs::path("/tmp/xdg/ranc"));
  unsetenv("XDG_CACHE_HOME");
  unsetenv("RANC_CACHE_DIR");
  if (const char* home = getenv("HOME")) {
    EXPECT_EQ(KernelCache::default_dir(), fs::path(home) / ".cache" / "ranc");
  }
}

TEST_F(KernelCacheTest, UnwritableDirectoryFallsBackToMemory) {
  fs::create_directories(dir_);
  write_bytes(dir_ / "file", {'x'});
  KernelCache cache(dir_ / "file" / "sub");  // a directory below a file cannot exist
  JitRequest req = request("unwritable");
  EXPECT_EQ(cache.get_or_compile(req).source, CacheSource::Compiled);
  EXPECT_EQ(cache.get_or_compile(req).source, CacheSource::Memory);
  EXPECT_EQ(cache.stats().disk_errors, 1);
}

// Threads and a forked process compile and write the same key at the same time,
// while a reader checks that the entry, whenever it exists, is complete.
TEST_F(KernelCacheTest, ConcurrentWritersLeaveOneValidEntry) {
  JitRequest req = request("concurrent");
  Digest key = KernelCache::key_for(req);
  fs::path entry = KernelCache(dir_).entry_path(key);

  // Fork first, before this process starts threads.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int bad = 0;
    for (int i = 0; i < 3; ++i) {
      KernelCache c(dir_);
      auto r = c.get_or_compile(req);
      if (r.cubin->size() < 4 || (*r.cubin)[1] != 'E') ++bad;
    }
    _exit(bad);
  }

  std::atomic<bool> stop{false};
  std::atomic<int> torn{0}, seen{0};
  std::thread reader([&] {
    while (!stop) {
      std::error_code ec;
      if (!fs::exists(entry, ec)) continue;
      auto bytes = read_bytes(entry);
      if (bytes.empty() && !fs::exists(entry, ec)) continue;
      ++seen;
      if (!KernelCache::decode_entry(key, bytes)) ++torn;
    }
  });
  std::vector<std::thread> writers;
  std::vector<std::vector<char>> results(4);
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      KernelCache c(dir_);
      results[t] = *c.get_or_compile(req).cubin;
    });
  }
  for (auto& w : writers) w.join();
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  stop = true;
  reader.join();

  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(torn.load(), 0) << "of " << seen.load() << " reads";
  for (const auto& r : results) EXPECT_EQ(r, results[0]);
  auto final_bytes = read_bytes(entry);
  auto decoded = KernelCache::decode_entry(key, final_bytes);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, results[0]);
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1) << "temporary files left behind";
}

}  // namespace
}  // namespace ranc::rt
