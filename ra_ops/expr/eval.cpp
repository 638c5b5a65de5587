// Reference evaluation of resolved expressions on one tuple (the oracle), following
// the rules in ranc/ir/program.h. The checker has made every numeric promotion an
// explicit Cast, so the operands of a Binary have one type, except date +/- i32 and
// date - date.
//
// NULLs follow program.h (NULLS): an operand NULL makes the result NULL except in and/or
// (three-valued), case (a NULL condition is not true), is null and coalesce.
//
// Decisions program.h leaves open, taken here:
// - and/or short-circuit and case evaluates only the branch it picks, so
//   `b <> 0 and a / b > 1` and `case when b <> 0 then a / b else 0 end` never fail;
//   between evaluates x once; in-list compares left to right and stops at the
//   first match.
// - <> is IEEE compareQuietNotEqual: NaN <> x is true (every other comparison with
//   a NaN is false), -0.0 = 0.0.
// - % is typed on integers only; should the checker allow floats, it is fmod.
// - Integer narrowing casts (i64 -> i32, i64 -> date) keep the low 32 bits
//   (two's complement wrap). A float cast to bool is true unless it is +-0.0 (NaN
//   is true).
// - like matches '_' against one UTF-8 character (ranc::like_match); starts_with
//   works on bytes.
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <limits>

#include "ranc/data/like.h"
#include "ranc/ra_ops/ra_ops.h"

