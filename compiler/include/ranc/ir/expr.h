// Scalar expressions of the IR: immutable trees shared by pointer.
//
// An expression is built unresolved (attributes by name) by a front end and
// resolved by the checker, which returns a new tree where every node has a type and
// every attribute reference an index into the input schema. See ranc/ir/program.h
// for the typing and evaluation rules.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ranc/data/error.h"
#include "ranc/data/type.h"
#include "ranc/data/value.h"

namespace ranc {

// The expression node kinds, declared once (STYLE.md habit 7).
#define RANC_EXPR_KINDS(X)                                           \
  X(Attr, "attr")              /* attribute reference by name */     \
  X(Literal, "literal")        /* a typed constant */                \
  X(Unary, "unary")            /* -x, not x */                       \
  X(Binary, "binary")          /* arithmetic, comparison, and/or */  \
  X(Between, "between")        /* args: x, lo, hi (inclusive) */     \
  X(InList, "in")              /* args: x, v1, v2, ... */            \
  X(Cast, "cast")              /* args: x; target in cast_type */    \
  X(Case, "case")              /* args: c1, v1, c2, v2, ..., else */ \
  X(Year, "year")              /* args: date */                      \
  X(Like, "like")              /* args: string; pattern in text */   \
  X(StartsWith, "starts_with") /* args: string; prefix in text */    \
  X(IsNull, "is null")         /* args: x */                         \
  X(Coalesce, "coalesce")      /* args: x1, x2, ... */               \
  X(Null, "null")              /* the NULL keyword, before checking */ \
  X(Substring, "substring")    /* args: string, from, length */      \
  X(Scalar, "scalar")          /* a scalar subquery: see subquery */

enum class ExprKind : uint8_t {
#define RANC_X(name, text) name,
  RANC_EXPR_KINDS(RANC_X)
#undef RANC_X
};
std::string_view expr_kind_name(ExprKind k);

enum class UnaryOp : uint8_t { Neg, Not };
enum class BinaryOp : uint8_t { Add, Sub, Mul, Div, Mod, Eq, Ne, Lt, Le, Gt, Ge, And, Or };
std::string_view unary_op_symbol(UnaryOp op);
std::string_view binary_op_symbol(BinaryOp op);
inline bool is_arithmetic(BinaryOp op) {
  return op <= BinaryOp::Mod;
}
inline bool is_comparison(BinaryOp op) {
  return op >= BinaryOp::Eq && op <= BinaryOp::Ge;
}
inline bool is_logical(BinaryOp op) {
  return op == BinaryOp::And || op == BinaryOp::Or;
}

class ExprNode;
using ExprPtr = std::shared_ptr<const ExprNode>;

class ExprNode {
 public:
  ExprKind kind;
  SourceLoc loc;         // where it was written, when known
  std::string text;      // Attr: attribute name; Like/StartsWith: pattern/prefix
  Value literal;         // Literal
  UnaryOp unary_op{};    // Unary
  BinaryOp binary_op{};  // Binary
  Type cast_type{};      // Cast
  std::vector<ExprPtr> args;
  // Scalar: the index, in the inputs of the node holding the expression, of the relation
  // whose only attribute's value this is (front ends append such inputs after the
  // operator's own).
  int32_t subquery = -1;
  // Scalar, as the C++ DSL builds it: the node of the relation, before the DSL makes it an
  // input of the node holding the expression (then subquery is set and this is -1).
  int32_t subquery_node = -1;
  // Set by the checker:
  std::optional<Type> type;  // the result type
  bool nullable = false;     // whether the value can be NULL (program.h, NULLS)
  int32_t attr_index = -1;   // Attr: index into the input schema

  bool resolved() const { return type.has_value(); }
};

// A value-semantic handle used by front ends and the C++ DSL.
class Expr {
 public:
  Expr() = default;
  explicit Expr(ExprPtr p) : p_(std::move(p)) {}
  // Implicit conversions from literals make DSL code read naturally: col("a") < 5.
  Expr(int v);
  Expr(int64_t v);
  Expr(double v);
  Expr(float v);
  Expr(bool v);
  Expr(const char* s);
  Expr(std::string s);
  Expr(const Value& v);

