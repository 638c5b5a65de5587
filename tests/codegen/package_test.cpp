// Ahead-of-time packages (ranc/runtime/package.h), without a GPU: the plans of the
// TPC-H examples survive serialization byte for byte; a package round-trips; every
// truncation, a flipped byte, another format or ranc version are clear errors; a
// package's CUBIN is served by the kernel cache with no NVRTC compile; a missing
// architecture is an error naming the ones the package has.
#include <gtest/gtest.h>

#include <tuple>

#include <algorithm>
#include <filesystem>
#include <string>

#include "ranc/codegen/codegen.h"
#include "ranc/data/error.h"
#include "ranc/frontend/ra_parser.h"
#include "ranc/ir/program.h"

#ifdef RANC_HAVE_RUNTIME
#include "ranc/runtime/executor.h"
#include "ranc/runtime/kernel_cache.h"
#include "ranc/runtime/package.h"

namespace ranc {
namespace {

namespace fs = std::filesystem;

std::string example(const std::string& q) {
  return std::string(RANC_TEMPLATE_DIR) + "/../../examples/tpch/" + q + ".ra";
}

rt::Plan plan_of(const std::string& q, codegen::CodegenOptions o = {}) {
  ParsedProgram p = parse_ra_file(example(q));
  return codegen::generate_plan(check(p.program), o);
}

rt::Package small_package() {
  rt::Package pkg;
  pkg.ranc_version = "0.1.0";
  pkg.nvrtc_version = "13.0";
  pkg.program_name = "q6.ra";
  pkg.program_text = "-- the text\n";
  pkg.plan = plan_of("q6");
  pkg.cubins.emplace_back(90, std::vector<char>{'\x7f', 'E', 'L', 'F', 1, 2, 3});
  pkg.cubins.emplace_back(80, std::vector<char>{'\x7f', 'E', 'L', 'F', 4});
  return pkg;
}

TEST(Package, PlansSurviveSerialization) {
  for (const char* q : {"q1", "q3", "q4", "q5", "q6", "q10", "q12", "q13", "q14", "q16", "q19",
                        "q22"}) {
    for (bool fusion : {true, false}) {
      rt::Plan p = plan_of(q, {.fusion = fusion});
      const std::string bytes = rt::serialize_plan(p);
      rt::Plan back = rt::deserialize_plan(bytes);
      EXPECT_EQ(rt::serialize_plan(back), bytes) << q;
      EXPECT_EQ(back.source, p.source) << q;
      EXPECT_EQ(back.kernels, p.kernels) << q;
      EXPECT_EQ(back.steps.size(), p.steps.size()) << q;
      EXPECT_EQ(back.buffers.size(), p.buffers.size()) << q;
      EXPECT_EQ(back.inputs.size(), p.inputs.size()) << q;
      ASSERT_FALSE(back.inputs.empty()) << q;
      EXPECT_EQ(back.inputs[0].schema, p.inputs[0].schema) << q;
      EXPECT_EQ(back.node_names, p.node_names) << q;
      // The kernel cache sees the same request, so a package's CUBIN matches the plan.
      EXPECT_EQ(rt::KernelCache::key_for(rt::plan_jit_request(back, 90)),
                rt::KernelCache::key_for(rt::plan_jit_request(p, 90)))
          << q;
    }
  }
}

// A hash join's gated sizes (SizeExpr::gate) and its launch's global-table specialisation
// (Launch::alt_kernel) come back from serialization.
TEST(Package, HashJoinGatesAndAltKernelsSurvive) {
  const rt::Plan p = plan_of("q3", {.join = codegen::JoinAlgorithm::Hash});
  const rt::Plan back = rt::deserialize_plan(rt::serialize_plan(p));
  ASSERT_EQ(back.steps.size(), p.steps.size());
  int gates = 0, alts = 0;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    if (const auto* z = std::get_if<rt::SetSize>(&p.steps[i]); z && z->value.gate >= 0) {
      const auto& b = std::get<rt::SetSize>(back.steps[i]).value;
      EXPECT_EQ(b.gate, z->value.gate);
      EXPECT_EQ(b.gate_min, z->value.gate_min);
      EXPECT_EQ(b.gate_max, z->value.gate_max);
      ++gates;
    }
    if (const auto* l = std::get_if<rt::Launch>(&p.steps[i]); l && l->alt_when >= 0) {
      const auto& b = std::get<rt::Launch>(back.steps[i]);
      EXPECT_EQ(b.alt_kernel, l->alt_kernel);
      EXPECT_EQ(b.alt_when, l->alt_when);
      ++alts;
    }
  }
  EXPECT_GT(gates, 0);
  EXPECT_GT(alts, 0);
}

// An 8-byte sort payload (CodegenOptions::sort_wide_payload): TPC-H Q17's group-by sorts
// (l_partkey, l_quantity) with the f64 as the sort's values and gathers nothing after it;
// value_bytes comes back from serialization. Off, the sort moves row ids (on is the default).
TEST(Package, EightByteSortValuesSurvive) {
  for (bool wide : {true, false}) {
    const rt::Plan p = plan_of("q17", {.sort_wide_payload = wide});
    const rt::Plan back = rt::deserialize_plan(rt::serialize_plan(p));
    ASSERT_EQ(back.steps.size(), p.steps.size());
    int eight = 0;
    for (size_t i = 0; i < p.steps.size(); ++i) {
      const auto* s = std::get_if<rt::SortPairs>(&p.steps[i]);
      if (!s) continue;
      EXPECT_EQ(std::get<rt::SortPairs>(back.steps[i]).value_bytes, s->value_bytes);
      eight += s->value_bytes == 8;
    }
    EXPECT_EQ(eight, wide ? 1 : 0);
    const bool gathers =
        std::find(p.kernels.begin(), p.kernels.end(), "n2_sorted") != p.kernels.end();
    EXPECT_EQ(gathers, !wide);
  }
}

// The hash group-by's phase 1 and its dense way's two bounds kernels (strided grids) launch in
// whole waves (Launch::whole_waves), its shared-memory tables (shared_run, and speculative_run,
// planned here; Q1's state of more than 4 words has no early_run) in one wave
// (Launch::one_wave); the flags come back from serialization, and no other launch of the plan
// has them.
TEST(Package, WholeWavesSurvive) {
  const rt::Plan p = plan_of("q1", {.hash_dense_speculate = true, .hash_dense_early = true});
  const rt::Plan back = rt::deserialize_plan(rt::serialize_plan(p));
  ASSERT_EQ(back.steps.size(), p.steps.size());
  int waves = 0, one_wave = 0;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const auto* l = std::get_if<rt::Launch>(&p.steps[i]);
    if (!l) continue;
    EXPECT_EQ(std::get<rt::Launch>(back.steps[i]).whole_waves, l->whole_waves) << l->kernel;
    EXPECT_EQ(std::get<rt::Launch>(back.steps[i]).one_wave, l->one_wave) << l->kernel;
    EXPECT_EQ(l->one_wave, l->kernel.find("_dense_shared_run") != std::string::npos ||
                               l->kernel.find("_dense_spec_run") != std::string::npos ||
                               l->kernel.find("_dense_early_run") != std::string::npos)
        << l->kernel;
    one_wave += l->one_wave;
    EXPECT_EQ(l->whole_waves, (l->kernel.find("hash_reduce") != std::string::npos &&
                               l->kernel.find("hash_reduce_") == std::string::npos) ||
                                  l->kernel.find("_dense_record_bounds") != std::string::npos ||
                                  l->kernel.find("_dense_bounds") != std::string::npos)
        << l->kernel;
    waves += l->whole_waves;
  }
  EXPECT_EQ(waves, 3);
  EXPECT_EQ(one_wave, 2);
}

