// Lowering of reduce.
// With group keys, the input is grouped by them (physical planning), so the single-pass
// segmented reduction of reduce.cuh applies:
//   1. init:   tile states for the decoupled look-back over group-head counts;
//   2. reduce: ReduceAgent, one block per tile: head flags, a block-wide segmented scan
//              of the aggregate states, global group numbers by look-back; groups that
//              end inside the tile are written directly, partial states of groups that
//              cross a tile boundary go to carry/tail;
//   3. fixup:  ReduceFixupAgent, one thread per tile, finishes the crossing groups.
// The output columns are sized by the upper bound (the input size) and the number of
// groups is read back, so the input is read once. A fused project (a view that keeps
// every row) is read through its member functions; a view with a filter is
// materialised first (a dropped row could leave a group empty).
// Without group keys: GlobalReduceAgent (reduce.cuh), at the end of any pipeline over
// row numbers: a fused select/project chain is evaluated row by row inside the reduce
// (rows the chain drops are not folded), each block writes a partial state, and one
// block merges them and writes the single output row when some row was kept (a reduce
// with no group keys over no rows yields no tuple).
// Semantics as the reference: integer sums wrap (uint64), float sums and avg in f64,
// min/max by the total order, count counts tuples.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {
namespace {

// The aggregate state struct, its hooks and the statements writing output row g
// (aggregates only; `first` is the group's first row, for the key columns).
struct AggCode {
  std::string fields = "  long long rows;\n", init = "    s.rows = 0;\n",
              acc = "    ++s.rows;\n", merge = "    a.rows += b.rows;\n", write;
  int64_t state_words = 1;  // upper bound on sizeof(State) / 8
};

AggCode aggregate_code(LoweringContext& ctx, const Node& n, const DeviceRelation& in,
                       const DeviceRelation& out, KernelParams& p) {
  AggCode a;
  const size_t nk = n.group_key_index.size();
  auto attr = [&](int32_t c) { return LoweringContext::load(p, in, static_cast<size_t>(c), "r"); };
  a.state_words = 1 + static_cast<int64_t>(n.aggregates.size()) * 2;
  for (size_t k = 0; k < n.aggregates.size(); ++k) {
    const Aggregate& ag = n.aggregates[k];
    const Type ot = n.schema[nk + k].type;
    std::string dst = p.buffer(out.columns[nk + k], storage_ctype(ot), false);
    if (ag.func == AggFunc::Count) {
      a.write += fmt::format("    {}[g] = s.rows;\n", dst);
      continue;
    }
    const Type at = *ag.arg->type;
    std::string v = ctx.expr(ag.arg.ptr(), p, attr);
    std::string f = fmt::format("a{}", k), h = fmt::format("h{}", k);
    switch (ag.func) {
      case AggFunc::Sum:
      case AggFunc::Avg:
        if (is_floating(at) || ag.func == AggFunc::Avg) {
          a.fields += fmt::format("  double {};\n", f);
          a.acc += fmt::format("    s.{} += (double)({});\n", f, v);
        } else {
          a.fields += fmt::format("  unsigned long long {};\n", f);
          a.acc += fmt::format("    s.{} += (unsigned long long)(long long)({});\n", f, v);
        }
        a.init += fmt::format("    s.{} = 0;\n", f);
        a.merge += fmt::format("    a.{0} += b.{0};\n", f);
        if (ag.func == AggFunc::Avg)
          a.write += fmt::format("    {}[g] = s.{} / (double)s.rows;\n", dst, f);
        else
          a.write += fmt::format("    {}[g] = ({})s.{};\n", dst, value_ctype(ot), f);
        break;
      case AggFunc::Min:
      case AggFunc::Max: {
        // Every group has a row, so the state of a finished group always has a value;
        // `has` marks states of empty stretches (identity).
        const char* better = ag.func == AggFunc::Min ? "<" : ">";
        auto ct = value_ctype(at);
        a.fields += fmt::format("  {} {};\n  bool {};\n", ct, f, h);
        a.init += fmt::format("    s.{} = ({})0;\n    s.{} = false;\n", f, ct, h);
        a.acc += fmt::format(
            "    {{ const {0} v = {1}; if (!s.{3} || ranc::tpl::cmp3(v, s.{2}) {4} 0) {{ s.{2} = "
            "v; s.{3} = true; }} }}\n",
            ct, v, f, h, better);
        a.merge += fmt::format(
            "    if (b.{1} && (!a.{1} || ranc::tpl::cmp3(b.{0}, a.{0}) {2} 0)) {{ a.{0} = b.{0}; "
            "a.{1} = true; }}\n",
            f, h, better);
        a.write += fmt::format("    {}[g] = ({})s.{};\n", dst, storage_ctype(ot), f);
        break;
      }
      case AggFunc::Count:
        break;
    }
  }
  return a;
}

// The member functions of the Agg hook (reduce.cuh's ReduceHooks::Agg), each forwarding to
// the functor's member of the same name.
struct AggMethod {
  const char* name;
  registry::Signature sig;
  const char* call;
};
const std::vector<AggMethod>& agg_methods() {
  static const std::vector<AggMethod> m = {
      {"init", {"State", {}}, "return f->init();"},
      {"accumulate", {"void", {{"State&", "s"}, {"long long", "r"}}}, "f->accumulate(s, r);"},
      {"merge", {"void", {{"State&", "a"}, {"const State&", "b"}}}, "f->merge(a, b);"}};
  return m;
}

// The Agg hook struct over the functor `fn`'s members, defined as `agg` in a kernel body.
std::string agg_hooks(const std::string& fn, const std::string& st) {
  std::string s = "  struct Agg {\n    const " + fn + "* f;\n    using State = " + st + ";\n";
  for (const AggMethod& m : agg_methods()) {
    std::string ps;
    for (const auto& p : m.sig.params)
      ps += fmt::format("{}{} {}", ps.empty() ? "" : ", ", p.type, p.name);
    s += fmt::format("    __device__ __forceinline__ {} {}({}) const {{ {} }}\n", m.sig.ret, m.name,
                     ps, m.call);
  }
  return s + "  } agg{&f};\n";
}
// The same object as a hook argument (SkeletonCall checks it against the registry).
HookArg agg_object(const std::string& st) {
  std::vector<std::pair<std::string, registry::Signature>> methods;
  for (const AggMethod& m : agg_methods()) methods.emplace_back(m.name, m.sig);
  return HookArg::object("agg", {{"State", st}}, std::move(methods));
}

std::string state_members(const std::string& st, const AggCode& a) {
  return fmt::format(
      "  using State = {0};\n"
      "  __device__ __forceinline__ State init() const {{\n    State s;\n{1}    return s;\n  }}\n"
      "  __device__ __forceinline__ void accumulate(State& s, long long r) const {{\n{2}  }}\n"
      "  __device__ __forceinline__ void merge(State& a, const State& b) const {{\n{3}  }}\n",
      st, a.init, a.acc, a.merge);
}

void lower_global_reduce(LoweringContext& ctx, const Node& n, const DeviceRelation& in) {
  DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::fixed(1), -1);
  const std::vector<NodeId> nodes = LoweringContext::fused_nodes({&in}, n.id);
  const std::string what = in.view ? in.view->op_names(ctx.program()) + "_reduce" : "reduce";
  const int64_t tile = static_cast<int64_t>(ctx.policy_threads("Map")) * ctx.policy_items("Map");
  rt::SlotId tiles = ctx.num_tiles(n.id, in.size, -1, tile);
  rt::BufferId count =
      ctx.allocate(fmt::format("n{}.count", n.id), 8, rt::SizeExpr::fixed(1), n.id);
  KernelParams p;
  AggCode a = aggregate_code(ctx, n, in, out, p);
  rt::BufferId partials = ctx.allocate(fmt::format("n{}.partials", n.id), 8,
                                       rt::SizeExpr{0, {rt::SizeTerm{a.state_words, {tiles}}}},
                                       n.id);
  const std::string keep = LoweringContext::keep(p, in, "i");
  const std::string name = ctx.kernel_name(n.id, what);
  const std::string st = name + "_state";
  ctx.emit(fmt::format("struct alignas(8) {} {{\n{}}};\n", st, a.fields));
  std::string ns = p.slot(in.size), nt = p.slot(tiles), pp = p.buffer(partials, "void", false),
              cnt = p.buffer(count, "long long", false);
  std::string members =
      state_members(st, a) +
      fmt::format("  __device__ __forceinline__ bool keep(long long i) const {{ return {}; }}\n"
                  "  __device__ __forceinline__ void write(const State& s) const {{\n"
                  "    {}[0] = s.rows > 0 ? 1 : 0;\n    if (s.rows == 0) return;\n"
                  "    const long long g = 0;\n{}  }}\n",
                  keep, cnt, a.write);
  std::string make = ctx.functor(name + "_fn", p, members);
  ctx.emit(fmt::format("static_assert(sizeof({}) <= {} * 8, \"reduce state larger than its "
                       "partial slot\");\n",
                       st, a.state_words));
  const std::string hooks = agg_hooks(name + "_fn", st);
  SkeletonCall agent(ctx.templates(), "GlobalReduceAgent", {ctx.tile_policy("Map")}, "Agent");
  agent.bind("State", st);
  ctx.kernel(
      n.id, name, p,
      make + hooks + agent.declare() + agent.temp_storage() +
          agent.call("run", {"temp", ns,
                             HookArg::lambda("bool", {{"long long", "i"}}, " return f.keep(i); "),
                             agg_object(st), pp}),
      LaunchShape{rt::SizeExpr::slot(tiles), 1, ctx.policy_threads("Map"), false, nodes}, agent);
  SkeletonCall finish(ctx.templates(), "GlobalReduceFinish", {"256"}, "Finish");
  finish.bind("State", st);
  ctx.kernel(n.id, ctx.kernel_name(n.id, "reduce_finish"), p,
             make + hooks + finish.declare() + finish.temp_storage() +
                 finish.call("run", {"temp", nt, agg_object(st), pp,
                                     HookArg::lambda("void", {{fmt::format("const {}&", st), "s"}},
                                                     " f.write(s); ")}),
             LaunchShape{rt::SizeExpr::fixed(1), 1, 256, false}, finish);
  out.size = ctx.new_slot();
  ctx.step(rt::ReadSize{out.size, count, 0});
  ctx.set_relation(n.id, out);
}

}  // namespace

