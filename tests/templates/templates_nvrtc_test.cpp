// Compiles sample translation units that instantiate every skeleton and hook variant of the CUDA
// templates with NVRTC to sm_90 CUBIN, using only the embedded headers. Needs no GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nvrtc.h>

#include <ranc/templates/embedded.h>

#include <algorithm>
#include <string>
#include <vector>

#include "templates_nvrtc_sources.h"

namespace {

struct CompileResult {
  bool ok = false;
  std::string log;
  size_t cubin_size = 0;
};

CompileResult compile(const std::string& name, const std::string& source) {
  CompileResult r;
  const auto& headers = ranc::templates::embedded_headers();
  std::vector<const char*> names, contents;
  for (const auto& h : headers) {
    names.push_back(h.name);
    contents.push_back(h.contents);
  }
  nvrtcProgram prog;
  nvrtcResult rc =
      nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), static_cast<int>(names.size()),
                         contents.data(), names.data());
  if (rc != NVRTC_SUCCESS) {
    r.log = fmt::format("nvrtcCreateProgram: {}", nvrtcGetErrorString(rc));
    return r;
  }
  const std::string inc_cccl = fmt::format("-I{}/cccl", RANC_CUDA_INCLUDE_DIR);
  const std::string inc_cuda = fmt::format("-I{}", RANC_CUDA_INCLUDE_DIR);
  std::vector<const char*> opts = {"-std=c++17",     "-arch=sm_90",    "-default-device",
                                   inc_cccl.c_str(), inc_cuda.c_str(), "-lineinfo"};
  rc = nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  r.log.resize(log_size);
  if (log_size > 0) nvrtcGetProgramLog(prog, r.log.data());
  if (rc == NVRTC_SUCCESS) {
    nvrtcGetCUBINSize(prog, &r.cubin_size);
    r.ok = r.cubin_size > 0;
  } else {
    r.log = fmt::format("{}\n{}", nvrtcGetErrorString(rc), r.log);
  }
  nvrtcDestroyProgram(&prog);
  return r;
}

void expect_compiles(const char* name, const char* source) {
  CompileResult r = compile(name, source);
  EXPECT_TRUE(r.ok) << "NVRTC failed for " << name << ":\n" << r.log;
  if (r.ok && !r.log.empty() && r.log.size() > 1)
    std::printf("%s: warnings:\n%s\n", name, r.log.c_str());
}

}  // namespace

TEST(TemplatesEmbedded, ListsEveryHeaderWithHash) {
  const auto& headers = ranc::templates::embedded_headers();
  std::vector<std::string> names;
  for (const auto& h : headers) names.emplace_back(h.name);
  for (const char* want :
       {"ranc/templates/common.cuh", "ranc/templates/select.cuh", "ranc/templates/product.cuh",
        "ranc/templates/merge_path.cuh", "ranc/templates/set_ops.cuh", "ranc/templates/join.cuh",
        "ranc/templates/reduce.cuh", "ranc/templates/unique.cuh", "ranc/templates/hash_join.cuh"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  for (const auto& h : headers) EXPECT_GT(std::string(h.contents).size(), 100u) << h.name;
  EXPECT_EQ(ranc::templates::bundle_hash().size(), 64u);
}

// The templates parse in milliseconds under NVRTC because they include no CUB or libcu++
// header (those cost ~1 s per program; see block.cuh): only each other.
TEST(TemplatesEmbedded, IncludeOnlyEachOther) {
  for (const auto& h : ranc::templates::embedded_headers()) {
    const std::string text(h.contents);
    size_t pos = 0;
    while ((pos = text.find("#include", pos)) != std::string::npos) {
      const size_t eol = text.find('\n', pos);
      const std::string line = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
      EXPECT_NE(line.find("<ranc/templates/"), std::string::npos) << h.name << ": " << line;
      pos += 8;
    }
  }
}

#define RANC_NVRTC_CASE(NAME)                              \
  TEST(TemplatesNvrtc, NAME) {                             \
    expect_compiles(#NAME ".cu", ranc_test_sources::NAME); \
  }
RANC_NVRTC_SOURCES(RANC_NVRTC_CASE)
