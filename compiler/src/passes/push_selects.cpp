// push_selects (see ranc/passes/push_selects.h).
#include "ranc/passes/push_selects.h"

#include <algorithm>
#include <map>
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

Expr conjunction(const std::vector<ExprPtr>& cs, const SourceLoc& loc) {
  Expr e(cs.at(0));
  for (size_t i = 1; i < cs.size(); ++i) e = make_binary(BinaryOp::And, e, Expr(cs[i]), loc);
  return e;
}

// A select's predicate split for the node under it: an inner join (left: conjuncts for
// its left input, right: for its right input) or a project (left: conjuncts for its
// input, renamed to its input's attributes).
struct Split {
  std::vector<ExprPtr> left, right, rest;
  bool moves() const { return !left.empty() || !right.empty(); }
};

// Is conjunct `c` one that may move: it reads attributes and cannot fail? (No node here
// reads a scalar subquery: one would be an extra input, which split() and its helpers
// exclude by their input counts.)
bool movable(const ExprPtr& c, std::set<std::string>& names) {
  attribute_names(c, names);
  return !names.empty() && !can_fail(c);
}

bool within(const std::set<std::string>& names, const std::set<std::string>& side) {
  return std::all_of(names.begin(), names.end(), [&](const auto& a) { return side.count(a) > 0; });
}

// Select over an inner join: conjuncts of the left input's attributes go left (those of
// its key attributes also right, renamed to the right keys: the matched keys are equal),
// those of the right input's non-key attributes go right.
Split split_join(const Program& p, const Node& s, const Node& j) {
  Split out;
  if (j.join_kind != JoinKind::Inner || j.inputs.size() != 2) return out;
  std::set<std::string> left, right, left_keys(j.left_keys.begin(), j.left_keys.end());
  for (const auto& a : p.node(j.inputs[0]).schema.attributes) left.insert(a.name);
  for (const auto& a : p.node(j.inputs[1]).schema.attributes)
    if (std::find(j.right_keys.begin(), j.right_keys.end(), a.name) == j.right_keys.end())
      right.insert(a.name);
  std::vector<ExprPtr> cs;
  conjuncts(s.predicate.ptr(), cs);
  for (const ExprPtr& c : cs) {
    std::set<std::string> names;
    const bool m = movable(c, names);
    if (m && within(names, left)) {
      out.left.push_back(c);
      if (within(names, left_keys))
        out.right.push_back(detail::rename_attrs(c, [&](const std::string& a) {
          const auto k = std::find(j.left_keys.begin(), j.left_keys.end(), a) - j.left_keys.begin();
          return j.right_keys.at(static_cast<size_t>(k));
        }));
    } else if (m && within(names, right)) {
      out.right.push_back(c);
    } else {
      out.rest.push_back(c);
    }
  }
  return out;
}

// Select over a project that cannot fail: conjuncts that read only attributes the project
// passes through or renames go below it, renamed to its input's attributes. (A project that
// can fail stays in front: it checks every row it sees, as an unfused plan would.)
Split split_project(const Node& s, const Node& q) {
  Split out;
  if (q.inputs.size() != 1) return out;
  std::map<std::string, std::string> source;  // project output name -> input attribute
  for (const auto& e : q.exprs) {
    if (can_fail(e.expr.ptr())) return out;
    if (e.expr->kind == ExprKind::Attr) source[e.name] = e.expr->text;
  }
  std::set<std::string> passed;
  for (const auto& [name, from] : source) passed.insert(name);
  std::vector<ExprPtr> cs;
  conjuncts(s.predicate.ptr(), cs);
  for (const ExprPtr& c : cs) {
    std::set<std::string> names;
    if (movable(c, names) && within(names, passed))
      out.left.push_back(
          detail::rename_attrs(c, [&](const std::string& a) { return source.at(a); }));
    else
      out.rest.push_back(c);
  }
  return out;
}

// The split of select `s` over the node under it (read by nothing else), or nothing to move.
Split split(const Program& p, const Consumers& consumers, const Node& s) {
  if (s.kind != OpKind::Select || s.inputs.size() != 1 || !s.predicate.ptr()) return {};
  const Node& under = p.node(s.inputs[0]);
  if (consumers[static_cast<size_t>(under.id)].size() != 1) return {};
  if (under.kind == OpKind::Join) return split_join(p, s, under);
  if (under.kind == OpKind::Project) return split_project(s, under);
  return {};
}

// One round: every select over a join or a project moves what it can one node down.
// Returns whether anything moved.
bool push_once(const Program& in, Program& out) {
  const Consumers consumers = consumers_of(in);
  std::vector<Split> splits(in.size());
  std::vector<bool> deferred(in.size(), false);  // rebuilt when their select is
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
    const Node& under = in.node(n.inputs[0]);
    Node rebuilt = under;
    if (under.kind == OpKind::Join) {
      NodeId L = rw.at(under.inputs[0]), R = rw.at(under.inputs[1]);
      if (!s.left.empty()) L = rw.select(L, conjunction(s.left, n.loc), n.loc);
      if (!s.right.empty()) R = rw.select(R, conjunction(s.right, n.loc), n.loc);
      rebuilt.inputs = {L, R};
    } else {  // a project
      rebuilt.inputs = {rw.select(rw.at(under.inputs[0]), conjunction(s.left, n.loc), n.loc)};
    }
    const NodeId nu = rw.add(std::move(rebuilt));
    rw.set(under.id, nu);
    rw.set(n.id, s.rest.empty() ? nu : rw.select(nu, conjunction(s.rest, n.loc), n.loc));
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
