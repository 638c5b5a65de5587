// Physical planning: sort orders and algorithm choice.
//
// plan_sort_orders tracks the physical order that the generated code gives every
// relation and inserts a (keys-only) Sort node in front of an operator that needs
// its input grouped or ordered when the input is not already so:
//   join (sort-merge):       the right input ordered by the join keys (any order of the
//                            keys, any directions: the comparator follows the order);
//   join (hash):             nothing (an inner join's output has no order; a semi or
//                            anti join keeps its left input's order);
//   reduce:                  the input grouped by the group keys;
//   distinct:                the input grouped by the whole tuple;
//   union/intersect/diff.:   both inputs ordered the same way by the whole tuple
//                            (duplicates within an input are dropped by the operator).
// Inputs with a declared order ("sorted by", verified at run time) start out ordered.
// A user Sort whose input already has the requested order becomes a no-op.
//
// Join algorithm (PhysicalNode::join, from CodegenOptions::join):
//   SortMerge: always.
//   Hash:      for a join whose keys pack into one 32- or 64-bit word
//              (hash_join_key_bits): an inner join is a partitioned hash join, a semi or
//              anti join probes a hash set of the right keys; other keys use sort-merge.
//   Auto:      semi and anti joins hash when their right input is not already ordered by
//              the keys (and the keys pack); so do inner joins, unless a semi or anti join
//              of the same right input by the same keys would share the right's sort (a
//              left outer join). The hash join then builds on the side whose join keys are
//              its key (build_left) and takes one global table instead of partitions for
//              mid-sized build sides (ra_ops/join/hash_lowering.cpp). A right input
//              ordered by the keys as an input declares it (CodegenOptions::
//              merge_ordered_pairs_only) is merged or searched only when the left input is
//              ordered by them too; otherwise inner and semi joins hash it. One ordered by
//              an operator, or a fixpoint's loop-carried relation, is searched.
#pragma once

#include <utility>
#include <vector>

#include "ranc/codegen/codegen.h"
#include "ranc/ir/program.h"

