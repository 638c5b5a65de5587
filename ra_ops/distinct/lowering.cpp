// Lowering of distinct: the input is grouped by the whole tuple (physical planning), so
// a row is kept when it differs from its predecessor: a SelectAgent over the rows. It
// reads rows at random (each row and its predecessor), so a view reaches it only when it
// keeps every row and checks nothing (a fused project); otherwise it is materialised.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_distinct(LoweringContext& ctx, const Node& n) {
  DeviceRelation in = ctx.relation(n.inputs.at(0));
  if (in.view && (in.view->source != RowView::Source::Index || !in.view->keep_fn.empty()))
    in = ctx.dense(in);
  if (ctx.physical(n.inputs.at(0)).unique) {
    ctx.set_relation(n.id, in);
    return;
  }
  DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::slot(in.size), -1);
  KernelParams params;
  std::string pred = "i == 0";
  for (size_t c = 0; c < in.types.size(); ++c) {
    auto ct = storage_ctype(in.types[c]);
    pred += fmt::format(" || !ranc::tpl::total_equal(({}){}, ({}){})", ct,
                        LoweringContext::raw(params, in, c, "i"), ct,
                        LoweringContext::raw(params, in, c, "i - 1"));
  }
  std::string copy = ctx.copy_row(params, in, "i", out, "o");
  std::vector<NodeId> nodes;
  if (in.view) {
    nodes = in.view->nodes;
    nodes.push_back(n.id);
  }
  out.size = ctx.select_kernel(n.id, "distinct", in.size, params, pred, copy, {}, nodes);
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
