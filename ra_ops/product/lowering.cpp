// Lowering of product: ProductAgent (product.cuh) writes every pair, left-major.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_product(LoweringContext& ctx, const Node& n) {
  const DeviceRelation a = ctx.relation(n.inputs.at(0));
  const DeviceRelation b = ctx.relation(n.inputs.at(1));
  rt::SlotId size = ctx.new_slot();
  rt::SizeExpr total{0, {rt::SizeTerm{1, {a.size, b.size}}}};
  ctx.step(rt::SetSize{size, total});
  DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::slot(size), size);
  KernelParams params;
  std::string copy = ctx.copy_row(params, a, "a", out, "o") +
                     ctx.copy_row(params, b, "b", out, "o", a.columns.size());
  std::string na = params.slot(a.size), nb = params.slot(b.size);
  std::string name = ctx.kernel_name(n.id, "product");
  std::string make = ctx.functor(name + "_fn", params,
                                 fmt::format("  __device__ __forceinline__ void operator()(long "
                                             "long a, long long b, long long o) const {{\n{}  }}\n",
                                             copy));
  std::string body = fmt::format(
      "{}  ranc::tpl::ProductAgent<{}>::run({}, {}, [&](long long a, long long b, long long o) {{ "
      "f(a, b, o); }});\n",
      make, ctx.policy("Map"), na, nb);
  ctx.kernel(n.id, name, params, body, ctx.map_launch(rt::SizeExpr::slot(size)));
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
