// Physical planning (DESIGN.md section 4, step 3): tracks the physical order the
// generated code gives each relation (starting from inputs' declared orders) and
// inserts sorts only where an operator needs an order its input lacks.
#include "ranc/passes/plan_sort_orders.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "ranc/passes/unique_keys.h"

namespace ranc::passes {

bool groups_by(const Order& order, const std::vector<int32_t>& set) {
  std::set<int32_t> want(set.begin(), set.end());
  if (order.size() < want.size()) return false;
  std::set<int32_t> have;
  for (size_t i = 0; i < want.size(); ++i) have.insert(order[i].index);
  return have == want;
}

bool left_ordered_by_join_keys(const Order& left, const Node& join, const PhysicalNode& p) {
  const Order& ck = p.compare_keys;
  if (left.size() < ck.size()) return false;
  for (size_t t = 0; t < ck.size(); ++t)
    if (left[t].index != join.left_key_index.at(static_cast<size_t>(ck[t].index)) ||
        left[t].descending != ck[t].descending)
      return false;
  return true;
}

namespace {

Order prefix(const Order& o, size_t n) {
  return Order(o.begin(), o.begin() + std::min(n, o.size()));
}

std::vector<int32_t> distinct_in_order(const std::vector<int32_t>& v) {
  std::vector<int32_t> out;
  for (int32_t x : v)
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  return out;
}

Order ascending(const std::vector<int32_t>& idx) {
  Order o;
  for (int32_t i : idx) o.push_back({i, false});
  return o;
}

std::vector<int32_t> all_attrs(const Schema& s) {
  std::vector<int32_t> v;
  for (size_t i = 0; i < s.size(); ++i) v.push_back(static_cast<int32_t>(i));
  return v;
}

class Planner {
 public:
  Planner(const Program& in, const codegen::CodegenOptions& options)
      : in_(in), options_(options), keys_(out_.program) {}

  PhysicalPlan run() {
    // The right inputs that an inner (sort-merge, under Auto) join sorts by its keys.
    for (const Node& n : in_.nodes()) {
      if (n.kind != OpKind::Join) continue;
      if (n.join_kind == JoinKind::Inner)
        merge_sorted_.insert({n.inputs.at(1), distinct_in_order(n.right_key_index)});
      if (n.join_kind == JoinKind::Semi || n.join_kind == JoinKind::Anti)
        semi_right_.insert({n.inputs.at(1), distinct_in_order(n.right_key_index)});
    }
    std::vector<NodeId> map(in_.size(), -1);
    for (const Node& old : in_.nodes()) {
      Node n = old;
      for (NodeId& i : n.inputs) i = map.at(static_cast<size_t>(i));
      map[static_cast<size_t>(old.id)] = plan_node(std::move(n), old);
    }
    out_.program.set_checked();
    return std::move(out_);
  }

 private:
  const PhysicalNode& phys(NodeId id) const { return out_.nodes.at(static_cast<size_t>(id)); }
  const Node& node(NodeId id) const { return out_.program.node(id); }

  NodeId add(Node n, PhysicalNode p) {
    n.order.clear();
    for (const auto& k : p.order) {
      SortKey s;
      s.index = k.index;
      s.descending = k.descending;
      s.attr = n.schema[static_cast<size_t>(k.index)].name;
      n.order.push_back(std::move(s));
    }
    NodeId id = out_.program.add(std::move(n));
    out_.nodes.push_back(std::move(p));
    return id;
  }

  // A keys-only sort of `input` (shared between consumers that need the same one).
  NodeId insert_sort(NodeId input, const Order& keys) {
    auto key = std::make_pair(input, keys_text(keys));
    if (auto it = sorts_.find(key); it != sorts_.end()) return it->second;
    const Node& src = node(input);
    Node n;
    n.kind = OpKind::Sort;
    n.loc = src.loc;
    n.inputs = {input};
    n.schema = src.schema;
    for (const auto& k : keys) {
      SortKey s;
      s.attr = src.schema[static_cast<size_t>(k.index)].name;
      s.descending = k.descending;
      s.index = k.index;
      n.sort_keys.push_back(std::move(s));
    }
    PhysicalNode p;
    p.order = keys;
    p.unique = phys(input).unique;
    p.sort_keys = keys;
    p.inserted = true;
    NodeId id = add(std::move(n), std::move(p));
    sorts_[key] = id;
    return id;
  }

