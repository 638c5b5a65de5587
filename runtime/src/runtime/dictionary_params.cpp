// Dictionary merging, recoding and DictParam evaluation.
#include "ranc/runtime/dictionary_params.h"

#include <algorithm>

#include "ranc/data/error.h"
#include "ranc/data/like.h"

namespace ranc::rt {

std::shared_ptr<const Dictionary> merge_dictionaries(
    const std::vector<std::shared_ptr<const Dictionary>>& dicts_in) {
  // One dictionary shared by every string column needs no merge (and no recoding).
  std::vector<std::shared_ptr<const Dictionary>> dicts;
  for (const auto& d : dicts_in)
    if (d && std::find(dicts.begin(), dicts.end(), d) == dicts.end()) dicts.push_back(d);
  if (dicts.size() == 1) return dicts[0];
  std::vector<std::string> all;
  size_t total = 0;
  for (const auto& d : dicts)
    if (d) total += d->size();
  all.reserve(total);
  for (const auto& d : dicts)
    if (d) all.insert(all.end(), d->strings().begin(), d->strings().end());
  return Dictionary::from_strings(std::move(all));
}

std::shared_ptr<const Dictionary> extend_dictionary(std::shared_ptr<const Dictionary> dict,
                                                    const std::vector<DictParam>& params) {
  std::vector<std::string> extra;
  size_t substring_maps = 0;
  for (const DictParam& p : params) {
    if (p.kind == DictParam::Kind::ValueCode && (!dict || !dict->find(p.text))) extra.push_back(p.text);
    if (p.kind == DictParam::Kind::SubstringMap) ++substring_maps;
  }
  if (extra.empty() && substring_maps == 0) return dict;
  auto current = [&] {
    std::vector<std::string> all = dict ? dict->strings() : std::vector<std::string>{};
    all.insert(all.end(), extra.begin(), extra.end());
    return Dictionary::from_strings(std::move(all));
  };
  std::shared_ptr<const Dictionary> d = current();
  for (size_t round = 0; round < substring_maps; ++round) {
    std::vector<std::string> all = d->strings();
    const size_t before = all.size();
    for (const DictParam& p : params) {
      if (p.kind != DictParam::Kind::SubstringMap) continue;
      for (size_t i = 0; i < before; ++i) all.push_back(utf8_substring(all[i], p.from, p.length));
    }
    auto next = Dictionary::from_strings(std::move(all));
    if (next->size() == d->size()) break;  // closed under the maps
    d = std::move(next);
  }
  return d;
}

std::vector<int32_t> substring_map(const Dictionary& dict, int64_t from, int64_t length) {
  std::vector<int32_t> map(std::max<size_t>(dict.size(), 1), 0);
  for (size_t i = 0; i < dict.size(); ++i) {
    auto c = dict.find(utf8_substring(dict.strings()[i], from, length));
    // Substrings of strings added by the last round of extend_dictionary may be missing:
    // only deeper nesting than the plan has would read them.
    map[i] = c ? *c : 0;
  }
  return map;
}

std::vector<int32_t> recode_map(const Dictionary& from, const Dictionary& to) {
  std::vector<int32_t> map(from.size());
  // Both are sorted: one merge-like walk.
  const auto& a = from.strings();
  const auto& b = to.strings();
  size_t j = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    while (j < b.size() && b[j] < a[i]) ++j;
    internal_check(j < b.size() && b[j] == a[i], "recode_map: string missing from target");
    map[i] = static_cast<int32_t>(j);
  }
  return map;
}

int64_t eval_dict_slot(const DictParam& p, const Dictionary& dict) {
  const auto& s = dict.strings();
  switch (p.kind) {
    case DictParam::Kind::EqCode: {
      auto c = dict.find(p.text);
      return c ? *c : -1;
    }
    case DictParam::Kind::ValueCode: {
      auto c = dict.find(p.text);
      internal_check(c.has_value(), "a ValueCode string is not in the run's dictionary");
      return *c;
    }
    case DictParam::Kind::LowerBound:
      return std::lower_bound(s.begin(), s.end(), p.text) - s.begin();
    case DictParam::Kind::UpperBound:
      return std::upper_bound(s.begin(), s.end(), p.text) - s.begin();
    case DictParam::Kind::PrefixEnd: {
      auto lo = std::lower_bound(s.begin(), s.end(), p.text);
      auto end = std::partition_point(lo, s.end(),
                                      [&](const std::string& x) { return x.starts_with(p.text); });
      return end - s.begin();
    }
    case DictParam::Kind::LikeMask:
    case DictParam::Kind::SubstringMap:
      break;
  }
  throw InternalError("eval_dict_slot on a buffer parameter");
}

std::vector<uint8_t> like_mask(const Dictionary& dict, std::string_view pattern) {
  std::vector<uint8_t> mask(std::max<size_t>(dict.size(), 1), 0);
  for (size_t i = 0; i < dict.size(); ++i) mask[i] = like_match(dict.strings()[i], pattern) ? 1 : 0;
  return mask;
}

}  // namespace ranc::rt
