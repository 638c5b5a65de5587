// The RA program IR: a DAG of operator nodes.
//
// ============================== SEMANTICS ==============================
// These rules are followed by the checker, the CPU reference executor (the oracle)
// and every GPU code path.
//
// Relations are BAGS of tuples. select, project, product, join and reduce keep
// multiplicities; union, intersect, difference and distinct have SET semantics on
// whole tuples: their output holds each distinct tuple once.
//   union(a, b):      tuples in a or b;     intersect(a, b): tuples in a and b;
//   difference(a, b): tuples in a, not in b.
// Order: a relation has no defined order unless it is the output of sort (or of
// limit/select/project/distinct applied directly to a sorted relation, which keep
// the order). Program outputs are compared as multisets unless they are ordered.
// sort(keys) orders by the keys (each ascending or descending) and breaks ties by the
// remaining attributes in ascending order, left to right, so sort is deterministic
// and so is limit after sort. limit(n, offset) keeps tuples offset..offset+n-1 of its
// input's order; on an unordered input WHICH tuples it keeps is unspecified.
// Total order used by sort, reduce groups, distinct, set operations and join keys:
// integers/dates numerically, bool false < true, strings by bytes (dictionary codes
// are order preserving), floats by IEEE-754 totalOrder (-NaN < -inf < ... < -0.0 <
// +0.0 < ... < inf < NaN; two floats are the same key only when bit-identical).
// Predicates (=, <, ... in expressions) use IEEE comparison instead: -0.0 = 0.0 and
// every comparison with NaN is false except <>, which is true.
//
// Types and promotion. Numeric types are i32 < i64 < f32 < f64. Arithmetic and
// comparisons on two numeric operands convert both to the wider type, except that
// i64 with f32 gives f64. Integer literals are i32 when they fit, else i64; decimal
// literals are f64 (1.5f is f32). bool, date and string are not numeric:
//   date + i32, i32 + date, date - i32 -> date; date - date -> i32 (days);
//   comparisons need both sides of one kind: numeric/numeric, date/date,
//   string/string, bool/bool (bool only = and <>); and/or/not take bool.
// between(x, lo, hi) is lo <= x and x <= hi. x in (v1, ...) is x = v1 or ...
// case: conditions are bool; branch values promote to one type (numeric), or must
// all be the same type. year(date) -> i32. like/starts_with take a string and a
// constant pattern: like's '%' matches any sequence, '_' one character (one UTF-8
// code point; no escape); starts_with compares bytes.
// Evaluation order: and/or short-circuit left to right, case evaluates only the
// branch it takes, so `b <> 0 and a / b > 1` never divides by zero.
// cast: between any numeric types, bool <-> numeric (nonzero is true), date <-> i32/
// i64; float to integer truncates toward zero and saturates, NaN becomes 0; a
// narrowing integer cast (i64 to i32) keeps the low 32 bits. A cast to the same type
// is a no-op (strings too); strings cannot be cast to another type.
//
// Arithmetic. Integer + - * wrap around (two's complement) on overflow. Integer /
// truncates toward zero, % has the sign of the dividend; i/0 and i%0 are run-time
// errors (ExecutionError naming the operator); MIN / -1 wraps to MIN and MIN % -1
// is 0. Floating-point follows IEEE-754 (x/0.0 is inf or NaN).
//
// Aggregates (reduce): sum of i32 or i64 is i64, sum of f32/f64 is f64; count is i64
// (count() counts tuples, count(x) the tuples where x is not NULL); min/max keep the
// argument's type (any type but bool); avg is f64 (the sum as f64 / the count).
// Integer sums are exact or an error: a sum whose exact value leaves the i64 range is an
// ExecutionError naming the operator and the aggregate, never a wrapped value. avg adds
// its arguments converted to f64, so it does not overflow. Floating-point sums may differ in the
// last bits between executors (summation order: the GPU adds in parallel, so a sum of n
// f64 values may differ from the left-to-right sum by about n * 2^-53 times the sum of
// the magnitudes). `distinct` in an aggregate (count(distinct x), sum(distinct x), ...)
// applies it to the distinct non-NULL values of its group. A reduce with group keys yields
// one tuple per group; with no group keys it yields one tuple, also over an empty input
// (count 0, every other aggregate NULL), so its sum/min/max/avg are nullable.
//
// NULLS. An attribute is nullable or not by its schema (`a i32 null` in .ra); only a
// nullable attribute, or an expression over one (or the NULL keyword, a scalar subquery,
// an outer join's padding), can be NULL. The rules are SQL's:
// - Arithmetic, comparisons, between, in, cast, year, like, starts_with, substring and
//   negation are NULL when an operand is NULL (x in (1, NULL) is true when x = 1 and NULL
//   otherwise). `x is null` is never NULL. coalesce(x1, ..., xn) is the first non-NULL
//   argument, or NULL.
// - Three-valued logic: not NULL is NULL; false and NULL is false, true and NULL is NULL;
//   true or NULL is true, false or NULL is NULL. `x and y` evaluates y only when x is not
//   false, `x or y` only when x is not true.
// - select and a join's residual keep a tuple only where the predicate is true (not NULL);
//   case takes a branch only where its condition is true.
// - Join keys: NULL equals nothing, not even NULL (a tuple with a NULL key matches no
//   tuple; an anti join keeps it; an outer join pads it).
// - Grouping, distinct, set operations and sort treat NULL as a value equal to NULL and
//   smaller than every other value of its type: one group for the NULL keys, NULLs first
//   in ascending order and last in descending order.
// - Aggregates skip NULL arguments; a sum, min, max or avg with no non-NULL argument in
//   its group is NULL (count is then 0).
// - Integer division or modulo by zero is an error only when neither operand is NULL.
// Outer joins (left, right, full) on equal keys: the inner join's tuples, plus each tuple
// of the preserved side(s) that matches no tuple of the other side (its key equal and the
// residual true), padded with NULLs. The schema is the inner join's: the left attributes,
// then the right's non-key ones; the key attributes hold the key of whichever side is
// present (the left's, or for a right tuple without a match the right's), and the
// attributes of a side that may be missing are nullable.
// union all(a, b) keeps every tuple of both inputs (a bag; the left's names).
// A scalar subquery is the value of the only attribute of a relation with at most one
// tuple: NULL when it has none, an ExecutionError naming the node when it has more.
//
// Operator schemas:
//   select: the input's.  project: the listed names and expression types; its key is
//   the longest prefix of the input key kept unchanged and in place.  product: left
//   attributes then right attributes (names must be disjoint).  set operations: the
//   left input's names; inputs need the same arity and types.  join inner: left
//   attributes then the right's non-key attributes (right keys equal the left's);
//   semi/anti: the left's. Key attributes must have identical types; the residual
//   predicate sees the inner join's output schema.  reduce: group keys then
//   aggregates, key = group keys.  sort/limit/distinct: the input's.
// ======================================================================
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ranc/data/error.h"
#include "ranc/data/host_relation.h"
#include "ranc/ir/expr.h"

