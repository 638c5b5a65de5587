// The run's string dictionary (plan.h, "String handling"): merging the dictionaries
// of all bound inputs, recoding, and evaluating the plan's DictParams against the
// merged dictionary. Host-only, no GPU needed.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "ranc/data/host_relation.h"
#include "ranc/data/like.h"
#include "ranc/runtime/plan.h"

namespace ranc::rt {

// One order-preserving dictionary holding every string of every input dictionary.
std::shared_ptr<const Dictionary> merge_dictionaries(
    const std::vector<std::shared_ptr<const Dictionary>>& dicts);
// map[old code] = code of the same string in `to` (every string of `from` must be in `to`).
std::vector<int32_t> recode_map(const Dictionary& from, const Dictionary& to);
// `dict` (may be null) with the strings the plan's parameters produce added: every
// ValueCode text, and for each SubstringMap the substrings of every string (applied as
// often as there are SubstringMaps, so nested substrings are in it too). `dict` itself
// when nothing is missing.
std::shared_ptr<const Dictionary> extend_dictionary(std::shared_ptr<const Dictionary> dict,
                                                    const std::vector<DictParam>& params);
// A SubstringMap: for every code, the code of its string's substring (each must be in
// `dict`, as extend_dictionary makes it); at least one element.
std::vector<int32_t> substring_map(const Dictionary& dict, int64_t from, int64_t length);

// LIKE matching itself is ranc::like_match (ranc/data/like.h).

// The slot value of an EqCode, ValueCode, LowerBound, UpperBound or PrefixEnd parameter:
//   EqCode      code of text, or -1 when absent
//   ValueCode   code of text (InternalError when absent: extend_dictionary adds it)
//   LowerBound  first code whose string >= text
//   UpperBound  first code whose string > text
//   PrefixEnd   first code at or after LowerBound(text) whose string does not start
//               with text, so [LowerBound, PrefixEnd) are the strings with that prefix
int64_t eval_dict_slot(const DictParam& p, const Dictionary& dict);
// The LikeMask of a pattern: one byte per code (at least one byte), 1 = matches.
std::vector<uint8_t> like_mask(const Dictionary& dict, std::string_view pattern);

}  // namespace ranc::rt
