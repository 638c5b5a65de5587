// Code generation tests (no GPU): physical planning Before/Expected, plan structure
// (frees after last use, kernel names, no user identifiers in code) and NVRTC
// compilation of the generated translation units to sm_90 CUBIN.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nvrtc.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ranc/codegen/codegen.h"
#include "ranc/codegen/sort_layout.h"
#include "ranc/frontend/ra_parser.h"
#include "ranc/dsl.h"
#include "ranc/passes/insert_frees.h"
#include "ranc/passes/pass_runner.h"
#include "ranc/passes/plan_sort_orders.h"
#include "ranc/passes/plan_top_k.h"
#include "ranc/passes/rotate_loop_reads.h"
#include "test_programs.h"
#ifdef RANC_HAVE_EMBEDDED_TEMPLATES
#include "ranc/templates/embedded.h"
#endif
#ifdef RANC_HAVE_RUNTIME
#include "ranc/runtime/plan_validate.h"
#endif

namespace ranc {
namespace {

std::string physical(const Program& checked,
                     codegen::JoinAlgorithm join = codegen::JoinAlgorithm::Auto,
                     codegen::GroupBy group_by = codegen::GroupBy::Sort) {
  return passes::print_physical_plan(
      passes::plan_sort_orders(checked, {.join = join, .group_by = group_by}));
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// ---------------------------------------------------------------------------------
// Physical planning: Before (program) / Expected (plan text).

// (These plans group by sorting, --group-by=sort; hashing is FusePipelines.HashReduce*.)
// A reduce over an unsorted input gets a keys-only sort in front of it; by default it
// hashes instead, and its output has the same order.
TEST(PlanSortOrders, SortInsertedBeforeReduceOnUnsortedInput) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  b.output(r.reduce({"k"}, {ranc::sum(col("v"), "s")}), "out");
  EXPECT_EQ(physical(b.check()),
            "n0 input()\n"
            "n1 sort(n0) by [k] (inserted) order [k]\n"
            "n2 reduce(n1) order [k] unique\n"
            "n3 output(n2) order [k] unique\n");
  EXPECT_EQ(physical(b.check(), codegen::JoinAlgorithm::Auto, codegen::GroupBy::Auto),
            "n0 input()\n"
            "n1 reduce(n0) hash order [k] unique\n"
            "n2 output(n1) order [k] unique\n");
}

// A reduce over an input already sorted by the group key needs no sort.
TEST(PlanSortOrders, NoSortWhenInputAlreadySorted) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  b.output(r.sort({"k"}).reduce({"k"}, {ranc::sum(col("v"), "s")}), "out");
  EXPECT_EQ(physical(b.check()),
            "n0 input()\n"
            "n1 sort(n0) by [k, v] order [k, v]\n"
            "n2 reduce(n1) order [k] unique\n"
            "n3 output(n2) order [k] unique\n");
}

// Grouping only needs the keys together: a descending order and any key sequence do.
TEST(PlanSortOrders, GroupingAcceptsAnyKeySequenceAndDirection) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"j", Type::I32}, {"v", Type::I64}});
  b.output(r.sort({desc("j"), "k"}).reduce({"k", "j"}, {ranc::count("n")}), "out");
  EXPECT_EQ(physical(b.check()),
            "n0 input()\n"
            "n1 sort(n0) by [j desc, k, v] order [j desc, k, v]\n"
            "n2 reduce(n1) order [j desc, k] unique\n"
            "n3 output(n2) order [j desc, k] unique\n");
}

// plan_top_k: a sort that only limits read needs their first offset + limit rows (the largest
// of them); one read by anything else, a no-op sort and a window past kTopKMaxRows sort fully.
TEST(PlanTopK, SortsOnlyWhatTheLimitsRead) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto s = r.sort({desc("v")});
  b.output(s.limit(10), "top10");
  b.output(s.limit(20, 30), "next");                                   // n1: top 50
  auto t = r.sort({"k"});
  b.output(t.limit(5), "five");
  b.output(t, "all");                                                  // n4: read whole
  b.output(r.sort({"k", "v"}).limit(passes::kTopKMaxRows + 1), "big");  // n6: too many
  b.output(r.sort({"k", "v"}).limit(passes::kTopKMaxRows), "most");    // n8: just enough
  Program p = b.check();
  passes::PhysicalPlan pp = passes::plan_sort_orders(p, {});
  passes::plan_top_k(pp);
  const std::string text = passes::print_physical_plan(pp);
  EXPECT_NE(text.find("n1 sort(n0) by [v desc, k] top 50 order"), std::string::npos) << text;
  EXPECT_NE(text.find("n4 sort(n0) by [k, v] order"), std::string::npos) << text;
  EXPECT_NE(text.find("n6 sort(n0) by [k, v] order"), std::string::npos) << text;
  EXPECT_EQ(count_of(text, " top "), 2) << text;
  EXPECT_NE(text.find(fmt::format("by [k, v] top {} order", passes::kTopKMaxRows)), std::string::npos)
      << text;

  // The input already has the order: the sort is a no-op, the limit a prefix.
  ProgramBuilder d;
  auto sorted = d.input("r", {{"k", Type::I32}, {"v", Type::I64}}, 0, {"k", "v"});
  d.output(sorted.sort({"k"}).limit(3), "out");
  passes::PhysicalPlan dp = passes::plan_sort_orders(d.check(), {});
  passes::plan_top_k(dp);
  EXPECT_EQ(count_of(passes::print_physical_plan(dp), " top "), 0);

  // Through the pipeline, and switched off.
  auto on = passes::run_pipeline(p, {});
  auto off = passes::run_pipeline(p, {.disabled_passes = {"plan_top_k"}});
  EXPECT_EQ(on.physical.nodes[1].top_k, 50);
  EXPECT_EQ(off.physical.nodes[1].top_k, 0);
  const int on_kernels = testing::kernels_named(on.plan, "_topk_"),
            off_kernels = testing::kernels_named(off.plan, "_topk_"),
            on_launches = testing::launches_named(on.plan, "_topk_");
  // n1 (a 64-bit first word: 5 levels after the first), n8 (k and v: 64 bits): kernels for the
  // first pass, the later levels' histogram and the select each, and one pick for the unit;
  // launched: the first pass, its pick, 5 x (histogram, pick) and the select each.
  EXPECT_EQ(on_kernels, 2 * 3 + 1);
  EXPECT_EQ(on_launches, 2 * (2 + 2 * 5 + 1));
  EXPECT_EQ(off_kernels, 0);
}

// A top-k sort's plan: the threshold read back once, the compaction sized by it and not read
// back again, the sort of the kept rows, and fewer levels for a 32-bit first word.
TEST(PlanTopK, StepsOfATopKSort) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"w", Type::F32}});
  b.output(r.sort({desc("k")}).limit(7, 2), "out");
  rt::Plan plan = codegen::generate_plan(b.check());
  const std::string d = codegen::describe_plan(plan);
  // (k, w) is one 64-bit word: 5 levels after the first, launched only above the bin rows.
  EXPECT_EQ(testing::launches_named(plan, "n1_topk_histogram"), 5) << d;
  EXPECT_EQ(testing::launches_named(plan, "ranc_topk_pick"), 6) << d;
  EXPECT_NE(d.find("max(0, 1024*s0 + -4194304)"), std::string::npos) << d;  // n > 4096
  EXPECT_EQ(count_of(d, "= read b"), 1) << d;  // the kept rows; nothing else reads back
  EXPECT_NE(d.find("(n1.topk.c0)"), std::string::npos) << d;

  ProgramBuilder c;
  auto q = c.input("q", {{"k", Type::I32}});
  c.output(q.sort({"k"}).limit(4), "out");
  const rt::Plan plan_c = codegen::generate_plan(c.check(), {.top_k_bin_rows = 64});
  const std::string e = codegen::describe_plan(plan_c);
  EXPECT_EQ(testing::launches_named(plan_c, "n1_topk_histogram"), 2) << e;  // 32 bits: 2 more levels
  EXPECT_NE(e.find("max(0, 1024*s0 + -65536)"), std::string::npos) << e;
}

// A sort-merge join sorts its right input by the join keys; the left is not sorted.
TEST(PlanSortOrders, JoinSortsRightInputOnly) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q = b.input("q", {{"qk", Type::I32}, {"w", Type::F64}});
  b.output(r.join(q, {"k"}, {"qk"}), "out");
  EXPECT_EQ(physical(b.check(), codegen::JoinAlgorithm::SortMerge),
            "n0 input()\n"
            "n1 input()\n"
            "n2 sort(n1) by [qk] (inserted) order [qk]\n"
            "n3 join(n0, n2)\n"
            "n4 output(n3)\n");
}

// CodegenOptions::merge_ordered_pairs_only (on by default): an inner or semi join whose right
// input alone is ordered by the keys, as an input declares, hashes (a table, a hash set) instead of binary-searching it a left row;
// two ordered inputs still merge (or search, for the semi join). A fixpoint's loop body
// (CodegenOptions::loop_body) keeps its searches of the relations the loop carries, and a right
// input ordered by an operator (a reduce, a sort) is searched. Off, the right's order alone
// picks sort-merge.
TEST(PlanSortOrders, MergeOnlyOrderedPairs) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}}, 0);
  auto rs = b.input("rs", {{"k", Type::I32}, {"v", Type::I64}}, 0, {SortSpec("k")});
  auto q = b.input("q", {{"qk", Type::I32}, {"w", Type::F64}}, 0, {SortSpec("qk")});
  b.output(r.join(q, {"k"}, {"qk"}), "right_only");
  b.output(rs.join(q, {"k"}, {"qk"}), "both");
  b.output(r.semi_join(q, {"k"}, {"qk"}), "semi");
  b.output(rs.semi_join(q, {"k"}, {"qk"}), "semi_both");
  // Ordered by an operator (a reduce's output), not as declared: still searched.
  b.output(r.join(q.reduce({"qk"}, {ranc::sum(col("w"), "s")}), {"k"}, {"qk"}), "made");
  const Program p = b.check();
  auto choices = [&](bool pairs, bool loop_body) {
    codegen::CodegenOptions o{.group_by = codegen::GroupBy::Sort};
    o.merge_ordered_pairs_only = pairs;
    o.loop_body = loop_body;
    return passes::print_join_choices(passes::plan_sort_orders(p, o));
  };
  const std::string on = choices(true, false), off = choices(false, false),
                    body = choices(true, true);
  EXPECT_EQ(count_of(on, "join inner: hash join"), 1) << on;
  EXPECT_NE(on.find("only the right input is ordered by the keys"), std::string::npos) << on;
  EXPECT_EQ(count_of(on, "join inner: sort-merge"), 2) << on;
  EXPECT_EQ(count_of(on, "join semi: hash set"), 1) << on;
  EXPECT_EQ(count_of(on, "join semi: sort-merge"), 1) << on;
  for (const std::string& all_search : {off, body}) {
    EXPECT_EQ(count_of(all_search, "join inner: sort-merge"), 3) << all_search;
    EXPECT_EQ(count_of(all_search, "join semi: sort-merge"), 2) << all_search;
    EXPECT_EQ(count_of(all_search, "hash"), 0) << all_search;
  }
}

// Auto hashes an inner join when no input is ordered by its keys (no sort at all); it stays
// sort-merge when the right input is already ordered by the keys (no sort either), or when
// an anti join of the same right input by the same keys shares the right's sort (a left
// outer join, lowered to an inner and an anti join: TPC-H Q13). Hash and merge force it.
TEST(PlanSortOrders, AutoJoinHashesUnsortedInputs) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q = b.input("q", {{"qk", Type::I32}, {"w", Type::F64}});
  b.output(r.join(q, {"k"}, {"qk"}), "out");
  EXPECT_EQ(physical(b.check()),
            "n0 input()\n"
            "n1 input()\n"
            "n2 join(n0, n1) hash\n"
            "n3 output(n2)\n");
  EXPECT_EQ(physical(b.check(), codegen::JoinAlgorithm::SortMerge),
            "n0 input()\n"
            "n1 input()\n"
            "n2 sort(n1) by [qk] (inserted) order [qk]\n"
            "n3 join(n0, n2)\n"
            "n4 output(n3)\n");
  ProgramBuilder s;
  auto sr = s.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto sq = s.input("q", {{"qk", Type::I32}, {"w", Type::F64}});
  s.output(sr.join(sq.sort({"qk"}), {"k"}, {"qk"}), "sorted_right");
  EXPECT_EQ(physical(s.check()),
            "n0 input()\n"
            "n1 input()\n"
            "n2 sort(n1) by [qk, w] order [qk, w]\n"
            "n3 join(n0, n2)\n"
            "n4 output(n3)\n");
  ProgramBuilder o;
  auto lr = o.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto lq = o.input("q", {{"qk", Type::I32}, {"w", Type::F64}});
  o.output(lr.join(lq, {"k"}, {"qk"}, JoinKind::Left), "outer");
  const std::string outer = passes::print_join_choices(passes::run_pipeline(o.check(), {}).physical);
  EXPECT_NE(outer.find("join inner: sort-merge"), std::string::npos) << outer;
  EXPECT_NE(outer.find("shares its sort (a left outer join)"), std::string::npos) << outer;
  EXPECT_NE(outer.find("join anti: sort-merge"), std::string::npos) << outer;
}

// A semi or anti join probes a hash set of its right keys unless the right input is
// already ordered by them (then the binary search needs no preparation); it keeps the
// left input's order either way. --join=merge sorts the right input instead.
TEST(PlanSortOrders, AutoSemiJoinHashesUnsortedRightInput) {
  ProgramBuilder d;
  auto r = d.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q = d.input("q", {{"qk", Type::I32}, {"w", Type::F64}});
  d.output(r.sort({"k"}).semi_join(q, {"k"}, {"qk"}), "semi");
  d.output(r.anti_join(q.sort({"qk"}), {"k"}, {"qk"}), "anti");
  EXPECT_EQ(physical(d.check()),
            "n0 input()\n"
            "n1 input()\n"
            "n2 sort(n0) by [k, v] order [k, v]\n"
            "n3 join(n2, n1) hash order [k, v]\n"
            "n4 sort(n1) by [qk, w] order [qk, w]\n"
            "n5 join(n0, n4)\n"
            "n6 output(n3) order [k, v]\n"
            "n7 output(n5)\n");
  EXPECT_EQ(physical(d.check(), codegen::JoinAlgorithm::SortMerge),
            "n0 input()\n"
            "n1 input()\n"
            "n2 sort(n0) by [k, v] order [k, v]\n"
            "n3 sort(n1) by [qk] (inserted) order [qk]\n"
            "n4 join(n2, n3) order [k, v]\n"
            "n5 sort(n1) by [qk, w] order [qk, w]\n"
            "n6 join(n0, n5)\n"
            "n7 output(n4) order [k, v]\n"
            "n8 output(n6)\n");
  // Forced, the sorted right input is hashed too.
  EXPECT_EQ(count_of(physical(d.check(), codegen::JoinAlgorithm::Hash), ") hash"), 2);

  // An inner join sorts q by qk anyway: the anti join shares that sort and searches it
  // (a left outer join's two halves); by another key it hashes.
  ProgramBuilder e;
  auto r2 = e.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q2 = e.input("q", {{"qk", Type::I32}, {"w", Type::I32}});
  e.output(r2.join(q2, {"k"}, {"qk"}), "inner");
  e.output(r2.anti_join(q2, {"k"}, {"qk"}), "anti");
  e.output(r2.semi_join(q2, {"k"}, {"w"}), "semi");
  EXPECT_EQ(physical(e.check()),
            "n0 input()\n"
            "n1 input()\n"
            "n2 sort(n1) by [qk] (inserted) order [qk]\n"
            "n3 join(n0, n2)\n"
            "n4 join(n0, n2)\n"
            "n5 join(n0, n1) hash\n"
            "n6 output(n3)\n"
            "n7 output(n4)\n"
            "n8 output(n5)\n");
}

// A hash join's output has no order: the left input's order is lost, so a reduce by
// the left's sort key needs a sort again; Hash ignores the right input's order.
TEST(PlanSortOrders, HashJoinOutputHasNoOrder) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q = b.input("q", {{"qk", Type::I32}, {"w", Type::F64}});
  b.output(r.sort({"k"}).join(q.sort({"qk"}), {"k"}, {"qk"}).reduce({"k"}, {ranc::count("c")}),
           "out");
  EXPECT_EQ(physical(b.check(), codegen::JoinAlgorithm::Hash),
            "n0 input()\n"
            "n1 input()\n"
            "n2 sort(n0) by [k, v] order [k, v]\n"
            "n3 sort(n1) by [qk, w] order [qk, w]\n"
            "n4 join(n2, n3) hash\n"
            "n5 sort(n4) by [k] (inserted) order [k]\n"
            "n6 reduce(n5) order [k] unique\n"
            "n7 output(n6) order [k] unique\n");
}

// Hash falls back to sort-merge for semi and anti joins and for keys that do not pack
// into one 64-bit word; one 64-bit key and two 32-bit keys do pack.
TEST(PlanSortOrders, HashJoinFallsBackToSortMerge) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"l", Type::I64}, {"f", Type::F32}, {"x", Type::I32}});
  auto q =
      b.input("q", {{"qk", Type::I32}, {"ql", Type::I64}, {"qf", Type::F32}, {"qx", Type::I32}});
  b.output(r.semi_join(q, {"k"}, {"qk"}), "semi");
  b.output(r.anti_join(q, {"k"}, {"qk"}), "anti");
  b.output(r.join(q, {"k", "l"}, {"qk", "ql"}), "i32_i64");
  b.output(r.join(q, {"k", "f", "x"}, {"qk", "qf", "qx"}), "three_keys");
  b.output(r.join(q, {"l"}, {"ql"}), "i64");
  b.output(r.join(q, {"k", "f"}, {"qk", "qf"}), "i32_f32");
  std::string p = physical(b.check(), codegen::JoinAlgorithm::Hash);
  // semi, anti, i64 and i32_f32 hash; i32_i64 (96 bits) and three_keys do not pack.
  EXPECT_EQ(count_of(p, " hash"), 4) << p;
  EXPECT_EQ(count_of(p, "join(n0, n1) hash"), 4) << p;
  // Sorts of q by [qk, ql] and [qk, qf, qx].
  EXPECT_EQ(count_of(p, "(inserted)"), 2) << p;
}

// A right input sorted (even descending) by the key is used as is.
TEST(PlanSortOrders, JoinUsesSortedRightInput) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q = b.input("q", {{"qk", Type::I32}, {"w", Type::F64}});
  b.output(r.sort({"k"}).join(q.sort({desc("qk")}), {"k"}, {"qk"}), "out");
  std::string p = physical(b.check());
  EXPECT_EQ(count_of(p, "(inserted)"), 0) << p;
  EXPECT_NE(p.find("join(n2, n3) order [k, v]"), std::string::npos) << p;
}

