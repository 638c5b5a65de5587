// Typing rule of output: a named program result with its input's schema and order.
// Output names are checked for uniqueness by the program checker, which sees them all.
#include "../typing_rules.h"

namespace ranc::ops::typing {

bool type_output(Node& n, const Inputs& in, Diagnostics& diags) {
  if (n.name.empty()) {
    report(diags, ErrorKind::InvalidArgument, "output has no name", n.loc);
    return false;
  }
  n.schema = in[0]->schema;
  n.order = in[0]->order;
  return true;
}

}  // namespace ranc::ops::typing
