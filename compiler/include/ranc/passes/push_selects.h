// push_selects: a select moves the parts of its predicate that read only one side of the
// inner join under it below the join, onto that side, and the parts that read only
// attributes a project passes on below the project (predicate pushdown). Runs after
// lower_nulls (pass_runner.h); optional.
//
// Rules, for the node under the select read by nothing else, and the conjuncts ci of the
// select's predicate (its top-level `and`s), in order:
//   (L join R on keys [where r]) |> select ...   (inner joins only)
//     ci that reads attributes of L only         -> L |> select ci; when it reads only L's
//                                                   key attributes, also R |> select ci with
//                                                   them renamed to R's keys (equal in every
//                                                   match)
//     ci that reads non-key attributes of R only -> R |> select ci
//   (X |> project ...) |> select ...   (a project none of whose expressions can fail)
//     ci that reads only attributes the project passes through or renames
//                                                -> X |> select ci (renamed to X's names)
//   the others (both sides, computed attributes, none) stay in a select where it was.
// Only conjuncts that cannot fail move (can_fail: an integer division by an attribute stays
// behind the guards written before it, and is not evaluated on rows the join drops); a
// project that can fail keeps its select after it (it checks every row it sees, as an
// unfused plan does). The rows and their order are the same (a select keeps its input's
// order, the join its left input's, a project its input's); the join matches fewer rows.
// The pass repeats until nothing moves, so a select sinks through chains of joins and
// projects. Its oracle: tests/codegen/push_selects_test.cpp and the TPC-H queries
// (tests/tpch, TpchRaCpu.PushedSelectsMatchSqlite) on the CPU reference.
#pragma once

#include "ranc/ir/program.h"

namespace ranc::passes {

Program push_selects(const Program& checked);

}  // namespace ranc::passes
