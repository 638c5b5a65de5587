// Lowering of an inner join as a partitioned hash join (hash_lowering.cpp); lower_join
// calls it when physical planning chose JoinAlgorithm::Hash for the node.
#pragma once

#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_hash_join(LoweringContext& ctx, const Node& n);

}  // namespace ranc::codegen
