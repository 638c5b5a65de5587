// prune_attributes (see ranc/passes/prune_attributes.h): live attributes backwards
// from the outputs, then narrower input declarations and a second check.
#include "ranc/passes/prune_attributes.h"

#include <fmt/format.h>

#include <algorithm>

namespace ranc::passes {

namespace {

using Live = std::vector<bool>;

void mark_expr(const ExprPtr& e, Live& live) {
  if (!e) return;
  if (e->kind == ExprKind::Attr) {
    internal_check(e->attr_index >= 0 && static_cast<size_t>(e->attr_index) < live.size(),
                   fmt::format("prune_attributes: unresolved attribute '{}'", e->text));
    live[static_cast<size_t>(e->attr_index)] = true;
  }
  for (const auto& a : e->args) mark_expr(a, live);
}

// Adds to the live sets of n's inputs what n needs of them, given live(n).
void propagate(const Node& n, const Live& out, std::vector<Live>& live) {
  auto input = [&](size_t k) -> Live& { return live[static_cast<size_t>(n.inputs[k])]; };
  auto all = [&](size_t k) { std::fill(input(k).begin(), input(k).end(), true); };
  // A scalar subquery's relation has one attribute, which its value needs.
  if (op_takes_subqueries(n.kind))
    for (size_t k = static_cast<size_t>(op_arity(n.kind)); k < n.inputs.size(); ++k) all(k);
  switch (n.kind) {
    case OpKind::Input:
      return;
    case OpKind::Output:
    case OpKind::Fixpoint:  // its rules read whole outer relations
    case OpKind::Sort:
    case OpKind::Distinct:
    case OpKind::Union:
    case OpKind::Intersect:
    case OpKind::Difference:
    case OpKind::Scalar:
      for (size_t k = 0; k < n.inputs.size(); ++k) all(k);
      return;
    case OpKind::UnionAll:  // a bag: attribute i of the output is attribute i of each side
      for (size_t k = 0; k < 2; ++k)
        for (size_t i = 0; i < out.size(); ++i) input(k)[i] = input(k)[i] || out[i];
      return;
    case OpKind::Select:
      for (size_t i = 0; i < out.size(); ++i) input(0)[i] = input(0)[i] || out[i];
      mark_expr(n.predicate.ptr(), input(0));
      return;
    case OpKind::Limit:
      for (size_t i = 0; i < out.size(); ++i) input(0)[i] = input(0)[i] || out[i];
      return;
    case OpKind::Project:
      for (const auto& e : n.exprs) mark_expr(e.expr.ptr(), input(0));
      return;
    case OpKind::Product: {
      Live& l = input(0);
      Live& r = input(1);
      for (size_t i = 0; i < out.size(); ++i) {
        if (!out[i]) continue;
        if (i < l.size())
          l[i] = true;
        else
          r[i - l.size()] = true;
      }
      return;
    }
    case OpKind::Join: {
      Live& l = input(0);
      Live& r = input(1);
      for (int32_t k : n.left_key_index) l[static_cast<size_t>(k)] = true;
      for (int32_t k : n.right_key_index) r[static_cast<size_t>(k)] = true;
      // The inner join's output: left attributes, then the right's non-key ones.
      std::vector<int32_t> right_of;  // joined position - left size -> right index
      for (size_t j = 0; j < r.size(); ++j)
        if (std::find(n.right_key_index.begin(), n.right_key_index.end(),
                      static_cast<int32_t>(j)) == n.right_key_index.end())
          right_of.push_back(static_cast<int32_t>(j));
      Live joined(l.size() + right_of.size(), false);
      for (size_t i = 0; i < out.size(); ++i) joined[i] = joined[i] || out[i];
      mark_expr(n.predicate.ptr(), joined);
      for (size_t i = 0; i < joined.size(); ++i) {
        if (!joined[i]) continue;
        if (i < l.size())
          l[i] = true;
        else
          r[static_cast<size_t>(right_of[i - l.size()])] = true;
      }
      return;
    }
    case OpKind::Reduce: {
      const Live reads = reduce_attributes_read(n, input(0).size());
      for (size_t c = 0; c < reads.size(); ++c)
        if (reads[c]) input(0)[c] = true;
      return;
    }
  }
}

// The narrowest attribute, preferring one that is not a string (strings bring a
// dictionary).
size_t cheapest_attribute(const Schema& s) {
  size_t best = 0;
  auto cost = [&](size_t i) {
    Type t = s[i].type;
    return t == Type::String ? 100 : static_cast<int>(type_size(t));
  };
  for (size_t i = 1; i < s.size(); ++i)
    if (cost(i) < cost(best)) best = i;
  return best;
}

}  // namespace

std::vector<bool> reduce_attributes_read(const Node& n, size_t arity) {
  Live reads(arity, false);
  for (int32_t k : n.group_key_index) reads.at(static_cast<size_t>(k)) = true;
  for (const auto& a : n.aggregates) {
    mark_expr(a.arg.ptr(), reads);
    mark_expr(a.filter.ptr(), reads);
  }
  return reads;
}

Program prune_attributes(const Program& checked, std::vector<InputPruning>* report) {
  internal_check(checked.checked(), "prune_attributes needs a checked program");
  const auto& nodes = checked.nodes();
  std::vector<Live> live(nodes.size());
  for (const Node& n : nodes) live[static_cast<size_t>(n.id)].assign(n.schema.size(), false);
  // Checked programs are in topological order: consumers after their inputs.
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
    propagate(*it, live[static_cast<size_t>(it->id)], live);

  Program pruned = checked;
  bool changed = false;
  for (NodeId id : checked.inputs()) {
    const Node& n = checked.node(id);
    Live keep = live[static_cast<size_t>(id)];
    const Schema& d = n.declared;
    if (d.size() > 0 && std::none_of(keep.begin(), keep.end(), [](bool b) { return b; }))
      keep[cheapest_attribute(d)] = true;
    Schema kept;
    for (size_t i = 0; i < d.size(); ++i)
      if (keep[i]) kept.attributes.push_back(d[i]);
    while (kept.key_size < d.key_size && keep[kept.key_size]) ++kept.key_size;
    if (report) report->push_back({n.name, d, kept});
    if (kept.size() == d.size()) continue;
    changed = true;
    Node& m = pruned.mutable_node(id);
    m.declared = kept;
    size_t k = 0;
    while (k < m.sort_keys.size() && kept.find(m.sort_keys[k].attr)) ++k;
    m.sort_keys.resize(k);
  }
  if (!changed) return pruned;
  return check(pruned);
}

std::string print_pruning(const std::vector<InputPruning>& report) {
  std::string out;
  for (const auto& r : report) {
    std::string names;
    for (const auto& a : r.kept.attributes) names += (names.empty() ? "" : ", ") + a.name;
    out += fmt::format("{}: {} of {} attributes ({})\n", r.relation, r.kept.size(),
                       r.declared.size(), names);
  }
  return out;
}

}  // namespace ranc::passes
