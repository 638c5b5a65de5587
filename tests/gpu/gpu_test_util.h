// Helpers of the GPU tests: random relations with controlled key distributions, running
// a program on the GPU and on the CPU reference, and comparing the outputs.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ranc/codegen/codegen.h"
#include "ranc/data/host_relation.h"
#include "ranc/ir/program.h"
#include "ranc/runtime/executor.h"

namespace ranc::gputest {

enum class Dist { Unique, Duplicates, Zipf, NoMatch, AllMatch };
const char* dist_name(Dist d);

// Keys for n rows: Unique = a permutation of 0..n-1; Duplicates = uniform in [0, n/8];
// Zipf = skewed (s = 1.2) over [0, n/4] (other_side: unique, so joins stay linear); NoMatch = even
// keys (the other side gets odd ones, see `other_side`); AllMatch = uniform in [0, domain).
std::vector<int64_t> make_keys(Dist d, int64_t n, std::mt19937_64& rng, bool other_side = false,
                               int64_t domain = 0);

// A column of `type` from integer keys (strings as zero-padded decimal text, floats
// as key / 4, bools as key parity, dates as days).
Column column_from_keys(Type type, const std::vector<int64_t>& keys);
// A random column of `type`.
Column random_column(Type type, int64_t n, std::mt19937_64& rng);

HostRelation make_relation(const Schema& schema, std::vector<Column> columns);

using Inputs = std::vector<std::pair<std::string, HostRelation>>;

// Runs `checked` on the GPU and with execute_reference and compares every output
// (exactly, floats within a relative tolerance; as multisets unless the output is
// ordered). Returns an empty string when they agree, else a description.
// `stats`, when given, receives the GPU run's statistics.
std::string run_and_compare(const Program& checked, const Inputs& inputs,
                            const codegen::CodegenOptions& options = {},
                            rt::RunStats* stats = nullptr);

// The CPU reference's outputs of `checked` over `inputs`, or its error (non-empty when it
// fails with a UserError, as a program whose run is an error does).
struct Reference {
  std::vector<HostRelation> outputs;
  std::string error;
};
Reference reference(const Program& checked, const Inputs& inputs);

// run_and_compare with the reference's outputs (or its error, `ref_error` non-empty)
// computed once by the caller, for several option sets over the same inputs.
std::string compare_with_reference(const Program& checked, const Inputs& inputs,
                                   const std::vector<HostRelation>& ref,
                                   const std::string& ref_error,
                                   const codegen::CodegenOptions& options = {},
                                   rt::RunStats* stats = nullptr);
inline std::string compare_with_reference(const Program& checked, const Inputs& inputs,
                                          const Reference& ref,
                                          const codegen::CodegenOptions& options = {},
                                          rt::RunStats* stats = nullptr) {
  return compare_with_reference(checked, inputs, ref.outputs, ref.error, options, stats);
}

// Compares one output of the GPU with the reference's: exactly, floats within the
// relative tolerance `tol`; as a multiset unless `ordered`. Ordered outputs follow
// the reference row by row, except that rows tying on all the order attributes
// (`order`: their indices) may come in any order. Empty when they agree.
std::string compare_outputs(const std::string& name, const HostRelation& gpu,
                            const HostRelation& ref, const std::vector<size_t>& order, bool ordered,
                            double tol);

// Skips the current test when there is no GPU.
bool have_gpu();
#define RANC_REQUIRE_GPU()                                      \
  do {                                                          \
    if (!::ranc::gputest::have_gpu()) GTEST_SKIP() << "no GPU"; \
  } while (0)

}  // namespace ranc::gputest
