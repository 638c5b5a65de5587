// UniqueKeys (see ranc/passes/unique_keys.h).
#include "ranc/passes/unique_keys.h"

#include <algorithm>

namespace ranc::passes {
namespace {

KeySet sorted_unique(KeySet s) {
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

bool subset(const KeySet& a, const std::vector<int32_t>& of) {
  for (int32_t x : a)
    if (std::find(of.begin(), of.end(), x) == of.end()) return false;
  return true;
}

// Keeps the smallest kMaxSets sets, dropping duplicates and supersets of another set.
std::vector<KeySet> normalised(std::vector<KeySet> sets) {
  for (KeySet& s : sets) s = sorted_unique(std::move(s));
  std::sort(sets.begin(), sets.end(), [](const KeySet& a, const KeySet& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  std::vector<KeySet> out;
  for (const KeySet& s : sets) {
    bool implied = false;
    for (const KeySet& o : out) implied = implied || subset(o, s);
    if (!implied) out.push_back(s);
    if (out.size() == UniqueKeys::kMaxSets) break;
  }
  return out;
}

// The first n attribute positions: a declared key, a reduce's group keys, a whole tuple.
KeySet first(size_t n) {
  KeySet k(n);
  for (size_t i = 0; i < n; ++i) k[i] = static_cast<int32_t>(i);
  return k;
}

}  // namespace

const std::vector<KeySet>& UniqueKeys::of(NodeId id) {
  auto it = memo_.find(id);
  if (it != memo_.end()) return it->second;
  std::vector<KeySet> sets = normalised(compute(program_.node(id)));
  return memo_.emplace(id, std::move(sets)).first->second;
}

bool UniqueKeys::within(NodeId id, const std::vector<int32_t>& attrs) {
  for (const KeySet& k : of(id))
    if (subset(k, attrs)) return true;
  return false;
}

std::vector<KeySet> UniqueKeys::compute(const Node& n) {
  auto in = [&](size_t k) -> const std::vector<KeySet>& { return of(n.inputs.at(k)); };
  switch (n.kind) {
    case OpKind::Input:
      if (n.schema.key_size == 0) return {};
      return {first(n.schema.key_size)};
    case OpKind::Select:
    case OpKind::Sort:
    case OpKind::Limit:
    case OpKind::Output:
    case OpKind::Intersect:
    case OpKind::Difference:
      return in(0);
    case OpKind::Distinct: {
      std::vector<KeySet> s = in(0);
      s.push_back(first(n.schema.size()));
      return s;
    }
    case OpKind::Union:
    case OpKind::Fixpoint:
      return {first(n.schema.size())};
    case OpKind::Project: {
      // Output position of each input attribute passed through (the first one).
      std::map<int32_t, int32_t> pos;
      for (size_t j = 0; j < n.exprs.size(); ++j) {
        const ExprNode* e = n.exprs[j].expr.ptr().get();
        if (e && e->kind == ExprKind::Attr && !pos.count(e->attr_index))
          pos[e->attr_index] = static_cast<int32_t>(j);
      }
      std::vector<KeySet> out;
      for (const KeySet& k : in(0)) {
        KeySet m;
        bool kept = true;
        for (int32_t a : k) {
          auto it = pos.find(a);
          if (it == pos.end()) {
            kept = false;
            break;
          }
          m.push_back(it->second);
        }
        if (kept) out.push_back(std::move(m));
      }
      return out;
    }
    case OpKind::Reduce:
      return {first(n.group_key_index.size())};
    case OpKind::Join: {
      if (n.join_kind == JoinKind::Semi || n.join_kind == JoinKind::Anti) return in(0);
      if (n.join_kind != JoinKind::Inner) return {};  // outer joins are lowered before planning
      const std::vector<KeySet>& ls = in(0);
      const std::vector<KeySet>& rs = in(1);
      const int32_t nl = static_cast<int32_t>(program_.node(n.inputs.at(0)).schema.size());
      const int32_t nr = static_cast<int32_t>(program_.node(n.inputs.at(1)).schema.size());
      // Output position of right attribute j: a key reads as the left key it equals.
      std::vector<int32_t> rpos(static_cast<size_t>(nr), -1);
      int32_t next = nl;
      for (int32_t j = 0; j < nr; ++j) {
        auto k = std::find(n.right_key_index.begin(), n.right_key_index.end(), j);
        rpos[static_cast<size_t>(j)] =
            k != n.right_key_index.end()
                ? n.left_key_index.at(static_cast<size_t>(k - n.right_key_index.begin()))
                : next++;
      }
      auto mapped = [&](const KeySet& k) {
        KeySet m;
        for (int32_t a : k) m.push_back(rpos.at(static_cast<size_t>(a)));
        return m;
      };
      std::vector<KeySet> out;
      bool right_unique = false, left_unique = false;
      for (const KeySet& k : rs) right_unique = right_unique || subset(k, n.right_key_index);
      for (const KeySet& k : ls) left_unique = left_unique || subset(k, n.left_key_index);
      if (right_unique) out.insert(out.end(), ls.begin(), ls.end());
      if (left_unique)
        for (const KeySet& k : rs) out.push_back(mapped(k));
      for (const KeySet& a : ls)
        for (const KeySet& b : rs) {
          KeySet m = mapped(b);
          m.insert(m.end(), a.begin(), a.end());
          out.push_back(std::move(m));
        }
      return out;
    }
    case OpKind::Product: {
      const int32_t nl = static_cast<int32_t>(program_.node(n.inputs.at(0)).schema.size());
      std::vector<KeySet> out;
      for (const KeySet& a : in(0))
        for (const KeySet& b : in(1)) {
          KeySet m = a;
          for (int32_t x : b) m.push_back(nl + x);
          out.push_back(std::move(m));
        }
      return out;
    }
    case OpKind::UnionAll:
    case OpKind::Scalar:
      return {};
  }
  return {};
}

}  // namespace ranc::passes
