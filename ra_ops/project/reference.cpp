// Reference semantics of project: one output attribute per named expression, row
// by row, in input order (so project keeps a sorted input's tuple order).
#include "../reference_internal.h"

namespace ranc::ops::ref {

HostRelation eval_project(const Node& n, const Inputs& in) {
  const HostRelation& r = *in[0];
  internal_check(n.schema.size() == n.exprs.size(), "project: schema arity");
  HostRelation out(n.schema);
  for (size_t k = 0; k < n.exprs.size(); ++k)
    put_column(out, k, eval_column(r, *n.exprs[k].expr, n.schema[k].type, n));
  return out;
}

}  // namespace ranc::ops::ref
