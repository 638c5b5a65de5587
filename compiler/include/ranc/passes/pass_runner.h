// The compilation pipeline after checking, as one list of passes run by one runner
// (STYLE.md habit 10). In order (DESIGN.md section 4):
//
//   prune_attributes  Program -> Program        inputs narrowed to the attributes used
//   lower_scalar_subqueries   Program -> Program    scalar(...) as a product with one tuple
//   lower_distinct_aggregates Program -> Program    count(distinct x) over distinct tuples
//   lower_outer_joins         Program -> Program    inner join + anti joins + union all
//   lower_nulls               Program -> Program    NULLs as (a.valid, a) attribute pairs
//   push_selects              Program -> Program    a select's one-side conjuncts below its join
//   plan_sort_orders  Program -> PhysicalPlan   sort orders, inserted sorts, join algorithms
//   plan_top_k        PhysicalPlan              sorts that only limits read sort few rows
//   fuse_pipelines    PhysicalPlan              kernel groups (off: no_fusion)
//   plan_paged_edges  PhysicalPlan              dense or paged output per edge
//   lower             PhysicalPlan -> rt::Plan  per-operator lowering into one CUDA unit
//   rotate_loop_reads rt::Plan                  a fixpoint round's count of its next delta
//                                               at its end: one read-back a round
//   insert_frees      rt::Plan                  a Free after each buffer's last use
//
// The runner times every pass, verifies the plan after it, can dump the plan after any
// pass (CodegenOptions::dump_after, `ranc explain --after=PASS`, RANC_DUMP_AFTER=PASS
// prints to stderr), and honours a switch per optional pass
// (CodegenOptions::disabled_passes, RANC_DISABLE_PASSES=a,b): prune_attributes,
// push_selects, plan_top_k, fuse_pipelines, plan_paged_edges, rotate_loop_reads and insert_frees
// can be switched off; the others are the pipeline itself. RANC_PAGE_ROWS overrides CodegenOptions::page_rows.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ranc/codegen/codegen.h"
#include "ranc/passes/plan_sort_orders.h"
#include "ranc/passes/prune_attributes.h"
#include "ranc/runtime/plan.h"

namespace ranc::passes {

struct PassRecord {
  std::string name;
  bool ran = false;  // false when switched off
  double seconds = 0;
};

struct PipelineResult {
  std::vector<InputPruning> inputs;  // what prune_attributes kept of each input
  PhysicalPlan physical;  // after fuse_pipelines
  rt::Plan plan;
  std::vector<PassRecord> passes;
  std::string dump;  // the plan after options.dump_after, as text (empty if not asked)
};

// The passes in pipeline order, and whether each may be switched off.
struct PassInfo {
  std::string_view name;
  bool optional;
};
const std::vector<PassInfo>& pipeline_passes();

// Whether the pass runs under these options and the environment (RANC_DISABLE_PASSES,
// RANC_NO_FUSION, RANC_NO_PAGED).
bool pass_enabled(std::string_view name, const codegen::CodegenOptions& options);

// The items of an environment variable's list (RANC_DISABLE_PASSES, RANC_JIT_DEFINE),
// separated by commas or spaces; none for a null or empty text.
std::vector<std::string> split_list(const char* text);

// Runs the pipeline on a checked program. Throws InternalError for a pass name it does
// not know in options.disabled_passes or options.dump_after, or for a required pass
// that is switched off. The environment's RANC_GROUP_BY=sort and RANC_PAGE_ROWS override
// the options' group_by and page_rows here, once per pipeline.
PipelineResult run_pipeline(const Program& checked, const codegen::CodegenOptions& options);

}  // namespace ranc::passes
