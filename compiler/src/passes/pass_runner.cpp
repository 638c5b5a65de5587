// The pass runner (see ranc/passes/pass_runner.h).
#include "ranc/passes/pass_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "ranc/passes/fuse_pipelines.h"
#include "ranc/passes/insert_frees.h"
#include "ranc/passes/rotate_loop_reads.h"
#include "ranc/passes/lower_distinct_aggregates.h"
#include "ranc/passes/lower_nulls.h"
#include "ranc/passes/lower_outer_joins.h"
#include "ranc/passes/lower_scalar_subqueries.h"
#include "ranc/passes/plan_paged_edges.h"
#include "ranc/passes/plan_top_k.h"
#include "ranc/passes/push_selects.h"

namespace ranc::codegen {
// Implemented in codegen/codegen.cpp: the per-operator lowering of a physical plan.
rt::Plan lower_plan(const passes::PhysicalPlan& physical, const CodegenOptions& options);
}  // namespace ranc::codegen

namespace ranc::passes {
namespace {

bool known(std::string_view name) {
  for (const auto& p : pipeline_passes())
    if (p.name == name) return true;
  return false;
}

// Checks that hold after fuse_pipelines: a fused node has exactly one consumer and
// shares its kernel with it; every node has a kernel.
void verify_physical(const PhysicalPlan& pp) {
  std::vector<int> uses(pp.program.size(), 0);
  std::vector<NodeId> consumer(pp.program.size(), -1);
  std::vector<size_t> input_of(pp.program.size(), 0);  // which input of its consumer
  for (const Node& n : pp.program.nodes())
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const auto i = static_cast<size_t>(n.inputs[k]);
      ++uses[i];
      consumer[i] = n.id;
      input_of[i] = k;
    }
  for (const Node& n : pp.program.nodes()) {
    const PhysicalNode& p = pp.nodes.at(static_cast<size_t>(n.id));
    internal_check(p.kernel >= 0, fmt::format("fuse_pipelines: n{} has no kernel", n.id));
    if (!p.fused) {
      // Input sharing: the group's chains over one relation are written by its last node.
      const PhysicalNode& k = pp.nodes.at(static_cast<size_t>(p.kernel));
      internal_check(p.kernel == n.id || (p.shared_read >= 0 && p.kernel > n.id && !k.fused &&
                                          k.kernel == p.kernel && k.shared_read == p.shared_read),
                     fmt::format("fuse_pipelines: unfused n{} in another kernel", n.id));
      continue;
    }
    internal_check(uses[static_cast<size_t>(n.id)] == 1,
                   fmt::format("fuse_pipelines: fused n{} has {} consumers", n.id,
                               uses[static_cast<size_t>(n.id)]));
    const Node& c = pp.program.node(consumer[static_cast<size_t>(n.id)]);
    // An inner join's kernels run the chains of both inputs, a hash semi/anti join's build
    // kernel the chain of its right input.
    // A sort's kernel that packs whole tuples into words runs the chain of its input.
    const bool join_kernel =
        c.kind == OpKind::Sort ||
        (c.kind == OpKind::Join &&
         ((c.join_kind == JoinKind::Inner && !pp.nodes[static_cast<size_t>(c.id)].one_pass_merge) ||
          (input_of[static_cast<size_t>(n.id)] == 1 &&
           pp.nodes[static_cast<size_t>(c.id)].join == codegen::JoinAlgorithm::Hash)));
    internal_check(p.kernel == (join_kernel ? c.id : pp.nodes[static_cast<size_t>(c.id)].kernel),
                   fmt::format("fuse_pipelines: n{} is not in its consumer's kernel", n.id));
  }
}

// An integer lowering option from environment variable `name` when it is set, checked
// against [lo, hi] either way.
template <class T>
void env_setting(const char* name, T& value, int64_t lo, int64_t hi, std::string_view what) {
  if (const char* v = std::getenv(name); v && *v) value = static_cast<T>(std::atoll(v));
  internal_check(value >= lo && value <= hi,
                 fmt::format("{} {} ({}) is not in [{}, {}]", what, value, name, lo, hi));
}

}  // namespace

std::vector<std::string> split_list(const char* text) {
  std::vector<std::string> out;
  if (!text) return out;
  std::string cur;
  for (const char* p = text;; ++p) {
    if (*p == ',' || *p == ' ' || *p == '\0') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      if (*p == '\0') break;
    } else {
      cur += *p;
    }
  }
  return out;
}


const std::vector<PassInfo>& pipeline_passes() {
  static const std::vector<PassInfo> passes = {{"prune_attributes", true},
                                               {"lower_scalar_subqueries", false},
                                               {"lower_distinct_aggregates", false},
                                               {"lower_outer_joins", false},
                                               {"lower_nulls", false},
                                               {"push_selects", true},
                                               {"plan_sort_orders", false},
                                               {"plan_top_k", true},
                                               {"fuse_pipelines", true},
                                               {"plan_paged_edges", true},
                                               {"lower", false},
                                               {"rotate_loop_reads", true},
                                               {"insert_frees", true}};
  return passes;
}

