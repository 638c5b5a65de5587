// fuse_pipelines (see ranc/passes/fuse_pipelines.h): which operators hand their output
// to their consumer as a view. The rules here and the lowerings in ra_ops/ must agree:
// a lowering materialises a view it cannot take (LoweringContext::dense), so a rule
// that promises too much would only put the chain in a kernel of its own; the codegen
// tests check that every kernel contains exactly the operators this pass groups.
#include "ranc/passes/fuse_pipelines.h"

#include "ranc/codegen/sort_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

namespace ranc::passes {
namespace {

// What a node's output would look like as a view (codegen's RowView::Source et al.).
enum class Source { None, Index, MergeJoin, HashJoin };
struct ViewShape {
  Source source = Source::None;
  bool filters = false;  // may drop rows (a select, a semi/anti join, a join residual)
  bool checks = false;   // its keep function must run on every row (filters or errors)
  int length = 0;        // fused operators in the chain
  // Input sharing: the relation a chain of only selects and projects reads (-1 for any
  // other chain), and per attribute whether it is computed (a member function, not a
  // column of `base`).
  NodeId base = -1;
  std::vector<bool> computed;
  // The inner join whose matches the view enumerates (Source::MergeJoin, HashJoin).
  NodeId join = -1;
  // Its materialisation runs a kernel (codegen's materialize_index) when the chain has a
  // keep function (a select, or a project that can fail) or computes an attribute it
  // keeps; a chain that only passes attributes through aliases their buffers.
  bool computes() const {
    return checks || std::find(computed.begin(), computed.end(), true) != computed.end();
  }
};

bool is_inner_join(const Node& n) {
  return n.kind == OpKind::Join && n.join_kind == JoinKind::Inner;
}

// Longest chain of operators one view may hold: beyond it the chain is materialised,
// which bounds the size of the generated member functions.
constexpr int kMaxChain = 16;

class Fuser {
 public:
  Fuser(PhysicalPlan& plan, bool fold_hash_joins)
      : plan_(plan), prog_(plan.program), consumers_(consumers_of(plan.program)),
        fold_hash_joins_(fold_hash_joins) {
    shapes_.resize(prog_.size());
  }

  void run() {
    for (const Node& n : prog_.nodes())
      plan_.nodes[static_cast<size_t>(n.id)].one_pass_merge = merges_in_one_pass(n);
    for (const Node& n : prog_.nodes()) {
      PhysicalNode& p = plan_.nodes[static_cast<size_t>(n.id)];
      shapes_[static_cast<size_t>(n.id)] = shape(n);
      const ViewShape& s = shapes_[static_cast<size_t>(n.id)];
      p.fused = false;
      if (s.source == Source::None || s.length > kMaxChain) continue;
      const auto& cs = consumers_[static_cast<size_t>(n.id)];
      // One consumer reading it once: with two, each would recompute the chain (or a
      // join's matches), so the output is materialised once instead.
      if (cs.size() != 1) continue;
      p.fused = accepts(prog_.node(cs[0].first), cs[0].second, s);
    }
    share_reads();
    // A sort that packs whole tuples into one word keeps them packed for consumers that
    // read rows at random but take a view that keeps every row: distinct (unless its input
    // is unique: then it passes the input through) and the set operations' merges.
    for (const Node& n : prog_.nodes()) {
      PhysicalNode& p = plan_.nodes[static_cast<size_t>(n.id)];
      p.keeps_words = false;
      if (!packs_whole_rows(n)) continue;
      const auto& cs = consumers_[static_cast<size_t>(n.id)];
      p.keeps_words = !cs.empty() && std::all_of(cs.begin(), cs.end(), [&](const auto& c) {
        const OpKind k = prog_.node(c.first).kind;
        return (k == OpKind::Distinct && !p.unique) || k == OpKind::Union ||
               k == OpKind::Intersect || k == OpKind::Difference;
      });
    }
    // kernel: the node whose kernels run the chain: an inner join for the chains in front
    // of it (its count or partitioning stage streams them), otherwise the first node
    // downstream that is not fused (or, for a chain that shares its read, the last node of
    // its sharing group).
    for (size_t i = prog_.size(); i-- > 0;) {
      PhysicalNode& p = plan_.nodes[i];
      p.kernel = static_cast<NodeId>(i);
      if (!p.fused) {
        if (p.shared_read >= 0) p.kernel = leader_[i];
        continue;
      }
      const auto [cid, k] = consumers_[i][0];
      const Node& c = prog_.node(cid);
      // A hash semi/anti join streams its right side in its build kernel.
      const bool builds = c.kind == OpKind::Join && k == 1 &&
                          plan_.nodes[static_cast<size_t>(c.id)].join == codegen::JoinAlgorithm::Hash;
      // So does a sort's kernel that packs whole tuples into words.
      // A join that merges in one pass runs its inputs' chains in its merge, which is a
      // kernel of its output group.
      const PhysicalNode& cp = plan_.nodes[static_cast<size_t>(c.id)];
      p.kernel = (is_inner_join(c) && !cp.one_pass_merge) || builds || c.kind == OpKind::Sort
                     ? c.id
                     : cp.kernel;
    }
  }