// Set operations need both inputs sorted the same way; duplicates within an input
// are dropped by the set operation itself, so no distinct is inserted.
TEST(PlanSortOrders, SetOpsInsertSortsOnlyWhenNeeded) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q = b.input("q", {{"k", Type::I32}, {"v", Type::I64}});
  b.output(r.union_with(q), "raw");
  std::string p0 = physical(b.check());
  EXPECT_EQ(count_of(p0, "(inserted)"), 2) << p0;
  EXPECT_EQ(count_of(p0, "distinct"), 0) << p0;

  ProgramBuilder b2;
  auto r2 = b2.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q2 = b2.input("q", {{"k", Type::I32}, {"v", Type::I64}});
  b2.output(r2.distinct().intersect(q2.distinct()), "dist");
  std::string p = physical(b2.check());
  EXPECT_EQ(count_of(p, "(inserted)"), 2) << p;  // only the sorts in front of the distincts
}

// Inputs with a declared order start out ordered: no sort in front of set operations,
// a sort-merge join's right side, a reduce or a distinct when the order fits; a
// declared order that does not fit still gets its sort.
TEST(PlanSortOrders, DeclaredInputOrderSkipsSorts) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}}, 0, {"k", "v"});
  auto q = b.input("q", {{"k", Type::I32}, {"v", Type::I64}}, 0, {"k", "v"});
  auto d = b.input("d", {{"k", Type::I32}, {"v", Type::I64}}, 0, {desc("k"), "v"});
  b.output(r.union_with(q), "u");
  b.output(r.intersect(q), "i");
  b.output(r.difference(q), "x");
  b.output(r.reduce({"k"}, {sum(col("v"), "s")}), "red");
  b.output(r.distinct(), "dis");
  b.output(d.reduce({"k"}, {count("c")}), "red_desc");
  b.output(d.union_with(q), "mixed");  // d's order is used, q is re-sorted
  std::string p = physical(b.check());
  EXPECT_EQ(count_of(p, "(inserted)"), 1) << p;
  EXPECT_NE(p.find("input() order [k, v]"), std::string::npos) << p;
  EXPECT_NE(p.find("input() order [k desc, v]"), std::string::npos) << p;

  codegen::CodegenOptions sm;
  sm.join = codegen::JoinAlgorithm::SortMerge;
  ProgramBuilder b2;
  auto f = b2.input("f", {{"fk", Type::I32}, {"fv", Type::I32}});
  auto pk = b2.input("p", {{"pk", Type::I32}, {"pv", Type::I32}}, 1, {"pk"});
  b2.output(f.join(pk, {"fk"}, {"pk"}), "j");
  std::string p2 = passes::print_physical_plan(passes::plan_sort_orders(b2.check(), sm));
  EXPECT_EQ(count_of(p2, "(inserted)"), 0) << p2;
}

// Unknown or repeated attributes in a declared order are errors at the declaration.
TEST(PlanSortOrders, DeclaredInputOrderIsChecked) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}}, 0, {"k", "w"});
  b.output(r, "out");
  try {
    (void)b.check();
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'w'"), std::string::npos) << e.what();
  }
  ProgramBuilder b2;
  auto r2 = b2.input("r", {{"k", Type::I32}, {"v", Type::I64}}, 0, {"k", desc("k")});
  b2.output(r2, "out");
  EXPECT_THROW((void)b2.check(), UserError);
}

// A user sort whose input already has the order is a no-op.
TEST(PlanSortOrders, RedundantSortIsNoOp) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  b.output(r.sort({"k", "v"}).select(col("v") > 1).sort({"k"}), "out");
  std::string p = physical(b.check());
  EXPECT_NE(p.find("n3 sort(n2) no-op order [k, v]"), std::string::npos) << p;
}

// Distinct after a sort by the whole tuple needs no further sort.
TEST(PlanSortOrders, DistinctOfSortedInput) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  b.output(r.sort({"v"}).distinct(), "out");
  std::string p = physical(b.check());
  EXPECT_EQ(count_of(p, "(inserted)"), 0) << p;
}

// ---------------------------------------------------------------------------------
// Plan structure.

using BufferSet = std::set<rt::BufferId>;

// Every allocated intermediate is freed exactly once, right after its last use, and
// never used after; inputs and outputs are never freed.
void expect_frees_after_last_use(const rt::Plan& plan) {
  BufferSet boundary;
  for (const auto* rels : {&plan.inputs, &plan.outputs})
    for (const auto& r : *rels) {
      boundary.insert(r.columns.begin(), r.columns.end());
      boundary.insert(r.validity.begin(), r.validity.end());  // -1 entries are harmless
    }
  std::map<rt::BufferId, size_t> freed_at;
  std::map<rt::BufferId, size_t> last_use;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const rt::Step& s = plan.steps[i];
    if (auto* f = std::get_if<rt::Free>(&s)) {
      EXPECT_FALSE(boundary.count(f->buffer)) << "input/output buffer b" << f->buffer << " freed";
      EXPECT_FALSE(freed_at.count(f->buffer)) << "b" << f->buffer << " freed twice";
      freed_at[f->buffer] = i;
      continue;
    }
    for (rt::BufferId b : passes::step_buffers(s)) {
      EXPECT_FALSE(freed_at.count(b)) << "b" << b << " used at step " << i << " after its Free";
      last_use[b] = i;
    }
  }
  for (const auto& [b, i] : last_use) {
    if (boundary.count(b)) continue;
    ASSERT_TRUE(freed_at.count(b)) << "b" << b << " (" << plan.buffers[b].name << ") never freed";
    // Only Free steps lie between the last use and the Free.
    for (size_t k = i + 1; k < freed_at[b]; ++k)
      EXPECT_TRUE(std::holds_alternative<rt::Free>(plan.steps[k]));
  }
}

TEST(GeneratePlan, FreesAfterLastUse) {
  expect_frees_after_last_use(codegen::generate_plan(testing::operators_program()));
  expect_frees_after_last_use(codegen::generate_plan(testing::expressions_program()));
}

#ifdef RANC_HAVE_RUNTIME
TEST(GeneratePlan, PlansPassTheRuntimeValidator) {
  EXPECT_NO_THROW(rt::validate_plan(codegen::generate_plan(testing::operators_program())));
  EXPECT_NO_THROW(rt::validate_plan(codegen::generate_plan(testing::expressions_program())));
}
#endif

// A fixpoint is one loop in the plan: the base case and the body are compiled into the
// unit (prefixed kernels), the edge relation is sorted by its join key once, before the
// loop, and the buffers the body reads from before the loop are freed after it.
// The waits for read-backs steps [from, to) cost: runs of ReadSize and CheckFlag steps with
// only Frees between them share one (the executor's batched read-backs).
static int read_waits(const rt::Plan& plan, size_t from, size_t to) {
  int waits = 0;
  bool in_run = false;
  for (size_t i = from; i < to; ++i) {
    const rt::Step& s = plan.steps[i];
    const bool read = std::holds_alternative<rt::ReadSize>(s) || std::holds_alternative<rt::CheckFlag>(s);
    if (read && !in_run) ++waits;
    if (!std::holds_alternative<rt::Free>(s)) in_run = read;
  }
  return waits;
}

// The plan's loop (its last, where there are several): the indices of its LoopBegin, of the
// first step after its prologue (rt::LoopBegin::prologue) and of its LoopEnd; zeros without.
struct LoopSpan {
  size_t begin = 0, body = 0, end = 0;
  int32_t prologue = 0;
};
static LoopSpan loop_span(const rt::Plan& plan) {
  LoopSpan l;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (auto* b = std::get_if<rt::LoopBegin>(&plan.steps[i])) {
      l.begin = i;
      l.prologue = b->prologue;
      l.body = i + 1 + static_cast<size_t>(b->prologue);
    }
    if (std::holds_alternative<rt::LoopEnd>(plan.steps[i])) l.end = i;
  }
  return l;
}

// The plan of `p`, checked by rt::validate_plan where the runtime is built.
static rt::Plan valid_plan(const Program& p, const codegen::CodegenOptions& options = {}) {
  rt::Plan plan = codegen::generate_plan(p, options);
#ifdef RANC_HAVE_RUNTIME
  EXPECT_NO_THROW(rt::validate_plan(plan));
#endif
  return plan;
}

TEST(GeneratePlan, FixpointIsOneLoopWithHoistedInvariants) {
  ProgramBuilder b;
  Rel edges = b.input("edges", {{"src", Type::I32}, {"dst", Type::I32}});
  FixpointBuilder fp = b.fixpoint();
  Rel e = fp.use(edges);
  Rel tc = fp.relation("tc");
  fp.rule(tc, e);
  fp.rule(tc, tc.join(e.project({as(col("src"), "mid"), as(col("dst"), "to")}), {"dst"}, {"mid"})
                  .project({"src", as(col("to"), "dst")}));
  b.output(fp.result(tc), "tc");
  rt::Plan plan = valid_plan(b.check());
  const auto [begin, body_start, end, prologue] = loop_span(plan);
  ASSERT_LT(begin, end);
  const std::set<rt::BufferId> input(plan.inputs.at(0).columns.begin(),
                                     plan.inputs.at(0).columns.end());
  for (size_t i = begin; i < end; ++i) {
    // No sort in the body reads the edge relation: it was sorted before the loop.
    if (auto* sp = std::get_if<rt::SortPairs>(&plan.steps[i])) {
      EXPECT_FALSE(input.count(sp->keys_in)) << "step " << i;
    }
    if (auto* f = std::get_if<rt::Free>(&plan.steps[i])) {
      EXPECT_FALSE(input.count(f->buffer)) << "step " << i;
    }
  }
  // One wait for read-backs a round (rotate_loop_reads): the number of new tuples (distinct
  // and the anti join against the full relation in one compaction) and the total of the
  // next round's join count, run on those new tuples before their number is read back; the
  // merge into the full relation is sized without one. The body's first steps (the count
  // of the first round's delta and its read-back) are the loop's prologue.
  ASSERT_GT(prologue, 0) << codegen::describe_plan(plan);
  EXPECT_TRUE(std::holds_alternative<rt::ReadSize>(plan.steps[body_start - 1]));
  EXPECT_EQ(read_waits(plan, begin + 1, body_start), 1);
  EXPECT_EQ(read_waits(plan, body_start, end), 1) << codegen::describe_plan(plan);
  // Five kernels a round: the join's count, its write stage writing the candidates as
  // packed (src, dst) words (the projection and the sort's packing fused into it), the
  // distinct and anti join reading the sorted words (no unpacking kernel), the merge
  // path's partition and the union.
  // The join's count over the unsorted delta scans its counts itself (no CUB scan).
  for (size_t i = begin; i < end; ++i)
    EXPECT_FALSE(std::holds_alternative<rt::ScanInt64>(plan.steps[i])) << "step " << i;
  auto kernels = [&](size_t from, size_t to) {
    std::vector<std::string> names;
    for (size_t i = from; i < to; ++i)
      if (auto* l = std::get_if<rt::Launch>(&plan.steps[i]))
        names.push_back(l->kernel.substr(l->kernel.find("_n") + 1));
    return fmt::format("{}", fmt::join(names, " "));
  };
  EXPECT_EQ(kernels(begin + 1, body_start), "n3_join_count");
  // The base case leaves out the recursive rule (a join with the empty tc): it sorts and
  // deduplicates the edges, and sorts the invariant by the join key.
  for (size_t i = 0; i < begin; ++i)
    if (auto* l = std::get_if<rt::Launch>(&plan.steps[i]))
      EXPECT_EQ(l->kernel.find("join"), std::string::npos) << l->kernel;
  EXPECT_EQ(kernels(body_start, end),
            "n5_join_project_sort_write n7_distinct_antijoin n3_join_count n8_partition n8_union")
      << codegen::describe_plan(plan);
  // The next round's count reads the new tuples' number from device memory: the buffer the
  // round's read-back of it reads.
  for (size_t i = body_start; i < end; ++i) {
    const auto* l = std::get_if<rt::Launch>(&plan.steps[i]);
    if (!l || l->device_sizes.empty()) continue;
    const auto* dn = std::get_if<rt::ArgBuffer>(&l->args.at(static_cast<size_t>(l->device_sizes[0].arg)));
    ASSERT_NE(dn, nullptr);
    bool read = false;
    for (size_t k = i; k < end; ++k)
      if (auto* r = std::get_if<rt::ReadSize>(&plan.steps[k]); r && r->buffer == dn->buffer) read = true;
    EXPECT_TRUE(read);
  }
  const auto& loop = std::get<rt::LoopEnd>(plan.steps[end]);
  // Full and delta, two attributes each, and the next round's per-row lower bounds and
  // offsets of its join count.
  EXPECT_EQ(loop.carry_buffers.size(), 6u);
  EXPECT_EQ(loop.until_zero.size(), 1u);
  // Without an iteration limit, an iteration that runs out of memory splits its delta:
  // the delta's two columns (carried) and its size (carried from the slot the loop ends on).
  ASSERT_EQ(loop.split.size(), 1u);
  EXPECT_EQ(loop.split[0].columns.size(), 2u);
  EXPECT_TRUE(std::count(loop.carry_slots.begin(), loop.carry_slots.end(),
                         std::make_pair(loop.split[0].size, loop.until_zero[0])));
  for (rt::BufferId c : loop.split[0].columns) {
    bool carried = false;
    for (auto [dst, src] : loop.carry_buffers) carried = carried || dst == c;
    EXPECT_TRUE(carried) << c;
  }
  // With a limit the iterations are rounds, and none splits.
  ProgramBuilder lb;
  Rel le = lb.input("edges", {{"src", Type::I32}, {"dst", Type::I32}});
  FixpointBuilder lf = lb.fixpoint(3);
  Rel lt = lf.relation("tc");
  lf.rule(lt, lf.use(le));
  lf.rule(lt, lt.join(lf.use(le).project({as(col("src"), "mid"), as(col("dst"), "to")}), {"dst"},
                      {"mid"})
                  .project({"src", as(col("to"), "dst")}));
  lb.output(lf.result(lt), "tc");
  rt::Plan limited = codegen::generate_plan(lb.check());
  for (const rt::Step& s : limited.steps) {
    if (auto* e = std::get_if<rt::LoopEnd>(&s)) {
      EXPECT_EQ(e->max_iterations, 3);
      EXPECT_TRUE(e->split.empty());
    }
  }
  // Without splits no delta's capacity bounds a count from device memory: two waits.
  EXPECT_EQ(loop_span(limited).prologue, 0);
  // rotate_loop_reads switched off: the count at the start of every round, two waits.
  {
    codegen::CodegenOptions off;
    off.disabled_passes = {"rotate_loop_reads"};
    rt::Plan two = valid_plan(b.check(), off);
    const LoopSpan l = loop_span(two);
    EXPECT_EQ(l.prologue, 0);
    EXPECT_EQ(read_waits(two, l.begin + 1, l.end), 2);
  }
  // The thin rounds' resident kernel (rt::ResidentRounds): the loop's carried relations,
  // two i32 attributes packed into one word; none when switched off.
  ASSERT_TRUE(loop.resident.has_value());
  EXPECT_EQ(loop.resident->packing, rt::Packing::I32x2);
  EXPECT_EQ(loop.resident->full.size(), 2u);
  EXPECT_EQ(loop.resident->delta, loop.split[0].columns);
  EXPECT_EQ(loop.resident->delta_size, loop.split[0].size);
  EXPECT_EQ(loop.resident->control_words, rt::ResidentRounds::kControlHeader + 1);  // one join: one key run
  EXPECT_NE(codegen::describe_plan(plan).find("resident rounds in " + loop.resident->kernel),
            std::string::npos);
  // Its two ways (templates/resident.cuh): the worklist when the host passes no round limit
  // (slot `rounds` exactly kWorklist; the found words then end at kFound, the delta copied
  // after them), else rounds with the barrier, which write kFound too; the rules once, as a
  // lambda both call.
  {
    const std::string& src = plan.source;
    const size_t at = src.find("void __launch_bounds__(1024) " + loop.resident->kernel + "(");
    ASSERT_NE(at, std::string::npos) << "the resident kernel's definition";
    const size_t next = src.find("extern \"C\"", at + 1);
    const std::string body = src.substr(at, next == std::string::npos ? std::string::npos : next - at);
    EXPECT_NE(body.find("== R::kWorklist"), std::string::npos);
    EXPECT_NE(body.find("R::worklist(rules, "), std::string::npos);
    EXPECT_NE(body.find("R::finish_worklist("), std::string::npos);
    EXPECT_NE(body.find("ctl[R::kFound] = "), std::string::npos);
    EXPECT_NE(body.find("R::block_barrier("), std::string::npos);
    int rule_lambdas = 0;
    for (size_t i = body.find("auto rules = [&]"); i != std::string::npos; i = body.find("auto rules = [&]", i + 1))
      ++rule_lambdas;
    EXPECT_EQ(rule_lambdas, 1);
  }
  {
    codegen::CodegenOptions off;
    off.resident_rounds = false;
    rt::Plan body_only = valid_plan(b.check(), off);
    EXPECT_FALSE(std::get<rt::LoopEnd>(body_only.steps[loop_span(body_only).end]).resident);
  }
  for (const auto& k : plan.kernels) {
    if (k.rfind("ranc_", 0) != 0 && k != loop.resident->kernel) {
      EXPECT_EQ(k.rfind("f", 0), 0u) << k;  // f<node>_<n>_...
    }
  }
  EXPECT_NE(plan.source.find("namespace f"), std::string::npos);
}

// Reachability: the delta (one attribute, sorted) joins the edges by its only attribute, a
// left input sorted by the join key. In the loop body the join counts its matches and then
// writes them (no one-pass merge, whose output grows by a read-back after its kernel), so
// rotate_loop_reads gives the round one wait.
TEST(GeneratePlan, ReachabilityRoundWaitsOnce) {
  ProgramBuilder b;
  Rel edges = b.input("edges", {{"src", Type::I32}, {"dst", Type::I32}});
  Rel start = b.input("start", {{"node", Type::I32}});
  FixpointBuilder fp = b.fixpoint();
  Rel reach = fp.relation("reach");
  fp.rule(reach, fp.use(start));
  fp.rule(reach, reach.join(fp.use(edges), {"node"}, {"src"}).project({as(col("dst"), "node")}));
  b.output(fp.result(reach), "reach");
  rt::Plan plan = valid_plan(b.check());
  const auto [begin, body_start, end, prologue] = loop_span(plan);
  ASSERT_LT(begin, end);
  ASSERT_GT(prologue, 0) << codegen::describe_plan(plan);
  EXPECT_EQ(read_waits(plan, body_start, end), 1) << codegen::describe_plan(plan);
  for (size_t i = begin; i < end; ++i)
    if (auto* l = std::get_if<rt::Launch>(&plan.steps[i])) EXPECT_FALSE(l->regrow) << l->kernel;
}

// Same generation written with the delta as the right input of its first join: the join's
// count reads the delta's row count from device memory as the right side's, so that count
// rotates too; the second join (over the first's output) keeps its read-back: two waits a
// round.
TEST(GeneratePlan, SameGenerationRotatesTheDeltaOnTheRight) {
  Program p = check(parse_ra(testing::kSameGeneration, "sg.ra").program);
  rt::Plan plan = valid_plan(p);
  const auto [begin, body_start, end, prologue] = loop_span(plan);
  ASSERT_GT(prologue, 0) << codegen::describe_plan(plan);
  EXPECT_EQ(read_waits(plan, body_start, end), 2) << codegen::describe_plan(plan);
  // The rotated count: one device size pointed at a buffer (the delta's, the right side).
  int pointed = 0;
  for (size_t i = body_start; i < end; ++i)
    if (auto* l = std::get_if<rt::Launch>(&plan.steps[i]))
      for (const rt::DeviceSize& d : l->device_sizes)
        pointed += std::holds_alternative<rt::ArgBuffer>(l->args.at(static_cast<size_t>(d.arg)));
  EXPECT_EQ(pointed, 1);
}

