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