namespace {

std::vector<std::string> disabled_passes(const codegen::CodegenOptions& options) {
  std::vector<std::string> disabled = options.disabled_passes;
  for (auto& s : split_list(std::getenv("RANC_DISABLE_PASSES"))) disabled.push_back(s);
  if (!options.fusion) disabled.push_back("fuse_pipelines");
  if (const char* v = std::getenv("RANC_NO_FUSION"); v && *v && std::string_view(v) != "0")
    disabled.push_back("fuse_pipelines");
  if (!options.paged) disabled.push_back("plan_paged_edges");
  if (const char* v = std::getenv("RANC_NO_PAGED"); v && *v && std::string_view(v) != "0")
    disabled.push_back("plan_paged_edges");
  for (const auto& d : disabled) {
    internal_check(known(d), fmt::format("unknown pass '{}' to switch off", d));
    for (const auto& p : pipeline_passes())
      internal_check(p.name != d || p.optional, fmt::format("pass '{}' cannot be switched off", d));
  }
  return disabled;
}

}  // namespace

bool pass_enabled(std::string_view name, const codegen::CodegenOptions& options) {
  internal_check(known(name), fmt::format("unknown pass '{}'", name));
  auto d = disabled_passes(options);
  return std::find(d.begin(), d.end(), name) == d.end();
}

