// Lowering of output: the input's buffers become a plan output (no copy).
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_output(LoweringContext& ctx, const Node& n) {
  const DeviceRelation in = ctx.dense(ctx.relation(n.inputs.at(0)));
  ctx.add_output(n, in);
  ctx.set_relation(n.id, in);
}

}  // namespace ranc::codegen