void lower_reduce(LoweringContext& ctx, const Node& n) {
  DeviceRelation in = ctx.relation(n.inputs.at(0));
  const size_t nk = n.group_key_index.size();
  if (in.view && (in.view->source != RowView::Source::Index || (nk > 0 && in.view->filters)))
    in = ctx.dense(in);
  if (nk == 0) {
    lower_global_reduce(ctx, n, in);
    return;
  }
  const auto& keys = ctx.physical(n.id).compare_keys;
  const std::vector<NodeId> nodes = LoweringContext::fused_nodes({&in}, n.id);
  const std::string what = in.view ? in.view->op_names(ctx.program()) + "_reduce" : "reduce";

  DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::slot(in.size), -1);

  const int64_t tile =
      static_cast<int64_t>(ctx.policy_threads("Reduce")) * ctx.policy_items("Reduce");
  rt::SlotId tiles = ctx.num_tiles(n.id, in.size, -1, tile);
  rt::BufferId state = ctx.tile_state(n.id, "tile_state", "reduce_init", tiles);
  rt::BufferId meta = ctx.allocate(fmt::format("n{}.meta", n.id), 8,
                                   rt::SizeExpr{0, {rt::SizeTerm{3, {tiles}}}}, n.id);
  rt::BufferId count =
      ctx.allocate(fmt::format("n{}.count", n.id), 8, rt::SizeExpr::fixed(1), n.id);

  KernelParams p;
  AggCode a = aggregate_code(ctx, n, in, out, p);
  // A view's checks (a fused project's divisions) run for every row it folds.
  const std::string keep = LoweringContext::keep(p, in, "r");
  if (keep != "true") a.acc = fmt::format("    (void){};\n", keep) + a.acc;
  std::string write;
  for (size_t k = 0; k < nk; ++k) {
    size_t c = static_cast<size_t>(n.group_key_index[k]);
    auto ct = storage_ctype(in.types[c]);
    write += fmt::format("    {}[g] = ({}){};\n", p.buffer(out.columns[k], ct, false), ct,
                         LoweringContext::raw(p, in, c, "first"));
  }
  write += a.write;
  std::string same = "    return true;\n";
  if (in.unverified) {
    // The input's declared order is checked here (lower_input left it to this reduce):
    // row j = i - 1 must not order after row i.
    std::vector<int32_t> cols;
    std::vector<bool> desc;
    for (const auto& k : keys) {
      cols.push_back(k.index);
      desc.push_back(k.descending);
    }
    same = fmt::format(
        "    const int c = [&](long long i, long long j) {{\n{}    }}(j, i);\n"
        "    if (c > 0) {}[0] = 1;\n    return c == 0;\n",
        LoweringContext::compare_body(p, in, "i", cols, in, "j", cols, desc),
        p.buffer(in.unverified->flag, "int", false));
  } else if (!keys.empty()) {
    same.clear();
    for (const auto& k : keys) {
      size_t c = static_cast<size_t>(k.index);
      auto ct = storage_ctype(in.types[c]);
      same += fmt::format("    if (!ranc::tpl::total_equal(({0}){1}, ({0}){2})) return false;\n", ct,
                          LoweringContext::raw(p, in, c, "i"), LoweringContext::raw(p, in, c, "j"));
    }
    same += "    return true;\n";
  }
  const std::string name = ctx.kernel_name(n.id, what);
  const std::string st = name + "_state";
  ctx.emit(fmt::format("struct alignas(8) {} {{\n{}}};\n", st, a.fields));
  std::string members =
      state_members(st, a) +
      fmt::format(
          "  __device__ __forceinline__ bool same(long long i, long long j) const {{\n{0}  }}\n"
          "  __device__ __forceinline__ void write(long long g, long long first, const State& s) "
          "const {{\n{1}  }}\n",
          same, write);
  // Kernel parameters shared by the reduce and fixup kernels (the functor's fields).
  std::string ns = p.slot(in.size), ts = p.buffer(state, "void", false),
              mt = p.buffer(meta, "long long", false), cnt = p.buffer(count, "long long", false),
              nt = p.slot(tiles);
  // carry and tail: tiles * sizeof(State) bytes each, sized in 8-byte elements by the
  // state's field count (every field takes at most 8 bytes).
  rt::BufferId carry = ctx.allocate(fmt::format("n{}.carry", n.id), 8,
                                    rt::SizeExpr{0, {rt::SizeTerm{a.state_words, {tiles}}}}, n.id);
  rt::BufferId tail = ctx.allocate(fmt::format("n{}.tail", n.id), 8,
                                   rt::SizeExpr{0, {rt::SizeTerm{a.state_words, {tiles}}}}, n.id);
  std::string pc = p.buffer(carry, "void", false), pt = p.buffer(tail, "void", false);
  std::string make = ctx.functor(name + "_fn", p, members);
  ctx.emit(
      fmt::format("static_assert(sizeof({}) <= {} * 8, \"reduce state larger than its "
                  "carry/tail slots\");\n",
                  st, a.state_words));
  const std::string hooks = agg_hooks(name + "_fn", st);
  const HookArg emit = HookArg::lambda(
      "void", {{"long long", "g"}, {"long long", "first"}, {fmt::format("const {} &", st), "s"}},
      " f.write(g, first, s); ");
  {
    SkeletonCall agent(ctx.templates(), "ReduceAgent", {ctx.tile_policy("Reduce")}, "Agent");
    agent.bind("State", st);
    std::string body =
        make + hooks + agent.declare() + agent.temp_storage() +
        agent.call("run", {"temp", ns,
                           HookArg::lambda("bool", {{"long long", "i"}, {"long long", "j"}},
                                           " return f.same(i, j); "),
                           agg_object(st), emit, ts, pc, pt, mt, cnt});
    ctx.kernel(
        n.id, name, p, body,
        LaunchShape{rt::SizeExpr::slot(tiles), 1, ctx.policy_threads("Reduce"), false, nodes},
        agent);
  }
  {
    SkeletonCall fixup(ctx.templates(), "ReduceFixupAgent", {});
    fixup.bind("State", st);
    std::string body = make + hooks + fixup.call("run", {nt, agg_object(st), emit, pc, pt, mt});
    ctx.kernel(n.id, ctx.kernel_name(n.id, "reduce_fixup"), p, body,
               LaunchShape{rt::SizeExpr::slot(tiles), 256, 256, false}, fixup);
  }
  if (in.unverified) ctx.step(rt::CheckFlag{in.unverified->flag, in.unverified->message, n.id});
  out.size = ctx.new_slot();
  ctx.step(rt::ReadSize{out.size, count, 0});
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