// A recursive program's loop keeps its split deltas (LoopEnd::split) through serialization.
TEST(Package, FixpointLoopsKeepTheirSplitDeltas) {
  for (const char* ex : {"transitive_closure", "same_generation"}) {
    ParsedProgram parsed = parse_ra_file(std::string(RANC_TEMPLATE_DIR) + "/../../examples/ra/" + ex + ".ra");
    rt::Plan p = codegen::generate_plan(check(parsed.program));
    const std::string bytes = rt::serialize_plan(p);
    rt::Plan back = rt::deserialize_plan(bytes);
    EXPECT_EQ(rt::serialize_plan(back), bytes) << ex;
    int loops = 0;
    for (size_t i = 0; i < p.steps.size(); ++i) {
      const auto* e = std::get_if<rt::LoopEnd>(&p.steps[i]);
      if (!e) continue;
      ++loops;
      const auto& b = std::get<rt::LoopEnd>(back.steps.at(i));
      ASSERT_FALSE(e->split.empty()) << ex;
      ASSERT_EQ(b.split.size(), e->split.size()) << ex;
      for (size_t t = 0; t < e->split.size(); ++t) {
        EXPECT_EQ(b.split[t].columns, e->split[t].columns) << ex;
        EXPECT_EQ(b.split[t].size, e->split[t].size) << ex;
      }
      // The resident rounds (both examples' recursive rules join the delta on the left) come
      // back field by field.
      ASSERT_TRUE(e->resident.has_value()) << ex;
      ASSERT_EQ(b.resident.has_value(), e->resident.has_value()) << ex;
      if (e->resident) {
        const rt::ResidentRounds &x = *e->resident, &y = *b.resident;
        EXPECT_EQ(y.kernel, x.kernel);
        EXPECT_EQ(y.args.size(), x.args.size());
        EXPECT_EQ(y.packing, x.packing);
        EXPECT_EQ(y.full, x.full);
        EXPECT_EQ(y.delta, x.delta);
        EXPECT_EQ(std::tie(y.full_size, y.delta_size, y.words, y.table, y.control, y.room, y.mask,
                           y.rounds, y.max_rows, y.search_full, y.prologue, y.control_words),
                  std::tie(x.full_size, x.delta_size, x.words, x.table, x.control, x.room, x.mask,
                           x.rounds, x.max_rows, x.search_full, x.prologue, x.control_words));
      }
    }
    EXPECT_EQ(loops, 1) << ex;
  }
}

