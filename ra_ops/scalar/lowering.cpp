// Lowering of scalar (a scalar subquery's relation, made by lower_scalar_subqueries, in
// lower_nulls' layout): one thread reads the input's size and writes the one output tuple
// (v.valid, v): the input's tuple when it has one, (false, zero) when it has none, and
// sets a flag when it has more, which a CheckFlag step turns into an ExecutionError
// naming the node. The output size is 1, known without a read-back.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_scalar(LoweringContext& ctx, const Node& n) {
  internal_check(n.explicit_validity, "codegen: a scalar node outside lower_nulls' layout");
  const DeviceRelation in = ctx.dense(ctx.relation(n.inputs.at(0)));
  rt::SlotId one = ctx.new_slot();
  ctx.step(rt::SetSize{one, rt::SizeExpr::fixed(1)});
  DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::fixed(1), one);
  rt::BufferId flag =
      ctx.allocate(fmt::format("n{}.too_many", n.id), 4, rt::SizeExpr::fixed(1), n.id, true);
  KernelParams p;
  const Type t = out.types[1];
  const std::string ns = p.slot(in.size), fl = p.buffer(flag, "int", false);
  // The input is (v) or (v.valid, v).
  const std::string valid =
      in.types.size() == 2 ? fmt::format("{} != 0", LoweringContext::raw(p, in, 0, "0")) : "true";
  const std::string value = LoweringContext::raw(p, in, in.types.size() - 1, "0");
  ExprNode z;  // the type's zero as a resolved literal ('' through the dictionary)
  z.kind = ExprKind::Literal;
  z.literal = Value::zero(t);
  z.type = t;
  const std::string zero = ctx.expr(make_expr(std::move(z)), p, [](int32_t) -> std::string {
    throw InternalError("codegen: a constant reads an attribute");
  });
  auto ct = storage_ctype(t);
  std::string body = fmt::format(
      "  if (blockIdx.x != 0 || threadIdx.x != 0) return;\n"
      "  if ({0} > 1) {1}[0] = 1;\n"
      "  const bool valid = {0} == 1 && ({2});\n"
      "  {3}[0] = valid ? 1 : 0;\n"
      "  {4}[0] = valid ? ({5}){6} : ({5}){7};\n",
      ns, fl, valid, p.buffer(out.columns[0], "unsigned char", false),
      p.buffer(out.columns[1], ct, false), ct, value, zero);
  ctx.kernel(n.id, ctx.kernel_name(n.id, "scalar"), p, body,
             LaunchShape{rt::SizeExpr::fixed(1), 1, 32, false});
  ctx.step(rt::CheckFlag{flag,
                         fmt::format("a scalar subquery has more than one tuple ({}); it must "
                                     "yield at most one",
                                     describe_node(ctx.program(), n)),
                         n.id});
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
