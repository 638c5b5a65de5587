// GPU discovery at run time. Never throws and never needs the driver library at
// link time: on a machine without a driver or a device, find_gpu() is nullopt and
// no_gpu_reason() says why.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ranc::rt {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int64_t total_memory = 0;  // bytes
  int64_t l2_bytes = 0;
  int64_t shared_memory_per_block_optin = 0;
  int arch() const { return cc_major * 10 + cc_minor; }  // 90 for sm_90
  std::string arch_name() const;                         // "sm_90"
  std::string str() const;  // "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB)"
};

// The GPU with the given ordinal, or nullopt. The result for ordinal 0 is computed
// once per process.
std::optional<DeviceInfo> find_gpu(int ordinal = 0);
bool gpu_available();
// Why there is no GPU ("no CUDA driver found (cudaErrorInsufficientDriver)", ...);
// empty when a GPU is available.
std::string no_gpu_reason();

// The target architecture for NVRTC when none is given: env RANC_CUDA_ARCH ("90" or
// "sm_90"), else the GPU's, else 90.
int default_target_arch();

}  // namespace ranc::rt
