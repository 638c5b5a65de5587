// Helpers shared by the front-end tests: a canonical text of an unchecked program
// (so a parsed program can be compared with one built by the C++ DSL), and file
// reading.
#pragma once

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ranc/ir/program.h"

namespace ranc::test {

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir,
                                                   std::string_view ext) {
  std::vector<std::filesystem::path> out;
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string canonical(const Program& p);

inline std::string node_params(const Node& n) {
  std::string s;
  if (!n.name.empty()) s += " name=" + n.name;
  if (n.kind == OpKind::Input) s += " schema=" + n.declared.str();
  if (n.predicate.valid()) s += " pred=" + to_string(n.predicate);
  for (const auto& e : n.exprs) s += fmt::format(" {}:={}", e.name, to_string(e.expr));
  if (n.kind == OpKind::Join) {
    s += fmt::format(" {}", join_kind_name(n.join_kind));
    for (size_t i = 0; i < n.left_keys.size(); ++i)
      s += fmt::format(" {}={}", n.left_keys[i], i < n.right_keys.size() ? n.right_keys[i] : "?");
  }
  for (const auto& k : n.group_keys) s += " by " + k;
  for (const auto& a : n.aggregates)
    s += fmt::format(" {}={}({}{})", a.name, agg_func_name(a.func), a.distinct ? "distinct " : "",
                     a.arg.valid() ? to_string(a.arg) : "");
  for (const auto& k : n.sort_keys)
    s += fmt::format(" sort {}{}", k.attr, k.descending ? " desc" : "");
  if (n.kind == OpKind::Limit) s += fmt::format(" limit {} offset {}", n.limit, n.offset);
  if (n.kind == OpKind::Fixpoint && n.fixpoint) {
    const FixpointDef& d = *n.fixpoint;
    s += fmt::format(" fixpoint {} of ({}) outer ({}) max {} rules {{\n{}}}", n.fixpoint_index,
                     fmt::join(d.names, ", "), fmt::join(d.outer, ", "), d.max_iterations,
                     d.rules ? canonical(*d.rules) : std::string("<none>"));
  }
  return s;
}

// The program reachable from its outputs, nodes labelled in visiting order: equal
// for two programs with the same operators, parameters and edges, whatever their
// node numbering and source locations. A fixpoint's rules are part of its node.
inline std::string canonical(const Program& p) {
  std::map<NodeId, int> label;
  std::string out;
  std::function<std::string(NodeId)> visit = [&](NodeId id) -> std::string {
    if (id < 0 || static_cast<size_t>(id) >= p.size()) return "<dangling>";
    if (auto it = label.find(id); it != label.end()) return fmt::format("#{}", it->second);
    label[id] = -1;
    const Node& n = p.node(id);
    std::vector<std::string> ins;
    for (NodeId in : n.inputs) ins.push_back(visit(in));
    int l = static_cast<int>(label.size());
    label[id] = l;
    out += fmt::format("#{} = {}{} [{}]\n", l, op_kind_name(n.kind), node_params(n),
                       fmt::join(ins, ", "));
    return fmt::format("#{}", l);
  };
  for (NodeId o : p.outputs()) visit(o);
  return out;
}

}  // namespace ranc::test
