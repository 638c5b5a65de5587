// The TPC-H examples (examples/tpch/qN.ra) checked against SQLite: for each query,
// parse and check the .ra file, run it with ranc on the SF 0.01 tables, run the same
// query in SQL (examples/tpch/sql/qN.sql) in SQLite on the same tables and compare
// the results (floats within a relative 1e-9, everything else exactly; in order
// where the query sorts).
//   TpchRaCpu: ranc's CPU reference executor (runs everywhere, in CI).
//   TpchRaGpu: the generated plan on the GPU (codegen + runtime); skips without a GPU.
// Both skip when the data cannot be generated (tpchgen-cli not installed).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ranc/passes/push_selects.h"
#include "ranc/frontend/ra_parser.h"
#include "ranc/ir/program.h"
#include "ranc/ra_ops/ra_ops.h"
#include "sqlite_oracle.h"
#include "tpch_data.h"
#include "tpch_queries.h"

#ifdef RANC_TPCH_RA_GPU
#include "ranc/codegen/codegen.h"
#include "ranc/runtime/device.h"
#include "ranc/runtime/errors.h"
#include "ranc/runtime/executor.h"
#include "ranc/runtime/memory.h"
#include "ranc/session.h"
#endif

#ifndef RANC_SOURCE_DIR
#error "RANC_SOURCE_DIR must name the source tree (target_compile_definitions)"
#endif

namespace ranc::testing {
namespace {

std::string ra_path(int number) {
  return std::string(RANC_SOURCE_DIR) + "/examples/tpch/q" + std::to_string(number) + ".ra";
}

// SF 0.01 tables and a SQLite database holding them, made once for the whole run
// (shared by the CPU and the GPU suites). SQLite's answers are cached per query.
struct SharedData {
  std::optional<std::string> skip_reason;
  TpchTables tables;
  std::unique_ptr<SqliteDb> db;
  std::map<int, HostRelation> sqlite_results;

  static SharedData& get() {
    static SharedData* d = [] {
      auto* s = new SharedData();
      std::string why;
      auto dir = tpch_data_dir("0.01", &why);
      if (!dir) {
        s->skip_reason = why;
        return s;
      }
      s->tables = load_tpch(*dir);
      s->db = std::make_unique<SqliteDb>();
      s->db->load(s->tables);
      return s;
    }();
    return *d;
  }

  const HostRelation& sqlite_result(const TpchQuery& q) {
    auto it = sqlite_results.find(q.number);
    if (it == sqlite_results.end())
      it = sqlite_results.emplace(q.number, run_sqlite_query(*db, q)).first;
    return it->second;
  }
};

// A parsed and checked .ra query with the tables it reads.
struct RaQuery {
  ParsedProgram parsed;
  Program checked;
  std::vector<std::pair<std::string, HostRelation>> inputs;
};

// Parses and checks examples/tpch/qN.ra and binds its inputs to the loaded tables.
// Reports failures through gtest (check ::testing::Test::HasFatalFailure()).
void load_ra_query(const TpchQuery& q, const TpchTables& tables, RaQuery& out) {
  const std::string path = ra_path(q.number);
  std::ifstream f(path, std::ios::binary);
  ASSERT_TRUE(f) << "cannot read " << path;
  std::stringstream text;
  text << f.rdbuf();
  const std::string source = text.str();
  try {
    out.parsed = parse_ra(source, path);
  } catch (const UserError& e) {
    FAIL() << "parse errors in " << path << ":\n" << render_diagnostics(e, source);
  }
  try {
    out.checked = check(out.parsed.program);
  } catch (const UserError& e) {
    FAIL() << "check errors in " << path << ":\n" << render_diagnostics(e, out.parsed.source);
  }

  // One output, with the schema the harness expects (names and types, in order).
  std::vector<NodeId> outs = out.checked.outputs();
  ASSERT_EQ(outs.size(), 1u) << path << " should have exactly one output";
  const Schema& got = out.checked.node(outs[0]).schema;
  EXPECT_EQ(got.attributes, q.result.attributes)
      << path << ": output schema " << got.str() << ", the SQL's is " << q.result.str();

  // Every input is a TPC-H table declared `from "<table>.tbl"`; bind the loaded one.
  for (const RaInputSpec& spec : out.parsed.input_files) {
    EXPECT_EQ(spec.path, spec.relation + ".tbl") << path << ": input " << spec.relation;
    EXPECT_EQ(spec.format, "tbl") << path << ": input " << spec.relation;
  }
  for (NodeId id : out.checked.inputs()) {
    const std::string& name = out.checked.node(id).name;
    auto it = tables.find(name);
    ASSERT_NE(it, tables.end()) << path << ": input '" << name << "' is not a TPC-H table";
    out.inputs.emplace_back(name, it->second);
  }
}

void expect_matches_sqlite(const TpchQuery& q, const HostRelation& expected,
                           const HostRelation& actual, const char* engine) {
  // A query that selects nothing at SF 0.01 would make the comparison vacuous.
  EXPECT_GT(expected.num_rows(), 0u) << "Q" << q.number << ": SQLite's result is empty";
  Comparison c = compare_results(expected, actual, q.compare);
  EXPECT_TRUE(c.equal) << "Q" << q.number << " (" << engine << ") differs from SQLite:\n"
                       << c.diff << "\nexpected (SQLite):\n"
                       << expected.to_table(30) << "\nactual (ranc " << engine << "):\n"
                       << actual.to_table(30);
}

std::string query_name(const ::testing::TestParamInfo<int>& info) {
  std::string name = "Q";
  name += std::to_string(info.param);
  return name;
}

std::vector<int> query_numbers() {
  std::vector<int> v;
  for (const auto& q : tpch_queries()) v.push_back(q.number);
  return v;
}

// ---------------------------------------------------------------------------
// CPU reference executor

class TpchRaCpu : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    SharedData& d = SharedData::get();
    if (d.skip_reason) GTEST_SKIP() << "SKIPPED: " << *d.skip_reason;
  }
};

