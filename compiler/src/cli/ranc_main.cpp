// main() of the ranc command-line compiler.
#include <cstdlib>
#include <iostream>

#include "cli.h"

int main(int argc, char** argv) {
  // A `ranc run` is one plan in a fresh process. CUDA's default lazy module loading
  // would load each built-in kernel (CUB's sort passes, scans, gathers) at its first
  // launch, inside the plan's execution: 4-5 ms of a TPC-H query's 6-10 ms at SF 10 on
  // the H100. Eager loading does it when the context is made, which overlaps the input
  // load. A value the user set is kept.
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  std::vector<std::string> args(argv + 1, argv + argc);
  return ranc::cli::run_cli(args, std::cout, std::cerr);
}
