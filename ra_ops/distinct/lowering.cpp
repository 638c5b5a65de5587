// Lowering of distinct: the input is grouped by the whole tuple (physical planning), so
// a row is kept when it differs from its predecessor: a SelectAgent over the rows.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_distinct(LoweringContext& ctx, const Node& n) {
  const DeviceRelation in = ctx.relation(n.inputs.at(0));
  if (ctx.physical(n.inputs.at(0)).unique) {
    ctx.set_relation(n.id, in);
    return;
  }
  DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::slot(in.size), -1);
  KernelParams params;
  std::string pred = "i == 0";
  for (size_t c = 0; c < in.columns.size(); ++c) {
    std::string col = params.buffer(in.columns[c], storage_ctype(in.types[c]));
    pred += fmt::format(" || !ranc::tpl::total_equal({0}[i], {0}[i - 1])", col);
  }
  std::string copy = ctx.copy_row(params, in, "i", out, "o");
  out.size = ctx.select_kernel(n.id, "distinct", in.size, params, pred, copy);
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
