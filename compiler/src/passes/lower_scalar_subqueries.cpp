// lower_scalar_subqueries (see ranc/passes/lower_scalar_subqueries.h).
#include "ranc/passes/lower_scalar_subqueries.h"

#include <map>

#include "rewrite.h"

namespace ranc::passes {
namespace {

// e with scalar(k) replaced by the attribute names[k].
ExprPtr replace_scalars(const ExprPtr& e, const std::map<int32_t, std::string>& names) {
  return rewrite_expr(e, [&](const ExprNode& x) -> ExprPtr {
    return x.kind == ExprKind::Scalar ? col(names.at(x.subquery), x.loc).ptr() : nullptr;
  });
}

}  // namespace

Program lower_scalar_subqueries(const Program& checked) {
  bool any = false;
  for (const Node& n : checked.nodes())
    any = any || (op_takes_subqueries(n.kind) &&
                  n.inputs.size() > static_cast<size_t>(op_arity(n.kind)));
  if (!any) return checked;

  detail::Rewrite rw(checked);
  for (const Node& n : checked.nodes()) {
    const size_t arity = static_cast<size_t>(op_arity(n.kind));
    if (!op_takes_subqueries(n.kind) || n.inputs.size() <= arity) {
      rw.keep(n);
      continue;
    }
    // in0 product (scalar(S_k) |> project v as $s) for every subquery.
    NodeId base = rw.at(n.inputs[0]);
    std::map<int32_t, std::string> names;
    for (size_t k = arity; k < n.inputs.size(); ++k) {
      const Node& s = checked.node(n.inputs[k]);
      internal_check(s.schema.size() == 1, "lower_scalar_subqueries: not one attribute");
      Node one;
      one.kind = OpKind::Scalar;
      one.loc = n.loc;
      one.inputs = {rw.at(n.inputs[k])};
      NodeId row = rw.add(std::move(one));
      std::string name = rw.fresh("s");
      names[static_cast<int32_t>(k)] = name;
      row = rw.project(row, {NamedExpr{name, col(s.schema[0].name), n.loc}}, n.loc);
      base = rw.binary(OpKind::Product, base, row, n.loc);
    }
    Node m = rw.copy_of(n);
    m.inputs.resize(arity);
    m.inputs[0] = base;
    auto sub = [&](Expr& e) {
      if (e.valid()) e = Expr(replace_scalars(e.ptr(), names));
    };
    sub(m.predicate);
    for (auto& e : m.exprs) sub(e.expr);
    for (auto& a : m.aggregates) {
      sub(a.arg);
      sub(a.filter);
    }
    NodeId id = rw.add(std::move(m));
    // Select and join pass the $s attributes through: project them away.
    if (n.kind == OpKind::Select || n.kind == OpKind::Join)
      id = rw.project(id, detail::pass_through(n.schema), n.loc);
    rw.set(n.id, id);
  }
  return rw.finish();
}

}  // namespace ranc::passes
