// C++ code for resolved expressions (see ranc/codegen/emit_expr.h).
#include "ranc/codegen/emit_expr.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace ranc::codegen {

std::string cpp_literal(const Value& v) {
  switch (v.type()) {
    case Type::Bool:
      return v.as_bool() ? "true" : "false";
    case Type::I32:
    case Type::Date: {
      int32_t x = v.as_i32();
      if (x == std::numeric_limits<int32_t>::min()) return "(-2147483647 - 1)";
      return x < 0 ? fmt::format("({})", x) : fmt::format("{}", x);
    }
    case Type::I64: {
      int64_t x = v.as_i64();
      if (x == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807LL - 1)";
      return x < 0 ? fmt::format("({}LL)", x) : fmt::format("{}LL", x);
    }
    case Type::F64: {
      double d = v.as_f64();
      if (!std::isfinite(d))
        return fmt::format("__longlong_as_double((long long)0x{:x}ull)",
                           std::bit_cast<uint64_t>(d));
      return fmt::format("({:a})", d);
    }
    case Type::F32: {
      float f = v.as_f32();
      if (!std::isfinite(f))
        return fmt::format("__int_as_float((int)0x{:x}u)", std::bit_cast<uint32_t>(f));
      return fmt::format("({:a}f)", f);
    }
    case Type::String:
      break;
  }
  throw InternalError("cpp_literal: string literal");
}

namespace {

using Kind = rt::DictParam::Kind;

class Emitter {
 public:
  Emitter(KernelParams& params, const AttrAccess& attr, const ExprHooks& hooks)
      : params_(params), attr_(attr), hooks_(hooks) {}

  std::string emit(const ExprNode& e) {
    internal_check(e.resolved(), "codegen: unresolved expression");
    const Type t = *e.type;
    switch (e.kind) {
      case ExprKind::Attr:
        return attr_(e.attr_index);
      case ExprKind::Literal:
        internal_check(!e.literal.is_null(), "codegen: a NULL literal (lower_nulls lowers it)");
        // A string value: its code, which the run's dictionary is made to hold.
        if (t == Type::String)
          return fmt::format("((int){})", dict(Kind::ValueCode, e.literal.as_string()));
        return cpp_literal(e.literal);
      case ExprKind::Unary: {
        std::string x = emit(*e.args[0]);
        if (e.unary_op == UnaryOp::Not) return fmt::format("(!{})", x);
        if (is_integer(t) || t == Type::Date)
          return fmt::format("ranc::tpl::wrap_neg<{}>({})", value_ctype(t), x);
        return fmt::format("(-{})", x);
      }
      case ExprKind::Binary:
        return binary(e);
      case ExprKind::Between: {
        const ExprNode& x = *e.args[0];
        return fmt::format("({} {} {})", compare(BinaryOp::Le, *e.args[1], x),
                           can_fail(e.args[2]) ? "&&" : "&", compare(BinaryOp::Le, x, *e.args[2]));
      }
      case ExprKind::InList: {
        std::string s;
        for (size_t i = 1; i < e.args.size(); ++i)
          s += fmt::format("{}{}", i > 1 ? (can_fail(e.args[i]) ? " || " : " | ") : "",
                           compare(BinaryOp::Eq, *e.args[0], *e.args[i]));
        return fmt::format("({})", s.empty() ? "false" : s);
      }
      case ExprKind::Cast:
        return cast(e);
      case ExprKind::Case: {
        std::string s;
        size_t pairs = (e.args.size() - 1) / 2;
        for (size_t i = 0; i < pairs; ++i)
          s += fmt::format("({} ? ({})({}) : ", emit(*e.args[2 * i]), value_ctype(t),
                           emit(*e.args[2 * i + 1]));
        s += fmt::format("({})({})", value_ctype(t), emit(*e.args.back()));
        s += std::string(pairs, ')');
        return fmt::format("({})", s);
      }
      case ExprKind::Year:
        return fmt::format("ranc_year({})", emit(*e.args[0]));
      case ExprKind::Like: {
        std::string m = params_.buffer(hooks_.like_mask(e.text), "unsigned char");
        return fmt::format("ranc_in_mask({}, {})", m, emit(*e.args[0]));
      }
      case ExprKind::StartsWith: {
        std::string lo = dict(Kind::LowerBound, e.text), hi = dict(Kind::PrefixEnd, e.text);
        return fmt::format("ranc_in_range({}, {}, {})", emit(*e.args[0]), lo, hi);
      }
      case ExprKind::Substring: {
        // Through the dictionary: the map holds each code's substring's code.
        std::string m = params_.buffer(
            hooks_.substring_map(e.args[1]->literal.as_i64(), e.args[2]->literal.as_i64()), "int");
        return fmt::format("{}[{}]", m, emit(*e.args[0]));
      }
      case ExprKind::IsNull:
        internal_check(!e.args[0]->nullable, "codegen: a nullable expression");
        return "false";
      case ExprKind::Coalesce:
        internal_check(!e.args[0]->nullable, "codegen: a nullable expression");
        return emit(*e.args[0]);
      case ExprKind::Null:
      case ExprKind::Scalar:
        break;
    }
    throw InternalError("codegen: unknown expression kind");
  }

