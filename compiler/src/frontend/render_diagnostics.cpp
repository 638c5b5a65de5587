// Compiler-style rendering of diagnostics: location, message, the source line with
// a caret under the offending token, and the hint.
#include <algorithm>

#include <fmt/format.h>

#include "ranc/frontend/ra_parser.h"

namespace ranc {

namespace {

// Control bytes (an escape sequence in a message must not reach a terminal).
std::string sanitize(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out.push_back(ch);
  }
  return out;
}

bool word_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

// Bytes covered by the token starting at `at` in the line: a name or number, a
// quoted string, a two-character operator, or one byte.
size_t token_length(std::string_view line, size_t at) {
  if (at >= line.size()) return 1;
  auto c = static_cast<unsigned char>(line[at]);
  size_t end = at + 1;
  if (word_char(c)) {
    while (end < line.size() && word_char(static_cast<unsigned char>(line[end]))) ++end;
  } else if (c == '\'' || c == '"') {
    while (end < line.size() && line[end] != line[at]) ++end;
    if (end < line.size()) ++end;
  } else if (end < line.size()) {
    std::string_view two = line.substr(at, 2);
    if (two == "|>" || two == "<=" || two == ">=" || two == "<>" || two == "!=" || two == "==" ||
        two == "--" || two == "/*")
      ++end;
  }
  return end - at;
}

}  // namespace

std::string render_diagnostic(const Diagnostic& d, std::string_view source) {
  std::string out;
  if (d.loc.known() || !d.loc.file.empty()) out += sanitize(d.loc.str()) + ": ";
  out += "error: " + sanitize(d.message) + "\n";
  if (d.loc.known()) {
    // Find the line (1-based) in the source.
    size_t start = 0;
    uint32_t line = 1;
    while (line < d.loc.line) {
      size_t nl = source.find('\n', start);
      if (nl == std::string_view::npos) {
        start = std::string_view::npos;
        break;
      }
      start = nl + 1;
      ++line;
    }
    if (start != std::string_view::npos && start <= source.size()) {
      size_t end = source.find('\n', start);
      std::string_view text =
          source.substr(start, end == std::string_view::npos ? end : end - start);
      if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
      size_t col = d.loc.column == 0 ? 0 : d.loc.column - 1;
      col = std::min(col, text.size());
      // Show a window around the column of a very long line.
      constexpr size_t kHalf = 80;
      size_t from = col > kHalf ? col - kHalf : 0;
      size_t to = std::min(text.size(), col + kHalf);
      std::string shown = from > 0 ? "..." : "";
      size_t prefix = shown.size();
      std::string pad(prefix, ' ');
      for (size_t i = from; i < to; ++i) {
        auto c = static_cast<unsigned char>(text[i]);
        char shown_c = c == '\t' ? '\t' : (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
        shown.push_back(shown_c);
        // UTF-8 continuation bytes take no column on screen.
        if (i < col && (c & 0xC0) != 0x80) pad.push_back(c == '\t' ? '\t' : ' ');
      }
      if (to < text.size()) shown += "...";
      size_t len = std::min<size_t>(token_length(text, col), to > col ? to - col : 1);
      out += "  " + shown + "\n";
      out += "  " + pad + "^" + std::string(len > 1 ? len - 1 : 0, '~') + "\n";
    }
  }
  if (!d.hint.empty()) out += "  hint: " + sanitize(d.hint) + "\n";
  return out;
}

std::string render_diagnostics(const UserError& e, std::string_view source) {
  std::string out;
  for (const Diagnostic& d : e.diagnostics()) out += render_diagnostic(d, source);
  size_t n = e.diagnostics().size();
  if (n > 1) out += fmt::format("{} errors\n", n);
  return out;
}

}  // namespace ranc
