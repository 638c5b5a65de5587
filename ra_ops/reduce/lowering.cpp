// Lowering of reduce: the input is grouped by the group keys (physical planning), so
// the single-pass segmented reduction of reduce.cuh applies:
//   1. init:   tile states for the decoupled look-back over group-head counts;
//   2. reduce: ReduceAgent, one block per tile: head flags, a block-wide segmented scan
//              of the aggregate states, global group numbers by look-back; groups that
//              end inside the tile are written directly, partial states of groups that
//              cross a tile boundary go to carry/tail;
//   3. fixup:  ReduceFixupAgent, one thread per tile, finishes the crossing groups.
// The output columns are sized by the upper bound (the input size, or 1 with no group
// keys) and the number of groups is read back, so the input is read once.
// Semantics as the reference: integer sums wrap (uint64), float sums and avg in f64,
// min/max by the total order, count counts tuples.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_reduce(LoweringContext& ctx, const Node& n) {
  const DeviceRelation in = ctx.relation(n.inputs.at(0));
  const auto& keys = ctx.physical(n.id).compare_keys;
  const size_t nk = n.group_key_index.size();

  const rt::SizeExpr bound = nk == 0 ? rt::SizeExpr::fixed(1) : rt::SizeExpr::slot(in.size);
  DeviceRelation out = ctx.allocate_relation(n, bound, -1);

  const int64_t tile =
      static_cast<int64_t>(ctx.policy_threads("Reduce")) * ctx.policy_items("Reduce");
  rt::SlotId tiles = ctx.num_tiles(n.id, in.size, -1, tile);
  rt::BufferId state = ctx.tile_state(n.id, "tile_state", "reduce_init", tiles);
  rt::BufferId meta = ctx.allocate(fmt::format("n{}.meta", n.id), 8,
                                   rt::SizeExpr{0, {rt::SizeTerm{3, {tiles}}}}, n.id);
  rt::BufferId count =
      ctx.allocate(fmt::format("n{}.count", n.id), 8, rt::SizeExpr::fixed(1), n.id);

  // The aggregate state: one field per aggregate plus the row count (8-byte aligned,
  // as reduce.cuh asks), and the Agg hooks init / accumulate / merge.
  KernelParams p;
  auto attr = [&](int32_t c) { return LoweringContext::load(p, in, static_cast<size_t>(c), "r"); };
  std::string fields = "  long long rows;\n", init = "    s.rows = 0;\n", acc = "    ++s.rows;\n",
              merge = "    a.rows += b.rows;\n", write;
  for (size_t k = 0; k < nk; ++k) {
    size_t c = static_cast<size_t>(n.group_key_index[k]);
    auto ct = storage_ctype(in.types[c]);
    write += fmt::format("    {}[g] = {}[first];\n", p.buffer(out.columns[k], ct, false),
                         p.buffer(in.columns[c], ct));
  }
  for (size_t a = 0; a < n.aggregates.size(); ++a) {
    const Aggregate& ag = n.aggregates[a];
    const Type ot = n.schema[nk + a].type;
    std::string dst = p.buffer(out.columns[nk + a], storage_ctype(ot), false);
    if (ag.func == AggFunc::Count) {
      write += fmt::format("    {}[g] = s.rows;\n", dst);
      continue;
    }
    const Type at = *ag.arg->type;
    std::string v = ctx.expr(ag.arg.ptr(), p, attr);
    std::string f = fmt::format("a{}", a), h = fmt::format("h{}", a);
    switch (ag.func) {
      case AggFunc::Sum:
      case AggFunc::Avg:
        if (is_floating(at) || ag.func == AggFunc::Avg) {
          fields += fmt::format("  double {};\n", f);
          acc += fmt::format("    s.{} += (double)({});\n", f, v);
        } else {
          fields += fmt::format("  unsigned long long {};\n", f);
          acc += fmt::format("    s.{} += (unsigned long long)(long long)({});\n", f, v);
        }
        init += fmt::format("    s.{} = 0;\n", f);
        merge += fmt::format("    a.{0} += b.{0};\n", f);
        if (ag.func == AggFunc::Avg)
          write += fmt::format("    {}[g] = s.{} / (double)s.rows;\n", dst, f);
        else
          write += fmt::format("    {}[g] = ({})s.{};\n", dst, value_ctype(ot), f);
        break;
      case AggFunc::Min:
      case AggFunc::Max: {
        // Every group has a row, so the state of a finished group always has a value;
        // `has` marks states of empty stretches (identity).
        const char* better = ag.func == AggFunc::Min ? "<" : ">";
        auto ct = value_ctype(at);
        fields += fmt::format("  {} {};\n  bool {};\n", ct, f, h);
        init += fmt::format("    s.{} = ({})0;\n    s.{} = false;\n", f, ct, h);
        acc += fmt::format(
            "    {{ const {0} v = {1}; if (!s.{3} || ranc::tpl::cmp3(v, s.{2}) {4} 0) {{ s.{2} = "
            "v; s.{3} = true; }} }}\n",
            ct, v, f, h, better);
        merge += fmt::format(
            "    if (b.{1} && (!a.{1} || ranc::tpl::cmp3(b.{0}, a.{0}) {2} 0)) {{ a.{0} = b.{0}; "
            "a.{1} = true; }}\n",
            f, h, better);
        write += fmt::format("    {}[g] = ({})s.{};\n", dst, storage_ctype(ot), f);
        break;
      }
      case AggFunc::Count:
        break;
    }
  }
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
      same += fmt::format("    if (!ranc::tpl::total_equal({0}[i], {0}[j])) return false;\n",
                          p.buffer(in.columns[c], storage_ctype(in.types[c])));
    }
    same += "    return true;\n";
  }
  const std::string name = ctx.kernel_name(n.id, "reduce");
  const std::string st = name + "_state";
  ctx.emit(fmt::format("struct alignas(8) {} {{\n{}}};\n", st, fields));
  std::string members = fmt::format(
      "  using State = {0};\n"
      "  __device__ __forceinline__ bool same(long long i, long long j) const {{\n{1}  }}\n"
      "  __device__ __forceinline__ State init() const {{\n    State s;\n{2}    return s;\n  }}\n"
      "  __device__ __forceinline__ void accumulate(State& s, long long r) const {{\n{3}  }}\n"
      "  __device__ __forceinline__ void merge(State& a, const State& b) const {{\n{4}  }}\n"
      "  __device__ __forceinline__ void write(long long g, long long first, const State& s) "
      "const {{\n{5}  }}\n",
      st, same, init, acc, merge, write);
  // Kernel parameters shared by the reduce and fixup kernels (the functor's fields).
  std::string ns = p.slot(in.size), ts = p.buffer(state, "void", false),
              mt = p.buffer(meta, "long long", false), cnt = p.buffer(count, "long long", false),
              nt = p.slot(tiles);
  // carry and tail: tiles * sizeof(State) bytes each, sized in 8-byte elements by the
  // state's field count (every field takes at most 8 bytes).
  const int64_t state_words =
      1 + static_cast<int64_t>(n.aggregates.size()) * 2;  // upper bound on sizeof / 8
  rt::BufferId carry = ctx.allocate(fmt::format("n{}.carry", n.id), 8,
                                    rt::SizeExpr{0, {rt::SizeTerm{state_words, {tiles}}}}, n.id);
  rt::BufferId tail = ctx.allocate(fmt::format("n{}.tail", n.id), 8,
                                   rt::SizeExpr{0, {rt::SizeTerm{state_words, {tiles}}}}, n.id);
  std::string pc = p.buffer(carry, "void", false), pt = p.buffer(tail, "void", false);
  std::string make = ctx.functor(name + "_fn", p, members);
  ctx.emit(
      fmt::format("static_assert(sizeof({}) <= {} * 8, \"reduce state larger than its "
                  "carry/tail slots\");\n",
                  st, state_words));
  const std::string hooks =
      "  struct Agg {\n    const " + name + "_fn* f;\n    using State = " + st +
      ";\n"
      "    __device__ __forceinline__ State init() const { return f->init(); }\n"
      "    __device__ __forceinline__ void accumulate(State& s, long long r) const { "
      "f->accumulate(s, r); }\n"
      "    __device__ __forceinline__ void merge(State& a, const State& b) const { f->merge(a, "
      "b); }\n  } agg{&f};\n";
  {
    std::string body = fmt::format(
        "{}{}  using Agent = ranc::tpl::ReduceAgent<{}>;\n"
        "  __shared__ typename Agent::template TempStorageT<{}> temp;\n"
        "  Agent::run(temp, {}, [&](long long i, long long j) {{ return f.same(i, j); }}, agg,\n"
        "             [&](long long g, long long first, const {} & s) {{ f.write(g, first, s); "
        "}},\n"
        "             {}, {}, {}, {}, {});\n",
        make, hooks, ctx.policy("Reduce"), st, ns, st, ts, pc, pt, mt, cnt);
    ctx.kernel(n.id, name, p, body,
               LaunchShape{rt::SizeExpr::slot(tiles), 1, ctx.policy_threads("Reduce"), false});
  }
  {
    std::string body = fmt::format(
        "{}{}  ranc::tpl::ReduceFixupAgent::run({}, agg, [&](long long g, long long first, const "
        "{} & s) {{ f.write(g, first, s); }},\n"
        "                                   {}, {}, {});\n",
        make, hooks, nt, st, pc, pt, mt);
    ctx.kernel(n.id, ctx.kernel_name(n.id, "reduce_fixup"), p, body,
               LaunchShape{rt::SizeExpr::slot(tiles), 256, 256, false});
  }
  if (in.unverified) ctx.step(rt::CheckFlag{in.unverified->flag, in.unverified->message, n.id});
  out.size = ctx.new_slot();
  ctx.step(rt::ReadSize{out.size, count, 0});
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
