// Reference semantics of distinct: each distinct tuple once (total order on whole
// tuples). The first occurrence of each is kept, in input order, so distinct keeps
// a sorted input sorted.
#include "../reference_internal.h"

namespace ranc::ops::ref {

HostRelation eval_distinct(const Node& n, const Inputs& in) {
  const HostRelation& r = *in[0];
  return gather(r, first_occurrences(r), n.schema);
}

}  // namespace ranc::ops::ref
