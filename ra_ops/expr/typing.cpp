// ops::resolve_expr: name resolution and type inference for scalar expressions,
// following the typing and promotion rules of ranc/ir/program.h. Implicit numeric
// promotions become explicit Cast nodes (folded into literals), so evaluators and
// code generators never need promotion logic of their own.
#include <fmt/format.h>

#include <cstdint>

#include "../typing_rules.h"

namespace ranc::ops {

namespace {

using typing::loc_or;
using typing::report;

// The wider of two numeric types; i64 with f32 gives f64 (f32 cannot hold every i64
// to the precision the i64 side expects, so both go to f64).
std::optional<Type> common_numeric(Type a, Type b) {
  if (!is_numeric(a) || !is_numeric(b)) return std::nullopt;
  if ((a == Type::I64 && b == Type::F32) || (a == Type::F32 && b == Type::I64)) return Type::F64;
  // The enum lists i32, i64, f32, f64 in promotion order.
  return static_cast<uint8_t>(a) > static_cast<uint8_t>(b) ? a : b;
}

// The type two operands of one comparison are compared in, or nullopt when they
// cannot be compared (bool is admitted here; callers restrict it to = and <>).
std::optional<Type> comparison_type(Type a, Type b) {
  if (is_numeric(a) && is_numeric(b)) return common_numeric(a, b);
  if (a == b) return a;
  return std::nullopt;
}

bool is_widening(Type from, Type to) {
  auto c = common_numeric(from, to);
  return c && *c == to && from != to;
}

// A widened literal, as the cast would compute it at run time.
std::optional<Value> widen_literal(const Value& v, Type to) {
  if (!is_widening(v.type(), to)) return std::nullopt;
  switch (v.type()) {
    case Type::I32:
      if (to == Type::I64) return Value::i64(v.as_i32());
      if (to == Type::F32) return Value::f32(static_cast<float>(v.as_i32()));
      return Value::f64(static_cast<double>(v.as_i32()));
    case Type::I64:
      return Value::f64(static_cast<double>(v.as_i64()));
    case Type::F32:
      return Value::f64(static_cast<double>(v.as_f32()));
    default:
      return std::nullopt;
  }
}

// Whether a resolved node can be NULL, from its arguments (program.h, NULLS).
bool nullable_of(const ExprNode& n) {
  auto any = [&](size_t from, size_t step) {
    for (size_t i = from; i < n.args.size(); i += step)
      if (n.args[i]->nullable) return true;
    return false;
  };
  switch (n.kind) {
    case ExprKind::Attr:
      return n.nullable;  // from the schema
    case ExprKind::Literal:
      return n.literal.is_null();
    case ExprKind::IsNull:
      return false;
    case ExprKind::Scalar:
    case ExprKind::Null:
      return true;
    case ExprKind::Coalesce:
      for (const auto& a : n.args)
        if (!a->nullable) return false;
      return true;
    case ExprKind::Case:
      // A NULL condition takes no branch; only the values matter.
      return any(1, 2) || n.args.back()->nullable;
    default:
      return any(0, 1);
  }
}

ExprPtr finish(ExprNode n) {
  n.nullable = nullable_of(n);
  return make_expr(std::move(n));
}

ExprPtr make_literal(Value v, const SourceLoc& loc) {
  ExprNode n;
  n.kind = ExprKind::Literal;
  n.loc = loc;
  n.type = v.type();
  n.literal = std::move(v);
  return finish(std::move(n));
}

// The NULL keyword before its type is known (resolve() returns it untyped; the
// enclosing expression types it with typed_null, or reports it).
bool is_untyped_null(const ExprPtr& e) {
  return e && e->kind == ExprKind::Null;
}
ExprPtr typed_null(const ExprPtr& e, Type t) {
  return make_literal(Value::null(t), e->loc);
}

// `e` converted to `to`: unchanged when it already has that type, a folded literal,
// or a Cast node.
ExprPtr convert(const ExprPtr& e, Type to) {
  if (is_untyped_null(e)) return typed_null(e, to);
  if (*e->type == to) return e;
  if (e->kind == ExprKind::Literal) {
    if (e->literal.is_null()) return typed_null(e, to);
    if (auto v = widen_literal(e->literal, to)) return make_literal(std::move(*v), e->loc);
  }
  ExprNode n;
  n.kind = ExprKind::Cast;
  n.loc = e->loc;
  n.cast_type = to;
  n.args = {e};
  n.type = to;
  return finish(std::move(n));
}

// A copy of `orig` with resolved arguments and a type.
ExprPtr rebuild(const ExprNode& orig, std::vector<ExprPtr> args, Type t) {
  ExprNode n = orig;
  n.args = std::move(args);
  n.type = t;
  return finish(std::move(n));
}

ExprPtr make_binary_node(BinaryOp op, ExprPtr a, ExprPtr b, Type t, const SourceLoc& loc) {
  ExprNode n;
  n.kind = ExprKind::Binary;
  n.binary_op = op;
  n.loc = loc;
  n.args = {std::move(a), std::move(b)};
  n.type = t;
  return finish(std::move(n));
}

bool cast_allowed(Type from, Type to) {
  if (from == to) return true;
  if (is_numeric(from) && is_numeric(to)) return true;
  if ((from == Type::Bool && is_numeric(to)) || (is_numeric(from) && to == Type::Bool)) return true;
  if ((from == Type::Date && is_integer(to)) || (is_integer(from) && to == Type::Date)) return true;
  return false;
}

std::string_view tn(const ExprPtr& e) {
  return type_name(*e->type);
}

class Resolver {
 public:
  Resolver(const Schema& schema, std::string_view where, Diagnostics& diags,
           const SubqueryInputs* subqueries)
      : schema_(schema), where_(where), diags_(diags), subqueries_(subqueries) {}

