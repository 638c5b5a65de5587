// NULLs and the operators lowered to the others (outer joins, union all, distinct
// aggregates, scalar subqueries, substring; compiler/src/passes/lower_*.cpp) on the GPU,
// compared with the CPU reference: every program of sql_programs.h over relations l and r
// with NULLs in keys and values, at awkward sizes (0, 1, 33, one block and a half, many
// blocks) and NULL rates (none, some, all), fused and unfused, with each join algorithm and
// with grouping by sorting. Every plan is compiled up front on all cores.
// RANC_NULLS_QUICK=1 runs fewer sizes and NULL rates (for compute-sanitizer). Also: a session
// holding nullable relations, and integer sums that leave the i64 range.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "gpu_test_util.h"
#include "ranc/frontend/ra_parser.h"
#include "ranc/ra_ops/ra_ops.h"
#include "ranc/runtime/device.h"
#include "ranc/runtime/kernel_cache.h"
#include "ranc/session.h"
#include "sql_programs.h"

namespace ranc::gputest {
namespace {

struct Variant {
  const char* name;
  codegen::CodegenOptions options;
};
const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = {
      {"fused", {}},
      {"unfused", {.fusion = false}},
      {"hash joins", {.join = codegen::JoinAlgorithm::Hash}},
      {"sort-merge joins", {.join = codegen::JoinAlgorithm::SortMerge}},
      {"sort grouping", {.group_by = codegen::GroupBy::Sort}},
  };
  return v;
}

TEST(GpuNulls, SqlProgramsMatchTheReference) {
  RANC_REQUIRE_GPU();
  std::vector<Program> programs;
  for (const sqltest::Case& c : sqltest::kCases)
    programs.push_back(check(parse_ra(std::string(sqltest::kDecl) + c.body, "t.ra").program));
  // Compile every (program, variant) on every core first.
  std::vector<rt::Plan> plans;
  for (const Program& p : programs)
    for (const Variant& v : variants()) plans.push_back(codegen::generate_plan(p, v.options));
  const int arch = rt::find_gpu(0)->arch();
  std::atomic<size_t> next{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t)
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < plans.size();) try {
          (void)rt::compile_plan(plans[i], arch, rt::KernelCache::global());
        } catch (const std::exception& e) {
          ++failed;
          std::printf("compile of %s failed: %s\n", sqltest::kCases[i / variants().size()].name,
                      e.what());
        }
    });
  for (auto& t : pool) t.join();
  ASSERT_EQ(failed.load(), 0);

  // RANC_NULLS_QUICK=1 (for compute-sanitizer): fewer sizes and NULL rates.
  const bool quick = std::getenv("RANC_NULLS_QUICK") != nullptr;
  const std::vector<int64_t> sizes =
      quick ? std::vector<int64_t>{0, 33, 3073} : std::vector<int64_t>{0, 1, 33, 3073, 40000};
  const std::vector<double> rates = quick ? std::vector<double>{0.3} : std::vector<double>{0, 0.3, 1};
  int runs = 0;
  for (int64_t rows : sizes)
    for (double rate : rates) {
      if (rows <= 1 && rate == 0.3 && !quick) continue;
      const sqltest::Bindings in = sqltest::random_lr(rows, rate, 7 + static_cast<uint64_t>(rows));
      for (size_t c = 0; c < programs.size(); ++c) {
        const Reference ref = reference(programs[c], in);
        for (const Variant& v : variants()) {
          ++runs;
          EXPECT_EQ(compare_with_reference(programs[c], in, ref, v.options), "")
              << sqltest::kCases[c].name << ", " << rows << " rows, NULL rate " << rate << ", "
              << v.name;
        }
      }
    }
  std::printf("%zu programs x %zu variants: %d runs\n", programs.size(), variants().size(), runs);
}

// Integer sums are exact or an error (program.h): on every reduce path.
TEST(GpuNulls, IntegerSumOverflowIsAnErrorOnEveryPath) {
  RANC_REQUIRE_GPU();
  const Schema s{{{"g", Type::I32}, {"v", Type::I64}}, 0};
  const int64_t big = std::numeric_limits<int64_t>::max() / 3 + 1;
  std::vector<std::vector<Value>> rows;
  for (int i = 0; i < 3000; ++i) rows.push_back({Value::i32(i % 2), Value::i64(i < 6 ? big : 1)});
  // Comes back into range: exact.
  std::vector<std::vector<Value>> back = rows;
  back.push_back({Value::i32(0), Value::i64(-big)});
  back.push_back({Value::i32(0), Value::i64(-big)});
  for (const char* q : {"q = t |> reduce s = sum(v);", "q = t |> reduce by g s = sum(v);",
                        "q = t |> sort g |> reduce by g s = sum(v);"})
    for (const Variant& v : variants()) {
      Program p = check(parse_ra(std::string("input t(g i32, v i64);\n") + q + "\noutput q;", "t.ra")
                            .program);
      Inputs over = {{"t", HostRelation::from_rows(s, rows)}};
      EXPECT_THROW(execute_reference(p, over), UserError) << q;
      std::string d = run_and_compare(p, over, v.options);
      EXPECT_EQ(d, "") << q << " " << v.name;
      Inputs ok = {{"t", HostRelation::from_rows(s, back)}};
      EXPECT_EQ(run_and_compare(p, ok, v.options), "") << q << " " << v.name;
    }
}

// A session keeps nullable relations resident with their validity; programs over them
// (and a program declaring the attribute not nullable) behave as on the CPU.
TEST(GpuNulls, SessionWithNullableRelations) {
  RANC_REQUIRE_GPU();
  sqltest::Bindings in = sqltest::random_lr(5000, 0.25, 99);
  SessionOptions gpu_options, cpu_options;
  gpu_options.gpu = true;
  cpu_options.gpu = false;
  Session gpu(gpu_options);
  Session cpu(cpu_options);
  for (auto& [n, r] : in) {
    gpu.add(n, r);
    cpu.add(n, r);
  }
  for (const sqltest::Case& c : sqltest::kCases) {
    std::string text = std::string(sqltest::kDecl) + c.body;
    SessionResult g, h;
    std::string ge, he;
    try {
      g = gpu.run(text);
    } catch (const UserError& e) {
      ge = e.what();
    }
    try {
      h = cpu.run(text);
    } catch (const UserError& e) {
      he = e.what();
    }
    ASSERT_EQ(ge.empty(), he.empty()) << c.name << ": " << ge << " | " << he;
    if (!ge.empty()) continue;
    ASSERT_EQ(g.outputs.size(), h.outputs.size());
    for (size_t i = 0; i < g.outputs.size(); ++i)
      EXPECT_EQ(compare_outputs(g.outputs[i].first, g.outputs[i].second, h.outputs[i].second, {},
                                false, 1e-9),
                "")
          << c.name;
  }
  // The attribute declared not nullable over a resident nullable one: a clear error.
  EXPECT_THROW(gpu.run("input l(k i32, x string null, u f64);\nq = l |> select k > 1;\noutput q;"),
               UserError);
}

}  // namespace
}  // namespace ranc::gputest