PipelineResult run_pipeline(const Program& checked, const codegen::CodegenOptions& options) {
  const std::vector<std::string> disabled = disabled_passes(options);
  const char* env_dump = std::getenv("RANC_DUMP_AFTER");
  const std::string dump_after = !options.dump_after.empty() ? options.dump_after
                                 : env_dump                  ? env_dump
                                                             : "";
  internal_check(dump_after.empty() || known(dump_after),
                 fmt::format("unknown pass '{}' to dump after", dump_after));

  PipelineResult r;
  auto off = [&](std::string_view name) {
    return std::find(disabled.begin(), disabled.end(), name) != disabled.end();
  };
  auto run = [&](std::string_view name, auto&& body, auto&& dump) {
    PassRecord rec{std::string(name), !off(name), 0};
    auto t0 = std::chrono::steady_clock::now();
    if (rec.ran) body();
    rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.passes.push_back(rec);
    if (dump_after == name) {
      r.dump = dump();
      if (options.dump_after.empty())
        std::fprintf(stderr, "ranc: plan after %s\n%s", rec.name.c_str(), r.dump.c_str());
    }
  };
  auto physical_text = [&] { return print_physical_plan(r.physical) + print_fusion(r.physical); };
  auto plan_text = [&] { return codegen::describe_plan(r.plan); };

  Program pruned;
  bool pruned_ran = false;
  run("prune_attributes",
      [&] {
        pruned = prune_attributes(checked, &r.inputs);
        pruned_ran = true;
      },
      [&] { return print_pruning(r.inputs) + print_program(pruned_ran ? pruned : checked); });
  // The SQL features the physical passes do not know, lowered to those they do, in order.
  Program lowered = pruned_ran ? std::move(pruned) : checked;
  auto lowering = [&](std::string_view name, Program (*pass)(const Program&)) {
    run(name, [&] { lowered = pass(lowered); }, [&] { return print_program(lowered); });
  };
  lowering("lower_scalar_subqueries", lower_scalar_subqueries);
  lowering("lower_distinct_aggregates", lower_distinct_aggregates);
  lowering("lower_outer_joins", lower_outer_joins);
  lowering("lower_nulls", lower_nulls);
  lowering("push_selects", push_selects);
  const Program& program = lowered;
  codegen::CodegenOptions plan_options = options;
  if (const char* v = std::getenv("RANC_GROUP_BY"); v && std::string_view(v) == "sort")
    plan_options.group_by = codegen::GroupBy::Sort;
  if (const char* v = std::getenv("RANC_HASH_FOLD"); v && *v)
    plan_options.fold_hash_joins = std::string_view(v) != "0";
  if (const char* v = std::getenv("RANC_MERGE_ORDERED_PAIRS"); v && *v)
    plan_options.merge_ordered_pairs_only = std::string_view(v) != "0";
  run("plan_sort_orders", [&] { r.physical = plan_sort_orders(program, plan_options); },
      physical_text);
  run("plan_top_k", [&] { plan_top_k(r.physical); }, physical_text);
  no_fusion(r.physical);
  run("fuse_pipelines",
      [&] {
        fuse_pipelines(r.physical, plan_options.fold_hash_joins);
        verify_physical(r.physical);
      },
      physical_text);
  run("plan_paged_edges", [&] { plan_paged_edges(r.physical); }, physical_text);
  codegen::CodegenOptions lower_options = options;
  if (const char* v = std::getenv("RANC_PAGE_ROWS"); v && *v) lower_options.page_rows = std::atoi(v);
  if (const char* v = std::getenv("RANC_MERGE_JOIN"); v && std::string_view(v) == "expand")
    lower_options.one_pass_merge_join = false;
  if (const char* v = std::getenv("RANC_JOIN_RANGES"); v && std::string_view(v) == "0")
    lower_options.join_tile_ranges = false;
  if (const char* v = std::getenv("RANC_JOIN_STAGE"); v && *v)
    lower_options.stage_join_keys = std::string_view(v) != "0";
  if (const char* v = std::getenv("RANC_SELECT_VALUES"); v && *v)
    lower_options.select_stage_values = std::string_view(v) != "0";
  env_setting("RANC_HASH_PRIVATE", lower_options.hash_private_states, -1, 32, "hash private states");
  env_setting("RANC_HASH_RECORDS", lower_options.hash_records, 0, INT64_MAX, "hash records");
  env_setting("RANC_HASH_DENSE", lower_options.hash_dense_slots, -1, int64_t{1} << 31,
              "hash dense slots");
  env_setting("RANC_HASH_DENSE_MIN", lower_options.hash_dense_min_slots, 1, int64_t{1} << 31,
              "hash dense minimum slots");
  env_setting("RANC_HASH_DENSE_SHARED", lower_options.hash_dense_shared_bytes, -1, 227 * 1024,
              "hash dense shared-memory bytes");
  env_setting("RANC_HASH_DENSE_PARTS", lower_options.hash_dense_shared_parts, 1, 1024,
              "hash dense shared-memory parts");
  env_setting("RANC_HASH_GLOBAL_ROWS", lower_options.hash_join_global_rows, 0, (int64_t{1} << 30) - 1,
              "hash join global rows");
  env_setting("RANC_HASH_BUILD_WINDOW", lower_options.hash_build_window_bits, -1, 30,
              "hash set window bits");
  env_setting("RANC_HASH_BUILD_WINDOW_MIN", lower_options.hash_build_window_min_bits, 0, 62,
              "hash set window minimum bits");
  if (const char* v = std::getenv("RANC_REDUCE_STAGE"); v && *v)
    lower_options.stage_reduce_inputs = std::string_view(v) != "0";
  if (const char* v = std::getenv("RANC_HASH_DENSE_SPECULATE"); v && *v)
    lower_options.hash_dense_speculate = std::string_view(v) != "0";
  if (const char* v = std::getenv("RANC_HASH_DENSE_EARLY"); v && *v)
    lower_options.hash_dense_early = std::string_view(v) != "0";
  env_setting("RANC_HASH_DENSE_EARLY_ROWS", lower_options.hash_dense_early_min_rows, 0, INT64_MAX,
              "hash dense early minimum rows");
  if (const char* v = std::getenv("RANC_HASH_PARTITION"); v && *v)
    lower_options.hash_partitioned = std::string_view(v) != "0";
  env_setting("RANC_HASH_DENSE_EARLY_SPAN", lower_options.hash_dense_early_min_span, 1,
              int64_t{1} << 31, "hash dense early minimum span");
  if (const char* v = std::getenv("RANC_REDUCE_DEFER"); v && *v)
    lower_options.defer_reduce_emits = std::string_view(v) != "0";
  env_setting("RANC_REDUCE_MIN_BLOCKS", lower_options.reduce_min_blocks, -1, 32, "reduce minimum blocks");
  env_setting("RANC_SETOP_MIN_BLOCKS", lower_options.set_op_min_blocks, 0, 32, "set operation minimum blocks");
  if (const char* v = std::getenv("RANC_SORT_WIDE_PAYLOAD"); v && *v)
    lower_options.sort_wide_payload = std::string_view(v) != "0";
  if (const char* v = std::getenv("RANC_RESIDENT"); v && *v)
    lower_options.resident_rounds = std::string_view(v) != "0";
  if (const char* v = std::getenv("RANC_SETOP_STAGE"); v && *v)
    lower_options.stage_set_op_inputs = std::string_view(v) != "0";
  if (const char* v = std::getenv("RANC_TOPK_BIN_ROWS"); v && *v)
    lower_options.top_k_bin_rows = std::atoll(v);
  internal_check(lower_options.top_k_bin_rows >= 1,
                 fmt::format("top-k bin rows {} is not positive", lower_options.top_k_bin_rows));
  const int pr = lower_options.page_rows;
  internal_check(pr >= 32 && pr <= (1 << 20) && (pr & (pr - 1)) == 0,
                 fmt::format("page rows {} is not a power of two in [32, 2^20]", pr));
  run("lower", [&] { r.plan = codegen::lower_plan(r.physical, lower_options); }, plan_text);
  run("rotate_loop_reads", [&] { rotate_loop_reads(r.plan); }, plan_text);
  run("insert_frees", [&] { insert_frees(r.plan); }, plan_text);
  return r;
}

}  // namespace ranc::passes