  // resolve(), with the NULL keyword at the top reported: nothing gives it a type there.
  ExprPtr resolve_top(const ExprPtr& e, const SourceLoc& fallback) {
    ExprPtr r = resolve(e, fallback);
    if (is_untyped_null(r)) {
      report(diags_, ErrorKind::TypeMismatch, fmt::format("NULL has no type in {}", where_),
             loc_or(r->loc, fallback), "give it one: cast(null as i32)");
      return nullptr;
    }
    return r;
  }

  ExprPtr resolve(const ExprPtr& e, const SourceLoc& fallback) {
    if (!e) {
      report(diags_, ErrorKind::InvalidArgument, fmt::format("missing expression in {}", where_),
             fallback);
      return nullptr;
    }
    const SourceLoc& loc = loc_or(e->loc, fallback);
    if (!arity_ok(*e)) {
      report(diags_, ErrorKind::InvalidArgument,
             fmt::format("malformed {} expression in {}: {} argument(s)", expr_kind_name(e->kind),
                         where_, e->args.size()),
             loc);
      return nullptr;
    }
    switch (e->kind) {
      case ExprKind::Attr:
        return attr(*e, loc);
      case ExprKind::Literal:
        return rebuild(*e, {}, e->literal.type());
      case ExprKind::Null:
        return e;  // typed by the enclosing expression
      case ExprKind::IsNull:
        return is_null(e, loc);
      case ExprKind::Coalesce:
        return coalesce(e, loc);
      case ExprKind::Substring:
        return substring(e, loc);
      case ExprKind::Scalar:
        return scalar(*e, loc);
      case ExprKind::Unary:
        return unary(e, loc);
      case ExprKind::Binary:
        return binary(e, loc);
      case ExprKind::Between:
        return between(e, loc);
      case ExprKind::InList:
        return in_list(e, loc);
      case ExprKind::Cast:
        return cast(e, loc);
      case ExprKind::Case:
        return case_when(e, loc);
      case ExprKind::Year:
        return year(e, loc);
      case ExprKind::Like:
      case ExprKind::StartsWith:
        return string_match(e, loc);
    }
    report(diags_, ErrorKind::InvalidArgument,
           fmt::format("unknown expression kind {} in {}", static_cast<int>(e->kind), where_), loc);
    return nullptr;
  }