// What rotate_loop_reads leaves alone (rotate_loop_reads.h): a round whose first join reads the
// full relation (the non-linear closure: its count's right side is carried from the round's
// union, which comes after the new tuples are counted), and a loop that stops after N rounds
// (no split delta bounds the device count). Rotating a plan twice changes nothing.
TEST(GeneratePlan, RotateLoopReadsLeavesTheFullRelationsJoinAlone) {
  for (const char* limit : {"", " max 4"}) {
    std::string text(testing::kTcSquare);
    text.replace(text.find("fixpoint"), 8, std::string("fixpoint") + limit);
    rt::Plan plan = valid_plan(check(parse_ra(text, "square.ra").program));
    ASSERT_GT(loop_span(plan).end, 0u);
    EXPECT_EQ(loop_span(plan).prologue, 0) << "limit '" << limit << "'\n" << codegen::describe_plan(plan);
  }
  rt::Plan plan = codegen::generate_plan(check(parse_ra(testing::kTc, "tc.ra").program));
  const rt::Plan once = plan;
  EXPECT_EQ(passes::rotate_loop_reads(plan), 0);  // already rotated
  EXPECT_EQ(plan.steps.size(), once.steps.size());
  EXPECT_EQ(plan.buffers.size(), once.buffers.size());
}

// Mutual recursion where one relation has only recursive rules (its base is empty): the
// base case leaves every rule that joins an empty recursive relation out and starts that
// relation empty; the plan is valid and its loop carries both.
TEST(GeneratePlan, FixpointBaseLeavesOutRulesOfEmptyRelations) {
  ProgramBuilder b;
  Rel edges = b.input("edges", {{"src", Type::I32}, {"dst", Type::I32}});
  FixpointBuilder fp = b.fixpoint();
  Rel e = fp.use(edges);
  Rel odd = fp.relation("odd"), even = fp.relation("even");
  auto step = [&](Rel r) {
    return r.join(e.project({as(col("src"), "mid"), as(col("dst"), "to")}), {"dst"}, {"mid"})
        .project({"src", as(col("to"), "dst")});
  };
  fp.rule(odd, e);
  fp.rule(even, step(odd));
  fp.rule(odd, step(even));
  b.output(fp.result(odd), "odd");
  b.output(fp.result(even), "even");
  rt::Plan plan = valid_plan(b.check());
  const size_t begin = loop_span(plan).begin;
  ASSERT_GT(begin, 0u);
  for (size_t i = 0; i < begin; ++i)
    if (auto* l = std::get_if<rt::Launch>(&plan.steps[i]))
      EXPECT_EQ(l->kernel.find("join"), std::string::npos) << l->kernel;
  // A rule whose union has a part without a recursive relation is not empty in the base case:
  // it stays (both selects run before the loop).
  rt::Plan mixed = codegen::generate_plan(check(parse_ra(R"(
input edges(src i32, dst i32);
fixpoint {
  tc = edges |> select src < 3;
  tc = tc |> join (edges |> project src as mid, dst as to) on dst = mid |> project src, to as dst
          |> union (edges |> select dst > 5);
}
output tc;
)",
                                                             "mixed.ra")
                                                       .program));
  int selects = 0;
  for (const rt::Step& s : mixed.steps) {
    if (std::holds_alternative<rt::LoopBegin>(s)) break;
    if (auto* l = std::get_if<rt::Launch>(&s)) selects += l->kernel.find("select") != std::string::npos;
  }
  EXPECT_EQ(selects, 2) << codegen::describe_plan(mixed);
}

// The hash group-by's private states per thread (hash_reduce.cuh): 4 for states of up to 8
// words (TPC-H Q1's: 4 sums, 3 averages' sums and one row count), fewer for larger states, none
// beyond 32 words; CodegenOptions and RANC_HASH_PRIVATE override.
TEST(GeneratePlan, HashGroupByPrivateStates) {
  std::vector<Attribute> attrs{{"g", Type::I32}};
  for (int c = 0; c < 40; ++c) attrs.push_back({fmt::format("x{}", c), Type::F64});
  auto agent = [](const rt::Plan& plan) {
    const size_t at = plan.source.find("HashGroupAgent<P::HashGroup, ");
    if (at == std::string::npos) return std::string("none");
    const size_t end = plan.source.find('>', at);
    return plan.source.substr(at + 29, end - at - 29);
  };
  auto program = [&](int sums, bool q1) {
    ProgramBuilder b;
    std::vector<Aggregate> aggs;
    for (int c = 0; c < sums; ++c)
      aggs.push_back(q1 && c >= 4 ? avg(col(fmt::format("x{}", c)), fmt::format("a{}", c))
                                  : sum(col(fmt::format("x{}", c)), fmt::format("s{}", c)));
    if (q1) aggs.push_back(count("n"));
    b.output(b.input("r", attrs).reduce({"g"}, aggs), "out");
    return b.check();
  };
  // Q1's eight words: a 1024-slot table (96 KB of 96-byte slots) and 4 private states.
  EXPECT_EQ(agent(codegen::generate_plan(program(7, true))), "1024, 4");
  EXPECT_EQ(agent(codegen::generate_plan(program(1, false))), "4096, 4");
  EXPECT_EQ(agent(codegen::generate_plan(program(16, false))), "512, 2");
  EXPECT_EQ(agent(codegen::generate_plan(program(33, false))), "256, 0");
  EXPECT_EQ(agent(codegen::generate_plan(program(7, true), {.hash_private_states = 0})), "1024, 0");
  setenv("RANC_HASH_PRIVATE", "9", 1);
  EXPECT_EQ(agent(passes::run_pipeline(program(7, true), {}).plan), "1024, 9");
  setenv("RANC_HASH_PRIVATE", "33", 1);
  EXPECT_THROW(passes::run_pipeline(program(7, true), {}), InternalError);
  unsetenv("RANC_HASH_PRIVATE");
}

// The sorted reduce stages the columns its hooks read into shared memory tile by tile
// (reduce.cuh's stage hook), the compared keys first, while they fit in 32 KB; not a view's
// columns, nor with the option off. Sums of 32-bit integers keep a 64-bit state whose merge
// checks for overflow; wider ones keep the 128-bit state.
TEST(GeneratePlan, SortedReduceStagesItsColumns) {
  const std::vector<Attribute> attrs{{"g", Type::I32}, {"v", Type::I32}, {"w", Type::I64}};
  auto program = [&](bool view) {
    ProgramBuilder b;
    Rel r = b.input("r", attrs, 0, {"g"});
    if (view) r = r.project({"g", as(col("v") + 1, "v"), "w"});
    b.output(r.reduce({"g"}, {sum(col("v"), "s"), sum(col("w"), "t")}), "out");
    return b.check();
  };
  auto staged = [](const rt::Plan& plan) {
    size_t n = 0;
    for (size_t at = 0; (at = plan.source.find("ranc::tpl::stage_rows<Agent::kThreads>(", at)) !=
                        std::string::npos;
         ++at)
      ++n;
    return n;
  };
  const rt::Plan plan = codegen::generate_plan(program(false));
  // g and v: (3840 + 2 + 4) x 4 bytes each; w's 8-byte rows would pass 32 KB.
  EXPECT_EQ(staged(plan), 2u);
  EXPECT_NE(plan.source.find("__shared__ __align__(16) int stage1["), std::string::npos);
  EXPECT_EQ(plan.source.find("__shared__ __align__(16) long long stage"), std::string::npos);
  EXPECT_NE(plan.source.find("  long long a0;\n"), std::string::npos);
  EXPECT_NE(plan.source.find("if (ranc::tpl::add_overflows(a.a0, b.a0))"), std::string::npos);
  EXPECT_NE(plan.source.find("  unsigned long long a1h;\n"), std::string::npos);
  EXPECT_EQ(staged(codegen::generate_plan(program(false), {.stage_reduce_inputs = false})), 0u);
  EXPECT_EQ(staged(codegen::generate_plan(program(true))), 0u);
  setenv("RANC_REDUCE_STAGE", "0", 1);
  EXPECT_EQ(staged(passes::run_pipeline(program(false), {}).plan), 0u);
  unsetenv("RANC_REDUCE_STAGE");
  EXPECT_EQ(staged(passes::run_pipeline(program(false), {}).plan), 2u);
  // The key's copy (stage0), which accumulate does not read, goes back to the agent for its
  // windows of finished groups, the functor pointing at the key column again; v's stays.
  EXPECT_NE(plan.source.find("mem = stage0; return (int)sizeof(stage0);"), std::string::npos);
  EXPECT_NE(plan.source.find("const auto global0 = f."), std::string::npos);
  EXPECT_EQ(plan.source.find("mem = stage1"), std::string::npos);
  // Two sums: its registers capped at five 256-thread blocks an SM (48 a thread).
  EXPECT_NE(plan.source.find("__launch_bounds__(256, 5)"), std::string::npos);
  const rt::Plan direct = codegen::generate_plan(program(false), {.defer_reduce_emits = false});
  EXPECT_EQ(staged(direct), 2u);
  EXPECT_EQ(direct.source.find("mem = stage"), std::string::npos);
  EXPECT_EQ(direct.source.find("__launch_bounds__(256, 5)"), std::string::npos);
  // One sum (a state of one word) over an i32 key and value: the stages leave room for six
  // blocks an SM, so the cap is 40 registers (six blocks).
  {
    ProgramBuilder b1;
    b1.output(b1.input("r", attrs, 0, {"g"}).reduce({"g"}, {sum(col("v"), "s")}), "out");
    const rt::Plan one = codegen::generate_plan(b1.check());
    EXPECT_NE(one.source.find("mem = stage0; return (int)sizeof(stage0);"), std::string::npos);
    EXPECT_NE(one.source.find("__launch_bounds__(256, 6)"), std::string::npos);
    EXPECT_NE(codegen::generate_plan(b1.check(), {.reduce_min_blocks = 5})
                  .source.find("__launch_bounds__(256, 5)"),
              std::string::npos);
    // Two group keys and one sum: wider, five blocks.
    ProgramBuilder b2;
    b2.output(b2.input("r", attrs, 0, {"g", "w"}).reduce({"g", "w"}, {sum(col("v"), "s")}), "out");
    const rt::Plan two = codegen::generate_plan(b2.check());
    EXPECT_NE(two.source.find("mem = stage"), std::string::npos);
    EXPECT_NE(two.source.find("__launch_bounds__(256, 5)"), std::string::npos);
    EXPECT_EQ(two.source.find("__launch_bounds__(256, 6)"), std::string::npos);
  }
  // A key that is also summed is read by accumulate: nothing is released.
  ProgramBuilder b;
  Rel r = b.input("r", attrs, 0, {"g"});
  b.output(r.reduce({"g"}, {sum(col("g"), "s")}), "out");
  const rt::Plan keyed = codegen::generate_plan(b.check());
  EXPECT_EQ(staged(keyed), 1u);
  EXPECT_EQ(keyed.source.find("mem = stage"), std::string::npos);
  EXPECT_NE(keyed.source.find("return 0;"), std::string::npos);
}

// The hash group-by's integer states (lowering.cpp, hash_aggregate_code): an i32 sum is one
// 64-bit word whose merges check for overflow only when the input passes 2^32 rows, an i64
// sum two words; the table's atomic merges of both and of the row count are 32-bit adds
// (common.cuh, atomic_add_words: sm_90's 64-bit shared-memory atomicAdd is a CAS loop); the
// dense way's merges into device memory are 64-bit adds (the i64 sum's two words by
// atomic_add_128), and the overflow flag is a parameter of phase 1 (its merges), the dense way
// (its merges) and phase 2 (its merges and writes).
TEST(GeneratePlan, HashReduceIntegerStatesAddBy32BitAtomics) {
  const std::vector<Attribute> attrs{{"g", Type::I32}, {"v", Type::I32}, {"w", Type::I64}};
  ProgramBuilder b;
  Rel r = b.input("r", attrs);
  b.output(r.reduce({"g"}, {sum(col("v"), "s"), sum(col("w"), "t"), count("n")}), "out");
  const rt::Plan plan = codegen::generate_plan(b.check());
  const std::string& src = plan.source;
  ASSERT_NE(src.find("HashGroupAgent"), std::string::npos);
  const size_t state = src.find("_hash_reduce_state {\n");
  ASSERT_NE(state, std::string::npos);
  EXPECT_EQ(src.substr(state, src.find("};", state) - state),
            "_hash_reduce_state {\n  unsigned long long rows;\n  long long a0;\n"
            "  unsigned long long a1;\n  unsigned long long a1h;\n");
  EXPECT_NE(src.find("ranc::tpl::atomic_add_count(&a.rows, b.rows, (s0 < 4294967296ll));"), std::string::npos);
  EXPECT_NE(src.find("ranc::tpl::atomic_add_words<1>((unsigned long long*)&a.a0, "
                     "{(unsigned long long)b.a0});"),
            std::string::npos);
  EXPECT_NE(src.find("ranc::tpl::atomic_add_words<2>(&a.a1, {b.a1, b.a1h});"), std::string::npos);
  // (64-bit atomicAdd only in the dense way's merge, in device memory)
  const size_t atomic = src.find("void merge_atomic(");
  ASSERT_NE(atomic, std::string::npos);
  EXPECT_EQ(src.substr(atomic, src.find("\n  }\n", atomic) - atomic).find("atomicAdd(&a."),
            std::string::npos);
  const size_t global = src.find("bool merge_global(");
  ASSERT_NE(global, std::string::npos);
  const std::string dense = src.substr(global, src.find("\n  }\n", global) - global);
  EXPECT_NE(dense.find(
                "      const auto old = atomicAdd(&a.rows, b.rows);\n      first = old == 0ull;\n"),
            std::string::npos)
      << dense;
  EXPECT_NE(
      dense.find(
          "} else {\n      atomicAdd((unsigned long long*)&a.a0, (unsigned long long)b.a0);\n"),
      std::string::npos)
      << dense;
  EXPECT_NE(dense.find("    ranc::tpl::atomic_add_128(&a.a1, b.a1, b.a1h);\n"), std::string::npos)
      << dense;
  // The checked merges, behind the input's row count, in the functors of phase 1, the dense
  // way, the speculative run and the early run (on by default: functors of their own) and
  // phase 2.
  size_t checks = 0;
  for (size_t at = 0; (at = src.find(" > 4294967296ll)) { if (ranc::tpl::add_overflows(a.a0, b.a0))", at)) !=
                      std::string::npos;
       ++at)
    ++checks;
  EXPECT_EQ(checks, 5u);
  EXPECT_NE(src.find("if (ranc::tpl::add_overflows(old, b.a0))"), std::string::npos);
}

// An inner join of a left input sorted by its keys writes its output in one pass
// (JoinMergeAgent, and JoinHeavyExpandAgent for heavy keys), also with a select in front
// of it or after it (both materialised, not fused into its stages); with a residual its
// matches are counted and compacted. The option restores count + expand.
TEST(GeneratePlan, SortedLeftJoinWritesInOnePass) {
  ProgramBuilder b;
  auto f = b.input("f", {{"fk", Type::I32}, {"fv", Type::I32}}, 0, {"fk"});
  auto p = b.input("p", {{"pk", Type::I32}, {"pv", Type::I32}}, 0, {"pk"});
  b.output(f.join(p, {"fk"}, {"pk"}), "all");
  b.output(f.join(p, {"fk"}, {"pk"}).select(col("pv") < 5), "some");
  b.output(f.select(col("fv") > 2).join(p, {"fk"}, {"pk"}), "filtered_left");
  b.output(f.join(p, {"fk"}, {"pk"}, JoinKind::Inner, col("pv") < col("fv")), "residual");
  auto count = [](const rt::Plan& plan, std::string_view suffix) {
    int c = 0;
    for (const auto& s : plan.steps)
      if (const auto* l = std::get_if<rt::Launch>(&s))
        c += l->kernel.size() >= suffix.size() &&
             l->kernel.compare(l->kernel.size() - suffix.size(), suffix.size(), suffix) == 0;
    return c;
  };
  rt::Plan plan = codegen::generate_plan(
      b.check(), {.join = codegen::JoinAlgorithm::SortMerge, .share_kernels = false});
  std::string names;
  for (const auto& k : plan.kernels) names += k + " ";
  EXPECT_EQ(count(plan, "_join_merge"), 3) << names;
  EXPECT_EQ(count(plan, "_select_join_merge"), 0) << names;
  EXPECT_EQ(count(plan, "_join_heavy"), 3) << names;
  EXPECT_EQ(count(plan, "_join_count"), 1) << names;  // the residual
  EXPECT_EQ(count(plan, "_join_write"), 1) << names;
  EXPECT_EQ(count(plan, "_select"), 2) << names;  // "some" and "filtered_left"
  EXPECT_NE(plan.source.find("JoinMergeAgent<P::JoinCount>"), std::string::npos);
  bool regrow = false;
  for (const auto& s : plan.steps)
    if (const auto* l = std::get_if<rt::Launch>(&s))
      regrow = regrow || (l->regrow.has_value() && l->kernel.find("_join_merge") != std::string::npos);
  EXPECT_TRUE(regrow) << "the one-pass join grows its output when the matches need more";
  rt::Plan two = codegen::generate_plan(
      b.check(), {.join = codegen::JoinAlgorithm::SortMerge, .one_pass_merge_join = false,
                  .share_kernels = false});
  EXPECT_EQ(count(two, "_join_merge"), 0);
  EXPECT_EQ(count(two, "_join_count"), 4);
  EXPECT_EQ(count(two, "_join_write"), 4);
}

TEST(GeneratePlan, KernelNamesCarryOperatorAndNode) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q = b.input("q", {{"qk", Type::I32}, {"w", Type::F64}});
  b.output(r.project({"k", as(col("v") * 2, "v2")}).join(q, {"k"}, {"qk"}), "out");
  rt::Plan plan = codegen::generate_plan(b.check(), {.join = codegen::JoinAlgorithm::SortMerge});
  // n0 r, n1 q, n2 project, n3 inserted sort of q, n4 join, n5 output. Fused, the project
  // runs in the join's count kernel, which is named after both.
  for (const char* k : {"n4_project_join_count", "n4_join_write"}) {
    EXPECT_NE(std::find(plan.kernels.begin(), plan.kernels.end(), k), plan.kernels.end()) << k;
    EXPECT_NE(plan.source.find(fmt::format(" {}(", k)), std::string::npos) << k;
  }
  rt::Plan unfused = codegen::generate_plan(
      b.check(), {.join = codegen::JoinAlgorithm::SortMerge, .fusion = false});
  for (const char* k : {"n2_project", "n4_join_count", "n4_join_write"}) {
    EXPECT_NE(std::find(unfused.kernels.begin(), unfused.kernels.end(), k), unfused.kernels.end())
        << k;
    EXPECT_NE(unfused.source.find(fmt::format(" {}(", k)), std::string::npos) << k;
  }
  for (const auto& k : plan.kernels)
    EXPECT_NE(plan.source.find(fmt::format("extern \"C\" __global__ void __launch_bounds__"), 0),
              std::string::npos)
        << k;
  int sorts = 0;
  for (const auto& s : plan.steps) sorts += std::holds_alternative<rt::SortPairs>(s) ? 1 : 0;
  EXPECT_EQ(sorts, 1);  // the right input by its one key
}

