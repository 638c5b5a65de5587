// Lowering of select: a fused stage. The output is a view of the input (its own view,
// or the identity view of a dense input) whose keep function also tests the predicate;
// the consumer streams it, or the code generator materialises it with SelectAgent
// (select.cuh) when fuse_pipelines does not fuse the select into its consumer.
// Over an input with a declared order left to it (DeviceRelation::unverified), keep first
// compares the row with its predecessor by that order and sets the check's flag when it
// orders before it: every kernel that reads the view asks keep about every row, so the
// select's read of the keys is the check, with no pass of its own. The CheckFlag follows
// the last kernel that reads the view (LoweringContext::check_after_last_use).
#include "ranc/codegen/lowering.h"

#include <functional>

namespace ranc::codegen {
namespace {

// May the predicate be evaluated for every row of the input's enumeration, also those its
// earlier stages drop (keep = earlier & predicate, no branch)? Then the loads of a row's
// columns are independent instead of each waiting for the compare before it: a
// select -> select chain ran at 47% of copy with the branch (H100, 2^28 rows). Only where
// nothing can go wrong: the predicate cannot fail (can_fail) and reads only columns of the
// input's dense storage (a computed attribute may fail on a dropped row: project x / y
// after select y != 0), rows of a dense relation or of a row-index view.
bool evaluates_eagerly(const Node& n, const DeviceRelation& in) {
  if (!in.view || in.view->keep_fn.empty()) return false;  // nothing to evaluate early
  const RowView& v = *in.view;
  if (v.source != RowView::Source::Index || v.paged || can_fail(n.predicate.ptr())) return false;
  bool columns = true;
  std::function<void(const ExprPtr&)> visit = [&](const ExprPtr& e) {
    if (e->kind == ExprKind::Attr && v.attrs.at(static_cast<size_t>(e->attr_index)).column < 0)
      columns = false;
    for (const auto& a : e->args) visit(a);
  };
  visit(n.predicate.ptr());
  return columns;
}

}  // namespace

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
  std::string body = evaluates_eagerly(n, in)
                         ? fmt::format("    return {} & {};\n", prev, pred)
                         : fmt::format("    if (!{}) return false;\n    return {};\n", prev, pred);
  if (const auto& u = in.unverified) {
    internal_check(!in.view, "select: a declared order to check on a view");
    const std::string order = fmt::format("v{}_out_of_order", n.id);
    d.add_member(order, LoweringContext::out_of_order_member(d, in, *u, order));
    body = fmt::format("    if (i > 0 && {}(i)) {}[0] = 1;\n{}", order,
                       d.buffer(u->flag, "int", false), body);
    ctx.check_after_last_use(rt::CheckFlag{u->flag, u->message, n.id});
  }
  d.add_member(fn, fmt::format("  __device__ __forceinline__ bool {}({}) const {{\n{}  }}\n", fn,
                               v.handle_params(), body));
  v.keep_fn = fn;
  v.filters = true;
  v.nodes.push_back(n.id);
  ctx.set_relation(n.id, make_view(std::move(v), in.types, in.size));
}

}  // namespace ranc::codegen
