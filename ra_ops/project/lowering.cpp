// Lowering of project: attributes passed through unchanged alias the input's buffers;
// computed attributes are written by one MapAgent kernel.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_project(LoweringContext& ctx, const Node& n) {
  const DeviceRelation in = ctx.relation(n.inputs.at(0));
  DeviceRelation out;
  out.size = in.size;
  KernelParams params;
  std::string stmts;
  for (size_t j = 0; j < n.exprs.size(); ++j) {
    const ExprPtr& e = n.exprs[j].expr.ptr();
    Type t = n.schema[j].type;
    out.types.push_back(t);
    if (e->kind == ExprKind::Attr) {
      out.columns.push_back(in.columns.at(static_cast<size_t>(e->attr_index)));
      continue;
    }
    rt::BufferId b = ctx.allocate(fmt::format("n{}.c{}", n.id, j), type_size(t),
                                  rt::SizeExpr::slot(in.size), n.id);
    out.columns.push_back(b);
    std::string v = ctx.expr(e, params, [&](int32_t c) {
      return LoweringContext::load(params, in, static_cast<size_t>(c), "i");
    });
    stmts += fmt::format("    {}[i] = ({})({});\n", params.buffer(b, storage_ctype(t), false),
                         storage_ctype(t), v);
  }
  if (!stmts.empty()) ctx.map_kernel(n.id, "project", params, in.size, stmts);
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
