// The program printer: one line per node, "n3 = join inner n1, n2 on (a = b)  ->
// (a i32, b f64 | key a) [order: a asc]". Used by tests and by `ranc explain`, so the
// format is stable; it also copes with unchecked, malformed programs (error messages
// describe their nodes). A fixpoint group's rules are printed once, indented with
// "  | ", after the first of its nodes.
#include <fmt/format.h>

#include <set>

#include "ranc/ir/program.h"

namespace ranc {

namespace {

std::string ref(NodeId id) {
  return id == -2 ? std::string("<foreign>") : fmt::format("n{}", id);
}

std::string refs(const Node& n) {
  std::string s;
  for (size_t i = 0; i < n.inputs.size(); ++i) s += (i ? ", " : "") + ref(n.inputs[i]);
  return s;
}

template <typename T, typename F>
std::string join_list(const std::vector<T>& items, F&& f) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + f(items[i]);
  return s;
}

std::string sort_keys(const std::vector<SortKey>& keys) {
  return join_list(keys, [](const SortKey& k) {
    return fmt::format("{} {}", k.attr, k.descending ? "desc" : "asc");
  });
}

}  // namespace

std::string order_text(const std::vector<SortKey>& keys) {
  std::string s;
  for (const SortKey& k : keys)
    s += fmt::format("{}{}{}", s.empty() ? "" : ", ", k.attr, k.descending ? " desc" : "");
  return s;
}

std::string describe_node(const Program& program, const Node& n) {
  std::string_view kind = op_kind_name(n.kind);
  switch (n.kind) {
    case OpKind::Input:
      if (!n.sort_keys.empty())
        return fmt::format("input {} sorted by ({})", n.name, sort_keys(n.sort_keys));
      return fmt::format("input {}", n.name);
    case OpKind::Select:
      return fmt::format("select {} where {}", refs(n), to_string(n.predicate));
    case OpKind::Project:
      return fmt::format(
          "project {} ({})", refs(n), join_list(n.exprs, [](const NamedExpr& e) {
            if (e.expr.ptr() && e.expr->kind == ExprKind::Attr && e.expr->text == e.name)
              return e.name;
            return fmt::format("{} as {}", to_string(e.expr), e.name);
          }));
    case OpKind::Product:
    case OpKind::Union:
    case OpKind::Intersect:
    case OpKind::Difference:
    case OpKind::UnionAll:
    case OpKind::Distinct:
    case OpKind::Scalar:
      return fmt::format("{} {}", kind, refs(n));
    case OpKind::Join: {
      std::string on;
      for (size_t i = 0; i < std::max(n.left_keys.size(), n.right_keys.size()); ++i)
        on += fmt::format("{}{} = {}", i ? ", " : "", i < n.left_keys.size() ? n.left_keys[i] : "?",
                          i < n.right_keys.size() ? n.right_keys[i] : "?");
      std::string s = fmt::format("join {} {} on ({}{})", join_kind_name(n.join_kind), refs(n), on,
                                  n.null_safe_keys ? ", NULL = NULL" : "");
      if (n.predicate.ptr()) s += fmt::format(" where {}", to_string(n.predicate));
      return s;
    }
    case OpKind::Reduce: {
      std::string s = fmt::format("reduce {}", refs(n));
      if (!n.group_keys.empty())
        s += fmt::format(" by ({})",
                         join_list(n.group_keys, [](const std::string& k) { return k; }));
      if (!n.aggregates.empty())
        s += fmt::format(" compute ({})", join_list(n.aggregates, [](const Aggregate& a) {
                           std::string arg = a.arg.ptr() ? to_string(a.arg) : "";
                           if (a.distinct) arg = "distinct " + arg;
                           std::string f = a.filter.ptr()
                                               ? fmt::format(" filter {}", to_string(a.filter))
                                               : "";
                           return fmt::format("{}({}){} as {}", agg_func_name(a.func), arg, f,
                                              a.name);
                         }));
      return s;
    }
    case OpKind::Sort:
      return fmt::format("sort {} by ({})", refs(n), sort_keys(n.sort_keys));
    case OpKind::Limit: {
      std::string s = fmt::format("limit {} {}", refs(n), n.limit);
      if (n.offset != 0) s += fmt::format(" offset {}", n.offset);
      return s;
    }
    case OpKind::Fixpoint: {
      std::string s = fmt::format("fixpoint {}", n.name);
      if (n.fixpoint) {
        const FixpointDef& def = *n.fixpoint;
        s += fmt::format(" [{} of {}: {}]", n.fixpoint_index + 1, def.names.size(),
                         join_list(def.names, [](const std::string& x) { return x; }));
      }
      s += fmt::format(" ({})", refs(n));
      if (n.fixpoint && n.fixpoint->max_iterations != 0)
        s += fmt::format(" max {}", n.fixpoint->max_iterations);
      return s;
    }
    case OpKind::Output:
      return fmt::format("output {} as {}", refs(n), n.name);
  }
  return fmt::format("<unknown operator {}> {}", static_cast<int>(n.kind), refs(n));
}

std::string print_program(const Program& program) {
  std::string out;
  std::set<const FixpointDef*> printed;
  for (const Node& n : program.nodes()) {
    out += fmt::format("n{} = {}", n.id, describe_node(program, n));
    if (program.checked()) {
      out += "  -> " + n.schema.str();
      if (!n.order.empty()) out += fmt::format(" [order: {}]", sort_keys(n.order));
    }
    out += '\n';
    if (n.kind == OpKind::Fixpoint && n.fixpoint && printed.insert(n.fixpoint.get()).second) {
      const FixpointDef& def = *n.fixpoint;
      const Program* rules = def.checked_rules ? def.checked_rules.get() : def.rules.get();
      if (rules == nullptr) continue;
      std::string text = print_program(*rules);
      for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\n', start);
        out += "  | " + text.substr(start, end - start) + '\n';
        start = end == std::string::npos ? text.size() : end + 1;
      }
    }
  }
  return out;
}

}  // namespace ranc
