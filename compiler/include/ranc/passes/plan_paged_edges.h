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
//     stage, whose build (right) side's declared key is not among the join keys. The
//     paged form was chosen when the dense one needed a count pass before its write
//     (session 2). Since the GFTR join (session 10) both forms write in one pass, sized by
//     an estimate from the kept probe rows, and grow and run again when the matches need
//     more (rt::Regrow). With a unique build key that estimate is exact and the readers
//     of a dense output skip the page-fill filter, so such a join stays dense: measured
//     on the H100, 2^28 x 2^26 PK-FK join -> select -> reduce, dense 10.26-10.31 ms
//     against paged 11.28-11.56 ms at 128-4096 rows a page (sessions 22-23). Without a
//     declared key the join is still paged; that case has not been measured again.
//     A hash join whose chain ends in a reduce without group keys writes nothing: the
//     reduce folds its matches in the join kernel (join_reduce.cuh), so it has no edge.
//     Sort-merge joins
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