 private:
  static bool arity_ok(const ExprNode& e) {
    for (const auto& a : e.args)
      if (!a) return false;
    size_t n = e.args.size();
    switch (e.kind) {
      case ExprKind::Attr:
      case ExprKind::Literal:
      case ExprKind::Null:
      case ExprKind::Scalar:
        return n == 0;
      case ExprKind::Unary:
      case ExprKind::Cast:
      case ExprKind::Year:
      case ExprKind::Like:
      case ExprKind::StartsWith:
      case ExprKind::IsNull:
        return n == 1;
      case ExprKind::Substring:
        return n == 3;
      case ExprKind::Coalesce:
        return n >= 1;
      case ExprKind::Binary:
        return n == 2;
      case ExprKind::Between:
        return n == 3;
      case ExprKind::InList:
        return n >= 1;  // an empty value list gets its own message
      case ExprKind::Case:
        return n >= 3 && n % 2 == 1;
    }
    return false;
  }

  void mismatch(const ExprPtr& e, const SourceLoc& loc, std::string what, std::string hint = {}) {
    report(diags_, ErrorKind::TypeMismatch, fmt::format("{} in {}: {}", what, where_, to_string(e)),
           loc, std::move(hint));
  }

  // Resolves every argument, so that mistakes in siblings are all reported.
  std::optional<std::vector<ExprPtr>> resolve_args(const ExprPtr& e, const SourceLoc& loc) {
    std::vector<ExprPtr> out;
    bool ok = true;
    for (const auto& a : e->args) {
      out.push_back(resolve(a, loc));
      ok = ok && out.back() != nullptr;
    }
    if (!ok) return std::nullopt;
    return out;
  }

  ExprPtr attr(const ExprNode& e, const SourceLoc& loc) {
    auto i = typing::find_attribute(e.text, schema_, where_, "input", loc, diags_);
    if (!i) return nullptr;
    ExprNode n = e;
    n.attr_index = *i;
    n.type = schema_[static_cast<size_t>(*i)].type;
    n.nullable = schema_[static_cast<size_t>(*i)].nullable;
    return finish(std::move(n));
  }

  void untyped(const ExprPtr& e, const SourceLoc& loc, std::string_view why) {
    report(diags_, ErrorKind::TypeMismatch,
           fmt::format("NULL has no type in {}: {} ({})", where_, to_string(e), why), loc,
           "give it one: cast(null as i32)");
  }

  ExprPtr is_null(const ExprPtr& e, const SourceLoc& loc) {
    auto args = resolve_args(e, loc);
    if (!args) return nullptr;
    // `null is null`: any type will do.
    return rebuild(*e, {convert((*args)[0], is_untyped_null((*args)[0]) ? Type::Bool
                                                                        : *(*args)[0]->type)},
                   Type::Bool);
  }

  // The one type values of case branches or coalesce arguments promote to (numeric), or
  // their common type; untyped NULLs take it. nullopt (reported) when they disagree or
  // all are untyped NULLs.
  std::optional<Type> common_value_type(const ExprPtr& e, const SourceLoc& loc,
                                        const std::vector<ExprPtr>& values, std::string_view what) {
    std::optional<Type> t;
    for (const ExprPtr& v : values) {
      if (is_untyped_null(v)) continue;
      Type vt = *v->type;
      if (!t) {
        t = vt;
      } else if (is_numeric(*t) && is_numeric(vt)) {
        t = common_numeric(*t, vt);
      } else if (vt != *t) {
        mismatch(e, loc,
                 fmt::format("{} have incompatible types {} and {}", what, type_name(*t),
                             type_name(vt)),
                 "all values must be numeric, or all of one type");
        return std::nullopt;
      }
    }
    if (!t) untyped(e, loc, fmt::format("all {} are NULL", what));
    return t;
  }

