// Internal to the passes: rebuilding a checked program node by node. A pass visits the
// nodes in (topological) order and, for each, copies it with its inputs renumbered or
// builds the nodes that replace it; finish() checks the new program, which types the new
// nodes and re-resolves the expressions by attribute name (resolved trees resolve to
// themselves), so a pass writes expressions by name and never computes a schema.
// Names the compiler makes contain '$' (or '.'), which no user name can.
#pragma once

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "ranc/ir/program.h"

namespace ranc::passes::detail {

class Rewrite {
 public:
  explicit Rewrite(const Program& in) : in_(in), map_(in.size(), -1) {
    internal_check(in.checked(), "a rewriting pass needs a checked program");
  }
  const Program& in() const { return in_; }
  // The new id standing for old node `old` (visited already).
  NodeId at(NodeId old) const {
    NodeId id = map_.at(static_cast<size_t>(old));
    internal_check(id >= 0, fmt::format("rewrite: n{} used before it was rewritten", old));
    return id;
  }
  void set(NodeId old, NodeId now) { map_.at(static_cast<size_t>(old)) = now; }
  // Adds a node whose inputs are new ids.
  NodeId add(Node n) {
    n.schema = {};
    n.order.clear();
    return out_.add(std::move(n));
  }
  // Old node n, its inputs renumbered.
  Node copy_of(const Node& n) const {
    Node c = n;
    for (NodeId& i : c.inputs) i = at(i);
    return c;
  }
  // Copies old node n as it is and maps it.
  void keep(const Node& n) { set(n.id, add(copy_of(n))); }
  // A compiler-made attribute name, unique in the program.
  std::string fresh(std::string_view what) { return fmt::format("${}{}", what, next_name_++); }
  Program finish() { return check(out_); }

  // Node builders (inputs are new ids; expressions unresolved or resolved, by name).
  NodeId select(NodeId in, Expr predicate, SourceLoc loc) {
    Node n;
    n.kind = OpKind::Select;
    n.loc = std::move(loc);
    n.inputs = {in};
    n.predicate = std::move(predicate);
    return add(std::move(n));
  }
  NodeId project(NodeId in, std::vector<NamedExpr> exprs, SourceLoc loc) {
    Node n;
    n.kind = OpKind::Project;
    n.loc = std::move(loc);
    n.inputs = {in};
    n.exprs = std::move(exprs);
    return add(std::move(n));
  }
  NodeId binary(OpKind k, NodeId a, NodeId b, SourceLoc loc) {
    Node n;
    n.kind = k;
    n.loc = std::move(loc);
    n.inputs = {a, b};
    return add(std::move(n));
  }

 private:
  const Program& in_;
  Program out_;
  std::vector<NodeId> map_;
  int next_name_ = 0;
};

// Every attribute of `s`, passed through (for a project).
inline std::vector<NamedExpr> pass_through(const Schema& s) {
  std::vector<NamedExpr> v;
  for (const Attribute& a : s.attributes) v.push_back(NamedExpr{a.name, col(a.name), {}});
  return v;
}

// The expression with every attribute reference renamed by `rename` (name -> name).
template <typename F>
ExprPtr rename_attrs(const ExprPtr& e, const F& rename) {
  return rewrite_expr(e, [&](const ExprNode& x) -> ExprPtr {
    if (x.kind != ExprKind::Attr) return nullptr;
    std::string to = rename(x.text);
    if (to == x.text) return nullptr;
    ExprNode n = x;
    n.text = std::move(to);
    n.type.reset();
    n.attr_index = -1;
    return make_expr(std::move(n));
  });
}

}  // namespace ranc::passes::detail
