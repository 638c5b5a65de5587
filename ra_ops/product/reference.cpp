// Reference semantics of product: every pair, left attributes then right ones; the
// output lists, for each left tuple in order, every right tuple in order.
#include "../reference_internal.h"

namespace ranc::ops::ref {

HostRelation eval_product(const Node& n, const Inputs& in) {
  const HostRelation& l = *in[0];
  const HostRelation& r = *in[1];
  Rows li, ri;
  li.reserve(l.num_rows() * r.num_rows());
  ri.reserve(l.num_rows() * r.num_rows());
  for (size_t i = 0; i < l.num_rows(); ++i)
    for (size_t j = 0; j < r.num_rows(); ++j) {
      li.push_back(i);
      ri.push_back(j);
    }
  internal_check(n.schema.size() == l.num_columns() + r.num_columns(), "product: schema arity");
  HostRelation out(n.schema);
  for (size_t c = 0; c < l.num_columns(); ++c) put_column(out, c, gather_column(l.column(c), li));
  for (size_t c = 0; c < r.num_columns(); ++c)
    put_column(out, l.num_columns() + c, gather_column(r.column(c), ri));
  return out;
}

}  // namespace ranc::ops::ref
