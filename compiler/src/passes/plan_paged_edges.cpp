// plan_paged_edges (see ranc/passes/plan_paged_edges.h).
#include "ranc/passes/plan_paged_edges.h"

#include <algorithm>
#include <vector>

#include "ranc/passes/unique_keys.h"

namespace ranc::passes {

bool streams_paged_input(const PhysicalPlan& plan, const Node& c, size_t k) {
  switch (c.kind) {
    case OpKind::Select:
    case OpKind::Project:
    case OpKind::Limit:
      return true;
    case OpKind::Join:
      // Hash: the partitioning (inner) or the hash set's build (semi/anti) streams the right.
      if (plan.nodes.at(static_cast<size_t>(c.id)).join == codegen::JoinAlgorithm::Hash)
        return true;
      return k == 0;  // sort-merge: the left side is streamed, the right binary-searched
    case OpKind::Reduce:  // folds row by row: global, or grouped by hashing
      return c.group_keys.empty() || plan.nodes.at(static_cast<size_t>(c.id)).hash_reduce;
    default:
      return false;
  }
}

namespace {
// Does every probe row of hash join `j` have at most one match? Yes when a key set of the
// build input (the right, or the left with PhysicalNode::build_left) lies within its join
// keys (UniqueKeys).
bool build_keys_unique(const PhysicalPlan& plan, UniqueKeys& keys, const Node& j) {
  const bool left = plan.nodes.at(static_cast<size_t>(j.id)).build_left;
  return keys.within(j.inputs.at(left ? 0 : 1), left ? j.left_key_index : j.right_key_index);
}
}  // namespace

void plan_paged_edges(PhysicalPlan& plan) {
  const Program& prog = plan.program;
  const Consumers consumers = consumers_of(prog);
  UniqueKeys keys(prog);
  for (auto& p : plan.nodes) p.paged = false;
  for (const Node& j : prog.nodes()) {
    if (j.kind != OpKind::Join || j.join_kind != JoinKind::Inner ||
        plan.nodes[static_cast<size_t>(j.id)].join != codegen::JoinAlgorithm::Hash)
      continue;
    // The end of the join's fused chain: where its view is materialised.
    NodeId m = j.id;
    while (plan.nodes[static_cast<size_t>(m)].fused) m = consumers[static_cast<size_t>(m)].at(0).first;
    // A sort that packs whole tuples streams the chain into its words, a global reduce folds
    // the matches (join_reduce.cuh): nothing to page.
    if (prog.node(m).kind == OpKind::Sort || prog.node(m).kind == OpKind::Reduce) continue;
    const auto& cs = consumers[static_cast<size_t>(m)];
    bool stream = !cs.empty();
    for (const auto& [c, k] : cs) stream = stream && streams_paged_input(plan, prog.node(c), k);
    // With a unique build key the dense output (sized by the probe rows) is exact and
    // written in one pass too, and its readers need no page-fill filter.
    plan.nodes[static_cast<size_t>(m)].paged = stream && !build_keys_unique(plan, keys, j);
  }
}

}  // namespace ranc::passes
