// String functions shared by the reference executor and the runtime (which evaluates
// them once per dictionary string): SQL LIKE matching and SUBSTRING.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ranc {

// LIKE without escapes: '%' matches any sequence (also empty), '_' exactly one
// character (one UTF-8 code point); every other byte matches itself.
// O(|text| * |pattern|): backtracks only to the last '%'.
bool like_match(std::string_view text, std::string_view pattern);

// SQL's SUBSTRING(text FROM from FOR length) on characters (UTF-8 code points): the
// characters at positions max(from, 1) .. from + length - 1, counting from 1 (so a start
// before 1 shortens the result, as in SQL). length >= 0.
std::string utf8_substring(std::string_view text, int64_t from, int64_t length);

}  // namespace ranc
