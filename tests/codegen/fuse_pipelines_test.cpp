// fuse_pipelines and the pass runner (no GPU): Before (program) / Expected (physical
// plan with the kernel groups), each test stating the rule it checks; the kernels of
// every plan contain exactly the operators the pass grouped (kernel_group_mismatch).
#include <gtest/gtest.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>

#include "ranc/codegen/codegen.h"
#include "ranc/dsl.h"
#include "ranc/passes/fuse_pipelines.h"
#include "ranc/passes/pass_runner.h"
#include "ranc/passes/plan_paged_edges.h"
#include "test_programs.h"

namespace ranc {
namespace {

using codegen::CodegenOptions;
using codegen::JoinAlgorithm;

passes::PipelineResult pipeline(const Program& p, CodegenOptions o = {}) {
  return passes::run_pipeline(p, o);
}
std::string physical(const Program& p, CodegenOptions o = {}) {
  return passes::print_physical_plan(pipeline(p, o).physical);
}
int count_in(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
int launches(const rt::Plan& plan) {
  int n = 0;
  for (const auto& s : plan.steps) n += std::holds_alternative<rt::Launch>(s) ? 1 : 0;
  return n;
}

// Thread-level: a chain of selects and projects is one kernel (the last project's
// materialisation), and no intermediate buffer is allocated for it.
TEST(FusePipelines, SelectProjectChainIsOneKernel) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I32}});
  b.output(r.select(col("k") < 5).select(col("v") > 1).project({as(col("k") + col("v"), "s")}), "o");
  auto res = pipeline(b.check());
  EXPECT_EQ(passes::print_physical_plan(res.physical),
            "n0 input()\n"
            "n1 select(n0) fused into n3\n"
            "n2 select(n1) fused into n3\n"
            "n3 project(n2)\n"
            "n4 output(n3)\n");
  // The one SelectAgent kernel (its tile state is a zeroed allocation).
  EXPECT_EQ(launches(res.plan), 1) << codegen::describe_plan(res.plan);
  EXPECT_NE(res.plan.source.find("n3_select_select_project("), std::string::npos);
  EXPECT_EQ(testing::kernel_group_mismatch(res), "");
  // Unfused: a select kernel for each select and a map for the project.
  auto off = pipeline(b.check(), {.fusion = false});
  EXPECT_EQ(launches(off.plan), 3);
  EXPECT_EQ(passes::print_physical_plan(off.physical).find("fused"), std::string::npos);
}

// Block-level: a select/project in front of a join fuses into its input loading (both
// sides of a hash join; the left side of a sort-merge join, where an inner join takes
// only a chain that keeps every row: its count stage writes 16 bytes for every row of
// the chain's input, so a select in front is cheaper materialised); a select after a
// join joins its output stage (the residual).
TEST(FusePipelines, SelectsAroundJoins) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q = b.input("q", {{"qk", Type::I32}, {"w", Type::I64}});
  b.output(r.select(col("v") > 1)
               .join(q.select(col("w") < 9), {"k"}, {"qk"})
               .select(col("v") < col("w"))
               .project({"k", as(col("w") - col("v"), "d")}),
           "o");
  Program p = b.check();
  // Sort-merge: the right side is sorted (a barrier: its select is materialised), the
  // left select too.
  EXPECT_EQ(physical(p, {.join = JoinAlgorithm::SortMerge}),
            "n0 input()\n"
            "n1 input()\n"
            "n2 select(n0)\n"
            "n3 select(n1)\n"
            "n4 sort(n3) by [qk] (inserted) order [qk]\n"
            "n5 join(n2, n4) fused into n7\n"
            "n6 select(n5) fused into n7\n"
            "n7 project(n6)\n"
            "n8 output(n7)\n");
  // Hash: both sides stream into the partitioning.
  EXPECT_EQ(physical(p, {.join = JoinAlgorithm::Hash}),
            "n0 input()\n"
            "n1 input()\n"
            "n2 select(n0) fused into n4\n"
            "n3 select(n1) fused into n4\n"
            "n4 join(n2, n3) hash fused into n6\n"
            "n5 select(n4) fused into n6\n"
            "n6 project(n5)\n"
            "n7 output(n6)\n");
  for (JoinAlgorithm j : {JoinAlgorithm::SortMerge, JoinAlgorithm::Hash}) {
    auto res = pipeline(p, {.join = j});
    EXPECT_EQ(testing::kernel_group_mismatch(res), "");
    EXPECT_EQ(res.plan.source.find("n2_select(") != std::string::npos, j == JoinAlgorithm::SortMerge);
  }
  // A project in front of the sort-merge join's left side fuses into its count stage; a
  // select in front of a semi join's left side into the semi join's stage.
  ProgramBuilder c;
  auto cr = c.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto cq = c.input("q", {{"qk", Type::I32}, {"w", Type::I64}}, 0, {"qk"});
  c.output(cr.project({"k", as(col("v") * 2, "v2")}).join(cq, {"k"}, {"qk"}), "inner");
  c.output(cr.select(col("v") > 1).semi_join(cq, {"k"}, {"qk"}), "semi");
  auto cres = pipeline(c.check(), {.join = JoinAlgorithm::SortMerge});
  EXPECT_EQ(passes::print_physical_plan(cres.physical),
            "n0 input()\n"
            "n1 input() order [qk]\n"
            "n2 project(n0) fused into n3\n"
            "n3 join(n2, n1)\n"
            "n4 select(n0) fused into n5\n"
            "n5 join(n4, n1)\n"
            "n6 output(n3)\n"
            "n7 output(n5)\n");
  EXPECT_EQ(testing::kernel_group_mismatch(cres), "");
}

