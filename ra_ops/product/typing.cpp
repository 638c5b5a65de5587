// Typing rule of product: left attributes then right attributes; the names must be
// disjoint. No key and no order are claimed (the physical planner decides the order).
#include <fmt/format.h>

#include "../typing_rules.h"

namespace ranc::ops::typing {

bool type_product(Node& n, const Inputs& in, Diagnostics& diags) {
  const Schema& l = in[0]->schema;
  const Schema& r = in[1]->schema;
  bool ok = true;
  for (const auto& a : r.attributes) {
    if (l.find(a.name)) {
      report(diags, ErrorKind::DuplicateName,
             fmt::format("attribute '{}' is in both inputs of product", a.name), n.loc,
             fmt::format("rename '{}' on one side with a project before the product", a.name));
      ok = false;
    }
  }
  if (!ok) return false;
  n.schema.attributes = l.attributes;
  n.schema.attributes.insert(n.schema.attributes.end(), r.attributes.begin(), r.attributes.end());
  n.schema.key_size = 0;
  return true;
}

}  // namespace ranc::ops::typing
