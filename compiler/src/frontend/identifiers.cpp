// Validated identifiers and escaped string literals: the injection barrier between
// user text and generated CUDA source.
#include "ranc/frontend/identifiers.h"

#include "ranc/data/error.h"
#include "ranc/frontend/ra_lexer.h"

namespace ranc {

namespace {
bool ident_start(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool ident_char(unsigned char c) {
  return ident_start(c) || (c >= '0' && c <= '9');
}
}  // namespace

bool is_valid_identifier(std::string_view name) {
  if (name.empty() || name.size() > kMaxIdentifierLength) return false;
  if (!ident_start(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!ident_char(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string cuda_string_literal(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() + 2);
  out.push_back('"');
  for (char ch : bytes) {
    auto c = static_cast<unsigned char>(ch);
    bool plain = ident_char(c) || c == ' ' || c == '.' || c == ',' || c == ':' || c == '-';
    if (plain) {
      out.push_back(static_cast<char>(c));
    } else {
      // Always three octal digits: an octal escape ends after at most three, so a
      // following digit is never absorbed (unlike \x, which is greedy).
      out.push_back('\\');
      out.push_back(static_cast<char>('0' + ((c >> 6) & 7)));
      out.push_back(static_cast<char>('0' + ((c >> 3) & 7)));
      out.push_back(static_cast<char>('0' + (c & 7)));
    }
  }
  out.push_back('"');
  return out;
}

std::string mangle_identifier(std::string_view prefix, std::string_view name) {
  for (char c : prefix)
    internal_check(ident_char(static_cast<unsigned char>(c)),
                   "mangle_identifier: prefix is not made of [A-Za-z0-9_]");
  internal_check(prefix.empty() || ident_start(static_cast<unsigned char>(prefix[0])),
                 "mangle_identifier: prefix starts with a digit");
  internal_check(is_valid_identifier(name), "mangle_identifier: name is not a valid identifier");
  std::string out(prefix);
  out += name;
  return out;
}

}  // namespace ranc
