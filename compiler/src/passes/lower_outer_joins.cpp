// lower_outer_joins (see ranc/passes/lower_outer_joins.h).
#include "ranc/passes/lower_outer_joins.h"

#include <algorithm>
#include <map>

#include "rewrite.h"

namespace ranc::passes {

Program lower_outer_joins(const Program& checked) {
  bool any = false;
  for (const Node& n : checked.nodes())
    any = any || (n.kind == OpKind::Join && is_outer_join(n.join_kind));
  if (!any) return checked;

  detail::Rewrite rw(checked);
  for (const Node& n : checked.nodes()) {
    if (n.kind != OpKind::Join || !is_outer_join(n.join_kind)) {
      rw.keep(n);
      continue;
    }
    const Schema& ls = checked.node(n.inputs[0]).schema;
    const Schema& rs = checked.node(n.inputs[1]).schema;
    const NodeId L = rw.at(n.inputs[0]), R = rw.at(n.inputs[1]);
    const SourceLoc& loc = n.loc;
    auto is_right_key = [&](const std::string& a) {
      return std::find(n.right_keys.begin(), n.right_keys.end(), a) != n.right_keys.end();
    };
    auto is_left_key = [&](const std::string& a) {
      return std::find(n.left_keys.begin(), n.left_keys.end(), a) != n.left_keys.end();
    };
    auto null_of = [&](const Attribute& a) {
      return NamedExpr{a.name, cast(null_value(loc), a.type, loc), loc};
    };
    auto join = [&](NodeId a, NodeId b, std::vector<std::string> lk, std::vector<std::string> rk,
                    JoinKind kind, Expr residual) {
      Node j;
      j.kind = OpKind::Join;
      j.join_kind = kind;
      j.loc = loc;
      j.inputs = {a, b};
      j.left_keys = std::move(lk);
      j.right_keys = std::move(rk);
      j.predicate = std::move(residual);
      j.null_safe_keys = n.null_safe_keys;
      return rw.add(std::move(j));
    };

    std::vector<NodeId> parts;
    const bool left_rows = n.join_kind != JoinKind::Right;
    const bool right_rows = n.join_kind != JoinKind::Left;
    // R' (R with fresh key names) and p' for the joins that read R on the left.
    std::map<std::string, std::string> renamed;  // L key name -> R' key name
    std::vector<std::string> fresh_keys;
    NodeId r_renamed = -1;
    Expr p_renamed;
    if (right_rows) {
      std::vector<NamedExpr> proj;
      std::map<std::string, std::string> right_fresh;
      for (size_t k = 0; k < n.right_keys.size(); ++k) {
        std::string f = rw.fresh("k");
        right_fresh[n.right_keys[k]] = f;
        renamed[n.left_keys[k]] = f;
        fresh_keys.push_back(f);
      }
      for (const Attribute& a : rs.attributes) {
        auto it = right_fresh.find(a.name);
        proj.push_back(NamedExpr{it == right_fresh.end() ? a.name : it->second, col(a.name), loc});
      }
      r_renamed = rw.project(R, std::move(proj), loc);
      if (n.predicate.valid())
        p_renamed = Expr(detail::rename_attrs(n.predicate.ptr(), [&](const std::string& a) {
          auto it = renamed.find(a);
          return it == renamed.end() ? a : it->second;
        }));
    }
    // R' join L (keys from R), projected to the outer join's attributes; `pad`: L's
    // non-key attributes are NULL (the right-only tuples).
    auto from_right = [&](JoinKind kind, bool pad) {
      NodeId j = join(r_renamed, L, fresh_keys, n.left_keys, kind, p_renamed);
      std::vector<NamedExpr> proj;
      for (const Attribute& a : ls.attributes) {
        if (is_left_key(a.name))
          proj.push_back(NamedExpr{a.name, col(renamed.at(a.name)), loc});
        else
          proj.push_back(pad ? null_of(a) : NamedExpr{a.name, col(a.name), loc});
      }
      for (const Attribute& a : rs.attributes)
        if (!is_right_key(a.name)) proj.push_back(NamedExpr{a.name, col(a.name), loc});
      return rw.project(j, std::move(proj), loc);
    };
    if (left_rows)
      parts.push_back(join(L, R, n.left_keys, n.right_keys, JoinKind::Inner, n.predicate));
    else
      parts.push_back(from_right(JoinKind::Inner, false));
    if (left_rows) {
      NodeId anti = join(L, R, n.left_keys, n.right_keys, JoinKind::Anti, n.predicate);
      std::vector<NamedExpr> proj = detail::pass_through(ls);
      for (const Attribute& a : rs.attributes)
        if (!is_right_key(a.name)) proj.push_back(null_of(a));
      parts.push_back(rw.project(anti, std::move(proj), loc));
    }
    if (right_rows) parts.push_back(from_right(JoinKind::Anti, true));
    NodeId acc = parts[0];
    for (size_t i = 1; i < parts.size(); ++i)
      acc = rw.binary(OpKind::UnionAll, acc, parts[i], loc);
    rw.set(n.id, acc);
  }
  return rw.finish();
}

}  // namespace ranc::passes
