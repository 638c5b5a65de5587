// Typing rule of project: one named, typed attribute per expression, names unique.
// The key is the longest prefix of the input key whose attributes are passed through
// in place (renaming allowed); the order is the longest prefix of the input order
// whose attributes are passed through anywhere, re-indexed to the output.
#include <fmt/format.h>

#include <map>

#include "../typing_rules.h"

namespace ranc::ops::typing {

namespace {
// The input attribute an output expression passes through unchanged, or -1.
int32_t passed_through(const NamedExpr& e) {
  return e.expr.ptr() && e.expr->kind == ExprKind::Attr ? e.expr->attr_index : -1;
}
}  // namespace

bool type_project(Node& n, const Inputs& in, Diagnostics& diags) {
  const Schema& s = in[0]->schema;
  if (n.exprs.empty()) {
    report(diags, ErrorKind::InvalidArgument, "project keeps no attributes", n.loc,
           fmt::format("list at least one of: {}", list_names(s)));
    return false;
  }
  bool ok = true;
  Schema out;
  std::map<std::string, size_t> seen;
  const SubqueryInputs subs = subquery_inputs(n, in);
  for (size_t i = 0; i < n.exprs.size(); ++i) {
    NamedExpr& ne = n.exprs[i];
    const SourceLoc& loc = loc_or(ne.loc, n.loc);
    if (ne.name.empty()) {
      report(diags, ErrorKind::InvalidArgument,
             fmt::format("project expression {} has no name", to_string(ne.expr)), loc);
      ok = false;
    } else if (auto [it, fresh] = seen.emplace(ne.name, i); !fresh) {
      report(diags, ErrorKind::DuplicateName,
             fmt::format("attribute '{}' appears twice in project (positions {} and {})", ne.name,
                         it->second + 1, i + 1),
             loc, "give each projected attribute a distinct name");
      ok = false;
    }
    ExprPtr r = resolve_expr(ne.expr.ptr(), s, loc,
                             fmt::format("project expression '{}'", ne.name), diags, &subs);
    if (!r) {
      ok = false;
      continue;
    }
    ne.expr = Expr(r);
    out.attributes.push_back({ne.name, *r->type, r->nullable});
  }
  if (!ok) return false;

  while (out.key_size < s.key_size && out.key_size < n.exprs.size() &&
         passed_through(n.exprs[out.key_size]) == static_cast<int32_t>(out.key_size))
    ++out.key_size;
  n.schema = std::move(out);

  for (const SortKey& k : in[0]->order) {
    int32_t pos = -1;
    for (size_t j = 0; j < n.exprs.size() && pos < 0; ++j)
      if (passed_through(n.exprs[j]) == k.index) pos = static_cast<int32_t>(j);
    if (pos < 0) break;
    n.order.push_back(SortKey{n.exprs[static_cast<size_t>(pos)].name, k.descending, k.loc, pos});
  }
  return true;
}

}  // namespace ranc::ops::typing
