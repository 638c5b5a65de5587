// Typing rule of sort: keys name distinct input attributes. The output order is the
// keys, then every other attribute ascending (the tie-break of the semantics), so a
// sorted relation's order covers the whole tuple.
#include <fmt/format.h>

#include "../typing_rules.h"

namespace ranc::ops::typing {

bool type_sort(Node& n, const Inputs& in, Diagnostics& diags) {
  const Schema& s = in[0]->schema;
  if (n.sort_keys.empty()) {
    report(diags, ErrorKind::InvalidArgument, "sort needs at least one key", n.loc,
           fmt::format("sort by one of: {}", list_names(s)));
    return false;
  }
  bool ok = true;
  std::vector<bool> used(s.size(), false);
  for (auto& k : n.sort_keys) {
    const SourceLoc& loc = loc_or(k.loc, n.loc);
    auto i = find_attribute(k.attr, s, "sort keys", "input", loc, diags);
    if (!i) {
      ok = false;
      continue;
    }
    if (used[static_cast<size_t>(*i)]) {
      report(diags, ErrorKind::DuplicateName,
             fmt::format("attribute '{}' appears twice in the sort keys", k.attr), loc);
      ok = false;
      continue;
    }
    used[static_cast<size_t>(*i)] = true;
    k.index = *i;
  }
  if (!ok) return false;
  n.schema = s;
  n.order = n.sort_keys;
  for (size_t i = 0; i < s.size(); ++i)
    if (!used[i]) n.order.push_back(SortKey{s[i].name, false, n.loc, static_cast<int32_t>(i)});
  return true;
}

}  // namespace ranc::ops::typing
