// Errors of the GPU runtime: CUDA and NVRTC failures (CudaError, JitError), running
// out of device memory (OutOfMemoryError) and run-time failures of a program
// (ExecutionError). None of them needs a CUDA header, so the CLI can catch them.
//
// Choices: ExecutionError is a UserError with ErrorKind::Execution (a division by
// zero is a problem of the user's program or data, shown like other user errors).
// OutOfMemoryError is its own type (a resource failure, neither the user's mistake
// nor a ranc bug) carrying the operator, the size asked for and the pool state.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ranc/data/error.h"

namespace ranc::rt {

// A failed CUDA runtime call (or a failure reported by CUDA on a stream).
class CudaError : public std::runtime_error {
 public:
  CudaError(int code, std::string code_name, std::string expr, std::string file, int line,
            std::string detail = {});
  int code() const { return code_; }                           // the cudaError_t value
  const std::string& code_name() const { return code_name_; }  // "cudaErrorMemoryAllocation"
  const std::string& expression() const { return expr_; }
  const std::string& file() const { return file_; }
  int line() const { return line_; }

 private:
  int code_;
  std::string code_name_, expr_, file_;
  int line_;
};

// A failed NVRTC call. Compile errors of a program are JitError (below), not this.
class NvrtcError : public std::runtime_error {
 public:
  NvrtcError(int code, std::string code_name, std::string expr, std::string file, int line);
  int code() const { return code_; }
  const std::string& code_name() const { return code_name_; }

 private:
  int code_;
  std::string code_name_;
};

// NVRTC rejected a translation unit. what() holds the program name, the source path
// and the first lines of the log; log() is the complete log.
class JitError : public std::runtime_error {
 public:
  JitError(std::string program_name, std::string log, std::vector<std::string> options,
           std::string source_path);
  const std::string& program_name() const { return program_name_; }
  const std::string& log() const { return log_; }
  const std::vector<std::string>& options() const { return options_; }
  // Where the failing source was written ("" when it could not be written).
  const std::string& source_path() const { return source_path_; }

 private:
  std::string program_name_, log_;
  std::vector<std::string> options_;
  std::string source_path_;
};

// Device memory ran out. `what` names the operator/node and buffer.
class OutOfMemoryError : public std::runtime_error {
 public:
  OutOfMemoryError(std::string what, int64_t bytes_requested, int64_t bytes_in_use,
                   int64_t peak_bytes, std::string detail = {});
  const std::string& operator_name() const { return what_; }
  int64_t bytes_requested() const { return bytes_requested_; }
  int64_t bytes_in_use() const { return bytes_in_use_; }
  int64_t peak_bytes() const { return peak_bytes_; }
  const std::string& detail() const { return detail_; }
  // The same failure, naming `what` (a caller that names its allocations only when one fails).
  OutOfMemoryError relabeled(std::string what) const {
    return OutOfMemoryError(std::move(what), bytes_requested_, bytes_in_use_, peak_bytes_, detail_);
  }

 private:
  std::string what_, detail_;
  int64_t bytes_requested_, bytes_in_use_, peak_bytes_;
};

// A program failed while running (a kernel raised an error flag, a size overflowed).
class ExecutionError : public UserError {
 public:
  ExecutionError(std::string message, std::string node_name);
  const std::string& node_name() const { return node_name_; }

 private:
  std::string node_name_;
};

// There is no usable GPU (no driver, no device); the caller may fall back to the CPU
// reference executor. reason() is no_gpu_reason().
class NoGpuError : public std::runtime_error {
 public:
  explicit NoGpuError(const std::string& reason);
};

// "1.5 GiB", "512 B": sizes in messages.
std::string format_bytes(int64_t bytes);

}  // namespace ranc::rt
