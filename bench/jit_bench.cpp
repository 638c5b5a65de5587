// JIT compile time of typical programs (the TPC-H queries in examples/tpch): NVRTC to
// CUBIN for sm_90, cold (nothing cached; the first compile of a process also builds
// the in-memory precompiled header) and warm (the same source from the disk cache in
// a new cache object, then from memory). NVRTC needs no GPU, so this runs anywhere.
// Usage: jit_bench [examples/tpch directory] (default: the source tree's).
// On a machine with a CUDA driver NVRTC also caches its results in the driver's compute
// cache (~/.nv/ComputeCache) across processes; the benchmark turns that off
// (CUDA_CACHE_DISABLE=1, unless set) so that "cold" means compiled.
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <string>

#include "ranc/codegen/codegen.h"
#include "ranc/frontend/ra_parser.h"
#include "ranc/runtime/kernel_cache.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/0);
  const fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::path(RANC_SOURCE_DIR) / "examples/tpch";
  const fs::path cache_dir = fs::temp_directory_path() / "ranc-jit-bench-cache";
  fs::remove_all(cache_dir);
  std::printf("NVRTC %s, target sm_90, cache %s\n", ranc::rt::nvrtc_version().c_str(),
              cache_dir.c_str());
  std::printf("%-6s %8s %8s %12s %12s %12s\n", "query", "kernels", "src KB", "cold s",
              "warm disk s", "warm mem s");
  for (const char* q : {"q1", "q3", "q5", "q6", "q10", "q19"}) {
    ranc::ParsedProgram parsed = ranc::parse_ra_file((dir / (std::string(q) + ".ra")).string());
    ranc::rt::Plan plan = ranc::codegen::generate_plan(ranc::check(parsed.program));
    ranc::rt::JitRequest req;
    req.source = plan.source;
    req.options = plan.nvrtc_options;
    req.arch = 90;
    ranc::rt::KernelCache cold(cache_dir);
    const double c = cold.get_or_compile(req).seconds;
    ranc::rt::KernelCache warm(cache_dir);  // a new process's view: disk, then memory
    const auto d = warm.get_or_compile(req);
    const auto m = warm.get_or_compile(req);
    std::printf("%-6s %8zu %8.1f %12.3f %12.6f %12.6f  (%s, %s)\n", q, plan.kernels.size(),
                static_cast<double>(plan.source.size()) / 1024.0, c, d.seconds, m.seconds,
                std::string(ranc::rt::cache_source_name(d.source)).c_str(),
                std::string(ranc::rt::cache_source_name(m.source)).c_str());
  }
  fs::remove_all(cache_dir);
  return 0;
}
