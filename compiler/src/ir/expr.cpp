// Expression factories, DSL operators and the expression printer.
#include "ranc/ir/expr.h"

#include <fmt/format.h>

namespace ranc {

std::string_view expr_kind_name(ExprKind k) {
  switch (k) {
#define RANC_X(name, text) \
  case ExprKind::name:     \
    return text;
    RANC_EXPR_KINDS(RANC_X)
#undef RANC_X
  }
  return "?";
}

std::string_view unary_op_symbol(UnaryOp op) {
  return op == UnaryOp::Neg ? "-" : "not ";
}

std::string_view binary_op_symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "+";
    case BinaryOp::Sub:
      return "-";
    case BinaryOp::Mul:
      return "*";
    case BinaryOp::Div:
      return "/";
    case BinaryOp::Mod:
      return "%";
    case BinaryOp::Eq:
      return "=";
    case BinaryOp::Ne:
      return "<>";
    case BinaryOp::Lt:
      return "<";
    case BinaryOp::Le:
      return "<=";
    case BinaryOp::Gt:
      return ">";
    case BinaryOp::Ge:
      return ">=";
    case BinaryOp::And:
      return "and";
    case BinaryOp::Or:
      return "or";
  }
  return "?";
}

ExprPtr make_expr(ExprNode node) {
  return std::make_shared<const ExprNode>(std::move(node));
}

static ExprNode node_of(ExprKind k, SourceLoc loc) {
  ExprNode n;
  n.kind = k;
  n.loc = std::move(loc);
  return n;
}

Expr::Expr(int v) : Expr(lit(Value::i32(v))) {}
Expr::Expr(int64_t v) : Expr(lit(Value::i64(v))) {}
Expr::Expr(double v) : Expr(lit(Value::f64(v))) {}
Expr::Expr(float v) : Expr(lit(Value::f32(v))) {}
Expr::Expr(bool v) : Expr(lit(Value::boolean(v))) {}
Expr::Expr(const char* s) : Expr(lit(Value::string(s))) {}
Expr::Expr(std::string s) : Expr(lit(Value::string(std::move(s)))) {}
Expr::Expr(const Value& v) : Expr(lit(v)) {}

Expr col(std::string name, SourceLoc loc) {
  ExprNode n = node_of(ExprKind::Attr, std::move(loc));
  n.text = std::move(name);
  return Expr(make_expr(std::move(n)));
}

Expr lit(Value v, SourceLoc loc) {
  ExprNode n = node_of(ExprKind::Literal, std::move(loc));
  n.literal = std::move(v);
  return Expr(make_expr(std::move(n)));
}

Expr date_lit(std::string_view text) {
  auto d = parse_date(text);
  if (!d)
    throw UserError(Diagnostic{ErrorKind::InvalidArgument,
                               fmt::format("'{}' is not a valid date", text),
                               {},
                               "dates are written YYYY-MM-DD"});
  return lit(Value::date(*d));
}

static Expr with_args(ExprKind k, std::vector<Expr> args, SourceLoc loc) {
  ExprNode n = node_of(k, std::move(loc));
  for (auto& a : args) n.args.push_back(a.ptr());
  return Expr(make_expr(std::move(n)));
}

Expr make_unary(UnaryOp op, Expr x, SourceLoc loc) {
  ExprNode n = node_of(ExprKind::Unary, std::move(loc));
  n.unary_op = op;
  n.args = {x.ptr()};
  return Expr(make_expr(std::move(n)));
}

Expr make_binary(BinaryOp op, Expr a, Expr b, SourceLoc loc) {
  ExprNode n = node_of(ExprKind::Binary, std::move(loc));
  n.binary_op = op;
  n.args = {a.ptr(), b.ptr()};
  return Expr(make_expr(std::move(n)));
}

Expr between(Expr x, Expr lo, Expr hi, SourceLoc loc) {
  return with_args(ExprKind::Between, {std::move(x), std::move(lo), std::move(hi)}, std::move(loc));
}

Expr in_list(Expr x, std::vector<Expr> values, SourceLoc loc) {
  values.insert(values.begin(), std::move(x));
  return with_args(ExprKind::InList, std::move(values), std::move(loc));
}

Expr cast(Expr x, Type to, SourceLoc loc) {
  ExprNode n = node_of(ExprKind::Cast, std::move(loc));
  n.cast_type = to;
  n.args = {x.ptr()};
  return Expr(make_expr(std::move(n)));
}

Expr case_when(std::vector<std::pair<Expr, Expr>> branches, Expr otherwise, SourceLoc loc) {
  std::vector<Expr> args;
  for (auto& [c, v] : branches) {
    args.push_back(std::move(c));
    args.push_back(std::move(v));
  }
  args.push_back(std::move(otherwise));
  return with_args(ExprKind::Case, std::move(args), std::move(loc));
}

Expr year(Expr date, SourceLoc loc) {
  return with_args(ExprKind::Year, {std::move(date)}, std::move(loc));
}

Expr like(Expr s, std::string pattern, SourceLoc loc) {
  ExprNode n = node_of(ExprKind::Like, std::move(loc));
  n.text = std::move(pattern);
  n.args = {s.ptr()};
  return Expr(make_expr(std::move(n)));
}

Expr starts_with(Expr s, std::string prefix, SourceLoc loc) {
  ExprNode n = node_of(ExprKind::StartsWith, std::move(loc));
  n.text = std::move(prefix);
  n.args = {s.ptr()};
  return Expr(make_expr(std::move(n)));
}

