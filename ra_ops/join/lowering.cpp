// Lowering of join (sort-merge): the right input is sorted by the join keys (physical
// planning); each left row finds its range of equal right keys by binary search.
//   inner: count stage (per-left-row range of equal keys and their scan: JoinCountAgent
//          when the left input is sorted by the keys, else a count kernel and ScanInt64),
//          then the total is read back. The output is a view over the key matches (i, j);
//          select/project stages after the join extend it, and it is materialised by
//          JoinExpandAgent (join.cuh): load-balanced expansion of the key matches (skewed
//          keys spread over many blocks), evaluating the fused stages per match; with a
//          residual or a fused select, the expansion is compacted like a select into an
//          output sized by the key matches, and the exact size is read back.
//   semi/anti: a fused stage over the left rows: "some right row in the range satisfies
//          the residual" (or its negation), materialised (when not fused) by SelectAgent.
// The left input may be a view (select/project fused into the join's input loading): its
// rows that the view drops have no matches. The right input is read at random, so it is
// dense (or a view that keeps every row and checks nothing).
// The output keeps the left input's order.
// A join that physical planning gave JoinAlgorithm::Hash is lowered by lower_hash_join
// (inner) or lower_hash_semi_join (semi/anti; hash_lowering.cpp) instead.
#include "ranc/codegen/lowering.h"
#include "hash_lowering.h"

namespace ranc::codegen {
namespace {

struct JoinCode {
  const Node& n;
  const DeviceRelation& L;
  const DeviceRelation& R;
  std::vector<int32_t> lcols, rcols;
  std::vector<bool> desc;
  std::vector<int32_t> right_rest;  // right non-key columns, in output order

