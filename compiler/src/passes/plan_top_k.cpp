// plan_top_k (see ranc/passes/plan_top_k.h).
#include "ranc/passes/plan_top_k.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace ranc::passes {

void plan_top_k(PhysicalPlan& plan) {
  const Program& prog = plan.program;
  const Consumers consumers = consumers_of(prog);
  for (auto& p : plan.nodes) p.top_k = 0;
  for (const Node& s : prog.nodes()) {
    PhysicalNode& p = plan.nodes[static_cast<size_t>(s.id)];
    const auto& cs = consumers[static_cast<size_t>(s.id)];
    if (s.kind != OpKind::Sort || p.sort_keys.empty() || cs.empty()) continue;
    int64_t k = 0;
    for (const auto& consumer : cs) {
      const Node& l = prog.node(consumer.first);
      if (l.kind != OpKind::Limit) {
        k = -1;
        break;
      }
      // offset + limit without overflow (both are non-negative).
      const int64_t end = l.limit > std::numeric_limits<int64_t>::max() - l.offset
                              ? std::numeric_limits<int64_t>::max()
                              : l.offset + l.limit;
      k = std::max(k, end);
    }
    if (k > 0 && k <= kTopKMaxRows) p.top_k = k;
  }
}

}  // namespace ranc::passes
