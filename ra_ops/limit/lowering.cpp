// Lowering of limit: the output size min(n, max(0, size - offset)) is computed on the
// device and read back; without an offset the output aliases the input's buffers
// (a prefix), otherwise a MapAgent kernel copies the rows.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_limit(LoweringContext& ctx, const Node& n) {
  const DeviceRelation in = ctx.relation(n.inputs.at(0));
  rt::BufferId cnt = ctx.allocate(fmt::format("n{}.count", n.id), 8, rt::SizeExpr::fixed(1), n.id);
  ctx.launch_one(
      n.id, "ranc_limit_count",
      {rt::ArgSlot{in.size}, rt::ArgConst{n.offset}, rt::ArgConst{n.limit}, rt::ArgBuffer{cnt}});
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
  ctx.map_kernel(n.id, "limit", params, size, copy);
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
