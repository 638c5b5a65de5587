// Reference semantics of sort: by the keys under the total order, each ascending or
// descending, ties broken by the remaining attributes ascending, left to right. The
// order is thus total on distinct tuples, and deterministic.
#include "../reference_internal.h"

namespace ranc::ops::ref {

HostRelation eval_sort(const Node& n, const Inputs& in) {
  const HostRelation& r = *in[0];
  Keys keys;
  std::vector<bool> is_key(r.num_columns(), false);
  for (const SortKey& k : n.sort_keys) {
    internal_check(k.index >= 0 && static_cast<size_t>(k.index) < r.num_columns(),
                   "sort: unresolved key");
    push_norm_keys(keys, r.column(static_cast<size_t>(k.index)), k.descending);
    is_key[static_cast<size_t>(k.index)] = true;
  }
  for (size_t c = 0; c < r.num_columns(); ++c)
    if (!is_key[c]) push_norm_keys(keys, r.column(c));
  const Rows order = sort_rows(keys, r.num_rows());
  return gather(r, order, n.schema);
}

}  // namespace ranc::ops::ref