namespace ranc::passes {

// One entry of a physical order: the attribute index and its direction.
struct OrderKey {
  int32_t index = 0;
  bool descending = false;
  bool operator==(const OrderKey&) const = default;
};
using Order = std::vector<OrderKey>;

struct PhysicalNode {
  Order order;          // rows are sorted lexicographically by these keys (empty: unknown)
  bool unique = false;  // no two rows are identical
  // Sort: the keys to sort by (user keys, then for a user sort the remaining
  // attributes ascending); empty when the sort is a no-op.
  Order sort_keys;
  // Sort: set by plan_top_k (passes/plan_top_k.h) when only limits read the sort's
  // rows: the number of leading rows they need (offset + limit); 0: all rows.
  int64_t top_k = 0;
  bool inserted = false;  // added by this pass (not in the user's program)
  // Join, reduce, distinct, set ops: the key sequence the operator compares by (an
  // ordering of its keys that the input's order starts with). For a join these are
  // positions into left_key_index/right_key_index.
  Order compare_keys;
  codegen::JoinAlgorithm join = codegen::JoinAlgorithm::SortMerge;
  std::string join_reason;  // Join: why this algorithm (`ranc explain`'s == joins ==)
  // Join (hash, inner): the hash table is built on the left input and the right probes it,
  // when the left's join keys are a key of it and the right's are not (UniqueKeys): the
  // table then holds one row a key and the output, at most a row a probe row, is sized
  // exactly by the probe side. The output's attributes keep their order (left, then right).
  bool build_left = false;
  // Reduce: grouped by hashing (templates/hash_reduce.cuh) instead of sorting its input;
  // the output is still ordered by the group keys (ascending, in group-key order).
  bool hash_reduce = false;
  std::string group_reason;  // Reduce with group keys: why hashed or sorted (`ranc explain`)
  // Set by fuse_pipelines (passes/fuse_pipelines.h): the output is not materialised but
  // handed to its one consumer as a view, so this operator runs inside the kernels of
  // `kernel`: the inner join it feeds (its count or partitioning stage; for a join that
  // merges in one pass, the kernel of the join's own output group, which its merge runs
  // in), or else the first unfused node downstream. Otherwise `kernel` is the node itself.
  // Input sharing (also fuse_pipelines): an unfused select/project chain materialised in
  // one kernel with other chains over the same relation, which that kernel reads once.
  // `shared_read` is that relation; `kernel` is then the group's last node, whose
  // materialisation writes every chain of the group (SharedSelectAgent).
  bool fused = false;
  NodeId kernel = -1;
  NodeId shared_read = -1;
  // Also fuse_pipelines: a sort that packs whole tuples into one word (codegen's
  // sort_packs_whole_rows) whose consumers are all distincts or set operations hands its output on as the
  // sorted words themselves: no kernel unpacks them, each consumer decodes a row's
  // attributes as it loads it. The sort is not `fused` (its words are materialised).
  bool keeps_words = false;
  // Also fuse_pipelines: an inner sort-merge join without a residual whose left input is
  // sorted by its keys writes its matches in one pass (JoinMergeAgent in the kernel of its
  // output group, join lowering's write_merge): no stage that may drop matches is fused
  // after it.
  bool one_pass_merge = false;
  // Set by plan_paged_edges (passes/plan_paged_edges.h): the output is materialised as a
  // paged list, which every consumer streams.
  bool paged = false;
};

struct PhysicalPlan {
  Program program;                  // checked, with inserted Sort/Distinct nodes
  std::vector<PhysicalNode> nodes;  // per node of `program`
};

// Whether schema `s` has a key (its first key_size attributes) and has(a) holds for each of
// its attributes (a declared input key is not verified).
template <class Has>
bool covers_key(const Schema& s, Has has) {
  if (s.key_size == 0) return false;
  for (size_t a = 0; a < s.key_size; ++a)
    if (!has(static_cast<int32_t>(a))) return false;
  return true;
}

// The width of the word that join keys of these types pack into for the hash join
// (hash_join.cuh): 32 for one i32/date/string/bool/f32 key, 64 for one i64/f64 key or
// two 32-bit keys; 0 when they do not pack (then the join is sort-merge).
inline int hash_join_key_bits(const std::vector<Type>& key_types) {
  int bits = 0;
  for (Type t : key_types) bits += type_size(t) == 8 ? 64 : 32;
  return !key_types.empty() && bits <= 64 ? bits : 0;
}

// The bits a group key takes in the hash reduce's key word (hash_reduce.cuh), which
// must stay below 2^63: string codes are non-negative int32 (31 bits), bools 1 bit, other
// 4-byte types 32 bits; 0 for 8-byte types (they would fill the word, leaving no room
// for the empty marker). The planner hashes a reduce whose keys sum to 1..63 bits.
inline int hash_group_key_bits(Type t) {
  switch (t) {
    case Type::Bool:
      return 1;
    case Type::String:
      return 31;
    default:
      return type_size(t) == 4 ? 32 : 0;
  }
}

// For each node of `program`, the nodes that read it and at which input position, in node
// order (the passes after physical planning walk the graph forwards).
using Consumers = std::vector<std::vector<std::pair<NodeId, size_t>>>;
Consumers consumers_of(const Program& program);

// Does `order` start with exactly the attributes of `set` (in any sequence)?
bool groups_by(const Order& order, const std::vector<int32_t>& set);

// Does the left input order `left` of join `join` (physical node `p`) start with the join's
// left keys in its comparison sequence and directions (p.compare_keys)? Then a sort-merge
// inner join merges it tile by tile (JoinMergeAgent / JoinCountAgent) and can verify a
// declared left order as it goes.
bool left_ordered_by_join_keys(const Order& left, const Node& join, const PhysicalNode& p);

PhysicalPlan plan_sort_orders(const Program& checked, const codegen::CodegenOptions& options);

// The plan as text: one line per node with its physical order and sort keys.
std::string print_physical_plan(const PhysicalPlan& plan);
// One line per join: its algorithm and why the planner chose it (`ranc explain`).
std::string print_join_choices(const PhysicalPlan& plan);
// One line per reduce with group keys: hashed or sorted, and why (`ranc explain`'s
// == group-bys ==).
std::string print_group_by_choices(const PhysicalPlan& plan);

}  // namespace ranc::passes
