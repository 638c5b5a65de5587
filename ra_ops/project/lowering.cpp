// Lowering of project: a fused stage. The output is a view whose attributes are the
// input's (passed through) or member functions computing the expressions. A computed
// attribute that can fail (integer division) is also evaluated in the view's keep
// function, so that every row reaching the project is checked as in an unfused plan,
// whether or not a consumer reads the attribute. Materialised (code generator) by one
// MapAgent kernel writing only the computed attributes; the others alias the input.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_project(LoweringContext& ctx, const Node& n) {
  const DeviceRelation in = ctx.relation(n.inputs.at(0));
  RowView v = view_of(in);
  const std::string h = v.handle_args();
  std::vector<ViewAttr> attrs;
  std::vector<Type> types;
  std::string checks;
  for (size_t j = 0; j < n.exprs.size(); ++j) {
    const ExprPtr& e = n.exprs[j].expr.ptr();
    const Type t = n.schema[j].type;
    types.push_back(t);
    if (e->kind == ExprKind::Attr) {
      attrs.push_back(v.attrs.at(static_cast<size_t>(e->attr_index)));
      continue;
    }
    KernelParams p;
    std::string text = ctx.expr(e, p, [&](int32_t c) {
      return LoweringContext::load(p, in, static_cast<size_t>(c), h);
    });
    const std::string fn = fmt::format("v{}_a{}", n.id, j);
    p.add_member(fn, fmt::format("  __device__ __forceinline__ {0} {1}({2}) const {{ return ({0})({3}); "
                                 "}}\n",
                                 value_ctype(t), fn, v.handle_params(), text));
    if (p.uses_error_flag) checks += fmt::format("    (void){}({});\n", fn, h);
    v.deps.merge(p);
    attrs.push_back(ViewAttr{-1, fn});
  }
  if (!checks.empty()) {
    const std::string prev = LoweringContext::keep(v.deps, in, h);
    const std::string fn = fmt::format("v{}_keep", n.id);
    v.deps.add_member(fn, fmt::format("  __device__ __forceinline__ bool {}({}) const {{\n"
                                      "    if (!{}) return false;\n{}    return true;\n  }}\n",
                                      fn, v.handle_params(), prev, checks));
    v.keep_fn = fn;
  }
  v.attrs = std::move(attrs);
  v.nodes.push_back(n.id);
  ctx.set_relation(n.id, make_view(std::move(v), std::move(types), in.size));
}

}  // namespace ranc::codegen
