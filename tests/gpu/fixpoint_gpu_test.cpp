// The fixpoint operator on the GPU (semi-naive loop, ra_ops/fixpoint/lowering.cpp) against
// the CPU reference's naive evaluation: seeded random graphs at awkward sizes, chains that
// need hundreds of iterations, cycles, self loops, an empty edge set, mutual and non-linear
// recursion, same generation, string and i64 node ids, the iteration limit, the typed
// out-of-memory error naming the fixpoint and its iteration, and rounds that run out of
// memory (a limit, an injected failure) splitting their deltas instead of failing.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <tuple>

#include "gpu_test_util.h"
#include "test_programs.h"
#include "ranc/frontend/ra_parser.h"
#include "ranc/passes/pass_runner.h"
#include "ranc/runtime/errors.h"
#include "ranc/runtime/executor.h"
#include "ranc/runtime/memory.h"

namespace ranc::gputest {
namespace {

using ranc::testing::kSameGeneration;
using ranc::testing::kTc;
using ranc::testing::kTcSquare;

// Paths of odd and of even length (two edges or more): mutual recursion over pairs.
constexpr std::string_view kOddEvenPaths = R"(
input edges(src i32, dst i32);
fixpoint {
  odd = edges;
  even = odd |> join (edges |> project src as mid, dst as to) on dst = mid |> project src, to as dst;
  odd = even |> join (edges |> project src as mid, dst as to) on dst = mid |> project src, to as dst;
}
output odd;
output even;
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

// The loop body's plan every round: the tests of its read-backs, splits and memory errors
// keep the resident rounds (rt::ResidentRounds) out of them.
codegen::CodegenOptions body_only() {
  codegen::CodegenOptions o;
  o.resident_rounds = false;
  return o;
}

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
    if (g == 3) {
      EXPECT_GE(stats.loop_iterations, 255) << "a chain of 257 needs 255 iterations";
    }
  }
}