  // Does reduce `n` group its input `input` by hashing? Group keys, an input not already
  // grouped by them, keys that pack into 63 bits (hash_reduce.cuh), and not switched off.
  // Nor when the group keys cover a key of the input (declared, or a reduce's group keys):
  // every group is then one row, each block's table fills at once and the hashed plan would
  // give up and sort its input (lower_hash_reduce), after a phase 1 and a read-back that
  // sorting directly skips. A declared key is not verified; either way the results are the
  // same.
  // `why` receives the reason, for `ranc explain` (print_group_by_choices).
  bool hash_reduce(const Node& n, NodeId input, std::string& why) const {
    if (n.group_key_index.empty()) return false;
    if (groups_by(phys(input).order, n.group_key_index)) {
      why = "the input is already grouped by the keys";
      return false;
    }
    if (options_.group_by == codegen::GroupBy::Sort) {
      why = "--group-by=sort";
      return false;
    }
    if (groups_are_rows(n, node(input).schema)) {
      why = "the keys include the input's key: a group a row, so hashing would sort anyway";
      return false;
    }
    int bits = 0;
    for (int32_t k : n.group_key_index) {
      const int b = hash_group_key_bits(node(input).schema[static_cast<size_t>(k)].type);
      if (b == 0) {
        why = "an 8-byte key does not pack into the hash key word";
        return false;
      }
      bits += b;
    }
    if (bits > 63) {
      why = fmt::format("the keys take {} bits, more than the hash key word's 63", bits);
      return false;
    }
    why = fmt::format("the keys pack into {} bits", bits);
    return true;
  }

  // Whether reduce `n`'s group keys include every attribute of its input's key, so that no
  // two rows share a group.
  static bool groups_are_rows(const Node& n, const Schema& in) {
    const auto& g = n.group_key_index;
    return covers_key(in, [&](int32_t a) { return std::find(g.begin(), g.end(), a) != g.end(); });
  }

  // Is `input` already in order `want` because its order starts like `want` up to a set
  // of attributes that is a key? Only reduce outputs count: their group keys are unique
  // by construction (a declared input key is not verified).
  bool ordered_by_key_prefix(NodeId input, const Order& want) const {
    const Node& src = node(input);
    if (src.kind != OpKind::Reduce) return false;
    const Order& have = phys(input).order;
    std::set<int32_t> covered;
    for (size_t k = 0; k < want.size() && k < have.size() && want[k] == have[k]; ++k) {
      covered.insert(want[k].index);
      if (covers_key(src.schema, [&](int32_t a) { return covered.count(a) > 0; })) return true;
    }
    return false;
  }

  static std::string keys_text(const Order& keys) {
    std::string s;
    for (const auto& k : keys) s += fmt::format("{}{},", k.index, k.descending ? "d" : "a");
    return s;
  }

  // The input `input` grouped by `set`: the input itself or a sort of it. Returns the
  // node and the key sequence its order starts with.
  std::pair<NodeId, Order> grouped(NodeId input, const std::vector<int32_t>& set) {
    auto keys = distinct_in_order(set);
    if (groups_by(phys(input).order, keys)) return {input, prefix(phys(input).order, keys.size())};
    // The sort keeps the part of the input's order made of keys of the set (a distinct
    // after a sort and a project must keep the sort's order), then the rest ascending.
    Order o;
    std::set<int32_t> used;
    for (const auto& k : phys(input).order) {
      if (std::find(keys.begin(), keys.end(), k.index) == keys.end()) break;
      o.push_back(k);
      used.insert(k.index);
    }
    for (int32_t k : keys)
      if (!used.count(k)) o.push_back({k, false});
    return {insert_sort(input, o), o};
  }

