#include "ranc/codegen/kernel_text.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ranc::codegen {
namespace {

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

// b<digits> or s<digits>: a KernelParams buffer or slot parameter.
bool is_param(std::string_view t) {
  if (t.size() < 2 || (t[0] != 'b' && t[0] != 's')) return false;
  for (size_t i = 1; i < t.size(); ++i)
    if (t[i] < '0' || t[i] > '9') return false;
  return true;
}

struct Token {
  enum Kind { Ident, Other } kind;
  std::string_view text;
  // tokenize() turns every run of white space into one " " or "\n" token.
  bool space() const { return text == " " || text == "\n"; }
};

// Identifiers, and everything else verbatim (numbers with their suffixes, string and
// character literals, punctuation) but white space, whose runs become one space or one line
// break; lines that start with "//" (after a line break) are dropped.
std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  bool line_start = true;
  while (i < s.size()) {
    const char c = s[i];
    if (line_start && s.compare(i, 2, "//") == 0) {
      const size_t nl = s.find('\n', i);
      i = nl == std::string_view::npos ? s.size() : nl + 1;
      continue;
    }
    line_start = false;
    size_t j = i + 1;
    Token::Kind kind = Token::Other;
    if (ident_start(c)) {
      while (j < s.size() && ident_char(s[j])) ++j;
      kind = Token::Ident;
    } else if (c >= '0' && c <= '9') {
      while (j < s.size() && (ident_char(s[j]) || s[j] == '.')) ++j;
    } else if (c == '"' || c == '\'') {
      while (j < s.size() && s[j] != c) j += s[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, s.size());
    } else if (c == ' ' || c == '\t' || c == '\n') {
      // A run of white space: one "\n" if it holds a line break (a preprocessor line
      // stays a line), else one " ".
      j = i;
      bool newline = false;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n')) newline |= s[j++] == '\n';
      line_start = newline;
      out.push_back(Token{Token::Other, newline ? std::string_view("\n") : std::string_view(" ")});
      i = j;
      continue;
    }
    out.push_back(Token{kind, s.substr(i, j - i)});
    i = j;
  }
  return out;
}

}  // namespace

std::string canonical_kernel_text(std::string_view block, std::string_view kernel) {
  const std::vector<Token> tokens = tokenize(block);
  // The names the block defines: the kernel, and every struct (after `struct` and an
  // optional alignas(...)).
  std::unordered_set<std::string_view> defined{kernel};
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].kind != Token::Ident || tokens[i].text != "struct") continue;
    size_t j = i + 1;
    auto skip_space = [&] {
      while (j < tokens.size() && tokens[j].space()) ++j;
    };
    skip_space();
    if (j < tokens.size() && tokens[j].text == "alignas") {
      int depth = 0;
      for (++j; j < tokens.size(); ++j) {
        if (tokens[j].text == "(") ++depth;
        if (tokens[j].text == ")" && --depth == 0) {
          ++j;
          break;
        }
      }
      skip_space();
    }
    if (j < tokens.size() && tokens[j].kind == Token::Ident) defined.insert(tokens[j].text);
  }
  // And every function the block defines (a view's or a functor's member functions, as
  // `__device__ __forceinline__ type name(`): the last identifier before the "(".
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].kind != Token::Ident || tokens[i].text != "__forceinline__") continue;
    std::string_view last;
    for (size_t j = i + 1; j < tokens.size() && tokens[j].text != "(" && tokens[j].text != ";" &&
                           tokens[j].text != "{";
         ++j)
      if (tokens[j].kind == Token::Ident) last = tokens[j].text;
    if (!last.empty() && last != "operator") defined.insert(last);
  }
  std::unordered_map<std::string_view, std::string> renamed;
  int names = 0, params = 0;
  std::string out;
  out.reserve(block.size());
  bool space = true;  // the output ends in white space (or is empty)
  for (const Token& t : tokens) {
    // White space runs that met across a dropped comment line become one.
    if (t.space()) {
      if (space) {
        if (t.text == "\n" && !out.empty() && out.back() == ' ') out.back() = '\n';
        continue;
      }
      space = true;
      out += t.text;
      continue;
    }
    space = false;
    if (t.kind == Token::Ident && (defined.count(t.text) || is_param(t.text))) {
      auto it = renamed.find(t.text);
      if (it == renamed.end())
        it = renamed
                 .emplace(t.text, defined.count(t.text) ? fmt::format("D{}", names++)
                                                        : fmt::format("P{}", params++))
                 .first;
      out += it->second;
    } else {
      out += t.text;
    }
  }
  return out;
}

}  // namespace ranc::codegen
