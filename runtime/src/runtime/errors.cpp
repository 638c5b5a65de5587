// Error types of the runtime and the checked-call helpers behind RANC_CUDA_CHECK and
// RANC_NVRTC_CHECK.
#include "ranc/runtime/errors.h"

#include <fmt/format.h>

#include "ranc/runtime/check.h"

namespace ranc::rt {
namespace {

std::string cuda_message(int code, const std::string& name, const std::string& expr,
                         const std::string& file, int line, const std::string& detail) {
  std::string msg = fmt::format("CUDA error {} ({})", name, code);
  if (!detail.empty()) msg += ": " + detail;
  if (!expr.empty()) msg += fmt::format(" in `{}` at {}:{}", expr, file, line);
  return msg;
}

std::string jit_message(const std::string& program, const std::string& log,
                        const std::string& source_path) {
  // The first lines of the log are usually the first error; the rest is in log().
  size_t end = 0;
  for (int lines = 0; lines < 20 && end < log.size(); ++lines) {
    size_t nl = log.find('\n', end);
    end = nl == std::string::npos ? log.size() : nl + 1;
  }
  std::string head = log.substr(0, end);
  std::string msg = fmt::format("NVRTC failed to compile '{}'", program);
  if (!source_path.empty()) msg += fmt::format(" (source written to {})", source_path);
  if (!head.empty()) msg += ":\n" + head;
  return msg;
}

}  // namespace

CudaError::CudaError(int code, std::string code_name, std::string expr, std::string file, int line,
                     std::string detail)
    : std::runtime_error(cuda_message(code, code_name, expr, file, line, detail)),
      code_(code),
      code_name_(std::move(code_name)),
      expr_(std::move(expr)),
      file_(std::move(file)),
      line_(line) {}

NvrtcError::NvrtcError(int code, std::string code_name, std::string expr, std::string file,
                       int line)
    : std::runtime_error(
          fmt::format("NVRTC error {} ({}) in `{}` at {}:{}", code_name, code, expr, file, line)),
      code_(code),
      code_name_(std::move(code_name)) {}

JitError::JitError(std::string program_name, std::string log, std::vector<std::string> options,
                   std::string source_path)
    : std::runtime_error(jit_message(program_name, log, source_path)),
      program_name_(std::move(program_name)),
      log_(std::move(log)),
      options_(std::move(options)),
      source_path_(std::move(source_path)) {}

OutOfMemoryError::OutOfMemoryError(std::string what, int64_t bytes_requested, int64_t bytes_in_use,
                                   int64_t peak_bytes, std::string detail)
    : std::runtime_error(
          fmt::format("out of device memory in {}: requested {}, {} in use by this run (peak {}){}",
                      what, format_bytes(bytes_requested), format_bytes(bytes_in_use),
                      format_bytes(peak_bytes), detail.empty() ? std::string() : "; " + detail)),
      what_(std::move(what)),
      detail_(std::move(detail)),
      bytes_requested_(bytes_requested),
      bytes_in_use_(bytes_in_use),
      peak_bytes_(peak_bytes) {}

ExecutionError::ExecutionError(std::string message, std::string node_name)
    : UserError(Diagnostic{ErrorKind::Execution,
                           node_name.empty() ? message : node_name + ": " + message, SourceLoc{},
                           ""}),
      node_name_(std::move(node_name)) {}

NoGpuError::NoGpuError(const std::string& reason)
    : std::runtime_error("no GPU available: " + reason) {}

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while ((v >= 1024.0 || v <= -1024.0) && u < 6) {
    v /= 1024.0;
    ++u;
  }
  if (u == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.1f} {} ({} bytes)", v, units[u], bytes);
}

namespace detail {

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  // Clear the error so that a later, unrelated check does not report it again
  // (sticky errors stay, which is what they are for).
  (void)cudaGetLastError();
  throw CudaError(static_cast<int>(err), cudaGetErrorName(err), expr, file, line,
                  cudaGetErrorString(err));
}

void throw_nvrtc_error(nvrtcResult res, const char* expr, const char* file, int line) {
  throw NvrtcError(static_cast<int>(res), nvrtcGetErrorString(res), expr, file, line);
}

}  // namespace detail
}  // namespace ranc::rt