Expr null_value(SourceLoc loc) {
  return Expr(make_expr(node_of(ExprKind::Null, std::move(loc))));
}

Expr is_null(Expr x, SourceLoc loc) {
  return with_args(ExprKind::IsNull, {std::move(x)}, std::move(loc));
}

Expr is_not_null(Expr x, SourceLoc loc) {
  return make_unary(UnaryOp::Not, is_null(std::move(x), loc), loc);
}

Expr coalesce(std::vector<Expr> values, SourceLoc loc) {
  return with_args(ExprKind::Coalesce, std::move(values), std::move(loc));
}

Expr substring(Expr s, Expr from, Expr length, SourceLoc loc) {
  return with_args(ExprKind::Substring, {std::move(s), std::move(from), std::move(length)},
                   std::move(loc));
}

Expr scalar_subquery(int32_t input_index, SourceLoc loc) {
  ExprNode n = node_of(ExprKind::Scalar, std::move(loc));
  n.subquery = input_index;
  return Expr(make_expr(std::move(n)));
}

Expr operator-(Expr a) {
  return make_unary(UnaryOp::Neg, std::move(a));
}
Expr operator!(Expr a) {
  return make_unary(UnaryOp::Not, std::move(a));
}
#define RANC_BINARY(sym, op)                                      \
  Expr operator sym(Expr a, Expr b) {                             \
    return make_binary(BinaryOp::op, std::move(a), std::move(b)); \
  }
RANC_BINARY(+, Add)
RANC_BINARY(-, Sub)
RANC_BINARY(*, Mul)
RANC_BINARY(/, Div)
RANC_BINARY(%, Mod)
RANC_BINARY(==, Eq)
RANC_BINARY(!=, Ne)
RANC_BINARY(<, Lt)
RANC_BINARY(<=, Le)
RANC_BINARY(>, Gt)
RANC_BINARY(>=, Ge)
RANC_BINARY(&&, And)
RANC_BINARY(||, Or)
#undef RANC_BINARY

bool divides_by_nonzero_literal(const ExprNode& e) {
  if (e.kind != ExprKind::Binary || (e.binary_op != BinaryOp::Div && e.binary_op != BinaryOp::Mod))
    return false;
  const ExprPtr& d = e.args.at(1);
  if (d->kind != ExprKind::Literal || d->literal.is_null()) return false;
  switch (d->literal.type()) {
    case Type::I32:
    case Type::Date:
      return d->literal.as_i32() != 0;
    case Type::I64:
      return d->literal.as_i64() != 0;
    default:
      return false;
  }
}

bool can_fail(const ExprPtr& e) {
  if (!e) return false;
  if (e->kind == ExprKind::Binary &&
      (e->binary_op == BinaryOp::Div || e->binary_op == BinaryOp::Mod) && e->type &&
      !is_floating(*e->type) && !divides_by_nonzero_literal(*e))
    return true;
  for (const auto& a : e->args)
    if (can_fail(a)) return true;
  return false;
}

std::string to_string(const ExprPtr& e) {
  if (!e) return "<none>";
  const ExprNode& n = *e;
  auto arg = [&](size_t i) { return to_string(n.args.at(i)); };
  switch (n.kind) {
    case ExprKind::Attr:
      return n.text;
    case ExprKind::Literal:
      return n.literal.literal_str();
    case ExprKind::Unary:
      return fmt::format("({}{})", unary_op_symbol(n.unary_op), arg(0));
    case ExprKind::Binary:
      return fmt::format("({} {} {})", arg(0), binary_op_symbol(n.binary_op), arg(1));
    case ExprKind::Between:
      return fmt::format("({} between {} and {})", arg(0), arg(1), arg(2));
    case ExprKind::InList: {
      std::string s = fmt::format("({} in (", arg(0));
      for (size_t i = 1; i < n.args.size(); ++i) s += (i > 1 ? ", " : "") + arg(i);
      return s + "))";
    }
    case ExprKind::Cast:
      return fmt::format("cast({} as {})", arg(0), type_name(n.cast_type));
    case ExprKind::Case: {
      std::string s = "case";
      for (size_t i = 0; i + 1 < n.args.size(); i += 2)
        s += fmt::format(" when {} then {}", arg(i), arg(i + 1));
      return s + fmt::format(" else {} end", to_string(n.args.back()));
    }
    case ExprKind::Year:
      return fmt::format("year({})", arg(0));
    case ExprKind::Like:
      return fmt::format("({} like {})", arg(0), Value::string(n.text).literal_str());
    case ExprKind::StartsWith:
      return fmt::format("starts_with({}, {})", arg(0), Value::string(n.text).literal_str());
    case ExprKind::IsNull:
      return fmt::format("({} is null)", arg(0));
    case ExprKind::Coalesce: {
      std::string s = "coalesce(";
      for (size_t i = 0; i < n.args.size(); ++i) s += (i ? ", " : "") + arg(i);
      return s + ")";
    }
    case ExprKind::Null:
      return "null";
    case ExprKind::Substring:
      return fmt::format("substring({}, {}, {})", arg(0), arg(1), arg(2));
    case ExprKind::Scalar:
      return fmt::format("scalar(input {})", n.subquery);
  }
  return "?";
}

}  // namespace ranc
