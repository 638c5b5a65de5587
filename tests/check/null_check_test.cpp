// Checking NULLs and the SQL forms (no GPU): nullability of every operator's output, the
// NULL keyword typed by its context, and the located errors for what cannot be typed.
#include <gtest/gtest.h>

#include <regex>

#include "ranc/frontend/ra_parser.h"
#include "ranc/ir/program.h"

namespace ranc {
namespace {

const char* kDecls =
    "input r(a i32, b i64 null, s string null, t bool null);\n"
    "input u(a i32, x f64 null);\n";

// The checked schema of output q of `body` (after the declarations).
std::string schema_of(const std::string& body) {
  Program p = check(parse_ra(std::string(kDecls) + body + "\noutput q;", "t.ra").program);
  return p.node(p.outputs().back()).schema.str();
}

// The first diagnostic of checking `body`; fails when it checks.
Diagnostic error_of(const std::string& body) {
  try {
    check(parse_ra(std::string(kDecls) + body + "\noutput q;", "t.ra").program);
  } catch (const UserError& e) {
    return e.diagnostics().at(0);
  }
  ADD_FAILURE() << "no error for: " << body;
  return {};
}

TEST(CheckNulls, NullabilityOfExpressions) {
  EXPECT_EQ(schema_of("q = r |> project a + 1 as x, b + 1 as y, b is null as z, coalesce(b, 0L) "
                      "as w, coalesce(b, b) as v;"),
            "(x i32, y i64 null, z bool, w i64, v i64 null)");
  EXPECT_EQ(schema_of("q = r |> project case when t then 1 else 2 end as x, "
                      "case when a > 0 then b else 0L end as y, cast(null as date) as z;"),
            "(x i32, y i64 null, z date null)");
  EXPECT_EQ(schema_of("q = r |> project t and a > 1 as x, a in (1, null) as y, "
                      "substring(s, 1, 1) as z, a = null as w;"),
            "(x bool null, y bool null, z string null, w bool null)");
}

TEST(CheckNulls, NullabilityOfOperators) {
  EXPECT_EQ(schema_of("q = r |> left join u on a;"), "(a i32, b i64 null, s string null, "
                                                     "t bool null, x f64 null)");
  EXPECT_EQ(schema_of("q = (r |> project a, b) |> right join (u |> project a, x) on a;"),
            "(a i32, b i64 null, x f64 null)");
  EXPECT_EQ(schema_of("q = (r |> project a) |> union all (u |> project cast(x as i32) as a);"),
            "(a i32 null)");
  EXPECT_EQ(schema_of("q = (r |> project a) |> except (u |> project cast(x as i32) as a);"),
            "(a i32)");
  EXPECT_EQ(schema_of("q = r |> reduce by s n = count(), c = count(b), m = max(b), v = avg(a);"),
            "(s string null, n i64, c i64, m i64 null, v f64 | key s)");
  EXPECT_EQ(schema_of("q = r |> select b > scalar(u |> reduce m = max(x)) |> project a, "
                      "scalar(u |> reduce n = count()) as n;"),
            "(a i32, n i64 null)");
}

TEST(CheckNulls, LocatedErrors) {
  Diagnostic d = error_of("q = r |> project null as n;");
  EXPECT_EQ(d.kind, ErrorKind::TypeMismatch);
  EXPECT_NE(d.message.find("NULL has no type in project expression 'n'"), std::string::npos)
      << d.message;
  EXPECT_EQ(d.loc.line, 3u);
  d = error_of("q = r |> project null + null as n;");
  EXPECT_NE(d.message.find("both operands are NULL"), std::string::npos) << d.message;
  d = error_of("q = r |> project substring(s, a, 2) as p;");
  EXPECT_NE(d.message.find("substring()'s start must be an integer constant"), std::string::npos)
      << d.message;
  d = error_of("q = r |> project substring(s, 1, -2) as p;");
  EXPECT_NE(d.message.find("length is negative"), std::string::npos) << d.message;
  d = error_of("q = r |> project substring(a, 1, 2) as p;");
  EXPECT_NE(d.message.find("substring() needs a string"), std::string::npos) << d.message;
  d = error_of("q = r |> select a > scalar(u);");
  EXPECT_EQ(d.kind, ErrorKind::SchemaMismatch);
  EXPECT_NE(d.message.find("a scalar subquery must have one attribute, but it has 2"),
            std::string::npos)
      << d.message;
  d = error_of("q = r |> reduce n = count(distinct);");
  EXPECT_NE(d.message.find("count(distinct) needs an argument"), std::string::npos) << d.message;
  d = error_of("q = r |> select coalesce(null, null) = 1;");
  EXPECT_NE(d.message.find("all coalesce arguments are NULL"), std::string::npos) << d.message;
  d = error_of("q = r |> project case when t then 'a' else 1 end as c;");
  EXPECT_NE(d.message.find("case branches have incompatible types string and i32"),
            std::string::npos)
      << d.message;
}

TEST(CheckNulls, FixpointRulesMayNotUseTheSqlForms) {
  for (const char* rule : {"p = p |> left join u on a |> project a;",
                           "p = p |> union all (u |> project a);",
                           "p = p |> project a, cast(null as i32) as z |> project a;"}) {
    std::string body = std::string("fixpoint {\n  p = u |> project a;\n  ") + rule + "\n}\nq = p;";
    Diagnostic d = error_of(body);
    EXPECT_NE(d.message.find("is not supported inside a fixpoint"), std::string::npos)
        << rule << ": " << d.message;
  }
}

}  // namespace
}  // namespace ranc
