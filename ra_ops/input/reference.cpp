// Reference semantics of input: the relation bound by the caller, checked against
// the declared schema (attribute names and types, taken by name from a relation that
// may have more; the key is the declared one) and,
// when it declares an order, checked to be sorted by it (0-based row numbers).
#include <fmt/format.h>

#include "../reference_internal.h"

namespace ranc::ops::ref {

HostRelation eval_input(const Node& n, const Inputs& in) {
  const Schema& want = n.declared;
  // A bound relation with more attributes than declared (prune_attributes narrows
  // the declaration to what the program uses) gives the declared ones, by name.
  HostRelation narrowed;
  const HostRelation* bound = in[0];
  if (bound->schema().attributes != want.attributes) {
    std::vector<size_t> cols;
    for (const Attribute& a : want.attributes) {
      auto c = bound->schema().find(a.name);
      if (!c || bound->schema()[*c].type != a.type) break;
      cols.push_back(*c);
    }
    if (cols.size() != want.size())
      throw UserError(
          Diagnostic{ErrorKind::SchemaMismatch,
                     fmt::format("input relation '{}' has schema {} but the program declares {}",
                                 n.name, bound->schema().str(), want.str()),
                     n.loc, "every declared attribute must be bound, with its name and type"});
    narrowed = HostRelation(want);
    for (size_t i = 0; i < cols.size(); ++i) narrowed.column(i) = bound->column(cols[i]);
    bound = &narrowed;
  }
  const HostRelation& r = *bound;
  for (size_t c = 0; c < want.size(); ++c) {
    const Column& col = r.column(c);
    if (want[c].nullable || !col.nullable()) continue;
    for (size_t i = 0; i < col.size(); ++i)
      if (col.is_null(i))
        throw UserError(Diagnostic{
            ErrorKind::Data,
            fmt::format("input relation '{}' has a NULL in attribute '{}' (row {}), which is not "
                        "declared nullable",
                        n.name, want[c].name, i),
            n.loc, fmt::format("declare it '{} {} null'", want[c].name, type_name(want[c].type))});
  }
  // A declared order ("sorted by") is a promise about the data: check it row by row.
  if (!n.sort_keys.empty() && r.num_rows() > 1) {
    Keys keys;
    for (const SortKey& k : n.sort_keys)
      push_norm_keys(keys, r.column(static_cast<size_t>(k.index)), k.descending);
    for (size_t i = 1; i < r.num_rows(); ++i)
      if (compare_keys(keys, i - 1, keys, i) > 0)
        throw UserError(Diagnostic{
            ErrorKind::Execution,
            fmt::format("input relation '{}' is not sorted by ({}) as declared: row {} comes "
                        "after row {} but orders before it",
                        n.name, order_text(n.sort_keys), i, i - 1),
            n.loc, "sort the data, or drop the declared order so that ranc sorts it"});
  }
  // The output carries the resolved schema (the declared one, with its key).
  return gather(r, all_rows(r.num_rows()), n.schema.size() ? n.schema : want);
}

}  // namespace ranc::ops::ref
