// Lowering of product: unfused, ProductAgent (product.cuh) writes every pair, left-major.
// Fused into its consumer (a select after a product is a theta join), the output is a
// view over the na * nb pair numbers o, attribute by attribute a[o / nb] or b[o % nb].
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_product(LoweringContext& ctx, const Node& n) {
  const DeviceRelation a = ctx.dense(ctx.relation(n.inputs.at(0)));
  const DeviceRelation b = ctx.dense(ctx.relation(n.inputs.at(1)));
  rt::SlotId size = ctx.new_slot();
  rt::SizeExpr total{0, {rt::SizeTerm{1, {a.size, b.size}}}};
  ctx.step(rt::SetSize{size, total});
  if (ctx.fused(n.id)) {
    RowView v;
    KernelParams& d = v.deps;
    const std::string nb = d.slot(b.size);
    std::vector<Type> types;
    auto side = [&](const DeviceRelation& r, std::string_view row, size_t first) {
      for (size_t c = 0; c < r.types.size(); ++c) {
        const std::string fn = fmt::format("v{}_a{}", n.id, first + c);
        d.add_member(fn, fmt::format("  __device__ __forceinline__ {} {}(long long i) const {{ "
                                     "return {}; }}\n",
                                     value_ctype(r.types[c]), fn,
                                     LoweringContext::load(d, r, c, row)));
        v.attrs.push_back(ViewAttr{-1, fn});
        types.push_back(r.types[c]);
      }
    };
    side(a, fmt::format("i / {}", nb), 0);
    side(b, fmt::format("i % {}", nb), a.types.size());
    v.nodes.push_back(n.id);
    ctx.set_relation(n.id, make_view(std::move(v), std::move(types), size));
    return;
  }
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
  SkeletonCall agent(ctx.templates(), "ProductAgent", {ctx.tile_policy("Map")});
  std::string body =
      make +
      agent.call("run", {na, nb,
                         HookArg::lambda(
                             "void", {{"long long", "a"}, {"long long", "b"}, {"long long", "o"}},
                             " f(a, b, o); ")});
  ctx.kernel(n.id, name, params, body, ctx.map_launch(rt::SizeExpr::slot(size)), agent);
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
