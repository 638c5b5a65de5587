// Checked CUDA runtime and NVRTC calls (STYLE.md habit 15): RANC_CUDA_CHECK(expr)
// and RANC_NVRTC_CHECK(expr) throw CudaError / NvrtcError carrying the error code,
// its name, the expression text and file:line.
#pragma once

#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include "ranc/runtime/errors.h"

namespace ranc::rt::detail {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);
[[noreturn]] void throw_nvrtc_error(nvrtcResult res, const char* expr, const char* file, int line);

inline void cuda_check(cudaError_t err, const char* expr, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, expr, file, line);
}
inline void nvrtc_check(nvrtcResult res, const char* expr, const char* file, int line) {
  if (res != NVRTC_SUCCESS) throw_nvrtc_error(res, expr, file, line);
}

}  // namespace ranc::rt::detail

#define RANC_CUDA_CHECK(expr) ::ranc::rt::detail::cuda_check((expr), #expr, __FILE__, __LINE__)
#define RANC_NVRTC_CHECK(expr) ::ranc::rt::detail::nvrtc_check((expr), #expr, __FILE__, __LINE__)
