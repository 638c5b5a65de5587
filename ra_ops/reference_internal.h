// Shared pieces of the CPU reference executor (the oracle): per-operator entry
// points called by ops::eval_node, and helpers that compare, gather and load
// tuples straight from host columns. Internal to ra_ops; not installed.
//
// Operators work on row indices: they decide which input rows (or pairs of rows)
// make up the output, then gather typed columns. String columns are gathered by
// code with the input's dictionary, so no string is copied unless an expression
// reads it.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ranc/data/host_relation.h"
#include "ranc/ir/program.h"

namespace ranc::ops::ref {

using Rows = std::vector<size_t>;
using Inputs = std::vector<const HostRelation*>;

// ---- per-operator reference semantics (ra_ops/<op>/reference.cpp) ----
// Input: inputs[0] is the relation bound to the input node by the caller.
HostRelation eval_input(const Node& n, const Inputs& in);
HostRelation eval_select(const Node& n, const Inputs& in);
HostRelation eval_project(const Node& n, const Inputs& in);
HostRelation eval_product(const Node& n, const Inputs& in);
HostRelation eval_set_op(const Node& n, const Inputs& in);  // union, intersect, difference
HostRelation eval_join(const Node& n, const Inputs& in);
HostRelation eval_reduce(const Node& n, const Inputs& in);
HostRelation eval_sort(const Node& n, const Inputs& in);
HostRelation eval_limit(const Node& n, const Inputs& in);
HostRelation eval_distinct(const Node& n, const Inputs& in);
HostRelation eval_output(const Node& n, const Inputs& in);
HostRelation eval_fixpoint(const Node& n, const Inputs& in);
HostRelation eval_scalar(const Node& n, const Inputs& in);
// Every relation of a fixpoint group, in FixpointDef::names order (inputs: its outer
// relations).
std::vector<HostRelation> eval_fixpoint_group(const FixpointDef& def, const Inputs& outer);

// ---- helpers (ra_ops/reference.cpp) ----

// Normalized keys: each cell mapped to a uint64_t whose unsigned order is the total
// order of program.h (ints with the sign bit flipped, floats by IEEE totalOrder
// bits, bools 0/1, strings by dictionary code), complemented when descending. The
// map is injective, so equal keys mean the same value under the total order.
// Strings of two relations are comparable only through a common dictionary.
// A NULL cell maps to 0 here; push_norm_keys adds the validity in front.
using Keys = std::vector<std::vector<uint64_t>>;  // one vector per column
std::vector<uint64_t> norm_keys(const Column& c, bool descending = false,
                                const Dictionary* common = nullptr);
// Appends the keys of column c to `keys`: for a nullable column (or with `with_validity`)
// first its validity (0 for NULL, so NULL sorts first, or last when descending), then
// norm_keys. Rows then compare by the total order of program.h, NULL included.
void push_norm_keys(Keys& keys, const Column& c, bool descending = false,
                    const Dictionary* common = nullptr, bool with_validity = false);
// A dictionary holding the strings of both columns.
std::shared_ptr<const Dictionary> common_dictionary(const Column& a, const Column& b);
// Normalized keys of columns `ca` of a and `cb` of b (pairwise the same types),
// strings through common dictionaries so that keys compare across a and b.
void norm_keys_pair(const HostRelation& a, const std::vector<size_t>& ca, const HostRelation& b,
                    const std::vector<size_t>& cb, Keys& ka, Keys& kb);
// Row indices ordered lexicographically by keys[0], keys[1], ...; stable (equal
// keys keep row order). LSD radix sort.
Rows sort_rows(const Keys& keys, size_t n);
// Lexicographic comparison of row i of a with row j of b.
std::strong_ordering compare_keys(const Keys& a, size_t i, const Keys& b, size_t j);

// The rows of `in` listed in `rows` (in that order), in a relation with `schema`
// (same types as `in`, names and key may differ).
Column gather_column(const Column& c, const Rows& rows);
HostRelation gather(const HostRelation& in, const Rows& rows, const Schema& schema);
// Sets column c of `out` (its type must be the schema's; it is made nullable or not as
// the schema says, and must hold no NULL where the schema has none).
void put_column(HostRelation& out, size_t c, Column col);
// a's rows then b's (same type; strings through a common dictionary).
Column concat_columns(const Column& a, const Column& b);
// Whether row i of the key columns `cols` of r has a NULL.
bool any_null(const HostRelation& r, const std::vector<size_t>& cols, size_t i);
// 0, 1, ..., n-1.
Rows all_rows(size_t n);
// The first occurrence of each distinct tuple, in input order.
Rows first_occurrences(const HostRelation& in);
// The value of e (resolved against in's schema) for every row of `in`, as a column
// of type t; run-time errors are reported in node n.
Column eval_column(const HostRelation& in, const ExprNode& e, Type t, const Node& n);

// The schema positions an expression reads (sorted, unique).
std::vector<size_t> attrs_read(const ExprNode& e);

// Loads the attributes an expression reads from one row of a relation into a
// schema-ordered row of Values, reusing the buffer from row to row.
class RowLoader {
 public:
  RowLoader(const HostRelation& r, const ExprNode& e);
  const std::vector<Value>& load(size_t i);

 private:
  const HostRelation& r_;
  std::vector<size_t> used_;
  std::vector<Value> row_;
};

// Rethrows a run-time UserError from evaluating node n with the node named in the
// message and the node's location when the expression's is unknown.
[[noreturn]] void rethrow_in_node(const UserError& e, const Node& n);

// The value of a scalar subquery's relation (one attribute): NULL when it is empty, an
// ExecutionError naming node n when it has more than one tuple.
Value scalar_value(const HostRelation& r, const Node& n);
// Node n with every scalar subquery replaced by its value (a literal) and the subquery
// inputs dropped from `inputs`.
Node substitute_subqueries(const Node& n, std::vector<const HostRelation*>& inputs);

}  // namespace ranc::ops::ref
