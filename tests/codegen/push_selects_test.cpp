// push_selects: which conjuncts of a select over an inner join move below it, and that the
// rewritten program gives the same results on the CPU reference.
#include <gtest/gtest.h>

#include <random>

#include "ranc/frontend/ra_parser.h"
#include "ranc/passes/push_selects.h"
#include "ranc/ra_ops/ra_ops.h"

namespace ranc {
namespace {

using Bindings = std::vector<std::pair<std::string, HostRelation>>;

constexpr const char* kDecl =
    "input f(k i32, v i32, w i32) from \"f.csv\";\ninput s(pk i32, pv i32) from \"s.csv\";\n";

Bindings inputs(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return Value::i32(static_cast<int32_t>(rng() % static_cast<uint64_t>(n)) - 2); };
  std::vector<std::vector<Value>> f, s;
  for (int i = 0; i < 300; ++i) f.push_back({pick(40), pick(20), pick(5)});
  for (int i = 0; i < 60; ++i) s.push_back({pick(40), pick(20)});
  return {{"f", HostRelation::from_rows(
                    Schema{{{"k", Type::I32}, {"v", Type::I32}, {"w", Type::I32}}, 0}, f)},
          {"s", HostRelation::from_rows(Schema{{{"pk", Type::I32}, {"pv", Type::I32}}, 0}, s)}};
}

// The selects of the pushed program: (the kind of its input node, its predicate's text).
std::vector<std::pair<OpKind, std::string>> selects(const Program& p) {
  std::vector<std::pair<OpKind, std::string>> out;
  for (const Node& n : p.nodes())
    if (n.kind == OpKind::Select)
      out.emplace_back(p.node(n.inputs[0]).kind, to_string(n.predicate));
  return out;
}

Program pushed_and_same(const std::string& body) {
  const std::string text = std::string(kDecl) + body;
  SCOPED_TRACE(text);
  Program checked = check(parse_ra(text, "t.ra").program);
  Program pushed = passes::push_selects(checked);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    std::vector<HostRelation> want = execute_reference(checked, inputs(seed));
    std::vector<HostRelation> got = execute_reference(pushed, inputs(seed));
    EXPECT_EQ(want.size(), got.size());
    for (size_t i = 0; i < std::min(want.size(), got.size()); ++i) {
      EXPECT_EQ(got[i].schema(), want[i].schema());
      EXPECT_EQ(got[i].sorted_rows(), want[i].sorted_rows()) << print_program(pushed);
    }
  }
  return pushed;
}

TEST(PushSelects, OneSideConjunctsMoveBelowTheJoin) {
  Program p = pushed_and_same(
      "out = f |> join s on k = pk |> select v % 2 = 0 and pv > 3 and v < pv and w > 0;\n"
      "output out;\n");
  auto sel = selects(p);
  ASSERT_EQ(sel.size(), 3u) << print_program(p);
  // f's two conjuncts on f, s's on s, the one reading both after the join.
  EXPECT_EQ(sel[0].first, OpKind::Input);
  EXPECT_EQ(sel[0].second, "(((v % 2) = 0) and (w > 0))");
  EXPECT_EQ(sel[1].first, OpKind::Input);
  EXPECT_EQ(sel[1].second, "(pv > 3)");
  EXPECT_EQ(sel[2].first, OpKind::Join);
  EXPECT_EQ(sel[2].second, "(v < pv)");
}

TEST(PushSelects, WhatCanFailOrIsReadElsewhereStays) {
  // A division by an attribute stays behind the join (it must not see rows the join
  // drops); a join read twice keeps its select; a semi join is not an inner join.
  Program p = pushed_and_same(
      "j = f |> join s on k = pk;\n"
      "a = j |> select v / (w + 10) > 0;\n"
      "b = j |> select v > 1;\n"
      "c = f |> semijoin s on k = pk |> select v > 1;\n"
      "output a; output b; output c;\n");
  for (const auto& [input, pred] : selects(p)) EXPECT_NE(input, OpKind::Input) << pred;
}

TEST(PushSelects, SinksThroughAChainOfJoins) {
  Program p = pushed_and_same(
      "t = s |> project pk as tk, pv as tv;\n"
      "out = f |> join s on k = pk |> join t on v = tk |> select w > 1 and pv < 5 and tv > 0;\n"
      "output out;\n");
  auto sel = selects(p);
  ASSERT_EQ(sel.size(), 3u) << print_program(p);
  for (const auto& [input, pred] : sel) EXPECT_NE(input, OpKind::Join) << pred << print_program(p);
}

TEST(PushSelects, KeyConjunctsFilterBothSides) {
  // k = pk for every match: a conjunct of the left keys also filters the right input.
  Program p = pushed_and_same(
      "out = f |> join s on k = pk |> select k < 10 and k > -1;\n"
      "output out;\n");
  auto sel = selects(p);
  ASSERT_EQ(sel.size(), 2u) << print_program(p);
  EXPECT_EQ(sel[0].second, "((k < 10) and (k > -1))");
  EXPECT_EQ(sel[1].second, "((pk < 10) and (pk > -1))");
  for (const auto& [input, pred] : sel) EXPECT_EQ(input, OpKind::Input) << pred;
}

TEST(PushSelects, ThroughProjectsThatPassAttributesOn) {
  // Through a project that renames: the conjunct reads its input's names below it, then
  // moves below the join. One over a computed attribute stays; a project that can fail
  // keeps its select after it (it must check every row it sees).
  Program p = pushed_and_same(
      "out = f |> join s on k = pk |> project k, v as x, pv, v + pv as t |> select x > 1 and t > 3;\n"
      "guarded = f |> project k, v, v / (w + 10) as q |> select v > 1;\n"
      "output out; output guarded;\n");
  auto sel = selects(p);
  ASSERT_EQ(sel.size(), 3u) << print_program(p);
  EXPECT_EQ(sel[0].first, OpKind::Input);
  EXPECT_EQ(sel[0].second, "(v > 1)");
  EXPECT_EQ(sel[1].first, OpKind::Project);
  EXPECT_EQ(sel[1].second, "(t > 3)");
  EXPECT_EQ(sel[2].first, OpKind::Project);  // "guarded"
}

}  // namespace
}  // namespace ranc