// A hash semi/anti join: the select in front of its right input fuses into the build of
// the hash set (a kernel of the join's own), the left chain and the probe stage into the
// consumer's kernel (here a global reduce); nothing is materialised but the set.
TEST(FusePipelines, HashSemiJoinBuildsFromAFusedChain) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q = b.input("q", {{"qk", Type::I32}, {"w", Type::I64}});
  b.output(r.select(col("v") > 1)
               .semi_join(q.select(col("w") < 9), {"k"}, {"qk"})
               .anti_join(q.project({"qk"}), {"k"}, {"qk"})
               .reduce({}, {ranc::count("n")}),
           "o");
  Program p = b.check();
  EXPECT_EQ(physical(p),
            "n0 input()\n"
            "n1 input()\n"
            "n2 select(n0) fused into n7\n"
            "n3 select(n1) fused into n4\n"
            "n4 join(n2, n3) hash fused into n7\n"
            "n5 project(n1) fused into n6\n"
            "n6 join(n4, n5) hash fused into n7\n"
            "n7 reduce(n6) unique\n"
            "n8 output(n7) unique\n");
  auto res = pipeline(p, {});
  EXPECT_EQ(testing::kernel_group_mismatch(res), "");
  std::vector<std::string> launched;
  for (const auto& s : res.plan.steps)
    if (const auto* l = std::get_if<rt::Launch>(&s)) launched.push_back(l->kernel);
  const std::vector<std::string> want = {"n4_select_hash_set_build", "n6_project_hash_set_build",
                                         "n7_select_semijoin_antijoin_reduce"};
  for (const auto& k : want)
    EXPECT_NE(std::find(launched.begin(), launched.end(), k), launched.end())
        << k << "\n" << codegen::describe_plan(res.plan);
  // Unfused, the same joins hash and every operator runs kernels of its own.
  auto off = pipeline(p, {.fusion = false});
  EXPECT_EQ(testing::kernel_group_mismatch(off), "");
}

// A reduce with no group keys at the end of any pipeline over rows; a grouped reduce
// takes a fused project but not a select (a filter could leave a group empty).
TEST(FusePipelines, ReducesAtTheEndOfPipelines) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}}, 0, {"k"});
  b.output(r.select(col("k") > 1).project({as(col("v") * 2, "x")}).reduce({}, {sum(col("x"), "s")}),
           "global");
  b.output(r.project({"k", as(col("v") + 1, "w")}).reduce({"k"}, {sum(col("w"), "s")}), "grouped");
  b.output(r.select(col("v") > 1).reduce({"k"}, {count("c")}), "grouped_filtered");
  auto res = pipeline(b.check());
  EXPECT_EQ(passes::print_physical_plan(res.physical),
            "n0 input() order [k]\n"
            "n1 select(n0) order [k] fused into n3\n"
            "n2 project(n1) fused into n3\n"
            "n3 reduce(n2) unique\n"
            // lower_nulls: the global sum is NULL over no rows, from the rows counted
            "n4 project(n3)\n"
            "n5 project(n0) order [k] fused into n6\n"
            "n6 reduce(n5) order [k] unique\n"
            "n7 select(n0) order [k]\n"
            "n8 reduce(n7) order [k] unique\n"
            "n9 output(n4)\n"
            "n10 output(n6) order [k] unique\n"
            "n11 output(n8) order [k] unique\n");
  EXPECT_EQ(testing::kernel_group_mismatch(res), "");
  EXPECT_NE(res.plan.source.find("GlobalReduceAgent"), std::string::npos);
}

// A global reduce after a join that merges in one pass (left input sorted by the keys, no
// residual) folds the join's matches in the merge itself (join_reduce.cuh): the join, the
// selects and projects after it (also ones that drop matches or can fail) and the reduce
// are one group whose kernels write no match; a chain into a grouped reduce still
// materialises the select after the join (JoinMergeAgent has no room for a filter).
// f join q -> select -> project -> global reduce ("global"), and the join -> select into a
// reduce grouped by fk ("grouped"); f and q declared sorted by their keys or not.
Program join_reduce_chains(bool sorted) {
  ProgramBuilder b;
  auto f = b.input("f", {{"fk", Type::I32}, {"fv", Type::I32}}, 0,
                   sorted ? std::vector<SortSpec>{"fk"} : std::vector<SortSpec>{});
  auto q = b.input("q", {{"pk", Type::I32}, {"pv", Type::I32}}, 0,
                   sorted ? std::vector<SortSpec>{"pk"} : std::vector<SortSpec>{});
  b.output(f.join(q, {"fk"}, {"pk"})
               .select(col("pv") < col("fv"))
               .project({as(col("fv") / col("pv"), "x")})
               .reduce({}, {sum(col("x"), "s"), count("n")}),
           "global");
  b.output(f.join(q, {"fk"}, {"pk"}).select(col("pv") < col("fv")).reduce({"fk"}, {count("c")}), "grouped");
  return b.check();
}

