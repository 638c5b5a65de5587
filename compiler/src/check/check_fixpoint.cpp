// Checking a fixpoint group (ir/program.h, RECURSION): the shape of its definition,
// the schemas of its recursive relations (inferred from the rules that can be typed
// without them), every rule checked with ranc::check as a program of its own, and the
// monotonicity rule on every path from a recursive relation to a rule's result.
#include "check_fixpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace ranc::check_detail {

namespace {

void report(std::vector<Diagnostic>& diags, ErrorKind kind, std::string message,
            const SourceLoc& loc, std::string hint = {}) {
  diags.push_back(Diagnostic{kind, std::move(message), loc, std::move(hint)});
}

// The nodes of `p` reachable from `roots` (along input edges), as a program of their own
// with ids renumbered in their original order.
Program extract(const Program& p, const std::vector<NodeId>& roots) {
  std::vector<bool> keep(p.size(), false);
  std::vector<NodeId> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    NodeId id = stack.back();
    stack.pop_back();
    if (id < 0 || id >= static_cast<NodeId>(p.size()) || keep[static_cast<size_t>(id)]) continue;
    keep[static_cast<size_t>(id)] = true;
    for (NodeId in : p.node(id).inputs) stack.push_back(in);
  }
  std::vector<NodeId> new_id(p.size(), -1);
  NodeId next = 0;
  for (size_t i = 0; i < p.size(); ++i)
    if (keep[i]) new_id[i] = next++;
  Program out;
  for (size_t i = 0; i < p.size(); ++i) {
    if (!keep[i]) continue;
    Node n = p.node(static_cast<NodeId>(i));
    for (NodeId& in : n.inputs)
      in = (in >= 0 && in < static_cast<NodeId>(p.size())) ? new_id[static_cast<size_t>(in)] : in;
    out.add(std::move(n));
  }
  return out;
}

// Input names a node depends on.
std::set<std::string> inputs_read(const Program& p, NodeId root) {
  std::set<std::string> names;
  std::vector<bool> seen(p.size(), false);
  std::vector<NodeId> stack{root};
  while (!stack.empty()) {
    NodeId id = stack.back();
    stack.pop_back();
    if (id < 0 || id >= static_cast<NodeId>(p.size()) || seen[static_cast<size_t>(id)]) continue;
    seen[static_cast<size_t>(id)] = true;
    const Node& n = p.node(id);
    if (n.kind == OpKind::Input) names.insert(n.name);
    for (NodeId in : n.inputs) stack.push_back(in);
  }
  return names;
}

Schema relation_schema(const Schema& rule) {
  Schema s;
  s.attributes = rule.attributes;
  s.key_size = 0;  // a recursive relation is a set of tuples: no declared key
  return s;
}

std::string types_text(const Schema& s) {
  std::string t;
  for (size_t i = 0; i < s.size(); ++i)
    t += fmt::format("{}{} {}", i ? ", " : "", s[i].name, type_name(s[i].type));
  return "(" + t + ")";
}

bool same_types(const Schema& a, const Schema& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].type != b[i].type) return false;
  return true;
}