namespace ranc {

// The operator kinds, declared once: enum, names and the printer derive from this.
#define RANC_OP_KINDS(X)         \
  X(Input, "input", 0)           \
  X(Select, "select", 1)         \
  X(Project, "project", 1)       \
  X(Product, "product", 2)       \
  X(Union, "union", 2)           \
  X(Intersect, "intersect", 2)   \
  X(Difference, "difference", 2) \
  X(UnionAll, "union all", 2)    \
  X(Join, "join", 2)             \
  X(Reduce, "reduce", 1)         \
  X(Sort, "sort", 1)             \
  X(Limit, "limit", 1)           \
  X(Distinct, "distinct", 1)     \
  X(Fixpoint, "fixpoint", -1)    \
  X(Scalar, "scalar", 1)         \
  X(Output, "output", 1)

enum class OpKind : uint8_t {
#define RANC_X(name, text, arity) name,
  RANC_OP_KINDS(RANC_X)
#undef RANC_X
};
std::string_view op_kind_name(OpKind k);
// The number of inputs; -1 for Fixpoint, which takes any number (its outer relations).
// Select, project, join and reduce nodes also take one more input per scalar subquery in
// their expressions, after these (ExprNode::subquery).
int op_arity(OpKind k);
// Whether a node of this kind may hold scalar subqueries (and so take extra inputs).
bool op_takes_subqueries(OpKind k);

enum class JoinKind : uint8_t { Inner, Semi, Anti, Left, Right, Full };
inline bool is_outer_join(JoinKind k) {
  return k == JoinKind::Left || k == JoinKind::Right || k == JoinKind::Full;
}
std::string_view join_kind_name(JoinKind k);

enum class AggFunc : uint8_t { Sum, Count, Min, Max, Avg };
std::string_view agg_func_name(AggFunc f);

struct NamedExpr {
  std::string name;
  Expr expr;
  SourceLoc loc;
};

struct Aggregate {
  std::string name;  // output attribute
  AggFunc func;
  Expr arg;  // null for count()
  SourceLoc loc;
  bool distinct = false;  // count(distinct x): over the group's distinct non-NULL values
  // Only the tuples where this bool expression is true are aggregated (like SQL's FILTER;
  // made by the compiler's lower_nulls pass, not by the front ends, in reduces marked
  // explicit_validity); null: all.
  Expr filter = {};
};

struct SortKey {
  std::string attr;
  bool descending = false;
  SourceLoc loc;
  int32_t index = -1;  // set by the checker
};

using NodeId = int32_t;

class Program;
struct FixpointDef;

// One operator. Fields not used by a kind stay empty. Front ends fill the
// "parameters"; the checker fills the "resolved" part.
struct Node {
  NodeId id = -1;
  OpKind kind = OpKind::Input;
  SourceLoc loc;
  std::vector<NodeId> inputs;

