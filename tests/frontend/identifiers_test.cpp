// The injection barrier: names from a .ra file are validated identifiers, and any
// bytes escaped by cuda_string_literal read back as exactly those bytes when the
// literal is parsed as C (checked by an independent unescaper below).
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "ranc/data/error.h"
#include "ranc/frontend/identifiers.h"
#include "ranc/frontend/ra_parser.h"

namespace ranc {
namespace {

// Decodes a C string literal the way a C compiler does (only the escapes that C
// defines); fails the test on anything that would not be one plain literal.
std::string c_unescape(const std::string& lit) {
  EXPECT_GE(lit.size(), 2u);
  EXPECT_EQ(lit.front(), '"');
  EXPECT_EQ(lit.back(), '"');
  std::string out;
  for (size_t i = 1; i + 1 < lit.size(); ++i) {
    char c = lit[i];
    EXPECT_NE(c, '"') << "unescaped quote at " << i;
    EXPECT_NE(c, '\n') << "raw newline at " << i;
    EXPECT_NE(c, '?') << "possible trigraph at " << i;
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    ++i;
    EXPECT_LT(i + 1, lit.size()) << "dangling backslash";
    char e = lit[i];
    if (e >= '0' && e <= '7') {
      // Up to three octal digits, as C reads them (greedy).
      int v = 0, n = 0;
      while (n < 3 && i + 1 < lit.size() && lit[i] >= '0' && lit[i] <= '7') {
        v = v * 8 + (lit[i] - '0');
        ++i;
        ++n;
      }
      --i;
      out.push_back(static_cast<char>(v));
    } else if (e == 'x') {
      ADD_FAILURE() << "hex escapes are greedy; not expected";
    } else {
      switch (e) {
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '"':
          out.push_back('"');
          break;
        case '\'':
          out.push_back('\'');
          break;
        default:
          ADD_FAILURE() << "unknown escape \\" << e;
      }
    }
  }
  return out;
}

TEST(Identifiers, Validity) {
  EXPECT_TRUE(is_valid_identifier("l_orderkey"));
  EXPECT_TRUE(is_valid_identifier("_x9"));
  EXPECT_TRUE(is_valid_identifier(std::string(128, 'a')));
  EXPECT_FALSE(is_valid_identifier(std::string(129, 'a')));
  EXPECT_FALSE(is_valid_identifier(""));
  EXPECT_FALSE(is_valid_identifier("9a"));
  EXPECT_FALSE(is_valid_identifier("a b"));
  EXPECT_FALSE(is_valid_identifier("a*/"));
  EXPECT_FALSE(is_valid_identifier("a\"b"));
  EXPECT_FALSE(is_valid_identifier("x\ny"));
  EXPECT_FALSE(is_valid_identifier(std::string_view("a\0b", 3)));
  EXPECT_FALSE(is_valid_identifier("caf\xc3\xa9"));
  EXPECT_EQ(mangle_identifier("a_", "x"), "a_x");
  EXPECT_THROW(mangle_identifier("a_", "x;y"), InternalError);
  EXPECT_THROW(mangle_identifier("a-", "x"), InternalError);
  EXPECT_THROW(mangle_identifier("1", "x"), InternalError);
}

TEST(Identifiers, HostileStringsRoundTrip) {
  const std::vector<std::string> hostile = {
      "",
      "plain text 123",
      "*/ int x; /*",
      "\"); system(\"rm -rf /\"); //",
      "back\\slash\\",
      "new\nline\r\n",
      "#include <stdio.h>",
      "??=define trigraph ??/",
      std::string("nul\0byte", 8),
      "\x01\x7f\x80\xff",
      "\\x41BC",  // hex continuation bait
      "\1"
      "23",  // octal continuation bait: byte 1 then digits
      "caf\xc3\xa9 \xe2\x82\xac",
      "'single' `back` $dollar @at",
  };
  for (const std::string& s : hostile) {
    std::string lit = cuda_string_literal(s);
    for (char c : lit.substr(1, lit.size() - 2)) {
      auto u = static_cast<unsigned char>(c);
      EXPECT_TRUE(u >= 0x20 && u < 0x7f) << "non-printable byte in literal";
    }
    EXPECT_EQ(c_unescape(lit), s) << lit;
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string s(rng() % 40, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 256);
    EXPECT_EQ(c_unescape(cuda_string_literal(s)), s);
  }
}

// Hostile names are rejected by the parser; hostile string literals are accepted as
// values and reach code generation only through cuda_string_literal.
TEST(Identifiers, ParserRejectsHostileNames) {
  const std::vector<std::string> programs = {
      "input r(a i32);\nq = r |> project a as \"x*/\";\noutput q;",
      "input r(a i32);\nq = r |> project a as x/**/y;\noutput q;",
      "input r\"); system(\"rm -rf /\"); //(a i32);",
      "input r(a i32);\n#include <stdio.h>\noutput r;",
      "input r(a\\ i32);\noutput r;",
      "input r(a i32);\noutput r as `evil`;",
      "input r(caf\xc3\xa9 i32);\noutput r;",
      "input r(a i32);\noutput r as " + std::string(200, 'n') + ";",
  };
  for (const std::string& p : programs) {
    try {
      parse_ra(p, "evil.ra");
      ADD_FAILURE() << "accepted: " << p;
    } catch (const UserError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Syntax) << e.what();
    }
  }
}

TEST(Identifiers, HostileLiteralsAreEscaped) {
  std::string text =
      "input r(s string);\n"
      "q = r |> select s = '\"); system(\"rm -rf /\"); //' or s like '*/%' or "
      "starts_with(s, '#include <x>\\') or s = 'it''s';\n"
      "output q as out_1;\n";
  ParsedProgram p = parse_ra(text, "lit.ra");
  std::vector<std::string> seen;
  std::function<void(const ExprPtr&)> walk = [&](const ExprPtr& e) {
    if (!e) return;
    if (e->kind == ExprKind::Literal && e->literal.type() == Type::String)
      seen.push_back(e->literal.as_string());
    if (e->kind == ExprKind::Like || e->kind == ExprKind::StartsWith) seen.push_back(e->text);
    for (const auto& a : e->args) walk(a);
  };
  for (const Node& n : p.program.nodes()) {
    walk(n.predicate.ptr());
    if (!n.name.empty()) {
      EXPECT_TRUE(is_valid_identifier(n.name));
    }
    for (const auto& a : n.declared.attributes) EXPECT_TRUE(is_valid_identifier(a.name));
  }
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0], "\"); system(\"rm -rf /\"); //");
  EXPECT_EQ(seen[1], "*/%");
  EXPECT_EQ(seen[2], "#include <x>\\");
  EXPECT_EQ(seen[3], "it's");
  for (const std::string& s : seen) {
    std::string lit = cuda_string_literal(s);
    EXPECT_EQ(c_unescape(lit), s);
    EXPECT_EQ(lit.find("*/"), std::string::npos);
    EXPECT_EQ(lit.substr(1, lit.size() - 2).find('"'), std::string::npos);
  }
  // A raw newline inside a string literal is rejected.
  EXPECT_THROW(parse_ra("input r(s string);\nq = r |> select s = 'a\nb';\noutput q;", "nl.ra"),
               UserError);
}

}  // namespace
}  // namespace ranc
