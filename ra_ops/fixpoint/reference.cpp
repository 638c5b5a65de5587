// Reference semantics of a fixpoint group (ir/program.h, RECURSION): naive iteration.
// R^0 = T(empty); R^(k+1) = T(R^k), where T runs every rule (the checked rules program,
// through execute_reference) with the recursive relations bound to R^k and takes, per
// relation, the set of all its rules' tuples. Rules are monotone (the checker's rule), so
// R^k grows and R^(k+1) = R^k exactly when no relation grew: the sizes decide.
#include <fmt/format.h>

#include "../reference_internal.h"
#include "ranc/ra_ops/ra_ops.h"

namespace ranc::ops::ref {

namespace {

// Each distinct tuple of `r` once, sorted by all attributes (the total order).
HostRelation as_set(const HostRelation& r, const Schema& schema) {
  Keys keys;
  for (size_t c = 0; c < r.num_columns(); ++c) push_norm_keys(keys, r.column(c));
  const size_t n = r.num_rows();
  Rows order = sort_rows(keys, n);
  Rows keep;
  for (size_t k = 0; k < n; ++k)
    if (k == 0 || compare_keys(keys, order[k - 1], keys, order[k]) != 0) keep.push_back(order[k]);
  return gather(r, keep, schema);
}

}  // namespace

std::vector<HostRelation> eval_fixpoint_group(const FixpointDef& def, const Inputs& outer) {
  internal_check(def.checked_rules != nullptr, "reference: fixpoint is not checked");
  internal_check(outer.size() == def.outer.size(), "reference: fixpoint outer relations");
  const Program& rules = *def.checked_rules;
  const size_t m = def.names.size();
  std::vector<HostRelation> current;
  for (size_t i = 0; i < m; ++i) current.emplace_back(def.schemas[i]);

  // One application of the rules to `current`.
  auto apply = [&]() {
    std::vector<std::pair<std::string, HostRelation>> bind;
    for (size_t i = 0; i < def.outer.size(); ++i) bind.emplace_back(def.outer[i], *outer[i]);
    for (size_t i = 0; i < m; ++i) bind.emplace_back(def.names[i], current[i]);
    // Inputs the rules do not read are not bound (execute_reference matches by name and
    // the checked rules keep only the inputs they use).
    std::vector<std::pair<std::string, HostRelation>> used;
    for (NodeId id : rules.inputs())
      for (auto& b : bind)
        if (b.first == rules.node(id).name) used.push_back(b);
    std::vector<HostRelation> results = ranc::execute_reference(rules, used);
    std::vector<HostRelation> next;
    for (size_t i = 0; i < m; ++i) next.emplace_back(def.schemas[i]);
    for (size_t r = 0; r < results.size(); ++r) {
      HostRelation& into = next[static_cast<size_t>(def.rule_target.at(r))];
      const HostRelation& from = results[r];
      std::vector<Value> row(from.num_columns());
      for (size_t i = 0; i < from.num_rows(); ++i) {
        for (size_t c = 0; c < from.num_columns(); ++c) row[c] = from.column(c).get(i);
        into.append_row(row);
      }
    }
    for (size_t i = 0; i < m; ++i) next[i] = as_set(next[i], def.schemas[i]);
    return next;
  };

  current = apply();  // R^0
  for (int64_t k = 0; def.max_iterations == 0 || k < def.max_iterations; ++k) {
    std::vector<HostRelation> next = apply();
    bool grew = false;
    for (size_t i = 0; i < m; ++i) {
      internal_check(next[i].num_rows() >= current[i].num_rows(),
                     "reference: a fixpoint relation shrank (rules not monotone)");
      grew = grew || next[i].num_rows() != current[i].num_rows();
    }
    if (!grew) break;
    current = std::move(next);
  }
  return current;
}

HostRelation eval_fixpoint(const Node& n, const Inputs& in) {
  internal_check(n.fixpoint != nullptr, "reference: fixpoint node without a definition");
  std::vector<HostRelation> all = eval_fixpoint_group(*n.fixpoint, in);
  return std::move(all.at(static_cast<size_t>(n.fixpoint_index)));
}

}  // namespace ranc::ops::ref