TEST(FusePipelines, AGlobalReduceFoldsTheOnePassMerge) {
  const Program p = join_reduce_chains(true);
  auto res = pipeline(p, {.join = JoinAlgorithm::SortMerge});
  EXPECT_EQ(passes::print_physical_plan(res.physical),
            "n0 input() order [fk]\n"
            "n1 input() order [pk]\n"
            "n2 join(n0, n1) order [fk] fused into n5\n"
            "n3 select(n2) order [fk] fused into n5\n"
            "n4 project(n3) fused into n5\n"
            "n5 reduce(n4) unique\n"
            "n6 project(n5)\n"
            "n7 join(n0, n1) order [fk]\n"
            "n8 select(n7) order [fk]\n"
            "n9 reduce(n8) order [fk] unique\n"
            "n10 output(n6)\n"
            "n11 output(n9) order [fk] unique\n");
  EXPECT_EQ(testing::kernel_group_mismatch(res), "");
  const std::string& src = res.plan.source;
  for (const char* k : {"n5_join_select_project_reduce_ranges(", "n5_join_select_project_reduce(",
                        "n5_join_select_project_reduce_heavy(", "n5_reduce_finish("})
    EXPECT_NE(src.find(k), std::string::npos) << k;
  EXPECT_NE(src.find("JoinMergeReduceAgent<P::JoinCount>"), std::string::npos);
  EXPECT_NE(src.find("JoinHeavyReduceAgent<P::JoinCount>"), std::string::npos);
  // The grouped chain: the one-pass merge writes the matches, a select kernel filters them.
  EXPECT_NE(src.find("n7_join_merge("), std::string::npos);
  EXPECT_NE(src.find("n8_select("), std::string::npos);
  // No buffer of the folded join's matches: the only allocations of n2 are its merge's
  // header, its tiles' ranges and the heavy tiles' rows.
  for (const auto& buf : res.plan.buffers)
    if (buf.name.rfind("n2.", 0) == 0)
      EXPECT_TRUE(buf.name == "n2.merge_header" || buf.name == "n2.tile_ranges" ||
                  buf.name == "n2.lower" || buf.name == "n2.offsets")
          << buf.name;
  // Unfused: the join writes its matches, the select, project and reduce read them.
  auto off = pipeline(p, {.join = JoinAlgorithm::SortMerge, .fusion = false});
  EXPECT_EQ(off.plan.source.find("JoinMergeReduceAgent"), std::string::npos);
  EXPECT_EQ(testing::kernel_group_mismatch(off), "");
}

// The same fold into the partitioned hash join: the join kernel's grid passes its matches to
// the reduce (HashJoinReduceAgent, join_reduce.cuh); no match is written, no output sized or
// paged. A grouped reduce after the join still reads its (paged) matches.
TEST(FusePipelines, AGlobalReduceFoldsTheHashJoin) {
  const Program p = join_reduce_chains(false);
  auto res = pipeline(p, {.join = JoinAlgorithm::Hash});  // on by default
  const std::string plan = passes::print_physical_plan(res.physical);
  EXPECT_NE(plan.find("n2 join(n0, n1) hash fused into n5\n"), std::string::npos) << plan;
  EXPECT_NE(plan.find("n3 select(n2) fused into n5\n"), std::string::npos) << plan;
  EXPECT_NE(plan.find("n4 project(n3) fused into n5\n"), std::string::npos) << plan;
  EXPECT_NE(plan.find("n5 reduce(n4) unique\n"), std::string::npos) << plan;  // not paged
  EXPECT_NE(plan.find("n8 select(n7) -> paged\n"), std::string::npos) << plan;
  EXPECT_EQ(testing::kernel_group_mismatch(res), "");
  const std::string& src = res.plan.source;
  for (const char* k : {"n5_join_select_project_reduce(", "n5_reduce_finish("})
    EXPECT_NE(src.find(k), std::string::npos) << k;
  EXPECT_NE(src.find("HashJoinReduceAgent<P::HashJoin, unsigned int>"), std::string::npos);
  // No buffer of the folded join's matches, no page of them.
  for (const auto& buf : res.plan.buffers)
    if (buf.name.rfind("n2.", 0) == 0 || buf.name.rfind("n5.", 0) == 0)
      EXPECT_EQ(buf.name.find("page"), std::string::npos) << buf.name;
  EXPECT_EQ(src.find("n2_join_select_project_hash"), std::string::npos);
  // Off (RANC_HASH_FOLD=0 or the option): the join writes pages the reduce streams.
  auto plain = pipeline(p, {.join = JoinAlgorithm::Hash, .fold_hash_joins = false});
  EXPECT_EQ(plain.plan.source.find("HashJoinReduceAgent"), std::string::npos);
  EXPECT_NE(passes::print_physical_plan(plain.physical).find("n4 project(n3) -> paged\n"), std::string::npos);
  setenv("RANC_HASH_FOLD", "0", 1);
  auto env_off = pipeline(p, {.join = JoinAlgorithm::Hash});
  unsetenv("RANC_HASH_FOLD");
  EXPECT_EQ(env_off.plan.source.find("HashJoinReduceAgent"), std::string::npos);
  EXPECT_EQ(passes::print_physical_plan(env_off.physical), passes::print_physical_plan(plain.physical));
  // Unfused: the join writes its matches.
  auto off = pipeline(p, {.join = JoinAlgorithm::Hash, .fusion = false, .fold_hash_joins = true});
  EXPECT_EQ(off.plan.source.find("HashJoinReduceAgent"), std::string::npos);
  EXPECT_EQ(testing::kernel_group_mismatch(off), "");
}

