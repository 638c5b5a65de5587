// NVRTC compilation to CUBIN without a GPU: tiny kernels, CUB block headers, the
// embedded templates, compile errors (JitError with log and dumped source), and the
// precompiled-header timing.
#include "ranc/runtime/jit.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "ranc/runtime/errors.h"

namespace ranc::rt {
namespace {

namespace fs = std::filesystem;

bool is_elf(const std::vector<char>& b) {
  return b.size() > 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
}

const char* kTiny = R"(
extern "C" __global__ void scale(float* x, long long n, float f) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) x[i] *= f;
}
)";

const char* kBlockScan = R"(#include <cub/block/block_scan.cuh>
#pragma nv_hdrstop
extern "C" __global__ void scan(int* x) {
  using Scan = cub::BlockScan<int, 128>;
  __shared__ typename Scan::TempStorage tmp;
  int v = x[threadIdx.x];
  Scan(tmp).ExclusiveSum(v, v);
  x[threadIdx.x] = v;
}
)";

TEST(Jit, TinyKernelToCubin) {
  auto cubin = compile_to_cubin(kTiny, "tiny.cu", {}, 90);
  EXPECT_TRUE(is_elf(cubin));
}

TEST(Jit, CubBlockScanToSm90Cubin) {
  JitRequest req;
  req.source = kBlockScan;
  req.program_name = "block_scan.cu";
  req.arch = 90;
  JitResult r = compile_to_cubin(req);
  EXPECT_TRUE(is_elf(r.cubin));
  EXPECT_GT(r.seconds, 0);
}

TEST(Jit, OptionsHaveStdArchAndIncludes) {
  JitRequest req;
  req.arch = 80;
  auto opts = jit_options(req, false);
  EXPECT_EQ(opts[0], "-std=c++20");
  EXPECT_EQ(opts[1], "--gpu-architecture=sm_80");
  bool cccl = false;
  for (const auto& o : opts)
    cccl = cccl || (o.starts_with("-I") && fs::exists(fs::path(o.substr(2)) / "cub"));
  EXPECT_TRUE(cccl) << "no -I with cub/ found";
  for (const auto& o : opts) EXPECT_NE(o, "--pch");
  req.options = {"-std=c++17"};
  EXPECT_EQ(jit_options(req, false)[0], "--gpu-architecture=sm_80");
}

TEST(Jit, SplitCompileThreads) {
  auto split = [](const std::vector<std::string>& opts) {
    std::vector<std::string> r;
    for (const auto& o : opts)
      if (o.starts_with("--split-compile")) r.push_back(o);
    return r;
  };
  JitRequest req;
  unsetenv("RANC_JIT_THREADS");
  EXPECT_EQ(split(jit_options(req, false)), std::vector<std::string>{"--split-compile=0"});
  setenv("RANC_JIT_THREADS", "1", 1);  // serial: no option
  EXPECT_TRUE(split(jit_options(req, false)).empty());
  setenv("RANC_JIT_THREADS", "4", 1);
  EXPECT_EQ(split(jit_options(req, false)), std::vector<std::string>{"--split-compile=4"});
  setenv("RANC_JIT_THREADS", "many", 1);  // not a number: the default
  EXPECT_EQ(split(jit_options(req, false)), std::vector<std::string>{"--split-compile=0"});
  unsetenv("RANC_JIT_THREADS");
  req.options = {"--split-compile=2"};  // the request's own choice wins
  EXPECT_EQ(split(jit_options(req, false)), std::vector<std::string>{"--split-compile=2"});
}

TEST(Jit, IncludeDirsFromEnvironment) {
  setenv("RANC_CUDA_INCLUDE", "/usr/local/cuda/include", 1);
  auto dirs = cuda_include_dirs();
  unsetenv("RANC_CUDA_INCLUDE");
  ASSERT_FALSE(dirs.empty());
  EXPECT_EQ(dirs[0], "/usr/local/cuda/include/cccl");
}

TEST(Jit, NvrtcVersion) {
  EXPECT_TRUE(nvrtc_version().starts_with("13.")) << nvrtc_version();
}

TEST(Jit, EmbeddedTemplateHeadersResolve) {
  const auto& headers = embedded_headers();
  if (headers.empty()) GTEST_SKIP() << "runtime built without ranc_templates";
  EXPECT_FALSE(template_bundle_hash().empty());
  // Each embedded header is reachable by its include name, from memory.
  std::string src;
  for (const auto& h : headers) src += "#include <" + h.name + ">\n";
  src += "extern \"C\" __global__ void k(int* x) { x[0] = 1; }\n";
  try {
    EXPECT_TRUE(is_elf(compile_to_cubin(src, "templates.cu", {}, 90)));
  } catch (const JitError& e) {
    // A header that does not compile on its own is the templates' business; a
    // missing header would be ours.
    EXPECT_EQ(e.log().find("cannot open source file"), std::string::npos) << e.log();
  }
}

TEST(Jit, SyntaxErrorGivesJitErrorWithLogAndSource) {
  setenv("RANC_CACHE_DIR", (fs::temp_directory_path() / "ranc-jit-test-cache").c_str(), 1);
  const char* bad = "extern \"C\" __global__ void k(int* x) {\n  x[0] = 1;\n  int y = ;\n}\n";
  try {
    compile_to_cubin(bad, "bad_program.cu", {"-DFOO=1"}, 90);
    FAIL() << "expected JitError";
  } catch (const JitError& e) {
    EXPECT_EQ(e.program_name(), "bad_program.cu");
    EXPECT_NE(e.log().find("bad_program.cu(3)"), std::string::npos) << e.log();
    EXPECT_NE(std::string(e.what()).find("bad_program.cu(3)"), std::string::npos);
    ASSERT_FALSE(e.source_path().empty());
    EXPECT_TRUE(fs::exists(e.source_path()));
    std::ifstream f(e.source_path());
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, bad);
    bool has_define = false;
    for (const auto& o : e.options()) has_define = has_define || o == "-DFOO=1";
    EXPECT_TRUE(has_define);
    EXPECT_NE(std::string(e.what()).find(e.source_path()), std::string::npos);
  }
  unsetenv("RANC_CACHE_DIR");
}

// Not an assertion on time (tests assert results): records the cold and PCH
// compile times of a TU including <cub/block/block_scan.cuh>.
TEST(Jit, PrecompiledHeaderTiming) {
  auto time_compile = [](const std::string& src, bool pch) {
    JitRequest req;
    req.source = src;
    req.program_name = "pch_timing.cu";
    req.use_pch = pch;
    return compile_to_cubin(req).seconds;
  };
  std::string a = kBlockScan;
  std::string b = std::string(kBlockScan) + "// variant\nextern \"C\" __global__ void k2() {}\n";
  std::string c = std::string(kBlockScan) + "// variant 2\nextern \"C\" __global__ void k3() {}\n";
  double cold = time_compile(b, false);
  double create = time_compile(a, true);
  double warm = time_compile(c, true);
  std::cout << "[ timing ] block_scan TU: cold (no PCH) " << cold << " s, creating PCH " << create
            << " s, with PCH " << warm << " s\n";
  RecordProperty("cold_s", std::to_string(cold));
  RecordProperty("pch_s", std::to_string(warm));
}

}  // namespace
}  // namespace ranc::rt
