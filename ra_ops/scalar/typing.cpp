// Typing rule of scalar (made by lower_scalar_subqueries): the input's attributes, every
// one nullable (an empty input gives a tuple of NULLs), no key. With explicit_validity
// (lower_nulls): input (v) or (v.valid, v), output (v.valid, v), nothing nullable.
#include <fmt/format.h>

#include "../typing_rules.h"

namespace ranc::ops::typing {

bool type_scalar(Node& n, const Inputs& in, Diagnostics& diags) {
  const Schema& s = in[0]->schema;
  n.schema.key_size = 0;
  if (!n.explicit_validity) {
    n.schema.attributes = s.attributes;
    for (auto& a : n.schema.attributes) a.nullable = true;
    return true;
  }
  if ((s.size() != 1 && s.size() != 2) || (s.size() == 2 && s[0].type != Type::Bool)) {
    report(diags, ErrorKind::InvalidGraph,
           fmt::format("a scalar node in the NULL layout has input {}", s.str()), n.loc);
    return false;
  }
  const Attribute& v = s.attributes.back();
  n.schema.attributes = {Attribute{validity_name(v.name), Type::Bool}, Attribute{v.name, v.type}};
  return true;
}

}  // namespace ranc::ops::typing