// A reduce over input not ordered by its group keys hashes when the keys pack into 63
// bits (string 31 + i32 32 here): no sort is inserted, a select in front fuses into it
// (it folds row by row), and its output is ordered by the keys, so a user sort by them
// after it is a no-op. 8-byte keys, --group-by=sort and input already grouped sort.
TEST(FusePipelines, HashReduceTakesUnorderedInput) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"s", Type::String}, {"v", Type::I64}, {"w", Type::I64}});
  b.output(r.select(col("v") > 1).reduce({"s", "k"}, {sum(col("v"), "sv"), count("c")}).sort({"s", "k"}),
           "hashed");
  b.output(r.reduce({"w"}, {count("c")}), "wide_key");
  b.output(r.sort({"k"}).reduce({"k"}, {count("c")}), "grouped");
  Program p = b.check();
  auto res = pipeline(p);
  EXPECT_EQ(passes::print_physical_plan(res.physical),
            "n0 input()\n"
            "n1 select(n0) fused into n2\n"
            "n2 reduce(n1) hash order [s, k] unique\n"
            "n3 sort(n2) no-op order [s, k, sv, c] unique\n"
            "n4 sort(n0) by [w] (inserted) order [w]\n"
            "n5 reduce(n4) order [w] unique\n"
            "n6 sort(n0) by [k, s, v, w] order [k, s, v, w]\n"
            "n7 reduce(n6) order [k] unique\n"
            "n8 output(n3) order [s, k, sv, c] unique\n"
            "n9 output(n5) order [w] unique\n"
            "n10 output(n7) order [k] unique\n");
  EXPECT_EQ(testing::kernel_group_mismatch(res), "");
  EXPECT_NE(res.plan.source.find("HashGroupAgent"), std::string::npos);
  // Sorting instead: the select is materialised, a sort is inserted before the reduce.
  const std::string sorted = physical(p, {.group_by = codegen::GroupBy::Sort});
  EXPECT_NE(sorted.find("n2 sort(n1) by [s, k] (inserted)"), std::string::npos) << sorted;
  EXPECT_EQ(sorted.find(" hash"), std::string::npos) << sorted;
  setenv("RANC_GROUP_BY", "sort", 1);
  EXPECT_EQ(physical(p), sorted);
  unsetenv("RANC_GROUP_BY");
}

// A limit fuses into the select before it (one compaction that writes only the window);
// its size is host arithmetic, not a read-back kernel.
// A reduce whose group keys cover its input's key makes one group per row: it sorts instead
// of hashing (each block's table would fill at once and every row become a sorted record).
// Keys that do not cover it still hash; a select in front keeps the key.
TEST(FusePipelines, ReduceByAKeySortsInsteadOfHashing) {
  ProgramBuilder b;
  auto r = b.input("r", {{"id", Type::I32}, {"s", Type::String}, {"v", Type::I64}}, 1);
  b.output(r.reduce({"s", "id"}, {sum(col("v"), "sv")}), "by_key");
  b.output(r.select(col("v") > 1).reduce({"id"}, {count("c")}), "by_key_selected");
  b.output(r.reduce({"s"}, {sum(col("v"), "sv")}), "by_other");
  const std::string plan = physical(b.check());
  EXPECT_EQ(count_in(plan, " hash "), 1) << plan;
  EXPECT_NE(plan.find("by [s, id] (inserted)"), std::string::npos) << plan;
  EXPECT_NE(plan.find("by [id] (inserted)"), std::string::npos) << plan;
}

TEST(FusePipelines, LimitIntoItsProducer) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}}, 0, {"k"});
  b.output(r.select(col("k") > 1).limit(10, 3), "o");
  auto res = pipeline(b.check());
  EXPECT_EQ(passes::print_physical_plan(res.physical),
            "n0 input() order [k]\n"
            "n1 select(n0) order [k] fused into n2\n"
            "n2 limit(n1) order [k]\n"
            "n3 output(n2) order [k]\n");
  EXPECT_NE(res.plan.source.find("n2_select_limit("), std::string::npos);
  EXPECT_EQ(res.plan.source.find("ranc_limit_count<<<"), std::string::npos);
  EXPECT_EQ(testing::kernel_group_mismatch(res), "");
}

// Barriers: nothing fuses into a sort, an output, a product's inputs, or across a node
// with two consumers; a view that filters does not reach consumers that read rows at
// random (set operations, distinct, a sort-merge join's right side).
TEST(FusePipelines, NothingFusesAcrossBarriers) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q = b.input("q", {{"qk", Type::I32}});
  auto shared = r.select(col("k") > 0);
  b.output(shared.sort({"k"}), "sorted");
  b.output(shared.project({"v"}), "projected");
  b.output(r.select(col("v") > 0).project({"k"}).union_with(q), "union");
  b.output(r.project({"k"}).product(q), "product");
  auto res = pipeline(b.check());
  const std::string text = passes::print_physical_plan(res.physical);
  EXPECT_EQ(text,
            "n0 input()\n"
            "n1 input()\n"
            "n2 select(n0) shares the read of n0 in the kernel of n6\n"
            "n3 sort(n2) by [k, v] order [k, v]\n"
            "n4 project(n2)\n"
            "n5 select(n0) fused into n6\n"
            "n6 project(n5) shares the read of n0 in the kernel of n6\n"
            "n7 sort(n6) by [k] (inserted) order [k]\n"
            "n8 sort(n1) by [qk] (inserted) order [qk]\n"
            "n9 union(n7, n8) order [k] unique\n"
            "n10 project(n0)\n"
            "n11 product(n10, n1)\n"
            "n12 output(n3) order [k, v]\n"
            "n13 output(n4)\n"
            "n14 output(n9) order [k] unique\n"
            "n15 output(n11)\n")
      << text;
  EXPECT_EQ(testing::kernel_group_mismatch(res), "");
}

// Thread-level: distinct on sorted input keeps row i when it differs from row i - 1, a
// stage like a select: with an anti join after it (a fixpoint's new tuples) both run in
// one compaction, whose searches take one row per thread; a merge (union) that reads
// rows at random takes it only materialised.
TEST(FusePipelines, DistinctIsAStageOfItsConsumer) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I32}});
  auto q = b.input("q", {{"qk", Type::I32}, {"qv", Type::I32}});
  b.output(r.sort({"k", "v"}).distinct().anti_join(q, {"k", "v"}, {"qk", "qv"}), "new");
  b.output(r.sort({"k", "v"}).distinct().union_with(q), "all");
  auto res = pipeline(b.check(), {.join = JoinAlgorithm::SortMerge});
  const std::string text = passes::print_physical_plan(res.physical);
  EXPECT_NE(text.find("n3 distinct(n2) order [k, v] unique fused into n5"), std::string::npos)
      << text;
  EXPECT_EQ(testing::kernel_group_mismatch(res), "");
  int search_kernels = 0;
  for (const auto& s : res.plan.steps)
    if (const auto* l = std::get_if<rt::Launch>(&s); l && l->kernel == "n5_distinct_antijoin") {
      ++search_kernels;
      EXPECT_EQ(l->items_per_block, 1);  // one tile per block
      EXPECT_NE(res.plan.source.find("SelectAgent<P::SelectSearch>"), std::string::npos);
    }
  EXPECT_EQ(search_kernels, 1) << codegen::describe_plan(res.plan);
  // The union's input is materialised by a kernel of its own, named after the distinct.
  bool own = false;
  for (const auto& k : res.plan.kernels) own = own || k.find("_distinct") != std::string::npos &&
                                                         k.find("antijoin") == std::string::npos &&
                                                         k.find("init") == std::string::npos;
  EXPECT_TRUE(own);
  auto off = pipeline(b.check(), {.join = JoinAlgorithm::SortMerge, .fusion = false});
  EXPECT_EQ(testing::kernel_group_mismatch(off), "");
}