  // Whether node `id`'s order is an input's declared order, kept by selects and projects (a
  // relation as loaded, possibly large), rather than one an operator made (a reduce's or a
  // sort's output, already materialised and compact).
  bool declared_order(NodeId id) const {
    for (;;) {
      const Node& m = node(id);
      if (m.kind == OpKind::Input) return !m.sort_keys.empty();
      if (m.kind != OpKind::Select && m.kind != OpKind::Project) return false;
      id = m.inputs.at(0);
    }
  }
  // Under merge_ordered_pairs_only, whether a join whose right input is ordered by its keys
  // hashes instead of searching: the left input is not ordered by them and the right's order
  // is a declared input's (a loop body keeps its searches of the relations its loop carries).
  bool hash_instead_of_search(const Node& n) const {
    return options_.merge_ordered_pairs_only && !options_.loop_body &&
           !groups_by(phys(n.inputs.at(0)).order, n.left_key_index) &&
           declared_order(n.inputs.at(1));
  }

  // The join algorithm of join node `n` (inputs already planned; `old` is the node in the
  // checked program); see plan_sort_orders.h.
  codegen::JoinAlgorithm join_algorithm(const Node& n, const Node& old, std::string& why) const {
    using codegen::JoinAlgorithm;
    if (options_.join == JoinAlgorithm::SortMerge) {
      why = "--join=merge";
      return JoinAlgorithm::SortMerge;
    }
    const Node& right = node(n.inputs.at(1));
    std::vector<Type> key_types;
    for (int32_t k : n.right_key_index)
      key_types.push_back(right.schema[static_cast<size_t>(k)].type);
    if (hash_join_key_bits(key_types) == 0) {
      why = "the keys do not pack into one 64-bit word, which hashing needs";
      return JoinAlgorithm::SortMerge;
    }
    if (options_.join == JoinAlgorithm::Hash) {
      why = "--join=hash";
      return JoinAlgorithm::Hash;
    }
    if (n.join_kind == JoinKind::Semi || n.join_kind == JoinKind::Anti) {
      // A semi/anti join probes a hash set of the right keys (one pass to build, about one
      // random load a left row) unless the right input is already ordered by the keys, where
      // the binary search needs no preparation at all (a fixpoint's full relation). Sorting
      // an unsorted right input costs several passes over it and the search log2(n) dependent
      // loads a row (bench/RESULTS.md, issue 9). When an inner join sorts the same right
      // input by the same keys, the sort is shared and the search is the cheaper addition
      // (TPC-H Q13's left outer join, lowered to an inner join and an anti join).
      if (groups_by(phys(n.inputs.at(1)).order, n.right_key_index)) {
        if (hash_instead_of_search(n)) {
          why = "only the right input is ordered by the keys (as declared): a hash set of them "
                "instead of a binary search a left row";
          return JoinAlgorithm::Hash;
        }
        why = "the right input is already ordered by the keys: searched, no preparation";
        return JoinAlgorithm::SortMerge;
      }
      if (merge_sorted_.count({old.inputs.at(1), distinct_in_order(n.right_key_index)})) {
        why = "an inner join sorts the same right input by the same keys: the sort is shared";
        return JoinAlgorithm::SortMerge;
      }
      why = "the right input is not ordered by the keys: a hash set of them, no sort";
      return JoinAlgorithm::Hash;
    }
    // Auto, inner join: sort-merge when the right input is already ordered by the keys (no
    // sort: binary searches, or one merge pass when the left is ordered too), or when a semi
    // or anti join of the same right input by the same keys shares its sort (a left outer
    // join, lowered to an inner and an anti join: TPC-H Q13). Otherwise hash: no sort of
    // either input. Built on the side whose join keys are its key (build_left), with one
    // global table for a build side up to 2^21 rows or a quarter of the probe rows, the
    // hash join beat sort + merge on TPC-H SF 10 Q2, Q3, Q5, Q7, Q8, Q9 and Q10 by 1.16-1.58x
    // (H100, bench/RESULTS.md, session 31); at 2^27 x 2^27 unsorted PK-FK rows by 4.6x.
    if (groups_by(phys(n.inputs.at(1)).order, n.right_key_index)) {
      if (hash_instead_of_search(n)) {
        why = "auto: only the right input is ordered by the keys (as declared): hashing instead "
              "of a binary search a left row";
        return JoinAlgorithm::Hash;
      }
      why = "auto: the right input is already ordered by the keys: searched or merged, no sort";
      return JoinAlgorithm::SortMerge;
    }
    if (semi_right_.count({old.inputs.at(1), distinct_in_order(n.right_key_index)})) {
      why = "auto: a semi or anti join of the same right input by the same keys shares its "
            "sort (a left outer join)";
      return JoinAlgorithm::SortMerge;
    }
    why = "auto: no input is ordered by the keys: hashing sorts neither";
    return JoinAlgorithm::Hash;
  }

