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
