// Lowering of a fixpoint group: semi-naive evaluation as one loop in the plan.
//
// Two programs are built from the group's rules and compiled into the enclosing unit
// (LoweringContext::inline_program), so the whole recursion is one NVRTC compile:
//
//   base:  B_t = set of every rule of R_t with the recursive relations bound to empty
//          relations (= R^0 of the naive meaning, ir/program.h), sorted by all attributes.
//   body:  inputs: the outer relations, full_t (all tuples of R_t so far) and delta_t
//          (those new in the last iteration), both sets sorted by all attributes, which
//          the planner trusts (no re-sort, no verification);
//          N_t  = union over the rules of R_t, and over each occurrence of a recursive
//                 relation in the rule, of the rule with that occurrence reading the delta
//                 and every other occurrence the full relation (the rules are monotone, so
//                 N_t holds every tuple derivable from a new tuple), sorted;
//          D'_t = N_t anti join full_t on all attributes (the new tuples: a binary
//                 search of the full relation per candidate)
//          F'_t = full_t + D'_t  (a merge; the full relation is never re-sorted)
//
// The plan: base; full_t = B_t, delta_t = copy of B_t; LoopBegin; body; LoopEnd carrying
// F' -> full and D' -> delta, until every |D'_t| is 0 or max_iterations. The read-backs
// per iteration are the sizes the body's operators need: for a linear rule, the join's
// match total and |D'_t| (the distinct is a fused stage of the anti join, and the merge
// of disjoint sets is sized as |full_t| + |D'_t|, Node::disjoint_inputs); the pass
// rotate_loop_reads then moves the next round's join count before the read-back of |D'_t|,
// so the two share one wait. Iteration k leaves full_t =
// R^k of the naive meaning, so both executors agree also under an iteration limit.
// Without a limit, an iteration that runs out of device memory is split: it runs again on
// the first half of the deltas' rows, the rest queued (rt::LoopEnd::split); the result is
// the same fixpoint, reached in more, smaller iterations.
// Parts of a rule that read no recursive relation are computed once per iteration and
// shared by the rule's variants.
// A group of one recursive relation whose tuples pack into one 64-bit word and whose rules
// read it once, through selects, projects and joins with the sorted invariants, also gets a
// resident kernel (resident.h, rt::LoopEnd::resident): the executor runs the rounds of thin
// deltas in it, one launch for many rounds, and merges what they found into full_t.
#include <fmt/format.h>

#include <functional>
#include <map>

#include "ranc/codegen/lowering.h"
#include "resident.h"

namespace ranc::codegen {
namespace {

std::string full_in(size_t t) { return fmt::format("fixpoint$full{}", t); }
std::string delta_in(size_t t) { return fmt::format("fixpoint$delta{}", t); }

std::vector<SortKey> ascending(const Schema& s) {
  std::vector<SortKey> keys;
  for (const Attribute& a : s.attributes) keys.push_back(SortKey{a.name, false, {}, -1});
  return keys;
}

Node input_node(std::string name, Schema schema, std::vector<SortKey> order) {
  Node n;
  n.kind = OpKind::Input;
  n.name = std::move(name);
  schema.key_size = 0;
  n.declared = std::move(schema);
  n.sort_keys = std::move(order);
  n.order_trusted = true;
  return n;
}

NodeId add_op(Program& p, OpKind kind, std::vector<NodeId> inputs, SourceLoc loc) {
  Node n;
  n.kind = kind;
  n.inputs = std::move(inputs);
  n.loc = loc;
  return p.add(std::move(n));
}

NodeId add_sort(Program& p, NodeId in, const Schema& names, SourceLoc loc) {
  Node n;
  n.kind = OpKind::Sort;
  n.inputs = {in};
  n.sort_keys = ascending(names);
  n.loc = loc;
  return p.add(std::move(n));
}

NodeId add_output(Program& p, NodeId in, std::string name) {
  Node n;
  n.kind = OpKind::Output;
  n.inputs = {in};
  n.name = std::move(name);
  return p.add(std::move(n));
}

// Copies of the group's rules into a new program. Input nodes of the rules become the
// program's inputs through `read` (called once per occurrence, in a fixed depth-first
// order). Nodes that read no recursive relation are loop-invariant: with a `hoisted`
// hook, an invariant input of a recursive node is what the hook gives (the body reads
// it as an input computed once, before the loop); without one they are copied once and
// shared.
class RuleCopier {
 public:
  using Read = std::function<NodeId(const std::string& name, int occurrence)>;
  using Hoisted = std::function<NodeId(NodeId rules_id)>;