template <class T>
int steps_of(const rt::Plan& plan) {
  int n = 0;
  for (const auto& s : plan.steps) n += std::holds_alternative<T>(s) ? 1 : 0;
  return n;
}

// The hash group-by plans its ways out for many groups without a branch: phase 1 runs once (no
// regrow), a slot `over` = min(1, max(0, records - room)) sizes the dense way's bounds kernel
// (the kept rows' key words; skipped when the records phase 1 wrote already span more), whose
// span sizes the dense way's table (0 past the room or CodegenOptions::hash_dense_slots, or
// below hash_dense_min_slots), and `sorting` = over unless the table has slots sizes a
// sort + sorted reduce of the input; the records' merge, the sorted reduce and the dense way's
// writer write the same output columns from row 0 and their group counts to elements 0, 1 and
// 2 of one buffer, read back at `pick` (sorting, + 2 for the dense way). CodegenOptions::
// hash_records sets the room; hash_dense_slots = 0 leaves the dense way out (sorting = over).
// Spans of few values take the dense way's shared-memory tables (shared_run, in one wave, its
// table in dynamic shared memory: a state of two words and a presence byte a slot, 192 KB by
// default) unless hash_dense_shared_bytes = 0; with hash_dense_speculate, before the input's
// bounds, a speculative run over the records' span (speculative_run, in one wave, the same
// table) whose miss flag, read back only when it ran, decides whether the input's bounds are
// found. With hash_dense_early, before phase 1: a sample's bounds (read back only past the
// early run's smallest input), the early run (early_run, in one wave, the same table) and its
// miss flag (dense_words[5], read back only when it ran), which sizes phase 1's rows (no
// launch over none, and no read-back of its records' count).
TEST(GeneratePlan, HashReducePlansTheSortForManyGroups) {
  for (const bool filtered : {true, false})
    for (int64_t room : {int64_t{0}, int64_t{777}})
      for (int64_t dense : {int64_t{-1}, int64_t{0}})
        for (int64_t shared : {int64_t{-1}, int64_t{0}, int64_t{40000}})
          for (const bool speculate : {true, false})
            for (const bool early : {true, false}) {
              SCOPED_TRACE(filtered ? "a select fused in front" : "no select");
              SCOPED_TRACE(early ? "early" : "not early");
              SCOPED_TRACE(speculate ? "speculative" : "not speculative");
              SCOPED_TRACE(dense == 0 ? "no dense way" : "the dense way");
              SCOPED_TRACE(fmt::format("shared-memory bytes {}", shared));
              ProgramBuilder b;
              Rel r = b.input("r", {{"g", Type::I32}, {"v", Type::I32}, {"w", Type::F64}});
              b.output((filtered ? r.select(col("w") > 0.0) : r)
                           .reduce({"g"}, {sum(col("v"), "s"), count("n")}),
                       "out");
              const Program p = b.check();
              const rt::Plan plan = codegen::generate_plan(p, {.hash_records = room,
                                                               .hash_dense_slots = dense,
                                                               .hash_dense_shared_bytes = shared,
                                                               .hash_dense_speculate = speculate,
                                                               .hash_dense_early = early});
              int launches = 0, over_slots = 0, room_rules = 0, dense_launches = 0, shared_runs = 0,
                  spec_runs = 0, early_runs = 0, phase1_blocks_at_least = -1;
              rt::SlotId over = -1, sorting = -1;
              for (const rt::Step& st : plan.steps) {
                if (const auto* l = std::get_if<rt::Launch>(&st)) {
                  EXPECT_FALSE(l->regrow.has_value()) << l->kernel;
                  const bool phase1 = l->kernel.find("hash_reduce") != std::string::npos &&
                                      l->kernel.find("merge") == std::string::npos &&
                                      l->kernel.find("fixup") == std::string::npos;
                  launches += phase1;
                  if (phase1) phase1_blocks_at_least = static_cast<int>(l->items.at_least);
                  dense_launches += l->kernel.find("_dense_") != std::string::npos;
                  const bool spec = l->kernel.find("_dense_spec_run") != std::string::npos;
                  const bool early_run = l->kernel.find("_dense_early_run") != std::string::npos;
                  if (spec || early_run ||
                      l->kernel.find("_dense_shared_run") != std::string::npos) {
                    ++(spec ? spec_runs : early_run ? early_runs : shared_runs);
                    EXPECT_TRUE(l->one_wave);
                    // (sum of i32 and count: two words a state, a byte of presence)
                    const int64_t slots = (shared < 0 ? 192 * 1024 : shared) / 17 / 256 * 256;
                    EXPECT_EQ(l->dynamic_smem, (slots * 17 + 15) / 16 * 16);
                  }
                }
                // over (the first), then the dense way's fits = min(1, max(0, room + 1 - span)) of
                // the records' span and of the input's.
                if (const auto* ss = std::get_if<rt::SetSize>(&st);
                    ss && ss->value.at_most == 1 && ss->value.saturate) {
                  ++over_slots;
                  if (over < 0) over = ss->slot;
                }
                if (const auto* ss = std::get_if<rt::SetSize>(&st);
                    ss && over >= 0 && ss->value.terms.size() == 1 &&
                    ss->value.terms[0].slots == std::vector<rt::SlotId>{over} &&
                    ss->value.at_most < 0)
                  sorting = ss->slot;
                if (const auto* ss = std::get_if<rt::SetSize>(&st);
                    ss && ss->value.at_least == 1 && ss->value.at_most > 1 &&
                    ss->value.terms.size() == 1 && ss->value.divisor == 1) {
                  EXPECT_TRUE(room > 0 ? ss->value.at_most == room : ss->value.at_most % 512 == 0)
                      << "the records' room (default: 512 blocks' table slots): "
                      << ss->value.at_most;
                  ++room_rules;
                }
                // The default room of a filtered input: a sixteenth of its rows, at least 512
                // blocks' table slots, at most 128 MiB of records.
                if (const auto* ss = std::get_if<rt::SetSize>(&st); ss && ss->value.divisor == 16) {
                  EXPECT_TRUE(filtered && room == 0);
                  EXPECT_EQ(ss->value.at_least % 512, 0) << ss->value.at_least;
                  EXPECT_GE(ss->value.at_most, ss->value.at_least);
                  EXPECT_LE(ss->value.at_most, (int64_t{128} << 20) / 16)
                      << "records of 16 bytes or more";
                  ++room_rules;
                }
              }
              EXPECT_EQ(room_rules, 1);
              EXPECT_EQ(launches, 1);
              // the records' bounds, (the speculative init and run,) the input's bounds, init, run,
              // shared_run, count, write
              // (and before phase 1 the sample's bounds, the early init and run)
              const bool shares = dense != 0 && shared != 0;
              EXPECT_EQ(dense_launches, dense == 0 ? 0
                                        : shares   ? (speculate ? 9 : 7) + (early ? 3 : 0)
                                                   : 6);
              EXPECT_EQ(shared_runs, shares ? 1 : 0);
              EXPECT_EQ(spec_runs, shares && speculate ? 1 : 0);
              EXPECT_EQ(early_runs, shares && early ? 1 : 0);
              // Phase 1 launches no block over no rows (an empty input, or the early run kept its
              // table), and its records' count is then not read back.
              EXPECT_EQ(phase1_blocks_at_least, 0);
              int early_miss_reads = 0, record_reads = 0, record_reads_gated = 0;
              for (const rt::Step& st : plan.steps)
                if (const auto* rs = std::get_if<rt::ReadSize>(&st)) {
                  early_miss_reads += rs->index == 5 && rs->when >= 0;
                  if (plan.buffers[static_cast<size_t>(rs->buffer)].name.ends_with(".records")) {
                    ++record_reads;
                    record_reads_gated += rs->when >= 0;
                  }
                }
              EXPECT_EQ(early_miss_reads, shares && early ? 1 : 0);
              EXPECT_EQ(record_reads, 1);
              EXPECT_EQ(record_reads_gated, 1);
              // The miss flag (dense_words[4]) is read back only when the speculative run ran (a
              // slot that is 0 otherwise).
              int miss_reads = 0;
              for (const rt::Step& st : plan.steps)
                if (const auto* rs = std::get_if<rt::ReadSize>(&st); rs && rs->index == 4)
                  miss_reads += rs->when >= 0;
              EXPECT_EQ(miss_reads, shares && speculate ? 1 : 0);
              ASSERT_EQ(over_slots, dense == 0 ? 1 : 3);
              ASSERT_GE(sorting, 0);
              // The output's size: element `pick` of the counts, pick = sorting (+ 2 when the dense
              // way wrote the output).
              int reads_at_pick = 0;
              for (const rt::Step& st : plan.steps)
                if (const auto* rs = std::get_if<rt::ReadSize>(&st); rs && rs->index_slot >= 0) {
                  ++reads_at_pick;
                  bool from_sorting = false;
                  for (const rt::Step& s2 : plan.steps)
                    if (const auto* ss = std::get_if<rt::SetSize>(&s2);
                        ss && ss->slot == rs->index_slot)
                      for (const rt::SizeTerm& t : ss->value.terms)
                        from_sorting =
                            from_sorting ||
                            (t.factor == 1 && t.slots == std::vector<rt::SlotId>{sorting});
                  EXPECT_TRUE(from_sorting);
                }
              EXPECT_EQ(reads_at_pick, 1);
              // Both ways: the records' merge, and the input's select, sort and segmented reduce.
              EXPECT_NE(plan.source.find("_hash_reduce_merge("), std::string::npos);
              EXPECT_NE(plan.source.find("Agent::run(temp, "), std::string::npos);
              EXPECT_EQ(steps_of<rt::SortPairs>(plan), 2);
              if (filtered) {  // the sorting way materialises the select
                EXPECT_TRUE(plan.source.find("ranc::tpl::SelectAgent<") != std::string::npos ||
                            plan.source.find("ranc::tpl::SelectValuesAgent<") != std::string::npos);
              }
              expect_frees_after_last_use(plan);
#ifdef RANC_HAVE_RUNTIME
    EXPECT_NO_THROW(rt::validate_plan(plan));
#endif
            }
}

// A hash join: setup, histogram and scatter of each side, count and write, no sort; the
// write kernel writes the output columns from the matched rows directly (no gathers).
TEST(GeneratePlan, HashJoinKernelsAndSteps) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
  auto q = b.input("q", {{"qk", Type::I32}, {"w", Type::F64}, {"qb", Type::Bool}});
  b.output(r.join(q, {"k"}, {"qk"}, JoinKind::Inner, col("w") > 0.5), "out");
  // (The global table built in row order: its windows are NvrtcCompile.HashTablesBuiltInWindows'.)
  rt::Plan plan = codegen::generate_plan(b.check(), {.join = codegen::JoinAlgorithm::Hash, .hash_build_window_bits = -1});
  // n0 r, n1 q, n2 join, n3 output. (The two sides' bounds kernels are the same text: one
  // kernel, launched for each side.)
  for (const char* k : {"n2_hash_keys_left", "n2_hash_keys_right", "n2_hash_bounds_left",
                        "n2_hash_global_build", "n2_join_hash"}) {
    EXPECT_NE(std::find(plan.kernels.begin(), plan.kernels.end(), k), plan.kernels.end()) << k;
    EXPECT_NE(plan.source.find(fmt::format(" {}(", k)), std::string::npos) << k;
  }
  EXPECT_NE(plan.source.find("ranc::tpl::HashJoinAgent<P::HashJoin, unsigned int>"),
            std::string::npos);
  // The residual, on the original rows of a match.
  EXPECT_NE(plan.source.find("return f.v2_keep(i, j);"), std::string::npos);
  // Radix partitions on the bits the host computes from the build rows (no read-back), one a
  // side: the left's row ids (for v, an i64), the right's row ids (for w, an f64) with the
  // right's bool qb, carried as a 32-bit word, moved in the same step; the left key k is
  // recovered from its hashed word. No scans, no gathers; the output grows when the probe
  // rows underestimate it.
  int partitions = 0;
  size_t more = 0;
  for (const rt::Step& s : plan.steps)
    if (const auto* sp = std::get_if<rt::SortPairs>(&s)) {
      EXPECT_GE(sp->radix_bits, 0);
      EXPECT_TRUE(sp->encoded);
      ++partitions;
      more += sp->more_values.size();
    }
  EXPECT_EQ(partitions, 2);
  EXPECT_EQ(more, 1u);
  EXPECT_NE(plan.source.find("ranc::tpl::hash_key_inverse("), std::string::npos);
  EXPECT_EQ(steps_of<rt::ReadSize>(plan), 0);
  EXPECT_EQ(steps_of<rt::ScanInt64>(plan), 0);
  EXPECT_EQ(steps_of<rt::Gather>(plan), 0);
  int regrows = 0;
  for (const rt::Step& s : plan.steps)
    if (const auto* l = std::get_if<rt::Launch>(&s); l && l->regrow) {
      EXPECT_EQ(l->kernel, "n2_join_hash");
      EXPECT_GT(l->dynamic_smem, 48 * 1024);
      ++regrows;
    }
  EXPECT_EQ(regrows, 1);
  expect_frees_after_last_use(plan);
#ifdef RANC_HAVE_RUNTIME
  EXPECT_NO_THROW(rt::validate_plan(plan));
#endif
}

// The sizes pick the hash join's table on the host (no read-back): up to 2048 kept build
// rows one shared-memory table a probe piece, up to hash_join_global_rows (or a quarter of
// the probe rows, at most 2^26) one table in device memory (GlobalJoinTable, built by
// n2_hash_global_build; 0 radix bits), beyond that radix partitions. The plan holds all
// three, gated by the sizes; the option's 0 drops the global table.
TEST(GeneratePlan, HashJoinGlobalTableByBuildSize) {
  ProgramBuilder b;
  auto s = b.input("s", {{"fk", Type::I64}, {"s1", Type::I32}});
  auto r = b.input("r", {{"k", Type::I64}, {"r1", Type::I32}});
  b.output(s.join(r, {"fk"}, {"k"}), "out");
  const Program prog = b.check();
  for (int64_t global_rows : {int64_t{1} << 21, int64_t{100000}, int64_t{0}}) {
    SCOPED_TRACE(global_rows);
    codegen::CodegenOptions o;
    o.join = codegen::JoinAlgorithm::Hash;
    o.hash_join_global_rows = global_rows;
    const rt::Plan plan = codegen::generate_plan(prog, o);
    const rt::SlotId probe_rows = plan.inputs.at(0).size, build_rows = plan.inputs.at(1).size;
    // The join's launch runs n2_join_hash_global instead of n2_join_hash when slot alt_when
    // is nonzero; the radix bits are the one CeilLog2 of the build rows / 2048.
    rt::SlotId alt_when = -1, bits = -1;
    for (const rt::Step& st : plan.steps) {
      if (const auto* l = std::get_if<rt::Launch>(&st); l && l->kernel == "n2_join_hash")
        alt_when = l->alt_when;
      if (const auto* z = std::get_if<rt::SetSize>(&st);
          z && z->value.fn == rt::SizeFn::CeilLog2 && z->value.divisor == 2048)
        bits = z->slot;
    }
    ASSERT_GE(bits, 0);
    ASSERT_EQ(alt_when >= 0, global_rows > 0);
    // The host's sizes, by evaluating the plan's SetSize steps (rt::SizeExpr's documented
    // meaning, written out again here) for given probe and build rows.
    auto sizes = [&](int64_t probe, int64_t build) {
      std::vector<int64_t> slot(static_cast<size_t>(plan.num_slots), 0);
      slot[static_cast<size_t>(probe_rows)] = probe;
      slot[static_cast<size_t>(build_rows)] = build;
      for (const rt::Step& st : plan.steps) {
        const auto* z = std::get_if<rt::SetSize>(&st);
        if (!z) continue;
        const rt::SizeExpr& e = z->value;
        int64_t v = e.constant;
        if (e.gate >= 0) {
          const int64_t g = slot[static_cast<size_t>(e.gate)];
          if (g < e.gate_min || (e.gate_max >= 0 && g > e.gate_max)) {
            slot[static_cast<size_t>(z->slot)] = 0;
            continue;
          }
        }
        for (const rt::SizeTerm& t : e.terms) {
          int64_t prod = t.factor;
          for (rt::SlotId x : t.slots) prod *= slot[static_cast<size_t>(x)];
          v += prod;
        }
        if (v < 0) {
          EXPECT_TRUE(e.saturate);
          v = 0;
        }
        v = (v + e.divisor - 1) / e.divisor;
        if (e.fn == rt::SizeFn::CeilLog2) v = v <= 1 ? 0 : 64 - __builtin_clzll(static_cast<uint64_t>(v - 1));
        if (e.fn == rt::SizeFn::Pow2) v = int64_t{1} << v;
        v = std::max(v, e.at_least);
        if (e.at_most >= 0) v = std::min(v, e.at_most);
        slot[static_cast<size_t>(z->slot)] = v;
      }
      return std::make_pair(slot[static_cast<size_t>(bits)],
                            alt_when >= 0 ? slot[static_cast<size_t>(alt_when)] : 0);
    };
    // (probe rows, build rows, global table?, radix bits) with the global table on at 2^21:
    // a shared-memory table to 2048 build rows; the global table to 2^21 build rows, or to a
    // quarter of the probe rows up to 2^26; radix partitions beyond.
    struct Case { int64_t probe, build; bool global; int64_t bits; };
    const int64_t m = int64_t{1} << 20;
    std::vector<Case> cases = {
        {1000, 1000, false, 0},   {1000, 2048, false, 0},  {m, 100000, true, 0},
        {m, 2 * m, true, 0},      {m, 3 * m, false, 11},   {40 * m, 8 * m, true, 0},
        {20 * m, 8 * m, false, 12}, {1024 * m, 128 * m, false, 16}, {1024 * m, 64 * m, true, 0},
        {0, 0, false, 0}};
    for (const Case& c : cases) {
      SCOPED_TRACE(fmt::format("probe {} build {}", c.probe, c.build));
      const auto [b, g] = sizes(c.probe, c.build);
      if (global_rows == int64_t{1} << 21) {  // worked out by hand above
        EXPECT_EQ(g, c.global ? 1 : 0);
        EXPECT_EQ(b, c.bits);
        continue;
      }
      // The other settings by the rule itself.
      const int64_t limit = std::min(std::max(global_rows, (c.probe + 3) / 4),
                                     std::max(global_rows, int64_t{1} << 26));
      const bool global = global_rows > 2048 && c.build > 2048 && c.build <= limit;
      EXPECT_EQ(g, global ? 1 : 0);
      const int64_t parts = (c.build + 2047) / 2048;
      EXPECT_EQ(b, global || parts <= 1 ? 0
                                        : std::min<int64_t>(16, 64 - __builtin_clzll(static_cast<uint64_t>(parts - 1))));
    }
    const bool global = global_rows > 0;
    auto has = [&](const char* k) {
      return std::find(plan.kernels.begin(), plan.kernels.end(), k) != plan.kernels.end();
    };
    EXPECT_EQ(has("n2_hash_global_build"), global);
    // The join's launch runs n2_join_hash_global instead of n2_join_hash when the choice is 1.
    int joins = 0;
    for (const rt::Step& st : plan.steps)
      if (const auto* l = std::get_if<rt::Launch>(&st); l && l->kernel == "n2_join_hash") {
        ++joins;
        EXPECT_EQ(l->alt_kernel, global ? "n2_join_hash_global" : "");
        EXPECT_EQ(l->alt_when >= 0, global);
      }
    EXPECT_EQ(joins, 1);
    EXPECT_EQ(has("n2_join_hash_global"), global);
    // The partitioned kernel takes no table; 64-bit keys keep the chains' heads apart.
    EXPECT_NE(plan.source.find("ranc::tpl::GlobalJoinTable{nullptr, nullptr, nullptr, 0}"), std::string::npos);
    bool heads = false;
    for (const rt::BufferDecl& d : plan.buffers) heads = heads || d.name == "n2.global_heads";
    EXPECT_EQ(heads, global);
    expect_frees_after_last_use(plan);
#ifdef RANC_HAVE_RUNTIME
    EXPECT_NO_THROW(rt::validate_plan(plan));
#endif
  }
}

