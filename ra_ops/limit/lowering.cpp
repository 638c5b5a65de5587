// Lowering of limit: the output size min(n, max(0, size - offset)) is computed on the
// device and read back; without an offset the output aliases the input's buffers
// (a prefix), otherwise a MapAgent kernel copies the rows.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_limit(LoweringContext& ctx, const Node& n) {
  const DeviceRelation in = ctx.relation(n.inputs.at(0));
  rt::BufferId cnt = ctx.allocate(fmt::format("n{}.count", n.id), 8, rt::SizeExpr::fixed(1), n.id);
  rt::Launch l;
  l.kernel = "ranc_limit_count";
  l.items = rt::SizeExpr::fixed(1);
  l.items_per_block = 1;
  l.block_threads = 32;
  l.skip_if_empty = false;
  l.args = {rt::ArgSlot{in.size}, rt::ArgConst{n.offset}, rt::ArgConst{n.limit},
            rt::ArgBuffer{cnt}};
  l.node = n.id;
  ctx.step(std::move(l));
  rt::SlotId size = ctx.new_slot();
  ctx.step(rt::ReadSize{size, cnt, 0});
  if (n.offset == 0) {
    DeviceRelation out = in;
    out.size = size;
    ctx.set_relation(n.id, out);
    return;
  }
  DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::slot(size), size);
  KernelParams params;
  std::string copy = ctx.copy_row(params, in, fmt::format("i + {}LL", n.offset), out, "i");
  std::string ns = params.slot(size);
  std::string name = ctx.kernel_name(n.id, "limit");
  std::string make = ctx.functor(
      name + "_fn", params,
      fmt::format("  __device__ __forceinline__ void operator()(long long i) const {{\n{}  }}\n",
                  copy));
  std::string body =
      fmt::format("{}  ranc::tpl::MapAgent<{}>::run({}, [&](long long i) {{ f(i); }});\n", make,
                  ctx.policy("Map"), ns);
  ctx.kernel(n.id, name, params, body, ctx.map_launch(rt::SizeExpr::slot(size)));
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