  // ---- parameters ----
  std::string name;              // Input: relation name; Output: output name
  Schema declared;               // Input: declared schema (with key)
  Expr predicate;                // Select; Join: optional residual
  std::vector<NamedExpr> exprs;  // Project
  JoinKind join_kind = JoinKind::Inner;
  std::vector<std::string> left_keys, right_keys;  // Join
  std::vector<std::string> group_keys;             // Reduce
  std::vector<Aggregate> aggregates;               // Reduce
  // Sort: the keys. Input: the declared physical order ("sorted by"): the bound rows
  // are sorted by these keys (ties in any order). It is not a logical order (outputs
  // stay unordered); the planner uses it to skip sorts, and both executors verify it
  // (an input that is not sorted as declared is an ExecutionError).
  std::vector<SortKey> sort_keys;
  // Input: the declared order holds by construction, so it is not verified. Set only by
  // the compiler (a fixpoint's loop-carried relations, which its own unions keep sorted) and
  // by `ranc run`: --observe-order compared every row of the bound data on the host, and a
  // columnar file's recorded order is checked by its reader (ColumnarInfo::Section::ascending).
  bool order_trusted = false;
  // Union: the inputs are sets with no tuple in common, so the output has exactly the sum
  // of their sizes (no count read back). Set only by the compiler (a fixpoint's merge of
  // its new tuples into the full relation).
  bool disjoint_inputs = false;
  // Join: keys also match when both are NULL (IS NOT DISTINCT FROM). Set only by the
  // compiler (a count(distinct ...) joins its parts on the group keys).
  bool null_safe_keys = false;
  // Set only by lower_nulls (passes/lower_nulls.h), whose output has nothing nullable.
  // Scalar: input and output are in its layout: the input is (v) or (v.valid, v), the
  // output (v.valid, v). Reduce: no aggregate is NULL: one with nothing to fold (a filter
  // that keeps nothing, or no row without group keys) is the type's zero, and lower_nulls
  // makes the NULLs from counts of the rows folded.
  bool explicit_validity = false;
  int64_t limit = 0, offset = 0;  // Limit
  // Fixpoint: the group of recursive relations (shared by the group's nodes) and which
  // of them this node is. Its inputs are the group's outer relations (FixpointDef::outer).
  std::shared_ptr<const FixpointDef> fixpoint;
  int32_t fixpoint_index = -1;