// A sort that packs whole tuples into one order word (every attribute a key, one word, not
// a single integer key) streams its input chain in the kernel that writes the words (a
// join's write stage, a select's compaction), and hands distincts its sorted words packed:
// no kernel writes the chain's columns, none packs them apart, none unpacks for the
// distinct. Sorts that carry other attributes, take two words or sort one integer column
// as it is stay barriers behind a materialised input.
TEST(FusePipelines, SortsOfWholeTuplesTakeTheirChainAndKeepTheirWords) {
  ProgramBuilder b;
  auto e = b.input("e", {{"s", Type::I32}, {"d", Type::I32}});
  auto f = b.input("f", {{"m", Type::I32}, {"t", Type::I32}});
  b.output(e.join(f, {"d"}, {"m"}).project({"s", "t"}).distinct(), "paths");
  b.output(e.select(col("s") < 5).sort({desc("d"), "s"}), "sorted");
  b.output(f.select(col("m") > 0).project({"t"}).sort({"t"}), "native");
  b.output(e.project({"s", "d", as(col("s") + col("d"), "x")}).distinct(), "wide");
  const Program p = b.check();
  auto res = pipeline(p, {.join = JoinAlgorithm::SortMerge});
  const std::string text = passes::print_physical_plan(res.physical);
  EXPECT_EQ(text,
            "n0 input()\n"
            "n1 input()\n"
            "n2 sort(n1) by [m] (inserted) order [m]\n"
            "n3 join(n0, n2) fused into n5\n"
            "n4 project(n3) fused into n5\n"
            "n5 sort(n4) by [s, t] (inserted) order [s, t] -> sorted words\n"
            "n6 distinct(n5) order [s, t] unique\n"
            "n7 select(n0) fused into n8\n"
            "n8 sort(n7) by [d desc, s] order [d desc, s]\n"
            "n9 select(n1) fused into n10\n"
            "n10 project(n9)\n"
            "n11 sort(n10) by [t] order [t]\n"
            "n12 project(n0)\n"
            "n13 sort(n12) by [s, d, x] (inserted) order [s, d, x]\n"
            "n14 distinct(n13) order [s, d, x] unique\n"
            "n15 output(n6) order [s, t] unique\n"
            "n16 output(n8) order [d desc, s]\n"
            "n17 output(n11) order [t]\n"
            "n18 output(n14) order [s, d, x] unique\n")
      << text;
  EXPECT_EQ(testing::kernel_group_mismatch(res), "");
  // The join writes the words of n5 (no columns, no packing kernel) and the distinct reads
  // them; the select compacts n8's words, which its output needs unpacked; n11 sorts its
  // column as it is, n13 packs two words.
  std::string kernels;
  for (const auto& k : res.plan.kernels) kernels += k + " ";
  EXPECT_EQ(kernels,
            "n3_join_count n5_join_project_sort_write n6_distinct n8_select_sort n8_sorted "
            "n10_select_project n12_project n13_sortword1 n13_sortword0 n13_sorted n14_distinct ");
  auto off = pipeline(p, {.join = JoinAlgorithm::SortMerge, .fusion = false});
  EXPECT_EQ(testing::kernel_group_mismatch(off), "");
  for (const auto& n : off.physical.nodes) EXPECT_FALSE(n.keeps_words);
}

// Set operations take the sorted words of their inputs' sorts packed as well (their merge
// reads rows at random from views that keep every row).
TEST(FusePipelines, SetOperationsReadSortedWords) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::F32}});
  auto q = b.input("q", {{"qk", Type::I32}, {"qv", Type::F32}});
  b.output(r.select(col("k") > 2).union_with(q), "u");
  b.output(r.difference(q.project({"qk", "qv"})), "d");
  auto res = pipeline(b.check());
  const std::string text = passes::print_physical_plan(res.physical);
  EXPECT_EQ(count_in(text, "-> sorted words"), 4) << text;
  EXPECT_EQ(testing::kernel_group_mismatch(res), "");
  std::string kernels;
  for (const auto& k : res.plan.kernels) kernels += k + " ";
  EXPECT_EQ(count_in(kernels, "sorted"), 0) << kernels;  // no unpacking kernel
  EXPECT_EQ(count_in(kernels, "_select_sort"), 1) << kernels;  // the select compacts words
  auto off = pipeline(b.check(), {.fusion = false});
  EXPECT_EQ(passes::print_physical_plan(off.physical).find("sorted words"), std::string::npos);
  EXPECT_EQ(testing::kernel_group_mismatch(off), "");
}

