// Lowering of select: SelectAgent (select.cuh) with the predicate as the pred hook and a
// copy of every column as the emit hook. Output columns are sized by the input (upper
// bound); the exact size is read back from the agent's counter.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_select(LoweringContext& ctx, const Node& n) {
  const DeviceRelation in = ctx.relation(n.inputs.at(0));
  DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::slot(in.size), -1);
  KernelParams params;
  std::string pred = ctx.expr(n.predicate.ptr(), params, [&](int32_t c) {
    return LoweringContext::load(params, in, static_cast<size_t>(c), "i");
  });
  std::string copy = ctx.copy_row(params, in, "i", out, "o");
  out.size = ctx.select_kernel(n.id, "select", in.size, params, pred, copy);
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
