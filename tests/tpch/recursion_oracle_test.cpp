// Recursion checked against an engine we did not write: transitive closure and same
// generation in `.ra` (fixpoint) on seeded random graphs, run by the CPU reference and,
// when there is a GPU, by the GPU executor, and compared with SQLite's WITH RECURSIVE
// (UNION, so set semantics, as the fixpoint has) on the same data.
#include <gtest/gtest.h>

#include <random>

#include "ranc/codegen/codegen.h"
#include "ranc/frontend/ra_parser.h"
#include "ranc/ra_ops/ra_ops.h"
#include "sqlite_oracle.h"
#ifdef RANC_RECURSION_GPU
#include "ranc/runtime/errors.h"
#include "ranc/runtime/executor.h"
#endif

namespace ranc::testing {
namespace {

struct Case {
  const char* name;
  const char* ra;
  const char* sql;
  Schema result;
};

const Case kCases[] = {
    {"transitive_closure",
     R"(input edges(src i32, dst i32);
        fixpoint {
          tc = edges;
          tc = tc |> join (edges |> project src as mid, dst as to) on dst = mid
                  |> project src, to as dst;
        }
        output tc;)",
     R"(WITH RECURSIVE tc(src, dst) AS (
          SELECT src, dst FROM edges
          UNION
          SELECT tc.src, edges.dst FROM tc JOIN edges ON tc.dst = edges.src)
        SELECT src, dst FROM tc)",
     Schema{{{"src", Type::I32}, {"dst", Type::I32}}, 0}},
    {"same_generation",
     R"(input edges(src i32, dst i32);
        fixpoint {
          sg = edges |> join (edges |> project src as c2, dst as p2) on dst = p2
                     |> select src <> c2 |> project src as x, c2 as y;
          sg = edges |> join sg on dst = x
                     |> join (edges |> project src as c2, dst as p2) on y = p2
                     |> project src as x, c2 as y;
        }
        output sg;)",
     R"(WITH RECURSIVE sg(x, y) AS (
          SELECT a.src, b.src FROM edges a JOIN edges b ON a.dst = b.dst WHERE a.src <> b.src
          UNION
          SELECT a.src, b.src FROM edges a JOIN sg ON a.dst = sg.x JOIN edges b ON sg.y = b.dst)
        SELECT x, y FROM sg)",
     Schema{{{"x", Type::I32}, {"y", Type::I32}}, 0}},
};

HostRelation random_edges(int64_t nodes, int64_t edges, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(nodes - 1));
  HostRelation r(Schema{{{"src", Type::I32}, {"dst", Type::I32}}, 0});
  for (int64_t i = 0; i < edges; ++i) r.append_row({Value::i32(pick(rng)), Value::i32(pick(rng))});
  return r;
}

TEST(RecursionOracle, CpuReferenceAndGpuMatchSqliteWithRecursive) {
  const std::pair<int64_t, int64_t> graphs[] = {{40, 45}, {150, 160}, {300, 290}};
  for (const Case& c : kCases) {
    Program checked = check(parse_ra(c.ra, std::string(c.name) + ".ra").program);
    for (auto [nodes, m] : graphs) {
      HostRelation edges = random_edges(nodes, m, static_cast<uint64_t>(nodes * 7 + m));
      SqliteDb db;
      db.load("edges", edges);
      HostRelation want = db.query(c.sql, c.result);
      SCOPED_TRACE(std::string(c.name) + " nodes " + std::to_string(nodes));
      std::vector<HostRelation> cpu = execute_reference(checked, {{"edges", edges}});
      ASSERT_EQ(cpu.size(), 1u);
      Comparison cmp = compare_results(want, cpu[0], false);
      EXPECT_TRUE(cmp) << "CPU reference vs SQLite:\n" << cmp.diff;
#ifdef RANC_RECURSION_GPU
      static rt::Executor* executor = new rt::Executor();
      try {
        rt::RunResult r = executor->run(codegen::generate_plan(checked), {{"edges", &edges}});
        Comparison g = compare_results(want, r.outputs.at(0).second, false);
        EXPECT_TRUE(g) << "GPU vs SQLite:\n" << g.diff;
      } catch (const rt::NoGpuError&) {
        // No GPU here: the CPU comparison above still ran.
      }
#endif
    }
  }
}

}  // namespace
}  // namespace ranc::testing
