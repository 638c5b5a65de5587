// Lowering of distinct: the input is grouped by the whole tuple (physical planning), so
// a row is kept when it differs from its predecessor: a fused stage, like a select,
// whose keep function compares row i with row i - 1 of its input. It reads rows at
// random (each row and its predecessor), so a view reaches it only when it keeps every
// row and checks nothing (a fused project); otherwise its input is materialised. Its
// consumer streams the view (e.g. a fixpoint's anti join against the full relation,
// which then shares the one compaction), or the code generator materialises it with
// SelectAgent.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_distinct(LoweringContext& ctx, const Node& n) {
  DeviceRelation in = ctx.relation(n.inputs.at(0));
  if (in.view && (in.view->source != RowView::Source::Index || !in.view->keep_fn.empty()))
    in = ctx.dense(in);
  if (ctx.physical(n.inputs.at(0)).unique) {  // nothing to remove: the input passes through
    // (never a sort's packed words: fuse_pipelines keeps them only for a distinct that sorts)
    ctx.set_relation(n.id, in);
    return;
  }
  RowView v = view_of(in);
  KernelParams& d = v.deps;
  std::string pred = "i == 0";
  for (size_t c = 0; c < in.types.size(); ++c) {
    auto ct = storage_ctype(in.types[c]);
    pred += fmt::format(" || !ranc::tpl::total_equal(({}){}, ({}){})", ct,
                        LoweringContext::raw(d, in, c, "i"), ct,
                        LoweringContext::raw(d, in, c, "i - 1"));
  }
  const std::string fn = fmt::format("v{}_keep", n.id);
  d.add_member(fn, fmt::format("  __device__ __forceinline__ bool {}(long long i) const {{\n"
                               "    return {};\n  }}\n",
                               fn, pred));
  v.keep_fn = fn;
  v.filters = true;
  v.nodes.push_back(n.id);
  ctx.set_relation(n.id, make_view(std::move(v), in.types, in.size));
}

}  // namespace ranc::codegen