  ExprPtr coalesce(const ExprPtr& e, const SourceLoc& loc) {
    auto args = resolve_args(e, loc);
    if (!args) return nullptr;
    auto t = common_value_type(e, loc, *args, "coalesce arguments");
    if (!t) return nullptr;
    std::vector<ExprPtr> out;
    for (const auto& a : *args) out.push_back(convert(a, *t));
    return rebuild(*e, std::move(out), *t);
  }

  // substring(s, from, length): from and length integer constants, length >= 0.
  ExprPtr substring(const ExprPtr& e, const SourceLoc& loc) {
    auto args = resolve_args(e, loc);
    if (!args) return nullptr;
    std::vector<ExprPtr> out = std::move(*args);
    out[0] = convert(out[0], is_untyped_null(out[0]) ? Type::String : *out[0]->type);
    if (*out[0]->type != Type::String) {
      mismatch(e, loc, fmt::format("substring() needs a string, got {}", tn(out[0])));
      return nullptr;
    }
    for (size_t i : {1, 2}) {
      const ExprPtr& a = out[i];
      bool constant = a->kind == ExprKind::Literal && !a->literal.is_null() && is_integer(*a->type);
      if (!constant) {
        mismatch(e, loc,
                 fmt::format("substring()'s {} must be an integer constant, got {}",
                             i == 1 ? "start" : "length", to_string(a)),
                 "write substring(s, 1, 2)");
        return nullptr;
      }
      out[i] = convert(a, Type::I64);
    }
    if (out[2]->literal.as_i64() < 0) {
      mismatch(e, loc, "substring()'s length is negative");
      return nullptr;
    }
    return rebuild(*e, std::move(out), Type::String);
  }

  ExprPtr scalar(const ExprNode& e, const SourceLoc& loc) {
    const size_t i = static_cast<size_t>(e.subquery);
    if (!subqueries_ || e.subquery < 0 || i < subqueries_->first ||
        i >= subqueries_->schemas.size()) {
      report(diags_, ErrorKind::InvalidArgument,
             fmt::format("a scalar subquery is not allowed in {}", where_), loc,
             "scalar(...) may stand in select, project, join residuals and aggregate arguments");
      return nullptr;
    }
    const Schema& s = *subqueries_->schemas[i];
    if (s.size() != 1) {
      report(diags_, ErrorKind::SchemaMismatch,
             fmt::format("a scalar subquery must have one attribute, but it has {}: {}", s.size(),
                         s.str()),
             loc, "project it to the one attribute you mean");
      return nullptr;
    }
    ExprNode n = e;
    n.type = s[0].type;
    return finish(std::move(n));
  }

  ExprPtr unary(const ExprPtr& e, const SourceLoc& loc) {
    auto args = resolve_args(e, loc);
    if (!args) return nullptr;
    if (is_untyped_null((*args)[0])) {
      if (e->unary_op == UnaryOp::Neg) {
        untyped(e, loc, "negation does not say which number type");
        return nullptr;
      }
      (*args)[0] = typed_null((*args)[0], Type::Bool);
    }
    const ExprPtr& x = (*args)[0];
    Type t = *x->type;
    if (e->unary_op == UnaryOp::Neg) {
      if (!is_numeric(t)) {
        mismatch(e, loc,
                 fmt::format("cannot negate a value of type {}", t == Type::Bool ? "bool" : tn(x)),
                 t == Type::Bool ? "use 'not' for bool values" : "");
        return nullptr;
      }
      if (x->kind == ExprKind::Literal && !x->literal.is_null())
        return make_literal(negate(x->literal), loc_or(e->loc, x->loc));
      return rebuild(*e, std::move(*args), t);
    }
    if (t != Type::Bool) {
      mismatch(e, loc, fmt::format("'not' needs a bool operand, got {}", tn(x)));
      return nullptr;
    }
    return rebuild(*e, std::move(*args), Type::Bool);
  }

  static Value negate(const Value& v) {
    switch (v.type()) {
      // Integer negation wraps like every integer operation (two's complement).
      case Type::I32:
        return Value::i32(static_cast<int32_t>(0u - static_cast<uint32_t>(v.as_i32())));
      case Type::I64:
        return Value::i64(static_cast<int64_t>(0ull - static_cast<uint64_t>(v.as_i64())));
      case Type::F32:
        return Value::f32(-v.as_f32());
      default:
        return Value::f64(-v.as_f64());
    }
  }

