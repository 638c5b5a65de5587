// lower_outer_joins: left, right and full outer joins become an inner join and anti
// joins padded with NULLs, under union all. Runs before lower_nulls (pass_runner.h).
//
// Rules, for L (left|right|full) join R on keys [where p] (schema: L's attributes, then
// R's non-key ones; program.h, NULLS):
//   matched    = L join R on keys where p                  (left, full)
//              = (R' join L on keys' where p') |> project  (right: keys from R)
//   left only  = L antijoin R on keys where p |> project L's attributes, NULL for R's
//   right only = R' antijoin L on keys' where p' |> project keys from R', NULL for L's
//                non-key attributes, R's non-key attributes
//   left = matched union all left-only; right = matched union all right-only;
//   full = matched union all left-only union all right-only.
// R' is R with its key attributes renamed ($k...), so that no name of R clashes with
// one of L's non-key attributes; p' is p with L's key names read as those. NULL-safe keys
// stay NULL-safe. Each join runs with the planner's algorithm and fusion like any other.
#pragma once

#include "ranc/ir/program.h"

namespace ranc::passes {

Program lower_outer_joins(const Program& checked);

}  // namespace ranc::passes
