// Lowering of a join by hashing (hash_lowering.cpp): an inner join as a partitioned hash
// join, a semi or anti join as a probe of a hash set. lower_join calls them when physical
// planning chose JoinAlgorithm::Hash for the node.
#pragma once

#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

void lower_hash_join(LoweringContext& ctx, const Node& n);

// Shared by the join lowerings (defined in lowering.cpp).
// The right input's non-key attributes, in order (the inner join's output carries them).
std::vector<int32_t> right_non_keys(const Node& n, const DeviceRelation& R);
// C++ text of join `n`'s residual at left row i of L and right row j of R (attribute c of
// the inner join's schema: L's attributes, then right_rest's).
std::string join_residual(LoweringContext& ctx, const Node& n, KernelParams& p,
                          const DeviceRelation& L, const DeviceRelation& R,
                          const std::vector<int32_t>& right_rest);
// Makes semi/anti join `n` a stage of the view `v` over its left input L: keep(i) = L
// keeps row i and `found` (a bool expression of i over `members`, added to v.deps) holds,
// negated for an anti join. `searches`: RowView::searches.
void set_semi_stage(LoweringContext& ctx, const Node& n, const DeviceRelation& L, RowView v,
                    std::string members, const std::string& found, bool searches);
// The aggregate object of the join-reduce agents (join_reduce.cuh's JoinFoldHooks::Agg) over
// the functor `fn`'s init(), fold(s, i, j) and merge(a, b) (FoldSpec::members), defined as
// `agg` in a kernel body (fold_agg_struct), and the same as a hook argument (fold_agg_object).
// `swapped`: the agent passes (right, left) positions (a hash join built on its left input),
// handed on to fold as (left, right).
std::string fold_agg_struct(const std::string& fn, const std::string& st, bool swapped = false);
HookArg fold_agg_object(const std::string& st);
// A semi or anti join as a probe of a global hash set of the right side's keys.
void lower_hash_semi_join(LoweringContext& ctx, const Node& n);

}  // namespace ranc::codegen
