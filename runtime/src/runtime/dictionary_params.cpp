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
      break;
  }
  throw InternalError("eval_dict_slot on a LikeMask parameter");
}

std::vector<uint8_t> like_mask(const Dictionary& dict, std::string_view pattern) {
  std::vector<uint8_t> mask(std::max<size_t>(dict.size(), 1), 0);
  for (size_t i = 0; i < dict.size(); ++i) mask[i] = like_match(dict.strings()[i], pattern) ? 1 : 0;
  return mask;
}

}  // namespace ranc::rt