 private:
  std::string dict(Kind k, const std::string& text) {
    return params_.slot(hooks_.dict_slot(k, text));
  }

  std::string err() {
    params_.uses_error_flag = true;
    return params_.buffer(hooks_.error_flag(), "int", false);
  }

  std::string binary(const ExprNode& e) {
    const Type t = *e.type;
    const BinaryOp op = e.binary_op;
    if (is_comparison(op)) return compare(op, *e.args[0], *e.args[1]);
    // Both sides of and/or are evaluated when the right one cannot fail: no branch, and
    // the loads of both are in flight at once (bool & bool is exact).
    if (is_logical(op)) {
      const bool guard = can_fail(e.args[1]);
      return fmt::format("({} {} {})", emit(*e.args[0]),
                         op == BinaryOp::And ? (guard ? "&&" : "&") : (guard ? "||" : "|"),
                         emit(*e.args[1]));
    }
    std::string a = emit(*e.args[0]), b = emit(*e.args[1]);
    if (is_floating(t)) {
      auto ct = value_ctype(t);
      switch (op) {
        case BinaryOp::Add:
          return fmt::format("({} + {})", a, b);
        case BinaryOp::Sub:
          return fmt::format("({} - {})", a, b);
        case BinaryOp::Mul:
          return fmt::format("({} * {})", a, b);
        case BinaryOp::Div:
          return fmt::format("({} / {})", a, b);
        case BinaryOp::Mod:
          return fmt::format("ranc::tpl::safe_mod<{}>({}, {}, nullptr)", ct, a, b);
        default:
          break;
      }
    }
    // Integer-like results: i32, i64, date (date +- i32, date - date -> i32).
    auto ct = value_ctype(t);
    switch (op) {
      case BinaryOp::Add:
        return fmt::format("ranc::tpl::wrap_add<{0}>(({0}){1}, ({0}){2})", ct, a, b);
      case BinaryOp::Sub:
        return fmt::format("ranc::tpl::wrap_sub<{0}>(({0}){1}, ({0}){2})", ct, a, b);
      case BinaryOp::Mul:
        return fmt::format("ranc::tpl::wrap_mul<{0}>(({0}){1}, ({0}){2})", ct, a, b);
      // A non-zero literal divisor never sets the flag (and needs none).
      case BinaryOp::Div:
        return fmt::format("ranc::tpl::safe_div<{0}>(({0}){1}, ({0}){2}, {3})", ct, a, b,
                           divides_by_nonzero_literal(e) ? "nullptr" : err());
      case BinaryOp::Mod:
        return fmt::format("ranc::tpl::safe_mod<{0}>(({0}){1}, ({0}){2}, {3})", ct, a, b,
                           divides_by_nonzero_literal(e) ? "nullptr" : err());
      default:
        break;
    }
    throw InternalError("codegen: bad binary operator");
  }

