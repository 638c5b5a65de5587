// push_selects: a select over an inner join moves the parts of its predicate that read only
// one side below the join, onto that side (predicate pushdown). Runs after lower_nulls
// (pass_runner.h); optional.
//
// Rules, for (L join R on keys [where r]) |> select c1 and c2 and ... (the join read only by
// the select; the conjuncts ci of the predicate's top-level `and`s):
//   ci that reads attributes of L only        -> L |> select (those ci, in order)
//   ci that reads non-key attributes of R only -> R |> select (those ci, in order)
//   the others (both sides, or none)           stay in a select after the join.
// Only conjuncts that cannot fail move (can_fail: an integer division by an attribute stays
// behind the guards written before it, and is not evaluated on rows the join drops). The
// rows and their order are the same (a select keeps its input's order, the join keeps its
// left input's); the join matches fewer rows, and a select on a side fuses into its
// loading (fuse_pipelines: the one-pass merge join's keep hook, a hash join's
// partitioning). The pass repeats until nothing moves, so a select sinks through a chain
// of joins.
#pragma once

#include "ranc/ir/program.h"

namespace ranc::passes {

Program push_selects(const Program& checked);

}  // namespace ranc::passes
