// Lowering of an inner join as a partitioned hash join (hash_join.cuh, paper 004), chosen
// by physical planning (PhysicalNode::join == Hash). The right input is the build side,
// the left the probe side, so the output columns are left then right non-key columns as
// the schema says. Steps, in the order hash_join.cuh documents:
//   n<id>_hash_setup:  radix bits and partitions = 2^bits, read back into slots (the
//                      plan's SizeExpr cannot take a log2 on the host; the tile counts of
//                      both sides are SizeExpr::tiles). The bits come from the build size
//                      (hash_join.cuh's rule: average build partition within one table
//                      chunk) and also from the probe size, so that a large left input
//                      joined with a small right one is still probed by many blocks.
//   per side X in {left, right}:
//     n<id>_hash_hist_X -> ScanInt64 -> n<id>_hash_scatter_X: the packed key and row id
//                      of every row, stably in partition order.
//   n<id>_hash_count:  one block per partition builds the right keys into a shared-memory
//                      table and probes it with the left keys, counting the matches that
//                      pass the residual -> ScanInt64 -> read the total.
//   n<id>_hash_write:  the same, writing every output attribute of each match from the
//                      original (left row, right row) directly into the output columns.
// Or, when plan_paged_edges makes the output a paged list (its consumers all stream it):
//   n<id>_hash_paged:  one pass (build, probe, write into pages claimed per block) after
//                      reading back the left rows kept, the capacity estimate; the runtime
//                      reruns it once with exact capacity if the matches need more pages.
// The join's output is a view over the matches (left row, right row), so select and
// project stages after the join are evaluated in the count and write kernels (a select
// joins the residual); the two kernels are emitted when the view is materialised. Either
// input may be a view over row numbers (select/project fused into the partitioning):
// rows it drops are not partitioned.
// Keys are packed into one 32- or 64-bit word (passes::hash_join_key_bits): integers,
// dates, string codes and bools as unsigned values, floats by total_order_key so that two
// keys are equal exactly when their bits are (the IR's key semantics). The residual is
// evaluated on the original rows, found through the partitioned row ids. The output has
// no order.
#include "hash_lowering.h"

namespace ranc::codegen {
namespace {

// C++ expression: key attribute `c` of `rel` at row `row` as an unsigned word.
std::string key_word(KernelParams& p, const DeviceRelation& rel, int32_t c, std::string_view row) {
  const Type t = rel.types[static_cast<size_t>(c)];
  std::string v = fmt::format("(({}){})", storage_ctype(t),
                              LoweringContext::raw(p, rel, static_cast<size_t>(c), row));
  switch (t) {
    case Type::F32:
    case Type::F64:
      return fmt::format("ranc::tpl::total_order_key({})", v);
    case Type::Bool:
      return fmt::format("({} != 0 ? 1u : 0u)", v);
    case Type::I64:
      return fmt::format("(unsigned long long){}", v);
    default:
      return fmt::format("(unsigned int){}", v);
  }
}

// C++ expression: the packed key of row `row` of `rel` (one word, or two 32-bit words).
std::string packed_key(KernelParams& p, const DeviceRelation& rel, const std::vector<int32_t>& cols,
                       std::string_view row) {
  if (cols.size() == 1) return key_word(p, rel, cols[0], row);
  return fmt::format("((unsigned long long){} << 32) | {}", key_word(p, rel, cols[0], row),
                     key_word(p, rel, cols[1], row));
}

// One input of the join and, once partitioned, its buffers.
struct Side {
  DeviceRelation rel;
  std::vector<int32_t> key_cols;
  std::string_view name;      // "left" or "right"
  rt::SlotId tiles = -1;      // partitioning tiles (HashPart)
  rt::BufferId offsets = -1;  // scanned histogram: parts * tiles + 1 int64
  rt::BufferId keys = -1;     // packed keys in partition order
  rt::BufferId rows = -1;     // original row ids in partition order (uint32)
};

struct HashJoinCode {
  LoweringContext& ctx;
  const Node& n;
  Side left, right;
  std::string key_t;  // "unsigned int" or "unsigned long long"
  int32_t key_size = 4;
  rt::SlotId bits = -1, parts = -1;

