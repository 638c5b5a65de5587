// NVRTC compilation of a CUDA translation unit to CUBIN (no GPU needed).
//
// Options NVRTC sees, in order: -std=c++20, --gpu-architecture=sm_XX, -I for the
// toolkit's CCCL headers and CUDA includes (found at run time, see
// cuda_include_dirs()), --split-compile=0 (NVVM and ptxas spread the program's
// functions over every hardware thread; RANC_JIT_THREADS=N sets another count, 1 =
// serial), --pch when precompiled headers are asked for, then the request's own
// options. ranc's template headers are passed to NVRTC from memory
// (embedded_headers()), never read from the source tree.
//
// Compile time: ranc's templates include no CUB or libcu++ header (block.cuh has the
// block primitives they need), so NVRTC's front end takes ~30 ms of a TPC-H query's
// compile; the rest is NVVM optimisation and ptxas, which --split-compile runs in
// parallel. Including <cub/block/block_scan.cuh> alone used to cost ~1.1 s per
// program, and NVRTC cannot keep a precompiled header across processes (a PCH file is
// only valid for the NVRTC instance and heap address that wrote it: warning 20282).
//
// Precompiled headers: with use_pch (off by default; RANC_JIT_PCH=on turns it on for
// every request), NVRTC's automatic PCH ("--pch") keeps parsed headers in the process
// for later compiles whose text before `#pragma nv_hdrstop` is identical. Creating it
// costs more than ranc's light headers take to parse, so ranc leaves it off; it helps
// only programs that include heavy headers themselves.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ranc::rt {

struct JitHeader {
  std::string name;  // as written in #include "..."
  std::string contents;
};

struct JitRequest {
  std::string source;
  std::string program_name = "ranc_program.cu";  // shows in NVRTC messages
  std::vector<std::string> options;              // extra NVRTC options
  int arch = 90;                                 // sm_XX; CUBIN for exactly this
  bool use_pch = false;                          // env RANC_JIT_PCH=on|off overrides
};

struct JitResult {
  std::vector<char> cubin;
  std::string log;  // warnings, if any
  double seconds = 0;
};

// Compiles to CUBIN. Throws JitError (with log, options, and the path where the
// source was written) when NVRTC rejects the source, NvrtcError for other failures.
JitResult compile_to_cubin(const JitRequest& request);
std::vector<char> compile_to_cubin(const std::string& source, const std::string& program_name,
                                   const std::vector<std::string>& options, int arch);

// The complete option list for a request. The cache key uses with_pch = false
// (PCH does not change the output).
std::vector<std::string> jit_options(const JitRequest& request, bool with_pch);

// "13.0".
std::string nvrtc_version();
// Include directories for NVRTC: env RANC_CUDA_INCLUDE (':'-separated; a dir's
// `cccl` subfolder is added when present) or the include folder of the toolkit the
// NVRTC library was loaded from, CUDA_PATH, /usr/local/cuda. Each one holds cub/
// either directly or under cccl/.
std::vector<std::string> cuda_include_dirs();
// ranc's template headers embedded at build time (empty when the runtime was built
// without ranc_templates), and a hash identifying that bundle.
const std::vector<JitHeader>& embedded_headers();
std::string template_bundle_hash();
// Where sources that failed to compile are written: <cache dir>/failed, or a
// ranc-jit folder in the temp directory when the disk cache is off.
std::filesystem::path jit_dump_dir();

}  // namespace ranc::rt