  RuleCopier(const FixpointDef& def, Program& into, Hoisted hoisted = {})
      : rules_(*def.rules), into_(into), hoisted_(std::move(hoisted)), recursive_(*def.rules, def.names) {}

  // Does node `id` of the rules read a recursive relation?
  bool recursive(NodeId id) { return recursive_(id); }

  NodeId copy(NodeId id, const Read& read) {
    occurrence_ = 0;
    return copy_node(id, read);
  }
  int occurrences() const { return occurrence_; }

 private:
  NodeId copy_node(NodeId id, const Read& read) {
    const Node& n = rules_.node(id);
    if (n.kind == OpKind::Input) {
      const bool rec = recursive(id);
      if (!rec && hoisted_) return hoisted_(id);
      return read(n.name, rec ? occurrence_++ : -1);
    }
    const bool shared = !recursive(id);
    if (shared && hoisted_) return hoisted_(id);
    if (shared) {
      auto it = shared_.find(id);
      if (it != shared_.end()) return it->second;
    }
    Node c = n;
    for (NodeId& in : c.inputs) in = copy_node(in, read);
    NodeId out = into_.add(std::move(c));
    if (shared) shared_[id] = out;
    return out;
  }

  const Program& rules_;
  Program& into_;
  Hoisted hoisted_;
  ReadsRecursive recursive_;
  std::map<NodeId, NodeId> shared_;
  int occurrence_ = 0;
};

// The loop-invariant parts of the recursive rules (nodes that read no recursive
// relation, consumed by one that does), each with the order its first consumer wants:
// the right input of a sort-merge join is binary-searched by the join keys, so it is
// sorted once before the loop instead of in every iteration.
struct Invariant {
  NodeId rules_id;
  std::vector<SortKey> order;
};
std::vector<Invariant> loop_invariants(const FixpointDef& def, RuleCopier& copier) {
  const Program& rules = *def.rules;
  std::vector<Invariant> out;
  std::vector<bool> seen(rules.size(), false);
  std::vector<bool> visited(rules.size(), false);
  std::function<void(NodeId)> walk = [&](NodeId id) {
    if (visited[static_cast<size_t>(id)]) return;
    visited[static_cast<size_t>(id)] = true;
    const Node& n = rules.node(id);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const NodeId in = n.inputs[k];
      if (copier.recursive(in)) {
        walk(in);
        continue;
      }
      if (seen[static_cast<size_t>(in)]) continue;
      seen[static_cast<size_t>(in)] = true;
      Invariant inv{in, {}};
      if (n.kind == OpKind::Join && k == 1)
        for (const std::string& key : n.right_keys) inv.order.push_back(SortKey{key, false, {}, -1});
      out.push_back(std::move(inv));
    }
  };
  for (NodeId o : rules.outputs()) {
    const NodeId root = rules.node(o).inputs.at(0);
    if (copier.recursive(root)) walk(root);
  }
  return out;
}

// Is node `id` of the rules empty whenever the recursive relations are (the base case)?
// Conservative: false where unsure (a global reduce gives a row even of nothing).
bool empty_in_base(const Program& rules, NodeId id, RuleCopier& copier) {
  if (!copier.recursive(id)) return false;
  const Node& n = rules.node(id);
  auto empty = [&](size_t k) { return empty_in_base(rules, n.inputs.at(k), copier); };
  switch (n.kind) {
    case OpKind::Input:
      return true;  // a recursive relation
    case OpKind::Select:
    case OpKind::Project:
    case OpKind::Sort:
    case OpKind::Limit:
    case OpKind::Distinct:
    case OpKind::Difference:
      return empty(0);
    case OpKind::Reduce:
      return !n.group_keys.empty() && empty(0);
    case OpKind::Product:
    case OpKind::Intersect:
      return empty(0) || empty(1);
    case OpKind::Union:
    case OpKind::UnionAll:
      return empty(0) && empty(1);
    case OpKind::Join:
      switch (n.join_kind) {
        case JoinKind::Inner:
        case JoinKind::Semi:
          return empty(0) || empty(1);
        case JoinKind::Anti:
        case JoinKind::Left:
          return empty(0);
        case JoinKind::Right:
          return empty(1);
        case JoinKind::Full:
          return empty(0) && empty(1);
      }
      return false;
    default:
      return false;
  }
}

// An empty relation of the schema's types (a size slot set to 0 and empty columns).
DeviceRelation empty_relation(LoweringContext& ctx, NodeId id, const Schema& s) {
  DeviceRelation r;
  r.size = ctx.new_slot();
  ctx.step(rt::SetSize{r.size, rt::SizeExpr::fixed(0)});
  for (size_t c = 0; c < s.size(); ++c) {
    r.types.push_back(s[c].type);
    r.columns.push_back(ctx.allocate(fmt::format("n{}.empty.c{}", id, c), type_size(s[c].type),
                                     rt::SizeExpr::fixed(0), id));
  }
  return r;
}

}  // namespace