// A plan with nullable inputs and outputs (validity buffers), a substring map and string
// value codes keeps them through serialization.
TEST(Package, NullsAndDictionaryMapsSurviveSerialization) {
  Program p = check(parse_ra("input t(k i32 null, s string null);\n"
                             "q = t |> project k, coalesce(substring(s, 1, 2), 'none') as c;\n"
                             "output q;",
                             "n.ra")
                        .program);
  rt::Plan plan = codegen::generate_plan(p);
  ASSERT_EQ(plan.inputs.size(), 1u);
  EXPECT_TRUE(plan.inputs[0].schema[0].nullable);
  EXPECT_GE(plan.inputs[0].validity_of(0), 0);
  const std::string bytes = rt::serialize_plan(plan);
  rt::Plan back = rt::deserialize_plan(bytes);
  EXPECT_EQ(rt::serialize_plan(back), bytes);
  EXPECT_EQ(back.inputs[0].schema, plan.inputs[0].schema);
  EXPECT_EQ(back.inputs[0].validity, plan.inputs[0].validity);
  EXPECT_EQ(back.outputs[0].validity, plan.outputs[0].validity);
  ASSERT_EQ(back.dict_params.size(), plan.dict_params.size());
  bool substring = false;
  for (size_t i = 0; i < back.dict_params.size(); ++i) {
    EXPECT_EQ(back.dict_params[i].kind, plan.dict_params[i].kind);
    if (back.dict_params[i].kind == rt::DictParam::Kind::SubstringMap) {
      substring = true;
      EXPECT_EQ(back.dict_params[i].from, 1);
      EXPECT_EQ(back.dict_params[i].length, 2);
    }
  }
  EXPECT_TRUE(substring);
}

