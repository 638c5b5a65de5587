// Ahead-of-time packages (.rancpkg): a compiled program that runs with no NVRTC
// compile. `ranc build PROG.ra -o PROG.rancpkg [--arch 90,80]` writes one; `ranc run
// PROG.rancpkg` and the embedding API (install_package_cubin + Executor::run) run it.
//
// A package holds the serialized execution plan (plan.h, including its CUDA source,
// so a JIT compile remains possible), one CUBIN per GPU architecture it was built
// for, the program's .ra text (the CPU reference runs it where there is no GPU), the
// ranc version and the NVRTC version that compiled it.
//
// Layout (little-endian): "RANCPKG\0", u32 format version, u64 body size, 32-byte
// SHA-256 of the body, then the body: length-prefixed fields (see package.cpp). Every
// read is bounds-checked: a truncated or damaged file, another format version or
// another ranc version is a UserError(Data) naming the file and what is wrong, never
// a crash. A package without a CUBIN for the GPU's architecture is an error naming
// the architectures it has.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ranc/runtime/plan.h"

namespace ranc::rt {

// The package format's versions: 2: ReadSize::index_slot; 3: NULLs (nullable attributes,
// validity buffers), ValueCode and SubstringMap; 4: SortPairs::encoded (packed sort keys);
// 5: SizeExpr::fn, SortPairs::radix_bits (hash join partitions); 6: LoopEnd::split;
// 7: SortPairs::more_values; 8: SizeExpr::gate, Launch::alt_kernel; 9: Launch::device_sizes,
// LoopBegin::prologue; 10: Launch::whole_waves; 11: SortPairs::value_bytes;
// 12: LoopEnd::resident; 13: ResidentRounds::prologue; 14: ReadSize::when; 15: Launch::one_wave.
inline constexpr uint32_t kPackageFormatVersion = 15;

// This ranc's version (the CMake project version), e.g. "0.1.0"; packages record it.
std::string_view ranc_version();

struct Package {
  std::string ranc_version;   // e.g. "0.1.0"; must equal the reader's
  std::string nvrtc_version;  // the NVRTC that compiled the CUBINs, e.g. "13.0"
  std::string program_name;   // the .ra file it was built from
  std::string program_text;   // its text
  Plan plan;
  std::vector<std::pair<int, std::vector<char>>> cubins;  // (arch, e.g. 90; CUBIN)

  // The CUBIN for `arch`, or nullptr.
  const std::vector<char>* cubin_for(int arch) const;
  // "sm_80, sm_90"
  std::string arch_list() const;
};

// The plan as bytes and back (deserialize_plan checks every length and tag; a bad
// input is UserError(Data) naming `what`).
std::string serialize_plan(const Plan& plan);
Plan deserialize_plan(std::string_view bytes, const std::string& what = "plan");

std::string encode_package(const Package& pkg);
Package decode_package(std::string_view bytes, const std::string& what);
// Written to a temporary file, then renamed.
void write_package(const std::string& path, const Package& pkg);
Package read_package(const std::string& path);
// Whether the file starts with the package magic bytes.
bool is_package_file(const std::string& path);

// Makes the kernel cache serve pkg's CUBIN for `arch` to the executor (the memory
// cache entry of the plan's source and options), so Executor::run compiles nothing.
// Throws UserError(Data) when the package has no CUBIN for `arch`.
void install_package_cubin(const Package& pkg, int arch);

}  // namespace ranc::rt