// Rejects operators that are not monotone on a path from a recursive relation.
void check_monotone(const FixpointDef& def, const Program& rules,
                    std::vector<Diagnostic>& diags) {
  std::set<std::string> recursive(def.names.begin(), def.names.end());
  std::vector<bool> rec(rules.size(), false);
  for (const Node& n : rules.nodes()) {
    // What the semi-naive GPU loop does not evaluate (anywhere in the rules).
    std::string unsupported;
    if (n.kind == OpKind::Join && is_outer_join(n.join_kind))
      unsupported = "an outer join";
    else if (n.kind == OpKind::UnionAll)
      unsupported = "union all";
    else if (op_takes_subqueries(n.kind) && n.inputs.size() > static_cast<size_t>(op_arity(n.kind)))
      unsupported = "a scalar subquery";
    else
      for (const Attribute& a : n.schema.attributes)
        if (a.nullable && unsupported.empty())
          unsupported = fmt::format("the nullable attribute '{}'", a.name);
    if (!unsupported.empty()) {
      report(diags, ErrorKind::InvalidArgument,
             fmt::format("{} is not supported inside a fixpoint", unsupported), n.loc,
             "compute it outside the fixpoint; coalesce removes NULLs (a reduce without group "
             "keys has nullable aggregates: NULL over no rows)");
      continue;
    }
    if (n.kind == OpKind::Input) {
      rec[static_cast<size_t>(n.id)] = recursive.count(n.name) > 0;
      continue;
    }
    bool any = false;
    for (NodeId in : n.inputs) any = any || rec[static_cast<size_t>(in)];
    rec[static_cast<size_t>(n.id)] = any;
    if (!any) continue;
    auto from = [&](size_t i) { return rec[static_cast<size_t>(n.inputs[i])]; };
    const char* bad = nullptr;
    if (n.kind == OpKind::Reduce)
      bad = "a reduce";
    else if (n.kind == OpKind::Limit)
      bad = "a limit";
    else if (n.kind == OpKind::Difference && from(1))
      bad = "the right input of a difference";
    else if (n.kind == OpKind::Join && n.join_kind == JoinKind::Anti && from(1))
      bad = "the right input of an anti join";
    if (bad)
      report(diags, ErrorKind::InvalidArgument,
             fmt::format("{} is on a recursive path of the fixpoint: a recursive relation must "
                         "grow monotonically, so its rules may not aggregate, limit or subtract "
                         "it",
                         bad),
             n.loc,
             "compute it outside the fixpoint, from the fixpoint's result (or over an outer "
             "relation)");
  }
}

}  // namespace