  // Histogram, its scan and the scatter of one side.
  void partition(Side& s) {
    const int32_t threads = ctx.policy_threads("HashPart");
    const int64_t tile = static_cast<int64_t>(threads) * ctx.policy_items("HashPart");
    const rt::SizeExpr rows = rt::SizeExpr::slot(s.rel.size);
    const rt::SizeExpr cells{0, {rt::SizeTerm{1, {parts, s.tiles}}}};
    SkeletonCall agent(ctx.templates(), "HashPartitionAgent", {ctx.tile_policy("HashPart")},
                       "Agent");
    agent.bind("KeyT", key_t);
    const std::string agent_decl = agent.declare() + agent.temp_storage();
    const HookArg key = HookArg::lambda(key_t, {{"long long", "i"}}, " return f.key(i); ");
    const HookArg keep = HookArg::lambda("bool", {{"long long", "i"}}, " return f.keep(i); ");
    rt::BufferId hist = ctx.allocate(fmt::format("n{}.{}_hist", n.id, s.name), 8, cells, n.id);
    {
      KernelParams p;
      std::string ns = p.slot(s.rel.size), nb = p.slot(bits),
                  ph = p.buffer(hist, "long long", false);
      std::string name = ctx.kernel_name(n.id, fmt::format("{}hash_hist_{}", prefix(s), s.name));
      std::string make = ctx.functor(name + "_fn", p, key_member(p, s));
      std::string body =
          make + agent_decl + agent.call("histogram", {"temp", ns, key, nb, ph, keep});
      ctx.kernel(n.id, name, p, body,
                 LaunchShape{rt::SizeExpr::slot(s.tiles), 1, threads, false,
                             LoweringContext::fused_nodes({&s.rel}, n.id)},
                 agent);
    }
    s.offsets = ctx.allocate(fmt::format("n{}.{}_part_offsets", n.id, s.name), 8,
                             rt::SizeExpr{1, cells.terms}, n.id);
    ctx.step(rt::ScanInt64{hist, s.offsets, cells, n.id});
    s.keys = ctx.allocate(fmt::format("n{}.{}_keys", n.id, s.name), key_size, rows, n.id);
    s.rows = ctx.allocate(fmt::format("n{}.{}_rows", n.id, s.name), 4, rows, n.id);
    {
      KernelParams p;
      std::string ns = p.slot(s.rel.size), nb = p.slot(bits), po = p.buffer(s.offsets, "long long"),
                  pk = p.buffer(s.keys, key_t, false), pr = p.buffer(s.rows, "unsigned int", false);
      std::string name = ctx.kernel_name(n.id, fmt::format("{}hash_scatter_{}", prefix(s), s.name));
      std::string make = ctx.functor(name + "_fn", p, key_member(p, s));
      std::string body =
          make + agent_decl + agent.call("scatter", {"temp", ns, key, nb, po, pk, pr, keep});
      // Skipped when the side is empty; otherwise the grid is the histogram's.
      ctx.kernel(
          n.id, name, p, body,
          LaunchShape{rows, tile, threads, true, LoweringContext::fused_nodes({&s.rel}, n.id)},
          agent);
    }
  }

  // "select_project_" when a fused chain feeds the side, for kernel names.
  std::string prefix(const Side& s) const {
    return s.rel.view ? s.rel.view->op_names(ctx.program()) + "_" : "";
  }

  std::string key_member(KernelParams& p, const Side& s) const {
    return fmt::format(
        "  __device__ __forceinline__ {} key(long long i) const {{ return {}; }}\n"
        "  __device__ __forceinline__ bool keep(long long i) const {{ return {}; }}\n",
        key_t, packed_key(p, s.rel, s.key_cols, "i"), LoweringContext::keep(p, s.rel, "i"));
  }

