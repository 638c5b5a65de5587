// check(): validates a program's graph, keeps what the outputs depend on, puts it in
// topological order and types every node with its operator's rule (ra_ops/). All
// mistakes are collected and thrown together as one UserError.
#include <fmt/format.h>

#include <map>
#include <queue>

#include "check_fixpoint.h"
#include "ranc/ir/program.h"
#include "ranc/ra_ops/ra_ops.h"

namespace ranc {

namespace {

constexpr NodeId kForeignNode = -2;  // what the DSL records for another builder's node

bool valid_kind(OpKind k) {
  return static_cast<uint8_t>(k) <= static_cast<uint8_t>(OpKind::Output);
}

// How a node is named in messages: its relation name where it has one.
std::string label(const Program& p, NodeId id) {
  const Node& n = p.node(id);
  if (!n.name.empty()) return n.name;
  return fmt::format("n{} ({})", id, op_kind_name(n.kind));
}

void report(std::vector<Diagnostic>& diags, ErrorKind kind, std::string message,
            const SourceLoc& loc, std::string hint = {}) {
  diags.push_back(Diagnostic{kind, std::move(message), loc, std::move(hint)});
}

// Arity, input ids, foreign nodes, outputs used as inputs: mistakes in the edges.
void check_edges(const Program& p, std::vector<Diagnostic>& diags) {
  for (NodeId id = 0; id < static_cast<NodeId>(p.size()); ++id) {
    const Node& n = p.node(id);
    if (!valid_kind(n.kind)) {
      report(
          diags, ErrorKind::InvalidGraph,
          fmt::format("node n{} has an unknown operator kind ({})", id, static_cast<int>(n.kind)),
          n.loc);
      continue;
    }
    int arity = op_arity(n.kind);
    if (n.kind == OpKind::Fixpoint) {
      if (!n.fixpoint || n.fixpoint_index < 0 ||
          n.fixpoint_index >= static_cast<int32_t>(n.fixpoint->names.size()))
        report(diags, ErrorKind::InvalidGraph,
               fmt::format("fixpoint node n{} has no definition of its relation", id), n.loc);
      else
        arity = static_cast<int>(n.fixpoint->outer.size());
    }
    const bool subqueries =
        op_takes_subqueries(n.kind) && static_cast<int>(n.inputs.size()) > arity;
    if (static_cast<int>(n.inputs.size()) != arity && !subqueries) {
      report(diags, ErrorKind::InvalidGraph,
             fmt::format("{} takes {} input(s), but node n{} has {}", op_kind_name(n.kind), arity,
                         id, n.inputs.size()),
             n.loc);
    }
    for (NodeId in : n.inputs) {
      if (in == kForeignNode) {
        report(diags, ErrorKind::InvalidGraph,
               fmt::format("{} uses a relation from another ProgramBuilder", op_kind_name(n.kind)),
               n.loc, "build the whole program with one ProgramBuilder");
      } else if (in < 0 || in >= static_cast<NodeId>(p.size())) {
        report(diags, ErrorKind::InvalidGraph,
               fmt::format("{} (node n{}) refers to node n{}, which does not exist",
                           op_kind_name(n.kind), id, in),
               n.loc);
      } else if (p.node(in).kind == OpKind::Output) {
        report(
            diags, ErrorKind::InvalidGraph,
            fmt::format("{} uses output '{}' as its input", op_kind_name(n.kind), p.node(in).name),
            n.loc, "an output is a result of the program; use the relation it outputs instead");
      }
    }
  }
}

// Duplicate input relation names and duplicate output names, and a program without
// outputs.
void check_names(const Program& p, std::vector<Diagnostic>& diags) {
  std::map<std::string, NodeId> inputs, outputs;
  for (NodeId id = 0; id < static_cast<NodeId>(p.size()); ++id) {
    const Node& n = p.node(id);
    if (n.kind != OpKind::Input && n.kind != OpKind::Output) continue;
    if (n.name.empty()) continue;  // the operator's typing rule reports it
    bool is_input = n.kind == OpKind::Input;
    auto& seen = is_input ? inputs : outputs;
    auto [it, fresh] = seen.emplace(n.name, id);
    if (!fresh)
      report(
          diags, ErrorKind::DuplicateName,
          fmt::format("{} '{}' is defined twice", is_input ? "input relation" : "output", n.name),
          n.loc, fmt::format("first defined at {}", p.node(it->second).loc.str()));
  }
  if (p.outputs().empty())
    report(diags, ErrorKind::NoOutput, "the program has no outputs",
           p.size() ? p.node(static_cast<NodeId>(p.size()) - 1).loc : SourceLoc{},
           "mark a result with output(relation, name)");
}

// Depth-first search from the outputs along input edges (all valid by now): marks
// what the outputs depend on and reports every cycle found, by its members' names.
std::vector<bool> reachable_without_cycles(const Program& p, std::vector<Diagnostic>& diags) {
  enum Color : uint8_t { White, Gray, Black };
  std::vector<Color> color(p.size(), White);
  // Explicit stack: generated programs can be deeper than the call stack allows.
  std::vector<std::pair<NodeId, size_t>> stack;  // node, next input to visit
  for (NodeId out : p.outputs()) {
    if (color[out] != White) continue;
    color[out] = Gray;
    stack.push_back({out, 0});
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      const Node& n = p.node(id);
      if (next == n.inputs.size()) {
        color[id] = Black;
        stack.pop_back();
        continue;
      }
      NodeId in = n.inputs[next++];
      if (color[in] == White) {
        color[in] = Gray;
        stack.push_back({in, 0});
      } else if (color[in] == Gray) {
        // The stack from `in` up is the cycle; each member depends on the next.
        size_t start = 0;
        while (stack[start].first != in) ++start;
        std::string chain;
        for (size_t i = start; i < stack.size(); ++i) chain += label(p, stack[i].first) + " -> ";
        chain += label(p, in);
        const Node& first = p.node(in);
        std::string who = first.name.empty()
                              ? fmt::format("node n{} ({})", in, describe_node(p, first))
                              : fmt::format("relation '{}'", first.name);
        report(diags, ErrorKind::Cycle, fmt::format("{} depends on itself: {}", who, chain),
               first.loc);
      }
    }
  }
  std::vector<bool> reachable(p.size());
  for (size_t i = 0; i < p.size(); ++i) reachable[i] = color[i] != White;
  return reachable;
}

// A topological order of the reachable nodes: inputs before their users, otherwise
// the original order; outputs last, in the order they were declared (they use
// nothing downstream, and Program::outputs() then lists them as the user wrote them).
std::vector<NodeId> topological_order(const Program& p, const std::vector<bool>& reachable) {
  std::vector<size_t> pending(p.size(), 0);
  std::vector<std::vector<NodeId>> users(p.size());
  for (NodeId id = 0; id < static_cast<NodeId>(p.size()); ++id) {
    if (!reachable[id]) continue;
    for (NodeId in : p.node(id).inputs) {
      users[in].push_back(id);
      ++pending[id];
    }
  }
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (NodeId id = 0; id < static_cast<NodeId>(p.size()); ++id)
    if (reachable[id] && pending[id] == 0 && p.node(id).kind != OpKind::Output) ready.push(id);
  std::vector<NodeId> order;
  while (!ready.empty()) {
    NodeId id = ready.top();
    ready.pop();
    order.push_back(id);
    for (NodeId u : users[id])
      if (--pending[u] == 0 && p.node(u).kind != OpKind::Output) ready.push(u);
  }
  for (NodeId id : p.outputs()) order.push_back(id);
  return order;
}

}  // namespace