// Paper 004's GFTR: 4-byte attributes are partitioned with the keys (one radix partition a
// side moving every attribute, the first as its values instead of row ids, the others as
// more_values), keys are recovered from their hashed words, and nothing is read through row
// ids.
TEST(GeneratePlan, HashJoinCarriesFourByteAttributes) {
  ProgramBuilder b;
  auto s = b.input("s", {{"fk", Type::I32}, {"s1", Type::I32}, {"s2", Type::F32}});
  auto r = b.input("r", {{"k", Type::I32}, {"r1", Type::Date}});
  b.output(s.join(r, {"fk"}, {"k"}), "out");
  // (The global table built in row order: its windows are NvrtcCompile.HashTablesBuiltInWindows'.)
  rt::Plan plan = codegen::generate_plan(
      b.check(), {.join = codegen::JoinAlgorithm::Hash, .hash_build_window_bits = -1});
  int pairs = 0, keys_only = 0;
  std::vector<size_t> more;
  for (const rt::Step& st : plan.steps)
    if (const auto* sp = std::get_if<rt::SortPairs>(&st)) {
      (sp->values_in >= 0 ? pairs : keys_only)++;
      more.push_back(sp->more_values.size());
    }
  EXPECT_EQ(pairs, 2);  // s1 with s2 as more_values, r1
  EXPECT_EQ(keys_only, 0);
  EXPECT_EQ(more, (std::vector<size_t>{1, 0}));
  for (const auto& buf : plan.buffers) EXPECT_EQ(buf.name.find("_ids"), std::string::npos) << buf.name;
}

// Key packing: floats by their total-order bits, two 32-bit keys into one 64-bit word.
TEST(GeneratePlan, HashJoinPacksKeys) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"f", Type::F64}, {"s", Type::String}});
  auto q = b.input("q", {{"qk", Type::I32}, {"qf", Type::F64}, {"qs", Type::String}});
  b.output(r.join(q, {"f"}, {"qf"}), "by_f64");
  b.output(r.join(q, {"k", "s"}, {"qk", "qs"}), "by_two");
  rt::Plan plan = codegen::generate_plan(b.check(), {.join = codegen::JoinAlgorithm::Hash});
  EXPECT_NE(plan.source.find("ranc::tpl::hash_key((unsigned long long)ranc::tpl::total_order_key("),
            std::string::npos)
      << plan.source;
  EXPECT_NE(plan.source.find("ranc::tpl::hash_key((unsigned long long)((unsigned long long)(unsigned int)"),
            std::string::npos)
      << plan.source;
  // Two join kernels per join (radix partitions, and the global table's), all on 64-bit words.
  EXPECT_EQ(count_of(plan.source, "HashJoinAgent<P::HashJoin, unsigned long long>;"), 4);
  EXPECT_EQ(count_of(plan.source, "Agent::run<true>("), 2);
}

TEST(GeneratePlan, HashJoinPlansAreValid) {
  for (auto join : {codegen::JoinAlgorithm::Hash}) {
    rt::Plan plan = codegen::generate_plan(testing::hash_join_program(), {.join = join});
    expect_frees_after_last_use(plan);
#ifdef RANC_HAVE_RUNTIME
    EXPECT_NO_THROW(rt::validate_plan(plan));
#endif
    // Every sort is a radix partition of a hash join's side.
    for (const rt::Step& s : plan.steps)
      if (const auto* sp = std::get_if<rt::SortPairs>(&s)) EXPECT_GE(sp->radix_bits, 0);
  }
}

// Kernel launches take only buffer, slot and constant arguments; every buffer argument
// refers to a declared buffer and every kernel is in plan.kernels.
TEST(GeneratePlan, LaunchesReferToDeclaredKernelsAndBuffers) {
  rt::Plan plan = codegen::generate_plan(testing::operators_program());
  std::set<std::string> kernels(plan.kernels.begin(), plan.kernels.end());
  EXPECT_EQ(kernels.size(), plan.kernels.size());
  for (const auto& s : plan.steps) {
    if (auto* l = std::get_if<rt::Launch>(&s)) {
      EXPECT_TRUE(kernels.count(l->kernel)) << l->kernel;
      for (const auto& a : l->args) {
        if (auto* b = std::get_if<rt::ArgBuffer>(&a)) {
          EXPECT_LT(static_cast<size_t>(b->buffer), plan.buffers.size());
        }
      }
    }
  }
  EXPECT_EQ(plan.outputs.size(), testing::operators_program().outputs().size());
}

std::string strip_comments(const std::string& src) {
  std::istringstream in(src);
  std::string line, out;
  while (std::getline(in, line)) {
    auto p = line.find("//");
    out += (p == std::string::npos ? line : line.substr(0, p)) + "\n";
  }
  return out;
}

// User identifiers (relation, attribute, output names) appear only in comments.
TEST(GeneratePlan, NoUserIdentifiersInCode) {
  ProgramBuilder b;
  auto r = b.input("zzrel", {{"zzkey", Type::I32}, {"zzval", Type::I64}, {"zzstr", Type::String}});
  auto q = b.input("zzother", {{"zzqk", Type::I32}, {"zzqv", Type::F64}});
  b.output(r.select(col("zzval") > 3 && col("zzstr") == "zzliteral")
               .project({"zzkey", as(col("zzval") * 2, "zzcomputed")})
               .join(q, {"zzkey"}, {"zzqk"})
               .reduce({"zzkey"}, {ranc::sum(col("zzcomputed"), "zzsum")}),
           "zzout");
  rt::Plan plan = codegen::generate_plan(b.check());
  EXPECT_NE(plan.source.find("zzkey"), std::string::npos);  // in comments
  EXPECT_EQ(strip_comments(plan.source).find("zz"), std::string::npos) << plan.source;
  // String literals are dictionary parameters, not source text.
  ASSERT_EQ(plan.dict_params.size(), 1u);
  EXPECT_EQ(plan.dict_params[0].text, "zzliteral");
}

TEST(GeneratePlan, EmitCudaIsThePlanSource) {
  Program p = testing::expressions_program();
  EXPECT_EQ(codegen::emit_cuda(p), codegen::generate_plan(p).source);
}

TEST(GeneratePlan, DescribePlanListsSteps) {
  std::string d = codegen::describe_plan(codegen::generate_plan(testing::operators_program()));
  EXPECT_NE(d.find("sort_pairs"), std::string::npos);
  EXPECT_NE(d.find("launch n"), std::string::npos);
  EXPECT_NE(d.find("free b"), std::string::npos);
  EXPECT_NE(d.find("output j_i32"), std::string::npos);
}

// A declared input order read only by a set operation whose tuples pack into one order word
// is checked inside that merge (SetOpKeysAgent): no check kernel, one CheckFlag per input
// after the merge; wider tuples keep the check kernel.
TEST(GeneratePlan, SetOperationsCheckDeclaredOrdersInTheMerge) {
  for (Type vt : {Type::I32, Type::I64}) {
    ProgramBuilder b;
    std::vector<Attribute> kv = {{"k", Type::I32}, {"v", vt}};
    auto a = b.input("a", kv, 0, {"k", "v"}), c = b.input("c", kv, 0, {"k", "v"});
    b.output(a.union_with(c), "u");
    // share_kernels off: the two inputs' check kernels are the same kernel otherwise.
    rt::Plan plan = codegen::generate_plan(b.check(), {.share_kernels = false});
    const bool keyed = vt == Type::I32;
    SCOPED_TRACE(type_name(vt));
    EXPECT_EQ(count_of(plan.source, "_check_order("), keyed ? 0 : 2);
    EXPECT_EQ(count_of(plan.source, "SetOpStagedAgent<"), keyed ? 1 : 0);  // a union's columns
    int flags = 0;
    bool after_merge = false;
    for (const auto& st : plan.steps) {
      if (const auto* l = std::get_if<rt::Launch>(&st)) after_merge = l->kernel.find("_union") != std::string::npos;
      if (const auto* f = std::get_if<rt::CheckFlag>(&st)) {
        ++flags;
        EXPECT_NE(f->message.find("is not sorted by (k, v)"), std::string::npos) << f->message;
        EXPECT_EQ(after_merge, keyed) << "the keyed merge's flags follow it";
      }
    }
    EXPECT_EQ(flags, 2);
    // No register cap on the merge kernel unless asked for (RANC_SETOP_MIN_BLOCKS).
    auto bound_line = [](const std::string& source, const std::string& bound) {
      const size_t at = source.find(bound);
      return at == std::string::npos ? std::string() : source.substr(at, source.find('\n', at) - at);
    };
    EXPECT_EQ(bound_line(plan.source, "__launch_bounds__(256, 5)"), "");
    const rt::Plan capped = codegen::generate_plan(b.check(), {.set_op_min_blocks = 5, .share_kernels = false});
    const std::string capped_line = bound_line(capped.source, "__launch_bounds__(256, 5)");
    if (keyed) EXPECT_NE(capped_line.find("_union("), std::string::npos) << capped_line;
    else EXPECT_EQ(capped_line, "") << "the row-wise merge takes no cap";
  }
}

// Integer division puts a CheckFlag after the kernel; float division does not.
TEST(GeneratePlan, DivisionByZeroIsChecked) {
  ProgramBuilder b;
  auto r = b.input("r", {{"a", Type::I32}, {"c", Type::F64}});
  b.output(r.project({as(col("a") / col("a"), "x")}), "int_div");
  b.output(r.project({as(col("c") / col("c"), "y")}), "float_div");
  rt::Plan plan = codegen::generate_plan(b.check());
  int flags = 0;
  for (const auto& s : plan.steps) flags += std::holds_alternative<rt::CheckFlag>(s) ? 1 : 0;
  EXPECT_EQ(flags, 1);
  EXPECT_NE(plan.source.find("safe_div<int>"), std::string::npos);
}

// What cannot fail is evaluated eagerly: a select's predicate next to the stages before it
// (no branch between the loads of a row's columns) and both sides of and/or; a division by
// a non-zero literal needs no error flag. What can fail keeps the guard order: a select
// whose predicate divides by an attribute, an and whose right side does, a select over a
// computed attribute (project x / y after select y != 0 must not divide the dropped rows).
TEST(GeneratePlan, WhatCannotFailIsEvaluatedEagerly) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I32}, {"w", Type::I32}});
  b.output(r.select(col("k") < 100).select(col("v") % 2 == 0 && col("w") > 3), "eager");
  b.output(r.select(col("k") < 100).select(col("k") > 1 && col("v") / col("w") > 3), "guarded");
  b.output(r.select(col("w") != 0)
               .project({as(col("v") / col("w"), "q")})
               .select(col("q") > 1),
           "computed");
  const std::string src = codegen::generate_plan(b.check()).source;
  EXPECT_NE(src.find("return v1_keep(i) & ((ranc::tpl::safe_mod<int>((int)b1[i], (int)2, nullptr)"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("== 0) & (b2[i] > 3)"), std::string::npos) << src;
  // "guarded": its own keep guards the division (&&, and the earlier select's branch).
  EXPECT_NE(src.find("((b0[i] > 1) && (ranc::tpl::safe_div<int>"), std::string::npos) << src;
  int branches = 0;
  for (size_t at = src.find("    if (!v"); at != std::string::npos; at = src.find("    if (!v", at + 1))
    ++branches;
  // "guarded", "computed"'s project (its check of the division) and its select (q is a
  // computed attribute).
  EXPECT_EQ(branches, 3) << src;
  // The flag is still checked where a division by an attribute can fail.
  EXPECT_NE(src.find("safe_div<int>((int)b1[i], (int)b2[i], b"), std::string::npos) << src;
}

// ---------------------------------------------------------------------------------
// NVRTC compilation of generated sources (no GPU needed).

struct Compiled {
  bool ok = false;
  std::string log;
};

Compiled nvrtc_compile(const std::string& source, const std::vector<std::string>& extra = {}) {
  Compiled r;
  std::vector<const char*> names, contents;
#ifdef RANC_HAVE_EMBEDDED_TEMPLATES
  for (const auto& h : templates::embedded_headers()) {
    names.push_back(h.name);
    contents.push_back(h.contents);
  }
#endif
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), "generated.cu", static_cast<int>(names.size()),
                         contents.data(), names.data()) != NVRTC_SUCCESS) {
    r.log = "nvrtcCreateProgram failed";
    return r;
  }
  const std::string inc_cccl = fmt::format("-I{}/cccl", RANC_CUDA_INCLUDE_DIR);
  const std::string inc_cuda = fmt::format("-I{}", RANC_CUDA_INCLUDE_DIR);
  const std::string inc_tpl = fmt::format("-I{}", RANC_TEMPLATE_DIR);
  std::vector<const char*> opts = {"-std=c++17", "-arch=sm_90", inc_cccl.c_str(), inc_cuda.c_str()};
#ifndef RANC_HAVE_EMBEDDED_TEMPLATES
  opts.push_back(inc_tpl.c_str());
#endif
  for (const std::string& o : extra) opts.push_back(o.c_str());
  nvrtcResult rc = nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  r.log.resize(log_size);
  if (log_size > 0) nvrtcGetProgramLog(prog, r.log.data());
  if (rc == NVRTC_SUCCESS) {
    size_t cubin = 0;
    nvrtcGetCUBINSize(prog, &cubin);
    r.ok = cubin > 0;
  }
  nvrtcDestroyProgram(&prog);
  return r;
}

// What ptxas reports per kernel in NVRTC's log with --ptxas-options=-v: "Compiling entry
// function 'NAME'", "Function properties for NAME", "N bytes stack frame, N bytes spill
// stores, ...", "Used N registers, ... N bytes smem, ..." (-1: not reported). `line` keeps the
// last line read of the kernel, for messages.
struct PtxasUsage {
  int registers = -1, spill_stores = -1, smem = -1;
  std::string line;
};
std::map<std::string, PtxasUsage> ptxas_usage(const std::string& log_text) {
  // The number in front of `unit` ("N<unit>") on `line`, or -1.
  auto number_before = [](const std::string& line, std::string_view unit) {
    const size_t at = line.find(unit);
    if (at == std::string::npos || at == 0) return -1;
    const size_t from = line.rfind(' ', at - 1) + 1;
    return std::stoi(line.substr(from, at - from));
  };
  std::map<std::string, PtxasUsage> out;
  std::istringstream log(log_text);
  std::string line, function;
  while (std::getline(log, line)) {
    if (const size_t at = line.find("Compiling entry function '"); at != std::string::npos) {
      function = line.substr(at + 26, line.find('\'', at + 26) - at - 26);
      continue;
    }
    if (const size_t at = line.find("Function properties for "); at != std::string::npos) {
      function = line.substr(at + 24);
      continue;
    }
    if (function.empty()) continue;
    PtxasUsage& u = out[function];
    if (line.find(" bytes spill stores") != std::string::npos) {
      u.spill_stores = number_before(line, " bytes spill stores");
      u.line = line;
    }
    if (const size_t used = line.find("Used "); used != std::string::npos) {
      u.registers = std::stoi(line.substr(used + 5));
      u.smem = number_before(line, " bytes smem");
      u.line = line;
    }
  }
  return out;
}

std::string numbered(const std::string& src) {
  std::istringstream in(src);
  std::string line, out;
  for (int n = 1; std::getline(in, line); ++n) out += fmt::format("{:5} {}\n", n, line);
  return out;
}

void expect_compiles(const Program& p, const codegen::CodegenOptions& options = {}) {
  rt::Plan plan = codegen::generate_plan(p, options);
  Compiled c = nvrtc_compile(plan.source);
  EXPECT_TRUE(c.ok) << c.log << "\n" << numbered(plan.source);
}

TEST(NvrtcCompile, EveryExpressionKind) {
  expect_compiles(testing::expressions_program());
}

TEST(NvrtcCompile, EveryOperatorAndKeyType) {
  expect_compiles(testing::operators_program());
}

TEST(NvrtcCompile, EveryOperatorAndKeyTypeSortMerge) {
  expect_compiles(testing::operators_program(), {.join = codegen::JoinAlgorithm::SortMerge});
}

TEST(NvrtcCompile, HashJoinEveryKeyType) {
  expect_compiles(testing::hash_join_program(), {.join = codegen::JoinAlgorithm::Hash});
}

// The partition bounds by one binary search a bound: a MapSearch kernel over the partitions + 1,
// its bounds not zeroed.
TEST(NvrtcCompile, HashJoinBoundsBySearch) {
  const Program p = testing::hash_join_program();
  const codegen::CodegenOptions o{.join = codegen::JoinAlgorithm::Hash};
  const rt::Plan search = codegen::generate_plan(p, o);
  EXPECT_NE(search.source.find("ranc::tpl::partition_bounds_search("), std::string::npos);
  EXPECT_NE(search.source.find("MapAgent<P::MapSearch>"), std::string::npos);
  for (const rt::Step& st : search.steps)
    if (const auto* a = std::get_if<rt::Alloc>(&st))
      if (search.buffers[static_cast<size_t>(a->buffer)].name.ends_with("_bounds")) EXPECT_FALSE(a->zero);
  expect_compiles(p, o);
}

// The hash join kernel keeps to 64 registers a thread (__launch_bounds__ with two blocks an SM,
// LaunchShape::min_blocks): left to itself ptxas gave the wide join, three carried columns a
// side, 106 registers and one block an SM, and the join ran 8.3 ms instead of 6.5 (H100, 2^27
// rows, bench/RESULTS.md session 26). ptxas's log (--ptxas-options=-v) has "Used N registers"
// after "Function properties for NAME".
TEST(NvrtcCompile, HashJoinKernelsKeepToSixtyFourRegisters) {
  std::vector<Attribute> sa{{"fk", Type::I32}}, ra{{"k", Type::I32}};
  for (int c = 1; c <= 3; ++c) {
    sa.push_back({fmt::format("s{}", c), Type::I32});
    ra.push_back({fmt::format("r{}", c), Type::I32});
  }
  ProgramBuilder b;
  b.output(b.input("s", sa).join(b.input("r", ra), {"fk"}, {"k"}), "wide");
  const rt::Plan plan =
      codegen::generate_plan(b.check(), {.join = codegen::JoinAlgorithm::Hash, .share_kernels = false});
  EXPECT_NE(plan.source.find("__launch_bounds__(512, 2)"), std::string::npos);
  Compiled c = nvrtc_compile(plan.source, {"--ptxas-options=-v"});
  ASSERT_TRUE(c.ok) << c.log;
  int checked = 0;
  for (const auto& [function, u] : ptxas_usage(c.log)) {
    if (function.find("_hash") == std::string::npos || function.find("hash_keys") != std::string::npos ||
        function.find("hash_bounds") != std::string::npos ||
        function.find("hash_global_build") != std::string::npos ||
        function.find("hash_global_words") != std::string::npos || u.registers < 0)
      continue;
    EXPECT_LE(u.registers, 64) << function << ": " << u.line;
    ++checked;
  }
  EXPECT_EQ(checked, 2) << c.log;  // the partitioned join and the global table's
}

