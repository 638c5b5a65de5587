// lower_scalar_subqueries: a scalar subquery becomes a product with a one-tuple relation.
// Runs after prune_attributes, before the other lowerings (pass_runner.h).
//
// Rule. A node N (select, project, join, reduce) holding scalar(S_k) for its subquery
// inputs S_1..S_m (program.h: its inputs after the operator's own) is rewritten as
//   X = in0 product (scalar(S_1) |> project v as $s1) product ... product (... $sm)
//   N' = N over X, each scalar(S_k) replaced by the attribute $sk
// (for a join, X replaces the left input), then a project back to N's attributes where
// N' passes the $s attributes through (select, join). scalar(S) (OpKind::Scalar) checks
// at run time that S has at most one tuple (an ExecutionError naming the node otherwise)
// and yields that tuple, or one of NULLs for an empty S. The product with one tuple keeps
// every row of in0; its cost is one more column read per row, fused into N's kernel.
#pragma once

#include "ranc/ir/program.h"

namespace ranc::passes {

// The checked program without scalar subqueries (checked again; unchanged when it has none).
Program lower_scalar_subqueries(const Program& checked);

}  // namespace ranc::passes
