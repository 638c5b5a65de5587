// Typing rule of input: the declared schema must be usable (non-empty, unique
// names, key within the attributes) and its declared order ("sorted by") names
// distinct attributes. The declared order is physical only: n.order stays empty.
#include <fmt/format.h>

#include <set>

#include "../typing_rules.h"

namespace ranc::ops::typing {

bool type_input(Node& n, const Inputs&, Diagnostics& diags) {
  size_t before = diags.size();
  if (n.name.empty())
    report(diags, ErrorKind::InvalidArgument, "input relation has no name", n.loc);
  const Schema& s = n.declared;
  if (s.size() == 0)
    report(diags, ErrorKind::InvalidArgument,
           fmt::format("input relation '{}' declares no attributes", n.name), n.loc);
  std::set<std::string> seen;
  for (const auto& a : s.attributes) {
    if (a.name.empty()) {
      report(diags, ErrorKind::InvalidArgument,
             fmt::format("input relation '{}' has an attribute without a name", n.name), n.loc);
    } else if (!seen.insert(a.name).second) {
      report(diags, ErrorKind::DuplicateName,
             fmt::format("attribute '{}' is declared twice in input relation '{}'", a.name, n.name),
             n.loc);
    }
  }
  if (s.key_size > s.size())
    report(diags, ErrorKind::InvalidArgument,
           fmt::format(
               "the key of input relation '{}' has {} attributes, but the relation has only {}",
               n.name, s.key_size, s.size()),
           n.loc, "the key is the first key_size attributes");
  for (size_t i = 0; i < s.key_size && i < s.size(); ++i)
    if (s[i].nullable)
      report(diags, ErrorKind::InvalidArgument,
             fmt::format("key attribute '{}' of input relation '{}' is nullable", s[i].name,
                         n.name),
             n.loc, "a key identifies a tuple, so it cannot be NULL");
  if (diags.size() != before) return false;
  std::vector<bool> used(s.size(), false);
  for (auto& k : n.sort_keys) {
    const SourceLoc& loc = loc_or(k.loc, n.loc);
    auto i = find_attribute(k.attr, s, "declared order", "input", loc, diags);
    if (!i) continue;
    if (used[static_cast<size_t>(*i)]) {
      report(
          diags, ErrorKind::DuplicateName,
          fmt::format("attribute '{}' appears twice in the declared order of '{}'", k.attr, n.name),
          loc);
      continue;
    }
    used[static_cast<size_t>(*i)] = true;
    k.index = *i;
  }
  if (diags.size() != before) return false;
  n.schema = s;
  return true;
}

}  // namespace ranc::ops::typing