  ExprPtr binary(const ExprPtr& e, const SourceLoc& loc) {
    auto args = resolve_args(e, loc);
    if (!args) return nullptr;
    ExprPtr a = (*args)[0], b = (*args)[1];
    BinaryOp op = e->binary_op;
    // An untyped NULL takes the other operand's type (bool for and/or; i32 days beside a
    // date in arithmetic).
    if (is_untyped_null(a) && is_untyped_null(b)) {
      if (!is_logical(op)) {
        untyped(e, loc, "both operands are NULL");
        return nullptr;
      }
      a = typed_null(a, Type::Bool);
      b = typed_null(b, Type::Bool);
    }
    auto peer_type = [&](const ExprPtr& other) {
      if (is_logical(op)) return Type::Bool;
      if (is_arithmetic(op) && *other->type == Type::Date) return Type::I32;
      return *other->type;
    };
    if (is_untyped_null(a)) a = typed_null(a, peer_type(b));
    if (is_untyped_null(b)) b = typed_null(b, peer_type(a));
    Type ta = *a->type, tb = *b->type;
    std::string_view sym = binary_op_symbol(op);
    auto operands = [&] {
      return fmt::format("cannot apply '{}' to {} and {}", sym, tn(a), tn(b));
    };

    if (is_arithmetic(op)) {
      if (auto t = common_numeric(ta, tb)) {
        if (op == BinaryOp::Mod && is_floating(*t)) {
          mismatch(e, loc, operands(), "'%' is defined on integers only; cast the operands to i64");
          return nullptr;
        }
        return rebuild(*e, {convert(a, *t), convert(b, *t)}, *t);
      }
      if (op == BinaryOp::Add && ta == Type::Date && tb == Type::I32)
        return rebuild(*e, {a, b}, Type::Date);
      if (op == BinaryOp::Add && ta == Type::I32 && tb == Type::Date)
        return rebuild(*e, {a, b}, Type::Date);
      if (op == BinaryOp::Sub && ta == Type::Date && tb == Type::I32)
        return rebuild(*e, {a, b}, Type::Date);
      if (op == BinaryOp::Sub && ta == Type::Date && tb == Type::Date)
        return rebuild(*e, {a, b}, Type::I32);
      std::string hint;
      if (ta == Type::Date || tb == Type::Date) {
        hint = (ta == Type::I64 || tb == Type::I64)
                   ? "days added to a date must be i32; cast the i64 to i32"
                   : "dates support date + i32, i32 + date, date - i32 and date - date";
      } else if (ta == Type::String || tb == Type::String) {
        hint = "strings support comparisons, like and starts_with only";
      }
      mismatch(e, loc, operands(), hint);
      return nullptr;
    }

    if (is_comparison(op)) {
      auto t = comparison_type(ta, tb);
      if (!t) {
        std::string hint;
        if (ta == Type::Date || tb == Type::Date)
          hint = "compare a date with a date literal, e.g. date '1994-01-01'";
        else if (ta == Type::String || tb == Type::String)
          hint = "a string can only be compared with another string";
        mismatch(e, loc, operands(), hint);
        return nullptr;
      }
      if (*t == Type::Bool && op != BinaryOp::Eq && op != BinaryOp::Ne) {
        mismatch(e, loc, operands(), "bool values can only be compared with = and <>");
        return nullptr;
      }
      return rebuild(*e, {convert(a, *t), convert(b, *t)}, Type::Bool);
    }

    // and / or
    if (ta != Type::Bool || tb != Type::Bool) {
      mismatch(e, loc, fmt::format("'{}' needs bool operands, got {} and {}", sym, tn(a), tn(b)));
      return nullptr;
    }
    return rebuild(*e, {a, b}, Type::Bool);
  }

