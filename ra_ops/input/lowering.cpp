// Lowering of input: one bound device buffer per attribute and a size slot. An input
// with a declared order ("sorted by") also gets a check kernel: one pass over the key
// columns that sets a flag when a row orders before its predecessor, and a CheckFlag
// step that turns the flag into an ExecutionError naming the relation. The planner
// relies on the declared order, so it is verified before anything uses it.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_input(LoweringContext& ctx, const Node& n) {
  DeviceRelation r;
  r.size = ctx.new_slot();
  for (size_t c = 0; c < n.schema.size(); ++c) {
    Type t = n.schema[c].type;
    r.types.push_back(t);
    r.columns.push_back(ctx.declare(fmt::format("n{}.c{}", n.id, c), type_size(t),
                                    rt::SizeExpr::slot(r.size), n.id));
  }
  ctx.add_input(n, r);
  if (!n.sort_keys.empty()) {
    std::vector<int32_t> cols;
    std::vector<bool> desc;
    std::string keys;
    for (const SortKey& k : n.sort_keys) {
      cols.push_back(k.index);
      desc.push_back(k.descending);
      keys += fmt::format("{}{}{}", keys.empty() ? "" : ", ", k.attr, k.descending ? " desc" : "");
    }
    rt::BufferId flag =
        ctx.allocate(fmt::format("n{}.order_flag", n.id), 4, rt::SizeExpr::fixed(1), n.id, true);
    KernelParams p;
    std::string cmp = LoweringContext::compare_body(p, r, "i", cols, r, "j", cols, desc);
    std::string fl = p.buffer(flag, "int", false), ns = p.slot(r.size);
    std::string name = ctx.kernel_name(n.id, "check_order");
    std::string make = ctx.functor(
        name + "_fn", p,
        fmt::format("  __device__ __forceinline__ int cmp(long long i, long long j) const {{\n{}  "
                    "}}\n",
                    cmp));
    std::string body = fmt::format(
        "{}  ranc::tpl::MapAgent<{}>::run({}, [&](long long i) {{\n"
        "    if (i > 0 && f.cmp(i - 1, i) > 0) {}[0] = 1;\n  }});\n",
        make, ctx.policy("Map"), ns, fl);
    ctx.kernel(n.id, name, p, body, ctx.map_launch(rt::SizeExpr::slot(r.size)));
    ctx.step(rt::CheckFlag{
        flag,
        fmt::format("input relation '{}' is not sorted by ({}) as declared; sort the data, or "
                    "drop the declared order so that ranc sorts it",
                    n.name, keys),
        n.id});
  }
  ctx.set_relation(n.id, r);
}

}  // namespace ranc::codegen
