// Lowering of sort: the keys packed into order words and radix-sorted word by word
// (LoweringContext::sort, ranc/codegen/sort_layout.h). A sort whose input already has the
// order (physical planning) aliases its input.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_sort(LoweringContext& ctx, const Node& n) {
  // A global barrier: its input is materialised.
  const DeviceRelation in = ctx.dense(ctx.relation(n.inputs.at(0)));
  ctx.set_relation(n.id, ctx.sort(n.id, in, ctx.physical(n.id).sort_keys));
}

}  // namespace ranc::codegen
