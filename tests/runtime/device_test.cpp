// GPU discovery never crashes or throws, with or without a driver.
#include "ranc/runtime/device.h"

#include <gtest/gtest.h>

namespace ranc::rt {
namespace {

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
