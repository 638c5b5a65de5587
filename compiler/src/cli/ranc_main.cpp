// main() of the ranc command-line compiler.
#include <iostream>

#include "cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return ranc::cli::run_cli(args, std::cout, std::cerr);
}
