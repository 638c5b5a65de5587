// The tokenizer of the .ra language (docs/ra-language.md): turns source text into
// tokens with 1-based line and column (in bytes). Lexical mistakes become
// diagnostics and an Error token, so the parser can go on and report more.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ranc/data/error.h"

namespace ranc {

enum class TokKind : uint8_t {
  End,      // end of input
  Error,    // a lexical error (already reported)
  Ident,    // [A-Za-z_][A-Za-z0-9_]*; keywords are identifiers the parser recognizes
  Int,      // 123, 123L
  Float,    // 1.5, 1e9, 2.5f
  String,   // 'text' or "text"; text holds the unescaped bytes
  LParen,   // (
  RParen,   // )
  LBrace,   // {
  RBrace,   // }
  Comma,    // ,
  Semi,     // ;
  Pipe,     // |>
  Star,     // *
  Plus,     // +
  Minus,    // -
  Slash,    // /
  Percent,  // %
  Eq,       // =
  Ne,       // <> or !=
  Lt,       // <
  Le,       // <=
  Gt,       // >
  Ge,       // >=
};
std::string_view tok_kind_name(TokKind k);

struct Token {
  TokKind kind = TokKind::End;
  uint32_t line = 0, column = 0;
  uint32_t length = 0;  // bytes in the source
  uint32_t offset = 0;  // byte offset in the source
  std::string text;     // Ident: the name; String: the value; Int/Float: the digits
  bool first_on_line = false;
  // Int/Float: the parsed value and suffix ('L', 'f' or 0).
  char suffix = 0;
  uint64_t int_value = 0;  // Int (magnitude; range checked by the lexer)
  double float_value = 0;  // Float
};

// The longest identifier accepted (also enforced by is_valid_identifier).
inline constexpr size_t kMaxIdentifierLength = 128;

// Tokenizes the whole text. Appends one diagnostic per lexical error (with `file`)
// and stops adding diagnostics after `max_diagnostics`. The last token is End.
std::vector<Token> lex_ra(std::string_view text, const std::string& file,
                          std::vector<Diagnostic>& diagnostics, size_t max_diagnostics = 50);

}  // namespace ranc