 private:
  // Input sharing: chains of selects and projects that are materialised (not fused), read
  // the same relation and each run a kernel are written by one kernel that reads that
  // relation once (SharedSelectAgent, groups of up to kMaxShared chains in node order).
  // The group's chains are materialised when its last node is lowered; the code generator
  // lowers the consumers of its earlier chains after that (lower_plan).
  static constexpr size_t kMaxShared = 4;
  void share_reads() {
    leader_.assign(prog_.size(), -1);
    std::map<NodeId, std::vector<NodeId>> by_base;
    for (const Node& n : prog_.nodes()) {
      const ViewShape& s = shapes_[static_cast<size_t>(n.id)];
      plan_.nodes[static_cast<size_t>(n.id)].shared_read = -1;
      if (!plan_.nodes[static_cast<size_t>(n.id)].fused && s.base >= 0 && s.computes())
        by_base[s.base].push_back(n.id);
    }
    for (const auto& [base, chains] : by_base)
      for (size_t g = 0; g + 1 < chains.size(); g += kMaxShared) {
        const size_t end = std::min(chains.size(), g + kMaxShared);
        for (size_t m = g; m < end; ++m) {
          plan_.nodes[static_cast<size_t>(chains[m])].shared_read = base;
          leader_[static_cast<size_t>(chains[m])] = chains[end - 1];
        }
      }
  }

  // An inner sort-merge join without a residual whose left input is sorted by its keys:
  // its matches are written in one pass (join lowering's write_merge) unless a filter
  // follows it, which accepts() does not fuse.
  bool merges_in_one_pass(const Node& j) const {
    const PhysicalNode& p = plan_.nodes[static_cast<size_t>(j.id)];
    return is_inner_join(j) && p.join != codegen::JoinAlgorithm::Hash && !j.predicate.ptr() &&
           left_ordered_by_join_keys(plan_.nodes[static_cast<size_t>(j.inputs.at(0))].order, j, p);
  }

  // A sort (not a no-op, not a top-k) of whole tuples packed into one order word.
  bool packs_whole_rows(const Node& n) const {
    if (n.kind != OpKind::Sort) return false;
    const PhysicalNode& p = plan_.nodes[static_cast<size_t>(n.id)];
    std::vector<Type> types;
    for (size_t c = 0; c < n.schema.size(); ++c) types.push_back(n.schema[c].type);
    return p.top_k == 0 && codegen::sort_packs_whole_rows(types, p.sort_keys);
  }

  const ViewShape& in_shape(const Node& n, size_t k) const {
    static const ViewShape none;
    NodeId i = n.inputs.at(k);
    return plan_.nodes[static_cast<size_t>(i)].fused ? shapes_[static_cast<size_t>(i)] : none;
  }

