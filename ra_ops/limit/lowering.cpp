// Lowering of limit: the output keeps rows offset..offset+limit-1 of the input's order.
//   dense input, no offset: a prefix of the input's buffers (no copy);
//   dense input with an offset, or a view that keeps every row and checks nothing: a
//     MapAgent kernel over the window only;
//   a view with a filter (a select fused into the limit): one SelectAgent pass that
//     compacts the kept rows and writes only those whose position falls in the window,
//     so the rows the limit drops are never written.
// The output size min(limit, max(0, n - offset)) is host arithmetic on the input size
// or on the kept count read back.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {
namespace {

// min(limit, max(0, n - offset)) for the slot n.
rt::SizeExpr window(rt::SlotId n, int64_t offset, int64_t limit) {
  rt::SizeExpr e{-offset, {rt::SizeTerm{1, {n}}}};
  e.saturate = true;
  e.at_most = limit;
  return e;
}

}  // namespace

void lower_limit(LoweringContext& ctx, const Node& n) {
  DeviceRelation in = ctx.relation(n.inputs.at(0));
  if (in.view && (in.view->source != RowView::Source::Index ||
                  (!in.view->filters && !in.view->keep_fn.empty())))
    in = ctx.dense(in);
  if (in.view && in.view->filters) {
    const RowView& v = *in.view;
    std::vector<NodeId> nodes = v.nodes;
    nodes.push_back(n.id);
    rt::SizeExpr bound = rt::SizeExpr::slot(in.size);
    bound.at_most = n.limit;
    DeviceRelation out = ctx.allocate_relation(n, bound, -1);
    KernelParams p;
    std::string pred = LoweringContext::keep(p, in, "i");
    std::string copy = ctx.copy_row(p, in, "i", out, fmt::format("o - {}LL", n.offset));
    std::string emit = fmt::format("    if (o >= {0}LL && o - {0}LL < {1}LL) {{\n{2}    }}\n",
                                   n.offset, n.limit, copy);
    rt::SlotId kept = ctx.select_kernel(n.id, v.op_names(ctx.program()) + "_limit", in.size, p,
                                        pred, emit, {}, nodes);
    out.size = ctx.new_slot();
    ctx.step(rt::SetSize{out.size, window(kept, n.offset, n.limit)});
    ctx.set_relation(n.id, out);
    return;
  }
  rt::SlotId size = ctx.new_slot();
  ctx.step(rt::SetSize{size, window(in.size, n.offset, n.limit)});
  if (!in.view && n.offset == 0) {
    DeviceRelation out = in;
    out.size = size;
    ctx.set_relation(n.id, out);
    return;
  }
  DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::slot(size), size);
  KernelParams params;
  std::string copy = ctx.copy_row(params, in, fmt::format("i + {}LL", n.offset), out, "i");
  std::vector<NodeId> nodes;
  std::string what = "limit";
  if (in.view) {
    nodes = in.view->nodes;
    nodes.push_back(n.id);
    what = in.view->op_names(ctx.program()) + "_limit";
  }
  ctx.map_kernel(n.id, what, params, size, copy, {}, nodes);
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