TEST_P(TpchRaCpu, MatchesSqlite) {
  const TpchQuery& q = tpch_query(GetParam());
  SharedData& d = SharedData::get();
  RaQuery rq;
  load_ra_query(q, d.tables, rq);
  if (HasFatalFailure()) return;

  std::vector<HostRelation> results;
  try {
    results = execute_reference(rq.checked, rq.inputs);
  } catch (const UserError& e) {
    FAIL() << "Q" << q.number << ": the reference executor failed:\n"
           << render_diagnostics(e, rq.parsed.source);
  }
  ASSERT_EQ(results.size(), 1u);
  expect_matches_sqlite(q, d.sqlite_result(q), results[0], "CPU reference");
}

// The query after push_selects (selects moved below joins and projects) gives the same
// result on the CPU reference: the rewrite's oracle on the queries' own shapes.
TEST_P(TpchRaCpu, PushedSelectsMatchSqlite) {
  const TpchQuery& q = tpch_query(GetParam());
  SharedData& d = SharedData::get();
  RaQuery rq;
  load_ra_query(q, d.tables, rq);
  if (HasFatalFailure()) return;
  const Program pushed = passes::push_selects(rq.checked);
  std::vector<HostRelation> results;
  try {
    results = execute_reference(pushed, rq.inputs);
  } catch (const UserError& e) {
    FAIL() << "Q" << q.number << ": the reference executor failed on the pushed program:\n"
           << e.what() << "\n" << print_program(pushed);
  }
  ASSERT_EQ(results.size(), 1u);
  expect_matches_sqlite(q, d.sqlite_result(q), results[0], "CPU reference after push_selects");
}

INSTANTIATE_TEST_SUITE_P(Tpch, TpchRaCpu, ::testing::ValuesIn(query_numbers()), query_name);

// ---------------------------------------------------------------------------
// GPU: the generated plan run by the runtime's executor

class TpchRaGpu : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
#ifdef RANC_TPCH_RA_GPU
    if (!rt::gpu_available()) GTEST_SKIP() << "SKIPPED: no GPU (" << rt::no_gpu_reason() << ")";
#else
    GTEST_SKIP() << "SKIPPED: built without the GPU runtime";
#endif
    SharedData& d = SharedData::get();
    if (d.skip_reason) GTEST_SKIP() << "SKIPPED: " << *d.skip_reason;
  }
};

