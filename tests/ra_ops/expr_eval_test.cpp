// ops::eval_expr (ra_ops/expr/eval.cpp): every expression kind, evaluated through
// check() + execute_reference() as a projection over attributes (so constant
// folding in the checker cannot stand in for the evaluator), plus a few direct
// calls on hand-resolved trees.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "reference_test_util.h"

namespace ranc::test {
namespace {

constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();
constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// Two i32 attributes a, b.
Value ii(Expr e, int32_t a, int32_t b) {
  return eval1(std::move(e), {{"a", Type::I32}, {"b", Type::I32}}, {I(a), I(b)});
}
// Two i64 attributes a, b.
Value ll(Expr e, int64_t a, int64_t b) {
  return eval1(std::move(e), {{"a", Type::I64}, {"b", Type::I64}}, {L(a), L(b)});
}
// Two f64 attributes x, y.
Value dd(Expr e, double x, double y) {
  return eval1(std::move(e), {{"x", Type::F64}, {"y", Type::F64}}, {D(x), D(y)});
}
// One string attribute s.
Value ss(Expr e, std::string s) {
  return eval1(std::move(e), {{"s", Type::String}}, {S(std::move(s))});
}
// One date attribute d.
Value dt(Expr e, std::string_view d) {
  return eval1(std::move(e), {{"d", Type::Date}}, {Dt(d)});
}

Expr a = col("a"), b = col("b"), x = col("x"), y = col("y"), s = col("s"), d = col("d");

TEST(ExprEval, IntegerArithmeticWrapsOnOverflow) {
  EXPECT_EQ(ii(a + b, kMax32, 1), I(kMin32));
  EXPECT_EQ(ii(a - b, kMin32, 1), I(kMax32));
  EXPECT_EQ(ii(a * b, 65536, 65536), I(0));
  EXPECT_EQ(ii(a * b, kMax32, 2), I(-2));
  EXPECT_EQ(ii(-a, kMin32, 0), I(kMin32));
  EXPECT_EQ(ll(a + b, kMax64, 1), L(kMin64));
  EXPECT_EQ(ll(a - b, kMin64, 1), L(kMax64));
  EXPECT_EQ(ll(a * b, int64_t{1} << 32, int64_t{1} << 32), L(0));
  EXPECT_EQ(ll(-a, kMin64, 0), L(kMin64));
  EXPECT_EQ(ii(a + b, 40, 2), I(42));
  EXPECT_EQ(ii(a - b, 2, 40), I(-38));
}

TEST(ExprEval, MixedIntegerWidthsPromoteBeforeArithmetic) {
  // a i32 + b i64: a is widened, so no i32 wrap.
  Value v = eval1(a + b, {{"a", Type::I32}, {"b", Type::I64}}, {I(kMax32), L(1)});
  EXPECT_EQ(v, L(int64_t{kMax32} + 1));
}

TEST(ExprEval, IntegerDivisionAndModulo) {
  EXPECT_EQ(ii(a / b, 7, 2), I(3));
  EXPECT_EQ(ii(a / b, -7, 2), I(-3));  // truncates toward zero
  EXPECT_EQ(ii(a / b, 7, -2), I(-3));
  EXPECT_EQ(ii(a % b, -7, 2), I(-1));  // sign of the dividend
  EXPECT_EQ(ii(a % b, 7, -2), I(1));
  EXPECT_EQ(ii(a / b, kMin32, -1), I(kMin32));  // wraps
  EXPECT_EQ(ii(a % b, kMin32, -1), I(0));
  EXPECT_EQ(ll(a / b, kMin64, -1), L(kMin64));
  EXPECT_EQ(ll(a % b, kMin64, -1), L(0));
  EXPECT_EQ(ll(a / b, -9, 4), L(-2));
  EXPECT_EQ(ll(a % b, -9, 4), L(-1));
}

void expect_division_error(Expr e, std::string_view op, bool wide) {
  try {
    if (wide)
      ll(std::move(e), 5, 0);
    else
      ii(std::move(e), 5, 0);
    ADD_FAILURE() << "no error for division by zero with " << op;
  } catch (const UserError& err) {
    EXPECT_EQ(err.kind(), ErrorKind::Execution);
    const std::string& m = err.first().message;
    EXPECT_NE(m.find("division by zero"), std::string::npos) << m;
    EXPECT_NE(m.find(fmt::format("'{}'", op)), std::string::npos) << m;
    EXPECT_NE(m.find("project"), std::string::npos) << m;  // names the node
  }
}

TEST(ExprEval, IntegerDivisionByZeroIsAnExecutionError) {
  expect_division_error(a / b, "/", false);
  expect_division_error(a % b, "%", false);
  expect_division_error(a / b, "/", true);
  expect_division_error(a % b, "%", true);
  // Also inside a select predicate.
  ProgramBuilder pb;
  auto t = pb.input("t", {{"a", Type::I32}, {"b", Type::I32}});
  pb.output(t.select(a / b > 1), "out");
  try {
    run(pb, {{"t", rel({{"a", Type::I32}, {"b", Type::I32}}, {{I(4), I(2)}, {I(1), I(0)}})}});
    ADD_FAILURE() << "no error";
  } catch (const UserError& err) {
    EXPECT_EQ(err.kind(), ErrorKind::Execution);
    EXPECT_NE(err.first().message.find("select"), std::string::npos) << err.first().message;
  }
}

TEST(ExprEval, FloatArithmeticIsIeee) {
  EXPECT_EQ(dd(x / y, 1.0, 0.0), D(kInf));
  EXPECT_EQ(dd(x / y, -1.0, 0.0), D(-kInf));
  EXPECT_TRUE(std::isnan(dd(x / y, 0.0, 0.0).as_f64()));
  EXPECT_EQ(dd(x * y, 1e308, 10.0), D(kInf));
  EXPECT_EQ(dd(x + y, 0.1, 0.2), D(0.1 + 0.2));
  // f32 arithmetic is done in f32.
  Value f = eval1(col("p") + col("q"), {{"p", Type::F32}, {"q", Type::F32}}, {F(0.1f), F(0.2f)});
  EXPECT_EQ(f.type(), Type::F32);
  EXPECT_EQ(f, F(0.1f + 0.2f));
  EXPECT_EQ(dd(-x, 0.0, 0.0).as_f64(), 0.0);
  EXPECT_TRUE(std::signbit(dd(-x, 0.0, 0.0).as_f64()));
}

TEST(ExprEval, NaNComparesFalseExceptNotEqual) {
  EXPECT_EQ(dd(x == y, kNaN, kNaN), B(false));
  EXPECT_EQ(dd(x == x, kNaN, 0), B(false));
  EXPECT_EQ(dd(x < y, kNaN, 1.0), B(false));
  EXPECT_EQ(dd(x <= y, kNaN, 1.0), B(false));
  EXPECT_EQ(dd(x > y, kNaN, 1.0), B(false));
  EXPECT_EQ(dd(x >= y, 1.0, kNaN), B(false));
  EXPECT_EQ(dd(x != y, kNaN, 1.0), B(true));  // IEEE compareQuietNotEqual
  EXPECT_EQ(dd(between(x, y, y + 1.0), kNaN, 0.0), B(false));
  EXPECT_EQ(dd(in_list(x, {y, 1.0}), kNaN, kNaN), B(false));
  EXPECT_EQ(dd(x == y, -0.0, 0.0), B(true));
  EXPECT_EQ(dd(x < y, -0.0, 0.0), B(false));
  EXPECT_EQ(dd(x < y, -kInf, 0.0), B(true));
  EXPECT_EQ(dd(x < y, 1.0, 2.0), B(true));
  EXPECT_EQ(dd(x >= y, 2.0, 2.0), B(true));
}

TEST(ExprEval, IntegerComparisons) {
  EXPECT_EQ(ii(a < b, kMin32, kMax32), B(true));
  EXPECT_EQ(ii(a <= b, 3, 3), B(true));
  EXPECT_EQ(ii(a > b, 3, 3), B(false));
  EXPECT_EQ(ii(a != b, 3, 4), B(true));
  EXPECT_EQ(ii(a == b, 3, 4), B(false));
  EXPECT_EQ(ll(a >= b, kMax64, kMin64), B(true));
}

TEST(ExprEval, BetweenAndInList) {
  EXPECT_EQ(ii(between(a, b, b + 2), 5, 5), B(true));  // inclusive low
  EXPECT_EQ(ii(between(a, b, b + 2), 7, 5), B(true));  // inclusive high
  EXPECT_EQ(ii(between(a, b, b + 2), 8, 5), B(false));
  EXPECT_EQ(ii(between(a, b, b + 2), 4, 5), B(false));
  EXPECT_EQ(ii(between(a, b + 2, b), 6, 5), B(false));  // empty range
  EXPECT_EQ(ii(in_list(a, {1, 2, b}), 2, 9), B(true));
  EXPECT_EQ(ii(in_list(a, {1, 2, b}), 9, 9), B(true));
  EXPECT_EQ(ii(in_list(a, {1, 2, b}), 3, 9), B(false));
  EXPECT_EQ(ss(in_list(s, {"x", "abc"}), "abc"), B(true));
  EXPECT_EQ(ss(in_list(s, {"x", "ab"}), "abc"), B(false));
}

TEST(ExprEval, LogicalOperators) {
  for (bool p : {false, true})
    for (bool q : {false, true}) {
      Attribute P{"p", Type::Bool}, Q{"q", Type::Bool};
      EXPECT_EQ(eval1(col("p") && col("q"), {P, Q}, {B(p), B(q)}), B(p && q));
      EXPECT_EQ(eval1(col("p") || col("q"), {P, Q}, {B(p), B(q)}), B(p || q));
      EXPECT_EQ(eval1(!col("p"), {P, Q}, {B(p), B(q)}), B(!p));
    }
  // and/or short-circuit: the guarded division is never evaluated.
  EXPECT_EQ(ii(b != 0 && a / b > 1, 5, 0), B(false));
  EXPECT_EQ(ii(b == 0 || a / b > 1, 5, 0), B(true));
  EXPECT_EQ(ii(b != 0 && a / b > 1, 5, 2), B(true));
}

TEST(ExprEval, CaseTakesTheFirstTrueBranchAndEvaluatesOnlyIt) {
  Expr c = case_when({{a < 0, -1}, {a == 0, 0}, {a < 10, 1}}, 2);
  EXPECT_EQ(ii(c, -5, 0), I(-1));
  EXPECT_EQ(ii(c, 0, 0), I(0));
  EXPECT_EQ(ii(c, 5, 0), I(1));
  EXPECT_EQ(ii(c, 50, 0), I(2));
  // Overlapping conditions: the first wins.
  EXPECT_EQ(ii(case_when({{a > 0, 10}, {a > 1, 20}}, 30), 5, 0), I(10));
  EXPECT_EQ(ii(case_when({{b != 0, a / b}}, -1), 5, 0), I(-1));
  EXPECT_EQ(ii(case_when({{b != 0, a / b}}, -1), 9, 2), I(4));
  // Branches of different numeric types promote to one (i32 and f64 -> f64).
  EXPECT_EQ(ii(case_when({{a > 0, a}}, 0.5), 3, 0), D(3.0));
}

TEST(ExprEval, FloatToIntegerCastTruncatesAndSaturates) {
  EXPECT_EQ(dd(cast(x, Type::I32), 2.9, 0), I(2));
  EXPECT_EQ(dd(cast(x, Type::I32), -2.9, 0), I(-2));
  EXPECT_EQ(dd(cast(x, Type::I32), 1e20, 0), I(kMax32));
  EXPECT_EQ(dd(cast(x, Type::I32), -1e20, 0), I(kMin32));
  EXPECT_EQ(dd(cast(x, Type::I32), 2147483647.9, 0), I(kMax32));
  EXPECT_EQ(dd(cast(x, Type::I32), 2147483648.0, 0), I(kMax32));
  EXPECT_EQ(dd(cast(x, Type::I32), -2147483648.9, 0), I(kMin32));
  EXPECT_EQ(dd(cast(x, Type::I32), -2147483649.0, 0), I(kMin32));
  EXPECT_EQ(dd(cast(x, Type::I32), kNaN, 0), I(0));
  EXPECT_EQ(dd(cast(x, Type::I32), kInf, 0), I(kMax32));
  EXPECT_EQ(dd(cast(x, Type::I64), 1e300, 0), L(kMax64));
  EXPECT_EQ(dd(cast(x, Type::I64), -kInf, 0), L(kMin64));
  EXPECT_EQ(dd(cast(x, Type::I64), 9223372036854775807.0, 0), L(kMax64));  // = 2^63
  EXPECT_EQ(dd(cast(x, Type::I64), -9.5e18, 0), L(kMin64));
  EXPECT_EQ(dd(cast(x, Type::I64), -1e18, 0), L(-1000000000000000000));
  EXPECT_EQ(dd(cast(x, Type::I64), kNaN, 0), L(0));
  Value f = eval1(cast(col("p"), Type::I32), {{"p", Type::F32}}, {F(-3e9f)});
  EXPECT_EQ(f, I(kMin32));
}

TEST(ExprEval, NumericBoolAndDateCasts) {
  EXPECT_EQ(ii(cast(a, Type::Bool), 5, 0), B(true));
  EXPECT_EQ(ii(cast(a, Type::Bool), -1, 0), B(true));
  EXPECT_EQ(ii(cast(a, Type::Bool), 0, 0), B(false));
  EXPECT_EQ(dd(cast(x, Type::Bool), -0.0, 0), B(false));
  EXPECT_EQ(dd(cast(x, Type::Bool), 0.25, 0), B(true));
  EXPECT_EQ(dd(cast(x, Type::Bool), kNaN, 0), B(true));  // nonzero
  Attribute P{"p", Type::Bool};
  EXPECT_EQ(eval1(cast(col("p"), Type::I32), {P}, {B(true)}), I(1));
  EXPECT_EQ(eval1(cast(col("p"), Type::I64), {P}, {B(false)}), L(0));
  EXPECT_EQ(eval1(cast(col("p"), Type::F64), {P}, {B(true)}), D(1.0));
  // Numeric widening and narrowing.
  EXPECT_EQ(ii(cast(a, Type::I64), kMin32, 0), L(kMin32));
  EXPECT_EQ(ll(cast(a, Type::I32), (int64_t{1} << 32) + 5, 0), I(5));  // keeps the low 32 bits
  EXPECT_EQ(ll(cast(a, Type::I32), -1, 0), I(-1));
  EXPECT_EQ(ii(cast(a, Type::F64), 7, 0), D(7.0));
  EXPECT_EQ(ll(cast(a, Type::F32), 16777217, 0), F(16777216.0f));  // rounds to nearest even
  EXPECT_EQ(dd(cast(x, Type::F32), 0.1, 0), F(0.1f));
  // Dates <-> integers: days since 1970-01-01.
  EXPECT_EQ(dt(cast(d, Type::I32), "1970-01-02"), I(1));
  EXPECT_EQ(dt(cast(d, Type::I64), "1969-12-31"), L(-1));
  EXPECT_EQ(ii(cast(a, Type::Date), 365, 0), Dt("1971-01-01"));
  EXPECT_EQ(ll(cast(a, Type::Date), 10957, 0), Dt("2000-01-01"));
}

TEST(ExprEval, Dates) {
  EXPECT_EQ(dt(year(d), "1992-02-29"), I(1992));
  EXPECT_EQ(dt(year(d), "1969-12-31"), I(1969));
  EXPECT_EQ(dt(year(d), "2000-12-31"), I(2000));
  EXPECT_EQ(dt(year(d), "0001-01-01"), I(1));
  EXPECT_EQ(dt(d + 1, "1992-02-28"), Dt("1992-02-29"));
  EXPECT_EQ(dt(d + 1, "1992-02-29"), Dt("1992-03-01"));
  EXPECT_EQ(dt(d + 1, "1993-02-28"), Dt("1993-03-01"));
  EXPECT_EQ(dt(1 + d, "1999-12-31"), Dt("2000-01-01"));
  EXPECT_EQ(dt(d - 365, "1993-03-01"), Dt("1992-03-01"));
  EXPECT_EQ(dt(d - 366, "1993-02-28"), Dt("1992-02-28"));
  EXPECT_EQ(dt(d - date_lit("1992-02-28"), "1992-03-01"), I(2));
  EXPECT_EQ(dt(date_lit("1992-02-28") - d, "1992-03-01"), I(-2));
  EXPECT_EQ(dt(d < date_lit("1992-03-01"), "1992-02-29"), B(true));
  EXPECT_EQ(dt(between(d, date_lit("1994-01-01"), date_lit("1994-12-31")), "1994-12-31"), B(true));
  EXPECT_EQ(dt(between(d, date_lit("1994-01-01"), date_lit("1994-12-31")), "1995-01-01"), B(false));
}

TEST(ExprEval, StringComparisonsAreByBytes) {
  auto cmp = [](Expr e, std::string p, std::string q) {
    return eval1(std::move(e), {{"p", Type::String}, {"q", Type::String}}, {S(p), S(q)});
  };
  Expr p = col("p"), q = col("q");
  EXPECT_EQ(cmp(p < q, "a", "b"), B(true));
  EXPECT_EQ(cmp(p < q, "ab", "a"), B(false));
  EXPECT_EQ(cmp(p > q, "ab", "a"), B(true));
  EXPECT_EQ(cmp(p < q, "", "a"), B(true));
  EXPECT_EQ(cmp(p < q, "B", "a"), B(true));         // 'B' (66) < 'a' (97)
  EXPECT_EQ(cmp(p > q, "\xc3\xa9", "z"), B(true));  // bytes compare unsigned
  EXPECT_EQ(cmp(p == q, "abc", "abc"), B(true));
  EXPECT_EQ(cmp(p != q, "abc", "abd"), B(true));
  EXPECT_EQ(cmp(p <= q, "abc", "abc"), B(true));
  EXPECT_EQ(cmp(p >= q, "abc", "abd"), B(false));
  EXPECT_EQ(ss(s == "hello", "hello"), B(true));
  EXPECT_EQ(ss(s < "hello", "help"), B(false));
}

struct LikeCase {
  const char* pattern;
  const char* text;
  bool match;
};

TEST(ExprEval, LikePatterns) {
  const LikeCase cases[] = {
      {"%", "", true},
      {"%", "abc", true},
      {"_", "a", true},
      {"_", "", false},
      {"_", "ab", false},
      {"%%", "", true},
      {"%%", "xyz", true},
      {"", "", true},
      {"", "a", false},
      {"abc", "abc", true},
      {"abc", "abcd", false},
      {"abc", "ab", false},
      {"a%b%c", "abc", true},
      {"a%b%c", "aXbYc", true},
      {"a%b%c", "aXbY", false},
      {"a%b%c", "acb", false},
      {"a%b%c", "abcbc", true},
      {"a%b%c", "ab", false},
      {"a%b%c", "abcX", false},
      {"a%b%c", "aabbcc", true},
      {"%ab", "aab", true},
      {"%aab", "aaab", true},
      {"a%ab", "aab", true},
      {"%a_c", "abcabc", true},
      {"%abc%", "ababc", true},
      {"%abc%", "abab", false},
      {"_%_", "a", false},
      {"_%_", "ab", true},
      {"%_", "", false},
      {"%b", "abab", true},
      {"%ba", "abab", false},
      {"A%", "abc", false},
      {"a.c", "abc", false},
      {"a*", "aaa", false},
      {"a*", "a*", true},
      {"%special%", "a special case", true},
      {"%BRASS", "LARGE BRUSHED BRASS", true},
      {"%BRASS", "BRASS PLATED TIN", false},
      {"%green%", "forest green metallic", true},
      {"_b_", "abc", true},
      {"__", "\xc3\xa9", false},  // '_' is one UTF-8 character, not one byte
      {"_", "\xc3\xa9", true},
  };
  for (const auto& c : cases)
    EXPECT_EQ(ss(like(s, c.pattern), c.text), B(c.match))
        << "'" << c.text << "' like '" << c.pattern << "'";
}

TEST(ExprEval, LikeIsNotExponential) {
  std::string text(2000, 'a');
  std::string pattern;
  for (int i = 0; i < 30; ++i) pattern += "a%";
  EXPECT_EQ(ss(like(s, pattern + "b"), text), B(false));
  EXPECT_EQ(ss(like(s, pattern + "a"), text), B(true));
  EXPECT_EQ(ss(like(s, "%" + std::string(1000, 'a') + "b"), text), B(false));
}

TEST(ExprEval, StartsWith) {
  EXPECT_EQ(ss(starts_with(s, "ab"), "abc"), B(true));
  EXPECT_EQ(ss(starts_with(s, "abc"), "abc"), B(true));
  EXPECT_EQ(ss(starts_with(s, "abc"), "ab"), B(false));
  EXPECT_EQ(ss(starts_with(s, ""), ""), B(true));
  EXPECT_EQ(ss(starts_with(s, "b"), "abc"), B(false));
  EXPECT_EQ(ss(starts_with(s, "%"), "abc"), B(false));  // no wildcards
}

// Direct calls on hand-resolved trees, independent of the checker.
ExprPtr attr(int32_t i, Type t) {
  ExprNode n;
  n.kind = ExprKind::Attr;
  n.attr_index = i;
  n.type = t;
  return make_expr(n);
}
ExprPtr binary(BinaryOp op, ExprPtr l, ExprPtr r, Type t) {
  ExprNode n;
  n.kind = ExprKind::Binary;
  n.binary_op = op;
  n.args = {std::move(l), std::move(r)};
  n.type = t;
  return make_expr(n);
}

TEST(ExprEval, DirectOnResolvedTrees) {
  auto e = binary(BinaryOp::Add, attr(1, Type::I32), attr(0, Type::I32), Type::I32);
  EXPECT_EQ(ops::eval_expr(*e, {I(kMax32), I(2)}), I(kMin32 + 1));
  auto dv = binary(BinaryOp::Div, attr(0, Type::I64), attr(1, Type::I64), Type::I64);
  EXPECT_EQ(ops::eval_expr(*dv, {L(-9), L(2)}), L(-4));
  try {
    ops::eval_expr(*dv, {L(1), L(0)});
    ADD_FAILURE() << "no error";
  } catch (const UserError& err) {
    EXPECT_EQ(err.kind(), ErrorKind::Execution);
    EXPECT_NE(err.first().message.find("'/'"), std::string::npos) << err.first().message;
  }
  auto dd_sub = binary(BinaryOp::Sub, attr(0, Type::Date), attr(1, Type::Date), Type::I32);
  EXPECT_EQ(ops::eval_expr(*dd_sub, {Dt("2000-03-01"), Dt("2000-02-28")}), I(2));
  auto lt = binary(BinaryOp::Lt, attr(0, Type::F32), attr(1, Type::F32), Type::Bool);
  EXPECT_EQ(ops::eval_expr(*lt, {F(std::nanf("")), F(1.0f)}), B(false));
  EXPECT_EQ(ops::eval_expr(*lt, {F(-1.0f), F(1.0f)}), B(true));
  // An unresolved tree is a bug of the caller, not a user error.
  EXPECT_THROW(ops::eval_expr(*col("a").ptr(), {I(1)}), InternalError);
}

}  // namespace
}  // namespace ranc::test
