// lower_distinct_aggregates: count(distinct x) and the other distinct aggregates become
// plain aggregates over distinct tuples. Runs before lower_outer_joins (pass_runner.h).
//
// Rules, for `R |> reduce by G a1, ..., an` with distinct aggregates:
//   - every aggregate is distinct, over one argument x (Q16's count(distinct ps_suppkey)):
//       R |> project G, x as $d |> distinct |> reduce by G a1(x -> $d), ...
//     (NULL x values form one tuple per group, which count($d) and the other aggregates
//     skip, so a group whose x are all NULL still has its tuple, with count 0);
//   - otherwise: the plain aggregates (or count() when there are none) by G, then per
//     distinct argument x_j the reduce above, joined to it by a left outer join on G with
//     NULL-safe keys (a NULL group matches its NULL group), or a product when G is empty;
//     a project puts the attributes back in order, count(distinct) as coalesce(c, 0).
#pragma once

#include "ranc/ir/program.h"

namespace ranc::passes {

Program lower_distinct_aggregates(const Program& checked);

}  // namespace ranc::passes
