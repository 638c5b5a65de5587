// SQL LIKE matching.
#include "ranc/data/like.h"

#include <cstdint>

namespace ranc {
namespace {

// Length of the UTF-8 sequence starting at s[i] (1 for ASCII and malformed bytes).
size_t char_len(std::string_view s, size_t i) {
  size_t n = 1;
  while (i + n < s.size() && (static_cast<uint8_t>(s[i + n]) & 0xC0) == 0x80) ++n;
  return n;
}

}  // namespace

std::string utf8_substring(std::string_view text, int64_t from, int64_t length) {
  // Positions [from, from + length) of the 1-based characters, clamped to [1, ...).
  const int64_t end = length > INT64_MAX - from ? INT64_MAX : from + length;
  size_t i = 0, begin_byte = text.size(), end_byte = text.size();
  for (int64_t pos = 1;; ++pos) {
    if (pos == from || (pos == 1 && from < 1)) begin_byte = i;
    if (pos == end) {
      end_byte = i;
      break;
    }
    if (i >= text.size()) break;
    i += char_len(text, i);
  }
  if (end <= 1 || begin_byte >= end_byte) return {};
  return std::string(text.substr(begin_byte, end_byte - begin_byte));
}

bool like_match(std::string_view text, std::string_view pattern) {
  size_t t = 0, p = 0;
  size_t star_p = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '%') {
      star_p = p++;
      star_t = t;
    } else if (p < pattern.size() && pattern[p] == '_') {
      ++p;
      t += char_len(text, t);
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star_p != std::string_view::npos) {
      // Let the last '%' swallow one more character and retry from there.
      p = star_p + 1;
      star_t += char_len(text, star_t);
      t = star_t;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

}  // namespace ranc
