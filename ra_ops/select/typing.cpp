// Typing rule of select: a bool predicate over the input; schema and order are the
// input's.
#include "../typing_rules.h"

namespace ranc::ops::typing {

bool type_select(Node& n, const Inputs& in, Diagnostics& diags) {
  const SubqueryInputs subs = subquery_inputs(n, in);
  ExprPtr p =
      resolve_predicate(n.predicate, in[0]->schema, n.loc, "select predicate", diags, &subs);
  if (!p) return false;
  n.predicate = Expr(p);
  n.schema = in[0]->schema;
  n.order = in[0]->order;
  return true;
}

}  // namespace ranc::ops::typing