// Input sharing: select/project chains over one relation that are materialised each run
// in one kernel that reads the relation once (SharedSelectAgent for the chains that
// filter, a map over the same tiles for the others), in groups of up to four in node
// order. A chain that only passes attributes through runs no kernel and shares nothing.
// The consumers of a group's earlier chains are lowered after its last chain.
TEST(FusePipelines, InputSharing) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q = b.input("q", {{"qk", Type::I32}}, 0, {"qk"});
  // A sort-merge join's left select is materialised: its join comes before the other
  // chains, so it is lowered after the group's last chain.
  b.output(r.select(col("k") < 0).join(q, {"k"}, {"qk"}), "joined");
  b.output(r.select(col("k") > 5).project({"k", as(col("v") * 2, "v2")}), "high");
  b.output(r.project({"v"}), "renamed");
  b.output(r.project({as(col("v") + 1, "v1")}), "map");
  b.output(r.select(col("v") == 3), "three");
  b.output(r.select(col("v") == 4), "four");  // the fifth chain: alone, no sharing
  Program p = b.check();
  auto res = pipeline(p, {.join = JoinAlgorithm::SortMerge});
  EXPECT_EQ(passes::print_physical_plan(res.physical),
            "n0 input()\n"
            "n1 input() order [qk]\n"
            "n2 select(n0) shares the read of n0 in the kernel of n8\n"
            "n3 join(n2, n1)\n"
            "n4 select(n0) fused into n8\n"
            "n5 project(n4) shares the read of n0 in the kernel of n8\n"
            "n6 project(n0)\n"
            "n7 project(n0) shares the read of n0 in the kernel of n8\n"
            "n8 select(n0) shares the read of n0 in the kernel of n8\n"
            "n9 select(n0)\n"
            "n10 output(n3)\n"
            "n11 output(n5)\n"
            "n12 output(n6)\n"
            "n13 output(n7)\n"
            "n14 output(n8)\n"
            "n15 output(n9)\n");
  EXPECT_EQ(passes::print_fusion(res.physical),
            "kernel of n8: n2 select, n4 select, n5 project, n7 project, n8 select (one read of n0)\n");
  EXPECT_EQ(testing::kernel_group_mismatch(res), "");
  // One kernel writes the four chains, then the join runs.
  std::vector<std::string> kernels;
  for (const auto& s : res.plan.steps)
    if (const auto* l = std::get_if<rt::Launch>(&s)) kernels.push_back(l->kernel);
  EXPECT_EQ(fmt::format("{}", fmt::join(kernels, " ")),
            "n1_check_order n8_select_and_n2_select_and_n5_select_project_and_n7_project "
            "n3_join_count n3_join_write n9_select");
  EXPECT_NE(res.plan.source.find("SharedSelectAgent<P::Select, 3>"), std::string::npos);
  EXPECT_EQ(res.plan.source.find("n2_select("), std::string::npos);
  EXPECT_NE(res.plan.source.find("n9_select("), std::string::npos);
  std::vector<std::string> outputs;
  for (const auto& o : res.plan.outputs) outputs.push_back(o.name);
  EXPECT_EQ(fmt::format("{}", fmt::join(outputs, " ")), "joined high renamed map three four");
  // Unfused: nothing shares.
  auto off = pipeline(p, {.fusion = false});
  EXPECT_EQ(passes::print_physical_plan(off.physical).find("shares"), std::string::npos);
  EXPECT_EQ(off.plan.source.find("SharedSelectAgent"), std::string::npos);

  // Only chains that keep every row: one map kernel writes both.
  ProgramBuilder m;
  auto mr = m.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  m.output(mr.project({as(col("k") * 2, "k2")}), "a");
  m.output(mr.project({"k", as(col("v") - 1, "v1")}), "b");
  auto mres = pipeline(m.check());
  EXPECT_EQ(launches(mres.plan), 1) << codegen::describe_plan(mres.plan);
  EXPECT_NE(mres.plan.source.find("n2_project_and_n1_project("), std::string::npos) << mres.plan.source;
  EXPECT_EQ(testing::kernel_group_mismatch(mres), "");
}

// Every rule at once, and the operator programs: the kernels contain exactly the
// operators the pass grouped, with either join algorithm; without fusion nothing is.
TEST(FusePipelines, KernelsHoldTheirGroups) {
  for (const Program& p : {testing::fusion_program(), testing::operators_program(),
                           testing::expressions_program(), testing::hash_join_program()})
    for (JoinAlgorithm j : {JoinAlgorithm::SortMerge, JoinAlgorithm::Hash}) {
      auto res = pipeline(p, {.join = j});
      EXPECT_EQ(testing::kernel_group_mismatch(res), "") << print_program(p);
      auto off = pipeline(p, {.join = j, .fusion = false});
      EXPECT_EQ(testing::kernel_group_mismatch(off), "");
      for (const auto& n : off.physical.nodes) EXPECT_FALSE(n.fused);
    }
  auto res = pipeline(testing::fusion_program());
  EXPECT_NE(passes::print_fusion(res.physical), "");
}