// RANC_JIT_DEFINE's macros become NVRTC options of the plan (so part of the kernel cache's key).
TEST(GeneratePlan, JitDefinesBecomeNvrtcOptions) {
  const std::vector<Attribute> attrs{{"g", Type::I32}, {"v", Type::I32}};
  ProgramBuilder b;
  b.output(b.input("r", attrs).reduce({"g"}, {sum(col("v"), "s")}), "out");
  const Program p = b.check();
  auto defines = [](const rt::Plan& plan) {
    std::vector<std::string> d;
    for (const auto& o : plan.nvrtc_options)
      if (o.starts_with("-D")) d.push_back(o);
    return d;
  };
  EXPECT_TRUE(defines(codegen::generate_plan(p)).empty());
  setenv("RANC_JIT_DEFINE", "RANC_HASH_SLOT_MIX=1  RANC_HASH_LOAD_FIRST=0 ", 1);
  const rt::Plan plan = codegen::generate_plan(p);
  unsetenv("RANC_JIT_DEFINE");
  EXPECT_EQ(defines(plan),
            (std::vector<std::string>{"-DRANC_HASH_SLOT_MIX=1", "-DRANC_HASH_LOAD_FIRST=0"}));
  // The switched templates still compile.
  Compiled c = nvrtc_compile(plan.source, defines(plan));
  EXPECT_TRUE(c.ok) << c.log;
}

// RANC_JIT_LINEINFO=1 asks NVRTC for line tables (ncu's source view), as an option of the plan;
// unset or 0, none.
TEST(GeneratePlan, JitLineInfoIsAnNvrtcOption) {
  ProgramBuilder b;
  b.output(b.input("r", {{"g", Type::I32}, {"v", Type::I32}}).reduce({"g"}, {sum(col("v"), "s")}), "out");
  const Program p = b.check();
  auto has_lineinfo = [](const rt::Plan& plan) {
    return std::find(plan.nvrtc_options.begin(), plan.nvrtc_options.end(), "-lineinfo") !=
           plan.nvrtc_options.end();
  };
  EXPECT_FALSE(has_lineinfo(codegen::generate_plan(p)));
  setenv("RANC_JIT_LINEINFO", "0", 1);
  EXPECT_FALSE(has_lineinfo(codegen::generate_plan(p)));
  setenv("RANC_JIT_LINEINFO", "1", 1);
  const rt::Plan plan = codegen::generate_plan(p);
  unsetenv("RANC_JIT_LINEINFO");
  ASSERT_TRUE(has_lineinfo(plan));
  Compiled c = nvrtc_compile(plan.source, {"-lineinfo"});
  EXPECT_TRUE(c.ok) << c.log;
}

// The hash group-by's phase-1 kernel keeps its private states in registers: a version whose
// private tiles shared the table tiles' per-item arrays spilled (224 bytes of stack for TPC-H
// Q1's state) and ran 3x slower at 2^24 groups on an H200 (bench/RESULTS.md, session 16).
// ptxas reports each kernel's stack frame and spills in NVRTC's log (--ptxas-options=-v):
// none for Q1's eight-word state with 4 private states, at most 64 bytes for a one-word state
// with 4 and a one-word state behind a select (TPC-H Q15's shape).
TEST(NvrtcCompile, HashGroupByKeepsPrivateStatesInRegisters) {
  Schema q1s{{{"f", Type::String}, {"s", Type::String}, {"q", Type::F64}, {"p", Type::F64},
              {"d", Type::F64}, {"t", Type::F64}, {"sd", Type::I32}, {"g", Type::I32},
              {"v", Type::I32}},
             0};
  ProgramBuilder b;
  auto r = b.input("r", q1s.attributes);
  b.output(r.select(col("sd") <= 9800)
               .reduce({"f", "s"},
                       {sum(col("q"), "sum_qty"), sum(col("p"), "sum_base_price"),
                        sum(col("p") * (Expr(1.0) - col("d")), "sum_disc_price"),
                        sum(col("p") * (Expr(1.0) - col("d")) * (Expr(1.0) + col("t")), "sum_charge"),
                        avg(col("q"), "avg_qty"), avg(col("p"), "avg_price"), avg(col("d"), "avg_disc"),
                        count("count_order")}),
           "q1");
  b.output(r.reduce({"g"}, {sum(col("v"), "s")}), "two_words");
  b.output(r.select(col("sd") > 9000).reduce({"g"}, {sum(col("p"), "s")}), "one_word");
  rt::Plan plan = codegen::generate_plan(b.check(), {.share_kernels = false});
  Compiled c = nvrtc_compile(plan.source, {"--ptxas-options=-v"});
  ASSERT_TRUE(c.ok) << c.log;
  int checked = 0;
  for (const auto& [function, u] : ptxas_usage(c.log)) {
    if (function.find("_hash_reduce") == std::string::npos ||
        function.find("_hash_reduce_") != std::string::npos)
      continue;
    ASSERT_GE(u.spill_stores, 0) << function << ": " << u.line;
    const int spilled = u.spill_stores;
    const std::string& line = u.line;
    // (ptxas keeps the one-word states' kernels at 40 registers and spills a few values,
    // 28-48 bytes, once their tile's rows are loaded first (hash_reduce.cuh, load_tile): not
    // the register pressure this test guards against, and faster on the H100 than loading
    // row by row without spills, bench/RESULTS.md session 18)
    EXPECT_LE(spilled, 64) << function << ": " << line;
    if (function.find("n2_") == 0) EXPECT_EQ(spilled, 0) << "TPC-H Q1's state: " << line;
    ++checked;
  }
  EXPECT_EQ(checked, 3) << c.log;
}

// The hash group-by's dense way (DenseGroupAgent's four kernels) compiles for every state field:
// counts, i32 sums (64-bit, with the check past 2^32 rows), i64 sums (128-bit), f64 and f32
// sums, avg, min and max of every numeric type, a key of two attributes, a fused select; its
// run kernels (device, shared-memory, speculative and early) spill nothing (ptxas's report in
// NVRTC's log).
TEST(NvrtcCompile, HashGroupByDenseWayEveryState) {
  ProgramBuilder b;
  auto r = b.input("r", {{"g", Type::I32},
                         {"h", Type::Date},
                         {"v", Type::I32},
                         {"w", Type::I64},
                         {"x", Type::F64},
                         {"y", Type::F32},
                         {"f", Type::Bool}});
  b.output(r.reduce({"g"}, {count("n"), sum(col("v"), "sv"), sum(col("w"), "sw"),
                            sum(col("x"), "sx"), sum(col("y"), "sy"), avg(col("v"), "av"),
                            min(col("v"), "mnv"), max(col("w"), "mxw"), min(col("x"), "mnx"),
                            max(col("y"), "mxy"), max(col("h"), "mxh")}),
           "all");
  b.output(r.reduce({"g"}, {sum(col("v"), "s")}), "i32_sum");
  b.output(r.reduce({"g"}, {max(col("x"), "m")}), "f64_max");
  b.output(r.select(col("x") > 0.5).reduce({"f", "g"}, {sum(col("w"), "s"), count("n")}),
           "two_keys");
  // (with the speculative and early runs, as by default)
  rt::Plan plan = codegen::generate_plan(
      b.check(), {.hash_dense_speculate = true, .hash_dense_early = true, .share_kernels = false});
  int dense = 0;
  for (const std::string& k : plan.kernels) dense += k.find("_dense_") != std::string::npos;
  // the sample's bounds, the early init and run (not for states of more than 4 words: `all`),
  // the records' bounds, the speculative init and run, the input's bounds, init, run,
  // shared_run, count, write for each reduce
  EXPECT_EQ(dense, 45);
  Compiled c = nvrtc_compile(plan.source, {"--ptxas-options=-v"});
  ASSERT_TRUE(c.ok) << c.log;
  int runs = 0, shared_runs = 0;
  for (const auto& [function, u] : ptxas_usage(c.log)) {
    const bool shared = function.find("_dense_shared_run") != std::string::npos ||
                        function.find("_dense_spec_run") != std::string::npos ||
                        function.find("_dense_early_run") != std::string::npos;
    if (function.find("_dense_run") == std::string::npos && !shared) continue;
    ++(shared ? shared_runs : runs);
    EXPECT_EQ(u.spill_stores, 0) << function << ": " << u.line;
  }
  EXPECT_EQ(runs, 4);
  EXPECT_EQ(shared_runs, 11);
}
// The early run is left out where a semi- or anti-join is fused in front of the group-by (its
// probe a row waits on the run's one block an SM; TPC-H Q4 at SF 10 ran 0.89 ms the early way
// against 0.68 by phase 1 and its sort), and planned over a fused select: each reduce's kernels
// name the fused operators, so every group-by's early kernels are counted by their node.
TEST(GeneratePlan, HashReduceEarlyRunNotThroughAFusedJoin) {
  ProgramBuilder b;
  Rel r = b.input("r", {{"g", Type::I32}, {"v", Type::I32}, {"w", Type::F64}});
  Rel q = b.input("q", {{"qk", Type::I32}});
  b.output(r.semi_join(q, {"g"}, {"qk"}).reduce({"g"}, {sum(col("v"), "s")}), "semi");
  b.output(r.anti_join(q, {"g"}, {"qk"}).reduce({"g"}, {count("n")}), "anti");
  b.output(r.select(col("w") > 0.0).reduce({"g"}, {sum(col("v"), "s")}), "filtered");
  const Program p = b.check();
  for (const codegen::JoinAlgorithm join :
       {codegen::JoinAlgorithm::Hash, codegen::JoinAlgorithm::SortMerge}) {
    SCOPED_TRACE(join == codegen::JoinAlgorithm::Hash ? "hash" : "sort-merge");
    const rt::Plan plan = codegen::generate_plan(p, {.join = join, .hash_dense_early = true, .share_kernels = false});
    // Each group-by's phase 1 names its fused operators after its node ("n7_semijoin_hash_reduce"),
    // and its early kernels are "n7_dense_early_...".
    std::map<std::string, std::string> node_of;  // fused operators -> "n7_"
    std::vector<std::string> launched;
    for (const rt::Step& st : plan.steps)
      if (const auto* l = std::get_if<rt::Launch>(&st)) {
        launched.push_back(l->kernel);
        for (const char* ops : {"_semijoin_hash_reduce", "_antijoin_hash_reduce", "_select_hash_reduce"})
          if (l->kernel.ends_with(ops)) node_of[ops] = l->kernel.substr(0, l->kernel.find('_') + 1);
      }
    ASSERT_EQ(node_of.size(), 3u) << "each group-by's input fused (its join a stage of it)";
    auto early_kernels = [&](const char* ops) {
      int count = 0;
      for (const std::string& k : launched)
        count += k.starts_with(node_of[ops] + "dense_early_");
      return count;
    };
    EXPECT_EQ(early_kernels("_semijoin_hash_reduce"), 0);
    EXPECT_EQ(early_kernels("_antijoin_hash_reduce"), 0);
    // the sample's bounds, the early init and run
    EXPECT_EQ(early_kernels("_select_hash_reduce"), 3);
  }
}
// The partitioned way (CodegenOptions::hash_partitioned, off by default; PartitionGroupAgent):
// with the early run's sample, a count of its distinct keys (hashed bits, dense_words[11], read
// back with the sample's bounds), the rows' count by part, its miss flag and the rows counted
// (dense_words[9] and [10], read back only when the sample's span called for parts), then each part's first row (one block),
// the part table's initial states, the scatter (a tile of 512 x 16 rows a block for a one-word
// state, 512 x 15 for two words: as many as fit the shared-memory tables' 192 KB beside the
// 2048 parts' runs, 16 at most) and the run (at least 256 blocks), both in the same dynamic
// shared memory: the larger of the scatter's and the run's table of the largest power of two of
// slots (16384 for one word, 8192 for two). Not planned without the
// option, without the early run's sample, or for a state of more than 4 words.
TEST(GeneratePlan, HashReducePartitionedWay) {
  ProgramBuilder b;
  Rel r = b.input("r", {{"g", Type::I32}, {"v", Type::I32}, {"w", Type::F64}});
  b.output(r.reduce({"g"}, {sum(col("v"), "s")}), "one_word");
  b.output(r.select(col("w") > 0.0).reduce({"g"}, {sum(col("v"), "s"), count("n")}), "two_words");
  b.output(r.reduce({"g"}, {sum(col("v"), "s"), count("n"), sum(col("w"), "x"), avg(col("v"), "a"),
                            min(col("w"), "m")}),
           "six_words");
  const Program p = b.check();
  for (const bool on : {true, false})
    for (const bool early : {true, false}) {
      SCOPED_TRACE(fmt::format("partitioned {}, early {}", on, early));
      const rt::Plan plan = codegen::generate_plan(
          p, {.hash_dense_early = early, .hash_partitioned = on, .share_kernels = false});
      std::map<std::string, int> count;
      std::map<std::string, int32_t> smem;
      for (const rt::Step& st : plan.steps)
        if (const auto* l = std::get_if<rt::Launch>(&st))
          for (const char* k : {"_part_sample", "_part_count", "_part_starts", "_part_init",
                                "_part_scatter", "_part_run"})
            if (l->kernel.ends_with(k)) {
              ++count[k];
              const std::string what = k;
              if (what == "_part_scatter" || what == "_part_run") {
                smem[l->kernel] = l->dynamic_smem;
                EXPECT_LE(l->dynamic_smem, 227 * 1024) << l->kernel;
              }
              if (what == "_part_scatter") {
                EXPECT_TRUE(l->items_per_block == 512 * 16 || l->items_per_block == 512 * 15)
                    << l->items_per_block;
              }
              if (what == "_part_run") {
                EXPECT_EQ(l->items.at_least, 256);
              }
              if (what == "_part_starts") {
                EXPECT_EQ(l->items_per_block, 1);
              }
            }
      // (the miss flag, dense_words[9], and the rows counted, [10], which size the parts' rows;
      // the sample's distinct keys, [11], read back with its bounds, [6] and [7], one wait)
      int miss_reads = 0, row_reads = 0, distinct_reads = 0;
      for (size_t i = 0; i < plan.steps.size(); ++i)
        if (const auto* rs = std::get_if<rt::ReadSize>(&plan.steps[i]); rs && rs->when >= 0) {
          miss_reads += rs->index == 9;
          row_reads += rs->index == 10;
          if (rs->index == 11) {
            ++distinct_reads;
            const auto* next = i + 1 < plan.steps.size() ? std::get_if<rt::ReadSize>(&plan.steps[i + 1])
                                                         : nullptr;
            EXPECT_TRUE(next != nullptr && next->index == 6) << "the distinct keys' read-back "
                                                                "before the bounds'";
          }
        }
      // (the one- and two-word states; six words take no early run)
      const int expected = on && early ? 2 : 0;
      for (const char* k : {"_part_sample", "_part_count", "_part_starts", "_part_init",
                            "_part_scatter", "_part_run"})
        EXPECT_EQ(count[k], expected) << k;
      EXPECT_EQ(miss_reads, expected);
      EXPECT_EQ(row_reads, expected);
      EXPECT_EQ(distinct_reads, expected);
      if (expected == 0) continue;
      // The run's table: 16384 one-word slots (9 bytes each) or 8192 two-word slots (17 bytes);
      // the scatter: 2048 x 16 bytes of runs, 8192 rows of 12 bytes or 7680 of 20, and room for
      // its scan's 16 warps' totals (8 bytes each, at most) and an alignment's 16 bytes; each
      // kernel with the larger.
      std::set<int32_t> sizes;
      for (const auto& [kernel, bytes] : smem) sizes.insert(bytes);
      EXPECT_EQ(sizes, (std::set<int32_t>{16384 * 9, 32768 + 7680 * 20 + 128 + 16}))
          << "dynamic shared memory";
    }
}
// The partitioned way's kernels (PartitionGroupAgent, CodegenOptions::hash_partitioned) compile
// for states of one to four words (the early run's), an i32 key, a date key and a key of two
// attributes, with a fused select, and none spills: the scatter keeps a tile's parts, ranks and
// key offsets in registers (16 rows a thread for one word).
TEST(NvrtcCompile, HashGroupByPartitionedEveryStateWidth) {
  ProgramBuilder b;
  auto r = b.input("r", {{"g", Type::I32},
                         {"h", Type::Date},
                         {"v", Type::I32},
                         {"w", Type::I64},
                         {"x", Type::F64},
                         {"f", Type::Bool}});
  b.output(r.reduce({"g"}, {sum(col("v"), "s")}), "one");
  b.output(r.select(col("x") > 0.5).reduce({"h"}, {sum(col("w"), "s"), count("n")}), "two");
  b.output(r.reduce({"f", "g"}, {min(col("x"), "m"), avg(col("v"), "a")}), "three");
  b.output(r.reduce({"g"}, {sum(col("x"), "s"), max(col("w"), "m"), avg(col("v"), "a")}), "four");
  rt::Plan plan = codegen::generate_plan(
      b.check(), {.hash_dense_early = true, .hash_partitioned = true, .share_kernels = false});
  Compiled c = nvrtc_compile(plan.source, {"--ptxas-options=-v"});
  ASSERT_TRUE(c.ok) << c.log;
  int kernels = 0;
  for (const auto& [function, u] : ptxas_usage(c.log)) {
    if (function.find("_part_") == std::string::npos) continue;
    ++kernels;
    EXPECT_EQ(u.spill_stores, 0) << function << ": " << u.line;
  }
  // sample, count, starts, init, scatter, run for each of the four group-bys
  EXPECT_EQ(kernels, 24) << c.log;
}
// The sorted reduce's stage hook for each element width it copies: a bool key (1 byte, with
// an i32 argument), an i64 key (8 bytes) and a date key (4 bytes) with an f64 argument that
// does not fit the 32 KB beside it, over input declared sorted (the order check reads the
// staged keys too); ptxas keeps each reduce kernel's shared memory within the 48 KB of static
// shared memory a block may declare.
TEST(NvrtcCompile, SortedReduceStagesEveryElementWidth) {
  const std::vector<Attribute> attrs{{"b", Type::Bool}, {"w", Type::I64}, {"d", Type::Date},
                                     {"v", Type::I32}, {"x", Type::F64}};
  ProgramBuilder b;
  b.output(b.input("rb", attrs, 0, {"b"}).reduce({"b"}, {sum(col("v"), "s"), count("n")}), "by_bool");
  b.output(b.input("rw", attrs, 0, {"w"}).reduce({"w"}, {max(col("x"), "m")}), "by_i64");
  b.output(b.input("rd", attrs, 0, {"d"}).reduce({"d"}, {min(col("x"), "m"), avg(col("v"), "a")}),
           "by_date");
  rt::Plan plan = codegen::generate_plan(b.check(), {.share_kernels = false});
  EXPECT_NE(plan.source.find("__shared__ __align__(16) unsigned char stage0["), std::string::npos);
  EXPECT_NE(plan.source.find("__shared__ __align__(16) long long stage0["), std::string::npos);
  EXPECT_NE(plan.source.find("__shared__ __align__(16) int stage1["), std::string::npos);
  EXPECT_EQ(plan.source.find("__shared__ __align__(16) double stage"), std::string::npos);
  Compiled c = nvrtc_compile(plan.source, {"--ptxas-options=-v"});
  ASSERT_TRUE(c.ok) << c.log << "\n" << numbered(plan.source);
  int checked = 0;
  for (const auto& [function, u] : ptxas_usage(c.log)) {
    if (u.smem < 0 || !function.ends_with("_reduce")) continue;
    EXPECT_LE(u.smem, 48 * 1024) << function << ": " << u.line;
    ++checked;
  }
  EXPECT_EQ(checked, 3) << c.log;
}