Program check(const Program& program) {
  std::vector<Diagnostic> diags;
  check_edges(program, diags);
  check_names(program, diags);
  if (!diags.empty()) throw UserError(std::move(diags));
  std::vector<bool> reachable = reachable_without_cycles(program, diags);
  if (!diags.empty()) throw UserError(std::move(diags));

  std::vector<NodeId> order = topological_order(program, reachable);
  std::vector<NodeId> new_id(program.size(), -1);
  for (size_t i = 0; i < order.size(); ++i) new_id[order[i]] = static_cast<NodeId>(i);

  std::vector<Node> nodes;
  nodes.reserve(order.size());
  for (NodeId old : order) {
    Node n = program.node(old);
    n.id = new_id[old];
    for (NodeId& in : n.inputs) in = new_id[in];
    nodes.push_back(std::move(n));
  }

  // Nodes whose inputs failed are skipped: their errors would only echo the first.
  std::vector<bool> failed(nodes.size(), false);
  // A fixpoint group's definition is checked once, for its first node; the group's nodes
  // then share the checked definition (the GPU lowering evaluates a group once).
  std::map<const FixpointDef*, std::shared_ptr<const FixpointDef>> fixpoints;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<const Node*> inputs;
    bool skip = false;
    for (NodeId in : nodes[i].inputs) {
      skip = skip || failed[in];
      inputs.push_back(&nodes[in]);
    }
    if (skip) {
      failed[i] = true;
      continue;
    }
    size_t before = diags.size();
    if (nodes[i].kind == OpKind::Fixpoint) {
      Node& n = nodes[i];
      auto [it, fresh] = fixpoints.emplace(n.fixpoint.get(), nullptr);
      if (fresh) it->second = check_detail::check_fixpoint(*n.fixpoint, inputs, diags);
      failed[i] = it->second == nullptr;
      if (!failed[i]) {
        n.fixpoint = it->second;
        n.schema = n.fixpoint->schemas.at(static_cast<size_t>(n.fixpoint_index));
        n.order.clear();
      } else if (!fresh) {
        continue;  // reported with the group's first node
      }
    } else {
      failed[i] = !ops::type_node(nodes[i], inputs, diags);
    }
    if (failed[i] && diags.size() == before)
      report(diags, ErrorKind::InvalidGraph,
             fmt::format("{} could not be typed", op_kind_name(nodes[i].kind)), nodes[i].loc);
  }
  if (!diags.empty()) throw UserError(std::move(diags));

  Program checked;
  for (auto& n : nodes) checked.add(std::move(n));
  checked.set_checked();
  return checked;
}

}  // namespace ranc