// One wait for read-backs a round (rotate_loop_reads): a chain's closure takes about as many
// waits as rounds, where the count at the start of every round (the pass switched off) takes
// two a round; both match the reference, also on a cycle and a random graph, and through
// rounds that split. The wait counts are those of the default plan: unfused
// (RANC_NO_FUSION=1), a round's distinct and anti join are two kernels with a read-back
// between them, so only the results are compared then.
TEST(GpuFixpoint, OneReadBackARound) {
  RANC_REQUIRE_GPU();
  // The environment's switches apply to every plan of the process (RANC_NO_FUSION=1 runs the
  // suites unfused).
  const bool default_plan =
      passes::pass_enabled("fuse_pipelines", {}) && passes::pass_enabled("rotate_loop_reads", {});
  Program tc = parse_and_check(kTc);
  const codegen::CodegenOptions on = body_only();
  codegen::CodegenOptions off = body_only();
  off.disabled_passes = {"rotate_loop_reads"};
  auto cycle = chain(90);
  cycle.push_back({89, 0});
  const std::vector<std::vector<std::pair<int64_t, int64_t>>> graphs = {
      chain(200), cycle, random_graph(500, 600, 7), {}, {{3, 3}}};
  // `prog` with the pass on (`one`) and off (`two`), each against the reference.
  rt::RunStats one, two;
  auto run_both = [&](const Program& prog, const Inputs& in, const std::string& label) {
    one = two = rt::RunStats{};
    const Reference ref = reference(prog, in);
    ASSERT_EQ(compare_with_reference(prog, in, ref, on, &one), "") << label;
    ASSERT_EQ(compare_with_reference(prog, in, ref, off, &two), "") << label;
    std::printf("%s: %lld rounds, %lld waits (%lld without the rotation)\n", label.c_str(),
                static_cast<long long>(one.loop_iterations), static_cast<long long>(one.readbacks),
                static_cast<long long>(two.readbacks));
  };
  for (size_t g = 0; g < graphs.size(); ++g) {
    run_both(tc, {{"edges", graph(graphs[g])}}, fmt::format("graph {}", g));
    if (HasFatalFailure()) return;
    EXPECT_EQ(one.loop_iterations, two.loop_iterations) << "graph " << g;
    // The waits outside the loop (the base case, the first count) are a few.
    if (default_plan) {
      EXPECT_LE(one.readbacks, one.loop_iterations + 8) << "graph " << g;
    }
    if (g == 0) {
      EXPECT_GE(one.loop_iterations, 198);
      EXPECT_GE(two.readbacks, 2 * two.loop_iterations) << "graph " << g;
    }
  }
  // Reachability: a one-attribute delta, sorted by the join key (count, then write).
  Program reach = parse_and_check(R"(
input edges(src i32, dst i32);
input start(node i32);
fixpoint {
  reach = start;
  reach = reach |> join edges on node = src |> project dst as node;
}
output reach;
)");
  for (size_t g = 0; g < graphs.size(); ++g) {
    run_both(reach,
             {{"edges", graph(graphs[g])},
              {"start", make_relation(Schema{{{"node", Type::I32}}, 0},
                                      {column_from_keys(Type::I32, {0, 3})})}},
             fmt::format("reach, graph {}", g));
    if (HasFatalFailure()) return;
    if (default_plan) {
      EXPECT_LE(one.readbacks, one.loop_iterations + 8) << "reach, graph " << g;
    }
  }
  // Same generation (the delta on the right of its first join, a second join after it): two
  // waits a round, where three without the rotation.
  Program sg = parse_and_check(kSameGeneration);
  std::vector<std::pair<int64_t, int64_t>> tree;  // (child, par): a ternary tree of 400 nodes
  for (int64_t c = 1; c < 400; ++c) tree.push_back({c, (c - 1) / 3});
  run_both(sg, {{"parent", graph(tree, Type::I32, "child", "par")}}, "same generation");
  if (HasFatalFailure()) return;
  if (default_plan) {
    EXPECT_LE(one.readbacks, 2 * one.loop_iterations + 8);
  }
  EXPECT_GE(two.readbacks, 3 * two.loop_iterations);
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

// An iteration limit makes iterations rounds, which no split may change: running out of
// memory inside the loop is then the typed error naming the fixpoint and the iteration.
TEST(GpuFixpoint, OutOfMemoryNamesTheFixpointAndIteration) {
  RANC_REQUIRE_GPU();
  std::string text(kTc);
  text.replace(text.find("fixpoint {"), 10, "fixpoint max 1000 {");
  Program tc = parse_and_check(text);
  rt::Plan plan = codegen::generate_plan(tc, body_only());
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

// Runs `plan` on `ex` and compares its outputs with the reference's (as sets: the
// programs here output unordered relations). Empty when they agree.
std::string run_on(rt::Executor& ex, const rt::Plan& plan, const Program& checked,
                   const Inputs& inputs, const Reference& ref, rt::RunStats* stats) {
  std::map<std::string, const HostRelation*> bind;
  for (const auto& [n, r] : inputs) bind[n] = &r;
  rt::RunResult res = ex.run(plan, bind);
  if (stats) *stats = res.stats;
  std::vector<NodeId> outs = checked.outputs();
  if (res.outputs.size() != outs.size()) return "output count differs";
  for (size_t k = 0; k < outs.size(); ++k) {
    std::string d = compare_outputs(res.outputs[k].first, res.outputs[k].second, ref.outputs[k],
                                    {}, false, 0);
    if (!d.empty()) return d;
  }
  return "";
}

// A round that does not fit the memory limit runs in pieces (rt::LoopEnd::split): the same
// fixpoint as the reference's, for linear, non-linear and mutual recursion (two deltas
// split together) and same generation, at limits down to where nothing fits (then the
// typed error).
TEST(GpuFixpoint, RoundsPastTheMemoryLimitRunInPieces) {
  RANC_REQUIRE_GPU();
  // Inputs whose rounds derive far more candidates than new tuples, so that a round's
  // candidates, not the full relations, set the peak: dense layers (every node of a layer
  // linked to every node of the next) and parents shared by whole layers.
  auto layers = [](int64_t count, int64_t width) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (int64_t l = 0; l + 1 < count; ++l)
      for (int64_t a = 0; a < width; ++a)
        for (int64_t b = 0; b < width; ++b) out.push_back({l * width + a, (l + 1) * width + b});
    return out;
  };
  std::vector<std::pair<int64_t, int64_t>> parents;  // (child, par): the layer above, all of it
  for (auto [par, child] : layers(4, 40)) parents.push_back({child, par});
  struct Case {
    const char* name;
    std::string_view text;
    Inputs inputs;
  };
  std::vector<Case> cases;
  cases.push_back({"tc", kTc, {{"edges", graph(layers(5, 60))}}});
  cases.push_back({"tc square", kTcSquare, {{"edges", graph(random_graph(700, 800, 22))}}});
  cases.push_back({"same generation", kSameGeneration,
                   {{"parent", graph(parents, Type::I32, "child", "par")}}});
  cases.push_back({"odd and even paths", kOddEvenPaths, {{"edges", graph(layers(6, 40))}}});
  for (const Case& c : cases) {
    Program prog = parse_and_check(c.text);
    rt::Plan plan = codegen::generate_plan(prog, body_only());
    const Reference ref = reference(prog, c.inputs);
    ASSERT_TRUE(ref.error.empty()) << c.name << ": " << ref.error;
    rt::Executor unlimited;
    rt::RunStats base;
    ASSERT_EQ(run_on(unlimited, plan, prog, c.inputs, ref, &base), "") << c.name;
    EXPECT_EQ(base.split_iterations, 0) << c.name;
    int split_runs = 0, failed_runs = 0;
    for (int64_t div : {2, 3, 5, 8, 100000}) {
      rt::ExecutorOptions o;
      o.memory_limit = std::max<int64_t>(1, base.peak_device_bytes / div);
      rt::Executor limited(o);
      rt::RunStats st;
      try {
        std::string d = run_on(limited, plan, prog, c.inputs, ref, &st);
        EXPECT_EQ(d, "") << c.name << ", limit " << o.memory_limit;
        EXPECT_LE(st.peak_device_bytes, o.memory_limit) << c.name;
        EXPECT_EQ(limited.memory_stats().bytes_in_use, 0) << c.name << ": memory left after the run";
        if (st.split_iterations > 0) ++split_runs;
        std::printf("%s: limit %lld of peak %lld: %lld iterations, %lld split, %.1f ms\n", c.name,
                    static_cast<long long>(o.memory_limit),
                    static_cast<long long>(base.peak_device_bytes),
                    static_cast<long long>(st.loop_iterations),
                    static_cast<long long>(st.split_iterations), st.execute_seconds * 1e3);
      } catch (const rt::OutOfMemoryError& e) {
        std::printf("%s: limit %lld of peak %lld: %s\n", c.name,
                    static_cast<long long>(o.memory_limit),
                    static_cast<long long>(base.peak_device_bytes), e.what());
        ++failed_runs;
        EXPECT_NE(std::string(e.what()).find("memory limit"), std::string::npos) << e.what();
      }
    }
    EXPECT_GE(split_runs, 1) << c.name << ": no limit made a round split";
    EXPECT_GE(failed_runs, 1) << c.name << ": a limit of bytes still fitted";
  }
}

// Whichever allocation fails, once, inside the loop, the iteration is run again on halves
// of its delta and the result is the reference's; a failure outside the loop (or in a
// round of one delta row, which cannot split) is the typed error.
TEST(GpuFixpoint, AnyAllocationFailureInTheLoopSplitsTheRound) {
  RANC_REQUIRE_GPU();
  Program tc = parse_and_check(kTc);
  Program square = parse_and_check(kTcSquare);
  const Inputs inputs{{"edges", graph(random_graph(200, 260, 31))}};
  for (const Program* prog : {&tc, &square}) {
    rt::Plan plan = codegen::generate_plan(*prog, body_only());
    const Reference ref = reference(*prog, inputs);
    rt::Executor ex;
    const int64_t before = rt::allocation_calls();
    rt::RunStats clean;
    ASSERT_EQ(run_on(ex, plan, *prog, inputs, ref, &clean), "");
    const int64_t calls = rt::allocation_calls() - before;
    ASSERT_GT(clean.loop_iterations, 3);
    int splits = 0, errors = 0;
    const int64_t stride = std::max<int64_t>(1, calls / 300);
    for (int64_t k = 0; k < calls; k += stride) {
      rt::inject_allocation_failure(k);
      rt::RunStats st;
      try {
        EXPECT_EQ(run_on(ex, plan, *prog, inputs, ref, &st), "") << "failure at allocation " << k;
        if (st.split_iterations > 0) ++splits;
        EXPECT_EQ(ex.memory_stats().bytes_in_use, 0) << "failure at allocation " << k;
      } catch (const rt::OutOfMemoryError& e) {
        ++errors;
        EXPECT_NE(std::string(e.what()).find("injected"), std::string::npos) << e.what();
      }
      rt::inject_allocation_failure(-1);
    }
    EXPECT_GT(splits, (calls / stride) / 2) << "of " << calls / stride << " injections, " << errors
                                             << " errors";
  }
}

// Resident rounds (rt::ResidentRounds, ra_ops/fixpoint/resident.cpp): thin rounds run in
// one cooperative kernel. Against the reference, with them and without: chains (one launch
// takes nearly every round), cycles, self loops, random graphs whose deltas grow past the
// launch's limit (handed back to the body) and shrink again, reachability (one attribute),
// connected components (over the edges both ways), an iteration limit, a selection and an
// anti join in the rule; two i64 attributes do not pack into a word (the body runs every
// round). With a barrier between rounds (RANC_RESIDENT_ASYNC=0, and always under a round
// limit) each resident round is one iteration: the counts equal the body's. Without a limit
// the blocks run a worklist (the default): the rounds counted are the deepest tuple's, and a
// tuple may be found later than its first round could: at least the body's count.
TEST(GpuFixpoint, ResidentRoundsMatchTheReference) {
  RANC_REQUIRE_GPU();
  auto cycle = chain(300);
  cycle.push_back({299, 0});
  const std::vector<std::vector<std::pair<int64_t, int64_t>>> graphs = {
      {},          {{5, 5}},   chain(2), chain(400), cycle, {{1, 2}, {2, 1}, {7, 8}, {9, 9}},
      random_graph(3000, 2400, 41), random_graph(600, 700, 42)};
  struct Case {
    const char* name;
    std::string text;
  };
  std::string wide(kTc);
  wide.replace(wide.find("src i32, dst i32"), 16, "src i64, dst i64");
  std::string limited(kTc);
  limited.replace(limited.find("fixpoint {"), 10, "fixpoint max 37 {");
  const std::vector<Case> cases = {
      {"tc", std::string(kTc)},
      {"tc i64", wide},
      {"tc max 37", limited},
      {"reach", R"(
input edges(src i32, dst i32);
fixpoint {
  reach = edges |> select src < 3 |> project dst as node;
  reach = reach |> join edges on node = src |> project dst as node;
}
output reach;
)"},
      {"filtered and anti", R"(
input edges(src i32, dst i32);
fixpoint {
  p = edges;
  p = p |> join (edges |> project src as mid, dst as to) on dst = mid
        |> select to % 7 <> 3 and src + to >= 0
        |> antijoin (edges |> select src % 5 = 0 |> project src as bad) on to = bad
        |> project src, to as dst;
}
output p;
)"},
      {"components", R"(
input edges(src i32, dst i32);
both = edges |> union (edges |> project dst as src, src as dst);
nodes = (edges |> project src as node) |> union (edges |> project dst as node);
fixpoint {
  reach = nodes |> project node, node as other;
  reach = reach |> join both on other = src |> project node, dst as other;
}
output reach |> reduce by node component = min(other) as components;
)"},
  };
  codegen::CodegenOptions off = body_only();
  for (const Case& c : cases) {
    Program prog = parse_and_check(c.text);
    const Type t = c.name == std::string("tc i64") ? Type::I64 : Type::I32;
    for (size_t g = 0; g < graphs.size(); ++g) {
      const Inputs in{{"edges", graph(graphs[g], t)}};
      const Reference ref = reference(prog, in);
      rt::RunStats on, grid, body, sync, sync_grid;
      EXPECT_EQ(compare_with_reference(prog, in, ref, {}, &on), "") << c.name << ", graph " << g;
      // A block a delta row: launches of as many blocks as the device holds at once.
      setenv("RANC_RESIDENT_BLOCK_ROWS", "1", 1);
      EXPECT_EQ(compare_with_reference(prog, in, ref, {}, &grid), "") << c.name << ", graph " << g;
      setenv("RANC_RESIDENT_ASYNC", "0", 1);
      EXPECT_EQ(compare_with_reference(prog, in, ref, {}, &sync_grid), "") << c.name << ", graph " << g;
      unsetenv("RANC_RESIDENT_BLOCK_ROWS");
      EXPECT_EQ(compare_with_reference(prog, in, ref, {}, &sync), "") << c.name << ", graph " << g;
      unsetenv("RANC_RESIDENT_ASYNC");
      EXPECT_EQ(compare_with_reference(prog, in, ref, off, &body), "") << c.name << ", graph " << g;
      EXPECT_EQ(body.resident_rounds, 0);
      std::printf("%s, graph %zu: %lld iterations, %lld resident, %lld waits (body only: %lld, %lld)\n",
                  c.name, g, static_cast<long long>(on.loop_iterations),
                  static_cast<long long>(on.resident_rounds), static_cast<long long>(on.readbacks),
                  static_cast<long long>(body.loop_iterations), static_cast<long long>(body.readbacks));
      std::fflush(stdout);
      // Each resident round with the barrier is one semi-naive iteration; the worklist's
      // deepest tuple (no limit) is at least as deep.
      EXPECT_EQ(sync.loop_iterations, body.loop_iterations) << c.name << ", graph " << g;
      EXPECT_EQ(sync_grid.loop_iterations, body.loop_iterations) << c.name << ", graph " << g;
      const bool limited_case = c.name == std::string("tc max 37");
      for (const rt::RunStats* st : {&on, &grid}) {
        if (limited_case)
          EXPECT_EQ(st->loop_iterations, body.loop_iterations) << c.name << ", graph " << g;
        else
          EXPECT_GE(st->loop_iterations, body.loop_iterations) << c.name << ", graph " << g;
      }
      EXPECT_EQ(grid.resident_rounds > 0, on.resident_rounds > 0) << c.name << ", graph " << g;
      EXPECT_EQ(sync.resident_rounds > 0, on.resident_rounds > 0) << c.name << ", graph " << g;
      if (g == 3 && c.name == std::string("tc")) {
        // A chain of 400: the body's first round, then resident rounds to the end.
        EXPECT_GE(on.resident_rounds, 390);
        EXPECT_LT(on.readbacks, 20);
      }
    }
  }
}

// Small launch limits: every launch stops for room or delta size after a few rounds, merges
// and hands back; the body runs the rounds in between. Same fixpoint. The worklist (the
// default here: no round limit) stops when a block's queue holds more than
// RANC_RESIDENT_MAX_ROWS tuples or the words pass the room (RANC_RESIDENT_ROOM, 4096 words at
// least), copying every block's pending tuples as the delta; the last two cases run rounds
// with a barrier between them (async 0).
TEST(GpuFixpoint, ResidentRoundsHandBackAndEnterAgain) {
  RANC_REQUIRE_GPU();
  Program tc = parse_and_check(kTc);
  auto cycle = chain(200);
  cycle.push_back({199, 0});
  const std::vector<std::vector<std::pair<int64_t, int64_t>>> graphs = {
      chain(600), cycle, random_graph(1000, 1100, 43)};
  // (rows a launch enters with, the largest delta it takes, the rows a block takes, the room,
  // the worklist (else rounds with the barrier))
  for (auto [enter, rows, block_rows, room, async] :
       std::vector<std::tuple<const char*, const char*, const char*, const char*, const char*>>{
           {"1000", "1", "1", "1048576", "1"}, {"1000", "64", "16", "1048576", "1"},
           {"64", "64", "1", "1048576", "1"}, {"1000", "1000", "100", "1048576", "1"},
           {"1000000", "1000000", "1000000", "1048576", "1"}, {"1000", "1000", "1", "4096", "1"},
           {"1000", "1000", "100", "4096", "1"}, {"1000", "7", "4096", "1048576", "0"},
           {"1000", "1000", "1", "4096", "0"}}) {
    setenv("RANC_RESIDENT_MAX_ROWS", rows, 1);
    setenv("RANC_RESIDENT_ROWS", enter, 1);
    setenv("RANC_RESIDENT_BLOCK_ROWS", block_rows, 1);
    setenv("RANC_RESIDENT_ROOM", room, 1);
    setenv("RANC_RESIDENT_ASYNC", async, 1);
    for (size_t g = 0; g < graphs.size(); ++g) {
      rt::RunStats st;
      EXPECT_EQ(run_and_compare(tc, {{"edges", graph(graphs[g])}}, {}, &st), "")
          << "enter " << enter << ", rows " << rows << ", block rows " << block_rows << ", room " << room
          << ", async " << async << ", graph " << g;
      std::printf("enter %s, rows %s, block rows %s, room %s, async %s, graph %zu: %lld iterations, %lld resident\n",
                  enter, rows, block_rows, room, async, g,
                  static_cast<long long>(st.loop_iterations), static_cast<long long>(st.resident_rounds));
      std::fflush(stdout);
    }
  }
  unsetenv("RANC_RESIDENT_MAX_ROWS");
  unsetenv("RANC_RESIDENT_ROWS");
  unsetenv("RANC_RESIDENT_BLOCK_ROWS");
  unsetenv("RANC_RESIDENT_ROOM");
  unsetenv("RANC_RESIDENT_ASYNC");
}

// Resident rounds under memory limits and injected allocation failures: a launch that cannot
// get its room, or whose merge cannot, leaves the rounds to the body; the same fixpoint.
TEST(GpuFixpoint, ResidentRoundsWithoutMemoryFallBackToTheBody) {
  RANC_REQUIRE_GPU();
  Program tc = parse_and_check(kTc);
  const Inputs in{{"edges", graph(chain(400))}};
  rt::Plan plan = codegen::generate_plan(tc);
  const Reference ref = reference(tc, in);
  rt::Executor ex;
  const int64_t before = rt::allocation_calls();
  rt::RunStats clean;
  ASSERT_EQ(run_on(ex, plan, tc, in, ref, &clean), "");
  ASSERT_GT(clean.resident_rounds, 300);
  const int64_t calls = rt::allocation_calls() - before;
  int fell_back = 0;
  for (int64_t k = 0; k < calls; ++k) {
    rt::inject_allocation_failure(k);
    rt::RunStats st;
    try {
      EXPECT_EQ(run_on(ex, plan, tc, in, ref, &st), "") << "failure at allocation " << k;
      if (st.resident_rounds < clean.resident_rounds) ++fell_back;
    } catch (const rt::OutOfMemoryError& e) {
      EXPECT_NE(std::string(e.what()).find("injected"), std::string::npos) << e.what();
    }
    rt::inject_allocation_failure(-1);
    EXPECT_EQ(ex.memory_stats().bytes_in_use, 0) << "failure at allocation " << k;
  }
  EXPECT_GE(fell_back, 1);
  for (int64_t div : {2, 4, 16}) {
    rt::ExecutorOptions o;
    o.memory_limit = std::max<int64_t>(1, clean.peak_device_bytes / div);
    rt::Executor limited(o);
    rt::RunStats st;
    try {
      EXPECT_EQ(run_on(limited, plan, tc, in, ref, &st), "") << "limit 1/" << div;
    } catch (const rt::OutOfMemoryError& e) {
      EXPECT_NE(std::string(e.what()).find("memory limit"), std::string::npos) << e.what();
    }
    EXPECT_EQ(limited.memory_stats().bytes_in_use, 0);
  }
}

}  // namespace
}  // namespace ranc::gputest
