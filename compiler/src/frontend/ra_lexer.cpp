// The .ra tokenizer: one linear pass over the bytes, never failing; mistakes become
// diagnostics plus an Error token.
#include "ranc/frontend/ra_lexer.h"

#include <cfloat>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace ranc {

std::string_view tok_kind_name(TokKind k) {
  switch (k) {
    case TokKind::End:
      return "end of file";
    case TokKind::Error:
      return "invalid token";
    case TokKind::Ident:
      return "identifier";
    case TokKind::Int:
      return "integer";
    case TokKind::Float:
      return "number";
    case TokKind::String:
      return "string";
    case TokKind::LParen:
      return "'('";
    case TokKind::RParen:
      return "')'";
    case TokKind::LBrace:
      return "'{'";
    case TokKind::RBrace:
      return "'}'";
    case TokKind::Comma:
      return "','";
    case TokKind::Semi:
      return "';'";
    case TokKind::Pipe:
      return "'|>'";
    case TokKind::Star:
      return "'*'";
    case TokKind::Plus:
      return "'+'";
    case TokKind::Minus:
      return "'-'";
    case TokKind::Slash:
      return "'/'";
    case TokKind::Percent:
      return "'%'";
    case TokKind::Eq:
      return "'='";
    case TokKind::Ne:
      return "'<>'";
    case TokKind::Lt:
      return "'<'";
    case TokKind::Le:
      return "'<='";
    case TokKind::Gt:
      return "'>'";
    case TokKind::Ge:
      return "'>='";
  }
  return "token";
}