  // The view a node's lowering returns (Source::None: it returns a dense relation).
  ViewShape shape(const Node& n) const {
    const PhysicalNode& p = plan_.nodes[static_cast<size_t>(n.id)];
    ViewShape s;
    auto extend = [&](const ViewShape& in) {
      s = in;
      if (s.source == Source::None) s.source = Source::Index;
      s.length = in.length + 1;
    };
    // A select or project continues its input's chain (or starts one over a relation).
    auto chain = [&](std::vector<bool> computed) {
      const NodeId in = n.inputs.at(0);
      s.base = plan_.nodes[static_cast<size_t>(in)].fused ? shapes_[static_cast<size_t>(in)].base : in;
      s.computed = std::move(computed);
    };
    auto in_computed = [&](size_t c) {
      const ViewShape& in = in_shape(n, 0);
      return c < in.computed.size() && in.computed[c];
    };
    switch (n.kind) {
      case OpKind::Select: {
        extend(in_shape(n, 0));
        s.filters = s.checks = true;
        std::vector<bool> computed(n.schema.size());
        for (size_t c = 0; c < computed.size(); ++c) computed[c] = in_computed(c);
        chain(std::move(computed));
        break;
      }
      case OpKind::Project: {
        extend(in_shape(n, 0));
        std::vector<bool> computed;
        for (const auto& e : n.exprs) {
          s.checks = s.checks || can_fail(e.expr.ptr());
          const ExprNode& x = *e.expr.ptr();
          computed.push_back(x.kind != ExprKind::Attr || in_computed(static_cast<size_t>(x.attr_index)));
        }
        chain(std::move(computed));
        break;
      }
      case OpKind::Distinct:
        // Nothing to remove: the input passes through (materialised if it is a view).
        if (plan_.nodes[static_cast<size_t>(n.inputs.at(0))].unique) break;
        // A stage keeping row i when it differs from row i - 1: its input is dense or a
        // view that keeps every row and checks nothing (accepts(), rows read at random).
        extend(in_shape(n, 0));
        s.filters = s.checks = true;
        break;
      case OpKind::Product:
        s.source = Source::Index;
        s.length = 1;
        break;
      case OpKind::Join:
        if (n.join_kind != JoinKind::Inner) {  // a stage over the left rows (search or probe)
          const ViewShape& l = in_shape(n, 0);
          extend(l.source == Source::Index ? l : ViewShape{});
          s.filters = s.checks = true;
          break;
        }
        s.source = p.join == codegen::JoinAlgorithm::Hash ? Source::HashJoin : Source::MergeJoin;
        s.filters = s.checks = n.predicate.ptr() != nullptr;
        s.length = 1;
        s.join = n.id;
        break;
      default:
        break;
    }
    if (n.kind != OpKind::Select && n.kind != OpKind::Project) {
      s.base = -1;
      s.computed.clear();
    }
    return s;
  }

  // Does the chain of selects and projects from `c` (each the only consumer of the one
  // before) end in a reduce without group keys?
  bool ends_in_global_reduce(const Node& c) const {
    const Node* x = &c;
    for (int steps = 0; steps <= kMaxChain; ++steps) {
      if (x->kind == OpKind::Reduce) return x->group_keys.empty();
      if (x->kind != OpKind::Select && x->kind != OpKind::Project) return false;
      const auto& cs = consumers_[static_cast<size_t>(x->id)];
      if (cs.size() != 1) return false;
      x = &prog_.node(cs[0].first);
    }
    return false;
  }

