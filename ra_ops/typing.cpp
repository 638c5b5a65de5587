// ops::type_node: dispatches a node to its operator's typing rule, and the message
// helpers the rules share (name lists, "did you mean" suggestions).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "typing_rules.h"

namespace ranc::ops {

namespace typing {

const SourceLoc& loc_or(const SourceLoc& a, const SourceLoc& fallback) {
  return a.known() ? a : fallback;
}

void report(Diagnostics& diags, ErrorKind kind, std::string message, const SourceLoc& loc,
            std::string hint) {
  diags.push_back(Diagnostic{kind, std::move(message), loc, std::move(hint)});
}

std::string list_names(const Schema& schema) {
  // Long enough for any hand-written schema; a generated 500-column one is cut.
  constexpr size_t kMaxListed = 40;
  std::string s;
  for (size_t i = 0; i < schema.size() && i < kMaxListed; ++i) {
    if (i) s += ", ";
    s += schema[i].name;
  }
  if (schema.size() > kMaxListed) s += fmt::format(", ... ({} attributes)", schema.size());
  if (schema.size() == 0) s = "no attributes";
  return s;
}

static size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      // Case differences count as half a mistake at most: 'L_Price' is surely 'l_price'.
      bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                  std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string did_you_mean(std::string_view name, const Schema& schema) {
  // A suggestion further away than a third of the name is noise, not help.
  size_t best = std::max<size_t>(1, name.size() / 3) + 1;
  std::string_view best_name;
  for (const auto& a : schema.attributes) {
    size_t d = edit_distance(name, a.name);
    if (d < best) {
      best = d;
      best_name = a.name;
    }
  }
  if (best_name.empty()) return {};
  return fmt::format("did you mean '{}'?", best_name);
}

std::optional<int32_t> find_attribute(std::string_view name, const Schema& schema,
                                      std::string_view where, std::string_view side,
                                      const SourceLoc& loc, Diagnostics& diags) {
  if (auto i = schema.find(name)) return static_cast<int32_t>(*i);
  report(diags, ErrorKind::UnknownAttribute,
         fmt::format("unknown attribute '{}' in {}; {} has: {}", name, where, side,
                     list_names(schema)),
         loc, did_you_mean(name, schema));
  return std::nullopt;
}

SubqueryInputs subquery_inputs(const Node& n, const Inputs& in) {
  SubqueryInputs s;
  s.first = static_cast<size_t>(op_arity(n.kind));
  for (const Node* x : in) s.schemas.push_back(&x->schema);
  return s;
}

ExprPtr resolve_predicate(const Expr& e, const Schema& schema, const SourceLoc& fallback,
                          std::string_view where, Diagnostics& diags,
                          const SubqueryInputs* subqueries) {
  ExprPtr r = resolve_expr(e.ptr(), schema, fallback, where, diags, subqueries);
  if (!r) return nullptr;
  if (*r->type != Type::Bool) {
    report(diags, ErrorKind::TypeMismatch,
           fmt::format("{} must be bool, but {} is {}", where, to_string(e), type_name(*r->type)),
           loc_or(e->loc, fallback), "compare it with a value, e.g. x > 0");
    return nullptr;
  }
  return r;
}

}  // namespace typing

bool type_node(Node& n, const std::vector<const Node*>& inputs, Diagnostics& diags) {
  int arity = op_arity(n.kind);
  bool inputs_ok = static_cast<int>(inputs.size()) == arity ||
                   (op_takes_subqueries(n.kind) && static_cast<int>(inputs.size()) > arity);
  for (const Node* in : inputs) inputs_ok = inputs_ok && in != nullptr;
  if (!inputs_ok) {
    typing::report(
        diags, ErrorKind::InvalidGraph,
        fmt::format("{} takes {} input(s), got {}", op_kind_name(n.kind), arity, inputs.size()),
        n.loc);
    return false;
  }
  n.order.clear();
  switch (n.kind) {
    case OpKind::Input:
      return typing::type_input(n, inputs, diags);
    case OpKind::Select:
      return typing::type_select(n, inputs, diags);
    case OpKind::Project:
      return typing::type_project(n, inputs, diags);
    case OpKind::Product:
      return typing::type_product(n, inputs, diags);
    case OpKind::Union:
    case OpKind::Intersect:
    case OpKind::Difference:
    case OpKind::UnionAll:
      return typing::type_set_op(n, inputs, diags);
    case OpKind::Scalar:
      return typing::type_scalar(n, inputs, diags);
    case OpKind::Join:
      return typing::type_join(n, inputs, diags);
    case OpKind::Reduce:
      return typing::type_reduce(n, inputs, diags);
    case OpKind::Sort:
      return typing::type_sort(n, inputs, diags);
    case OpKind::Limit:
      return typing::type_limit(n, inputs, diags);
    case OpKind::Distinct:
      return typing::type_distinct(n, inputs, diags);
    case OpKind::Output:
      return typing::type_output(n, inputs, diags);
    case OpKind::Fixpoint:
      // A group is checked as a whole by check() (compiler/src/check/check_fixpoint.cpp).
      typing::report(diags, ErrorKind::InvalidGraph,
                     "a fixpoint node is typed by ranc::check, not alone", n.loc);
      return false;
  }
  typing::report(diags, ErrorKind::InvalidGraph,
                 fmt::format("unknown operator kind {}", static_cast<int>(n.kind)), n.loc);
  return false;
}

}  // namespace ranc::ops
