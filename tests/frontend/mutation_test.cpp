// Robustness: ~20k deterministic random mutations of the example programs and the
// malformed corpus go through parse_ra (and check() when parsing succeeds); the
// only acceptable outcomes are success and UserError. A crash, hang, InternalError
// or other exception fails. (tests/frontend/run_fuzzer.sh runs libFuzzer for more.)
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ranc/frontend/ra_parser.h"
#include "test_util.h"

namespace ranc {
namespace {

std::vector<std::string> seeds() {
  std::vector<std::string> out;
  for (const auto& p : test::files_in(RANC_EXAMPLES_RA_DIR, ".ra"))
    out.push_back(test::read_text(p));
  for (const auto& p :
       test::files_in(std::filesystem::path(RANC_FRONTEND_TEST_DIR) / "malformed", ".ra"))
    out.push_back(test::read_text(p));
  out.push_back(
      "input r(a i32 key, s string, d date);\n"
      "q = r |> select case when a in (1, 2) then s like 'x%' else year(d) > 1990 end\n"
      "  |> join (r |> project a, s as s2) on a where not starts_with(s2, 'p')\n"
      "  |> reduce by a n = count(), m = max(cast(a as f64))\n"
      "  |> sort n desc |> limit 3 offset 1;\n"
      "output union(q, q) as u;\n");
  return out;
}

const char* const kTokens[] = {"(",
                               ")",
                               ",",
                               ";",
                               "|>",
                               "=",
                               "<>",
                               "<",
                               ">=",
                               "+",
                               "-",
                               "*",
                               "/",
                               "%",
                               "'",
                               "\"",
                               "--",
                               "/*",
                               "*/",
                               "and ",
                               " or ",
                               " not ",
                               "between",
                               " in ",
                               "like",
                               "case ",
                               "when",
                               "then",
                               "else",
                               "end",
                               "date '2000-01-01'",
                               "date",
                               "cast(",
                               " as ",
                               "select ",
                               "project ",
                               "join ",
                               "semijoin",
                               "reduce ",
                               "by ",
                               "sort ",
                               "limit ",
                               "offset",
                               "distinct",
                               "union",
                               "input ",
                               "output ",
                               "from ",
                               "format ",
                               "key",
                               "count()",
                               "sum(",
                               "9223372036854775808",
                               "1e999",
                               "2147483648",
                               "1.5f",
                               "\n",
                               "\xff",
                               "\0",
                               "((((((((((",
                               "))))))))))",
                               "year(",
                               "extract(",
                               "fixpoint ",
                               "max ",
                               "{",
                               "}",
                               "x",
                               "q"};

std::string mutate(const std::string& in, std::mt19937_64& rng) {
  std::string s = in;
  int n = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < n; ++i) {
    size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 7) {
      case 0:  // flip a byte
        if (!s.empty()) s[pos % s.size()] = static_cast<char>(rng() % 256);
        break;
      case 1:  // delete a range
        if (!s.empty()) s.erase(pos % s.size(), 1 + rng() % 16);
        break;
      case 2: {  // insert a token
        const char* t = kTokens[rng() % std::size(kTokens)];
        s.insert(pos, std::string(t, std::strlen(t) == 0 ? 1 : std::strlen(t)));
        break;
      }
      case 3: {  // duplicate a range
        if (s.empty()) break;
        size_t a = pos % s.size(), len = 1 + rng() % 64;
        s.insert(rng() % (s.size() + 1), s.substr(a, len));
        break;
      }
      case 4:  // truncate
        s.resize(pos);
        break;
      case 5: {  // swap two bytes
        if (s.size() < 2) break;
        std::swap(s[rng() % s.size()], s[rng() % s.size()]);
        break;
      }
      default: {  // insert a random printable byte
        s.insert(pos, 1, static_cast<char>(0x20 + rng() % 95));
        break;
      }
    }
  }
  return s;
}

TEST(Mutation, ParseOnlyThrowsUserError) {
  std::vector<std::string> base = seeds();
  ASSERT_GE(base.size(), 10u);
  std::mt19937_64 rng(20261122);
  int ok = 0, errors = 0, checked = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text = mutate(base[rng() % base.size()], rng);
    try {
      ParsedProgram p = parse_ra(text, "m.ra");
      ++ok;
      try {
        check(p.program);
        ++checked;
      } catch (const UserError&) {
      }
    } catch (const UserError& e) {
      ++errors;
      ASSERT_FALSE(render_diagnostics(e, text).empty());
    } catch (const std::exception& e) {
      FAIL() << "mutation " << i << " threw " << e.what() << "\n--- input ---\n" << text;
    }
  }
  EXPECT_GT(ok, 100);
  EXPECT_GT(errors, 1000);
  RecordProperty("parsed", ok);
  RecordProperty("checked", checked);
}

}  // namespace
}  // namespace ranc
