// fuse_pipelines: groups operators into kernels (DESIGN.md section 4, step 4; Kernel
// Weaver, paper 002). It marks an operator `fused` when its output is not materialised
// but handed to its one consumer as a view (codegen/lowering.h, RowView) that the
// consumer's kernel streams, so the intermediate never touches device memory.
//
// Dependence classes decide (the rules, in fuse_pipelines.cpp, next to the code):
//   thread-level (row to row): select, project, a semi/anti join's probe, the output
//     stage of a join (its matches one by one), distinct on sorted input (row i against
//     row i - 1 of a dense input) fuse freely into the next stage;
//   block-level (a tile's scan or merge): the compaction of a select, the segmented
//     scan of a reduce, a merge-path tile, a join's expansion tile consume a fused
//     chain inside their tile loop;
//   kernel-level (a global order or total): a sort, a partitioning stage, a build side
//     that must be complete, a size that must be known before the next stage (a join's
//     match count), a product's or a set operation's random reads of a whole input:
//     barriers; the chain in front of them is materialised, except where the barrier's
//     own kernel streams it (a hash join's partitioning kernels, a hash semi/anti join's
//     build of its set: those chains run in the join's kernels). A sort that packs whole
//     tuples into one order word (nothing to carry but the word) streams its input chain
//     in the kernel that writes the words (a join's write stage, a select's compaction, a
//     map): that chain runs in the sort's kernel. Its sorted words are handed on packed
//     to consumers that are all distincts or set operations (PhysicalNode::keeps_words),
//     which decode a row's attributes as they load it: no unpacking kernel.
// Input sharing: chains of selects and projects that are materialised (two consumers, a
// barrier, an output) and read the same relation are written by one kernel that reads it
// once (PhysicalNode::shared_read; kernel = the group's last node), up to four chains a
// kernel; a chain that only passes attributes through runs no kernel and shares nothing.
// A sort-merge inner join takes no filtering left view: its count stage writes a lower
// bound and an offset for every row of the view's input, dropped or not.
// A join that merges in one pass (left input sorted by the keys, no residual:
// PhysicalNode::one_pass_merge) takes no stage that may drop matches after it, except in
// a chain of selects and projects that ends in a reduce without group keys: that reduce
// folds the matches the chain keeps into its states inside the merge (join_reduce.cuh,
// RowView::fold), and the join writes no match.
// A consumer takes a view only if it can evaluate the view's keep function for every
// row (streamed consumers) or the view keeps every row and checks nothing (consumers
// that read rows at random: a merge join's right side, set operations, distinct, a
// grouped reduce's neighbour comparisons).
// Off (CodegenOptions::fusion = false, `ranc --no-fusion`, RANC_NO_FUSION=1): nothing
// is fused, every operator's output is materialised, with the same results.
#pragma once

#include "ranc/passes/plan_sort_orders.h"

namespace ranc::passes {

// Sets PhysicalNode::fused and ::kernel for every node of `plan`. `fold_hash_joins`:
// CodegenOptions::fold_hash_joins (a global reduce takes a hash join's matches).
void fuse_pipelines(PhysicalPlan& plan, bool fold_hash_joins = true);

// Leaves every node unfused (kernel = the node itself): the plan of a run without fusion.
void no_fusion(PhysicalPlan& plan);

// The kernels of a plan as text: one line per kernel group with the operators fused into
// it, and where the groups' outputs are materialised.
std::string print_fusion(const PhysicalPlan& plan);

}  // namespace ranc::passes
