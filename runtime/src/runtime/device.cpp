// GPU discovery through the (statically linked) CUDA runtime.
#include "ranc/runtime/device.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <string_view>

#include "ranc/runtime/errors.h"

namespace ranc::rt {
namespace {

struct Discovery {
  std::optional<DeviceInfo> info;
  std::string reason;
};

std::string reason_for(cudaError_t err) {
  std::string name = cudaGetErrorName(err);
  switch (err) {
    case cudaErrorInsufficientDriver:
      return fmt::format(
          "no CUDA driver found, or the driver is older than the CUDA {} "
          "runtime ({})",
          CUDART_VERSION / 1000, name);
    case cudaErrorNoDevice:
      return fmt::format("no CUDA-capable device found ({})", name);
    case cudaErrorDevicesUnavailable:
      return fmt::format("all CUDA devices are busy or unavailable ({})", name);
    default:
      return fmt::format("CUDA initialisation failed: {} ({})", cudaGetErrorString(err), name);
  }
}

Discovery discover(int ordinal) {
  Discovery d;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    d.reason = reason_for(err);
    return d;
  }
  if (count == 0) {
    d.reason = "no CUDA-capable device found (device count 0)";
    return d;
  }
  if (ordinal < 0 || ordinal >= count) {
    d.reason = fmt::format("GPU {} requested but only {} found", ordinal, count);
    return d;
  }
  cudaDeviceProp prop{};
  err = cudaGetDeviceProperties(&prop, ordinal);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    d.reason = reason_for(err);
    return d;
  }
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.total_memory = static_cast<int64_t>(prop.totalGlobalMem);
  info.l2_bytes = prop.l2CacheSize;
  info.shared_memory_per_block_optin = static_cast<int64_t>(prop.sharedMemPerBlockOptin);
  d.info = info;
  return d;
}

const Discovery& discovery0() {
  static const Discovery d = discover(0);
  return d;
}

}  // namespace

std::string DeviceInfo::arch_name() const {
  return fmt::format("sm_{}", arch());
}

std::string DeviceInfo::str() const {
  return fmt::format("{} ({}, {} SMs, {})", name, arch_name(), sm_count,
                     format_bytes(total_memory));
}

std::optional<DeviceInfo> find_gpu(int ordinal) {
  if (ordinal == 0) return discovery0().info;
  return discover(ordinal).info;
}

bool gpu_available() {
  return discovery0().info.has_value();
}

std::string no_gpu_reason() {
  return discovery0().reason;
}

int default_target_arch() {
  if (const char* env = std::getenv("RANC_CUDA_ARCH"); env && *env) {
    std::string_view s(env);
    if (s.starts_with("sm_")) s.remove_prefix(3);
    int v = 0;
    bool ok = !s.empty();
    for (char c : s) {
      if (c < '0' || c > '9') {
        ok = false;
        break;
      }
      v = v * 10 + (c - '0');
    }
    if (ok && v > 0) return v;
  }
  if (auto g = find_gpu()) return g->arch();
  return 90;
}

}  // namespace ranc::rt