  // Registers the parameters of HashJoinAgent::run and returns its arguments from `bits`
  // through `r_tiles`.
  std::vector<CallArg> join_args(KernelParams& p) const {
    std::vector<CallArg> args = {p.slot(bits)};
    for (const Side* s : {&left, &right}) {
      // Registered last argument first (the kernels' parameter order since the first hash join).
      std::string tiles = p.slot(s->tiles), offsets = p.buffer(s->offsets, "long long"),
                  keys = p.buffer(s->keys, key_t), size = p.slot(s->rel.size);
      for (std::string* a : {&size, &keys, &offsets, &tiles}) args.emplace_back(std::move(*a));
    }
    return args;
  }

  // The hook passed to the agent for the view's filter (residual and fused selects),
  // evaluated on the original rows found through the partitioned row ids.
  HookArg filter_hook(KernelParams& p, const DeviceRelation& view) const {
    if (view.view->keep_fn.empty()) return HookArg::stock("NoResidual");
    std::string lr = p.buffer(left.rows, "unsigned int"), rr = p.buffer(right.rows, "unsigned int");
    p.use(*view.view);
    return HookArg::lambda(
        "bool", {{"long long", "lpos"}, {"long long", "rpos"}},
        fmt::format(" const long long i = {}[lpos], j = {}[rpos]; return f.{}(i, "
                    "j); ",
                    lr, rr, view.view->keep_fn));
  }
  static HookArg emit_hook() {
    return HookArg::lambda("void",
                           {{"long long", "lpos"}, {"long long", "rpos"}, {"long long", "o"}},
                           " f.emit(lpos, rpos, o); ");
  }
  // HashJoinAgent's arguments in order: `lead`, the partitions (join_args), the residual,
  // emit, then `rest`.
  static std::vector<CallArg> join_call(std::vector<CallArg> lead, std::vector<CallArg> parts,
                                        HookArg residual, HookArg emit, std::vector<CallArg> rest) {
    for (CallArg& a : parts) lead.push_back(std::move(a));
    lead.emplace_back(std::move(residual));
    lead.emplace_back(std::move(emit));
    for (CallArg& a : rest) lead.push_back(std::move(a));
    return lead;
  }

  std::vector<int32_t> rest_of_right() const {
    std::vector<int32_t> rest;
    for (size_t c = 0; c < right.rel.types.size(); ++c)
      if (std::find(n.right_key_index.begin(), n.right_key_index.end(), static_cast<int32_t>(c)) ==
          n.right_key_index.end())
        rest.push_back(static_cast<int32_t>(c));
    return rest;
  }

  SkeletonCall join_agent() const {
    return SkeletonCall(ctx.templates(), "HashJoinAgent", {ctx.tile_policy("HashJoin"), key_t},
                        "Agent");
  }
  LaunchShape join_launch() const {
    return LaunchShape{rt::SizeExpr::slot(parts), 1, ctx.policy_threads("HashJoin"), false};
  }

  // The functor member that writes every output attribute of the match at partitioned
  // positions (lpos, rpos) to output row (or page handle) o of `out`.
  std::string emit_member(KernelParams& p, const DeviceRelation& view,
                          const DeviceRelation& out) const {
    std::string lr = p.buffer(left.rows, "unsigned int"), rr = p.buffer(right.rows, "unsigned int");
    return fmt::format(
        "  __device__ __forceinline__ void emit(long long lpos, long long rpos, long long o) "
        "const {{\n    const long long i = {}[lpos], j = {}[rpos];\n{}  }}\n",
        lr, rr, ctx.copy_row(p, view, "i, j", out, "o"));
  }