  // between(x, lo, hi) means lo <= x and x <= hi, each comparison with its own
  // promotion. When both promote to one type it stays a Between with casted operands;
  // otherwise it is spelled out as the two comparisons, so the meaning is unchanged.
  ExprPtr between(const ExprPtr& e, const SourceLoc& loc) {
    auto args = resolve_args(e, loc);
    if (!args) return nullptr;
    ExprPtr x = (*args)[0], lo = (*args)[1], hi = (*args)[2];
    {
      std::optional<Type> known;
      for (const ExprPtr& v : {x, lo, hi})
        if (!is_untyped_null(v) && !known) known = *v->type;
      if (!known) {
        untyped(e, loc, "every operand of 'between' is NULL");
        return nullptr;
      }
      if (is_untyped_null(x)) x = typed_null(x, *known);
      if (is_untyped_null(lo)) lo = typed_null(lo, *x->type);
      if (is_untyped_null(hi)) hi = typed_null(hi, *x->type);
    }
    auto t_lo = comparison_type(*lo->type, *x->type);
    auto t_hi = comparison_type(*x->type, *hi->type);
    if (!t_lo || !t_hi || *t_lo == Type::Bool) {
      mismatch(e, loc,
               fmt::format("cannot compare {} with bounds of type {} and {} in 'between'", tn(x),
                           tn(lo), tn(hi)),
               *x->type == Type::Bool ? "bool values have no range" : "");
      return nullptr;
    }
    if (*t_lo == *t_hi) {
      Type t = *t_lo;
      return rebuild(*e, {convert(x, t), convert(lo, t), convert(hi, t)}, Type::Bool);
    }
    SourceLoc l = e->loc;
    return make_binary_node(
        BinaryOp::And,
        make_binary_node(BinaryOp::Le, convert(lo, *t_lo), convert(x, *t_lo), Type::Bool, l),
        make_binary_node(BinaryOp::Le, convert(x, *t_hi), convert(hi, *t_hi), Type::Bool, l),
        Type::Bool, l);
  }

  // x in (v1, ...) means x = v1 or ...; like between, spelled out when the
  // comparisons promote to different types.
  ExprPtr in_list(const ExprPtr& e, const SourceLoc& loc) {
    if (e->args.size() < 2) {
      report(diags_, ErrorKind::InvalidArgument,
             fmt::format("'in' needs at least one value in {}: {}", where_, to_string(e)), loc);
      return nullptr;
    }
    auto args = resolve_args(e, loc);
    if (!args) return nullptr;
    {
      std::optional<Type> known;
      for (const ExprPtr& v : *args)
        if (!is_untyped_null(v) && !known) known = *v->type;
      if (!known) {
        untyped(e, loc, "every operand of 'in' is NULL");
        return nullptr;
      }
      if (is_untyped_null((*args)[0])) (*args)[0] = typed_null((*args)[0], *known);
      for (auto& v : *args)
        if (is_untyped_null(v)) v = typed_null(v, *(*args)[0]->type);
    }
    const ExprPtr& x = (*args)[0];
    std::vector<Type> types;
    bool ok = true;
    for (size_t i = 1; i < args->size(); ++i) {
      const ExprPtr& v = (*args)[i];
      auto t = comparison_type(*x->type, *v->type);
      if (!t) {
        mismatch(e, loc,
                 fmt::format("cannot compare {} with the {} value {} in 'in'", tn(x), tn(v),
                             to_string(v)));
        ok = false;
        continue;
      }
      types.push_back(*t);
    }
    if (!ok) return nullptr;
    bool uniform = std::all_of(types.begin(), types.end(), [&](Type t) { return t == types[0]; });
    if (uniform) {
      std::vector<ExprPtr> out;
      for (const auto& a : *args) out.push_back(convert(a, types[0]));
      return rebuild(*e, std::move(out), Type::Bool);
    }
    ExprPtr result;
    for (size_t i = 1; i < args->size(); ++i) {
      ExprPtr eq = make_binary_node(BinaryOp::Eq, convert(x, types[i - 1]),
                                    convert((*args)[i], types[i - 1]), Type::Bool, e->loc);
      result = result ? make_binary_node(BinaryOp::Or, result, eq, Type::Bool, e->loc) : eq;
    }
    return result;
  }