  static const char* symbol(BinaryOp op) {
    switch (op) {
      case BinaryOp::Eq:
        return "==";
      case BinaryOp::Ne:
        return "!=";
      case BinaryOp::Lt:
        return "<";
      case BinaryOp::Le:
        return "<=";
      case BinaryOp::Gt:
        return ">";
      case BinaryOp::Ge:
        return ">=";
      default:
        throw InternalError("codegen: not a comparison");
    }
  }
  static BinaryOp flip(BinaryOp op) {
    switch (op) {
      case BinaryOp::Lt:
        return BinaryOp::Gt;
      case BinaryOp::Le:
        return BinaryOp::Ge;
      case BinaryOp::Gt:
        return BinaryOp::Lt;
      case BinaryOp::Ge:
        return BinaryOp::Le;
      default:
        return op;
    }
  }
  static bool is_string_literal(const ExprNode& e) {
    return e.kind == ExprKind::Literal && e.type == Type::String;
  }

  // a op b, IEEE for floats; strings by code, a literal side through the dictionary.
  std::string compare(BinaryOp op, const ExprNode& a, const ExprNode& b) {
    if (a.type == Type::String && (is_string_literal(a) || is_string_literal(b))) {
      if (is_string_literal(a) && is_string_literal(b)) {
        int c = a.literal.as_string().compare(b.literal.as_string());
        bool r = op == BinaryOp::Eq   ? c == 0
                 : op == BinaryOp::Ne ? c != 0
                 : op == BinaryOp::Lt ? c < 0
                 : op == BinaryOp::Le ? c <= 0
                 : op == BinaryOp::Gt ? c > 0
                                      : c >= 0;
        return r ? "true" : "false";
      }
      if (is_string_literal(a)) return compare(flip(op), b, a);
      std::string x = emit(a);
      const std::string& text = b.literal.as_string();
      switch (op) {
        case BinaryOp::Eq:
          return fmt::format("({} == {})", x, dict(Kind::EqCode, text));
        case BinaryOp::Ne:
          return fmt::format("({} != {})", x, dict(Kind::EqCode, text));
        case BinaryOp::Lt:
          return fmt::format("({} < {})", x, dict(Kind::LowerBound, text));
        case BinaryOp::Le:
          return fmt::format("({} < {})", x, dict(Kind::UpperBound, text));
        case BinaryOp::Gt:
          return fmt::format("({} >= {})", x, dict(Kind::UpperBound, text));
        case BinaryOp::Ge:
          return fmt::format("({} >= {})", x, dict(Kind::LowerBound, text));
        default:
          break;
      }
    }
    return fmt::format("({} {} {})", emit(a), symbol(op), emit(b));
  }

  std::string cast(const ExprNode& e) {
    const Type to = e.cast_type;
    const Type from = *e.args[0]->type;
    std::string x = emit(*e.args[0]);
    if (to == from) return x;
    if (to == Type::Bool) return fmt::format("({} != 0)", x);
    if (is_floating(from) && (is_integer(to) || to == Type::Date))
      return fmt::format("ranc::tpl::saturating_cast<{}>({})", value_ctype(to), x);
    return fmt::format("(({}){})", value_ctype(to), x);
  }

  KernelParams& params_;
  const AttrAccess& attr_;
  const ExprHooks& hooks_;
};

}  // namespace

std::string emit_expression(const ExprPtr& e, KernelParams& params, const AttrAccess& attr,
                            const ExprHooks& hooks) {
  return Emitter(params, attr, hooks).emit(*e);
}

}  // namespace ranc::codegen
