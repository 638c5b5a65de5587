// The ranc command line: subcommands check, explain, emit and run.
//
// Exit codes (documented in `ranc --help` and the README):
//   0 success; 1 the program has errors (syntax, names, types); 2 bad command-line
//   usage; 3 bad input data (unreadable file, malformed row); 4 execution failed
//   (no GPU when --gpu is asked for, JIT or CUDA error, out of memory, run-time
//   error such as integer division by zero); 70 internal error (a bug in ranc).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

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

}  // namespace ranc::cli
