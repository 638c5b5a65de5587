// GPU discovery never crashes or throws, with or without a driver; byte sizes parse.
#include "ranc/runtime/device.h"

#include <gtest/gtest.h>

#include "ranc/runtime/memory.h"

namespace ranc::rt {
namespace {

// Sizes for --memory-limit and RANC_MEMORY_LIMIT.
TEST(ParseByteSize, NumbersAndUnits) {
  EXPECT_EQ(parse_byte_size("0"), 0);
  EXPECT_EQ(parse_byte_size("1048576"), 1048576);
  EXPECT_EQ(parse_byte_size("512M"), int64_t{512} << 20);
  EXPECT_EQ(parse_byte_size("8G"), int64_t{8} << 30);
  EXPECT_EQ(parse_byte_size("8gb"), int64_t{8} << 30);
  EXPECT_EQ(parse_byte_size("1.5GiB"), int64_t{3} << 29);
  EXPECT_EQ(parse_byte_size("2T"), int64_t{2} << 40);
  EXPECT_EQ(parse_byte_size("100B"), 100);
  EXPECT_EQ(parse_byte_size("4k"), 4096);
  for (const char* bad : {"", "G", "-1", "8X", "8 G", "nan", "inf", "1e30", "8GG", "0x"})
    EXPECT_FALSE(parse_byte_size(bad).has_value()) << bad;
}

// The pool's small-block classes: at least the bytes asked, at most a quarter more.
TEST(DevicePoolClasses, AQuarterOfAPowerOfTwoApart) {
  EXPECT_EQ(DevicePool::class_bytes(256), 256);
  EXPECT_EQ(DevicePool::class_bytes(257), 320);
  EXPECT_EQ(DevicePool::class_bytes(320), 320);
  EXPECT_EQ(DevicePool::class_bytes(321), 384);
  EXPECT_EQ(DevicePool::class_bytes(1000), 1024);
  EXPECT_EQ(DevicePool::class_bytes(1025), 1280);
  EXPECT_EQ(DevicePool::class_bytes(int64_t{3} << 20), int64_t{3} << 20);
  int64_t prev = 0;
  for (int64_t b = 1; b <= DevicePool::kCachedBlockMax; b += 1 + b / 7) {
    const int64_t c = DevicePool::class_bytes(b);
    EXPECT_GE(c, b);
    EXPECT_LE(c, b + b / 4 + 1) << b;
    EXPECT_GE(c, prev) << b;
    prev = c;
  }
}

TEST(Device, FindGpuDoesNotThrow) {
  std::optional<DeviceInfo> gpu;
  EXPECT_NO_THROW(gpu = find_gpu());
  EXPECT_EQ(gpu.has_value(), gpu_available());
  if (gpu) {
    EXPECT_TRUE(no_gpu_reason().empty());
    EXPECT_GT(gpu->sm_count, 0);
    EXPECT_GE(gpu->arch(), 50);
  } else {
    EXPECT_FALSE(no_gpu_reason().empty());
  }
}

TEST(Device, NoGpuReasonNamesTheCause) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is present";
  std::string r = no_gpu_reason();
  // This machine class has no driver: cudaErrorInsufficientDriver (35).
  EXPECT_TRUE(r.find("driver") != std::string::npos || r.find("device") != std::string::npos) << r;
  EXPECT_FALSE(find_gpu(3).has_value());
}

TEST(Device, DefaultTargetArch) {
  setenv("RANC_CUDA_ARCH", "sm_89", 1);
  EXPECT_EQ(default_target_arch(), 89);
  setenv("RANC_CUDA_ARCH", "90", 1);
  EXPECT_EQ(default_target_arch(), 90);
  unsetenv("RANC_CUDA_ARCH");
  if (!gpu_available()) {
    EXPECT_EQ(default_target_arch(), 90);
  }
}

}  // namespace
}  // namespace ranc::rt
