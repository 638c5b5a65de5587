// Typing rule of union, union all, intersect and difference: inputs with the same arity
// and the same types position by position (nullability may differ); the output has the
// left input's names.
// intersect and difference return a subset of the left input, so its key still
// holds; a union's does not.
#include <fmt/format.h>

#include "../typing_rules.h"

namespace ranc::ops::typing {

bool type_set_op(Node& n, const Inputs& in, Diagnostics& diags) {
  const Schema& l = in[0]->schema;
  const Schema& r = in[1]->schema;
  std::string_view op = op_kind_name(n.kind);
  std::string why;
  if (l.size() != r.size()) {
    why = fmt::format("the left has {} attributes, the right {}", l.size(), r.size());
  } else {
    for (size_t i = 0; i < l.size() && why.empty(); ++i)
      if (l[i].type != r[i].type)
        why = fmt::format("attribute {} is {} {} on the left but {} {} on the right", i + 1,
                          l[i].name, type_name(l[i].type), r[i].name, type_name(r[i].type));
  }
  if (!why.empty()) {
    report(diags, ErrorKind::SchemaMismatch,
           fmt::format("inputs of {} are not compatible: left {}, right {}; {}", op, l.str(),
                       r.str(), why),
           n.loc, "project both inputs to the same attribute types first");
    return false;
  }
  n.schema.attributes = l.attributes;
  // A union may bring NULLs from the right; intersect and difference keep left tuples.
  if (n.kind == OpKind::Union || n.kind == OpKind::UnionAll)
    for (size_t i = 0; i < l.size(); ++i) n.schema.attributes[i].nullable |= r[i].nullable;
  n.schema.key_size = n.kind == OpKind::Union || n.kind == OpKind::UnionAll ? 0 : l.key_size;
  return true;
}

}  // namespace ranc::ops::typing
