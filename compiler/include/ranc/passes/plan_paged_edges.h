// plan_paged_edges: which materialised outputs are paged lists instead of dense arrays
// (DESIGN.md section 2; templates/paged.cuh). Runs after fuse_pipelines.
//
// A paged list lets a kernel whose output size is unknown write it in one pass: blocks
// claim pages from a pool with an atomic counter, so there is no count pass, no read-back
// of a total before writing and no global gather. Reading one costs a filter on the page
// fill (a paged list is, to its readers, a view over row handles that drops the unused
// slots of each page), and turning it dense costs one compaction.
//
// The rule (per edge, decided at the node whose output is materialised):
//   - Producer: an inner hash join, with the select/project stages fused into its output
//     stage. Its dense form needs a count pass over every partition (build and probe)
//     before the write pass; the paged form builds and probes once. Sort-merge joins
//     stay dense: their count is a binary search per left row that the load-balanced
//     expansion needs anyway; selects are dense already (one pass, decoupled look-back).
//   - Consumers: paged only when every consumer streams its input row by row and keeps
//     a filter: selects and projects (their stages join the filter), either side of a
//     hash join (partitioning), the left side of a sort-merge join, a reduce without group
//     keys, a limit (its compaction writes only the window). A consumer that needs a dense
//     input (sort, output, product, set operations, distinct, grouped reduce, the right
//     side of a sort-merge join) would pay a compaction after the paged write, more than
//     the dense form's second probe, so such an edge stays dense.
// Off (CodegenOptions::paged = false, `ranc --no-paged`, RANC_NO_PAGED=1, or switching
// the pass off): every output is dense, with the same results.
#pragma once

#include <string>

#include "ranc/passes/plan_sort_orders.h"

namespace ranc::passes {

// Sets PhysicalNode::paged for every node of `plan` (after fuse_pipelines).
void plan_paged_edges(PhysicalPlan& plan);

// Does consumer `c` stream input `k` when that input is a paged list (the rule above)?
bool streams_paged_input(const PhysicalPlan& plan, const Node& c, size_t k);

}  // namespace ranc::passes