  const ExprPtr& ptr() const { return p_; }
  const ExprNode* operator->() const { return p_.get(); }
  const ExprNode& operator*() const { return *p_; }
  // Whether an expression is present (an optional residual, count()'s argument).
  // There is deliberately no conversion to bool: with the DSL's operator|| and &&,
  // `flag || expr` would silently build an expression.
  bool valid() const { return p_ != nullptr; }

 private:
  ExprPtr p_;
};

// Factories. Each takes an optional source location (the .ra parser passes one).
Expr col(std::string name, SourceLoc loc = {});
Expr lit(Value v, SourceLoc loc = {});
Expr date_lit(std::string_view yyyy_mm_dd);  // throws UserError on a malformed date
Expr make_unary(UnaryOp op, Expr x, SourceLoc loc = {});
Expr make_binary(BinaryOp op, Expr a, Expr b, SourceLoc loc = {});
Expr between(Expr x, Expr lo, Expr hi, SourceLoc loc = {});
Expr in_list(Expr x, std::vector<Expr> values, SourceLoc loc = {});
Expr cast(Expr x, Type to, SourceLoc loc = {});
// case when c1 then v1 when c2 then v2 ... else otherwise end
Expr case_when(std::vector<std::pair<Expr, Expr>> branches, Expr otherwise, SourceLoc loc = {});
Expr year(Expr date, SourceLoc loc = {});
Expr like(Expr s, std::string pattern, SourceLoc loc = {});
Expr starts_with(Expr s, std::string prefix, SourceLoc loc = {});
// The NULL keyword: its type comes from where it stands (a case branch, coalesce, the
// other operand of a comparison or arithmetic, an in-list); alone, cast it:
// cast(null_value() as i32).
Expr null_value(SourceLoc loc = {});
Expr is_null(Expr x, SourceLoc loc = {});
Expr is_not_null(Expr x, SourceLoc loc = {});  // not (x is null)
Expr coalesce(std::vector<Expr> values, SourceLoc loc = {});
// substring(s, from, length): `from` counts from 1; both are integer constants.
Expr substring(Expr s, Expr from, Expr length, SourceLoc loc = {});
// A scalar subquery: the value of the only attribute of the node's input `input_index`
// (which has at most one tuple at run time; NULL when it has none). The C++ DSL's
// ranc::scalar(Rel) builds it (dsl.h).
Expr scalar_subquery(int32_t input_index, SourceLoc loc = {});

Expr operator-(Expr a);
Expr operator!(Expr a);
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);

// The expression as text in .ra syntax (fully parenthesised where needed).
std::string to_string(const ExprPtr& e);
inline std::string to_string(const Expr& e) {
  return to_string(e.ptr());
}

// Can evaluating `e` on a row set the error flag: an integer division or modulo whose
// divisor is not a non-zero literal? Code generation evaluates what cannot fail eagerly
// (both sides of and/or, a fused select's predicate next to the stages before it), so
// that a row's loads are independent; what can fail keeps SQL's guard order.
bool can_fail(const ExprPtr& e);
// Is `e` an integer division or modulo by a non-zero literal (which never fails)?
bool divides_by_nonzero_literal(const ExprNode& e);

// Builds a node with the given fields; used by the checker to rebuild resolved trees.
ExprPtr make_expr(ExprNode node);

// `e` with every node for which replace(node) returns an expression replaced by it (its
// arguments are not visited); the others are rebuilt only where an argument changed, so
// unchanged subtrees stay shared. replace returns null to keep a node.
template <class F>
ExprPtr rewrite_expr(const ExprPtr& e, const F& replace) {
  if (!e) return e;
  if (ExprPtr r = replace(*e)) return r;
  bool changed = false;
  std::vector<ExprPtr> args;
  args.reserve(e->args.size());
  for (const auto& a : e->args) {
    args.push_back(rewrite_expr(a, replace));
    changed = changed || args.back() != a;
  }
  if (!changed) return e;
  ExprNode n = *e;
  n.args = std::move(args);
  return make_expr(std::move(n));
}

}  // namespace ranc