  // The rules: may `c` take input `k` as a view of shape `s`?
  bool accepts(const Node& c, size_t k, const ViewShape& s) const {
    const bool index = s.source == Source::Index;
    // A join that writes its matches in one pass (JoinMergeAgent) has no room for a filter
    // on the matches: with one, its write stage becomes a count pass (a lower bound and an
    // offset, 16 bytes, per left row) and a compacting expansion that searches them. So a
    // stage that may drop matches (a select, a project that can fail) is materialised after
    // it instead (measured at 2^28, join -> select -> reduce: 13.0 ms fused, 7.3 ms with the
    // select materialised), unless the chain ends in a reduce without group keys: that
    // reduce folds the matches the chain keeps into its states in the merge itself
    // (join_reduce.cuh), and nothing is written.
    const bool one_pass =
        s.source == Source::MergeJoin && plan_.nodes[static_cast<size_t>(s.join)].one_pass_merge;
    switch (c.kind) {
      case OpKind::Select:
        return !one_pass || ends_in_global_reduce(c);
      case OpKind::Project:
        if (one_pass && !ends_in_global_reduce(c))
          for (const auto& e : c.exprs)
            if (can_fail(e.expr.ptr())) return false;
        return true;  // thread-level: the stage joins the chain, whatever its source
      case OpKind::Join: {
        const bool hash = plan_.nodes[static_cast<size_t>(c.id)].join == codegen::JoinAlgorithm::Hash;
        // Inner: both sides are streamed by the partitioning. Semi/anti: the left side by
        // the stage, the right by the hash set's build.
        if (hash) return index;
        // Sort-merge: the left side is streamed (count stage, or the semi/anti stage); the
        // right side is binary-searched, so only a view keeping every row. An inner join
        // takes no filtering left view: its count stage writes a lower bound and an offset
        // (16 bytes) for every row of the view's base, dropped or not, and its expansion
        // searches them, so a select in front costs more fused than materialised (measured:
        // select -> project -> join at 2^28 took 18.2 ms fused, 10.5 ms unfused). The
        // one-pass merge could drop them with its keep hook, but measured slower too
        // (select -> project -> join at 2^28, H100, session 22): 6.83 ms against 4.93 ms
        // with the select materialised, and still 5.22 against 4.97 ms once the tiles took
        // their key range from their first and last kept rows: a filtered tile does a full
        // tile's searches, scan, look-back and write loop for half the rows.
        if (k == 1) return index && !s.checks;
        return index && (!s.filters || c.join_kind != JoinKind::Inner);
      }
      case OpKind::Reduce:
        // Without group keys, any chain over row numbers, or over the matches of a join
        // that merges in one pass (folded in its merge). Grouped by sorting, its
        // neighbour comparisons need every row (a filter could leave a group empty).
        // Hashed, each row is folded on its own like the global reduce.
        // A hash join's matches fold into a reduce without group keys in its join kernel
        // (CodegenOptions::fold_hash_joins).
        if (one_pass || (fold_hash_joins_ && s.source == Source::HashJoin)) return c.group_keys.empty();
        return index && (c.group_keys.empty() || !s.filters ||
                         plan_.nodes[static_cast<size_t>(c.id)].hash_reduce);
      case OpKind::Limit:
        // A select into the limit (one compaction writing the window), or a chain that
        // keeps every row and checks nothing (the window is read directly).
        return index && (s.filters || !s.checks);
      case OpKind::Distinct:
      case OpKind::Union:
      case OpKind::Intersect:
      case OpKind::Difference:
        return index && !s.checks;  // rows read at random
      case OpKind::Sort:
        // Packing whole tuples into words: the kernel writing the words streams any chain
        // (a join's write stage, a select's compaction, a map over row numbers).
        return packs_whole_rows(c);
      default:
        return false;  // other sorts, product, output: barriers that need a dense input
    }
  }

  PhysicalPlan& plan_;
  const Program& prog_;
  Consumers consumers_;
  bool fold_hash_joins_ = false;
  std::vector<ViewShape> shapes_;
  std::vector<NodeId> leader_;  // input sharing: the last node of a node's group
};

}  // namespace

void fuse_pipelines(PhysicalPlan& plan, bool fold_hash_joins) {
  Fuser(plan, fold_hash_joins).run();
}

void no_fusion(PhysicalPlan& plan) {
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    plan.nodes[i].fused = false;
    plan.nodes[i].kernel = static_cast<NodeId>(i);
    plan.nodes[i].shared_read = -1;
    plan.nodes[i].keeps_words = false;
  }
}

std::string print_fusion(const PhysicalPlan& plan) {
  std::map<NodeId, std::vector<NodeId>> groups;
  for (const Node& n : plan.program.nodes()) {
    NodeId k = plan.nodes.at(static_cast<size_t>(n.id)).kernel;
    groups[k < 0 ? n.id : k].push_back(n.id);
  }
  std::string out;
  for (const auto& [k, members] : groups) {
    if (members.size() < 2) continue;
    std::string ops;
    for (NodeId m : members)
      ops += fmt::format("{}n{} {}", ops.empty() ? "" : ", ", m, op_kind_name(plan.program.node(m).kind));
    const NodeId shared = plan.nodes.at(static_cast<size_t>(k)).shared_read;
    out += fmt::format("kernel of n{}: {}{}\n", k, ops,
                       shared >= 0 ? fmt::format(" (one read of n{})", shared) : std::string());
  }
  return out;
}

}  // namespace ranc::passes