TEST(Package, RoundTripAndArchitectures) {
  rt::Package pkg = small_package();
  rt::Package back = rt::decode_package(rt::encode_package(pkg), "p.rancpkg");
  EXPECT_EQ(back.program_name, "q6.ra");
  EXPECT_EQ(back.program_text, pkg.program_text);
  EXPECT_EQ(rt::serialize_plan(back.plan), rt::serialize_plan(pkg.plan));
  ASSERT_NE(back.cubin_for(80), nullptr);
  EXPECT_EQ(*back.cubin_for(80), pkg.cubins[1].second);
  EXPECT_EQ(back.cubin_for(75), nullptr);
  EXPECT_EQ(back.arch_list(), "sm_90, sm_80");

  const fs::path path = fs::temp_directory_path() / "ranc_package_test.rancpkg";
  rt::write_package(path.string(), pkg);
  EXPECT_TRUE(rt::is_package_file(path.string()));
  EXPECT_EQ(rt::encode_package(rt::read_package(path.string())), rt::encode_package(pkg));
  for (const auto& e : fs::directory_iterator(path.parent_path()))
    EXPECT_EQ(e.path().filename().string().find("ranc_package_test.rancpkg.tmp"), std::string::npos);
  fs::remove(path);
  EXPECT_FALSE(rt::is_package_file(example("q6")));
}

TEST(Package, DamageIsAnErrorNeverACrash) {
  const std::string good = rt::encode_package(small_package());
  auto expect_error = [](const std::string& bytes, const std::string& what,
                         const std::string& message) {
    try {
      (void)rt::decode_package(bytes, "p.rancpkg");
      ADD_FAILURE() << what << ": no error";
    } catch (const UserError& e) {
      EXPECT_EQ(e.diagnostics()[0].kind, ErrorKind::Data) << what;
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("p.rancpkg"), std::string::npos) << e.what();
    }
  };
  for (size_t n = 0; n < good.size(); n += (n < 200 ? 1 : 97))
    expect_error(good.substr(0, n), "truncated to " + std::to_string(n), "");
  for (size_t i = 52; i < good.size(); i += 89) {  // the body: the checksum catches it
    std::string bad = good;
    bad[i] ^= 0x20;
    expect_error(bad, "flipped byte " + std::to_string(i), "checksum mismatch");
  }
  std::string other_version = good;
  other_version[8] = static_cast<char>(rt::kPackageFormatVersion + 1);
  expect_error(other_version, "another format version",
               "package format version " + std::to_string(rt::kPackageFormatVersion + 1));
  expect_error("PK\3\4 a zip file", "not a package", "not a ranc package");

  rt::Package other = small_package();
  other.ranc_version = "9.9.9";
  expect_error(rt::encode_package(other), "ranc version", "built by ranc 9.9.9");

  // A body with a valid checksum but nonsense inside: still an error.
  rt::Plan plan;
  std::string bytes = rt::serialize_plan(small_package().plan);
  for (size_t n = 0; n < bytes.size(); n += 1 + n / 8) {
    try {
      (void)rt::deserialize_plan(bytes.substr(0, n));
      ADD_FAILURE() << "a plan cut to " << n << " bytes was accepted";
    } catch (const UserError&) {
    }
  }
}

TEST(Package, CubinServedWithoutCompiling) {
  rt::Package pkg = small_package();
  EXPECT_THROW(rt::install_package_cubin(pkg, 75), UserError);
  try {
    rt::install_package_cubin(pkg, 75);
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("sm_90, sm_80"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--arch 75"), std::string::npos) << e.what();
  }
  rt::install_package_cubin(pkg, 80);
  const int64_t misses = rt::KernelCache::global().stats().misses;
  rt::CacheLookup c = rt::compile_plan(pkg.plan, 80, rt::KernelCache::global());
  EXPECT_EQ(c.source, rt::CacheSource::Memory);
  EXPECT_EQ(*c.cubin, pkg.cubins[1].second);
  EXPECT_EQ(rt::KernelCache::global().stats().misses, misses);
}

}  // namespace
}  // namespace ranc
#endif
