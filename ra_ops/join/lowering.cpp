// Lowering of join (sort-merge): the right input is sorted by the join keys (physical
// planning); each left row finds its range of equal right keys by binary search.
//   inner: the output is a view over the key matches (i, j); select/project stages after
//          the join extend it, and it is materialised (write_merge or write_expanded):
//          - left input sorted by the keys, every match kept: one pass, JoinMergeAgent
//            (join.cuh) per tile of left rows, output sized by the left rows and grown and
//            rerun when short (rt::Regrow), JoinHeavyExpandAgent for tiles of heavy keys;
//          - otherwise a count stage (per-left-row range of equal keys and their scan:
//            JoinCountAgent when the left input is sorted by the keys, emitted when the view
//            is materialised; else a count kernel and ScanInt64, emitted now), the total read
//            back, then JoinExpandAgent: load-balanced expansion of the key matches (skewed
//            keys spread over many blocks), evaluating the fused stages per match; with a
//            residual or a fused select, the expansion is compacted like a select into an
//            output sized by the key matches, and the exact size is read back.
//          A declared left order left to the join (input/lowering.cpp) is verified by the
//          sorted-left kernels (their out_of_order hook) and checked after them.
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
  // residual, residual(i, j). `nr_expr`: the right rows' count (default: R's size slot).
  std::string members(LoweringContext& ctx, KernelParams& p, std::string_view pre = "",
                      std::string nr_expr = "") const {
    std::string s =
        fmt::format("  __device__ __forceinline__ int {}cmp(long long i, long long j) const {{\n", pre);
    s += LoweringContext::compare_body(p, L, "i", lcols, R, "j", rcols, desc) + "  }\n";
    const std::string nr = nr_expr.empty() ? p.slot(R.size) : nr_expr;
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

namespace {
// The join's key columns in its comparison sequence (PhysicalNode::compare_keys) over the
// inputs L and R, which the result refers to.
JoinCode join_code(LoweringContext& ctx, const Node& n, const DeviceRelation& L,
                   const DeviceRelation& R) {
  JoinCode jc{n, L, R, {}, {}, {}, right_non_keys(n, R)};
  for (const auto& k : ctx.physical(n.id).compare_keys) {
    jc.lcols.push_back(n.left_key_index.at(static_cast<size_t>(k.index)));
    jc.rcols.push_back(n.right_key_index.at(static_cast<size_t>(k.index)));
    jc.desc.push_back(k.descending);
  }
  return jc;
}
}  // namespace

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

namespace {

std::string count_name(LoweringContext& ctx, const DeviceRelation& L) {
  return (L.view ? L.view->op_names(ctx.program()) + "_" : std::string()) + "join_count";
}

// The functor members every sorted-left join kernel shares: cmp(i, j), keep(i), and
// write(i, j, o) copying the match (i, j) of the view `rel` to output row o of `out`.
std::string match_members(LoweringContext& ctx, const JoinCode& jc, KernelParams& p,
                          std::string nr_expr = "") {
  std::string m = jc.members(ctx, p, "", std::move(nr_expr));
  m += fmt::format("  __device__ __forceinline__ bool keep(long long i) const {{ return {}; }}\n",
                   LoweringContext::keep(p, jc.L, "i"));
  if (const auto& u = jc.L.unverified)  // the left input's declared order, checked here
    m += LoweringContext::out_of_order_member(p, jc.L, *u, "out_of_order");
  return m;
}
// JoinMergeAgent's lword(l) and rword(r): the join keys of each side packed into one order
// word (sort_layout.h), appended to `m`, when CodegenOptions::stage_join_keys is on, the key
// types are equal on both sides (cmp compares the right value as the left's type) and they
// fit one word. Returns whether; word_hooks passes them, or NoKeyWords for both.
bool key_word_members(LoweringContext& ctx, const JoinCode& jc, KernelParams& p, std::string& m) {
  if (!ctx.options().stage_join_keys) return false;
  passes::Order lk, rk;
  for (size_t k = 0; k < jc.lcols.size(); ++k) {
    if (jc.L.types.at(static_cast<size_t>(jc.lcols[k])) != jc.R.types.at(static_cast<size_t>(jc.rcols[k])))
      return false;
    lk.push_back({jc.lcols[k], jc.desc[k]});
    rk.push_back({jc.rcols[k], jc.desc[k]});
  }
  const SortLayout ll = sort_layout(jc.L.types, lk), rl = sort_layout(jc.R.types, rk);
  if (ll.words.size() != 1) return false;  // (rl has the same fields: the key types are equal)
  m += fmt::format(
      "  __device__ __forceinline__ unsigned long long lword(long long l) const {{ return {}; }}\n"
      "  __device__ __forceinline__ unsigned long long rword(long long r) const {{ return {}; }}\n",
      LoweringContext::order_word(p, jc.L, ll, 0, "l"), LoweringContext::order_word(p, jc.R, rl, 0, "r"));
  return true;
}
std::vector<CallArg> word_hooks(bool words) {
  if (!words) return {HookArg::stock("NoKeyWords"), HookArg::stock("NoKeyWords")};
  return {HookArg::lambda("unsigned long long", {{"long long", "l"}}, " return f.lword(l); "),
          HookArg::lambda("unsigned long long", {{"long long", "r"}}, " return f.rword(r); ")};
}

// The out_of_order hook and the flag it sets, when the left input's declared order is
// checked by the join's kernel (input/lowering.cpp), as trailing arguments of the agents'
// run(); none otherwise.
std::vector<CallArg> order_check_args(const JoinCode& jc, KernelParams& p) {
  if (!jc.L.unverified) return {};
  return {HookArg::lambda("bool", {{"long long", "i"}}, " return f.out_of_order(i); "),
          p.buffer(jc.L.unverified->flag, "int", false)};
}
void order_check_step(LoweringContext& ctx, const JoinCode& jc) {
  if (const auto& u = jc.L.unverified) ctx.step(rt::CheckFlag{u->flag, u->message, jc.n.id});
}
std::string write_member(LoweringContext& ctx, KernelParams& p, const DeviceRelation& rel,
                         const DeviceRelation& out) {
  return fmt::format(
      "  __device__ __forceinline__ void write(long long i, long long j, long long o) const "
      "{{\n{}  }}\n",
      ctx.copy_row(p, rel, "i, j", out, "o"));
}
HookArg write_hook() {
  return HookArg::lambda("void", {{"long long", "i"}, {"long long", "j"}, {"long long", "o"}},
                         " f.write(i, j, o); ");
}
// The functor's cmp(i, j) (left row i against right row j) and keep(i) (left row i takes
// part) as hook arguments of the join agents.
HookArg cmp_hook() {
  return HookArg::lambda("int", {{"long long", "i"}, {"long long", "j"}}, " return f.cmp(i, j); ");
}
HookArg keep_hook() {
  return HookArg::lambda("bool", {{"long long", "i"}}, " return f.keep(i); ");
}

// JoinTileRangeAgent's kernel n<name_node>_<what> (run by `owner`, fusing `nodes`): the right
// rows each of the `ctiles` tiles of JoinMergeAgent can match, 2 int64 a tile, all searched at
// once so that no tile waits for its own search. Returns -1 (no kernel: each tile searches its
// own range) when CodegenOptions::join_tile_ranges is off.
rt::BufferId tile_ranges(LoweringContext& ctx, const JoinCode& jc, rt::SlotId ctiles, NodeId owner,
                         NodeId name_node, const std::string& what, const std::vector<NodeId>& nodes) {
  if (!ctx.options().join_tile_ranges) return -1;
  const std::string name = ctx.kernel_name(name_node, what);
  const rt::SizeExpr bounds{0, {rt::SizeTerm{2, {ctiles}}}};
  rt::BufferId ranges = ctx.allocate(fmt::format("n{}.tile_ranges", jc.n.id), 8, bounds, jc.n.id);
  KernelParams p;
  std::string m = match_members(ctx, jc, p);
  const std::string ns = p.slot(jc.L.size), nr = p.slot(jc.R.size), nt = p.slot(ctiles),
                    pr = p.buffer(ranges, "long long", false);
  std::string make = ctx.functor(name + "_fn", p, m);
  SkeletonCall agent(ctx.templates(), "JoinTileRangeAgent", {ctx.tile_policy("JoinCount")}, "Agent");
  ctx.kernel(owner, name, p,
             make + agent.declare() +
                 agent.call("run", {ns, nr, "2 * " + nt, cmp_hook(), keep_hook(), pr}),
             LaunchShape{bounds, 256, 256, false, nodes}, agent);
  return ranges;
}

// Blocks of the heavy-key kernels after a one-pass merge: a fixed grid (any grid is correct),
// enough to fill an H100 a few times over.
constexpr int64_t kHeavyBlocks = 1024;

// What the one-pass merges (write_merge, fold_merge) set up alike for JoinMergeAgent
// (join.cuh): its tiles, the zeroed header (4 + tile_state_elems(tiles) + tiles int64), the
// heavy tiles' row bounds and offsets, and the operators their kernels run (a chain fused
// into either input, the join, then the stages after it in view `v`).
struct MergeSetup {
  rt::SlotId ctiles = -1;
  rt::BufferId header = -1, lo = -1, offs = -1;
  std::vector<NodeId> nodes;
};
MergeSetup merge_setup(LoweringContext& ctx, const JoinCode& jc, const RowView& v) {
  const Node& n = jc.n;
  MergeSetup m;
  const int64_t ctile =
      static_cast<int64_t>(ctx.policy_threads("JoinCount")) * ctx.policy_items("JoinCount");
  m.ctiles = ctx.num_tiles(n.id, jc.L.size, -1, ctile);
  m.header = ctx.allocate(fmt::format("n{}.merge_header", n.id), 8,
                          rt::SizeExpr{68, {rt::SizeTerm{3, {m.ctiles}}}}, n.id, true);
  const rt::SizeExpr nl = rt::SizeExpr::slot(jc.L.size);
  m.lo = ctx.allocate(fmt::format("n{}.lower", n.id), 8, nl, n.id);
  m.offs = ctx.allocate(fmt::format("n{}.offsets", n.id), 8, nl, n.id);
  m.nodes = LoweringContext::fused_nodes({&jc.L, &jc.R}, n.id);
  for (NodeId x : v.nodes)
    if (std::find(m.nodes.begin(), m.nodes.end(), x) == m.nodes.end()) m.nodes.push_back(x);
  return m;
}

// Inner join of a sorted left input whose matches are all kept: JoinMergeAgent writes them
// tile by tile into an output sized by the left rows (exact when the right keys are unique;
// the runtime grows it and runs the kernel again when the matches need more, rt::Regrow),
// then JoinHeavyExpandAgent writes the matches of tiles with heavy keys over a fixed grid
// (it returns at once when there are none). Sets `total` to the number of matches.
DeviceRelation write_merge(LoweringContext& ctx, const JoinCode& jc, const DeviceRelation& rel,
                           rt::SlotId total) {
  const RowView& v = *rel.view;
  const Node& n = jc.n;
  const DeviceRelation& L = jc.L;
  const Node& last = ctx.program().node(v.nodes.back());
  const rt::SlotId cap = ctx.new_slot();
  rt::SizeExpr capx = rt::SizeExpr::slot(L.size);
  capx.at_least = 1;
  ctx.step(rt::SetSize{cap, capx});
  DeviceRelation out = ctx.allocate_relation(last, rel.types, rt::SizeExpr::slot(cap), total);
  const auto [ctiles, header, lo, offs, nodes] = merge_setup(ctx, jc, v);
  // Named after the operators it runs: a chain fused into the left input's loading, then
  // the join and the stages after it.
  const std::string left_ops = L.view ? L.view->op_names(ctx.program()) : std::string();
  const std::string ops = (left_ops.empty() ? "" : left_ops + "_") + v.op_names(ctx.program());
  const rt::BufferId ranges =
      tile_ranges(ctx, jc, ctiles, n.id, v.nodes.back(), ops + "_ranges", nodes);
  {
    KernelParams p;
    std::string m = match_members(ctx, jc, p) + write_member(ctx, p, rel, out);
    const bool words = key_word_members(ctx, jc, p, m);
    std::string ns = p.slot(L.size), nr = p.slot(jc.R.size), hd = p.buffer(header, "long long", false),
                plo = p.buffer(lo, "long long", false), po = p.buffer(offs, "long long", false),
                pc = p.slot(cap), pr = ranges < 0 ? "nullptr" : p.buffer(ranges, "long long");
    std::string name = ctx.kernel_name(v.nodes.back(), ops + "_merge");
    std::vector<CallArg> args = {"temp", ns, nr, cmp_hook(), keep_hook()};
    for (CallArg& a : word_hooks(words)) args.push_back(std::move(a));
    for (CallArg a : std::vector<CallArg>{write_hook(), hd, plo, po, pc, pr}) args.push_back(std::move(a));
    for (CallArg& a : order_check_args(jc, p)) args.push_back(std::move(a));
    std::string make = ctx.functor(name + "_fn", p, m);
    SkeletonCall agent(ctx.templates(), "JoinMergeAgent", {ctx.tile_policy("JoinCount")}, "Agent");
    std::string body = make + agent.declare() + agent.temp_storage() + agent.call("run", args);
    ctx.kernel(n.id, name, p, body,
               LaunchShape{rt::SizeExpr::slot(ctiles), 1, ctx.policy_threads("JoinCount"), false,
                           nodes, rt::Regrow{header, 0, cap, total, out.columns}},
               agent);
  }
  {
    KernelParams p;
    std::string m = write_member(ctx, p, rel, out);
    std::string ns = p.slot(L.size), nt = p.slot(ctiles), hd = p.buffer(header, "long long"),
                plo = p.buffer(lo, "long long"), po = p.buffer(offs, "long long");
    std::string name = ctx.kernel_name(v.nodes.back(), ops + "_heavy");
    std::string make = ctx.functor(name + "_fn", p, m);
    SkeletonCall agent(ctx.templates(), "JoinHeavyExpandAgent", {ctx.tile_policy("JoinCount")},
                       "Agent");
    std::string body = make + agent.declare() + agent.temp_storage() +
                       agent.call("run", {"temp", ns, nt, hd, plo, po, write_hook()});
    ctx.kernel(n.id, name, p, body,
               LaunchShape{rt::SizeExpr::fixed(kHeavyBlocks), 1, ctx.policy_threads("JoinCount"),
                           false, nodes},
               agent);
  }
  order_check_step(ctx, jc);
  return out;
}

}  // namespace

std::string fold_agg_struct(const std::string& fn, const std::string& st, bool swapped) {
  return fmt::format(
      "  struct Agg {{\n    const {0}* f;\n    using State = {1};\n"
      "    __device__ __forceinline__ State init() const {{ return f->init(); }}\n"
      "    __device__ __forceinline__ void fold(State& s, long long l, long long r) const {{ "
      "f->fold(s, {2}); }}\n"
      "    __device__ __forceinline__ void merge(State& a, const State& b) const {{ f->merge(a, b); "
      "}}\n  }} agg{{&f}};\n",
      fn, st, swapped ? "r, l" : "l, r");
}
HookArg fold_agg_object(const std::string& st) {
  return HookArg::object(
      "agg", {{"State", st}},
      {{"init", {"State", {}}},
       {"fold", {"void", {{"State&", "s"}, {"long long", "l"}, {"long long", "r"}}}},
       {"merge", {"void", {{"State&", "a"}, {"const State&", "b"}}}}});
}

namespace {

// A global reduce folded into the one-pass merge (join_reduce.cuh): JoinMergeReduceAgent per
// tile of left rows (the merge of write_merge, each match folded into its thread's state
// instead of written), then JoinHeavyReduceAgent over the tiles of heavy keys; every block
// writes one partial state, which the reduce's finish merges. Nothing of the join is written
// but the heavy tiles' rows (lo, offsets) and the look-back header.
FoldPartials fold_merge(LoweringContext& ctx, const JoinCode& jc, const DeviceRelation& rel,
                        const FoldSpec& spec) {
  const DeviceRelation& L = jc.L;
  KernelParams& p = *spec.params;
  auto [ctiles, header, lo, offs, nodes] = merge_setup(ctx, jc, *rel.view);
  nodes.push_back(spec.reduce);
  FoldPartials out;
  out.count = ctx.new_slot();
  ctx.step(rt::SetSize{out.count, rt::SizeExpr{kHeavyBlocks, {rt::SizeTerm{1, {ctiles}}}}});
  out.partials = ctx.allocate(
      fmt::format("n{}.partials", spec.reduce), 8,
      rt::SizeExpr{kHeavyBlocks * spec.state_words, {rt::SizeTerm{spec.state_words, {ctiles}}}},
      spec.reduce);
  const rt::BufferId ranges = tile_ranges(ctx, jc, ctiles, spec.reduce, spec.reduce, spec.what + "_ranges", nodes);
  // Every parameter of the three kernels first: they share one functor type.
  std::string m = match_members(ctx, jc, p) + spec.members;
  const bool words = key_word_members(ctx, jc, p, m);
  const std::string ns = p.slot(L.size), nr = p.slot(jc.R.size), nt = p.slot(ctiles),
                    hd = p.buffer(header, "long long", false), plo = p.buffer(lo, "long long", false),
                    po = p.buffer(offs, "long long", false), pp = p.buffer(out.partials, "void", false),
                    pr = ranges < 0 ? "nullptr" : p.buffer(ranges, "long long");
  p.slot(out.count);
  std::vector<CallArg> order_args = order_check_args(jc, p);
  const std::string fn = spec.name + "_fn";
  const std::string make = ctx.functor(fn, p, m) + fold_agg_struct(fn, spec.state);
  const std::string heavy_name = ctx.kernel_name(spec.reduce, spec.what + "_heavy");
  {
    SkeletonCall agent(ctx.templates(), "JoinMergeReduceAgent", {ctx.tile_policy("JoinCount")},
                       "Agent");
    agent.bind("State", spec.state);
    std::vector<CallArg> args = {"temp", ns, nr, cmp_hook(), keep_hook()};
    for (CallArg& a : word_hooks(words)) args.push_back(std::move(a));
    for (CallArg a : std::vector<CallArg>{fold_agg_object(spec.state), hd, plo, po, pr, pp})
      args.push_back(std::move(a));
    for (CallArg& a : order_args) args.push_back(std::move(a));
    ctx.kernel(spec.reduce, spec.name, p, make + agent.declare() + agent.temp_storage() + agent.call("run", args),
               LaunchShape{rt::SizeExpr::slot(ctiles), 1, ctx.policy_threads("JoinCount"), false, nodes},
               agent);
  }
  {
    SkeletonCall agent(ctx.templates(), "JoinHeavyReduceAgent", {ctx.tile_policy("JoinCount")},
                       "Agent");
    agent.bind("State", spec.state);
    const std::string heavy_partials = fmt::format("static_cast<{}*>({}) + {}", spec.state, pp, nt);
    ctx.kernel(spec.reduce, heavy_name, p,
               make + agent.declare() + agent.temp_storage() +
                   agent.call("run", {"temp", ns, nt, hd, plo, po, fold_agg_object(spec.state),
                                      heavy_partials}),
               LaunchShape{rt::SizeExpr::fixed(kHeavyBlocks), 1, ctx.policy_threads("JoinCount"), false,
                           nodes},
               agent);
  }
  order_check_step(ctx, jc);
  return out;
}

// JoinCountAgent: per left row the range of its right matches, and the counts scanned in the
// same pass (decoupled look-back). Over a sorted left input (`sorted`) each tile narrows its
// searches to the right rows matching its key range and checks a declared order; otherwise
// each row searches all right rows. Returns the per-row lower bounds and offsets; sets `total`.
std::pair<rt::BufferId, rt::BufferId> count_matches(LoweringContext& ctx, const JoinCode& jc,
                                                   rt::SlotId total, bool sorted = true) {
  const Node& n = jc.n;
  const DeviceRelation& L = jc.L;
  const rt::SizeExpr nl = rt::SizeExpr::slot(L.size);
  rt::BufferId lo = ctx.allocate(fmt::format("n{}.lower", n.id), 8, nl, n.id);
  const int64_t ctile =
      static_cast<int64_t>(ctx.policy_threads("JoinCount")) * ctx.policy_items("JoinCount");
  rt::SlotId ctiles = ctx.num_tiles(n.id, L.size, -1, ctile);
  rt::BufferId cstate = ctx.tile_state(n.id, "count_state", ctiles);
  rt::BufferId tot = ctx.allocate(fmt::format("n{}.total", n.id), 8, rt::SizeExpr::fixed(1), n.id);
  rt::BufferId offs = ctx.allocate(fmt::format("n{}.offsets", n.id), 8, nl, n.id);
  KernelParams p;
  // Both sides' row counts may come from device memory (rotate_loop_reads runs the count of
  // a fixpoint's next delta, on either side, before that delta's size is read back; tiles
  // past the left count count nothing).
  const std::string ns = p.device_size(L.size), nr = p.device_size(jc.R.size);
  std::string m = match_members(ctx, jc, p, nr);
  std::string plo = p.buffer(lo, "long long", false),
              po = p.buffer(offs, "long long", false), ts = p.buffer(cstate, "void", false),
              pt = p.buffer(tot, "long long", false);
  std::string name = ctx.kernel_name(n.id, count_name(ctx, L));
  std::vector<CallArg> args = {"temp", ns, nr, cmp_hook(), plo, po, ts, pt, keep_hook()};
  if (sorted)
    for (CallArg& a : order_check_args(jc, p)) args.push_back(std::move(a));
  std::string make = ctx.functor(name + "_fn", p, m);
  SkeletonCall agent(ctx.templates(), "JoinCountAgent", {ctx.tile_policy("JoinCount")}, "Agent");
  std::string body = make + agent.declare() + agent.temp_storage() +
                     agent.call(sorted ? "run" : "run_unsorted", args);
  ctx.kernel(n.id, name, p, body,
             LaunchShape{rt::SizeExpr::slot(ctiles), 1, ctx.policy_threads("JoinCount"), false,
                         LoweringContext::fused_nodes({&jc.L, &jc.R}, n.id)},
             agent);
  if (sorted) order_check_step(ctx, jc);
  ctx.step(rt::ReadSize{total, tot, 0});
  return {lo, offs};
}

// Expansion (join.cuh JoinExpandAgent) of the key matches counted in `lo`/`offs`: each
// block takes a tile of key matches and finds their left rows by a load-balanced search
// over the offsets, so skewed keys spread over many blocks. With a filter the matches are
// compacted like a select (output sized by the key matches, an upper bound; the exact size
// is read back).
DeviceRelation write_expanded(LoweringContext& ctx, NodeId id, const DeviceRelation& rel,
                              rt::SlotId nls, rt::BufferId lo, rt::BufferId offs, rt::SlotId total) {
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
  DeviceRelation out = ctx.allocate_relation(last, rel.types, rt::SizeExpr::slot(total), total);
  KernelParams p;
  std::string keep = filter ? LoweringContext::keep(p, rel, "i, j") : "";
  std::string m = write_member(ctx, p, rel, out);
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
  if (!filter) {
    body += agent.call("run", {"temp", nt, ns, plo, po, write_hook()});
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
                      write_hook(), ts, cn});
  ctx.kernel(id, name, p, body,
             LaunchShape{rt::SizeExpr::slot(etiles), 1, ctx.policy_threads("JoinExpand"), false,
                         v.nodes},
             agent);
  out.size = ctx.new_slot();
  ctx.step(rt::ReadSize{out.size, count, 0});
  return out;
}

}  // namespace

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
  const JoinCode jc = join_code(ctx, n, L, R);
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

  // Inner join. A left input sorted by the join keys (in the comparison's sequence and
  // directions) is matched tile by tile against the right rows of the tile's key range:
  // without a filter on the matches, one JoinMergeAgent kernel writes the output directly
  // (plus JoinHeavyExpandAgent for tiles of heavy keys); with one, JoinCountAgent's
  // per-row ranges and their scan feed the compacting expansion. Which one is known only
  // when the view is materialised (stages after the join may add a filter), so the sorted
  // case emits its kernels then. An unsorted left input counts now (JoinCountAgent's
  // run_unsorted: searches over all right rows and the scan in one kernel).
  const bool left_sorted =
      passes::left_ordered_by_join_keys(ctx.physical(n.inputs.at(0)).order, n, ctx.physical(n.id));
  internal_check(!R.unverified && (!L.unverified || left_sorted),
                 "a join was left the check of an input order it does not merge by");
  const rt::SlotId total = ctx.new_slot();
  rt::BufferId lo = -1, offs = -1;
  if (!left_sorted) {
    // JoinCountAgent without the narrowing to a tile's key range: each row's two searches
    // over all right rows and the scan of the counts in one pass (decoupled look-back).
    std::tie(lo, offs) = count_matches(ctx, jc, total, /*sorted=*/false);
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
  const bool one_pass = ctx.options().one_pass_merge_join;
  // A global reduce fused after the join (and the selects and projects between them): the
  // one-pass merge folds the matches the view keeps (passes/fuse_pipelines.cpp).
  if (left_sorted && one_pass && !residual)
    v.fold = [id, L, R](LoweringContext& ctx, const DeviceRelation& rel, const FoldSpec& spec) {
      return fold_merge(ctx, join_code(ctx, ctx.program().node(id), L, R), rel, spec);
    };
  // Materialisation. Always dense: the expansion needs the per-row ranges anyway
  // (plan_paged_edges.h).
  v.materialize = [id, L, R, lo, offs, total, left_sorted, one_pass](
                      LoweringContext& ctx, const DeviceRelation& rel, bool /*paged*/) {
    const RowView& v = *rel.view;
    const bool filter = !v.keep_fn.empty();
    const Node& n = ctx.program().node(id);
    const JoinCode jc = join_code(ctx, n, L, R);
    if (left_sorted && !filter && one_pass) return write_merge(ctx, jc, rel, total);
    rt::BufferId lo2 = lo, offs2 = offs;
    if (left_sorted) std::tie(lo2, offs2) = count_matches(ctx, jc, total);
    return write_expanded(ctx, id, rel, L.size, lo2, offs2, total);
  };
  ctx.set_relation(n.id, make_view(std::move(v), std::move(types), total));
}

}  // namespace ranc::codegen
