// Typing rule of limit: non-negative count and offset; schema and order are the
// input's.
#include <fmt/format.h>

#include "../typing_rules.h"

namespace ranc::ops::typing {

bool type_limit(Node& n, const Inputs& in, Diagnostics& diags) {
  bool ok = true;
  if (n.limit < 0) {
    report(diags, ErrorKind::InvalidArgument,
           fmt::format("limit count must be >= 0, got {}", n.limit), n.loc);
    ok = false;
  }
  if (n.offset < 0) {
    report(diags, ErrorKind::InvalidArgument,
           fmt::format("limit offset must be >= 0, got {}", n.offset), n.loc);
    ok = false;
  }
  if (!ok) return false;
  n.schema = in[0]->schema;
  n.order = in[0]->order;
  return true;
}

}  // namespace ranc::ops::typing
