// Reference semantics of select: the tuples where the predicate is true (not false, not
// NULL), in input order
// (so select keeps a sorted input sorted).
#include "../reference_internal.h"
#include "ranc/ra_ops/ra_ops.h"

namespace ranc::ops::ref {

HostRelation eval_select(const Node& n, const Inputs& in) {
  const HostRelation& r = *in[0];
  internal_check(n.predicate.valid(), "select without a predicate");
  const ExprNode& pred = *n.predicate;
  RowLoader loader(r, pred);
  Rows keep;
  try {
    for (size_t i = 0; i < r.num_rows(); ++i)
      if (Value v = eval_expr(pred, loader.load(i)); !v.is_null() && v.as_bool()) keep.push_back(i);
  } catch (const UserError& e) {
    rethrow_in_node(e, n);
  }
  return gather(r, keep, n.schema);
}

}  // namespace ranc::ops::ref
