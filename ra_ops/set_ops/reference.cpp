// Reference semantics of union, intersect and difference: SET semantics on whole
// tuples under the total order (each distinct tuple once; NULL equals NULL). Output
// order: first occurrences, left input first, then (union) the right input's new tuples.
// union all: the left's tuples, then the right's.
#include "../reference_internal.h"

namespace ranc::ops::ref {
namespace {

// The distinct tuples of `left` (first occurrences, in left order) that do
// (want = true) or do not occur in `right`.
Rows filter_by_membership(const HostRelation& left, const HostRelation& right, bool want) {
  Rows cols = all_rows(left.num_columns());
  Keys lk, rk;
  norm_keys_pair(left, cols, right, cols, lk, rk);
  const Rows ls = sort_rows(lk, left.num_rows());
  const Rows rs = sort_rows(rk, right.num_rows());
  std::vector<uint8_t> keep(left.num_rows(), 0);
  size_t q = 0;
  for (size_t p = 0; p < ls.size(); ++p) {
    if (p > 0 && compare_keys(lk, ls[p - 1], lk, ls[p]) == 0) continue;  // not a first occurrence
    while (q < rs.size() && compare_keys(rk, rs[q], lk, ls[p]) < 0) ++q;
    bool found = q < rs.size() && compare_keys(rk, rs[q], lk, ls[p]) == 0;
    if (found == want) keep[ls[p]] = 1;
  }
  Rows out;
  for (size_t i = 0; i < keep.size(); ++i)
    if (keep[i]) out.push_back(i);
  return out;
}

}  // namespace

HostRelation eval_set_op(const Node& n, const Inputs& in) {
  const HostRelation& l = *in[0];
  const HostRelation& r = *in[1];
  internal_check(l.num_columns() == r.num_columns() && l.num_columns() == n.schema.size(),
                 "set operation: arity");
  if (n.kind == OpKind::Union || n.kind == OpKind::UnionAll) {
    HostRelation both(n.schema);
    for (size_t c = 0; c < l.num_columns(); ++c)
      put_column(both, c, concat_columns(l.column(c), r.column(c)));
    if (n.kind == OpKind::UnionAll) return both;
    return gather(both, first_occurrences(both), n.schema);
  }
  bool keep_present = n.kind == OpKind::Intersect;
  internal_check(keep_present || n.kind == OpKind::Difference, "eval_set_op: not a set operation");
  return gather(l, filter_by_membership(l, r, keep_present), n.schema);
}

}  // namespace ranc::ops::ref
