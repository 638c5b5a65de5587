// lower_nulls: NULLs become explicit validity attributes, so the plan after it has no
// nullable attribute and every later pass, lowering and template works unchanged (DESIGN.md
// section 2: nullable attributes carry validity next to their column; non-nullable ones
// carry nothing and pay nothing). Runs after lower_outer_joins (pass_runner.h).
//
// Layout. A nullable attribute `a` becomes two: `a.valid` (bool, 1 when a is not NULL),
// right before `a` (the value; the type's zero when NULL: 0, false, '' and so on, so equal
// NULLs have equal bits). Sorting by (a.valid, a) puts NULLs first, as the total order of
// program.h says; grouping, distinct and set operations compare (a.valid, a) pairs, so
// NULL = NULL there. Plan inputs and outputs map the pair back to one nullable attribute
// with a validity buffer (rt::PlanRelation::validity).
//
// Expressions: each expression e becomes a value V(e) and, when it can be NULL, a validity
// N(e) (SQL's rules, program.h):
//   attribute a: V = a, N = a.valid;   NULL literal: V = zero, N = false
//   f(x, y) (arithmetic, comparisons, casts, year, like, substring, ...): V = f(V(x), V(y)),
//     N = N(x) and N(y); integer / and % divide only when N holds (else 0), so a NULL
//     operand never raises division by zero
//   x and y: V = V(x) and V(y), N = (N(x) and not V(x)) or (N(y) and not V(y)) or
//     (N(x) and N(y)); or symmetric (false and true swapped); between and in expand to them
//   case: a condition is taken when N(c) and V(c); V and N are cases over the branches
//   x is null: V = not N(x), never NULL;  coalesce(x1, ..): V = case when N(x1) then V(x1)
//     ... , N = N(x1) or ...
// Operators:
//   select p / join residual p: N(p) and V(p);  project: a.valid = N(e),
//     a = case when N(e) then V(e) else zero end (a passed-through attribute is copied);
//   input: declared schema and declared order in the layout;
//   sort by a: by a.valid, a (desc: both desc);
//   reduce: group keys (a.valid, a); an aggregate skips NULL arguments with a filter
//     (Aggregate::filter = N(x)), and a sum/min/max/avg that can be NULL gets a count of
//     the rows it folded: a.valid = count > 0 and the value is zeroed without it (a
//     project after the reduce);
//   join keys: NULL matches nothing: inner and semi joins drop NULL keys first (a select
//     on k.valid, on each side whose key is nullable); an anti join keeps them by joining on
//     (k.valid, k) = (true, k); NULL-safe keys join on (k.valid, k) pairs;
//   union, union all, intersect, difference: the inputs get the same layout (a.valid =
//     true added where one side is not nullable);
//   scalar: yields (v.valid, v) from its input's one tuple (valid false for none).
#pragma once

#include "ranc/ir/program.h"

namespace ranc::passes {

// The checked program with no nullable attribute (checked again; unchanged without one).
Program lower_nulls(const Program& checked);

}  // namespace ranc::passes
