// Lowering of sort: a stable LSD sort (one SortPairs per key column, least significant
// first, over row ids) followed by a Gather of every column. A sort whose input already
// has the order (physical planning) aliases its input.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_sort(LoweringContext& ctx, const Node& n) {
  // A global barrier: its input is materialised.
  const DeviceRelation in = ctx.dense(ctx.relation(n.inputs.at(0)));
  ctx.set_relation(n.id, ctx.sort(n.id, in, ctx.physical(n.id).sort_keys));
}

}  // namespace ranc::codegen
