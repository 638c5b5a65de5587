// Generating and caching TPC-H test data.
#include "tpch_data.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "ranc/io/tpch.h"

namespace ranc::testing {

std::string tpch_cache_dir() {
  if (const char* env = std::getenv("RANC_TPCH_CACHE_DIR"); env && *env) return env;
  return RANC_TPCH_CACHE_DIR;
}

static std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

std::optional<std::string> tpch_data_dir(const std::string& sf, std::string* why) {
  std::string dir = tpch_cache_dir() + "/sf" + sf;
  std::string script = std::string(RANC_SOURCE_DIR) + "/scripts/tpch_gen.sh";
  std::string cmd = shell_quote(script) + " " + shell_quote(sf) + " " + shell_quote(dir);
  int rc = std::system(cmd.c_str());
  int code = (rc != -1 && WIFEXITED(rc)) ? WEXITSTATUS(rc) : -1;
  if (code == 0) return dir;
  if (why) {
    *why = code == 3
               ? "tpchgen-cli is not installed (pip install tpchgen-cli)"
               : "scripts/tpch_gen.sh " + sf + " failed with exit code " + std::to_string(code);
  }
  return std::nullopt;
}

TpchTables load_tpch(const std::string& dir) {
  return tpch::load_tables(dir);
}

}  // namespace ranc::testing
