// Reference semantics of input: the relation bound by the caller, checked against
// the declared schema (attribute names and types; the key is the declared one).
#include <fmt/format.h>

#include "../reference_internal.h"

namespace ranc::ops::ref {

HostRelation eval_input(const Node& n, const Inputs& in) {
  const HostRelation& r = *in[0];
  const Schema& want = n.declared;
  if (r.schema().attributes != want.attributes)
    throw UserError(
        Diagnostic{ErrorKind::SchemaMismatch,
                   fmt::format("input relation '{}' has schema {} but the program declares {}",
                               n.name, r.schema().str(), want.str()),
                   n.loc, "attribute names, types and their order must match"});
  // The output carries the resolved schema (the declared one, with its key).
  return gather(r, all_rows(r.num_rows()), n.schema.size() ? n.schema : want);
}

}  // namespace ranc::ops::ref