namespace ranc::ops {
namespace {

[[noreturn]] void bad(const ExprNode& e, std::string_view what) {
  throw InternalError(
      fmt::format("eval_expr: {} in a {} expression", what, expr_kind_name(e.kind)));
}

template <typename S, typename U>
S wrap_add(S a, S b) {
  return static_cast<S>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename S, typename U>
S wrap_sub(S a, S b) {
  return static_cast<S>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename S, typename U>
S wrap_mul(S a, S b) {
  return static_cast<S>(static_cast<U>(a) * static_cast<U>(b));
}

std::string expr_text(const ExprNode& e) {
  // A non-owning pointer to print the node with the shared printer.
  return to_string(ExprPtr(ExprPtr(), &e));
}

[[noreturn]] void division_by_zero(const ExprNode& e) {
  throw UserError(Diagnostic{ErrorKind::Execution,
                             fmt::format("integer division by zero in operator '{}' ({})",
                                         binary_op_symbol(e.binary_op), expr_text(e)),
                             e.loc,
                             "guard the divisor, e.g. case when d <> 0 then x / d else 0 end"});
}

template <typename S, typename U>
S int_arith(const ExprNode& e, S a, S b) {
  switch (e.binary_op) {
    case BinaryOp::Add:
      return wrap_add<S, U>(a, b);
    case BinaryOp::Sub:
      return wrap_sub<S, U>(a, b);
    case BinaryOp::Mul:
      return wrap_mul<S, U>(a, b);
    case BinaryOp::Div:
      if (b == 0) division_by_zero(e);
      if (a == std::numeric_limits<S>::min() && b == -1) return a;  // wraps to MIN
      return a / b;
    case BinaryOp::Mod:
      if (b == 0) division_by_zero(e);
      if (b == -1) return 0;  // MIN % -1 would trap in hardware
      return a % b;
    default:
      bad(e, "non-arithmetic operator");
  }
}

template <typename F>
F float_arith(const ExprNode& e, F a, F b) {
  switch (e.binary_op) {
    case BinaryOp::Add:
      return a + b;
    case BinaryOp::Sub:
      return a - b;
    case BinaryOp::Mul:
      return a * b;
    case BinaryOp::Div:
      return a / b;
    case BinaryOp::Mod:
      return std::fmod(a, b);
    default:
      bad(e, "non-arithmetic operator");
  }
}

Value arith(const ExprNode& e, const Value& a, const Value& b) {
  Type ta = a.type(), tb = b.type();
  if (ta == Type::Date || tb == Type::Date) {
    // date + i32, i32 + date, date - i32 -> date; date - date -> i32.
    if (ta == Type::Date && tb == Type::Date && e.binary_op == BinaryOp::Sub)
      return Value::i32(wrap_sub<int32_t, uint32_t>(a.as_i32(), b.as_i32()));
    if (ta == Type::Date && tb == Type::I32 && e.binary_op == BinaryOp::Add)
      return Value::date(wrap_add<int32_t, uint32_t>(a.as_i32(), b.as_i32()));
    if (ta == Type::I32 && tb == Type::Date && e.binary_op == BinaryOp::Add)
      return Value::date(wrap_add<int32_t, uint32_t>(a.as_i32(), b.as_i32()));
    if (ta == Type::Date && tb == Type::I32 && e.binary_op == BinaryOp::Sub)
      return Value::date(wrap_sub<int32_t, uint32_t>(a.as_i32(), b.as_i32()));
    bad(e, "unsupported date arithmetic");
  }
  if (ta != tb) bad(e, "operands of different types");
  switch (ta) {
    case Type::I32:
      return Value::i32(int_arith<int32_t, uint32_t>(e, a.as_i32(), b.as_i32()));
    case Type::I64:
      return Value::i64(int_arith<int64_t, uint64_t>(e, a.as_i64(), b.as_i64()));
    case Type::F32:
      return Value::f32(float_arith(e, a.as_f32(), b.as_f32()));
    case Type::F64:
      return Value::f64(float_arith(e, a.as_f64(), b.as_f64()));
    default:
      bad(e, "arithmetic on a non-numeric type");
  }
}

// IEEE comparison for predicates: floats compare as numbers (NaN unordered,
// -0.0 == 0.0); everything else by the total order.
std::partial_ordering ieee_compare(const ExprNode& e, const Value& a, const Value& b) {
  if (a.type() != b.type()) bad(e, "comparison of different types");
  switch (a.type()) {
    case Type::F32:
      return a.as_f32() <=> b.as_f32();
    case Type::F64:
      return a.as_f64() <=> b.as_f64();
    default:
      return total_compare(a, b);
  }
}

bool compare(const ExprNode& e, BinaryOp op, const Value& a, const Value& b) {
  std::partial_ordering c = ieee_compare(e, a, b);
  switch (op) {
    case BinaryOp::Eq:
      return c == 0;
    case BinaryOp::Ne:
      return c != 0;  // true when unordered (NaN)
    case BinaryOp::Lt:
      return c < 0;
    case BinaryOp::Le:
      return c <= 0;
    case BinaryOp::Gt:
      return c > 0;
    case BinaryOp::Ge:
      return c >= 0;
    default:
      bad(e, "non-comparison operator");
  }
}

// Float to integer: truncate toward zero, saturate, NaN -> 0.
template <typename I>
I float_to_int(double x) {
  if (std::isnan(x)) return 0;
  double t = std::trunc(x);
  // -2^(bits-1) and 2^(bits-1) are exact in double.
  const double lo = static_cast<double>(std::numeric_limits<I>::min());
  const double hi = -lo;
  if (t >= hi) return std::numeric_limits<I>::max();
  if (t < lo) return std::numeric_limits<I>::min();
  return static_cast<I>(t);
}

Value cast_value(const ExprNode& e, const Value& v, Type to) {
  Type from = v.type();
  if (from == to) return v;
  if (from == Type::String || to == Type::String) bad(e, "cast of a string");
  if (to == Type::Bool) {
    if (is_floating(from)) return Value::boolean(v.to_double() != 0.0);
    if (is_integer(from)) return Value::boolean(v.to_int64() != 0);
    bad(e, "unsupported cast to bool");
  }
  if (to == Type::Date) {
    if (is_integer(from)) return Value::date(static_cast<int32_t>(v.to_int64()));
    bad(e, "unsupported cast to date");
  }
  if (from == Type::Date && !is_integer(to)) bad(e, "unsupported cast from date");
  // `to` is numeric; `from` is bool, date or numeric.
  if (is_floating(from)) {
    double x = v.to_double();
    switch (to) {
      case Type::I32:
        return Value::i32(float_to_int<int32_t>(x));
      case Type::I64:
        return Value::i64(float_to_int<int64_t>(x));
      case Type::F32:
        return Value::f32(static_cast<float>(x));
      case Type::F64:
        return Value::f64(x);
      default:
        break;
    }
  } else {
    int64_t x = v.to_int64();
    switch (to) {
      case Type::I32:
        return Value::i32(static_cast<int32_t>(x));  // wraps (C++20)
      case Type::I64:
        return Value::i64(x);
      case Type::F32:
        return Value::f32(static_cast<float>(x));  // one rounding
      case Type::F64:
        return Value::f64(static_cast<double>(x));
      default:
        break;
    }
  }
  bad(e, "unsupported cast");
}

}  // namespace

Value eval_expr(const ExprNode& e, const std::vector<Value>& row) {
  if (!e.resolved()) bad(e, "unresolved node (run ranc::check first)");
  const auto arg = [&](size_t i) -> Value {
    if (i >= e.args.size() || !e.args[i]) bad(e, "missing argument");
    return eval_expr(*e.args[i], row);
  };
  const Type t = *e.type;
  const Value null = Value::null(t);
  // Three-valued truth: true, false or NULL (program.h, NULLS).
  const auto is_true = [](const Value& v) { return !v.is_null() && v.as_bool(); };
  const auto is_false = [](const Value& v) { return !v.is_null() && !v.as_bool(); };
  switch (e.kind) {
    case ExprKind::Attr:
      if (e.attr_index < 0 || static_cast<size_t>(e.attr_index) >= row.size())
        bad(e, "attribute index out of range");
      return row[static_cast<size_t>(e.attr_index)];
    case ExprKind::Literal:
      if (e.literal.is_null()) return null;
      if (e.literal.type() != t) return cast_value(e, e.literal, t);
      return e.literal;
    case ExprKind::Unary: {
      Value x = arg(0);
      if (x.is_null()) return null;
      if (e.unary_op == UnaryOp::Not) return Value::boolean(!x.as_bool());
      switch (x.type()) {
        case Type::I32:
          return Value::i32(wrap_sub<int32_t, uint32_t>(0, x.as_i32()));
        case Type::I64:
          return Value::i64(wrap_sub<int64_t, uint64_t>(0, x.as_i64()));
        case Type::F32:
          return Value::f32(-x.as_f32());
        case Type::F64:
          return Value::f64(-x.as_f64());
        default:
          bad(e, "negation of a non-numeric type");
      }
    }
    case ExprKind::Binary: {
      if (e.binary_op == BinaryOp::And || e.binary_op == BinaryOp::Or) {
        // `and` stops at a false left operand, `or` at a true one.
        const bool is_and = e.binary_op == BinaryOp::And;
        Value a = arg(0);
        if (is_and ? is_false(a) : is_true(a)) return a;
        Value b = arg(1);
        if (is_and ? is_false(b) : is_true(b)) return b;
        if (a.is_null() || b.is_null()) return null;
        return Value::boolean(is_and);
      }
      Value a = arg(0);
      Value b = arg(1);
      if (a.is_null() || b.is_null()) return null;
      if (is_comparison(e.binary_op)) return Value::boolean(compare(e, e.binary_op, a, b));
      return arith(e, a, b);
    }
    case ExprKind::Between: {
      Value x = arg(0), lo = arg(1), hi = arg(2);
      // lo <= x and x <= hi, in three-valued logic.
      Value c1 = x.is_null() || lo.is_null() ? Value::null(Type::Bool)
                                             : Value::boolean(compare(e, BinaryOp::Le, lo, x));
      if (is_false(c1)) return c1;
      Value c2 = x.is_null() || hi.is_null() ? Value::null(Type::Bool)
                                             : Value::boolean(compare(e, BinaryOp::Le, x, hi));
      if (is_false(c2)) return c2;
      if (c1.is_null() || c2.is_null()) return null;
      return Value::boolean(true);
    }
    case ExprKind::InList: {
      Value x = arg(0);
      if (x.is_null()) return null;
      bool saw_null = false;
      for (size_t i = 1; i < e.args.size(); ++i) {
        Value v = arg(i);
        if (v.is_null())
          saw_null = true;
        else if (compare(e, BinaryOp::Eq, x, v))
          return Value::boolean(true);
      }
      return saw_null ? null : Value::boolean(false);
    }
    case ExprKind::Cast: {
      Value x = arg(0);
      return x.is_null() ? null : cast_value(e, x, e.cast_type);
    }
    case ExprKind::Case: {
      if (e.args.size() % 2 != 1) bad(e, "case without an else value");
      for (size_t i = 0; i + 1 < e.args.size(); i += 2)
        if (is_true(arg(i))) return arg(i + 1);
      return arg(e.args.size() - 1);
    }
    case ExprKind::Year: {
      Value x = arg(0);
      if (x.is_null()) return null;
      return Value::i32(static_cast<int32_t>(civil_from_days(x.as_i32()).year));
    }
    case ExprKind::Like: {
      Value x = arg(0);
      return x.is_null() ? null : Value::boolean(like_match(x.as_string(), e.text));
    }
    case ExprKind::StartsWith: {
      Value x = arg(0);
      return x.is_null() ? null : Value::boolean(x.as_string().starts_with(e.text));
    }
    case ExprKind::IsNull:
      return Value::boolean(arg(0).is_null());
    case ExprKind::Coalesce:
      for (size_t i = 0; i < e.args.size(); ++i)
        if (Value v = arg(i); !v.is_null()) return v;
      return null;
    case ExprKind::Substring: {
      Value x = arg(0);
      if (x.is_null()) return null;
      return Value::string(utf8_substring(x.as_string(), arg(1).as_i64(), arg(2).as_i64()));
    }
    case ExprKind::Null:
      bad(e, "an untyped NULL");
    case ExprKind::Scalar:
      bad(e, "a scalar subquery (eval_node substitutes its value)");
  }
  bad(e, "unknown kind");
}

}  // namespace ranc::ops
