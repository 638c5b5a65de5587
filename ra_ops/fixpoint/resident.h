// A fixpoint's resident rounds (rt::ResidentRounds): semi-naive rounds of a thin recursion
// in one cooperative kernel, for the executor to run instead of the loop body while the
// deltas are small. Internal to ra_ops/fixpoint.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

// Which nodes of a fixpoint's rules (`rules`: FixpointDef::rules or checked_rules) read a
// recursive relation (one of `names`), directly or through their inputs; memoised.
class ReadsRecursive {
 public:
  ReadsRecursive(const Program& rules, const std::vector<std::string>& names)
      : rules_(rules), names_(names), memo_(rules.size(), -1) {}
  bool operator()(NodeId id) {
    int8_t& r = memo_[static_cast<size_t>(id)];
    if (r < 0) {
      const Node& n = rules_.node(id);
      bool any = n.kind == OpKind::Input &&
                 std::find(names_.begin(), names_.end(), n.name) != names_.end();
      for (NodeId in : n.inputs) any = (*this)(in) || any;
      r = any ? 1 : 0;
    }
    return r == 1;
  }

 private:
  const Program& rules_;
  const std::vector<std::string>& names_;
  std::vector<int8_t> memo_;
};

// A loop-invariant input of the rules (a node of FixpointDef::rules), computed before the
// loop, sorted by `order` (attribute names, ascending) when that is not empty.
struct ResidentInvariant {
  NodeId rules_id = -1;
  std::vector<std::string> order;
  DeviceRelation rel;
};

// The resident kernel of the group, emitted, and its step, or nothing when the group does
// not qualify: one recursive relation of one or two i32/date attributes or one i64, not
// nullable; every rule that reads it reads it once, through selects, projects, sorts,
// distincts and joins whose other input is a loop invariant sorted by the join keys
// (inner, or semi and anti without a residual), the recursive side on the left, integer
// keys; no expression that can fail. `full` and `delta` are the loop's carried relations.
std::optional<rt::ResidentRounds> resident_rounds(LoweringContext& ctx, const Node& n,
                                                  const FixpointDef& def,
                                                  const std::vector<ResidentInvariant>& invariants,
                                                  const DeviceRelation& full,
                                                  const DeviceRelation& delta);

}  // namespace ranc::codegen
