// The SQL lowering passes (no GPU): lower_scalar_subqueries, lower_distinct_aggregates,
// lower_outer_joins and lower_nulls turn a program into one the physical passes know,
// with the same meaning. The oracle: the CPU reference runs the original program on
// relations with NULLs, and the lowered one on the same relations in lower_nulls' layout
// ((a.valid, a) pairs, what the executor binds); the results, mapped back, must be equal.
// Also: what each pass leaves behind (no nullable attribute, no outer join, ...), and
// that every program here gets a GPU plan.
#include <gtest/gtest.h>

#include <random>

#include "ranc/codegen/codegen.h"
#include "ranc/frontend/ra_parser.h"
#include "ranc/passes/lower_distinct_aggregates.h"
#include "ranc/passes/lower_nulls.h"
#include "ranc/passes/lower_outer_joins.h"
#include "ranc/passes/lower_scalar_subqueries.h"
#include "ranc/ra_ops/ra_ops.h"
#include "sql_programs.h"

namespace ranc {
namespace {

using namespace sqltest;

using Bindings = std::vector<std::pair<std::string, HostRelation>>;

Program lower_all(const Program& checked) {
  return passes::lower_nulls(passes::lower_outer_joins(
      passes::lower_distinct_aggregates(passes::lower_scalar_subqueries(checked))));
}

// Runs the program and its lowering on the CPU reference and compares every output
// (as a bag, or in order when it is ordered).
void expect_same(const std::string& text, const Bindings& inputs) {
  SCOPED_TRACE(text);
  Program checked = check(parse_ra(text, "t.ra").program);
  Program lowered = lower_all(checked);
  for (const Node& n : lowered.nodes()) {
    for (const Attribute& a : n.schema.attributes)
      ASSERT_FALSE(a.nullable) << "n" << n.id << " " << a.name << "\n" << print_program(lowered);
    ASSERT_FALSE(n.kind == OpKind::Join && is_outer_join(n.join_kind));
    ASSERT_FALSE(n.null_safe_keys);
    for (const Aggregate& a : n.aggregates) ASSERT_FALSE(a.distinct);
    ASSERT_LE(n.inputs.size(), static_cast<size_t>(std::max(op_arity(n.kind), 2)));
  }
  std::vector<HostRelation> want = execute_reference(checked, inputs);
  Bindings laid;
  for (const auto& [name, r] : inputs) laid.emplace_back(name, to_layout(r));
  std::vector<HostRelation> got = execute_reference(lowered, laid);
  ASSERT_EQ(want.size(), got.size());
  const auto outs = checked.outputs();
  for (size_t i = 0; i < want.size(); ++i) {
    const Node& o = checked.node(outs[i]);
    // The lowered output is exactly the original schema in the layout.
    EXPECT_EQ(got[i].schema().attributes, to_layout(HostRelation(o.schema)).schema().attributes);
    HostRelation back = from_layout(got[i], o.schema);
    EXPECT_EQ(back.schema(), want[i].schema());
    const bool ordered = !checked.node(o.inputs[0]).order.empty();
    if (ordered) {
      for (size_t r = 0; r < std::min(want[i].num_rows(), back.num_rows()); ++r)
        EXPECT_EQ(back.row(r), want[i].row(r)) << "row " << r;
      EXPECT_EQ(back.num_rows(), want[i].num_rows());
    } else {
      EXPECT_EQ(back.sorted_rows(), want[i].sorted_rows()) << print_program(lowered);
    }
  }
  // Every program here also has a GPU plan (no NVRTC compile here).
  EXPECT_NO_THROW(codegen::generate_plan(checked));
}

class LowerSql : public ::testing::TestWithParam<Case> {};

TEST_P(LowerSql, SameResultsOnTheCpuReference) {
  expect_same(std::string(kDecl) + GetParam().body, lr_inputs());
}

INSTANTIATE_TEST_SUITE_P(Programs, LowerSql, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(LowerSqlPasses, EachPassLeavesOnlyWhatTheNextKnows) {
  Program p = check(parse_ra(std::string(kDecl) +
                                 "q = l |> select u > scalar(l |> reduce m = avg(u)) "
                                 "|> left join r on k = j |> reduce by k d = count(distinct y);\n"
                                 "output q;",
                             "t.ra")
                        .program);
  Program s = passes::lower_scalar_subqueries(p);
  for (const Node& n : s.nodes())
    EXPECT_LE(n.inputs.size(), static_cast<size_t>(std::max(op_arity(n.kind), 2)));
  EXPECT_NE(print_program(s).find("scalar"), std::string::npos);
  Program d = passes::lower_distinct_aggregates(s);
  for (const Node& n : d.nodes())
    for (const Aggregate& a : n.aggregates) EXPECT_FALSE(a.distinct);
  Program o = passes::lower_outer_joins(d);
  bool union_all = false;
  for (const Node& n : o.nodes()) {
    EXPECT_FALSE(n.kind == OpKind::Join && is_outer_join(n.join_kind));
    union_all = union_all || n.kind == OpKind::UnionAll;
  }
  EXPECT_TRUE(union_all);
  Program z = passes::lower_nulls(o);
  EXPECT_NE(print_program(z).find("k.valid"), std::string::npos);
  // Without any of these features a pass returns the program as it is.
  Program plain = check(parse_ra("input t(a i32);\nq = t |> select a > 1;\noutput q;", "t.ra").program);
  EXPECT_EQ(print_program(lower_all(plain)), print_program(plain));
}

// Random relations with NULLs through every case, several seeds: more NULL patterns than
// the hand-written rows.
TEST(LowerSqlPasses, RandomNullPatterns) {
  for (int round = 0; round < 6; ++round) {
    Bindings in = random_lr(40, round / 6.0, 20261124 + static_cast<uint64_t>(round));
    for (const Case& c : kCases) {
      SCOPED_TRACE(::testing::Message() << "round " << round << " case " << c.name);
      // A scalar subquery that is not one tuple is an error on both sides alike.
      try {
        expect_same(std::string(kDecl) + c.body, in);
      } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("scalar subquery"), std::string::npos) << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace ranc