  NodeId plan_node(Node n, const Node& old) {
    PhysicalNode p;
    auto in = [&](size_t k) { return n.inputs.at(k); };
    switch (n.kind) {
      case OpKind::Input:
        // A declared order (verified at run time by the input's check kernel).
        for (const SortKey& k : n.sort_keys) p.order.push_back({k.index, k.descending});
        break;
      case OpKind::Select:
      case OpKind::Limit:
      case OpKind::Output:
        p.order = phys(in(0)).order;
        p.unique = phys(in(0)).unique;
        break;
      case OpKind::Project: {
        const auto& po = phys(in(0));
        for (const auto& k : po.order) {
          int32_t found = -1;
          for (size_t j = 0; j < n.exprs.size(); ++j) {
            const ExprPtr& e = n.exprs[j].expr.ptr();
            if (e && e->kind == ExprKind::Attr && e->attr_index == k.index) {
              found = static_cast<int32_t>(j);
              break;
            }
          }
          if (found < 0) break;
          p.order.push_back({found, k.descending});
        }
        // Uniqueness survives when every input attribute is kept.
        std::set<int32_t> kept;
        for (const auto& ne : n.exprs)
          if (ne.expr->kind == ExprKind::Attr) kept.insert(ne.expr->attr_index);
        p.unique = po.unique && kept.size() == node(in(0)).schema.size();
        break;
      }
      case OpKind::Product:
        p.order = phys(in(0)).order;
        p.unique = phys(in(0)).unique && phys(in(1)).unique;
        break;
      case OpKind::Join: {
        p.join = join_algorithm(n, old, p.join_reason);
        if (p.join == codegen::JoinAlgorithm::Hash && n.join_kind == JoinKind::Inner) {
          // Build on the side whose join keys identify its rows (PK-FK: the PK side).
          p.build_left = !keys_.within(in(1), n.right_key_index) &&
                         keys_.within(in(0), n.left_key_index);
        }
        if (p.join == codegen::JoinAlgorithm::Hash) {
          // No input order needed. The partitioned (inner) join's output has none; a semi
          // or anti join is a stage over the left rows and keeps their order.
          if (n.join_kind != JoinKind::Inner) {
            p.order = phys(in(0)).order;
            p.unique = phys(in(0)).unique;
          }
          break;
        }
        auto [right, seq] = grouped(in(1), n.right_key_index);
        n.inputs[1] = right;
        for (const auto& e : seq)
          for (size_t k = 0; k < n.right_key_index.size(); ++k)
            if (n.right_key_index[k] == e.index)
              p.compare_keys.push_back({static_cast<int32_t>(k), e.descending});
        p.order = phys(in(0)).order;
        p.unique = n.join_kind != JoinKind::Inner && phys(in(0)).unique;
        break;
      }
      case OpKind::Reduce: {
        if (hash_reduce(n, in(0), p.group_reason)) {
          p.hash_reduce = true;
          for (size_t k = 0; k < n.group_key_index.size(); ++k)
            p.order.push_back({static_cast<int32_t>(k), false});
          p.unique = true;
          break;
        }
        auto [input, seq] = grouped(in(0), n.group_key_index);
        n.inputs[0] = input;
        p.compare_keys = seq;
        for (const auto& e : seq) {
          auto it = std::find(n.group_key_index.begin(), n.group_key_index.end(), e.index);
          p.order.push_back({static_cast<int32_t>(it - n.group_key_index.begin()), e.descending});
        }
        p.unique = true;
        break;
      }
      case OpKind::Distinct: {
        auto [input, seq] = grouped(in(0), all_attrs(n.schema));
        n.inputs[0] = input;
        p.compare_keys = seq;
        p.order = phys(input).order;
        p.unique = true;
        break;
      }
      case OpKind::Union:
      case OpKind::Intersect:
      case OpKind::Difference: {
        auto all = all_attrs(n.schema);
        Order target;
        if (groups_by(phys(in(0)).order, all))
          target = prefix(phys(in(0)).order, all.size());
        else if (groups_by(phys(in(1)).order, all))
          target = prefix(phys(in(1)).order, all.size());
        else
          target = ascending(all);
        for (size_t k = 0; k < 2; ++k) {
          NodeId x = in(k);
          // Duplicates within an input are dropped by the set operation itself.
          if (prefix(phys(x).order, all.size()) != target) x = insert_sort(x, target);
          n.inputs[k] = x;
        }
        p.compare_keys = target;
        p.order = target;
        p.unique = true;
        break;
      }
      case OpKind::UnionAll:
        break;  // a bag in no order
      case OpKind::Scalar:
        p.unique = true;  // one tuple
        break;
      case OpKind::Fixpoint:
        // The loop's last union leaves each relation a set sorted by all its attributes
        // (ra_ops/fixpoint/lowering.cpp).
        p.order = ascending(all_attrs(n.schema));
        p.unique = true;
        break;
      case OpKind::Sort: {
        Order want;
        std::set<int32_t> used;
        for (const auto& k : n.sort_keys) {
          if (used.insert(k.index).second) want.push_back({k.index, k.descending});
        }
        for (int32_t a : all_attrs(n.schema))
          if (used.insert(a).second) want.push_back({a, false});
        const auto& po = phys(in(0));
        if (prefix(po.order, want.size()) != want && !ordered_by_key_prefix(in(0), want))
          p.sort_keys = want;
        p.order = want;
        p.unique = po.unique;
        break;
      }
    }
    return add(std::move(n), std::move(p));
  }

