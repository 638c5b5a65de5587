// Lowering of input: one bound device buffer per attribute and a size slot.
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
  ctx.set_relation(n.id, r);
}

}  // namespace ranc::codegen