std::shared_ptr<const FixpointDef> check_fixpoint(const FixpointDef& def,
                                                  const std::vector<const Node*>& inputs,
                                                  std::vector<Diagnostic>& diags) {
  const size_t before = diags.size();
  const SourceLoc& loc = def.loc;
  if (!def.rules) {
    report(diags, ErrorKind::InvalidGraph, "fixpoint without rules", loc);
    return nullptr;
  }
  const Program& rules = *def.rules;
  if (def.names.empty()) report(diags, ErrorKind::InvalidGraph, "fixpoint defines no relation", loc);
  if (def.max_iterations < 0)
    report(diags, ErrorKind::InvalidArgument,
           fmt::format("fixpoint iteration limit {} is negative", def.max_iterations), loc);
  std::map<std::string, int32_t> index;
  for (size_t i = 0; i < def.names.size(); ++i)
    if (!index.emplace(def.names[i], static_cast<int32_t>(i)).second)
      report(diags, ErrorKind::DuplicateName,
             fmt::format("fixpoint relation '{}' is listed twice", def.names[i]), loc);
  std::map<std::string, Schema> known;
  if (inputs.size() != def.outer.size())
    report(diags, ErrorKind::InvalidGraph,
           fmt::format("fixpoint reads {} outer relation(s) but has {} input(s)", def.outer.size(),
                       inputs.size()),
           loc);
  for (size_t i = 0; i < def.outer.size() && i < inputs.size(); ++i) {
    if (index.count(def.outer[i]))
      report(diags, ErrorKind::DuplicateName,
             fmt::format("'{}' is both a recursive and an outer relation of the fixpoint",
                         def.outer[i]),
             loc);
    Schema s = inputs[i]->schema;
    known[def.outer[i]] = s;
  }
  // The rules' own graph: one Input per name, every Output a rule of a recursive relation.
  std::set<std::string> input_names;
  std::vector<int> rules_of(def.names.size(), 0);
  for (const Node& n : rules.nodes()) {
    if (n.kind == OpKind::Fixpoint)
      report(diags, ErrorKind::InvalidGraph, "a fixpoint inside a fixpoint's rules", n.loc,
             "define the inner recursion as its own fixpoint outside and use its result");
    if (n.kind == OpKind::Input) {
      if (!input_names.insert(n.name).second)
        report(diags, ErrorKind::InvalidGraph,
               fmt::format("fixpoint rules read '{}' through two input nodes", n.name), n.loc);
      if (!index.count(n.name) && !known.count(n.name) &&
          std::find(def.outer.begin(), def.outer.end(), n.name) == def.outer.end())
        report(diags, ErrorKind::UnknownRelation,
               fmt::format("fixpoint rule reads '{}', which is neither one of its recursive "
                           "relations nor an outer relation",
                           n.name),
               n.loc);
    }
    if (n.kind == OpKind::Output) {
      auto it = index.find(n.name);
      if (it == index.end())
        report(diags, ErrorKind::UnknownRelation,
               fmt::format("fixpoint rule defines '{}', which is not one of its recursive "
                           "relations",
                           n.name),
               n.loc);
      else
        ++rules_of[static_cast<size_t>(it->second)];
    }
  }
  for (size_t i = 0; i < def.names.size(); ++i)
    if (rules_of[i] == 0)
      report(diags, ErrorKind::InvalidGraph,
             fmt::format("fixpoint relation '{}' has no rule", def.names[i]), loc);
  if (diags.size() != before) return nullptr;

  // Declared schemas for the rules' inputs as they become known; the rules' outputs get
  // names of their own (a relation has several rules, a program one output per name).
  auto with_schemas = [&](const Program& p) {
    Program q;
    int rule = 0;
    for (Node n : p.nodes()) {
      if (n.kind == OpKind::Output) n.name = fmt::format("{}$rule{}", n.name, rule++);
      if (n.kind == OpKind::Input) {
        auto it = known.find(n.name);
        if (it != known.end()) {
          n.declared = it->second;
          n.sort_keys.clear();
        }
      }
      q.add(std::move(n));
    }
    return q;
  };

  // Schema inference: a rule can be typed once every relation it reads has a schema; the
  // first typed rule of a recursive relation gives it its schema (its base case).
  const std::vector<NodeId> outs = rules.outputs();
  std::vector<bool> done(outs.size(), false);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t r = 0; r < outs.size(); ++r) {
      if (done[r]) continue;
      bool ready = true;
      for (const std::string& name : inputs_read(rules, outs[r])) ready = ready && known.count(name);
      if (!ready) continue;
      done[r] = true;
      const std::string& target = rules.node(outs[r]).name;
      try {
        Program one = check(with_schemas(extract(rules, {outs[r]})));
        if (!known.count(target)) {
          known[target] = relation_schema(one.node(one.outputs().at(0)).schema);
          progress = true;
        }
      } catch (const UserError& e) {
        for (const Diagnostic& d : e.diagnostics()) diags.push_back(d);
      }
    }
  }
  if (diags.size() != before) return nullptr;
  for (size_t i = 0; i < def.names.size(); ++i)
    if (!known.count(def.names[i])) {
      SourceLoc where = loc;
      for (NodeId o : outs)
        if (rules.node(o).name == def.names[i]) {
          where = rules.node(o).loc;
          break;
        }
      report(diags, ErrorKind::Cycle,
             fmt::format("fixpoint relation '{}' has no base case: every rule of it reads a "
                         "recursive relation whose schema depends on it",
                         def.names[i]),
             where, "add a rule that derives it from outer relations only");
    }
  if (diags.size() != before) return nullptr;

  auto checked = std::make_shared<FixpointDef>(def);
  try {
    checked->checked_rules = std::make_shared<const Program>(check(with_schemas(rules)));
  } catch (const UserError& e) {
    for (const Diagnostic& d : e.diagnostics()) diags.push_back(d);
    return nullptr;
  }
  const Program& cr = *checked->checked_rules;
  for (const std::string& name : def.names) checked->schemas.push_back(known.at(name));
  const std::vector<NodeId> checked_outs = cr.outputs();
  internal_check(checked_outs.size() == outs.size(), "check_fixpoint: rules lost in checking");
  for (size_t r = 0; r < outs.size(); ++r) {
    Node rule = cr.node(checked_outs[r]);
    rule.name = rules.node(outs[r]).name;
    const int32_t t = index.at(rule.name);
    checked->rule_target.push_back(t);
    const Schema& want = checked->schemas[static_cast<size_t>(t)];
    if (!same_types(rule.schema, want))
      report(diags, ErrorKind::SchemaMismatch,
             fmt::format("this rule of '{}' gives {}, but '{}' is {} (from its first rule)",
                         rule.name, types_text(rule.schema), rule.name, types_text(want)),
             rule.loc, "every rule of a recursive relation must give the same attribute types");
  }
  check_monotone(*checked, cr, diags);
  if (diags.size() != before) return nullptr;
  return checked;
}

}  // namespace ranc::check_detail