  ExprPtr cast(const ExprPtr& e, const SourceLoc& loc) {
    auto args = resolve_args(e, loc);
    if (!args) return nullptr;
    Type to = e->cast_type;
    if (is_untyped_null((*args)[0])) return typed_null((*args)[0], to);
    const ExprPtr& x = (*args)[0];
    if (!cast_allowed(*x->type, to)) {
      std::string hint;
      if (*x->type == Type::String || to == Type::String)
        hint = "strings cannot be cast";
      else if (*x->type == Type::Date || to == Type::Date)
        hint = "a date casts to and from i32 or i64 only";
      mismatch(e, loc, fmt::format("cannot cast {} to {}", tn(x), type_name(to)), hint);
      return nullptr;
    }
    if (*x->type == to) return x;  // an identity cast means nothing
    if (x->kind == ExprKind::Literal && x->literal.is_null()) return typed_null(x, to);
    if (x->kind == ExprKind::Literal)
      if (auto v = widen_literal(x->literal, to))
        return make_literal(std::move(*v), loc_or(e->loc, x->loc));
    return rebuild(*e, std::move(*args), to);
  }

  ExprPtr case_when(const ExprPtr& e, const SourceLoc& loc) {
    auto args = resolve_args(e, loc);
    if (!args) return nullptr;
    bool ok = true;
    std::vector<size_t> values;
    for (size_t i = 0; i + 1 < args->size(); i += 2) {
      if (is_untyped_null((*args)[i])) (*args)[i] = typed_null((*args)[i], Type::Bool);
      const ExprPtr& c = (*args)[i];
      if (*c->type != Type::Bool) {
        mismatch(e, loc,
                 fmt::format("case condition {} must be bool, but it is {}", to_string(c), tn(c)));
        ok = false;
      }
      values.push_back(i + 1);
    }
    values.push_back(args->size() - 1);
    if (!ok) return nullptr;
    std::vector<ExprPtr> branch_values;
    for (size_t i : values) branch_values.push_back((*args)[i]);
    std::optional<Type> t = common_value_type(e, loc, branch_values, "case branches");
    if (!t) return nullptr;
    std::vector<ExprPtr> out = std::move(*args);
    for (size_t i : values) out[i] = convert(out[i], *t);
    return rebuild(*e, std::move(out), *t);
  }

  ExprPtr year(const ExprPtr& e, const SourceLoc& loc) {
    auto args = resolve_args(e, loc);
    if (!args) return nullptr;
    if (is_untyped_null((*args)[0])) (*args)[0] = typed_null((*args)[0], Type::Date);
    if (*(*args)[0]->type != Type::Date) {
      mismatch(e, loc, fmt::format("year() needs a date, got {}", tn((*args)[0])));
      return nullptr;
    }
    return rebuild(*e, std::move(*args), Type::I32);
  }

  ExprPtr string_match(const ExprPtr& e, const SourceLoc& loc) {
    auto args = resolve_args(e, loc);
    if (!args) return nullptr;
    if (is_untyped_null((*args)[0])) (*args)[0] = typed_null((*args)[0], Type::String);
    if (*(*args)[0]->type != Type::String) {
      mismatch(e, loc,
               fmt::format("{} needs a string, got {}", expr_kind_name(e->kind), tn((*args)[0])));
      return nullptr;
    }
    return rebuild(*e, std::move(*args), Type::Bool);
  }

  const Schema& schema_;
  std::string_view where_;
  Diagnostics& diags_;
  const SubqueryInputs* subqueries_;
};

}  // namespace

ExprPtr resolve_expr(const ExprPtr& e, const Schema& schema, const SourceLoc& fallback,
                     std::string_view where, Diagnostics& diags,
                     const SubqueryInputs* subqueries) {
  return Resolver(schema, where, diags, subqueries).resolve_top(e, fallback);
}

}  // namespace ranc::ops
