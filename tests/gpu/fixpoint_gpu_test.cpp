// The fixpoint operator on the GPU (semi-naive loop, ra_ops/fixpoint/lowering.cpp) against
// the CPU reference's naive evaluation: seeded random graphs at awkward sizes, chains that
// need hundreds of iterations, cycles, self loops, an empty edge set, mutual and non-linear
// recursion, same generation, string and i64 node ids, the iteration limit, and the typed
// out-of-memory error naming the fixpoint and its iteration.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "gpu_test_util.h"
#include "ranc/frontend/ra_parser.h"
#include "ranc/runtime/errors.h"
#include "ranc/runtime/executor.h"
#include "ranc/runtime/memory.h"

namespace ranc::gputest {
namespace {

constexpr std::string_view kTc = R"(
input edges(src i32, dst i32);
fixpoint {
  tc = edges;
  tc = tc |> join (edges |> project src as mid, dst as to) on dst = mid |> project src, to as dst;
}
output tc;
)";

// The same closure written non-linearly (tc joined with itself): two recursive occurrences.
constexpr std::string_view kTcSquare = R"(
input edges(src i32, dst i32);
fixpoint {
  tc = edges;
  tc = tc |> join (tc |> project src as mid, dst as to) on dst = mid |> project src, to as dst;
}
output tc;
)";

// Same generation: x and y are of the same generation if they are siblings, or if their
// parents are.
constexpr std::string_view kSameGeneration = R"(
input parent(child i32, par i32);
fixpoint {
  sg = parent |> join (parent |> project child as c2, par as p2) on par = p2
              |> select child <> c2 |> project child as x, c2 as y;
  sg = parent |> join sg on par = x
              |> join (parent |> project child as c2, par as p2) on y = p2
              |> project child as x, c2 as y;
}
output sg;
)";

// Even and odd path lengths from the nodes in `start`: mutual recursion.
constexpr std::string_view kEvenOdd = R"(
input edges(src i32, dst i32);
input start(node i32);
fixpoint {
  odd = start |> join edges on node = src |> project dst as node;
  even = odd |> join edges on node = src |> project dst as node;
  odd = even |> join edges on node = src |> project dst as node;
}
output even;
output odd;
)";

Program parse_and_check(std::string_view text) {
  ParsedProgram parsed = parse_ra(text, "fixpoint_gpu_test.ra");
  return check(parsed.program);
}

Column id_column(Type t, const std::vector<int64_t>& ids) {
  if (t == Type::I32) return column_from_keys(Type::I32, ids);
  return column_from_keys(t, ids);
}

HostRelation graph(const std::vector<std::pair<int64_t, int64_t>>& edges, Type t = Type::I32,
                   const char* a = "src", const char* b = "dst") {
  std::vector<int64_t> s, d;
  for (auto [x, y] : edges) {
    s.push_back(x);
    d.push_back(y);
  }
  return make_relation(Schema{{{a, t}, {b, t}}, 0}, {id_column(t, s), id_column(t, d)});
}

std::vector<std::pair<int64_t, int64_t>> random_graph(int64_t nodes, int64_t edges, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, nodes - 1);
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t i = 0; i < edges; ++i) out.push_back({pick(rng), pick(rng)});
  return out;
}

std::vector<std::pair<int64_t, int64_t>> chain(int64_t n) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t i = 0; i + 1 < n; ++i) out.push_back({i, i + 1});
  return out;
}

TEST(GpuFixpoint, TransitiveClosureRandomGraphs) {
  RANC_REQUIRE_GPU();
  Program tc = parse_and_check(kTc);
  Program square = parse_and_check(kTcSquare);
  const std::vector<std::pair<int64_t, int64_t>> sizes = {{1, 1},     {2, 3},     {33, 31},
                                                          {97, 130},  {257, 255}, {600, 700},
                                                          {1000, 900}};
  for (auto [nodes, m] : sizes) {
    for (uint64_t seed : {1u, 2u}) {
      Inputs in{{"edges", graph(random_graph(nodes, m, seed * 1000 + static_cast<uint64_t>(m)))}};
      rt::RunStats stats;
      EXPECT_EQ(run_and_compare(tc, in, {}, &stats), "")
          << "linear, nodes " << nodes << " edges " << m << " seed " << seed;
      EXPECT_GE(stats.loop_iterations, 1);
      EXPECT_EQ(run_and_compare(square, in), "")
          << "non-linear, nodes " << nodes << " edges " << m << " seed " << seed;
    }
  }
}

