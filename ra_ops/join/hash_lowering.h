// Lowering of a join by hashing (hash_lowering.cpp): an inner join as a partitioned hash
// join, a semi or anti join as a probe of a hash set. lower_join calls them when physical
// planning chose JoinAlgorithm::Hash for the node.
#pragma once

#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_hash_join(LoweringContext& ctx, const Node& n);
// A semi or anti join as a probe of a global hash set of the right side's keys.
void lower_hash_semi_join(LoweringContext& ctx, const Node& n);

}  // namespace ranc::codegen
