// The fixture the CLI tests share: a fresh folder per test, files written into it,
// and `ranc ARGS...` run in-process with its stdout and stderr captured.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"

namespace ranc::cli {

class CliFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ranc_cli_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes dir_/name; returns its path.
  std::string write(const std::string& name, const std::string& text) {
    std::filesystem::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  // Runs `ranc args...`; the output lands in out_ and err_.
  int run(std::vector<std::string> args) {
    std::ostringstream o, e;
    int rc = run_cli(args, o, e);
    out_ = o.str();
    err_ = e.str();
    return rc;
  }

  std::filesystem::path dir_;
  std::string out_, err_;
};

}  // namespace ranc::cli