  // Members (names prefixed by `pre`): cmp(i, j), lower(i), upper(i, lo) and, with a
  // residual, residual(i, j).
  std::string members(LoweringContext& ctx, KernelParams& p, std::string_view pre = "") const {
    std::string s =
        fmt::format("  __device__ __forceinline__ int {}cmp(long long i, long long j) const {{\n", pre);
    s += LoweringContext::compare_body(p, L, "i", lcols, R, "j", rcols, desc) + "  }\n";
    std::string nr = p.slot(R.size);
    s += fmt::format(
        "  __device__ __forceinline__ long long {1}lower(long long i) const {{\n"
        "    return ranc::tpl::partition_point(0, {0}, [&](long long j) {{ return {1}cmp(i, j) > 0; "
        "}});\n  }}\n"
        // From the lower bound the range of equal keys is short: gallop instead of bisecting.
        "  __device__ __forceinline__ long long {1}upper(long long i, long long lo) const {{\n"
        "    return ranc::tpl::gallop_partition_point(lo, {0}, [&](long long j) {{ return "
        "{1}cmp(i, j) >= 0; }});\n  }}\n",
        nr, pre);
    if (n.predicate.ptr()) {
      const std::string r = join_residual(ctx, n, p, L, R, right_rest);
      s += fmt::format(
          "  __device__ __forceinline__ bool {}residual(long long i, long long j) const {{ return "
          "{}; }}\n",
          pre, r);
    }
    return s;
  }
};

}  // namespace

std::vector<int32_t> right_non_keys(const Node& n, const DeviceRelation& R) {
  std::vector<int32_t> rest;
  for (size_t c = 0; c < R.types.size(); ++c)
    if (std::find(n.right_key_index.begin(), n.right_key_index.end(), static_cast<int32_t>(c)) ==
        n.right_key_index.end())
      rest.push_back(static_cast<int32_t>(c));
  return rest;
}

std::string join_residual(LoweringContext& ctx, const Node& n, KernelParams& p,
                          const DeviceRelation& L, const DeviceRelation& R,
                          const std::vector<int32_t>& right_rest) {
  const size_t la = L.types.size();
  return ctx.expr(n.predicate.ptr(), p, [&](int32_t c) {
    if (static_cast<size_t>(c) < la) return LoweringContext::load(p, L, static_cast<size_t>(c), "i");
    return LoweringContext::load(p, R, static_cast<size_t>(right_rest.at(static_cast<size_t>(c) - la)),
                                 "j");
  });
}

void set_semi_stage(LoweringContext& ctx, const Node& n, const DeviceRelation& L, RowView v,
                    std::string members, const std::string& found, bool searches) {
  KernelParams& d = v.deps;
  const std::string prev = LoweringContext::keep(d, L, "i");
  const std::string fn = fmt::format("v{}_keep", n.id);
  members += fmt::format(
      "  __device__ __forceinline__ bool {}(long long i) const {{\n    if (!{}) return false;\n"
      "    return {}{};\n  }}\n",
      fn, prev, n.join_kind == JoinKind::Anti ? "!" : "", found);
  d.add_member(fn, members);
  v.keep_fn = fn;
  v.filters = true;
  v.searches = searches;
  v.nodes.push_back(n.id);
  ctx.set_relation(n.id, make_view(std::move(v), L.types, L.size));
}

void lower_join(LoweringContext& ctx, const Node& n) {
  if (ctx.physical(n.id).join == JoinAlgorithm::Hash) {
    if (n.join_kind == JoinKind::Inner)
      lower_hash_join(ctx, n);
    else
      lower_hash_semi_join(ctx, n);
    return;
  }
  DeviceRelation L = ctx.relation(n.inputs.at(0));
  if (L.view && L.view->source != RowView::Source::Index) L = ctx.dense(L);
  DeviceRelation R = ctx.relation(n.inputs.at(1));
  if (R.view && (R.view->source != RowView::Source::Index || !R.view->keep_fn.empty()))
    R = ctx.dense(R);
  JoinCode jc{n, L, R, {}, {}, {}, right_non_keys(n, R)};
  for (const auto& k : ctx.physical(n.id).compare_keys) {
    jc.lcols.push_back(n.left_key_index.at(static_cast<size_t>(k.index)));
    jc.rcols.push_back(n.right_key_index.at(static_cast<size_t>(k.index)));
    jc.desc.push_back(k.descending);
  }
  const bool residual = n.predicate.ptr() != nullptr;

  if (n.join_kind != JoinKind::Inner) {
    // A stage over the left rows: keep(i) = the left view keeps row i and it has a
    // (residual-satisfying) match, or none for an anti join.
    RowView v = view_of(L);
    KernelParams& d = v.deps;
    const std::string pre = fmt::format("v{}_", n.id);
    std::string m = jc.members(ctx, d, pre);
    // Without a residual one search decides: the first right row not below row i's keys
    // matches or none does (a second search for the range's end would double the
    // dependent loads, which bound this stage when the left side is small).
    std::string found = residual ? pre + "exists(i)" : pre + "hit(i)";
    if (!residual)
      m += fmt::format(
          "  __device__ __forceinline__ bool {0}hit(long long i) const {{\n"
          "    const long long lo = {0}lower(i);\n"
          "    return lo < {1} && {0}cmp(i, lo) == 0;\n  }}\n",
          pre, d.slot(R.size));
    if (residual)
      m += fmt::format(
          "  __device__ __forceinline__ bool {0}exists(long long i) const {{\n"
          "    const long long lo = {0}lower(i), hi = {0}upper(i, lo);\n"
          "    for (long long j = lo; j < hi; ++j)\n      if ({0}residual(i, j)) return true;\n"
          "    return false;\n  }}\n",
          pre);
    // A chain fused into the right side is read by this stage's searches.
    if (R.view) v.nodes.insert(v.nodes.end(), R.view->nodes.begin(), R.view->nodes.end());
    set_semi_stage(ctx, n, L, std::move(v), std::move(m), found, /*searches=*/true);
    return;
  }

  // Inner join: per-left-row key match ranges, their scan and total.
  rt::SizeExpr nl = rt::SizeExpr::slot(L.size);
  rt::BufferId lo = ctx.allocate(fmt::format("n{}.lower", n.id), 8, nl, n.id);
  rt::BufferId offs = -1;
  rt::SlotId total = -1;
  const std::vector<NodeId> count_nodes = LoweringContext::fused_nodes({&L, &R}, n.id);
  const std::string count_name =
      (L.view ? L.view->op_names(ctx.program()) + "_" : std::string()) + "join_count";
  // A left input sorted by the join keys (in the comparison's sequence and directions)
  // takes JoinCountAgent: each tile narrows its searches to the right rows matching
  // its key range, and the counts are scanned in the same pass (decoupled look-back).
  const auto& lorder = ctx.physical(n.inputs.at(0)).order;
  bool left_sorted = lorder.size() >= jc.lcols.size();
  for (size_t t = 0; left_sorted && t < jc.lcols.size(); ++t)
    left_sorted = lorder[t].index == jc.lcols[t] && lorder[t].descending == jc.desc[t];
  if (left_sorted) {
    const int64_t ctile =
        static_cast<int64_t>(ctx.policy_threads("JoinCount")) * ctx.policy_items("JoinCount");
    rt::SlotId ctiles = ctx.num_tiles(n.id, L.size, -1, ctile);
    rt::BufferId cstate = ctx.tile_state(n.id, "count_state", ctiles);
    rt::BufferId tot =
        ctx.allocate(fmt::format("n{}.total", n.id), 8, rt::SizeExpr::fixed(1), n.id);
    offs = ctx.allocate(fmt::format("n{}.offsets", n.id), 8, nl, n.id);
    KernelParams p;
    std::string m = jc.members(ctx, p);
    m += fmt::format("  __device__ __forceinline__ bool keep(long long i) const {{ return {}; }}\n",
                     LoweringContext::keep(p, L, "i"));
    std::string ns = p.slot(L.size), nr = p.slot(R.size), plo = p.buffer(lo, "long long", false),
                po = p.buffer(offs, "long long", false), ts = p.buffer(cstate, "void", false),
                pt = p.buffer(tot, "long long", false);
    std::string name = ctx.kernel_name(n.id, count_name);
    std::string make = ctx.functor(name + "_fn", p, m);
    SkeletonCall agent(ctx.templates(), "JoinCountAgent", {ctx.tile_policy("JoinCount")}, "Agent");
    std::string body =
        make + agent.declare() + agent.temp_storage() +
        agent.call("run", {"temp", ns, nr,
                           HookArg::lambda("int", {{"long long", "i"}, {"long long", "j"}},
                                           " return f.cmp(i, j); "),
                           plo, po, ts, pt,
                           HookArg::lambda("bool", {{"long long", "i"}}, " return f.keep(i); ")});
    ctx.kernel(n.id, name, p, body,
               LaunchShape{rt::SizeExpr::slot(ctiles), 1, ctx.policy_threads("JoinCount"), false,
                           count_nodes},
               agent);
    total = ctx.new_slot();
    ctx.step(rt::ReadSize{total, tot, 0});
  } else {
    rt::BufferId cnt = ctx.allocate(fmt::format("n{}.counts", n.id), 8, nl, n.id);
    KernelParams p;
    std::string m = jc.members(ctx, p);
    std::string keep = LoweringContext::keep(p, L, "i");
    std::string plo = p.buffer(lo, "long long", false), pc = p.buffer(cnt, "long long", false);
    ctx.map_kernel(n.id, count_name, p, L.size,
                   fmt::format("    if (!{2}) {{\n      {0}[i] = 0;\n      {1}[i] = 0;\n"
                               "      return;\n    }}\n"
                               "    const long long l = lower(i), h = upper(i, l);\n"
                               "    {0}[i] = l;\n    {1}[i] = h - l;\n",
                               plo, pc, keep),
                   m, count_nodes, "MapSearch");  // two dependent searches a row
    offs = ctx.allocate(fmt::format("n{}.offsets", n.id), 8,
                        rt::SizeExpr{1, {rt::SizeTerm{1, {L.size}}}}, n.id);
    ctx.step(rt::ScanInt64{cnt, offs, nl, n.id});
    total = ctx.read_element(n.id, offs, L.size);
  }

  // The output: a view over the key matches (i, j), with the residual as its filter.
  RowView v;
  v.source = RowView::Source::MergeJoin;
  KernelParams& d = v.deps;
  std::vector<Type> types;
  add_join_attrs(v, types, n.id, L, R, jc.right_rest);
  if (residual) {
    std::string m = jc.members(ctx, d, fmt::format("v{}_", n.id));
    const std::string fn = fmt::format("v{}_keep", n.id);
    m += fmt::format("  __device__ __forceinline__ bool {0}(long long i, long long j) const {{ "
                     "return v{1}_residual(i, j); }}\n",
                     fn, n.id);
    d.add_member(fn, m);
    v.keep_fn = fn;
    v.filters = true;
  }
  v.nodes.push_back(n.id);
  const NodeId id = n.id;
  const rt::SlotId nls = L.size;
  // Expansion (join.cuh JoinExpandAgent): each block takes a tile of key matches and
  // finds their left rows by a load-balanced search over the offsets, so skewed keys
  // spread over many blocks. With a filter the matches are compacted like a select
  // (output sized by the key matches, an upper bound; the exact size is read back).
  // Always dense: the expansion needs the per-row counts anyway (plan_paged_edges.h).
  v.materialize = [id, nls, lo, offs, total](LoweringContext& ctx, const DeviceRelation& rel,
                                             bool /*paged*/) {
    const RowView& v = *rel.view;
    const Node& last = ctx.program().node(v.nodes.back());
    const int64_t etile =
        static_cast<int64_t>(ctx.policy_threads("JoinExpand")) * ctx.policy_items("JoinExpand");
    const bool filter = !v.keep_fn.empty();
    rt::SlotId etiles = -1;
    rt::BufferId state = -1, count = -1;
    if (filter) {
      etiles = ctx.num_tiles(id, total, -1, etile);
      state = ctx.tile_state(id, "tile_state", etiles);
      count = ctx.allocate(fmt::format("n{}.count", id), 8, rt::SizeExpr::fixed(1), id);
    }
    DeviceRelation out = ctx.allocate_relation(last, rt::SizeExpr::slot(total), total);
    KernelParams p;
    std::string keep = filter ? LoweringContext::keep(p, rel, "i, j") : "";
    std::string m = fmt::format(
        "  __device__ __forceinline__ void write(long long i, long long j, long long o) const "
        "{{\n{}  }}\n",
        ctx.copy_row(p, rel, "i, j", out, "o"));
    if (filter)
      m += fmt::format(
          "  __device__ __forceinline__ bool residual(long long i, long long j) const {{ return "
          "{}; }}\n",
          keep);
    std::string plo = p.buffer(lo, "long long"), po = p.buffer(offs, "long long"),
                ns = p.slot(nls), nt = p.slot(total);
    std::string ts, cn;
    if (filter) ts = p.buffer(state, "void", false), cn = p.buffer(count, "long long", false);
    std::string name = ctx.kernel_name(v.nodes.back(), v.op_names(ctx.program()) + "_write");
    std::string make = ctx.functor(name + "_fn", p, m);
    SkeletonCall agent(ctx.templates(), "JoinExpandAgent", {ctx.tile_policy("JoinExpand")},
                       "Agent");
    std::string body = make + agent.declare() + agent.temp_storage();
    const HookArg write =
        HookArg::lambda("void", {{"long long", "i"}, {"long long", "j"}, {"long long", "o"}},
                        " f.write(i, j, o); ");
    if (!filter) {
      body += agent.call("run", {"temp", nt, ns, plo, po, write});
      ctx.kernel(id, name, p, body,
                 LaunchShape{rt::SizeExpr::slot(total), etile, ctx.policy_threads("JoinExpand"),
                             true, v.nodes},
                 agent);
      return out;
    }
    body += agent.call("run_residual",
                       {"temp", nt, ns, plo, po,
                        HookArg::lambda("bool", {{"long long", "i"}, {"long long", "j"}},
                                        " return f.residual(i, j); "),
                        write, ts, cn});
    ctx.kernel(id, name, p, body,
               LaunchShape{rt::SizeExpr::slot(etiles), 1, ctx.policy_threads("JoinExpand"), false,
                           v.nodes},
               agent);
    out.size = ctx.new_slot();
    ctx.step(rt::ReadSize{out.size, count, 0});
    return out;
  };
  ctx.set_relation(n.id, make_view(std::move(v), std::move(types), total));
}

}  // namespace ranc::codegen
