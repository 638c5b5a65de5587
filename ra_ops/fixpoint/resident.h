// A fixpoint's resident rounds (rt::ResidentRounds): semi-naive rounds of a thin recursion
// in one cooperative kernel, for the executor to run instead of the loop body while the
// deltas are small. Internal to ra_ops/fixpoint.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

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