// The pass runner: the passes in order with timings, a dump after any pass, switches
// for the optional passes, errors for unknown or required ones, RANC_NO_FUSION.
TEST(PassRunner, RunsTheListTimesDumpsAndSwitches) {
  Program p = testing::fusion_program();
  auto res = pipeline(p, {.dump_after = "fuse_pipelines"});
  ASSERT_EQ(res.passes.size(), 13u);
  EXPECT_EQ(res.passes[0].name, "prune_attributes");
  EXPECT_EQ(res.passes[1].name, "lower_scalar_subqueries");
  EXPECT_EQ(res.passes[2].name, "lower_distinct_aggregates");
  EXPECT_EQ(res.passes[3].name, "lower_outer_joins");
  EXPECT_EQ(res.passes[4].name, "lower_nulls");
  EXPECT_EQ(res.passes[5].name, "push_selects");
  EXPECT_EQ(res.passes[6].name, "plan_sort_orders");
  EXPECT_EQ(res.passes[7].name, "plan_top_k");
  EXPECT_EQ(res.passes[8].name, "fuse_pipelines");
  EXPECT_EQ(res.passes[9].name, "plan_paged_edges");
  EXPECT_EQ(res.passes[10].name, "lower");
  EXPECT_EQ(res.passes[11].name, "rotate_loop_reads");
  EXPECT_EQ(res.passes[12].name, "insert_frees");
  for (const auto& r : res.passes) EXPECT_TRUE(r.ran) << r.name;
  EXPECT_NE(res.dump.find("fused into"), std::string::npos);
  EXPECT_NE(res.dump.find("kernel of n"), std::string::npos);
  auto lowered = pipeline(p, {.dump_after = "lower"});
  EXPECT_EQ(lowered.dump.find("free "), std::string::npos);  // before insert_frees
  auto freed = pipeline(p, {.dump_after = "insert_frees"});
  EXPECT_NE(freed.dump.find("free "), std::string::npos);

  auto no_frees = pipeline(p, {.disabled_passes = {"insert_frees"}});
  EXPECT_FALSE(no_frees.passes[12].ran);
  for (const auto& s : no_frees.plan.steps) EXPECT_FALSE(std::holds_alternative<rt::Free>(s));
  auto no_fuse = pipeline(p, {.disabled_passes = {"fuse_pipelines"}});
  EXPECT_FALSE(no_fuse.passes[8].ran);
  EXPECT_EQ(passes::print_physical_plan(no_fuse.physical).find("fused"), std::string::npos);

  EXPECT_THROW(pipeline(p, {.disabled_passes = {"lower"}}), InternalError);
  EXPECT_THROW(pipeline(p, {.disabled_passes = {"no_such_pass"}}), InternalError);
  EXPECT_THROW(pipeline(p, {.dump_after = "no_such_pass"}), InternalError);

  setenv("RANC_NO_FUSION", "1", 1);
  auto env_off = pipeline(p);
  unsetenv("RANC_NO_FUSION");
  EXPECT_EQ(passes::print_physical_plan(env_off.physical).find("fused"), std::string::npos);
  EXPECT_NE(passes::print_physical_plan(pipeline(p).physical).find("fused"), std::string::npos);
}


// plan_paged_edges: a hash join's output (with the stages fused into it) is a paged list
// when every consumer streams it, dense when one needs a dense input; sort-merge joins
// and selects stay dense.
TEST(PlanPagedEdges, HashJoinIntoStreamingConsumersIsPaged) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q = b.input("q", {{"qk", Type::I32}, {"w", Type::I64}});
  auto s = b.input("s", {{"sk", Type::I32}, {"x", Type::I64}});
  b.output(r.join(q, {"k"}, {"qk"}).select(col("v") < col("w")).reduce({}, {sum(col("w"), "sw")}),
           "global");
  b.output(r.join(s, {"k"}, {"sk"}).project({"k", "x"}).join(q, {"k"}, {"qk"}), "join_join");
  b.output(q.join(s, {"qk"}, {"sk"}), "to_output");
  b.output(q.join(r, {"qk"}, {"k"}).reduce({"qk"}, {count("c")}), "grouped");
  Program p = b.check();
  // The global reduce streams the join's pages when the join does not fold it
  // (AGlobalReduceFoldsTheHashJoin).
  auto res = pipeline(p, {.join = JoinAlgorithm::Hash, .fold_hash_joins = false});
  EXPECT_EQ(passes::print_physical_plan(res.physical),
            "n0 input()\n"
            "n1 input()\n"
            "n2 input()\n"
            "n3 join(n0, n1) hash fused into n4\n"
            "n4 select(n3) -> paged\n"
            "n5 reduce(n4) unique\n"
            "n6 project(n5)\n"  // lower_nulls: the global sum's NULL over no rows
            "n7 join(n0, n2) hash fused into n8\n"
            "n8 project(n7) -> paged\n"
            "n9 join(n8, n1) hash\n"
            "n10 join(n1, n2) hash\n"
            "n11 join(n1, n0) hash -> paged\n"
            "n12 reduce(n11) hash order [qk] unique\n"
            "n13 output(n6)\n"
            "n14 output(n9)\n"
            "n15 output(n10)\n"
            "n16 output(n12) order [qk] unique\n");
  EXPECT_EQ(testing::kernel_group_mismatch(res), "");
  // The three paged joins write pages in one pass, the two dense ones their rows (no count
  // kernel either way); all grow when short.
  EXPECT_EQ(count_in(res.plan.source, "_hash_paged("), 3);
  EXPECT_EQ(count_in(res.plan.source, "_hash("), 2);
  int regrows = 0;
  for (const auto& st : res.plan.steps)
    if (const auto* l = std::get_if<rt::Launch>(&st); l && l->regrow) ++regrows;
  EXPECT_EQ(regrows, 5);
  // The reduce and the second join stream the pages. The one compaction is the hash
  // reduce's way out for many groups (it sorts its input), which runs over no rows unless
  // phase 1's records overflow.
  EXPECT_EQ(count_in(res.plan.source, "_paged_to_dense("), 1);

  // Sort-merge joins, and paged lists switched off three ways: all dense.
  auto none = [](const passes::PipelineResult& r) {
    return passes::print_physical_plan(r.physical).find("paged") == std::string::npos &&
           r.plan.source.find("_hash_paged(") == std::string::npos;
  };
  EXPECT_TRUE(none(pipeline(p, {.join = JoinAlgorithm::SortMerge})));
  EXPECT_TRUE(none(pipeline(p, {.join = JoinAlgorithm::Hash, .paged = false})));
  EXPECT_TRUE(none(pipeline(p, {.join = JoinAlgorithm::Hash, .disabled_passes = {"plan_paged_edges"}})));
  setenv("RANC_NO_PAGED", "1", 1);
  EXPECT_TRUE(none(pipeline(p, {.join = JoinAlgorithm::Hash})));
  unsetenv("RANC_NO_PAGED");
  // Without fusion the join itself is the materialised node.
  auto unfused = passes::print_physical_plan(pipeline(p, {.join = JoinAlgorithm::Hash, .fusion = false}).physical);
  EXPECT_NE(unfused.find("n3 join(n0, n1) hash -> paged\n"), std::string::npos) << unfused;
  EXPECT_NE(unfused.find("n7 join(n0, n2) hash -> paged\n"), std::string::npos) << unfused;
  EXPECT_NE(unfused.find("n10 join(n1, n2) hash\n"), std::string::npos) << unfused;
}

