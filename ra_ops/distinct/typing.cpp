// Typing rule of distinct: schema and order are the input's (removing duplicates
// keeps the relative order of what remains).
#include "../typing_rules.h"

namespace ranc::ops::typing {

bool type_distinct(Node& n, const Inputs& in, Diagnostics&) {
  n.schema = in[0]->schema;
  n.order = in[0]->order;
  return true;
}

}  // namespace ranc::ops::typing