  // ---- resolved by the checker ----
  Schema schema;                         // output schema
  std::vector<int32_t> left_key_index;   // Join: into the left schema
  std::vector<int32_t> right_key_index;  // Join: into the right schema
  std::vector<int32_t> group_key_index;  // Reduce: into the input schema
  // The physical order of the output: attribute indices with directions, empty when
  // unordered.
  std::vector<SortKey> order;
};

// A program: nodes in a vector, referring to their inputs by id. Front ends may add
// nodes in any order and refer to nodes added later (the .ra language allows it), so
// an unchecked program can be malformed in every way: check() finds out.
class Program {
 public:
  // Adds a node (its id is set to its index) and returns the id.
  NodeId add(Node n);
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(NodeId id) const { return nodes_.at(static_cast<size_t>(id)); }
  Node& mutable_node(NodeId id) { return nodes_.at(static_cast<size_t>(id)); }
  size_t size() const { return nodes_.size(); }
  // Output nodes in the order they were added.
  std::vector<NodeId> outputs() const;
  // Input nodes in the order they were added.
  std::vector<NodeId> inputs() const;
  bool checked() const { return checked_; }
  void set_checked() { checked_ = true; }

 private:
  std::vector<Node> nodes_;
  bool checked_ = false;
};

// ============================== RECURSION ==============================
// A fixpoint group defines one or more recursive relations R1..Rm (mutual recursion
// allowed) by rules. Each relation is the union of its rules' results, with SET
// semantics (each tuple once); a rule is an RA expression over the group's recursive
// relations and over outer relations (relations of the enclosing program).
// Meaning (naive evaluation, what the CPU reference does): R^0 = T(empty), R^(k+1) =
// T(R^k), where T evaluates every rule with the recursive relations bound to R^k; the
// result is R^k for the first k with R^(k+1) = R^k. With max_iterations = L > 0 the
// evaluation stops after R^L (L applications of the rules after the first), whether or
// not it has converged. Rules must be monotone in the recursive relations, so the
// iteration converges to the least fixpoint: on a path from a recursive relation to a
// rule's result there may be select, project, product, union, intersect, distinct,
// sort, inner and semi joins (either side), an anti join's or a difference's LEFT
// input; never reduce, limit, or the right input of an anti join or a difference.
// Fixpoints do not nest. Schemas: a relation's attribute names and types are those of
// its first rule that can be typed without it (its "base"); every other rule must give
// the same types (names may differ, as in union). A relation with no rule that can be
// typed is an error. GPU evaluation is semi-naive (each iteration joins only the tuples
// new in the previous one) and gives the same R^k per iteration.
struct FixpointDef {
  // The recursive relations, in order of first definition.
  std::vector<std::string> names;
  // The rules as a program: its Input nodes name what the rules read, a recursive
  // relation (a name in `names`; no declared schema) or an outer relation (a name in
  // `outer`; the checker takes its schema from the Fixpoint node's input); each Output
  // node named R is one rule of R. One Input node per name.
  std::shared_ptr<const Program> rules;
  // Outer relations, bound in this order to the inputs of every node of the group.
  std::vector<std::string> outer;
  int64_t max_iterations = 0;  // 0: until no relation changes
  SourceLoc loc;               // the `fixpoint` keyword / DSL call
  // ---- resolved by the checker (a new, checked def shared by the group's nodes) ----
  std::vector<Schema> schemas;  // per recursive relation
  // `rules` checked: every Input has its schema, every Output its rule's schema.
  std::shared_ptr<const Program> checked_rules;
  // For each Output node of checked_rules (in Program::outputs() order): the index of
  // the recursive relation it defines.
  std::vector<int32_t> rule_target;
};

// The name of attribute `attr`'s validity attribute in the layout of passes/lower_nulls.h
// ("a.valid"; no user name has a '.'), and whether `name` is one (of *attr).
std::string validity_name(std::string_view attr);
bool is_validity_name(std::string_view name, std::string* attr = nullptr);

// Checks a program and returns the checked program: nodes that outputs depend on,
// renumbered in a topological order, with schemas, resolved expressions, key
// indices and order properties. Throws UserError with every diagnostic found
// (each with the node's source location).
Program check(const Program& program);

// The checked graph as text: one line per node with its schema (and order).
std::string print_program(const Program& program);
// Sort keys as messages write them: "k, v desc".
std::string order_text(const std::vector<SortKey>& keys);
// One node's operator and parameters ("join inner on (a = b) where ...").
std::string describe_node(const Program& program, const Node& n);

}  // namespace ranc