// Every fused kernel shape fuse_pipelines can produce (one program per rule), with each
// join algorithm, and the operator programs unfused.
TEST(NvrtcCompile, EveryFusedShape) {
  expect_compiles(testing::fusion_program(), {.join = codegen::JoinAlgorithm::SortMerge});
  expect_compiles(testing::fusion_program(), {.join = codegen::JoinAlgorithm::Hash});
}
// Input sharing (fuse_pipelines): one kernel for 2, 3 and 4 filtering chains over one
// relation, with and without chains that keep every row, chains of only those, and chains
// over a paged hash join output.
// A select written out stages its kept rows' output values (SelectValuesAgent) when a row
// packs into 8 bytes (each field aligned to its size), and their row numbers (SelectAgent)
// otherwise or with select_stage_values off; every shape compiles.
TEST(NvrtcCompile, SelectStagesRowsOfAtMostEightBytes) {
  enum Stage { kRows, kValues };
  struct Shape {
    std::vector<std::pair<std::string, Type>> attrs;
    Stage stage;
  };
  const std::vector<Shape> shapes = {
      {{{"a", Type::I32}, {"b", Type::I32}}, kValues},
      {{{"a", Type::I64}}, kValues},
      {{{"a", Type::Bool}, {"b", Type::Bool}, {"c", Type::I32}}, kValues},  // 1 + 1 + (2) + 4
      {{{"a", Type::F32}, {"b", Type::Date}}, kValues},
      {{{"a", Type::String}, {"b", Type::Bool}}, kValues},
      // Over 8 bytes: row numbers staged.
      {{{"a", Type::Bool}, {"b", Type::I32}, {"c", Type::Bool}}, kRows},  // 1 + (3) + 4 + 1 + (3)
      {{{"a", Type::I32}, {"b", Type::F64}}, kRows},
      {{{"a", Type::I32}, {"b", Type::I32}, {"c", Type::I32}}, kRows},
      {{{"a", Type::I64}, {"b", Type::I64}}, kRows},
      {{{"a", Type::I64}, {"b", Type::I64}, {"c", Type::Bool}}, kRows},
      {{{"a", Type::I32}, {"b", Type::I32}, {"c", Type::I32}, {"d", Type::I32}, {"e", Type::Bool}}, kRows},
  };
  for (const Shape& sh : shapes) {
    ProgramBuilder b;
    std::vector<Attribute> attrs;
    for (const auto& [name, t] : sh.attrs) attrs.push_back({name, t});
    auto r = b.input("r", attrs);
    const Type t = sh.attrs[0].second;
    const Expr keep = t == Type::Bool     ? col("a")
                      : t == Type::String ? col("a") == "x"
                      : t == Type::Date   ? col("a") > date_lit("1995-01-01")
                                          : cast(col("a"), Type::F64) > 3.0;
    b.output(r.select(keep), "o");
    const Program p = b.check();
    const rt::Plan plan = codegen::generate_plan(p);
    const std::string label = print_program(p);
    EXPECT_EQ(plan.source.find("SelectValuesAgent<P::Select>") != std::string::npos, sh.stage == kValues)
        << label;
    EXPECT_EQ(plan.source.find("ranc::tpl::SelectAgent<") != std::string::npos, sh.stage == kRows) << label;
    expect_compiles(p);
    const rt::Plan off = codegen::generate_plan(p, {.select_stage_values = false});
    EXPECT_EQ(off.source.find("SelectValuesAgent"), std::string::npos) << label;
  }
}

TEST(NvrtcCompile, InputSharingShapes) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}, {"f", Type::F64}, {"s", Type::String}});
  auto q = b.input("q", {{"qk", Type::I32}, {"w", Type::F64}});
  auto t = b.input("t", {{"tk", Type::I32}, {"tv", Type::I32}});
  auto u = b.input("u", {{"uk", Type::I64}, {"ub", Type::Bool}});
  for (int i = 0; i < 4; ++i) b.output(r.select(col("k") > i).project({"s", as(col("v") / (i + 1), "d")}), fmt::format("r{}", i));
  b.output(r.project({as(col("f") * 2.0, "f2")}), "rmap");
  b.output(q.select(col("w") < 0.5), "q0");
  b.output(q.select(col("qk") % 3 == 1).project({as(col("w") + 1.0, "w1")}), "q1");
  b.output(q.select(col("qk") == 7), "q2");
  b.output(t.project({as(col("tv") + 1, "a")}), "t0");
  b.output(t.project({"tk", as(col("tk") * col("tv"), "b")}), "t1");
  b.output(u.select(col("ub")), "u0");
  b.output(u.project({as(col("uk") - 1, "uk1")}), "u1");
  auto j = r.join(q, {"k"}, {"qk"});
  b.output(j.select(col("w") > 0.1), "j0");
  b.output(j.select(col("v") < 3).project({"k", "s"}), "j1");
  Program p = b.check();
  for (codegen::JoinAlgorithm a : {codegen::JoinAlgorithm::Hash, codegen::JoinAlgorithm::SortMerge}) {
    rt::Plan plan = codegen::generate_plan(p, {.join = a});
    for (int k = 2; k <= 4; ++k)
      EXPECT_NE(plan.source.find(fmt::format("SharedSelectAgent<P::Select, {}>", k)), std::string::npos) << k;
    Compiled c = nvrtc_compile(plan.source);
    EXPECT_TRUE(c.ok) << c.log << "\n" << numbered(plan.source);
  }
}
// Paged hash join outputs (plan_paged_edges.h) read by every streaming consumer, with
// a residual and fused stages, fused and unfused.
TEST(NvrtcCompile, PagedJoinOutputs) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}, {"s", Type::String}});
  auto q = b.input("q", {{"qk", Type::I32}, {"w", Type::F64}});
  auto t = b.input("t", {{"tk", Type::I64}, {"x", Type::I32}});
  auto j = r.join(q, {"k"}, {"qk"}, JoinKind::Inner, col("v") > 3);
  b.output(j.select(col("w") < 0.5).reduce({}, {sum(col("v"), "sv"), count("c"), min(col("s"), "ms")}),
           "reduce");
  b.output(j.project({as(cast(col("k"), Type::I64), "k64"), "w"}).join(t, {"k64"}, {"tk"}), "join_join");
  b.output(r.join(q, {"k"}, {"qk"}).select(col("w") > 0.1).limit(5), "limit");
  b.output(r.join(q, {"k"}, {"qk"}).semi_join(q, {"k"}, {"qk"}), "semi");
  Program p = b.check();
  for (bool fusion : {true, false}) {
    rt::Plan plan = codegen::generate_plan(
        p, {.join = codegen::JoinAlgorithm::Hash, .fusion = fusion, .share_kernels = false});
    EXPECT_GE(count_of(plan.source, "_hash_paged("), 3) << fusion;
    Compiled c = nvrtc_compile(plan.source);
    EXPECT_TRUE(c.ok) << c.log << "\n" << numbered(plan.source);
  }
}
// Hash tables built in windows (CodegenOptions::hash_build_window_bits): one keys-only radix
// partition step a semi or anti join without a residual (on the slot bits above a window, a
// slot of its own), none for one with a residual (its chains need the right rows in row
// order); i32, i64 and two-attribute keys, a select fused into the words' kernel; inner
// joins' global tables from rotated hashes and positions; the unit compiles with NVRTC.
// The windows are a path taken per run (tables of 2^hash_build_window_min_bits slots or
// more): the row-order builds stay in the plan, and the fused select's read-back of the rows
// kept is gated by it (ReadSize::when). Off (-1), none of it.
TEST(NvrtcCompile, HashTablesBuiltInWindows) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"l", Type::I64}, {"v", Type::I32}});
  auto q = b.input("q", {{"qk", Type::I32}, {"ql", Type::I64}, {"qv", Type::I32}});
  b.output(r.semi_join(q, {"k"}, {"qk"}), "semi32");
  b.output(r.anti_join(q.select(col("qv") > 3), {"l"}, {"ql"}), "anti64_fused");
  b.output(r.semi_join(q, {"k", "v"}, {"qk", "qv"}), "semi_two");
  b.output(r.semi_join(q, {"k"}, {"qk"}, col("v") < col("qv")), "semi_residual");
  b.output(r.join(q, {"k"}, {"qk"}), "inner32");
  b.output(r.join(q, {"l"}, {"ql"}), "inner64");
  Program p = b.check();
  auto partitions = [](const rt::Plan& plan) {
    int n = 0;
    for (const auto& s : plan.steps)
      if (const auto* o = std::get_if<rt::SortPairs>(&s))
        n += o->values_in < 0 && o->radix_bits >= 0 && o->encoded;
    return n;
  };
  for (int window : {20, 0}) {
    rt::Plan plan = codegen::generate_plan(
        p, {.join = codegen::JoinAlgorithm::Hash, .hash_build_window_bits = window});
    const std::string text = codegen::describe_plan(plan);
    EXPECT_EQ(partitions(plan), 3) << text;
    EXPECT_NE(plan.source.find(fmt::format("hash_window_word<{}>", window)), std::string::npos);
    EXPECT_NE(plan.source.find(fmt::format("window_unrotate<{}>", window)), std::string::npos);
    EXPECT_EQ(count_of(plan.source, "hash_chain_push("), 1) << "the residual's chains";
    // The inner joins' global tables: rotated hashes with their positions, partitioned.
    EXPECT_GE(count_of(plan.source, fmt::format("window_rotate<{}>(", window)), 1);
    int global_words = 0, global_partitions = 0;
    for (const auto& s : plan.steps) {
      if (const auto* l = std::get_if<rt::Launch>(&s))
        global_words += l->kernel.find("hash_global_words") != std::string::npos;
      if (const auto* o = std::get_if<rt::SortPairs>(&s))
        global_partitions += o->radix_bits >= 0 && o->values_in >= 0 &&
                             plan.buffers[static_cast<size_t>(o->keys_in)].name.find("global_words") !=
                                 std::string::npos;
    }
    EXPECT_EQ(global_words, 2) << text;
    EXPECT_EQ(global_partitions, 2) << text;
    // Both builds of each semi set (3 sets built in windows, 1 with a residual), the
    // window's select's read-back gated.
    int row_builds = 0, window_builds = 0, gated_reads = 0;
    for (const auto& s : plan.steps) {
      if (const auto* l = std::get_if<rt::Launch>(&s)) {
        row_builds += l->kernel.ends_with("hash_set_build");
        window_builds += l->kernel.ends_with("hash_set_window_build");
      }
      if (const auto* r = std::get_if<rt::ReadSize>(&s)) gated_reads += r->when >= 0;
      // The window's select: skipped when its tiles, gated by the same slot, are 0.
      if (const auto* l = std::get_if<rt::Launch>(&s); l && l->kernel.ends_with("select_hash_set_words")) {
        EXPECT_TRUE(l->skip_if_empty);
        ASSERT_EQ(l->items.terms.size(), 1u);
        bool gated = false;
        for (const auto& z : plan.steps)
          if (const auto* e = std::get_if<rt::SetSize>(&z); e && e->slot == l->items.terms[0].slots[0])
            gated = e->value.gate >= 0 && e->value.gate_min == 1;
        EXPECT_TRUE(gated) << text;
      }
    }
    EXPECT_EQ(row_builds, 4) << text;
    EXPECT_EQ(window_builds, 3) << text;
    EXPECT_EQ(gated_reads, 1) << text;
    // ... and its look-back state is gated by the same slot (nothing allocated or zeroed
    // when the path is not taken).
    int gated_states = 0;
    for (const auto& b : plan.buffers)
      gated_states += b.name.ends_with(".tile_state") && b.count.gate >= 0 && b.count.gate_min == 1;
    EXPECT_EQ(gated_states, gated_reads) << text;
    EXPECT_NE(text.find(" when s"), std::string::npos) << text;
    Compiled c = nvrtc_compile(plan.source);
    EXPECT_TRUE(c.ok) << c.log << "\n" << numbered(plan.source);
  }
  // Windows of 2^20 slots by default.
  rt::Plan dflt = codegen::generate_plan(p, {.join = codegen::JoinAlgorithm::Hash});
  EXPECT_EQ(partitions(dflt), 3) << codegen::describe_plan(dflt);
  EXPECT_NE(dflt.source.find("hash_window_word<20>"), std::string::npos);
  rt::Plan off = codegen::generate_plan(p, {.join = codegen::JoinAlgorithm::Hash, .hash_build_window_bits = -1});
  EXPECT_EQ(partitions(off), 0) << codegen::describe_plan(off);
  EXPECT_EQ(off.source.find("hash_window_word"), std::string::npos);
  EXPECT_EQ(off.source.find("window_rotate<"), std::string::npos);
}
TEST(NvrtcCompile, EveryOperatorUnfused) {
  expect_compiles(testing::operators_program(), {.fusion = false});
  expect_compiles(testing::fusion_program(), {.join = codegen::JoinAlgorithm::Hash, .fusion = false});
}

// Declared input orders: verified by a check kernel, or (one reduce grouping by
// exactly the declared keys) inside the reduce.
TEST(NvrtcCompile, DeclaredInputOrders) {
  ProgramBuilder b;
  std::vector<Attribute> kv = {{"k", Type::I64}, {"s", Type::String}, {"w", Type::F64}};
  auto r = b.input("r", kv, 0, {"k", desc("s"), "w"});
  auto q = b.input("q", kv, 0, {"k", desc("s"), "w"});
  auto g = b.input("g", kv, 0, {desc("w")});
  auto h = b.input("h", kv, 0, {"k"});
  b.output(r.intersect(q), "fused_setop");
  b.output(g.reduce({"w"}, {sum(col("k"), "sk"), min(col("s"), "ms")}), "fused_reduce");
  b.output(h.join(h.project({as(col("k"), "hk"), as(col("w"), "hw")}), {"k"}, {"hk"}), "checked");
  Program p = b.check();
  rt::Plan plan = codegen::generate_plan(p, {.share_kernels = false});
  // g is verified inside its reduce; r and q (a set operation) and h (two consumers)
  // by check kernels. The reduce's integer sum has its overflow check too.
  EXPECT_EQ(count_of(plan.source, "_check_order("), 3) << plan.source;
  EXPECT_EQ(steps_of<rt::CheckFlag>(plan), 5);
  EXPECT_EQ(steps_of<rt::SortPairs>(plan), 0);
  expect_compiles(p);
}

// A declared-sorted left input whose one consumer is a sort-merge inner join by a prefix
// of its order is checked inside the join's kernel (every row against its predecessor by
// the whole declared order), both ways; the right input keeps its check kernel.
TEST(GeneratePlan, JoinChecksItsLeftInputsOrder) {
  ProgramBuilder b;
  auto f = b.input("f", {{"fk", Type::I32}, {"fv", Type::I32}}, 0, {"fk", desc("fv")});
  auto p = b.input("p", {{"pk", Type::I32}, {"pv", Type::I32}}, 0, {"pk"});
  b.output(f.join(p, {"fk"}, {"pk"}), "joined");
  for (bool one_pass : {true, false}) {
    rt::Plan plan = codegen::generate_plan(b.check(), {.join = codegen::JoinAlgorithm::SortMerge,
                                                       .one_pass_merge_join = one_pass});
    EXPECT_EQ(count_of(plan.source, "_check_order("), 1) << plan.source;  // p's
    EXPECT_NE(plan.source.find("out_of_order(long long i)"), std::string::npos);
    int f_checks = 0;
    for (const auto& s : plan.steps)
      if (const auto* c = std::get_if<rt::CheckFlag>(&s))
        f_checks += c->message.find("'f' is not sorted by (fk, fv desc)") != std::string::npos;
    EXPECT_EQ(f_checks, 1) << codegen::describe_plan(plan);
    Compiled c = nvrtc_compile(plan.source);
    EXPECT_TRUE(c.ok) << c.log;
  }
}

// A declared-sorted input whose one consumer is a select is checked by the select's view
// (each row against its predecessor, in whatever kernel reads the view), not by a kernel of
// its own: fused into a hash join's probe side, fused into a global reduce, materialised
// (fusion off). The CheckFlag follows the last kernel that takes the flag.
TEST(GeneratePlan, SelectChecksItsInputsOrder) {
  ProgramBuilder b;
  auto f = b.input("f", {{"fk", Type::I32}, {"fv", Type::I32}}, 0, {"fk", desc("fv")});
  auto p = b.input("p", {{"pk", Type::I32}, {"pv", Type::I32}}, 0, {"pk"});
  auto g = b.input("g", {{"gk", Type::I64}, {"gv", Type::F64}}, 0, {desc("gv"), "gk"});
  b.output(f.select(col("fv") > 3).join(p, {"fk"}, {"pk"}), "joined");
  b.output(g.select(col("gk") != 2).reduce({}, {sum(col("gv"), "s")}), "summed");
  const Program prog = b.check();
  for (bool fusion : {true, false}) {
    SCOPED_TRACE(fusion ? "fused" : "unfused");
    rt::Plan plan = codegen::generate_plan(prog, {.join = codegen::JoinAlgorithm::Hash, .fusion = fusion});
    // p's check kernel only (p is the build side: read at random).
    EXPECT_EQ(count_of(plan.source, "_check_order("), 1) << plan.source;
    EXPECT_EQ(count_of(plan.source, "_out_of_order(long long i)"), 2) << plan.source;
    for (const char* what : {"'f' is not sorted by (fk, fv desc)", "'g' is not sorted by (gv desc, gk)"}) {
      int checks = 0;
      for (size_t k = 0; k < plan.steps.size(); ++k) {
        const auto* c = std::get_if<rt::CheckFlag>(&plan.steps[k]);
        if (!c || c->message.find(what) == std::string::npos) continue;
        ++checks;
        // After the last kernel that takes the flag, with no kernel between them (frees and
        // read-backs may sit there).
        int last_launch = -1, launch_before = -1;
        for (size_t j = 0; j < plan.steps.size(); ++j)
          if (const auto* l = std::get_if<rt::Launch>(&plan.steps[j])) {
            if (j < k) launch_before = static_cast<int>(j);
            for (const auto& a : l->args)
              if (const auto* buf = std::get_if<rt::ArgBuffer>(&a); buf && buf->buffer == c->buffer)
                last_launch = static_cast<int>(j);
          }
        EXPECT_EQ(last_launch, launch_before) << what << "\n" << codegen::describe_plan(plan);
      }
      EXPECT_EQ(checks, 1) << what << "\n" << codegen::describe_plan(plan);
    }
    Compiled c = nvrtc_compile(plan.source);
    EXPECT_TRUE(c.ok) << c.log;
  }
}