// A build side whose declared key is among the join's keys (a foreign-key join): at most
// one match a probe row, so the dense output, sized by the probe rows, is exact and written
// in one pass; the planner keeps it dense. A key the join does not cover (q's key (qk, w)
// against a join on qk only) leaves the join paged.
TEST(PlanPagedEdges, UniqueBuildKeysStayDense) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto s = b.input("s", {{"sk", Type::I32}, {"x", Type::I64}}, 1);
  auto q = b.input("q", {{"qk", Type::I32}, {"w", Type::I64}}, 2);
  // Grouped reduces (hashed: they stream a paged input); a global one would fold the matches.
  b.output(r.join(s, {"k"}, {"sk"}).select(col("v") < col("x")).reduce({"k"}, {sum(col("x"), "sx")}),
           "fk");
  b.output(r.join(q, {"k"}, {"qk"}).select(col("v") < col("w")).reduce({"k"}, {sum(col("w"), "sw")}),
           "partial_key");
  auto res = pipeline(b.check(), {.join = JoinAlgorithm::Hash});
  const std::string plan = passes::print_physical_plan(res.physical);
  EXPECT_NE(plan.find("n4 select(n3)\n"), std::string::npos) << plan;
  EXPECT_NE(plan.find("n7 select(n6) -> paged\n"), std::string::npos) << plan;
  EXPECT_EQ(count_in(res.plan.source, "_hash_paged("), 1);
  EXPECT_EQ(count_in(res.plan.source, "_hash("), 1);
  EXPECT_EQ(testing::kernel_group_mismatch(res), "");
}

// The page size is a power of two; the plan's page arithmetic follows it.
TEST(PlanPagedEdges, PageRowsOption) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q = b.input("q", {{"qk", Type::I32}, {"w", Type::I64}});
  b.output(r.join(q, {"k"}, {"qk"}).reduce({"k"}, {sum(col("w"), "sw")}), "o");
  Program p = b.check();
  auto res = pipeline(p, {.join = JoinAlgorithm::Hash, .page_rows = 256});
  EXPECT_NE(res.plan.source.find("Agent::run_paged<256, false>("), std::string::npos);
  EXPECT_NE(res.plan.source.find("paged_keep<256>"), std::string::npos);
  EXPECT_THROW(pipeline(p, {.join = JoinAlgorithm::Hash, .page_rows = 1000}), InternalError);
  setenv("RANC_PAGE_ROWS", "4096", 1);
  auto env = pipeline(p, {.join = JoinAlgorithm::Hash});
  unsetenv("RANC_PAGE_ROWS");
  EXPECT_NE(env.plan.source.find("paged_keep<4096>"), std::string::npos);
}

// Which consumers stream a paged input (the rule in plan_paged_edges.h).
TEST(PlanPagedEdges, StreamingConsumers) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q = b.input("q", {{"qk", Type::I32}, {"w", Type::I64}});
  b.output(r.select(col("v") > 0), "a");
  b.output(r.reduce({}, {count("c")}), "b");
  b.output(r.reduce({"k"}, {count("c")}), "c");
  b.output(r.join(q, {"k"}, {"qk"}), "d");
  b.output(r.sort({"k"}), "e");
  b.output(r.distinct(), "f");
  b.output(r.limit(3), "g");
  b.output(r.sort({"k"}).reduce({"k"}, {count("c")}), "h");  // grouped by sorting
  Program p = b.check();
  auto res = pipeline(p, {.join = JoinAlgorithm::SortMerge});
  auto node = [&](OpKind k) -> const Node& {
    for (const Node& n : res.physical.program.nodes())
      if (n.kind == k && !res.physical.nodes[static_cast<size_t>(n.id)].inserted) return n;
    throw std::runtime_error("no such node");
  };
  const auto& pp = res.physical;
  EXPECT_TRUE(passes::streams_paged_input(pp, node(OpKind::Select), 0));
  EXPECT_TRUE(passes::streams_paged_input(pp, node(OpKind::Limit), 0));
  EXPECT_TRUE(passes::streams_paged_input(pp, node(OpKind::Join), 0));   // sort-merge left
  EXPECT_FALSE(passes::streams_paged_input(pp, node(OpKind::Join), 1));  // binary-searched
  EXPECT_FALSE(passes::streams_paged_input(pp, node(OpKind::Sort), 0));
  EXPECT_FALSE(passes::streams_paged_input(pp, node(OpKind::Distinct), 0));
  EXPECT_FALSE(passes::streams_paged_input(pp, node(OpKind::Output), 0));
  int sorted_groups = 0;
  for (const Node& n : pp.program.nodes())
    if (n.kind == OpKind::Reduce) {
      const bool hashed = pp.nodes[static_cast<size_t>(n.id)].hash_reduce;
      sorted_groups += !n.group_keys.empty() && !hashed;
      EXPECT_EQ(passes::streams_paged_input(pp, n, 0), n.group_keys.empty() || hashed);
    }
  EXPECT_EQ(sorted_groups, 1);
}

}  // namespace
}  // namespace ranc
