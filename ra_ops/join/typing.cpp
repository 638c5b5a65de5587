// Typing rule of join: equi-join keys (non-empty, same count, resolved on their
// side, identical types) and an optional bool residual over the inner join's
// output, which is the left attributes then the right's non-key attributes. semi and
// anti return the left input unchanged in schema (a subset of it, so its key holds).
#include <fmt/format.h>

#include <set>

#include "../typing_rules.h"

namespace ranc::ops::typing {

bool type_join(Node& n, const Inputs& in, Diagnostics& diags) {
  const Schema& l = in[0]->schema;
  const Schema& r = in[1]->schema;
  if (n.left_keys.empty() || n.right_keys.empty()) {
    report(diags, ErrorKind::InvalidArgument, "join needs at least one key attribute on each side",
           n.loc, "use product for a join without keys");
    return false;
  }
  if (n.left_keys.size() != n.right_keys.size()) {
    report(diags, ErrorKind::InvalidArgument,
           fmt::format("join has {} left key(s) but {} right key(s)", n.left_keys.size(),
                       n.right_keys.size()),
           n.loc, "keys are matched pairwise: left_keys[i] = right_keys[i]");
    return false;
  }
  bool ok = true;
  n.left_key_index.clear();
  n.right_key_index.clear();
  for (size_t i = 0; i < n.left_keys.size(); ++i) {
    auto li = find_attribute(n.left_keys[i], l, "join keys", "the left input", n.loc, diags);
    auto ri = find_attribute(n.right_keys[i], r, "join keys", "the right input", n.loc, diags);
    if (!li || !ri) {
      ok = false;
      continue;
    }
    Type lt = l[static_cast<size_t>(*li)].type, rt = r[static_cast<size_t>(*ri)].type;
    if (lt != rt) {
      report(diags, ErrorKind::TypeMismatch,
             fmt::format("join key types differ: left '{}' is {} but right '{}' is {}",
                         n.left_keys[i], type_name(lt), n.right_keys[i], type_name(rt)),
             n.loc, "cast one side with a project so both keys have the same type");
      ok = false;
      continue;
    }
    n.left_key_index.push_back(*li);
    n.right_key_index.push_back(*ri);
  }
  if (!ok) return false;

  // The inner join's output; for semi/anti only the residual sees it, so a name clash
  // matters there only when there is a residual.
  bool inner = n.join_kind != JoinKind::Semi && n.join_kind != JoinKind::Anti;
  std::set<int32_t> right_keys(n.right_key_index.begin(), n.right_key_index.end());
  Schema joined{l.attributes, 0};
  for (size_t j = 0; j < r.size(); ++j) {
    if (right_keys.count(static_cast<int32_t>(j))) continue;
    if (l.find(r[j].name) && (inner || n.predicate.ptr() != nullptr)) {
      report(diags, ErrorKind::DuplicateName,
             fmt::format("attribute '{}' is in both inputs of join (and is not a join key)",
                         r[j].name),
             n.loc,
             fmt::format("rename '{}' on one side with a project before the join", r[j].name));
      ok = false;
    }
    joined.attributes.push_back(r[j]);
  }
  if (!ok) return false;

  if (n.predicate.ptr()) {
    const SubqueryInputs subs = subquery_inputs(n, in);
    ExprPtr p =
        resolve_predicate(n.predicate, joined, n.loc, "join residual predicate", diags, &subs);
    if (!p) return false;
    n.predicate = Expr(p);
  }
  if (n.join_kind == JoinKind::Semi || n.join_kind == JoinKind::Anti) {
    n.schema = l;
    return true;
  }
  // Outer joins: the attributes of a side that may be missing are nullable; the keys hold
  // the present side's key, so they are NULL only where a preserved side's key is.
  const bool left_missing = n.join_kind == JoinKind::Right || n.join_kind == JoinKind::Full;
  const bool right_missing = n.join_kind == JoinKind::Left || n.join_kind == JoinKind::Full;
  const size_t nl = l.size();
  std::set<int32_t> left_keys(n.left_key_index.begin(), n.left_key_index.end());
  for (size_t j = 0; j < joined.size(); ++j) {
    Attribute& a = joined.attributes[j];
    if (j >= nl) {
      a.nullable |= right_missing;
    } else if (!left_keys.count(static_cast<int32_t>(j))) {
      a.nullable |= left_missing;
    } else if (left_missing) {
      // The key of an unmatched right tuple.
      size_t k = 0;
      while (n.left_key_index[k] != static_cast<int32_t>(j)) ++k;
      a.nullable = (n.join_kind == JoinKind::Full && a.nullable) ||
                   r[static_cast<size_t>(n.right_key_index[k])].nullable;
    }
  }
  n.schema = std::move(joined);
  return true;
}

}  // namespace ranc::ops::typing