  const Program& in_;
  const codegen::CodegenOptions& options_;
  PhysicalPlan out_;
  UniqueKeys keys_;  // over out_.program
  std::map<std::pair<NodeId, std::string>, NodeId> sorts_;
  // (right input in the checked program, its keys) of every inner join.
  std::set<std::pair<NodeId, std::vector<int32_t>>> merge_sorted_;
  // The same of every semi and anti join.
  std::set<std::pair<NodeId, std::vector<int32_t>>> semi_right_;
};

std::string order_text(const Program& prog, const Node& n, const Order& o) {
  std::string s;
  for (const auto& k : o) {
    if (!s.empty()) s += ", ";
    s += n.schema[static_cast<size_t>(k.index)].name;
    if (k.descending) s += " desc";
  }
  return s;
}

}  // namespace

Consumers consumers_of(const Program& program) {
  Consumers consumers(program.size());
  for (const Node& n : program.nodes())
    for (size_t k = 0; k < n.inputs.size(); ++k)
      consumers[static_cast<size_t>(n.inputs[k])].push_back({n.id, k});
  return consumers;
}

PhysicalPlan plan_sort_orders(const Program& checked, const codegen::CodegenOptions& options) {
  internal_check(checked.checked(), "plan_sort_orders needs a checked program");
  return Planner(checked, options).run();
}

std::string print_physical_plan(const PhysicalPlan& plan) {
  std::string out;
  for (const Node& n : plan.program.nodes()) {
    const PhysicalNode& p = plan.nodes.at(static_cast<size_t>(n.id));
    std::string ins;
    for (NodeId i : n.inputs) ins += fmt::format("{}n{}", ins.empty() ? "" : ", ", i);
    out += fmt::format("n{} {}({})", n.id, op_kind_name(n.kind), ins);
    if (n.kind == OpKind::Sort)
      out += p.sort_keys.empty()
                 ? " no-op"
                 : fmt::format(" by [{}]", order_text(plan.program, n, p.sort_keys));
    if (p.top_k > 0) out += fmt::format(" top {}", p.top_k);
    if (p.inserted) out += " (inserted)";
    if (n.kind == OpKind::Join && p.join == codegen::JoinAlgorithm::Hash) out += " hash";
    if (p.hash_reduce) out += " hash";
    if (!p.order.empty()) out += fmt::format(" order [{}]", order_text(plan.program, n, p.order));
    if (p.unique) out += " unique";
    if (p.fused) out += fmt::format(" fused into n{}", p.kernel);
    if (p.shared_read >= 0)
      out += fmt::format(" shares the read of n{} in the kernel of n{}", p.shared_read, p.kernel);
    if (p.paged) out += " -> paged";
    if (p.keeps_words) out += " -> sorted words";
    out += "\n";
  }
  return out;
}

std::string print_join_choices(const PhysicalPlan& plan) {
  std::string out;
  for (const Node& n : plan.program.nodes()) {
    if (n.kind != OpKind::Join) continue;
    const PhysicalNode& p = plan.nodes.at(static_cast<size_t>(n.id));
    const char* kind = n.join_kind == JoinKind::Inner  ? "inner"
                       : n.join_kind == JoinKind::Semi ? "semi"
                       : n.join_kind == JoinKind::Anti ? "anti"
                                                       : "outer";
    std::string how;
    if (p.join == codegen::JoinAlgorithm::Hash) {
      how = n.join_kind != JoinKind::Inner ? "hash set probe"
            : p.build_left
                ? "hash join built on the left input (its join keys are its key; the right's "
                  "are not), probed by the right: one global table for a mid-sized build side, "
                  "else partitioned"
                : "hash join built on the right input, probed by the left: one global table "
                  "for a mid-sized build side, else partitioned";
    } else if (n.join_kind != JoinKind::Inner) {
      how = "sort-merge: a binary search a left row";
    } else {
      // One pass per tile of left rows (JoinMergeAgent, when every match is kept);
      // otherwise every left row searches the right input.
      how = left_ordered_by_join_keys(plan.nodes.at(static_cast<size_t>(n.inputs.at(0))).order, n, p) ? "sort-merge, left input sorted by the keys: merged tile by tile"
                   : "sort-merge, left input unsorted: a binary search a left row";
    }
    out += fmt::format("n{} join {}: {} ({})\n", n.id, kind, how, p.join_reason);
  }
  return out;
}

std::string print_group_by_choices(const PhysicalPlan& plan) {
  std::string out;
  for (const Node& n : plan.program.nodes()) {
    if (n.kind != OpKind::Reduce || n.group_key_index.empty()) continue;
    const PhysicalNode& p = plan.nodes.at(static_cast<size_t>(n.id));
    if (p.hash_reduce) {
      out += fmt::format(
          "n{} reduce: hash aggregation ({}); from 2^20 rows, when a sample's keys span few "
          "enough values, tables indexed by the key in shared memory take the rows first "
          "(RANC_HASH_DENSE_EARLY; states of up to 4 words, no semi- or anti-join fused in front); when the blocks' partial groups "
          "pass their room "
          "(RANC_HASH_RECORDS; default 512 blocks' table slots), tables indexed by the key if "
          "the keys span few values (in shared memory, RANC_HASH_DENSE_SHARED) or 2^16 values to "
          "the room (in device memory, RANC_HASH_DENSE), else sorts its input\n",
          n.id, p.group_reason);
      continue;
    }
    const bool sorts = plan.nodes.at(static_cast<size_t>(n.inputs.at(0))).inserted;
    out += fmt::format("n{} reduce: {} ({})\n", n.id,
                       sorts ? "sorts its input by the keys, then a segmented reduce"
                             : "segmented reduce",
                       p.group_reason);
  }
  return out;
}

}  // namespace ranc::passes
