// SQL LIKE matching, shared by the reference executor and the runtime (which
// evaluates patterns once per dictionary string).
#pragma once

#include <string_view>

namespace ranc {

// LIKE without escapes: '%' matches any sequence (also empty), '_' exactly one
// character (one UTF-8 code point); every other byte matches itself.
// O(|text| * |pattern|): backtracks only to the last '%'.
bool like_match(std::string_view text, std::string_view pattern);

}  // namespace ranc
