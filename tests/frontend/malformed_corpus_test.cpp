// Data-driven error tests (as DuckDB's test files): every file under malformed/
// starts with comment lines saying which diagnostics the parser must report:
//   -- expect: LINE:COL: KIND: MESSAGE-REGEX
//   -- hint: HINT-REGEX            (optional, for the expect line above it)
// KIND is error_kind_name() ("syntax error", "unknown relation", ...). The file must
// produce exactly the listed diagnostics, in order.
#include <gtest/gtest.h>

#include <regex>

#include "ranc/frontend/ra_parser.h"
#include "test_util.h"

namespace ranc {
namespace {

struct Expected {
  uint32_t line = 0, column = 0;
  std::string kind, message, hint;
};

std::vector<Expected> read_expectations(const std::string& text) {
  std::vector<Expected> out;
  std::istringstream in(text);
  std::string line;
  static const std::regex expect_re(R"(^-- expect: (\d+):(\d+): ([a-z ]+): (.*)$)");
  static const std::regex hint_re(R"(^-- hint: (.*)$)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, expect_re)) {
      out.push_back({static_cast<uint32_t>(std::stoul(m[1])),
                     static_cast<uint32_t>(std::stoul(m[2])), m[3], m[4], ""});
    } else if (std::regex_match(line, m, hint_re) && !out.empty()) {
      out.back().hint = m[1];
    } else if (line.rfind("--", 0) != 0) {
      break;
    }
  }
  return out;
}

class MalformedCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(MalformedCorpus, ReportsExpectedDiagnostics) {
  std::filesystem::path path = GetParam();
  std::string text = test::read_text(path);
  std::vector<Expected> expected = read_expectations(text);
  ASSERT_FALSE(expected.empty()) << path << " has no '-- expect:' line";
  try {
    parse_ra(text, path.filename().string());
    FAIL() << path << " parsed without error";
  } catch (const UserError& e) {
    std::string rendered = render_diagnostics(e, text);
    const auto& ds = e.diagnostics();
    ASSERT_EQ(ds.size(), expected.size()) << rendered;
    for (size_t i = 0; i < ds.size(); ++i) {
      SCOPED_TRACE(rendered);
      EXPECT_EQ(ds[i].loc.line, expected[i].line) << i;
      EXPECT_EQ(ds[i].loc.column, expected[i].column) << i;
      EXPECT_EQ(std::string(error_kind_name(ds[i].kind)), expected[i].kind) << i;
      EXPECT_TRUE(std::regex_search(ds[i].message, std::regex(expected[i].message)))
          << "message '" << ds[i].message << "' does not match '" << expected[i].message << "'";
      if (!expected[i].hint.empty()) {
        EXPECT_TRUE(std::regex_search(ds[i].hint, std::regex(expected[i].hint)))
            << "hint '" << ds[i].hint << "' does not match '" << expected[i].hint << "'";
      }
      // Every rendered diagnostic has its location and a caret line.
      EXPECT_NE(rendered.find(fmt::format("{}:{}:{}: error: ", path.filename().string(),
                                          ds[i].loc.line, ds[i].loc.column)),
                std::string::npos);
    }
    EXPECT_NE(rendered.find('^'), std::string::npos);
  }
}

std::vector<std::string> corpus() {
  std::vector<std::string> out;
  for (const auto& p :
       test::files_in(std::filesystem::path(RANC_FRONTEND_TEST_DIR) / "malformed", ".ra"))
    out.push_back(p.string());
  return out;
}

TEST(MalformedCorpusSize, AtLeastThirtyFiles) {
  EXPECT_GE(corpus().size(), 30u);
}

INSTANTIATE_TEST_SUITE_P(Files, MalformedCorpus, ::testing::ValuesIn(corpus()),
                         [](const auto& info) {
                           std::string n = std::filesystem::path(info.param).stem().string();
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace ranc