TEST(GpuFixpoint, ChainsCyclesSelfLoopsAndNoEdges) {
  RANC_REQUIRE_GPU();
  Program tc = parse_and_check(kTc);
  auto cycle = chain(300);
  cycle.push_back({299, 0});
  const std::vector<std::vector<std::pair<int64_t, int64_t>>> graphs = {
      {}, {{5, 5}}, chain(2), chain(257), cycle, {{1, 2}, {2, 1}, {7, 8}, {9, 9}, {1, 2}}};
  for (size_t g = 0; g < graphs.size(); ++g) {
    rt::RunStats stats;
    EXPECT_EQ(run_and_compare(tc, {{"edges", graph(graphs[g])}}, {}, &stats), "") << "graph " << g;
    if (g == 3) EXPECT_GE(stats.loop_iterations, 255) << "a chain of 257 needs 255 iterations";
  }
}

TEST(GpuFixpoint, SameGenerationAndMutualRecursion) {
  RANC_REQUIRE_GPU();
  Program sg = parse_and_check(kSameGeneration);
  Program eo = parse_and_check(kEvenOdd);
  for (uint64_t seed : {3u, 4u, 5u}) {
    // A random forest: each node's parent is a smaller node.
    std::mt19937_64 rng(seed);
    std::vector<std::pair<int64_t, int64_t>> parent;
    for (int64_t c = 1; c < 400; ++c)
      parent.push_back({c, std::uniform_int_distribution<int64_t>(0, c - 1)(rng) / 2});
    EXPECT_EQ(run_and_compare(sg, {{"parent", graph(parent, Type::I32, "child", "par")}}), "")
        << "seed " << seed;
    auto edges = random_graph(300, 420, seed);
    HostRelation start = make_relation(Schema{{{"node", Type::I32}}, 0},
                                       {column_from_keys(Type::I32, {0, 1, 2})});
    EXPECT_EQ(run_and_compare(eo, {{"edges", graph(edges)}, {"start", start}}), "")
        << "seed " << seed;
  }
}

TEST(GpuFixpoint, StringAndWideIds) {
  RANC_REQUIRE_GPU();
  for (Type t : {Type::String, Type::I64}) {
    std::string text(kTc);
    text.replace(text.find("src i32, dst i32"), 16,
                 fmt::format("src {0}, dst {0}", t == Type::String ? "string" : "i64"));
    Program tc = parse_and_check(text);
    EXPECT_EQ(run_and_compare(tc, {{"edges", graph(random_graph(150, 170, 9), t)}}), "")
        << type_name(t);
  }
}

TEST(GpuFixpoint, IterationLimitMatchesTheReference) {
  RANC_REQUIRE_GPU();
  for (int64_t limit : {1, 2, 7}) {
    std::string text(kTc);
    text.replace(text.find("fixpoint {"), 10, fmt::format("fixpoint max {} {{", limit));
    Program tc = parse_and_check(text);
    rt::RunStats stats;
    EXPECT_EQ(run_and_compare(tc, {{"edges", graph(chain(40))}}, {}, &stats), "") << limit;
    EXPECT_EQ(stats.loop_iterations, limit);
  }
}

TEST(GpuFixpoint, OutOfMemoryNamesTheFixpointAndIteration) {
  RANC_REQUIRE_GPU();
  Program tc = parse_and_check(kTc);
  rt::Plan plan = codegen::generate_plan(tc);
  HostRelation edges = graph(chain(50));
  rt::Executor ex;
  // Count the allocations of a clean run, then fail one late in the run (inside the loop).
  const int64_t before = rt::allocation_calls();
  ex.run(plan, {{"edges", &edges}});
  const int64_t calls = rt::allocation_calls() - before;
  ASSERT_GT(calls, 20);
  rt::inject_allocation_failure(calls - 10);
  try {
    ex.run(plan, {{"edges", &edges}});
    FAIL() << "no error";
  } catch (const rt::OutOfMemoryError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("fixpoint"), std::string::npos) << what;
    EXPECT_NE(what.find("iteration"), std::string::npos) << what;
  }
  rt::inject_allocation_failure(-1);
}

}  // namespace
}  // namespace ranc::gputest
