// plan_top_k: a sort whose rows only limits read needs only their first rows (a top-k).
// Runs after plan_sort_orders (it needs the sort keys; a no-op sort stays one).
//
// The rule: a Sort with sort keys whose every consumer is a Limit (so not an output, and
// no other operator sees the rows past the limits' windows) gets PhysicalNode::top_k =
// the largest offset + limit of those limits, when that is at most kTopKMaxRows. The
// sort's lowering (ra_ops/sort/lowering.cpp, templates/topk.cuh) then finds a threshold
// on the first order word by a radix select (a range pass, then histograms of 11-bit
// digits), compacts the rows at or below it (at least the first top_k rows of the order,
// usually few more) and sorts only those. The limit windows the sorted rows as before.
// Above kTopKMaxRows a plain sort is cheaper than compacting so many rows.
// Off (switching the pass off: RANC_DISABLE_PASSES=plan_top_k): every sort is a full
// sort, with the same results.
#pragma once

#include <cstdint>

#include "ranc/passes/plan_sort_orders.h"

namespace ranc::passes {

inline constexpr int64_t kTopKMaxRows = int64_t{1} << 20;

// Sets PhysicalNode::top_k for every node of `plan` (after plan_sort_orders).
void plan_top_k(PhysicalPlan& plan);

}  // namespace ranc::passes
