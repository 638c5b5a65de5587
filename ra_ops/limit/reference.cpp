// Reference semantics of limit: tuples offset .. offset+n-1 of the input's order
// (fewer, or none, when the input ends first).
#include <algorithm>

#include "../reference_internal.h"

namespace ranc::ops::ref {

HostRelation eval_limit(const Node& n, const Inputs& in) {
  const HostRelation& r = *in[0];
  const size_t size = r.num_rows();
  const size_t begin = std::min(size, static_cast<size_t>(std::max<int64_t>(n.offset, 0)));
  const size_t count = std::min(size - begin, static_cast<size_t>(std::max<int64_t>(n.limit, 0)));
  Rows rows(count);
  for (size_t k = 0; k < count; ++k) rows[k] = begin + k;
  return gather(r, rows, n.schema);
}

}  // namespace ranc::ops::ref
