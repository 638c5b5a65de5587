// Tests of ops::resolve_expr: every promotion rule and every type error of the
// semantics in ranc/ir/program.h, the explicit Cast nodes that promotions become,
// literal folding, and the locations of diagnostics.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <climits>
#include <regex>

#include "ranc/ra_ops/ra_ops.h"

namespace ranc {
namespace {

// One attribute of every type.
const Schema kSchema{{{"b", Type::Bool},
                      {"i", Type::I32},
                      {"l", Type::I64},
                      {"f", Type::F32},
                      {"d", Type::F64},
                      {"dt", Type::Date},
                      {"s", Type::String}},
                     0};
const SourceLoc kNodeLoc{"test.ra", 3, 1};

ExprPtr ok(const Expr& e) {
  ops::Diagnostics diags;
  ExprPtr r = ops::resolve_expr(e.ptr(), kSchema, kNodeLoc, "test", diags);
  EXPECT_TRUE(r) << to_string(e);
  for (const auto& d : diags) ADD_FAILURE() << d.str();
  return r;
}

// Resolution fails with one diagnostic of `kind` matching `pattern`.
ops::Diagnostics fails(const Expr& e, ErrorKind kind, const std::string& pattern) {
  ops::Diagnostics diags;
  ExprPtr r = ops::resolve_expr(e.ptr(), kSchema, kNodeLoc, "test", diags);
  EXPECT_FALSE(r) << to_string(e);
  EXPECT_EQ(diags.size(), 1u) << to_string(e);
  if (!diags.empty()) {
    EXPECT_EQ(diags[0].kind, kind) << diags[0].str();
    EXPECT_TRUE(std::regex_search(diags[0].message, std::regex(pattern)))
        << diags[0].message << " !~ " << pattern;
  }
  return diags;
}

Type type_of(const Expr& e) {
  ExprPtr r = ok(e);
  return r ? *r->type : Type::Bool;
}

// The resolved tree as text, which shows the inserted casts.
std::string resolved(const Expr& e) {
  ExprPtr r = ok(e);
  return r ? to_string(r) : "<error>";
}

TEST(ResolveExpr, AttributesGetIndexAndType) {
  ExprPtr r = ok(col("dt"));
  EXPECT_EQ(r->attr_index, 5);
  EXPECT_EQ(*r->type, Type::Date);
}

TEST(ResolveExpr, UnknownAttributeSuggestsAndListsInput) {
  auto d = fails(col("S"), ErrorKind::UnknownAttribute,
                 "^unknown attribute 'S' in test; input has: b, i, l, f, d, dt, s$");
  EXPECT_EQ(d[0].hint, "did you mean 's'?");
  EXPECT_EQ(d[0].loc, kNodeLoc);
  auto far = fails(col("completely_else"), ErrorKind::UnknownAttribute, "completely_else");
  EXPECT_EQ(far[0].hint, "");  // nothing close enough to suggest
}

TEST(ResolveExpr, LiteralTypes) {
  EXPECT_EQ(type_of(lit(Value::i32(1))), Type::I32);
  EXPECT_EQ(type_of(lit(Value::i64(1))), Type::I64);
  EXPECT_EQ(type_of(1.5), Type::F64);
  EXPECT_EQ(type_of(1.5f), Type::F32);
  EXPECT_EQ(type_of("x"), Type::String);
  EXPECT_EQ(type_of(date_lit("1994-01-01")), Type::Date);
}

// Numeric promotion: i32 < i64 < f32 < f64, except i64 with f32 gives f64.
TEST(ResolveExpr, NumericPromotionTable) {
  struct Case {
    const char* a;
    const char* b;
    Type t;
  };
  for (auto [a, b, t] : std::vector<Case>{{"i", "i", Type::I32},
                                          {"i", "l", Type::I64},
                                          {"i", "f", Type::F32},
                                          {"i", "d", Type::F64},
                                          {"l", "f", Type::F64},
                                          {"f", "l", Type::F64},
                                          {"l", "d", Type::F64},
                                          {"f", "d", Type::F64},
                                          {"f", "f", Type::F32}}) {
    for (auto op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div}) {
      ExprPtr r = ok(make_binary(op, col(a), col(b)));
      ASSERT_TRUE(r);
      EXPECT_EQ(*r->type, t) << a << " " << binary_op_symbol(op) << " " << b;
      // Both operands now have the result type: no evaluator needs to promote.
      EXPECT_EQ(*r->args[0]->type, t);
      EXPECT_EQ(*r->args[1]->type, t);
    }
    ExprPtr cmp = ok(col(a) < col(b));
    EXPECT_EQ(*cmp->type, Type::Bool);
    EXPECT_EQ(*cmp->args[0]->type, t);
    EXPECT_EQ(*cmp->args[1]->type, t);
  }
}

TEST(ResolveExpr, PromotionsBecomeExplicitCasts) {
  EXPECT_EQ(resolved(col("i") + col("l")), "(cast(i as i64) + l)");
  EXPECT_EQ(resolved(col("l") * col("f")), "(cast(l as f64) * cast(f as f64))");
  EXPECT_EQ(resolved(col("i") + col("i")), "(i + i)");
}

TEST(ResolveExpr, LiteralsArePromotedByFolding) {
  EXPECT_EQ(resolved(col("l") + 1), "(l + 1L)");
  ExprPtr r = ok(col("l") + 1);
  EXPECT_EQ(r->args[1]->kind, ExprKind::Literal);
  EXPECT_EQ(r->args[1]->literal, Value::i64(1));
  ExprPtr f = ok(col("d") > 2);
  EXPECT_EQ(f->args[1]->literal, Value::f64(2.0));
  ExprPtr g = ok(col("f") > 1.5);  // f32 with an f64 literal: both f64
  EXPECT_EQ(g->args[0]->kind, ExprKind::Cast);
  EXPECT_EQ(*g->args[0]->type, Type::F64);
}

TEST(ResolveExpr, NegationOfLiteralsFoldsAndWraps) {
  ExprPtr r = ok(-lit(Value::i32(INT32_MIN)));
  EXPECT_EQ(r->kind, ExprKind::Literal);
  EXPECT_EQ(r->literal, Value::i32(INT32_MIN));
  EXPECT_EQ(ok(-lit(Value::i64(5)))->literal, Value::i64(-5));
  EXPECT_EQ(ok(-1.5)->literal, Value::f64(-1.5));
  EXPECT_EQ(type_of(-col("f")), Type::F32);
}

TEST(ResolveExpr, IntegerModulo) {
  EXPECT_EQ(type_of(col("l") % col("i")), Type::I64);
  fails(col("d") % 2, ErrorKind::TypeMismatch, "cannot apply '%' to f64 and i32");
  fails(col("i") % col("f"), ErrorKind::TypeMismatch, "cannot apply '%' to i32 and f32");
}

TEST(ResolveExpr, DateArithmetic) {
  EXPECT_EQ(type_of(col("dt") + 1), Type::Date);
  EXPECT_EQ(type_of(col("i") + col("dt")), Type::Date);
  EXPECT_EQ(type_of(col("dt") - col("i")), Type::Date);
  EXPECT_EQ(type_of(col("dt") - col("dt")), Type::I32);
  fails(col("dt") + col("l"), ErrorKind::TypeMismatch, "cannot apply '\\+' to date and i64");
  fails(col("dt") + col("dt"), ErrorKind::TypeMismatch, "cannot apply '\\+' to date and date");
  fails(col("i") - col("dt"), ErrorKind::TypeMismatch, "cannot apply '-' to i32 and date");
  fails(col("dt") * 2, ErrorKind::TypeMismatch, "cannot apply '\\*' to date and i32");
  fails(col("dt") + 1.0, ErrorKind::TypeMismatch, "cannot apply '\\+' to date and f64");
}

TEST(ResolveExpr, NonNumericArithmetic) {
  fails(col("s") + "x", ErrorKind::TypeMismatch, "cannot apply '\\+' to string and string");
  fails(col("b") + 1, ErrorKind::TypeMismatch, "cannot apply '\\+' to bool and i32");
  fails(-col("b"), ErrorKind::TypeMismatch, "cannot negate a value of type bool");
  fails(-col("dt"), ErrorKind::TypeMismatch, "cannot negate a value of type date");
}

TEST(ResolveExpr, ComparisonsNeedOneKind) {
  EXPECT_EQ(type_of(col("dt") < date_lit("1995-03-15")), Type::Bool);
  EXPECT_EQ(type_of(col("s") >= "abc"), Type::Bool);
  EXPECT_EQ(type_of(col("b") == true), Type::Bool);
  EXPECT_EQ(type_of(col("b") != col("b")), Type::Bool);
  for (auto op : {BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge})
    fails(make_binary(op, col("b"), false), ErrorKind::TypeMismatch, "bool and bool");
  fails(col("s") == 1, ErrorKind::TypeMismatch, "cannot apply '=' to string and i32");
  fails(col("dt") < col("i"), ErrorKind::TypeMismatch, "cannot apply '<' to date and i32");
  fails(col("b") == 1, ErrorKind::TypeMismatch, "cannot apply '=' to bool and i32");
  fails(col("dt") == "1994-01-01", ErrorKind::TypeMismatch, "date and string");
}

TEST(ResolveExpr, Logic) {
  EXPECT_EQ(type_of(col("b") && !(col("i") > 1) || col("b")), Type::Bool);
  fails(col("b") || col("i"), ErrorKind::TypeMismatch,
        "'or' needs bool operands, got bool and i32");
  fails(!col("s"), ErrorKind::TypeMismatch, "'not' needs a bool operand, got string");
}

TEST(ResolveExpr, BetweenPromotesLikeItsComparisons) {
  // Both comparisons promote to f64: one Between with casted operands.
  EXPECT_EQ(resolved(between(col("i"), col("d"), 3.0)), "(cast(i as f64) between d and 3.0)");
  // lo <= x in i64, x <= hi in f32: spelled out as the two comparisons.
  EXPECT_EQ(resolved(between(col("i"), col("l"), col("f"))),
            "((l <= cast(i as i64)) and (cast(i as f32) <= f))");
  EXPECT_EQ(type_of(between(col("dt"), date_lit("1994-01-01"), date_lit("1995-01-01"))),
            Type::Bool);
  EXPECT_EQ(type_of(between(col("s"), "a", "m")), Type::Bool);
  fails(between(col("s"), 1, 2), ErrorKind::TypeMismatch,
        "cannot compare string with bounds of type i32 and i32");
  fails(between(col("b"), false, true), ErrorKind::TypeMismatch, "cannot compare bool");
}

TEST(ResolveExpr, InListPromotesLikeEquality) {
  EXPECT_EQ(resolved(in_list(col("i"), {1, 2})), "(i in (1, 2))");
  EXPECT_EQ(resolved(in_list(col("i"), {lit(Value::i64(1)), lit(Value::i64(2))})),
            "(cast(i as i64) in (1L, 2L))");
  EXPECT_EQ(resolved(in_list(col("i"), {1, 2.5})), "((i = 1) or (cast(i as f64) = 2.5))");
  EXPECT_EQ(type_of(in_list(col("b"), {true})), Type::Bool);
  EXPECT_EQ(type_of(in_list(col("s"), {"a", "b"})), Type::Bool);
  fails(in_list(col("s"), {"a", 1}), ErrorKind::TypeMismatch,
        "cannot compare string with the i32 value 1");
  fails(in_list(col("i"), {}), ErrorKind::InvalidArgument, "'in' needs at least one value");
}

TEST(ResolveExpr, CastMatrix) {
  auto allowed = [](Type from, Type to) {
    if (from == to) return true;
    bool num_from = is_numeric(from) || from == Type::Bool,
         num_to = is_numeric(to) || to == Type::Bool;
    if (num_from && num_to) return true;
    return (from == Type::Date && is_integer(to)) || (is_integer(from) && to == Type::Date);
  };
  const char* attr_of[] = {"b", "i", "l", "f", "d", "dt", "s"};
  for (Type from : kAllTypes) {
    for (Type to : kAllTypes) {
      Expr e = cast(col(attr_of[static_cast<int>(from)]), to);
      SCOPED_TRACE(to_string(e));
      if (allowed(from, to)) {
        EXPECT_EQ(type_of(e), to);
      } else {
        fails(e, ErrorKind::TypeMismatch,
              fmt::format("cannot cast {} to {}", type_name(from), type_name(to)));
      }
    }
  }
  // An identity cast disappears; a widening cast of a literal is folded.
  EXPECT_EQ(ok(cast(col("i"), Type::I32))->kind, ExprKind::Attr);
  EXPECT_EQ(ok(cast(1, Type::F64))->literal, Value::f64(1.0));
  // Narrowing casts are left to run time (saturation rules).
  EXPECT_EQ(ok(cast(1.5, Type::I32))->kind, ExprKind::Cast);
}

TEST(ResolveExpr, CaseBranchesPromote) {
  EXPECT_EQ(resolved(case_when({{col("b"), col("i")}, {col("b"), col("l")}}, col("f"))),
            "case when b then cast(i as f64) when b then cast(l as f64) else cast(f as f64) end");
  EXPECT_EQ(type_of(case_when({{col("b"), "x"}}, col("s"))), Type::String);
  EXPECT_EQ(type_of(case_when({{col("b"), col("dt")}}, col("dt"))), Type::Date);
  fails(case_when({{col("b"), col("dt")}}, col("i")), ErrorKind::TypeMismatch,
        "case branches have incompatible types date and i32");
  fails(case_when({{col("i"), 1}}, 2), ErrorKind::TypeMismatch, "case condition i must be bool");
}

TEST(ResolveExpr, DatePartsAndStringPredicates) {
  EXPECT_EQ(type_of(year(col("dt"))), Type::I32);
  EXPECT_EQ(type_of(like(col("s"), "%BRASS")), Type::Bool);
  EXPECT_EQ(type_of(starts_with(col("s"), "PROMO")), Type::Bool);
  fails(year(col("s")), ErrorKind::TypeMismatch, "year\\(\\) needs a date, got string");
  fails(like(col("i"), "1%"), ErrorKind::TypeMismatch, "like needs a string, got i32");
  fails(starts_with(col("dt"), "1"), ErrorKind::TypeMismatch,
        "starts_with needs a string, got date");
}

TEST(ResolveExpr, DiagnosticLocations) {
  SourceLoc at{"q.ra", 9, 14};
  auto d = fails(make_binary(BinaryOp::Add, col("s"), 1, at), ErrorKind::TypeMismatch, "string");
  EXPECT_EQ(d[0].loc, at);
  // A child without a location is reported at its nearest located ancestor.
  auto inner =
      fails(make_binary(BinaryOp::And, col("b"), col("zz"), at), ErrorKind::UnknownAttribute, "zz");
  EXPECT_EQ(inner[0].loc, at);
  auto fallback = fails(col("zz"), ErrorKind::UnknownAttribute, "zz");
  EXPECT_EQ(fallback[0].loc, kNodeLoc);
}

TEST(ResolveExpr, EveryMistakeIsReported) {
  ops::Diagnostics diags;
  Expr e = col("x1") + col("x2") > col("s") + 1;
  EXPECT_FALSE(ops::resolve_expr(e.ptr(), kSchema, kNodeLoc, "test", diags));
  EXPECT_EQ(diags.size(), 3u);
}

TEST(ResolveExpr, MalformedTreesAreUserErrorsNotCrashes) {
  fails(Expr(), ErrorKind::InvalidArgument, "missing expression in test");
  ExprNode n;
  n.kind = ExprKind::Binary;
  n.args = {col("i").ptr()};
  fails(Expr(make_expr(n)), ErrorKind::InvalidArgument, "malformed binary expression");
  n.args = {col("i").ptr(), nullptr};
  fails(Expr(make_expr(n)), ErrorKind::InvalidArgument, "malformed binary expression");
}

TEST(ResolveExpr, ResolvingTwiceIsStable) {
  Expr e = between(col("i"), col("l"), col("f")) && col("dt") + 1 > col("dt");
  ExprPtr once = ok(e);
  ExprPtr twice = ok(Expr(once));
  EXPECT_EQ(to_string(once), to_string(twice));
}

}  // namespace
}  // namespace ranc
