// NULL semantics in the CPU reference (the oracle), operator by operator, against
// hand-computed rows (program.h, NULLS): three-valued logic, NULL-propagating
// expressions, NULL keys in joins and outer joins, grouping, aggregates that skip NULLs,
// distinct aggregates, sort order, set operations, union all, scalar subqueries and
// substring. Programs are written in .ra, so the parser's new forms are exercised too.
#include <limits>

#include "ranc/frontend/ra_parser.h"
#include "reference_test_util.h"

namespace ranc::test {
namespace {

Value NI() {
  return Value::null(Type::I32);
}
Value NL() {
  return Value::null(Type::I64);
}
Value ND() {
  return Value::null(Type::F64);
}
Value NB() {
  return Value::null(Type::Bool);
}
Value NS() {
  return Value::null(Type::String);
}

// Runs a .ra program with one output over the given relations.
HostRelation run_ra(const std::string& text, const Bindings& inputs) {
  Program checked = check(parse_ra(text, "t.ra").program);
  auto outs = execute_reference(checked, inputs);
  EXPECT_EQ(outs.size(), 1u);
  return outs.empty() ? HostRelation() : std::move(outs[0]);
}

const std::vector<Attribute> kAB = {
    {"a", Type::I32, true}, {"b", Type::I32, true}, {"p", Type::Bool, true}};
const char* kDeclAB = "input t(a i32 null, b i32 null, p bool null);\n";

// (a, b, p) rows covering NULL on each side.
Rows ab_rows() {
  return {{I(1), I(2), B(true)}, {NI(), I(2), B(false)}, {I(3), NI(), NB()}, {NI(), NI(), NB()}};
}

TEST(NullReference, ArithmeticAndComparisonsPropagateNull) {
  HostRelation out = run_ra(std::string(kDeclAB) +
                                "q = t |> project a + b as s, a < b as lt, a = b as eq, -a as neg, "
                                "cast(a as f64) as d, year(cast(null as date)) as y;\noutput q;",
                            {{"t", rel(kAB, ab_rows())}});
  EXPECT_TRUE(out.schema()[0].nullable);
  EXPECT_ROWS_EQ(out, Rows{{I(3), B(true), B(false), I(-1), D(1.0), NI()},
                           {NI(), NB(), NB(), NI(), ND(), NI()},
                           {NI(), NB(), NB(), I(-3), D(3.0), NI()},
                           {NI(), NB(), NB(), NI(), ND(), NI()}});
}

TEST(NullReference, ThreeValuedLogic) {
  // p and q, p or q, not p over every pair of true/false/NULL.
  std::vector<Attribute> pq = {{"p", Type::Bool, true}, {"q", Type::Bool, true}};
  Rows rows;
  for (Value p : {B(true), B(false), NB()})
    for (Value q : {B(true), B(false), NB()}) rows.push_back({p, q});
  HostRelation out =
      run_ra("input t(p bool null, q bool null);\n"
             "q2 = t |> project p and q as a, p or q as o, not p as n;\noutput q2;",
             {{"t", rel(pq, rows)}});
  const Value T = B(true), F = B(false), N = NB();
  EXPECT_ROWS_EQ(out, Rows{{T, T, F}, {F, T, F}, {N, T, F},  // p true
                           {F, T, T}, {F, F, T}, {F, N, T},  // p false
                           {N, T, N}, {F, N, N}, {N, N, N}});
}

TEST(NullReference, BetweenInIsNullCoalesceAndCase) {
  HostRelation out = run_ra(
      std::string(kDeclAB) +
          "q = t |> project a between 1 and b as btw, a in (3, null) as inl, a in (1, 2) as in2, "
          "a is null as isn, b is not null as isnn, coalesce(a, b, -1) as c, "
          "case when p then 10 when a > 2 then 20 else null end as k;\noutput q;",
      {{"t", rel(kAB, ab_rows())}});
  EXPECT_FALSE(out.schema()[3].nullable);  // is null is never NULL
  EXPECT_FALSE(out.schema()[5].nullable);  // coalesce with a non-null last argument
  EXPECT_TRUE(out.schema()[6].nullable);   // else null
  EXPECT_ROWS_EQ(out, Rows{{B(true), NB(), B(true), B(false), B(true), I(1), I(10)},
                           {NB(), NB(), NB(), B(true), B(true), I(2), NI()},
                           {NB(), B(true), B(false), B(false), B(false), I(3), I(20)},
                           {NB(), NB(), NB(), B(true), B(false), I(-1), NI()}});
}

TEST(NullReference, DivisionByZeroOnlyWithoutNull) {
  std::vector<Attribute> ab = {{"a", Type::I32, true}, {"b", Type::I32, true}};
  // A NULL operand makes the quotient NULL before it is divided.
  HostRelation out = run_ra("input t(a i32 null, b i32 null);\nq = t |> project a / b as d;\n"
                            "output q;",
                            {{"t", rel(ab, {{NI(), I(0)}, {I(4), NI()}, {I(4), I(2)}})}});
  EXPECT_ROWS_EQ(out, Rows{{NI()}, {NI()}, {I(2)}});
  EXPECT_THROW(run_ra("input t(a i32 null, b i32 null);\nq = t |> project a / b as d;\noutput q;",
                      {{"t", rel(ab, {{I(1), I(0)}})}}),
               UserError);
}

TEST(NullReference, SelectKeepsOnlyTrue) {
  HostRelation out = run_ra(std::string(kDeclAB) + "q = t |> select a < b or p;\noutput q;",
                            {{"t", rel(kAB, ab_rows())}});
  EXPECT_ROWS_EQ(out, Rows{{I(1), I(2), B(true)}});
  out = run_ra(std::string(kDeclAB) + "q = t |> select not (a < b);\noutput q;",
               {{"t", rel(kAB, ab_rows())}});
  EXPECT_EQ(out.num_rows(), 0u);
}

const std::vector<Attribute> kL = {{"k", Type::I32, true}, {"x", Type::String}};
const std::vector<Attribute> kR = {{"j", Type::I32, true}, {"y", Type::I64}};
const char* kDeclLR = "input l(k i32 null, x string);\ninput r(j i32 null, y i64);\n";
Rows l_rows() {
  return {{I(1), S("a")}, {NI(), S("b")}, {I(2), S("c")}, {I(4), S("d")}};
}
Rows r_rows() {
  return {{I(1), L(10)}, {I(1), L(11)}, {NI(), L(20)}, {I(3), L(30)}};
}
Bindings lr() {
  return {{"l", rel(kL, l_rows())}, {"r", rel(kR, r_rows())}};
}

TEST(NullReference, NullKeysNeverMatch) {
  EXPECT_BAG_EQ(run_ra(std::string(kDeclLR) + "q = l |> join r on k = j;\noutput q;", lr()),
                Rows{{I(1), S("a"), L(10)}, {I(1), S("a"), L(11)}});
  EXPECT_BAG_EQ(run_ra(std::string(kDeclLR) + "q = l |> semijoin r on k = j;\noutput q;", lr()),
                Rows{{I(1), S("a")}});
  // An anti join keeps the NULL-key tuple: it matches nothing.
  EXPECT_BAG_EQ(run_ra(std::string(kDeclLR) + "q = l |> antijoin r on k = j;\noutput q;", lr()),
                Rows{{NI(), S("b")}, {I(2), S("c")}, {I(4), S("d")}});
}

TEST(NullReference, LeftRightAndFullOuterJoins) {
  HostRelation left = run_ra(std::string(kDeclLR) + "q = l |> left join r on k = j;\noutput q;",
                             lr());
  EXPECT_EQ(left.schema().str(), "(k i32 null, x string, y i64 null)");
  EXPECT_BAG_EQ(left, Rows{{I(1), S("a"), L(10)},
                           {I(1), S("a"), L(11)},
                           {NI(), S("b"), NL()},
                           {I(2), S("c"), NL()},
                           {I(4), S("d"), NL()}});
  HostRelation right =
      run_ra(std::string(kDeclLR) + "q = l |> right outer join r on k = j;\noutput q;", lr());
  EXPECT_EQ(right.schema().str(), "(k i32 null, x string null, y i64)");
  // The key of an unmatched right tuple is the right's key.
  EXPECT_BAG_EQ(right, Rows{{I(1), S("a"), L(10)},
                            {I(1), S("a"), L(11)},
                            {NI(), NS(), L(20)},
                            {I(3), NS(), L(30)}});
  HostRelation full = run_ra(std::string(kDeclLR) + "q = l |> full join r on k = j;\noutput q;",
                             lr());
  EXPECT_BAG_EQ(full, Rows{{I(1), S("a"), L(10)},
                           {I(1), S("a"), L(11)},
                           {NI(), S("b"), NL()},
                           {I(2), S("c"), NL()},
                           {I(4), S("d"), NL()},
                           {NI(), NS(), L(20)},
                           {I(3), NS(), L(30)}});
}

TEST(NullReference, OuterJoinResidualDecidesTheMatch) {
  // A pair whose residual is false (or NULL) is no match: the left tuple is padded.
  HostRelation out = run_ra(
      std::string(kDeclLR) + "q = l |> left join r on k = j where y > 10;\noutput q;", lr());
  EXPECT_BAG_EQ(out, Rows{{I(1), S("a"), L(11)},
                          {NI(), S("b"), NL()},
                          {I(2), S("c"), NL()},
                          {I(4), S("d"), NL()}});
  // Non-nullable keys on both sides stay non-nullable in a left join.
  HostRelation nn = run_ra(
      "input l(k i32, x i32);\ninput r(k i32, y i32);\nq = l |> left join r on k;\noutput q;",
      {{"l", rel({{"k", Type::I32}, {"x", Type::I32}}, {{I(1), I(5)}})},
       {"r", rel({{"k", Type::I32}, {"y", Type::I32}}, {})}});
  EXPECT_EQ(nn.schema().str(), "(k i32, x i32, y i32 null)");
  EXPECT_ROWS_EQ(nn, Rows{{I(1), I(5), NI()}});
}

const std::vector<Attribute> kG = {{"g", Type::String, true}, {"v", Type::I64, true}};
Rows g_rows() {
  return {{S("x"), L(1)}, {NS(), L(5)}, {S("x"), NL()}, {NS(), L(5)},
          {S("y"), NL()}, {S("x"), L(3)}, {NS(), L(7)}};
}

TEST(NullReference, GroupsAndAggregatesSkipNulls) {
  HostRelation out = run_ra(
      "input t(g string null, v i64 null);\n"
      "q = t |> reduce by g s = sum(v), n = count(), nv = count(v), lo = min(v), hi = max(v), "
      "m = avg(v), d = count(distinct v), sd = sum(distinct v);\noutput q;",
      {{"t", rel(kG, g_rows())}});
  EXPECT_EQ(out.schema().str(),
            "(g string null, s i64 null, n i64, nv i64, lo i64 null, hi i64 null, m f64 null, d "
            "i64, sd i64 null | key g)");
  // One group for the NULL keys; a group with no non-NULL value has NULL aggregates.
  EXPECT_BAG_EQ(out, Rows{{NS(), L(17), L(3), L(3), L(5), L(7), D(17.0 / 3), L(2), L(12)},
                          {S("x"), L(4), L(3), L(2), L(1), L(3), D(2.0), L(2), L(4)},
                          {S("y"), NL(), L(1), L(0), NL(), NL(), ND(), L(0), NL()}});
}

TEST(NullReference, GlobalAggregatesOverOnlyNulls) {
  HostRelation out = run_ra("input t(g string null, v i64 null);\n"
                            "q = t |> select v is null |> reduce n = count(), s = sum(v), "
                            "c = count(v);\noutput q;",
                            {{"t", rel(kG, g_rows())}});
  EXPECT_ROWS_EQ(out, Rows{{L(2), NL(), L(0)}});
}

TEST(NullReference, SortPutsNullsFirstAscendingAndLastDescending) {
  Bindings b = {{"t", rel(kG, g_rows())}};
  HostRelation asc = run_ra("input t(g string null, v i64 null);\nq = t |> sort v;\noutput q;", b);
  EXPECT_ROWS_EQ(asc, Rows{{S("x"), NL()}, {S("y"), NL()}, {S("x"), L(1)}, {S("x"), L(3)},
                           {NS(), L(5)}, {NS(), L(5)}, {NS(), L(7)}});
  HostRelation desc =
      run_ra("input t(g string null, v i64 null);\nq = t |> sort g desc, v;\noutput q;", b);
  EXPECT_ROWS_EQ(desc, Rows{{S("y"), NL()}, {S("x"), NL()}, {S("x"), L(1)}, {S("x"), L(3)},
                            {NS(), L(5)}, {NS(), L(5)}, {NS(), L(7)}});
}

TEST(NullReference, SetOperationsTreatNullAsEqualToNull) {
  Bindings b = {{"t", rel(kG, g_rows())},
                {"u", rel(kG, {{NS(), L(5)}, {S("y"), NL()}, {S("z"), NL()}})}};
  const std::string decl = "input t(g string null, v i64 null);\ninput u(g string null, v i64 null);\n";
  EXPECT_BAG_EQ(run_ra(decl + "q = distinct(t);\noutput q;", b),
                Rows{{S("x"), L(1)}, {NS(), L(5)}, {S("x"), NL()}, {S("y"), NL()},
                     {S("x"), L(3)}, {NS(), L(7)}});
  EXPECT_BAG_EQ(run_ra(decl + "q = t |> intersect u;\noutput q;", b),
                Rows{{NS(), L(5)}, {S("y"), NL()}});
  EXPECT_BAG_EQ(run_ra(decl + "q = t |> except u;\noutput q;", b),
                Rows{{S("x"), L(1)}, {S("x"), NL()}, {S("x"), L(3)}, {NS(), L(7)}});
  EXPECT_EQ(run_ra(decl + "q = t |> union u;\noutput q;", b).num_rows(), 7u);
  // union all keeps every tuple.
  HostRelation all = run_ra(decl + "q = t |> union all u;\noutput q;", b);
  EXPECT_EQ(all.num_rows(), 10u);
  EXPECT_ROWS_EQ(all, [] {
    Rows r = g_rows();
    r.push_back({NS(), L(5)});
    r.push_back({S("y"), NL()});
    r.push_back({S("z"), NL()});
    return r;
  }());
}

TEST(NullReference, ScalarSubqueries) {
  std::vector<Attribute> kv = {{"k", Type::I32}, {"v", Type::F64}};
  Bindings b = {{"t", rel(kv, {{I(1), D(1.0)}, {I(2), D(4.0)}, {I(3), D(10.0)}})}};
  const std::string decl = "input t(k i32, v f64);\n";
  // Above the average; the subquery's value in a project too.
  EXPECT_BAG_EQ(run_ra(decl +
                           "q = t |> select v > scalar(t |> reduce m = avg(v)) "
                           "|> project k, v - scalar(t |> reduce lo = min(v)) as d;\noutput q;",
                       b),
                Rows{{I(3), D(9.0)}});
  // An empty subquery is NULL: the predicate is never true.
  EXPECT_EQ(run_ra(decl + "q = t |> select v > scalar(t |> select k > 5 |> project v);\noutput q;",
                   b)
                .num_rows(),
            0u);
  // More than one tuple is an error naming the node.
  try {
    run_ra(decl + "q = t |> select v > scalar(t |> project v);\noutput q;", b);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.diagnostics()[0].kind, ErrorKind::Execution);
    EXPECT_NE(std::string(e.what()).find("scalar subquery has 3 tuples"), std::string::npos)
        << e.what();
  }
}

TEST(NullReference, Substring) {
  std::vector<Attribute> s = {{"s", Type::String, true}};
  Bindings b = {{"t", rel(s, {{S("13-555-0199")}, {S("é漢字x")}, {S("")}, {NS()}})}};
  HostRelation out = run_ra(
      "input t(s string null);\nq = t |> project substring(s, 1, 2) as a, "
      "substring(s from 2 for 2) as b, substring(s, 0, 2) as c, substring(s, 3, 100) as d, "
      "substring(s, 9, 0) as e;\noutput q;",
      b);
  EXPECT_ROWS_EQ(out, Rows{{S("13"), S("3-"), S("1"), S("-555-0199"), S("")},
                           {S("é漢"), S("漢字"), S("é"), S("字x"), S("")},
                           {S(""), S(""), S(""), S(""), S("")},
                           {NS(), NS(), NS(), NS(), NS()}});
}

TEST(NullReference, NullLiteralsNeedATypeFromTheirContext) {
  std::vector<Attribute> a = {{"a", Type::I32}};
  Bindings b = {{"t", rel(a, {{I(1)}})}};
  HostRelation out = run_ra("input t(a i32);\nq = t |> project cast(null as i64) as n, "
                            "coalesce(null, a) as c, a + null as s;\noutput q;",
                            b);
  EXPECT_EQ(out.schema().str(), "(n i64 null, c i32, s i32 null)");
  EXPECT_ROWS_EQ(out, Rows{{NL(), I(1), NI()}});
  try {
    run_ra("input t(a i32);\nq = t |> project null as n;\noutput q;", b);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("NULL has no type"), std::string::npos) << e.what();
  }
}

TEST(NullReference, NullInANonNullableInputIsAnError) {
  std::vector<Attribute> a = {{"a", Type::I32, true}};
  try {
    run_ra("input t(a i32);\nq = t;\noutput q;", {{"t", rel(a, {{I(1)}, {NI()}})}});
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("has a NULL in attribute 'a' (row 1)"),
              std::string::npos)
        << e.what();
  }
  // Without NULLs, a nullable column binds a non-nullable declaration.
  EXPECT_ROWS_EQ(run_ra("input t(a i32);\nq = t;\noutput q;", {{"t", rel(a, {{I(1)}})}}),
                 Rows{{I(1)}});
}

TEST(NullReference, NullableKeysAreRejected) {
  EXPECT_THROW(parse_ra("input t(a i32 null key);\noutput t;", "t.ra"), UserError);
}

}  // namespace
}  // namespace ranc::test
