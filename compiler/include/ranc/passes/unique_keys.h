// Unique attribute sets: which sets of a relation's attributes identify its rows.
//
// A key set of node n is a set of attribute positions of n's output on which no two rows
// agree (the empty set: n has at most one row). Derived bottom-up from the declared keys of
// inputs (Schema::key_size) and what each operator does to them:
//   input:                     its declared key, when it has one;
//   select, sort, limit, output, semi and anti joins, intersect, difference: the (left)
//                              input's sets, unchanged;
//   distinct, union, fixpoint: the whole tuple, and for distinct the input's sets too;
//   project:                   an input set whose attributes all pass through, renumbered;
//   reduce:                    its group keys (the first attributes); none: at most one row;
//   inner join:                when some right set lies within the right join keys, every
//                              left row matches at most once, so the left's sets hold; when
//                              some left set lies within the left join keys, the right's
//                              sets hold (the right key attributes read as the left keys
//                              they equal); and a left set with a right set always does;
//   product:                   a left set with a right set.
// Declared keys are not verified, so these sets are hints for performance choices (which
// side of a hash join to build on, whether its output can be sized by its probe rows),
// never for results: a plan that relies on one must stay correct when it is wrong.
#pragma once

#include <map>
#include <vector>

#include "ranc/ir/program.h"

namespace ranc::passes {

using KeySet = std::vector<int32_t>;  // sorted attribute positions

class UniqueKeys {
 public:
  // Over `program`, which may grow while this is in use (nodes are analysed on demand).
  explicit UniqueKeys(const Program& program) : program_(program) {}

  // The key sets of node `id` (at most kMaxSets, the smallest first).
  const std::vector<KeySet>& of(NodeId id);
  // Whether some key set of node `id` lies within `attrs` (rows agreeing on `attrs` are one row).
  bool within(NodeId id, const std::vector<int32_t>& attrs);

  static constexpr size_t kMaxSets = 8;

 private:
  std::vector<KeySet> compute(const Node& n);
  const Program& program_;
  std::map<NodeId, std::vector<KeySet>> memo_;
};

}  // namespace ranc::passes