TEST_P(TpchRaGpu, MatchesSqlite) {
#ifdef RANC_TPCH_RA_GPU
  const TpchQuery& q = tpch_query(GetParam());
  SharedData& d = SharedData::get();
  RaQuery rq;
  load_ra_query(q, d.tables, rq);
  if (HasFatalFailure()) return;

  std::map<std::string, const HostRelation*> inputs;
  for (const auto& [name, rel] : rq.inputs) inputs[name] = &rel;
  static rt::Executor* executor = new rt::Executor();  // one per run: its pool and modules
  // Fused (the default), unfused, and with hash joins (--join=hash) whose global reduces fold
  // their matches (CodegenOptions::fold_hash_joins): the same results.
  const std::vector<std::pair<const char*, codegen::CodegenOptions>> variants = {
      {"GPU fused", {}},
      {"GPU unfused", {.fusion = false}},
      {"GPU hash joins, folded", {.join = codegen::JoinAlgorithm::Hash, .fold_hash_joins = true}}};
  for (const auto& [what, options] : variants) {
    rt::Plan plan = codegen::generate_plan(rq.checked, options);
    rt::RunResult r;
    try {
      r = executor->run(plan, inputs);
    } catch (const UserError& e) {
      FAIL() << "Q" << q.number << " " << what << ": the GPU run failed:\n"
             << render_diagnostics(e, rq.parsed.source);
    }
    ASSERT_EQ(r.outputs.size(), 1u);
    expect_matches_sqlite(q, d.sqlite_result(q), r.outputs[0].second, what);
  }
#endif
}

// Memory faults with the tables resident (issue 10): a session holds every table the
// query reads; an allocation failure is injected at each allocation of the query in
// turn. Each run either throws the typed OutOfMemoryError naming what the memory was
// for and its size, or returns SQLite's answer; afterwards the device memory in use is
// back to what the resident tables hold (nothing leaked) and the session still answers
// correctly.
TEST_P(TpchRaGpu, AllocationFailureAtEveryAllocation) {
#ifdef RANC_TPCH_RA_GPU
  const TpchQuery& q = tpch_query(GetParam());
  SharedData& d = SharedData::get();
  RaQuery rq;
  load_ra_query(q, d.tables, rq);
  if (HasFatalFailure()) return;
  const HostRelation& want = d.sqlite_result(q);

  SessionOptions so;
  so.gpu = true;
  Session s(so);
  for (const auto& [name, rel] : rq.inputs) s.add(name, rel);
  const std::string& text = rq.parsed.source;
  auto run_ok = [&](const char* when) {
    SessionResult r = s.run(text, ra_path(q.number));
    ASSERT_EQ(r.outputs.size(), 1u);
    expect_matches_sqlite(q, want, r.outputs[0].second, when);
  };
  run_ok("GPU session");  // compiles, and settles what the executor keeps between runs
  if (HasFatalFailure()) return;
  const int64_t resident = s.device_bytes_in_use();
  const int64_t before = rt::allocation_calls();
  run_ok("GPU session, second run");
  const int64_t calls = rt::allocation_calls() - before;
  ASSERT_GT(calls, 0) << "Q" << q.number << " allocated nothing";
  EXPECT_EQ(s.device_bytes_in_use(), resident);

  int64_t failed = 0;
  for (int64_t k = 0; k < calls; ++k) {
    rt::inject_allocation_failure(k);
    try {
      // The allocation was not made this time (e.g. a size-dependent path): the result
      // must still be right.
      run_ok("GPU session, injected failure unused");
    } catch (const rt::OutOfMemoryError& e) {
      ++failed;
      const std::string msg = e.what();
      EXPECT_FALSE(e.operator_name().empty()) << msg;
      EXPECT_NE(msg.find(e.operator_name()), std::string::npos) << msg;
      EXPECT_NE(msg.find("injected allocation failure"), std::string::npos) << msg;
      EXPECT_GE(e.bytes_requested(), 0) << msg;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "Q" << q.number << ": allocation " << k << " of " << calls
                    << " failed with another error: " << e.what();
    }
    rt::inject_allocation_failure(-1);
    ASSERT_EQ(s.device_bytes_in_use(), resident)
        << "Q" << q.number << ": device memory leaked after a failure at allocation " << k;
    if (HasFailure()) return;
  }
  EXPECT_GT(failed, 0);
  run_ok("GPU session after the failures");
  EXPECT_EQ(s.device_bytes_in_use(), resident);
  RecordProperty("allocations", std::to_string(calls));
  RecordProperty("failed_runs", std::to_string(failed));
#endif
}

INSTANTIATE_TEST_SUITE_P(Tpch, TpchRaGpu, ::testing::ValuesIn(query_numbers()), query_name);

}  // namespace
}  // namespace ranc::testing
