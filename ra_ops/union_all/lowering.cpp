// Lowering of union all: the left input's rows, then the right's, in one map kernel over
// the output (row i < n_a copies row i of the left, the rest row i - n_a of the right).
// The output size is n_a + n_b, known without a read-back. Inputs are dense (union all is
// a barrier to fusion: a view that filters would have an unknown size).
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_union_all(LoweringContext& ctx, const Node& n) {
  const DeviceRelation A = ctx.dense(ctx.relation(n.inputs.at(0)));
  const DeviceRelation B = ctx.dense(ctx.relation(n.inputs.at(1)));
  rt::SlotId size = ctx.new_slot();
  ctx.step(rt::SetSize{size, rt::SizeExpr{0, {rt::SizeTerm{1, {A.size}}, rt::SizeTerm{1, {B.size}}}}});
  DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::slot(size), size);
  KernelParams p;
  const std::string na = p.slot(A.size);
  std::string stmts = fmt::format("    if (i < {}) {{\n{}    }} else {{\n{}    }}\n", na,
                                  ctx.copy_row(p, A, "i", out, "i"),
                                  ctx.copy_row(p, B, fmt::format("i - {}", na), out, "i"));
  ctx.map_kernel(n.id, "union_all", p, size, stmts);
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
