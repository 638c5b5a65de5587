// Reference semantics of join (inner, semi, anti, left/right/full outer): equality of the
// key attributes under the total order (floats match only when bit-identical; a NULL key
// matches nothing unless the node's keys are null-safe), every matching pair (duplicates
// on both sides multiply). The residual predicate sees the inner join's output tuple: left
// attributes then the right's non-key attributes, and a pair matches only where it is
// true. semi keeps a left tuple when at least one right match satisfies the residual,
// anti when none does; both keep left tuples once each, in left order. Inner output
// order: left order, and for each left tuple its matches in right input order; a left
// outer join puts an unmatched left tuple (padded with NULLs) where its matches would be,
// and right and full outer joins add the unmatched right tuples at the end, in right
// order, their key attributes holding the right's keys.
#include <algorithm>

#include "../reference_internal.h"
#include "ranc/ra_ops/ra_ops.h"

namespace ranc::ops::ref {

HostRelation eval_join(const Node& n, const Inputs& in) {
  const HostRelation& l = *in[0];
  const HostRelation& r = *in[1];
  const size_t nk = n.left_key_index.size();
  internal_check(nk > 0 && nk == n.right_key_index.size(), "join: key indices");

  std::vector<size_t> lcols, rcols;
  for (size_t k = 0; k < nk; ++k) {
    lcols.push_back(static_cast<size_t>(n.left_key_index[k]));
    rcols.push_back(static_cast<size_t>(n.right_key_index[k]));
  }
  Keys lk, rk;
  norm_keys_pair(l, lcols, r, rcols, lk, rk);
  // Sort both sides by key (stable: equal keys stay in input order) and merge, to
  // find each left row's range of matches in the sorted right rows.
  const Rows sorted = sort_rows(rk, r.num_rows());
  const Rows lsorted = sort_rows(lk, l.num_rows());
  // Keys in sorted order, so that the merge reads them sequentially.
  auto in_order = [](const Keys& k, const Rows& order) {
    Keys out(k.size());
    for (size_t c = 0; c < k.size(); ++c) {
      out[c].reserve(order.size());
      for (size_t i : order) out[c].push_back(k[c][i]);
    }
    return out;
  };
  const Keys lks = in_order(lk, lsorted), rks = in_order(rk, sorted);
  std::vector<size_t> match_begin(l.num_rows()), match_end(l.num_rows());
  for (size_t p = 0, q = 0; p < lsorted.size();) {
    while (q < sorted.size() && compare_keys(rks, q, lks, p) < 0) ++q;
    size_t q_end = q;
    while (q_end < sorted.size() && compare_keys(rks, q_end, lks, p) == 0) ++q_end;
    const size_t group = p;
    for (; p < lsorted.size() && compare_keys(lks, p, lks, group) == 0; ++p) {
      match_begin[lsorted[p]] = q;
      match_end[lsorted[p]] = q_end;
    }
    q = q_end;
  }

  // The right's non-key attributes, in order: the inner output's tail.
  std::vector<size_t> right_rest;
  for (size_t c = 0; c < r.num_columns(); ++c)
    if (std::find(n.right_key_index.begin(), n.right_key_index.end(), static_cast<int32_t>(c)) ==
        n.right_key_index.end())
      right_rest.push_back(c);

  // The residual reads a row of the inner output schema.
  const ExprNode* residual = n.predicate.valid() ? n.predicate.ptr().get() : nullptr;
  std::vector<size_t> used;
  std::vector<Value> row(l.num_columns() + right_rest.size());
  if (residual) used = attrs_read(*residual);
  auto passes = [&](size_t i, size_t j) {
    if (!residual) return true;
    for (size_t p : used) {
      row[p] = p < l.num_columns() ? l.column(p).get(i)
                                   : r.column(right_rest[p - l.num_columns()]).get(j);
    }
    Value v = eval_expr(*residual, row);
    return !v.is_null() && v.as_bool();  // a NULL residual is not a match
  };

  // Inner pairs, then the padded tuples of outer joins: kNone marks the missing side.
  constexpr size_t kNone = static_cast<size_t>(-1);
  const bool keep_left = n.join_kind == JoinKind::Left || n.join_kind == JoinKind::Full;
  const bool keep_right = n.join_kind == JoinKind::Right || n.join_kind == JoinKind::Full;
  const bool pairs = n.join_kind != JoinKind::Semi && n.join_kind != JoinKind::Anti;
  std::vector<uint8_t> right_matched(keep_right ? r.num_rows() : 0, 0);
  Rows li, ri;
  try {
    for (size_t i = 0; i < l.num_rows(); ++i) {
      // A NULL key matches nothing (unless the keys are null-safe).
      const bool null_key = !n.null_safe_keys && any_null(l, lcols, i);
      // Matches in right input order (the stable sort kept it within the range).
      bool any = false;
      for (size_t q = match_begin[i]; q < match_end[i] && !null_key; ++q) {
        if (!passes(i, sorted[q])) continue;
        any = true;
        if (!pairs) break;
        li.push_back(i);
        ri.push_back(sorted[q]);
        if (keep_right) right_matched[sorted[q]] = 1;
      }
      if ((n.join_kind == JoinKind::Semi && any) || (n.join_kind == JoinKind::Anti && !any))
        li.push_back(i);
      if (keep_left && !any) {
        li.push_back(i);
        ri.push_back(kNone);
      }
    }
  } catch (const UserError& e) {
    rethrow_in_node(e, n);
  }
  for (size_t j = 0; j < right_matched.size(); ++j)
    if (!right_matched[j]) {
      li.push_back(kNone);
      ri.push_back(j);
    }

  if (!pairs) return gather(l, li, n.schema);
  internal_check(n.schema.size() == l.num_columns() + right_rest.size(), "join: schema arity");
  // Column c of `from` at rows (NULL where a row is kNone).
  auto padded = [&](const Column& c, const Rows& rows) {
    bool missing = std::find(rows.begin(), rows.end(), kNone) != rows.end();
    if (!missing) return gather_column(c, rows);
    Column out(c.type(), true);
    out.reserve(rows.size());
    for (size_t x : rows) out.append(x == kNone ? Value::null(c.type()) : c.get(x));
    return out;
  };
  HostRelation out(n.schema);
  for (size_t c = 0; c < l.num_columns(); ++c) {
    auto key = std::find(n.left_key_index.begin(), n.left_key_index.end(), static_cast<int32_t>(c));
    if (key == n.left_key_index.end() || !keep_right) {
      put_column(out, c, padded(l.column(c), li));
      continue;
    }
    // A key attribute: the left's key, or the right's where the left is missing.
    const Column& rc = r.column(static_cast<size_t>(n.right_key_index[key - n.left_key_index.begin()]));
    Column col(l.column(c).type(), true);
    col.reserve(li.size());
    for (size_t k = 0; k < li.size(); ++k)
      col.append(li[k] != kNone ? l.column(c).get(li[k]) : rc.get(ri[k]));
    put_column(out, c, std::move(col));
  }
  for (size_t k = 0; k < right_rest.size(); ++k)
    put_column(out, l.num_columns() + k, padded(r.column(right_rest[k]), ri));
  return out;
}

}  // namespace ranc::ops::ref