void lower_fixpoint(LoweringContext& ctx, const Node& n) {
  const Program& prog = ctx.program();
  // The group is lowered once, at its first node, for all its nodes.
  for (const Node& m : prog.nodes()) {
    if (m.id >= n.id) break;
    if (m.kind == OpKind::Fixpoint && m.fixpoint.get() == n.fixpoint.get()) return;
  }
  internal_check(n.fixpoint && n.fixpoint->checked_rules, "lower_fixpoint: unchecked fixpoint");
  const FixpointDef& def = *n.fixpoint;
  const Program& checked_rules = *def.checked_rules;
  const size_t m = def.names.size();
  const std::vector<NodeId> rule_outputs = def.rules->outputs();
  const std::vector<NodeId> checked_outputs = checked_rules.outputs();
  internal_check(rule_outputs.size() == checked_outputs.size() &&
                     rule_outputs.size() == def.rule_target.size(),
                 "lower_fixpoint: rules and checked rules differ");

  // The outer relations, with the physical order the planner knows for them.
  std::vector<std::pair<std::string, DeviceRelation>> outer;
  std::vector<Node> outer_inputs;
  for (size_t i = 0; i < def.outer.size(); ++i) {
    const NodeId in = n.inputs.at(i);
    const Node& src = prog.node(in);
    std::vector<SortKey> order;
    for (const passes::OrderKey& k : ctx.physical(in).order)
      order.push_back(SortKey{src.schema[static_cast<size_t>(k.index)].name, k.descending, {}, -1});
    outer_inputs.push_back(input_node(def.outer[i], src.schema, std::move(order)));
    outer.emplace_back(def.outer[i], ctx.dense(ctx.relation(in)));
  }
  // A rule's output attribute names (the union of a relation's rules takes the first's).
  auto rule_schema = [&](size_t r) -> const Schema& {
    return checked_rules.node(checked_outputs[r]).schema;
  };

  Program scratch;  // the analysis copies nothing
  RuleCopier analysis(def, scratch);
  const std::vector<Invariant> invariants = loop_invariants(def, analysis);

  // ---- base case: every rule over empty recursive relations ----
  Program base;
  std::map<std::string, NodeId> base_inputs;
  for (const Node& in : outer_inputs) base_inputs[in.name] = base.add(in);
  std::vector<std::pair<std::string, DeviceRelation>> base_bind = outer;
  for (size_t t = 0; t < m; ++t) {
    base_inputs[def.names[t]] = base.add(input_node(def.names[t], def.schemas[t], {}));
    base_bind.emplace_back(def.names[t], empty_relation(ctx, n.id, def.schemas[t]));
  }
  {
    RuleCopier copier(def, base);
    std::vector<NodeId> set(m, -1);
    std::vector<const Schema*> names(m, nullptr);
    for (size_t r = 0; r < rule_outputs.size(); ++r) {
      const size_t t = static_cast<size_t>(def.rule_target[r]);
      const Node& out = def.rules->node(rule_outputs[r]);
      // A rule that derives nothing from empty recursive relations (a join with one, as
      // every recursive rule of a linear recursion) is left out of the base case.
      if (empty_in_base(*def.rules, out.inputs.at(0), analysis)) continue;
      NodeId x = copier.copy(out.inputs.at(0), [&](const std::string& name, int) {
        return base_inputs.at(name);
      });
      if (set[t] < 0) {
        set[t] = x;
        names[t] = &rule_schema(r);
      } else {
        set[t] = add_op(base, OpKind::Union, {set[t], x}, out.loc);
      }
    }
    for (size_t t = 0; t < m; ++t) {
      NodeId s = set[t];
      if (s < 0) {  // every rule of R_t reads a recursive relation: R_t^0 is empty
        s = base_inputs.at(def.names[t]);
        names[t] = &def.schemas[t];
      }
      if (base.node(s).kind != OpKind::Union) s = add_op(base, OpKind::Distinct, {s}, def.loc);
      add_output(base, add_sort(base, s, *names[t], def.loc), fmt::format("fixpoint$base{}", t));
    }
    // The loop-invariant parts of the recursive rules, computed (and sorted) once here.
    for (size_t i = 0; i < invariants.size(); ++i) {
      const NodeId rules_id = invariants[i].rules_id;
      NodeId x = rules_id;
      const Node& src = def.rules->node(rules_id);
      if (src.kind == OpKind::Input) {
        x = base_inputs.at(src.name);
      } else {
        // Copy the invariant sub-graph through a node that only forwards it.
        x = copier.copy(rules_id, [&](const std::string& name, int) { return base_inputs.at(name); });
      }
      if (!invariants[i].order.empty()) {
        Node sorted;
        sorted.kind = OpKind::Sort;
        sorted.inputs = {x};
        sorted.sort_keys = invariants[i].order;
        sorted.loc = def.loc;
        x = base.add(std::move(sorted));
      }
      add_output(base, x, fmt::format("fixpoint$inv{}", i));
    }
  }
  ctx.comment(fmt::format("n{} fixpoint: base case", n.id));
  std::vector<Schema> base_schemas;
  std::vector<DeviceRelation> full = ctx.inline_program(n.id, base, base_bind, &base_schemas);
  std::vector<DeviceRelation> hoisted(full.begin() + static_cast<std::ptrdiff_t>(m), full.end());
  full.resize(m);
  std::vector<DeviceRelation> delta;
  for (size_t t = 0; t < m; ++t) {
    DeviceRelation d;
    d.size = ctx.new_slot();
    d.types = full[t].types;
    ctx.step(rt::SetSize{d.size, rt::SizeExpr::slot(full[t].size)});
    for (size_t c = 0; c < full[t].columns.size(); ++c) {
      const int32_t es = type_size(full[t].types[c]);
      rt::BufferId b = ctx.allocate(fmt::format("n{}.delta{}.c{}", n.id, t, c), es,
                                    rt::SizeExpr::slot(d.size), n.id);
      ctx.step(rt::CopyBuffer{full[t].columns[c], b, rt::SizeExpr::slot(d.size), n.id});
      d.columns.push_back(b);
    }
    delta.push_back(std::move(d));
  }

  // ---- the loop body: one semi-naive iteration ----
  Program body;
  std::map<std::string, NodeId> body_outer;
  for (const Node& in : outer_inputs) body_outer[in.name] = body.add(in);
  std::vector<NodeId> full_node(m), delta_node(m);
  std::vector<std::pair<std::string, DeviceRelation>> body_bind = outer;
  for (size_t t = 0; t < m; ++t) {
    full_node[t] = body.add(input_node(full_in(t), def.schemas[t], ascending(def.schemas[t])));
    delta_node[t] = body.add(input_node(delta_in(t), def.schemas[t], ascending(def.schemas[t])));
    body_bind.emplace_back(full_in(t), full[t]);
    body_bind.emplace_back(delta_in(t), delta[t]);
  }
  std::map<NodeId, NodeId> hoisted_input;  // rules node -> body input
  for (size_t i = 0; i < invariants.size(); ++i) {
    const std::string name = fmt::format("fixpoint$inv{}", i);
    Schema schema = base_schemas.at(m + i);
    Node in = input_node(name, schema, invariants[i].order);
    hoisted_input[invariants[i].rules_id] = body.add(std::move(in));
    body_bind.emplace_back(name, hoisted[i]);
  }
  auto index_of = [&](const std::string& name) {
    return static_cast<size_t>(std::find(def.names.begin(), def.names.end(), name) -
                               def.names.begin());
  };
  std::vector<NodeId> news(m, -1);
  std::vector<const Schema*> news_names(m, nullptr);
  {
    RuleCopier copier(def, body, [&](NodeId rules_id) { return hoisted_input.at(rules_id); });
    for (size_t r = 0; r < rule_outputs.size(); ++r) {
      const size_t t = static_cast<size_t>(def.rule_target[r]);
      const Node& out = def.rules->node(rule_outputs[r]);
      // Count the occurrences, then one variant per occurrence.
      int count = 0;
      {
        Program scratch;
        RuleCopier counter(def, scratch);
        NodeId placeholder = scratch.add(Node{});
        counter.copy(out.inputs.at(0), [&](const std::string&, int) { return placeholder; });
        count = counter.occurrences();
      }
      for (int v = 0; v < count; ++v) {
        NodeId x = copier.copy(out.inputs.at(0), [&](const std::string& name, int occurrence) {
          if (occurrence < 0) return body_outer.at(name);
          const size_t rel = index_of(name);
          return occurrence == v ? delta_node[rel] : full_node[rel];
        });
        if (news[t] < 0) {
          news[t] = x;
          news_names[t] = &rule_schema(r);
        } else {
          news[t] = add_op(body, OpKind::Union, {news[t], x}, out.loc);
        }
      }
    }
  }
  for (size_t t = 0; t < m; ++t) {
    NodeId candidates = news[t];
    const Schema* names = news_names[t];
    if (candidates < 0) {  // no rule reads a recursive relation: nothing new, ever
      Node none;
      none.kind = OpKind::Select;
      none.inputs = {delta_node[t]};
      none.predicate = lit(Value::boolean(false));
      candidates = body.add(std::move(none));
      names = &def.schemas[t];
    }
    candidates = add_sort(body, candidates, *names, def.loc);
    candidates = add_op(body, OpKind::Distinct, {candidates}, def.loc);  // sorted: one pass
    // The new tuples: an anti join against the full relation on every attribute, which
    // binary-searches the (sorted) full relation from each candidate instead of merging
    // all of it, since the candidates are usually far fewer.
    Node anti;
    anti.kind = OpKind::Join;
    anti.join_kind = JoinKind::Anti;
    anti.inputs = {candidates, full_node[t]};
    anti.loc = def.loc;
    for (size_t c = 0; c < def.schemas[t].size(); ++c) {
      anti.left_keys.push_back((*names)[c].name);
      anti.right_keys.push_back(def.schemas[t][c].name);
    }
    NodeId fresh = body.add(std::move(anti));
    NodeId grown = add_op(body, OpKind::Union, {full_node[t], fresh}, def.loc);
    body.mutable_node(grown).disjoint_inputs = true;  // fresh holds no tuple of full
    add_output(body, grown, fmt::format("fixpoint$full_out{}", t));
    add_output(body, fresh, fmt::format("fixpoint$delta_out{}", t));
  }

  ctx.step(rt::LoopBegin{n.id, n.id});
  ctx.comment(fmt::format("n{} fixpoint: one semi-naive iteration", n.id));
  std::vector<DeviceRelation> next =
      ctx.inline_program(n.id, body, body_bind, nullptr, /*loop_body=*/true);
  rt::LoopEnd end;
  end.loop = n.id;
  end.node = n.id;
  end.max_iterations = def.max_iterations;
  for (size_t t = 0; t < m; ++t) {
    const DeviceRelation& f = next.at(2 * t);
    const DeviceRelation& d = next.at(2 * t + 1);
    for (size_t c = 0; c < f.columns.size(); ++c) {
      end.carry_buffers.emplace_back(full[t].columns[c], f.columns[c]);
      end.carry_buffers.emplace_back(delta[t].columns[c], d.columns[c]);
    }
    end.carry_slots.emplace_back(full[t].size, f.size);
    end.carry_slots.emplace_back(delta[t].size, d.size);
    end.until_zero.push_back(d.size);
    // Without an iteration limit, an iteration that runs out of device memory is run
    // again on halves of the deltas (rt::LoopEnd::split): a round whose candidates do not
    // fit is evaluated in pieces instead of failing.
    if (def.max_iterations == 0) end.split.push_back(rt::SplitDelta{delta[t].columns, delta[t].size});
  }
  // Thin rounds run resident on the device (resident.h), where the group qualifies.
  if (m == 1) {
    std::vector<ResidentInvariant> resident_invariants;
    for (size_t i = 0; i < invariants.size(); ++i) {
      ResidentInvariant r;
      r.rules_id = invariants[i].rules_id;
      for (const SortKey& k : invariants[i].order) {
        if (k.descending) r.order.clear();
        if (k.descending) break;
        r.order.push_back(k.attr);
      }
      r.rel = hoisted[i];
      resident_invariants.push_back(std::move(r));
    }
    end.resident = resident_rounds(ctx, n, def, resident_invariants, full[0], delta[0]);
  }
  ctx.step(std::move(end));

  for (const Node& g : prog.nodes())
    if (g.kind == OpKind::Fixpoint && g.fixpoint.get() == n.fixpoint.get())
      ctx.set_relation(g.id, full.at(static_cast<size_t>(g.fixpoint_index)));
}

}  // namespace ranc::codegen