  // One pass writing a paged list (paged.cuh): build and probe each partition once,
  // each warp claiming pages for its matches. The capacity estimate is the left rows
  // the partitioning kept (a foreign-key join's output at most) plus one partial page
  // per warp of every partition's block; when the matches need more, the runtime grows the pages to the
  // exact count the first run claimed and runs the kernel again (rt::Regrow).
  DeviceRelation write_paged(const DeviceRelation& rel) {
    const RowView& v = *rel.view;
    const NodeId id = n.id;
    const Node& last = ctx.program().node(v.nodes.back());
    const std::string ops = v.op_names(ctx.program());
    const int64_t R = ctx.options().page_rows;
    rt::SlotId kept_at = ctx.new_slot();
    ctx.step(rt::SetSize{kept_at, rt::SizeExpr{0, {rt::SizeTerm{1, {parts, left.tiles}}}}});
    const rt::SlotId kept = ctx.read_element(id, left.offsets, kept_at);
    const rt::SlotId cap = ctx.new_slot();
    const int64_t chains = ctx.policy_threads("HashJoin") / 32 * R;  // a partial page per warp
    rt::SizeExpr capx{0, {rt::SizeTerm{1, {kept}}, rt::SizeTerm{chains, {parts}}}, R};
    capx.at_least = 1;
    ctx.step(rt::SetSize{cap, capx});
    DeviceRelation out =
        ctx.allocate_relation(last, rt::SizeExpr{0, {rt::SizeTerm{R, {cap}}}}, -1);
    const rt::SizeExpr pages = rt::SizeExpr::slot(cap);
    rt::BufferId page_rows = ctx.allocate(fmt::format("n{}.page_rows", last.id), 4, pages, id);
    rt::BufferId page_next = ctx.allocate(fmt::format("n{}.page_next", last.id), 4, pages, id);
    const int64_t warps = ctx.policy_threads("HashJoin") / 32;  // one chain of pages each
    rt::BufferId heads = ctx.allocate(fmt::format("n{}.page_heads", last.id), 4,
                                      rt::SizeExpr{0, {rt::SizeTerm{warps, {parts}}}}, id);
    rt::BufferId header =
        ctx.allocate(fmt::format("n{}.page_header", last.id), 8, rt::SizeExpr::fixed(4), id, true);
    const rt::SlotId claimed = ctx.new_slot();
    {
      KernelParams p;
      std::vector<CallArg> args = join_args(p);
      HookArg hook = filter_hook(p, rel);
      std::string pr = p.buffer(page_rows, "int", false), pn = p.buffer(page_next, "int", false),
                  ph = p.buffer(heads, "int", false), hd = p.buffer(header, "long long", false),
                  pc = p.slot(cap);
      std::string member = emit_member(p, rel, out);
      std::string name = ctx.kernel_name(v.nodes.back(), ops + "_hash_paged");
      std::string make = ctx.functor(name + "_fn", p, member);
      SkeletonCall agent = join_agent();
      std::string body =
          make + agent.declare() + agent.temp_storage() +
          fmt::format("  const ranc::tpl::PagedOut out{{{}, {}, {}, {}, {}}};\n", pr, pn, ph, hd,
                      pc) +
          agent.call("run_paged",
                     join_call({"temp", "out"}, std::move(args), hook, emit_hook(), {}),
                     {std::to_string(R)});
      LaunchShape shape = join_launch();
      shape.nodes = v.nodes;
      rt::Regrow g;
      g.header = header;
      g.index = 0;
      g.capacity = cap;
      g.needed = claimed;
      g.grow = out.columns;
      g.grow.push_back(page_rows);
      g.grow.push_back(page_next);
      shape.regrow = g;
      ctx.kernel(id, name, p, body, shape, agent);
    }
    // The paged list as a view over its page slots.
    rt::SlotId slots = ctx.new_slot();
    ctx.step(rt::SetSize{slots, rt::SizeExpr{0, {rt::SizeTerm{R, {claimed}}}}});
    RowView pv;
    pv.paged = true;
    pv.owner = last.id;
    for (rt::BufferId b : out.columns) pv.attrs.push_back(ViewAttr{b, ""});
    pv.keep_fn = fmt::format("v{}_paged", last.id);
    pv.deps.add_member(pv.keep_fn,
                       fmt::format("  __device__ __forceinline__ bool {}(long long i) const {{ "
                                   "return ranc::tpl::paged_keep<{}>({}, i); }}\n",
                                   pv.keep_fn, R, pv.deps.buffer(page_rows, "int")));
    pv.filters = true;
    return make_view(std::move(pv), out.types, slots);
  }
};

}  // namespace

void lower_hash_join(LoweringContext& ctx, const Node& n) {
  // Both inputs are streamed once by the partitioning: views over row numbers fuse.
  auto streamed = [&](DeviceRelation r) {
    if (r.view && r.view->source != RowView::Source::Index) r = ctx.dense(r);
    return r;
  };
  const DeviceRelation L = streamed(ctx.relation(n.inputs.at(0)));
  const DeviceRelation R = streamed(ctx.relation(n.inputs.at(1)));
  std::vector<Type> key_types;
  for (int32_t c : n.right_key_index) key_types.push_back(R.types.at(static_cast<size_t>(c)));
  const int key_bits = passes::hash_join_key_bits(key_types);
  internal_check(n.join_kind == JoinKind::Inner && key_bits != 0,
                 "hash join planned for a join it cannot run");
  auto hjp = std::make_shared<HashJoinCode>(HashJoinCode{ctx,
                                                         n,
                                                         Side{L, n.left_key_index, "left"},
                                                         Side{R, n.right_key_index, "right"},
                                                         key_bits == 64 ? "unsigned long long"
                                                                        : "unsigned int",
                                                         key_bits / 8});
  HashJoinCode& hj = *hjp;

  // Radix bits and partitions (read back), partitioning tiles of both sides.
  {
    rt::BufferId setup =
        ctx.allocate(fmt::format("n{}.hash_setup", n.id), 8, rt::SizeExpr::fixed(2), n.id);
    KernelParams p;
    std::string nl = p.slot(L.size), nr = p.slot(R.size), out = p.buffer(setup, "long long", false);
    std::string body = fmt::format(
        "  // The fewest radix bits (at most kMaxRadixBits) that bring the average build\n"
        "  // partition within one shared-memory table chunk and the average probe\n"
        "  // partition within 32 rows per thread of the block that probes it.\n"
        "  if (blockIdx.x == 0 && threadIdx.x == 0) {{\n"
        "    const long long chunk = {1}::kChunk;\n"
        "    const long long probe = 32ll * {0}::block_threads;\n"
        "    long long bits = 0;\n"
        "    while (bits < ranc::tpl::kMaxRadixBits && ((chunk << bits) < {3} || (probe << bits) < "
        "{2}))\n"
        "      ++bits;\n"
        "    {4}[0] = bits;\n"
        "    {4}[1] = 1ll << bits;\n"
        "  }}\n",
        ctx.policy("HashJoin"), hj.join_agent().type(), nl, nr, out);
    ctx.kernel(n.id, ctx.kernel_name(n.id, "hash_setup"), p, body,
               LaunchShape{rt::SizeExpr::fixed(1), 1, 32, false});
    hj.bits = ctx.new_slot();
    ctx.step(rt::ReadSize{hj.bits, setup, 0});
    hj.parts = ctx.new_slot();
    ctx.step(rt::ReadSize{hj.parts, setup, 1});
    const int64_t tile =
        static_cast<int64_t>(ctx.policy_threads("HashPart")) * ctx.policy_items("HashPart");
    hj.left.tiles = ctx.num_tiles(n.id, L.size, -1, tile);
    hj.right.tiles = ctx.num_tiles(n.id, R.size, -1, tile);
  }

  hj.partition(hj.left);
  hj.partition(hj.right);

  // The output: a view over the matches (original left row i, right row j).
  RowView v;
  v.source = RowView::Source::HashJoin;
  KernelParams& d = v.deps;
  std::vector<Type> types;
  const std::vector<int32_t> right_rest = hj.rest_of_right();
  add_join_attrs(v, types, n.id, L, R, right_rest);
  if (n.predicate.ptr()) {
    std::string pred = ctx.expr(n.predicate.ptr(), d, [&](int32_t c) {
      if (static_cast<size_t>(c) < L.types.size())
        return LoweringContext::load(d, L, static_cast<size_t>(c), "i");
      return LoweringContext::load(
          d, R, static_cast<size_t>(right_rest.at(static_cast<size_t>(c) - L.types.size())), "j");
    });
    const std::string fn = fmt::format("v{}_keep", n.id);
    d.add_member(fn, fmt::format("  __device__ __forceinline__ bool {}(long long i, long long j) "
                                 "const {{ return {}; }}\n",
                                 fn, pred));
    v.keep_fn = fn;
    v.filters = true;
  }
  v.nodes.push_back(n.id);
  const NodeId id = n.id;
  // Matches per partition (passing the view's filter), their scan and the total; then
  // every output attribute of every match written directly.
  v.materialize = [hjp, id](LoweringContext& ctx, const DeviceRelation& rel, bool paged) {
    HashJoinCode& hj = *hjp;
    if (paged) return hj.write_paged(rel);
    const RowView& v = *rel.view;
    const Node& last = ctx.program().node(v.nodes.back());
    const std::string ops = v.op_names(ctx.program());
    const rt::SizeExpr parts_plus_1{1, {rt::SizeTerm{1, {hj.parts}}}};
    rt::BufferId counts = ctx.allocate(fmt::format("n{}.part_counts", id), 8, parts_plus_1, id);
    {
      KernelParams p;
      std::vector<CallArg> args = hj.join_args(p);
      std::string pc = p.buffer(counts, "long long", false);
      HookArg hook = hj.filter_hook(p, rel);
      std::string name = ctx.kernel_name(v.nodes.back(), ops + "_hash_count");
      std::string make = ctx.functor(name + "_fn", p, "");
      SkeletonCall agent = hj.join_agent();
      std::string body =
          make + agent.declare() + agent.temp_storage() +
          agent.call("run",
                     HashJoinCode::join_call({"temp"}, std::move(args), hook,
                                             HookArg::stock("NoJoinEmit"), {pc, "nullptr"}),
                     {"true"});
      LaunchShape shape = hj.join_launch();
      shape.nodes = v.nodes;
      ctx.kernel(id, name, p, body, shape, agent);
    }
    rt::BufferId offsets = ctx.allocate(fmt::format("n{}.part_out_offsets", id), 8,
                                        rt::SizeExpr{2, {rt::SizeTerm{1, {hj.parts}}}}, id);
    ctx.step(rt::ScanInt64{counts, offsets, parts_plus_1, id});
    rt::SlotId total = ctx.read_element(id, offsets, hj.parts);
    DeviceRelation out = ctx.allocate_relation(last, rt::SizeExpr::slot(total), total);
    {
      KernelParams p;
      std::vector<CallArg> args = hj.join_args(p);
      std::string po = p.buffer(offsets, "long long");
      HookArg hook = hj.filter_hook(p, rel);
      std::string member = hj.emit_member(p, rel, out);
      std::string name = ctx.kernel_name(v.nodes.back(), ops + "_hash_write");
      std::string make = ctx.functor(name + "_fn", p, member);
      SkeletonCall agent = hj.join_agent();
      std::string body =
          make + agent.declare() + agent.temp_storage() +
          agent.call("run",
                     HashJoinCode::join_call({"temp"}, std::move(args), hook,
                                             HashJoinCode::emit_hook(), {"nullptr", po}),
                     {"false"});
      LaunchShape shape = hj.join_launch();
      shape.nodes = v.nodes;
      ctx.kernel(id, name, p, body, shape, agent);
    }
    return out;
  };
  ctx.set_relation(n.id, make_view(std::move(v), std::move(types), L.size));
}

}  // namespace ranc::codegen