namespace {

bool is_ident_start(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(unsigned char c) {
  return c >= '0' && c <= '9';
}
bool is_ident_char(unsigned char c) {
  return is_ident_start(c) || is_digit(c);
}

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file, std::vector<Diagnostic>& diags,
        size_t max_diags)
      : s_(text), file_(file), diags_(diags), max_diags_(max_diags) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    uint32_t last_line = 0;
    for (;;) {
      skip_space_and_comments();
      Token t;
      t.line = line_;
      t.column = col_;
      t.offset = static_cast<uint32_t>(pos_);
      t.first_on_line = line_ != last_line;
      last_line = line_;
      if (pos_ >= s_.size()) {
        t.kind = TokKind::End;
        out.push_back(std::move(t));
        return out;
      }
      lex_one(t);
      t.length = static_cast<uint32_t>(pos_ - t.offset);
      out.push_back(std::move(t));
    }
  }

 private:
  unsigned char peek(size_t k = 0) const {
    return pos_ + k < s_.size() ? static_cast<unsigned char>(s_[pos_ + k]) : 0;
  }
  bool at_end(size_t k = 0) const { return pos_ + k >= s_.size(); }
  void advance() {
    if (s_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void error(uint32_t line, uint32_t col, std::string msg, std::string hint = {}) {
    if (diags_.size() >= max_diags_) return;
    diags_.push_back(Diagnostic{ErrorKind::Syntax, std::move(msg), SourceLoc{file_, line, col},
                                std::move(hint)});
  }

  void skip_space_and_comments() {
    while (!at_end()) {
      unsigned char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        advance();
      } else if (c == '-' && peek(1) == '-') {
        while (!at_end() && peek() != '\n') advance();
      } else if (c == '/' && peek(1) == '*') {
        uint32_t l = line_, col = col_;
        advance();
        advance();
        bool closed = false;
        while (!at_end()) {
          if (peek() == '*' && peek(1) == '/') {
            advance();
            advance();
            closed = true;
            break;
          }
          advance();
        }
        if (!closed) error(l, col, "unterminated block comment", "close it with '*/'");
      } else {
        return;
      }
    }
  }

  void lex_one(Token& t) {
    unsigned char c = peek();
    if (is_ident_start(c)) return lex_ident(t);
    if (is_digit(c)) return lex_number(t);
    if (c == '\'' || c == '"') return lex_string(t);
    advance();
    switch (c) {
      case '(':
        t.kind = TokKind::LParen;
        return;
      case ')':
        t.kind = TokKind::RParen;
        return;
      case '{':
        t.kind = TokKind::LBrace;
        return;
      case '}':
        t.kind = TokKind::RBrace;
        return;
      case ',':
        t.kind = TokKind::Comma;
        return;
      case ';':
        t.kind = TokKind::Semi;
        return;
      case '*':
        t.kind = TokKind::Star;
        return;
      case '+':
        t.kind = TokKind::Plus;
        return;
      case '-':
        t.kind = TokKind::Minus;
        return;
      case '/':
        t.kind = TokKind::Slash;
        return;
      case '%':
        t.kind = TokKind::Percent;
        return;
      case '|':
        if (peek() == '>') {
          advance();
          t.kind = TokKind::Pipe;
          return;
        }
        if (peek() == '|') {
          advance();
          return bad(t, "unexpected '||'", "the logical or is written 'or'");
        }
        return bad(t, "unexpected '|'", "pipeline steps are written '|>'");
      case '&':
        if (peek() == '&') advance();
        return bad(t, "unexpected '&'", "the logical and is written 'and'");
      case '=':
        if (peek() == '=') {
          advance();
          return bad(t, "unexpected '=='", "equality is written '='");
        }
        t.kind = TokKind::Eq;
        return;
      case '!':
        if (peek() == '=') {
          advance();
          t.kind = TokKind::Ne;
          return;
        }
        return bad(t, "unexpected '!'", "negation is written 'not'");
      case '<':
        if (peek() == '=') {
          advance();
          t.kind = TokKind::Le;
        } else if (peek() == '>') {
          advance();
          t.kind = TokKind::Ne;
        } else {
          t.kind = TokKind::Lt;
        }
        return;
      case '>':
        if (peek() == '=') {
          advance();
          t.kind = TokKind::Ge;
        } else {
          t.kind = TokKind::Gt;
        }
        return;
      case '.':
        return bad(t, "unexpected '.'",
                   is_digit(peek()) ? "write a leading zero: 0.5"
                                    : "attribute names are not qualified: write the name alone");
      default:
        break;
    }
    if (c >= 0x80) {
      // One diagnostic for a whole run of non-ASCII bytes (a UTF-8 character).
      while (!at_end() && peek() >= 0x80) advance();
      return bad(t, "unexpected non-ASCII character",
                 "names are ASCII letters, digits and '_'; other text belongs in a 'string'");
    }
    if (c >= 0x21 && c < 0x7f) return bad(t, fmt::format("unexpected character '{}'", char(c)));
    return bad(t, fmt::format("unexpected byte 0x{:02x}", c));
  }

  void bad(Token& t, std::string msg, std::string hint = {}) {
    t.kind = TokKind::Error;
    error(t.line, t.column, std::move(msg), std::move(hint));
  }

  void lex_ident(Token& t) {
    size_t start = pos_;
    while (!at_end() && is_ident_char(peek())) advance();
    size_t n = pos_ - start;
    if (n > kMaxIdentifierLength) {
      return bad(t, fmt::format("name is {} characters long; at most {} are allowed", n,
                                kMaxIdentifierLength));
    }
    t.kind = TokKind::Ident;
    t.text.assign(s_.substr(start, n));
  }

  void lex_number(Token& t) {
    size_t start = pos_;
    bool is_float = false;
    while (is_digit(peek())) advance();
    if (peek() == '.') {
      if (!is_digit(peek(1))) {
        advance();
        return bad(t, "expected a digit after the decimal point", "write 1.0, not 1.");
      }
      is_float = true;
      advance();
      while (is_digit(peek())) advance();
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (is_digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit(peek(2))))) {
      is_float = true;
      advance();
      if (peek() == '+' || peek() == '-') advance();
      while (is_digit(peek())) advance();
    }
    std::string_view digits = s_.substr(start, pos_ - start);
    t.text.assign(digits);
    // Suffix: L (i64) or f (f32); anything else glued to the number is an error.
    size_t suffix_start = pos_;
    while (is_ident_char(peek())) advance();
    std::string_view suffix = s_.substr(suffix_start, pos_ - suffix_start);
    if (suffix == "L" || suffix == "l") {
      if (is_float) return bad(t, "the suffix 'L' needs an integer literal", "write 2.5 or 2L");
      t.suffix = 'L';
    } else if (suffix == "f" || suffix == "F") {
      is_float = true;
      t.suffix = 'f';
    } else if (!suffix.empty()) {
      std::string shown(suffix.substr(0, 20));
      return bad(t, fmt::format("invalid suffix '{}' on a number", shown),
                 "number suffixes are L (i64) and f (f32); names cannot start with a digit");
    }
    if (is_float) {
      double v = 0;
      auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (r.ec != std::errc() || r.ptr != digits.data() + digits.size() || !std::isfinite(v) ||
          (t.suffix == 'f' && std::fabs(v) > FLT_MAX)) {
        return bad(t, fmt::format("number '{}' is out of range for {}", shorten(digits),
                                  t.suffix == 'f' ? "f32" : "f64"));
      }
      t.kind = TokKind::Float;
      t.float_value = v;
      return;
    }
    uint64_t v = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    // Up to 2^63 is accepted here so that -9223372036854775808 can be written; the
    // parser rejects 2^63 without a minus.
    if (r.ec != std::errc() || v > (uint64_t{1} << 63)) {
      return bad(t, fmt::format("integer '{}' is out of range for i64", shorten(digits)));
    }
    t.kind = TokKind::Int;
    t.int_value = v;
  }

  static std::string shorten(std::string_view s) {
    if (s.size() <= 40) return std::string(s);
    return std::string(s.substr(0, 37)) + "...";
  }

  void lex_string(Token& t) {
    unsigned char q = peek();
    advance();
    std::string value;
    for (;;) {
      if (at_end() || peek() == '\n' || peek() == '\r') {
        return bad(t, "unterminated string literal",
                   fmt::format("close it with {} on the same line; write {}{} for a quote inside",
                               char(q), char(q), char(q)));
      }
      unsigned char c = peek();
      advance();
      if (c == q) {
        if (peek() == q) {
          value.push_back(static_cast<char>(q));
          advance();
          continue;
        }
        break;
      }
      value.push_back(static_cast<char>(c));
    }
    t.kind = TokKind::String;
    t.text = std::move(value);
  }

  std::string_view s_;
  const std::string& file_;
  std::vector<Diagnostic>& diags_;
  size_t max_diags_;
  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
};

}  // namespace

std::vector<Token> lex_ra(std::string_view text, const std::string& file,
                          std::vector<Diagnostic>& diagnostics, size_t max_diagnostics) {
  return Lexer(text, file, diagnostics, max_diagnostics).run();
}

}  // namespace ranc
