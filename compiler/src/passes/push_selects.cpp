// push_selects (see ranc/passes/push_selects.h).
#include "ranc/passes/push_selects.h"

#include <algorithm>
#include <set>

#include "ranc/passes/plan_sort_orders.h"
#include "rewrite.h"

namespace ranc::passes {
namespace {

void conjuncts(const ExprPtr& e, std::vector<ExprPtr>& out) {
  if (e->kind == ExprKind::Binary && e->binary_op == BinaryOp::And) {
    conjuncts(e->args[0], out);
    conjuncts(e->args[1], out);
  } else {
    out.push_back(e);
  }
}

void attribute_names(const ExprPtr& e, std::set<std::string>& out) {
  if (e->kind == ExprKind::Attr) out.insert(e->text);
  for (const auto& a : e->args) attribute_names(a, out);
}

bool reads_subquery(const ExprPtr& e) {
  if (e->kind == ExprKind::Scalar) return true;
  return std::any_of(e->args.begin(), e->args.end(), reads_subquery);
}

Expr conjunction(const std::vector<ExprPtr>& cs, const SourceLoc& loc) {
  Expr e(cs.at(0));
  for (size_t i = 1; i < cs.size(); ++i) e = make_binary(BinaryOp::And, e, Expr(cs[i]), loc);
  return e;
}

// A select's predicate split for the join under it.
struct Split {
  std::vector<ExprPtr> left, right, rest;
  bool moves() const { return !left.empty() || !right.empty(); }
};

// The split of select `s` over the inner join under it, or nothing to move.
Split split(const Program& p, const Consumers& consumers, const Node& s) {
  Split out;
  if (s.kind != OpKind::Select || s.inputs.size() != 1 || !s.predicate.ptr()) return out;
  const Node& j = p.node(s.inputs[0]);
  if (j.kind != OpKind::Join || j.join_kind != JoinKind::Inner || j.inputs.size() != 2 ||
      consumers[static_cast<size_t>(j.id)].size() != 1)
    return out;
  std::set<std::string> left, right;
  for (const auto& a : p.node(j.inputs[0]).schema.attributes) left.insert(a.name);
  for (const auto& a : p.node(j.inputs[1]).schema.attributes)
    if (std::find(j.right_keys.begin(), j.right_keys.end(), a.name) == j.right_keys.end())
      right.insert(a.name);
  std::vector<ExprPtr> cs;
  conjuncts(s.predicate.ptr(), cs);
  for (const ExprPtr& c : cs) {
    std::set<std::string> names;
    attribute_names(c, names);
    const bool movable = !names.empty() && !can_fail(c) && !reads_subquery(c);
    auto within = [&](const std::set<std::string>& side) {
      return std::all_of(names.begin(), names.end(), [&](const auto& a) { return side.count(a) > 0; });
    };
    if (movable && within(left))
      out.left.push_back(c);
    else if (movable && within(right))
      out.right.push_back(c);
    else
      out.rest.push_back(c);
  }
  return out;
}

// One round: every select over a join moves what it can one join down. Returns whether
// anything moved.
bool push_once(const Program& in, Program& out) {
  const Consumers consumers = consumers_of(in);
  std::vector<Split> splits(in.size());
  std::vector<bool> deferred(in.size(), false);  // joins rebuilt when their select is
  bool any = false;
  for (const Node& n : in.nodes()) {
    Split s = split(in, consumers, n);
    if (!s.moves()) continue;
    deferred[static_cast<size_t>(n.inputs[0])] = true;
    splits[static_cast<size_t>(n.id)] = std::move(s);
    any = true;
  }
  if (!any) return false;
  detail::Rewrite rw(in);
  for (const Node& n : in.nodes()) {
    if (deferred[static_cast<size_t>(n.id)]) continue;
    const Split& s = splits[static_cast<size_t>(n.id)];
    if (!s.moves()) {
      rw.keep(n);
      continue;
    }
    const Node& j = in.node(n.inputs[0]);
    NodeId L = rw.at(j.inputs[0]), R = rw.at(j.inputs[1]);
    if (!s.left.empty()) L = rw.select(L, conjunction(s.left, n.loc), n.loc);
    if (!s.right.empty()) R = rw.select(R, conjunction(s.right, n.loc), n.loc);
    Node join = j;
    join.inputs = {L, R};
    const NodeId nj = rw.add(std::move(join));
    rw.set(j.id, nj);
    rw.set(n.id, s.rest.empty() ? nj : rw.select(nj, conjunction(s.rest, n.loc), n.loc));
  }
  out = rw.finish();
  return true;
}

}  // namespace

Program push_selects(const Program& checked) {
  Program p = checked;
  // Each round moves a select one join down; a program has fewer joins than nodes.
  for (size_t round = 0; round <= checked.size(); ++round) {
    Program next;
    if (!push_once(p, next)) return p;
    p = std::move(next);
  }
  return p;
}

}  // namespace ranc::passes
