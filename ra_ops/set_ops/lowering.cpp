// Lowering of union / intersect / difference: both inputs are sorted the same way by the
// whole tuple (physical planning; duplicates allowed), so SetOpAgent (set_ops.cuh) merges
// them along the merge path, drops repeated tuples and compacts the kept rows in one
// pass. Output columns are sized by the upper bound (union na + nb, otherwise na); the
// size is read back, except for a union the compiler knows to be of disjoint sets
// (Node::disjoint_inputs), whose size is na + nb.
// When the tuple's order packs into one 64-bit word (sort_layout.h), a union copies each
// tile's rows of every column into shared memory (SetOpStagedAgent, cp.async), merges their
// words there and writes the kept rows from the copies; intersect and difference (and a union
// whose columns cannot be staged) stage each tile's words (SetOpKeysAgent) and read the kept
// rows again from global memory; wider tuples compare row by row.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_set_op(LoweringContext& ctx, const Node& n) {
  // The merge reads rows at random: a view reaches it only when it keeps every row and
  // checks nothing (a fused project); otherwise it is materialised.
  auto random_access = [&](DeviceRelation r) {
    if (r.view && (r.view->source != RowView::Source::Index || !r.view->keep_fn.empty()))
      r = ctx.dense(r);
    return r;
  };
  const DeviceRelation A = random_access(ctx.relation(n.inputs.at(0)));
  const DeviceRelation B = random_access(ctx.relation(n.inputs.at(1)));
  const auto& keys = ctx.physical(n.id).compare_keys;
  std::vector<int32_t> cols;
  std::vector<bool> desc;
  for (const auto& k : keys) {
    cols.push_back(k.index);
    desc.push_back(k.descending);
  }
  const char* op = n.kind == OpKind::Union       ? "set_union"
                   : n.kind == OpKind::Intersect ? "set_intersect"
                                                 : "set_difference";
  rt::SizeExpr bound = n.kind == OpKind::Union
                           ? rt::SizeExpr{0, {rt::SizeTerm{1, {A.size}}, rt::SizeTerm{1, {B.size}}}}
                           : rt::SizeExpr::slot(A.size);
  DeviceRelation out = ctx.allocate_relation(n, bound, -1);

  const int64_t tile =
      static_cast<int64_t>(ctx.policy_threads("Merge")) * ctx.policy_items("Merge");
  rt::SlotId tiles = ctx.num_tiles(n.id, A.size, B.size, tile);
  rt::BufferId state = ctx.tile_state(n.id, "tile_state", tiles);
  rt::BufferId parts = ctx.allocate(fmt::format("n{}.partitions", n.id), 8,
                                    rt::SizeExpr{1, {rt::SizeTerm{1, {tiles}}}}, n.id);
  rt::BufferId count =
      ctx.allocate(fmt::format("n{}.count", n.id), 8, rt::SizeExpr::fixed(1), n.id);
  // The packed order word of a row, when the whole tuple fits one (the keyed merge).
  const bool keyed = fits_one_order_word(A.types, keys);
  const SortLayout layout = sort_layout(A.types, keys);
  auto word = [&](KernelParams& p, const DeviceRelation& X, const char* r) {
    return fmt::format("(unsigned long long)({})",
                       LoweringContext::order_word(p, X, layout, 0, r));
  };
  const char* cmp_sig = "  __device__ __forceinline__ int cmp(long long i, long long j) const {\n";
  auto cmp_hook = [] {
    return HookArg::lambda("int", {{"long long", "i"}, {"long long", "j"}},
                           " return f.cmp(i, j); ");
  };
  {
    KernelParams p;
    std::string cmp =
        keyed ? fmt::format("    const unsigned long long a = {}, b = {};\n"
                            "    return a < b ? -1 : a > b ? 1 : 0;\n",
                            word(p, A, "i"), word(p, B, "j"))
              : LoweringContext::compare_body(p, A, "i", cols, B, "j", cols, desc);
    std::string na = p.slot(A.size), nb = p.slot(B.size), pa = p.buffer(parts, "long long", false);
    std::string name = ctx.kernel_name(n.id, "partition");
    std::string make = ctx.functor(name + "_fn", p, fmt::format("{}{}  }}\n", cmp_sig, cmp));
    SkeletonCall agent(ctx.templates(), "MergePathAgent", {ctx.tile_policy("Merge")});
    std::string body = make + agent.call("partitions", {na, nb, cmp_hook(), pa});
    ctx.kernel(n.id, name, p, body,
               LaunchShape{rt::SizeExpr{1, {rt::SizeTerm{1, {tiles}}}}, 256, 256, false,
                           LoweringContext::fused_nodes({&A, &B}, n.id)},
               agent);
  }
  const std::string name = ctx.kernel_name(n.id, n.kind == OpKind::Union       ? "union"
                                                 : n.kind == OpKind::Intersect ? "intersect"
                                                                               : "difference");
  LaunchShape shape{rt::SizeExpr::slot(tiles), 1, ctx.policy_threads("Merge"), false,
                    LoweringContext::fused_nodes({&A, &B}, n.id)};
  const auto emit_hook =
      HookArg::lambda("void", {{"bool", "from_b"}, {"long long", "row"}, {"long long", "o"}},
                      " f.emit(from_b, row, o); ");
  if (keyed) {
    KernelParams p;
    const std::string ka = word(p, A, "i"), kb = word(p, B, "j");
    const std::string copy_a = ctx.copy_row(p, A, "row", out, "o"),
                      copy_b = ctx.copy_row(p, B, "row", out, "o");
    const std::string na = p.slot(A.size), nb = p.slot(B.size), pa = p.buffer(parts, "long long");
    const std::string ts = p.buffer(state, "void", false), cnt = p.buffer(count, "long long", false);
    // Declared orders lower_input left to this kernel (set_ops.cuh checks them as it stages).
    auto flag = [&](const DeviceRelation& X) -> std::string {
      return X.unverified ? p.buffer(X.unverified->flag, "int", false) : "nullptr";
    };
    const std::string fa = flag(A), fb = flag(B);
    // A union stages its inputs' columns in shared memory tile by tile (SetOpStagedAgent):
    // every column of both inputs, when the hooks read them by row number only (no view), no
    // two of them share a buffer (each functor member is pointed at one copy), and the copies
    // and the compactor's int tags fit the 48 KB of static shared memory. The tile's rows are
    // copied with cp.async (all in flight at once) and the kept rows written from the copies,
    // where the words path reads each kept row from global memory again. H100, 2^28 + 2^28
    // rows of (i32, i32) (bench/RESULTS.md, session 28): union 5.53 -> 4.75-4.77 ms (Thrust
    // 4.45-4.67 in the same runs). Intersect and difference, which write fewer rows, ran slower
    // staged: 0.86-0.88x and 0.89-0.90x Thrust's speed in the same runs against 0.89-0.90x and
    // 0.93x for their words path (64 registers and 46 KB a block, 4 blocks an SM where the
    // words path fits 5), so they stage words.
    std::vector<std::pair<std::string, std::string>> staged_members;  // (A's, B's) per column
    std::vector<std::string> staged_types;
    if (n.kind == OpKind::Union && ctx.options().stage_set_op_inputs && !A.view && !B.view &&
        A.columns.size() == B.columns.size()) {
      std::vector<rt::BufferId> seen;
      int64_t bytes = tile * 4 + 1024;  // the compactor's int tags, its scan and look-back
      bool ok = true;
      for (size_t c = 0; c < A.columns.size() && ok; ++c) {
        for (rt::BufferId b : {A.columns[c], B.columns[c]}) {
          if (std::find(seen.begin(), seen.end(), b) != seen.end()) ok = false;
          seen.push_back(b);
        }
        const int64_t size = type_size(A.types[c]);
        bytes += (tile + 3 + 3 * (16 / size)) * size;  // stage_pair_elems(max_stage_rows)
      }
      if (ok && bytes <= 48 * 1024) {
        for (size_t c = 0; c < A.columns.size(); ++c) {
          const auto ct = std::string(storage_ctype(A.types[c]));
          staged_members.emplace_back(p.buffer(A.columns[c], ct), p.buffer(B.columns[c], ct));
          staged_types.push_back(ct);
        }
      }
    }
    const bool staged = !staged_members.empty();
    std::string functor = ctx.functor(
        name + "_fn", p,
        fmt::format("  __device__ __forceinline__ unsigned long long key_a(long long i) const {{ "
                    "return {}; }}\n"
                    "  __device__ __forceinline__ unsigned long long key_b(long long j) const {{ "
                    "return {}; }}\n"
                    "  __device__ __forceinline__ void emit(bool from_b, "
                    "long long row, long long o) const {{\n"
                    "    if (!from_b) {{\n{}    }} else {{\n{}    }}\n  }}\n",
                    ka, kb, copy_a, copy_b));
    SkeletonCall agent(ctx.templates(), staged ? "SetOpStagedAgent" : "SetOpKeysAgent",
                       {ctx.tile_policy("Merge"), fmt::format("ranc::tpl::SetOp::{}", op)},
                       "Agent");
    std::vector<CallArg> args = {
        "temp", na, nb, pa,
        HookArg::lambda("unsigned long long", {{"long long", "i"}}, " return f.key_a(i); "),
        HookArg::lambda("unsigned long long", {{"long long", "j"}}, " return f.key_b(j); "),
        emit_hook, ts, cnt, fa, fb};
    std::string arrays;
    if (staged) {
      // Staging moves the functor's column pointers onto the copies: the functor is mutable.
      functor = LoweringContext::mutable_functor(functor);
      std::string stage = " ";
      for (size_t k = 0; k < staged_members.size(); ++k) {
        const auto& [ma, mb] = staged_members[k];
        arrays += fmt::format(
            "  __shared__ __align__(16) {0} stage{1}[ranc::tpl::stage_pair_elems<{0}>(Agent::max_stage_rows)];\n",
            staged_types[k], k);
        stage += fmt::format(
            "{{ const long long o = ranc::tpl::stage_pair_offset(f.{0}, alo, ahi); "
            "f.{0} = ranc::tpl::stage_rows_async<Agent::kThreads>(stage{2}, f.{0}, alo, ahi); "
            "f.{1} = ranc::tpl::stage_rows_async<Agent::kThreads>(stage{2} + o, f.{1}, blo, bhi); }} ",
            ma, mb, k);
      }
      stage += "return true; ";
      args.push_back(HookArg::lambda("bool",
                                     {{"long long", "alo"}, {"long long", "ahi"},
                                      {"long long", "blo"}, {"long long", "bhi"}},
                                     stage));
    }
    const std::string body = functor + agent.declare() + agent.temp_storage() + arrays +
                             agent.call("run", args);
    shape.min_blocks = ctx.options().set_op_min_blocks;
    ctx.kernel(n.id, name, p, body, shape, agent);
    for (const DeviceRelation* X : {&A, &B})
      if (X->unverified) ctx.step(rt::CheckFlag{X->unverified->flag, X->unverified->message, n.id});
  } else {
    internal_check(!A.unverified && !B.unverified,
                   "set operation: a declared order left unchecked for the row-wise merge");
    KernelParams p;
    std::string cmp = LoweringContext::compare_body(p, A, "i", cols, B, "j", cols, desc);
    // dup_a(i) / dup_b(j): row equals its predecessor (false when the planner knows the
    // input is duplicate-free).
    auto dup = [&](const DeviceRelation& X, NodeId x, const char* r) -> std::string {
      if (ctx.physical(x).unique) return "    return false;\n";
      return fmt::format(
          "    if ({0} == 0) return false;\n    return [&](long long i, long long j) "
          "{{\n{1}    }}({0} - 1, {0}) == 0;\n",
          r, LoweringContext::compare_body(p, X, "i", cols, X, "j", cols, desc));
    };
    std::string dup_a = dup(A, n.inputs.at(0), "i"), dup_b = dup(B, n.inputs.at(1), "j");
    std::string copy_a = ctx.copy_row(p, A, "row", out, "o"),
                copy_b = ctx.copy_row(p, B, "row", out, "o");
    std::string na = p.slot(A.size), nb = p.slot(B.size), pa = p.buffer(parts, "long long");
    std::string ts = p.buffer(state, "void", false), cnt = p.buffer(count, "long long", false);
    std::string make = ctx.functor(
        name + "_fn", p,
        fmt::format("{}{}  }}\n"
                    "  __device__ __forceinline__ bool dup_a(long long i) const {{\n{}  }}\n"
                    "  __device__ __forceinline__ bool dup_b(long long j) const {{\n{}  }}\n"
                    "  __device__ __forceinline__ void emit(bool from_b, "
                    "long long row, long long o) const {{\n"
                    "    if (!from_b) {{\n{}    }} else {{\n{}    }}\n  }}\n",
                    cmp_sig, cmp, dup_a, dup_b, copy_a, copy_b));
    SkeletonCall agent(ctx.templates(), "SetOpAgent",
                       {ctx.tile_policy("Merge"), fmt::format("ranc::tpl::SetOp::{}", op)},
                       "Agent");
    std::string body =
        make + agent.declare() + agent.temp_storage() +
        agent.call(
            "run",
            {"temp", na, nb, pa, cmp_hook(),
             HookArg::lambda("bool", {{"long long", "i"}}, " return f.dup_a(i); "),
             HookArg::lambda("bool", {{"long long", "j"}}, " return f.dup_b(j); "),
             emit_hook, ts, cnt});
    ctx.kernel(n.id, name, p, body, shape, agent);
  }
  out.size = ctx.new_slot();
  if (n.kind == OpKind::Union && n.disjoint_inputs)  // two disjoint sets: every row is kept
    ctx.step(rt::SetSize{out.size, bound});
  else
    ctx.step(rt::ReadSize{out.size, count, 0});
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
