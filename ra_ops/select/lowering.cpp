// Lowering of select: a fused stage. The output is a view of the input (its own view,
// or the identity view of a dense input) whose keep function also tests the predicate;
// the consumer streams it, or the code generator materialises it with SelectAgent
// (select.cuh) when fuse_pipelines does not fuse the select into its consumer.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_select(LoweringContext& ctx, const Node& n) {
  const DeviceRelation in = ctx.relation(n.inputs.at(0));
  RowView v = view_of(in);
  KernelParams& d = v.deps;
  const std::string h = v.handle_args();
  std::string pred = ctx.expr(n.predicate.ptr(), d, [&](int32_t c) {
    return LoweringContext::load(d, in, static_cast<size_t>(c), h);
  });
  const std::string prev = LoweringContext::keep(d, in, h);
  const std::string fn = fmt::format("v{}_keep", n.id);
  d.add_member(fn, fmt::format("  __device__ __forceinline__ bool {}({}) const {{\n"
                               "    if (!{}) return false;\n    return {};\n  }}\n",
                               fn, v.handle_params(), prev, pred));
  v.keep_fn = fn;
  v.filters = true;
  v.nodes.push_back(n.id);
  ctx.set_relation(n.id, make_view(std::move(v), in.types, in.size));
}

}  // namespace ranc::codegen
