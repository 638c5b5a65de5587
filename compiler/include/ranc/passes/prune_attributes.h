// prune_attributes: an input attribute that no output depends on is neither loaded,
// kept nor uploaded (issue 10). Runs first, on the checked program.
//
// The pass computes, backwards from the outputs, which attributes of each node's
// output are live (some output's value depends on them), then gives every input node
// a declared schema of its live attributes only (in declared order) and checks the
// program again, so every later pass, the plan and both executors see the narrow
// input. The rules per operator (live(x) = the live attributes of node x's output):
//   output, sort, distinct, union, intersect, difference: all input attributes (an
//     output keeps every attribute; sort breaks ties by every attribute, which
//     decides what a later limit keeps; set semantics compare whole tuples);
//   union all: live(out) on both sides;
//   a scalar subquery's relation: its one attribute;
//   select: live(out) and the predicate's attributes;
//   project: the attributes its expressions read;
//   limit: live(out);
//   product: live(out) split between the two sides;
//   join: the keys of both sides, the residual's attributes, and live(out) mapped to
//     the side each output attribute comes from (semi/anti: the left's);
//   reduce: the group keys and the aggregates' arguments and filters (count() reads
//     none).
// An input keeps at least one attribute (`count()` over a relation reads none, but the
// relation still has rows): its narrowest, preferring one that is not a string. Its
// key is the longest prefix of the declared key that is kept; its declared physical
// order ("sorted by") is truncated before the first attribute that is not kept, an
// order every sorted relation still has.
//
// Binding: a relation bound to a pruned input may have more attributes than the
// program uses; the executors take the ones they need by name (and check their types).
// Off: RANC_DISABLE_PASSES=prune_attributes or CodegenOptions::disabled_passes.
#pragma once

#include <string>
#include <vector>

#include "ranc/ir/program.h"

namespace ranc::passes {

// What pruning did to one input.
struct InputPruning {
  std::string relation;
  Schema declared;  // as written
  Schema kept;      // what is loaded and uploaded
};

// The checked program with every input narrowed to its live attributes (checked
// again). `report`, when given, receives one entry per input, in input order.
Program prune_attributes(const Program& checked, std::vector<InputPruning>* report = nullptr);

// The attributes of its input (of `arity` attributes) that reduce `n` reads: the rule above
// (its group keys, its aggregates' arguments and filters). Lowerings use it too: a sort that
// feeds only the reduce leaves the others out (LoweringContext::sort).
std::vector<bool> reduce_attributes_read(const Node& n, size_t arity);

// "lineitem: 7 of 16 attributes (l_quantity, ...)" per input, one line each.
std::string print_pruning(const std::vector<InputPruning>& report);

}  // namespace ranc::passes
