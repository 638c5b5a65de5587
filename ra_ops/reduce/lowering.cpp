// Lowering of reduce: the input is grouped by the group keys (physical planning).
//   1. heads: a SelectAgent over the rows keeps the index of every row whose keys differ
//      from its predecessor's (with no group keys: row 0 only) -> group starts, G read back;
//   2. reduce: one warp per group; lanes stride over the group's rows, accumulators are
//      combined with warp shuffles, lane 0 writes the group's keys and aggregates.
// Semantics as the reference: integer sums wrap (uint64), float sums and avg in f64,
// min/max by the total order, count counts tuples.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_reduce(LoweringContext& ctx, const Node& n) {
  const DeviceRelation in = ctx.relation(n.inputs.at(0));
  const auto& keys = ctx.physical(n.id).compare_keys;

  rt::BufferId starts =
      ctx.allocate(fmt::format("n{}.starts", n.id), 8, rt::SizeExpr::slot(in.size), n.id);
  rt::SlotId groups;
  {
    KernelParams p;
    std::string pred = "i == 0";
    for (const auto& k : keys) {
      size_t c = static_cast<size_t>(k.index);
      pred += fmt::format(" || !ranc::tpl::total_equal({0}[i], {0}[i - 1])",
                          p.buffer(in.columns[c], storage_ctype(in.types[c])));
    }
    std::string emit = fmt::format("    {}[o] = i;\n", p.buffer(starts, "long long", false));
    groups = ctx.select_kernel(n.id, "reduce_heads", in.size, p, pred, emit);
  }
  DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::slot(groups), groups);

  KernelParams p;
  auto attr = [&](int32_t c) { return LoweringContext::load(p, in, static_cast<size_t>(c), "i"); };
  std::string decl, loop, combine, write;
  for (size_t k = 0; k < n.group_key_index.size(); ++k) {
    size_t c = static_cast<size_t>(n.group_key_index[k]);
    auto ct = storage_ctype(in.types[c]);
    write += fmt::format("      {}[g] = {}[begin];\n", p.buffer(out.columns[k], ct, false),
                         p.buffer(in.columns[c], ct));
  }
  const size_t nk = n.group_key_index.size();
  for (size_t a = 0; a < n.aggregates.size(); ++a) {
    const Aggregate& ag = n.aggregates[a];
    const Type ot = n.schema[nk + a].type;
    std::string dst = p.buffer(out.columns[nk + a], storage_ctype(ot), false);
    if (ag.func == AggFunc::Count) {
      write += fmt::format("      {}[g] = end - begin;\n", dst);
      continue;
    }
    const Type at = *ag.arg->type;
    std::string v = ctx.expr(ag.arg.ptr(), p, attr);
    std::string acc = fmt::format("a{}", a), has = fmt::format("h{}", a);
    switch (ag.func) {
      case AggFunc::Sum:
      case AggFunc::Avg:
        if (is_floating(at) || ag.func == AggFunc::Avg) {
          decl += fmt::format("    double {} = 0;\n", acc);
          loop += fmt::format("      {} += (double)({});\n", acc, v);
        } else {
          decl += fmt::format("    unsigned long long {} = 0;\n", acc);
          loop += fmt::format("      {} += (unsigned long long)(long long)({});\n", acc, v);
        }
        combine += fmt::format("      {0} += __shfl_down_sync(0xffffffffu, {0}, d);\n", acc);
        if (ag.func == AggFunc::Avg)
          write += fmt::format("      {}[g] = {} / (double)(end - begin);\n", dst, acc);
        else
          write += fmt::format("      {}[g] = ({}){};\n", dst, value_ctype(ot), acc);
        break;
      case AggFunc::Min:
      case AggFunc::Max: {
        const char* better = ag.func == AggFunc::Min ? "<" : ">";
        auto ct = value_ctype(at);
        decl += fmt::format("    {} {}{{}}; bool {} = false;\n", ct, acc, has);
        loop += fmt::format(
            "      {{ const {0} v = {1}; if (!{3} || ranc::tpl::cmp3(v, {2}) {4} 0) {{ {2} = v; "
            "{3} = true; }} }}\n",
            ct, v, acc, has, better);
        combine += fmt::format(
            "      {{ const {0} v = __shfl_down_sync(0xffffffffu, {1}, d); const bool h = "
            "__shfl_down_sync(0xffffffffu, (int){2}, d) != 0;\n"
            "        if (h && (!{2} || ranc::tpl::cmp3(v, {1}) {3} 0)) {{ {1} = v; {2} = true; }} "
            "}}\n",
            ct, acc, has, better);
        write += fmt::format("      {}[g] = ({}){};\n", dst, storage_ctype(ot), acc);
        break;
      }
      case AggFunc::Count:
        break;
    }
  }
  std::string st = p.buffer(starts, "long long"), ng = p.slot(groups), ns = p.slot(in.size);
  std::string name = ctx.kernel_name(n.id, "reduce");
  std::string members = fmt::format(
      "  __device__ __forceinline__ void operator()(long long g, int lane) const {{\n"
      "    const long long begin = {0}[g], end = g + 1 < {1} ? {0}[g + 1] : {2};\n{3}"
      "    for (long long i = begin + lane; i < end; i += 32) {{\n{4}    }}\n"
      "    for (int d = 16; d > 0; d >>= 1) {{\n{5}    }}\n"
      "    if (lane == 0) {{\n{6}    }}\n  }}\n",
      st, ng, ns, decl, loop, combine, write);
  std::string make = ctx.functor(name + "_fn", p, members);
  std::string body = fmt::format(
      "{}  const long long g = ranc::tpl::global_thread_index() >> 5;\n"
      "  if (g < {}) f(g, (int)(threadIdx.x & 31));\n",
      make, ng);
  ctx.kernel(n.id, name, p, body,
             LaunchShape{rt::SizeExpr{0, {rt::SizeTerm{32, {groups}}}}, 256, 256, true});
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
