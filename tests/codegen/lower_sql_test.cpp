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

namespace ranc {
namespace {

// The column without its validity (NULL rows keep their stored zero).
Column strip(const Column& c) {
  Column out(c.type());
  if (c.type() == Type::String)
    out.set_codes(c.data<int32_t>(), c.dictionary());
  else
    out.storage() = c.storage();
  return out;
}

// A relation in lower_nulls' layout: (a.valid, a) for every nullable attribute.
HostRelation to_layout(const HostRelation& r) {
  Schema s;
  for (const Attribute& a : r.schema().attributes) {
    if (a.nullable) s.attributes.push_back(Attribute{validity_name(a.name), Type::Bool});
    s.attributes.push_back(Attribute{a.name, a.type});
  }
  HostRelation out(s);
  size_t k = 0;
  for (size_t c = 0; c < r.num_columns(); ++c) {
    const Column& col = r.column(c);
    if (col.nullable()) {
      Column v(Type::Bool);
      v.data<uint8_t>() = col.validity();
      out.column(k++) = std::move(v);
    }
    out.column(k++) = strip(col);
  }
  return out;
}

// A relation of lower_nulls' layout back in the user's schema.
HostRelation from_layout(const HostRelation& lr, const Schema& user) {
  HostRelation out(user);
  for (size_t c = 0; c < user.size(); ++c) {
    const Attribute& a = user[c];
    auto vi = lr.schema().find(a.name);
    EXPECT_TRUE(vi.has_value()) << a.name;
    Column col = lr.column(*vi);
    if (a.nullable) {
      auto vv = lr.schema().find(validity_name(a.name));
      EXPECT_TRUE(vv.has_value()) << validity_name(a.name);
      const auto& valid = lr.column(*vv).data<uint8_t>();
      col.set_nullable(true);
      col.validity() = valid;
      // A NULL's stored value must be the type's zero (the layout's rule).
      Column stored = strip(lr.column(*vi));
      const Value zero = Value::zero(a.type);
      for (size_t i = 0; i < valid.size(); ++i)
        if (!valid[i]) EXPECT_EQ(stored.get(i), zero) << "row " << i << " of " << a.name;
    }
    out.column(c) = std::move(col);
  }
  return out;
}

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

Value NI() {
  return Value::null(Type::I32);
}
Value NS() {
  return Value::null(Type::String);
}
Value NL() {
  return Value::null(Type::I64);
}

// Two relations with NULLs in keys and values.
Bindings lr_inputs() {
  HostRelation l = HostRelation::from_rows(
      Schema{{{"k", Type::I32, true}, {"x", Type::String, true}, {"u", Type::F64}}, 0},
      {{Value::i32(1), Value::string("a"), Value::f64(1.5)},
       {NI(), Value::string("b"), Value::f64(2.0)},
       {Value::i32(2), NS(), Value::f64(-1.0)},
       {Value::i32(4), Value::string("d"), Value::f64(0.0)},
       {Value::i32(1), Value::string("a"), Value::f64(3.0)},
       {NI(), NS(), Value::f64(2.0)}});
  HostRelation r = HostRelation::from_rows(
      Schema{{{"j", Type::I32, true}, {"y", Type::I64, true}}, 0},
      {{Value::i32(1), Value::i64(10)},
       {Value::i32(1), NL()},
       {NI(), Value::i64(20)},
       {Value::i32(3), Value::i64(30)},
       {Value::i32(2), Value::i64(7)}});
  return {{"l", l}, {"r", r}};
}
const char* kDecl = "input l(k i32 null, x string null, u f64);\ninput r(j i32 null, y i64 null);\n";

struct Case {
  const char* name;
  const char* body;
};

class LowerSql : public ::testing::TestWithParam<Case> {};

TEST_P(LowerSql, SameResultsOnTheCpuReference) {
  expect_same(std::string(kDecl) + GetParam().body, lr_inputs());
}

const Case kCases[] = {
    {"Expressions",
     "q = l |> project k + 1 as a, k < 2 or x = 'a' as b, not (k = 1) and u > 0 as c, "
     "k between 1 and 3 as d, k in (1, null, 4) as e, x is null as f, coalesce(k, 0) as g, "
     "coalesce(x, 'none') as h, case when k > 1 then x when u > 1 then 'big' else null end as i, "
     "k / case when k is null then 0 else 2 end as m, substring(x, 1, 1) as n, x like 'a%' as o;\noutput q;"},
    {"Select", "q = l |> select k < 2 or x = 'd';\noutput q;"},
    {"SelectNot", "q = l |> select not (k = 1);\noutput q;"},
    {"InnerJoin", "q = l |> join r on k = j;\noutput q;"},
    {"JoinResidual", "q = l |> join r on k = j where y > 5 or x is null;\noutput q;"},
    {"SemiJoin", "q = l |> semijoin r on k = j;\noutput q;"},
    {"AntiJoin", "q = l |> antijoin r on k = j;\noutput q;"},
    {"AntiJoinResidual", "q = l |> antijoin r on k = j where y > 10;\noutput q;"},
    {"LeftJoin", "q = l |> left join r on k = j;\noutput q;"},
    {"RightJoin", "q = l |> right join r on k = j;\noutput q;"},
    {"FullJoin", "q = l |> full outer join r on k = j where y <> 10;\noutput q;"},
    {"ReduceNullKeys",
     "q = l |> reduce by k n = count(), s = sum(u), c = count(x), lo = min(x), hi = max(x), "
     "m = avg(u);\noutput q;"},
    {"ReduceNullableArgs",
     "q = r |> reduce by j s = sum(y), c = count(y), lo = min(y), m = avg(y), n = count();\n"
     "output q;"},
    {"GlobalReduce", "q = r |> reduce s = sum(y), c = count(y), n = count(), hi = max(y);\noutput q;"},
    {"CountDistinctOnly", "q = l |> reduce by k d = count(distinct x);\noutput q;"},
    {"DistinctMixed",
     "q = l |> reduce by k d = count(distinct x), n = count(), su = sum(distinct u), "
     "s = sum(u);\noutput q;"},
    {"DistinctGlobal", "q = l |> reduce d = count(distinct k), n = count();\noutput q;"},
    {"Sort", "q = l |> sort k desc, x;\noutput q;"},
    {"SortLimit", "q = l |> sort x, k desc |> limit 3;\noutput q;"},
    {"Distinct", "q = l |> project k, x |> distinct;\noutput q;"},
    {"SetOps",
     "a = l |> project k, x;\nb = r |> project j as k, cast(y as i32) as z |> project k, "
     "case when z > 9 then 'a' else null end as x;\n"
     "q = union(a, b) |> union all (a |> intersect b) |> union all (a |> except b);\noutput q;"},
    {"MixedNullability",
     "a = l |> project u as v;\nb = r |> project cast(y as f64) as v;\n"
     "q = (a |> union all b) |> union (b |> except a) |> union (a |> intersect b);\noutput q;"},
    {"ScalarSubqueries",
     "q = l |> select u > scalar(l |> reduce m = avg(u)) "
     "|> project k, u - scalar(r |> select j = 3 |> project y) as d, "
     "scalar(r |> select j = 9 |> project y) as none;\noutput q;"},
    {"ScalarInJoinAndReduce",
     "q = l |> join r on k = j where y > scalar(r |> reduce m = min(y)) "
     "|> reduce by x s = sum(u * scalar(r |> reduce c = count())) ;\noutput q;"},
    {"Product", "q = l |> product (r |> select y is null);\noutput q;"},
};

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
  std::mt19937 rng(20261124);
  for (int round = 0; round < 6; ++round) {
    auto pick = [&](int n) { return static_cast<int32_t>(rng() % static_cast<uint32_t>(n)); };
    const double null_rate = round / 6.0;
    auto maybe = [&](Value v, Type t) {
      return std::uniform_real_distribution<double>(0, 1)(rng) < null_rate ? Value::null(t) : v;
    };
    std::vector<std::vector<Value>> lrows, rrows;
    for (int i = 0; i < 40; ++i)
      lrows.push_back({maybe(Value::i32(pick(5)), Type::I32),
                       maybe(Value::string(std::string(1, static_cast<char>('a' + pick(4)))),
                             Type::String),
                       Value::f64(pick(7) - 3.0)});
    for (int i = 0; i < 30; ++i)
      rrows.push_back(
          {maybe(Value::i32(pick(5)), Type::I32), maybe(Value::i64(pick(40) - 5), Type::I64)});
    Bindings in = {
        {"l", HostRelation::from_rows(
                  Schema{{{"k", Type::I32, true}, {"x", Type::String, true}, {"u", Type::F64}}, 0},
                  lrows)},
        {"r", HostRelation::from_rows(Schema{{{"j", Type::I32, true}, {"y", Type::I64, true}}, 0},
                                      rrows)}};
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
