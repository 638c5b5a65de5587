// The ranc command line: subcommands check, explain, emit, run, shell and import.
//
// Exit codes (documented in `ranc --help` and the README):
//   0 success; 1 the program has errors (syntax, names, types); 2 bad command-line
//   usage; 3 bad input data (unreadable file, malformed row); 4 execution failed
//   (no GPU when --gpu is asked for, JIT or CUDA error, out of memory, run-time
//   error such as integer division by zero); 70 internal error (a bug in ranc).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "ranc/codegen/codegen.h"

namespace ranc::cli {

enum ExitCode : int {
  kOk = 0,
  kProgramError = 1,
  kUsageError = 2,
  kDataError = 3,
  kExecutionError = 4,
  kInternalError = 70,
};

// Runs `ranc args...` (args without the program name), writing results to `out`
// and messages to `err`. Never throws.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// `ranc shell` (shell.cpp; see `ranc shell --help`).
struct ShellOptions {
  std::string data_dir;
  size_t max_rows = 50;
  bool timer = false;
  std::optional<bool> gpu;  // nullopt: the GPU when there is one
  int64_t memory_limit = 0;  // bytes a GPU run may hold (0: the device's)
  codegen::CodegenOptions codegen;
  std::string script;  // read statements from this file instead of `in`
  bool recorded_order = true;  // --no-recorded-order: false (SessionOptions::recorded_order)
};
// Reads statements from `in` (prompting on `out` when `interactive`) until the end or
// .quit. Returns 0, or the exit code of the first error.
int run_shell(const ShellOptions& options, std::istream& in, std::ostream& out, std::ostream& err,
              bool interactive);

// The exit code for the exception being handled, after printing it to `err`
// (diagnostics located in `file` are shown with their line of `source`).
int report_exception(std::ostream& err, const std::string& file, const std::string& source);

}  // namespace ranc::cli
