// The Program container and the names of operator kinds.
#include "ranc/ir/program.h"

namespace ranc {

std::string_view op_kind_name(OpKind k) {
  switch (k) {
#define RANC_X(name, text, arity) \
  case OpKind::name:              \
    return text;
    RANC_OP_KINDS(RANC_X)
#undef RANC_X
  }
  return "?";
}

int op_arity(OpKind k) {
  switch (k) {
#define RANC_X(name, text, arity) \
  case OpKind::name:              \
    return arity;
    RANC_OP_KINDS(RANC_X)
#undef RANC_X
  }
  return 0;
}

std::string validity_name(std::string_view attr) {
  return std::string(attr) + ".valid";
}

bool is_validity_name(std::string_view name, std::string* attr) {
  constexpr std::string_view suffix = ".valid";
  if (name.size() <= suffix.size() || !name.ends_with(suffix)) return false;
  if (attr) *attr = std::string(name.substr(0, name.size() - suffix.size()));
  return true;
}

bool op_takes_subqueries(OpKind k) {
  return k == OpKind::Select || k == OpKind::Project || k == OpKind::Join || k == OpKind::Reduce;
}

std::string_view join_kind_name(JoinKind k) {
  switch (k) {
    case JoinKind::Inner:
      return "inner";
    case JoinKind::Semi:
      return "semi";
    case JoinKind::Anti:
      return "anti";
    case JoinKind::Left:
      return "left";
    case JoinKind::Right:
      return "right";
    case JoinKind::Full:
      return "full";
  }
  return "?";
}

std::string_view agg_func_name(AggFunc f) {
  switch (f) {
    case AggFunc::Sum:
      return "sum";
    case AggFunc::Count:
      return "count";
    case AggFunc::Min:
      return "min";
    case AggFunc::Max:
      return "max";
    case AggFunc::Avg:
      return "avg";
  }
  return "?";
}

NodeId Program::add(Node n) {
  n.id = static_cast<NodeId>(nodes_.size());
  nodes_.push_back(std::move(n));
  checked_ = false;
  return nodes_.back().id;
}

std::vector<NodeId> Program::outputs() const {
  std::vector<NodeId> out;
  for (const auto& n : nodes_)
    if (n.kind == OpKind::Output) out.push_back(n.id);
  return out;
}

std::vector<NodeId> Program::inputs() const {
  std::vector<NodeId> out;
  for (const auto& n : nodes_)
    if (n.kind == OpKind::Input) out.push_back(n.id);
  return out;
}

}  // namespace ranc
