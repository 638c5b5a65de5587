// Typing rule of reduce: distinct group keys of the input, then named aggregates
// whose result types follow the semantics in program.h (sum -> i64/f64, count -> i64,
// min/max -> the argument's type, avg -> f64; nullable when a group can have no non-NULL
// argument). The key is the group keys. No order is claimed: hash and sort-based
// reductions order groups differently.
#include <fmt/format.h>

#include <map>

#include "../typing_rules.h"

namespace ranc::ops::typing {

namespace {
// The result type of an aggregate over `arg`, or nullopt with a diagnostic.
std::optional<Type> aggregate_type(const Aggregate& a, const ExprPtr& arg, const SourceLoc& loc,
                                   Diagnostics& diags) {
  Type t = *arg->type;
  std::string_view f = agg_func_name(a.func);
  auto wrong = [&](std::string_view need) {
    report(diags, ErrorKind::TypeMismatch,
           fmt::format("{}() needs {} argument, but {} is {} (aggregate '{}')", f, need,
                       to_string(arg), type_name(t), a.name),
           loc);
    return std::nullopt;
  };
  switch (a.func) {
    case AggFunc::Sum:
      if (!is_numeric(t)) return wrong("a numeric");
      return is_integer(t) ? Type::I64 : Type::F64;
    case AggFunc::Count:
      return Type::I64;  // count(x): any type
    case AggFunc::Avg:
      if (!is_numeric(t)) return wrong("a numeric");
      return Type::F64;
    case AggFunc::Min:
    case AggFunc::Max:
      if (t == Type::Bool) return wrong("a non-bool");
      return t;
  }
  return wrong("a valid");
}
}  // namespace

bool type_reduce(Node& n, const Inputs& in, Diagnostics& diags) {
  const Schema& s = in[0]->schema;
  if (n.group_keys.empty() && n.aggregates.empty()) {
    report(diags, ErrorKind::InvalidArgument, "reduce has neither group keys nor aggregates", n.loc,
           "add an aggregate such as count(\"n\")");
    return false;
  }
  bool ok = true;
  Schema out;
  std::map<std::string, std::string> seen;  // name -> what defined it
  const SubqueryInputs subs = subquery_inputs(n, in);
  n.group_key_index.clear();
  for (const auto& k : n.group_keys) {
    auto i = find_attribute(k, s, "reduce group keys", "input", n.loc, diags);
    if (!i) {
      ok = false;
      continue;
    }
    if (!seen.emplace(k, "a group key").second) {
      report(diags, ErrorKind::DuplicateName,
             fmt::format("attribute '{}' appears twice in the reduce group keys", k), n.loc);
      ok = false;
      continue;
    }
    n.group_key_index.push_back(*i);
    out.attributes.push_back(s[static_cast<size_t>(*i)]);
  }
  out.key_size = out.attributes.size();

  for (auto& a : n.aggregates) {
    const SourceLoc& loc = loc_or(a.loc, n.loc);
    std::string_view f = agg_func_name(a.func);
    if (a.name.empty()) {
      report(diags, ErrorKind::InvalidArgument, fmt::format("{}() aggregate has no name", f), loc);
      ok = false;
    } else if (auto [it, fresh] = seen.emplace(a.name, fmt::format("an aggregate")); !fresh) {
      report(diags, ErrorKind::DuplicateName,
             fmt::format("aggregate name '{}' is already used by {} of this reduce", a.name,
                         it->second),
             loc, "give each aggregate a name distinct from the group keys and other aggregates");
      ok = false;
    }
    if (a.filter.ptr()) {
      ExprPtr f = resolve_predicate(a.filter, s, loc,
                                    fmt::format("filter of aggregate '{}'", a.name), diags, &subs);
      if (!f) {
        ok = false;
        continue;
      }
      a.filter = Expr(f);
    }
    if (a.func == AggFunc::Count && !a.arg.ptr()) {
      if (a.distinct) {
        report(diags, ErrorKind::InvalidArgument,
               fmt::format("count(distinct) needs an argument (aggregate '{}')", a.name), loc,
               "count(distinct x) counts the distinct non-NULL values of x");
        ok = false;
        continue;
      }
      out.attributes.push_back({a.name, Type::I64});
      continue;
    }
    if (!a.arg.ptr()) {
      report(diags, ErrorKind::InvalidArgument,
             fmt::format("{}() needs an argument (aggregate '{}')", f, a.name), loc);
      ok = false;
      continue;
    }
    ExprPtr arg = resolve_expr(a.arg.ptr(), s, loc,
                               fmt::format("argument of aggregate '{}'", a.name), diags, &subs);
    if (!arg) {
      ok = false;
      continue;
    }
    auto t = aggregate_type(a, arg, loc_or(arg->loc, loc), diags);
    if (!t) {
      ok = false;
      continue;
    }
    a.arg = Expr(arg);
    // A group may have no non-NULL argument, and the one tuple of a reduce without group
    // keys may have no row at all: then the aggregate is NULL. count is never NULL, and
    // neither is any aggregate of a reduce in lower_nulls' layout (Node::explicit_validity).
    bool nullable = a.func != AggFunc::Count && !n.explicit_validity &&
                    (arg->nullable || n.group_keys.empty());
    out.attributes.push_back({a.name, *t, nullable});
  }
  if (!ok) return false;
  n.schema = std::move(out);
  return true;
}

}  // namespace ranc::ops::typing