// The sorted-left inner join both ways (one pass, and count + expand): one- and
// two-attribute keys of several types, a residual, a filter after the join.
TEST(NvrtcCompile, SortedLeftJoinBothPaths) {
  ProgramBuilder b;
  std::vector<Attribute> kv = {{"k", Type::I64}, {"s", Type::String}, {"w", Type::F64}};
  auto r = b.input("r", kv, 0, {"k", "s"});
  auto q = b.input("q", {{"qk", Type::I64}, {"qs", Type::String}, {"x", Type::I32}}, 0, {"qk", "qs"});
  b.output(r.join(q, {"k", "s"}, {"qk", "qs"}), "two_keys");
  b.output(r.join(q, {"k"}, {"qk"}, JoinKind::Inner, col("w") < col("x")), "residual");
  b.output(r.join(q, {"k"}, {"qk"}).project({"k", as(col("w") * 2.0, "w2")}), "mapped");
  // A global reduce folded into the merge (join_reduce.cuh), through a select and a project
  // that can fail: integer, float, min/max and avg states.
  b.output(r.join(q, {"k", "s"}, {"qk", "qs"})
               .select(col("w") < col("x"))
               .project({as(col("x") / 3, "y"), "w", "s"})
               .reduce({}, {sum(col("y"), "sy"), sum(col("w"), "sw"), ranc::min(col("s"), "ms"),
                            ranc::avg(col("y"), "ay"), count("n")}),
           "folded");
  Program p = b.check();
  for (bool ranges : {true, false}) {
    const codegen::CodegenOptions o{.join = codegen::JoinAlgorithm::SortMerge, .join_tile_ranges = ranges,
                                    .stage_join_keys = !ranges};
    expect_compiles(p, o);
    const rt::Plan plan = codegen::generate_plan(p, o);
    EXPECT_EQ(plan.source.find("JoinTileRangeAgent") != std::string::npos, ranges);
    EXPECT_NE(plan.source.find("JoinMergeReduceAgent"), std::string::npos);
    // Staged keys: the one-key joins (an i64 word); (k i64, s string) takes 96 bits and
    // searches with cmp.
    EXPECT_EQ(plan.source.find("f.lword(l)") != std::string::npos, !ranges);
    EXPECT_NE(plan.source.find("ranc::tpl::NoKeyWords{}"), std::string::npos);
  }
  expect_compiles(p, {.join = codegen::JoinAlgorithm::SortMerge, .one_pass_merge_join = false});
  // A reduce like "folded" folded into the partitioned hash join (HashJoinReduceAgent): a key
  // that packs into 64 bits (i64 k), a residual and a select in the fold.
  {
    ProgramBuilder hb;
    auto hr = hb.input("r", kv), hq = hb.input("q", {{"qk", Type::I64}, {"qs", Type::String}, {"x", Type::I32}});
    hb.output(hr.join(hq, {"k"}, {"qk"}, JoinKind::Inner, col("s") != col("qs"))
                  .select(col("w") < col("x"))
                  .project({as(col("x") / 3, "y"), "w", "s"})
                  .reduce({}, {sum(col("y"), "sy"), sum(col("w"), "sw"), ranc::min(col("s"), "ms"),
                               ranc::avg(col("y"), "ay"), count("n")}),
              "hash_folded");
    const Program hp = hb.check();
    const codegen::CodegenOptions o{.join = codegen::JoinAlgorithm::Hash, .fold_hash_joins = true};
    const rt::Plan plan = codegen::generate_plan(hp, o);
    EXPECT_NE(plan.source.find("HashJoinReduceAgent<P::HashJoin, unsigned long long>"), std::string::npos);
    expect_compiles(hp, o);
  }
}

// NULLs and the operators lowered to the others (lower_nulls and the passes before it):
// validity attributes, aggregate filters and exact integer sums on the sort, hash and
// global reduce paths, union all, the scalar kernel, substring maps and string values.
TEST(NvrtcCompile, NullsOuterJoinsDistinctAggregatesScalarSubqueriesSubstring) {
  const std::string program = R"(
input l(k i32 null, g i64 null, x string null, u f64, n i64);
input r(j i32 null, y i64 null, s string);
hashed = l |> reduce by k s = sum(n), c = count(x), lo = min(x), m = avg(u), d = count(distinct x);
sorted = l |> reduce by g s = sum(n), hi = max(u), c = count(x);
global = r |> reduce s = sum(y), c = count(y), n = count();
outer = l |> full join r on k = j where y > 3 |> project k, coalesce(x, s, 'none') as x,
  substring(s, 2, 3) as t, case when y is null then 'missing' else null end as w;
sub = l |> select u > scalar(l |> reduce a = avg(u)) and k < scalar(r |> reduce m = max(j))
  |> union all (l |> select x is null);
output hashed; output sorted; output global; output outer; output sub;
)";
  Program p = check(parse_ra(program, "nulls.ra").program);
  rt::Plan plan = codegen::generate_plan(p);
  EXPECT_NE(plan.source.find("_union_all("), std::string::npos);
  EXPECT_NE(plan.source.find("_scalar("), std::string::npos);
  EXPECT_NE(plan.source.find("ranc::tpl::atomic_add_words<2>"), std::string::npos);  // hashed
  EXPECT_NE(plan.source.find("ranc::tpl::add128"), std::string::npos);
  bool substring_map = false, value_code = false;
  for (const auto& d : plan.dict_params) {
    substring_map = substring_map || d.kind == rt::DictParam::Kind::SubstringMap;
    value_code = value_code || (d.kind == rt::DictParam::Kind::ValueCode && d.text == "none");
  }
  EXPECT_TRUE(substring_map && value_code);
  for (const auto& o : plan.outputs)
    for (size_t i = 0; i < o.schema.size(); ++i)
      EXPECT_EQ(o.schema[i].nullable, o.validity_of(i) >= 0) << o.name << "." << o.schema[i].name;
  expect_compiles(p);
  expect_compiles(p, {.fusion = false});
}

// Hostile names cannot break out of comments.
TEST(NvrtcCompile, HostileNamesStayInComments) {
  ProgramBuilder b;
  auto r = b.input("evil */ #error boom /*", {{"a */\n#error x", Type::I32}, {"b\\", Type::I64}});
  b.output(r.select(col("a */\n#error x") > 1).sort({"b\\"}), "out */ }");
  Program p;
  try {
    p = b.check();
  } catch (const UserError&) {
    GTEST_SKIP() << "the checker rejects such names";
  }
  expect_compiles(p);
}


// ---------------------------------------------------------------------------------
// Packed sort keys (sort_layout.h) and the plans of each sort shape.

TEST(SortLayout, FieldsPackFromTheTopIntoWords) {
  using codegen::sort_layout;
  // (i32, i32): one 64-bit word, the first key in the high half.
  auto a = sort_layout({Type::I32, Type::I32}, {{0, false}, {1, true}});
  ASSERT_EQ(a.words.size(), 1u);
  EXPECT_EQ(a.total_bits, 64);
  EXPECT_EQ(a.words[0].lo, 0);
  EXPECT_EQ(a.words[0].bits, 64);
  EXPECT_EQ(a.fields[0].lsb, 32);
  EXPECT_EQ(a.fields[1].lsb, 0);
  EXPECT_TRUE(a.fields[1].descending);
  // A bool is one bit; a date 32: 33 bits, one wide word.
  auto b = sort_layout({Type::Date, Type::Bool}, {{1, false}, {0, false}});
  ASSERT_EQ(b.words.size(), 1u);
  EXPECT_EQ(b.words[0].bits, 33);
  EXPECT_TRUE(b.words[0].wide());
  EXPECT_EQ(b.fields[0].column, 1);
  EXPECT_EQ(b.fields[0].lsb, 32);
  // A single string code: a 32-bit word.
  auto c = sort_layout({Type::String}, {{0, false}});
  ASSERT_EQ(c.words.size(), 1u);
  EXPECT_FALSE(c.words[0].wide());
  // (f64 desc, date, i64, i32): 192 bits in three words; the i64 straddles words 1 and 2.
  auto d = sort_layout({Type::F64, Type::Date, Type::I64, Type::I32},
                       {{0, true}, {1, false}, {2, false}, {3, false}});
  ASSERT_EQ(d.words.size(), 3u);
  EXPECT_EQ(d.words[0].lo, 128);
  EXPECT_EQ(d.words[1].lo, 64);
  EXPECT_EQ(d.words[2].lo, 0);
  EXPECT_TRUE(d.inside(d.fields[0], 0));
  EXPECT_TRUE(d.inside(d.fields[1], 1));
  EXPECT_FALSE(d.inside(d.fields[2], 1));
  EXPECT_TRUE(d.overlaps(d.fields[2], 1));
  EXPECT_TRUE(d.overlaps(d.fields[2], 2));
  EXPECT_FALSE(d.overlaps(d.fields[3], 1));
  // 129 bits: two full words and a last word of one bit.
  auto e = sort_layout({Type::I64, Type::I64, Type::Bool}, {{0, false}, {1, false}, {2, false}});
  ASSERT_EQ(e.words.size(), 3u);
  EXPECT_EQ(e.words[0].lo, 65);
  EXPECT_EQ(e.words[1].lo, 1);
  EXPECT_EQ(e.words[2].bits, 1);
  EXPECT_FALSE(e.words[2].wide());
}

struct SortSteps {
  int sorts = 0, keys_only = 0, encoded = 0, launches = 0, gathers = 0;
};
SortSteps sort_steps(const Program& p, const codegen::CodegenOptions& o = {}) {
  rt::Plan plan = codegen::generate_plan(p, o);
  SortSteps s;
  for (const auto& step : plan.steps) {
    if (auto* sp = std::get_if<rt::SortPairs>(&step)) {
      ++s.sorts;
      s.keys_only += sp->values_in < 0;
      s.encoded += sp->encoded;
    }
    s.launches += std::holds_alternative<rt::Launch>(step);
    s.gathers += std::holds_alternative<rt::Gather>(step);
  }
  return s;
}

// Each sort shape, by its steps: one CUB sort per 64-bit word of packed keys, and no
// per-column gathers.
TEST(GeneratePlan, SortShapes) {
  {  // a single i32 attribute: CUB sorts the column itself, nothing else runs
    ProgramBuilder b;
    b.output(b.input("r", {{"k", Type::I32}}).sort({desc("k")}), "out");
    SortSteps s = sort_steps(b.check());
    EXPECT_EQ(s.sorts, 1);
    EXPECT_EQ(s.keys_only, 1);
    EXPECT_EQ(s.encoded, 0);
    EXPECT_EQ(s.launches, 0);
  }
  {  // (k, v) sorted by k then v: one 64-bit word, keys only, one pack and one unpack kernel
    ProgramBuilder b;
    b.output(b.input("r", {{"k", Type::I32}, {"v", Type::I32}}).sort({"k"}), "out");
    SortSteps s = sort_steps(b.check());
    EXPECT_EQ(s.sorts, 1);
    EXPECT_EQ(s.keys_only, 1);
    EXPECT_EQ(s.encoded, 1);
    EXPECT_EQ(s.launches, 2);
    EXPECT_EQ(s.gathers, 0);
  }
  {  // a join's right input sorted by its key: the payload column rides in the sort
    ProgramBuilder b;
    auto l = b.input("l", {{"k", Type::I32}, {"x", Type::I64}}, 0, {"k"});
    auto r = b.input("r", {{"k2", Type::I32}, {"y", Type::I32}});
    b.output(l.join(r, {"k"}, {"k2"}), "out");
    rt::Plan plan = codegen::generate_plan(b.check(), {.join = codegen::JoinAlgorithm::SortMerge});
    const std::string text = codegen::describe_plan(plan);
    EXPECT_EQ(count_of(text, "sort_pairs"), 1) << text;
    EXPECT_EQ(count_of(text, "iota"), 0) << text;
    EXPECT_EQ(count_of(text, "_sorted("), 0) << text;
  }
  {  // 193 bits: four words, sorted last word first through row ids
    ProgramBuilder b;
    auto r = b.input("r", {{"f", Type::F64}, {"d", Type::Date}, {"b", Type::Bool},
                           {"s", Type::String}, {"l", Type::I64}});
    b.output(r.sort({desc("f"), "d", desc("b")}), "out");
    SortSteps s = sort_steps(b.check());
    EXPECT_EQ(s.sorts, 4);
    EXPECT_EQ(s.keys_only, 0);
    EXPECT_EQ(s.encoded, 4);
    EXPECT_EQ(s.launches, 5);
    EXPECT_EQ(s.gathers, 0);
  }
}

TEST(NvrtcCompile, SortShapes) {
  for (Type t : kAllTypes) {
    for (bool d : {false, true}) {
      ProgramBuilder b;
      auto r = b.input("r", {{"a", t}, {"v", Type::I32}, {"w", Type::F32}});
      b.output(r.sort({SortSpec("a", d)}), "all");
      b.output(r.project({as(col("a"), "a")}).sort({SortSpec("a", d)}), "one");
      b.output(r.project({as(col("a"), "a"), as(col("v"), "v")}).sort({SortSpec("v", d), "a"}),
               "two");
      SCOPED_TRACE(fmt::format("{} {}", type_name(t), d ? "desc" : "asc"));
      expect_compiles(b.check());
    }
  }
}

// Sorts of whole tuples in one word (fuse_pipelines): the words written by a join's output
// stage (sort-merge and hash) or a select's compaction, and read packed by a distinct; every
// attribute type (tuples of two 4-byte or smaller attributes pack; 8-byte pairs do not).
TEST(NvrtcCompile, WholeTupleSortShapes) {
  for (Type t : kAllTypes) {
    for (auto j : {codegen::JoinAlgorithm::SortMerge, codegen::JoinAlgorithm::Hash}) {
      ProgramBuilder b;
      auto r = b.input("r", {{"k", Type::I32}, {"a", t}});
      auto q = b.input("q", {{"qk", Type::I32}, {"b", t}});
      b.output(r.join(q, {"k"}, {"qk"}).project({"a", "b"}).distinct(), "pairs");
      b.output(r.select(col("k") > 0).project({"a"}).distinct(), "one");
      b.output(r.select(col("k") > 0).project({"a", "k"}).sort({desc("a"), "k"}), "sorted");
      SCOPED_TRACE(fmt::format("{} {}", type_name(t), j == codegen::JoinAlgorithm::Hash ? "hash" : "merge"));
      rt::Plan plan = codegen::generate_plan(b.check(), {.join = j});
      const bool packs = type_size(t) <= 4;
      std::string kernels;
      for (const auto& k : plan.kernels) kernels += k + " ";
      EXPECT_EQ(kernels.find("_join_project_sort_") != std::string::npos, packs) << kernels;
      // (a) alone packs unless it is an i64 (sorted as it is); (a, k) packs for 4-byte a.
      EXPECT_EQ(kernels.find("_select_project_sort") != std::string::npos, t != Type::I64)
          << kernels;
      Compiled c = nvrtc_compile(plan.source);
      EXPECT_TRUE(c.ok) << c.log << "\n" << numbered(plan.source);
    }
  }
}

// Set operations: tuples whose order packs into one 64-bit word merge their words staged in
// shared memory (SetOpKeysAgent), wider ones compare rows (SetOpAgent); every type, ascending
// and descending declared orders.
TEST(NvrtcCompile, SetOpShapes) {
  for (Type t : kAllTypes) {
    for (bool d : {false, true}) {
      ProgramBuilder b;
      std::vector<Attribute> one = {{"a", t}}, two = {{"a", t}, {"v", Type::I32}};
      auto r1 = b.input("r1", one, 0, {SortSpec("a", d)}), q1 = b.input("q1", one, 0, {SortSpec("a", d)});
      auto r2 = b.input("r2", two), q2 = b.input("q2", two);
      b.output(r1.union_with(q1), "u1");
      b.output(r1.intersect(q1), "i1");
      b.output(r1.difference(q1), "d1");
      b.output(r2.union_with(q2), "u2");
      b.output(r2.difference(q2), "d2");
      SCOPED_TRACE(fmt::format("{} {}", type_name(t), d ? "desc" : "asc"));
      const Program p = b.check();
      const bool wide = type_size(t) == 8;  // (a, v) is 96 bits
      // Staged (the default): the union of the declared inputs copies their columns into
      // shared memory; that of sorted r2 and q2 reads rows through the sort's permutation, so
      // it stages the order words, as intersect, difference and every keyed one without
      // staging do.
      for (bool stage : {true, false}) {
        rt::Plan plan = codegen::generate_plan(p, {.stage_set_op_inputs = stage});
        EXPECT_EQ(count_of(plan.source, "SetOpStagedAgent<"), stage ? 1 : 0);
        EXPECT_EQ(count_of(plan.source, "SetOpKeysAgent<"), (stage ? 2 : 3) + (wide ? 0 : 2));
        EXPECT_EQ(count_of(plan.source, "SetOpAgent<"), wide ? 2 : 0);
        Compiled c = nvrtc_compile(plan.source);
        EXPECT_TRUE(c.ok) << c.log << "\n" << numbered(plan.source);
      }
    }
  }
}

// A union of a relation with itself reads one buffer as both inputs: nothing is staged (a
// functor member points at one copy), and the words path runs.
TEST(NvrtcCompile, SetOpOfOneRelationWithItselfIsNotStaged) {
  ProgramBuilder b;
  auto r = b.input("r", {{"a", Type::I32}, {"v", Type::I32}}, 0, {"a", "v"});
  b.output(r.union_with(r), "u");
  b.output(r.difference(r), "d");
  rt::Plan plan = codegen::generate_plan(b.check());
  EXPECT_EQ(count_of(plan.source, "SetOpStagedAgent<"), 0);
  EXPECT_EQ(count_of(plan.source, "SetOpKeysAgent<"), 2);
  Compiled c = nvrtc_compile(plan.source);
  EXPECT_TRUE(c.ok) << c.log << "\n" << numbered(plan.source);
}

// Top-k sorts (plan_top_k.h, topk.cuh) for every type as the first key, both directions, one
// and several keys, with offsets.
TEST(NvrtcCompile, TopKShapes) {
  for (Type t : kAllTypes) {
    for (bool d : {false, true}) {
      ProgramBuilder b;
      auto r = b.input("r", {{"a", t}, {"v", Type::I32}, {"w", Type::F64}});
      b.output(r.sort({SortSpec("a", d)}).limit(10), "all");
      b.output(r.project({as(col("a"), "a")}).sort({SortSpec("a", d)}).limit(3, 4), "one");
      b.output(r.select(col("v") > 0).sort({"v", SortSpec("a", d)}).limit(100), "two");
      SCOPED_TRACE(fmt::format("{} {}", type_name(t), d ? "desc" : "asc"));
      Program p = b.check();
      rt::Plan plan = codegen::generate_plan(p, {.share_kernels = false});  // every shape
      EXPECT_EQ(count_of(plan.source, "TopKFirstAgent<256>"), 3);
      Compiled c = nvrtc_compile(plan.source);
      EXPECT_TRUE(c.ok) << c.log << "\n" << numbered(plan.source);
    }
  }
}

}  // namespace
}  // namespace ranc
