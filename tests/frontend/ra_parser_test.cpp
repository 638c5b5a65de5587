// The .ra parser: every construct parses to the same program the C++ DSL builds,
// locations are right, names resolve in any order, diagnostics render like a
// compiler's, and hostile input (deep nesting, huge chains) fails cleanly. Fixpoint
// blocks build the IR of ir/program.h's RECURSION section.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "ranc/dsl.h"
#include "ranc/frontend/ra_lexer.h"
#include "ranc/frontend/ra_parser.h"
#include "ranc/ra_ops/ra_ops.h"
#include "test_util.h"

namespace ranc {
namespace {

using test::canonical;

constexpr const char* kDecls = R"(
input r(a i32 key, b i64, c f64, d date, s string, t bool);
input u(a i32 key, x f64);
)";

void decls(Rel& r, Rel& u, ProgramBuilder& b) {
  r = b.input("r",
              {{"a", Type::I32},
               {"b", Type::I64},
               {"c", Type::F64},
               {"d", Type::Date},
               {"s", Type::String},
               {"t", Type::Bool}},
              1);
  u = b.input("u", {{"a", Type::I32}, {"x", Type::F64}}, 1);
}

// Parses text (with the r/u declarations in front) and expects success.
ParsedProgram parse_ok(const std::string& body) {
  std::string text = std::string(kDecls) + body;
  try {
    return parse_ra(text, "test.ra");
  } catch (const UserError& e) {
    ADD_FAILURE() << "unexpected error:\n" << render_diagnostics(e, text);
    return {};
  }
}

// The predicate of `q = r |> select <pred>; output q;`, as .ra text.
std::string pred(const std::string& p) {
  ParsedProgram pp = parse_ok("q = r |> select " + p + ";\noutput q;");
  for (const Node& n : pp.program.nodes())
    if (n.kind == OpKind::Select) return to_string(n.predicate);
  return "<none>";
}

UserError parse_err(const std::string& text) {
  try {
    parse_ra(text, "bad.ra");
  } catch (const UserError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an error for:\n" << text;
  return UserError(Diagnostic{ErrorKind::InvalidGraph, "none", {}, {}});
}

void expect_same(const Program& parsed, const Program& built) {
  std::string a = canonical(parsed), b = canonical(built);
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a.empty());
  // Both must also check to the same typed graph.
  try {
    Program ca = check(parsed), cb = check(built);
    EXPECT_EQ(print_program(ca), print_program(cb));
  } catch (const UserError& e) {
    ADD_FAILURE() << "check failed: " << e.what();
  }
}

TEST(RaParser, Q6MatchesDsl) {
  ParsedProgram p = parse_ra(R"(
-- TPC-H Q6
input lineitem(l_orderkey i64 key, l_quantity f64, l_extendedprice f64, l_discount f64,
               l_shipdate date) from "lineitem.tbl";
q6 = lineitem
  |> select l_shipdate >= date '1994-01-01' and l_shipdate < date '1995-01-01'
            and l_discount between 0.05 and 0.07 and l_quantity < 24
  |> reduce revenue = sum(l_extendedprice * l_discount);
output q6;
)",
                             "q6.ra");
  ProgramBuilder b;
  Rel li = b.input("lineitem",
                   {{"l_orderkey", Type::I64},
                    {"l_quantity", Type::F64},
                    {"l_extendedprice", Type::F64},
                    {"l_discount", Type::F64},
                    {"l_shipdate", Type::Date}},
                   1);
  Rel q = li.select(col("l_shipdate") >= date_lit("1994-01-01") &&
                    col("l_shipdate") < date_lit("1995-01-01") &&
                    between(col("l_discount"), 0.05, 0.07) && col("l_quantity") < 24)
              .reduce({}, {sum(col("l_extendedprice") * col("l_discount"), "revenue")});
  b.output(q, "q6");
  expect_same(p.program, b.program());
  ASSERT_EQ(p.input_files.size(), 1u);
  EXPECT_EQ(p.input_files[0].relation, "lineitem");
  EXPECT_EQ(p.input_files[0].path, "lineitem.tbl");
  EXPECT_EQ(p.input_files[0].format, "tbl");
  EXPECT_EQ(p.input_files[0].delimiter, '|');
  EXPECT_FALSE(p.input_files[0].header);
}

TEST(RaParser, UnaryOperatorsMatchDsl) {
  ParsedProgram p = parse_ok(R"(
q = r |> select a > 1 |> project a, b as bb, c * 2.0 as c2, s |> sort bb desc, a
      |> limit 10 offset 5 |> distinct;
output q;
)");
  ProgramBuilder b;
  Rel r, u;
  decls(r, u, b);
  Rel q = r.select(col("a") > 1)
              .project({"a", as(col("b"), "bb"), as(col("c") * 2.0, "c2"), "s"})
              .sort({desc("bb"), "a"})
              .limit(10, 5)
              .distinct();
  b.output(q, "q");
  expect_same(p.program, b.program());
}

TEST(RaParser, JoinsMatchDsl) {
  ParsedProgram p = parse_ok(R"(
j = r |> join u on a = a where c < x;
s = r |> semijoin u on a;
n = r |> antijoin (u |> select x > 0.5) on a = a;
output j; output s as semi; output n;
)");
  ProgramBuilder b;
  Rel r, u;
  decls(r, u, b);
  b.output(r.join(u, {"a"}, {"a"}, JoinKind::Inner, col("c") < col("x")), "j");
  b.output(r.semi_join(u, {"a"}, {"a"}), "semi");
  b.output(r.anti_join(u.select(col("x") > 0.5), {"a"}, {"a"}), "n");
  expect_same(p.program, b.program());
}

// NULLs, outer joins, union all, count(x) and distinct aggregates, coalesce, substring and
// scalar subqueries (a subquery's relation is an extra input of its node, in order).
TEST(RaParser, SqlFormsMatchDsl) {
  ParsedProgram p = parse_ok(R"(
input n(k i32, v i64 null, w string null) from "n.csv" null 'NA';
l = r |> left join u on a where x > 0.5;
rr = r |> right outer join u on a;
f = r |> full join u on a = a;
all = (r |> project a) |> union all (u |> project a);
agg = n |> reduce by k c = count(v), d = count(distinct w), s = sum(distinct v), m = count(*);
e = n |> select v is null or w is not null and coalesce(v, 0L) > 1
      |> project k, substring(w, 1, 2) as p, substring(w from 2 for 3) as q, null as z;
sq = r |> select c > scalar(u |> reduce m = max(x)) and a < scalar(u |> reduce c = count())
       |> project a, scalar(u |> reduce m = max(x)) - c as gap;
output l; output rr; output f; output all; output agg; output e; output sq;
)");
  ProgramBuilder b;
  Rel r, u;
  decls(r, u, b);
  Rel n = b.input("n", {{"k", Type::I32}, {"v", Type::I64, true}, {"w", Type::String, true}});
  b.output(r.join(u, {"a"}, {"a"}, JoinKind::Left, col("x") > 0.5), "l");
  b.output(r.join(u, {"a"}, {"a"}, JoinKind::Right), "rr");
  b.output(r.join(u, {"a"}, {"a"}, JoinKind::Full), "f");
  b.output(r.project({"a"}).union_all(u.project({"a"})), "all");
  b.output(n.reduce({"k"}, {count(col("v"), "c"), distinct(count(col("w"), "d")),
                            distinct(sum(col("v"), "s")), count("m")}),
           "agg");
  b.output(n.select(is_null(col("v")) ||
                    (is_not_null(col("w")) && coalesce({col("v"), Expr(int64_t{0})}) > 1))
               .project({"k", as(substring(col("w"), 1, 2), "p"), as(substring(col("w"), 2, 3), "q"),
                         as(null_value(), "z")}),
           "e");
  Rel max_x = u.reduce({}, {max(col("x"), "m")});
  b.output(r.select(col("c") > scalar(max_x) && col("a") < scalar(u.reduce({}, {count("c")})))
               .project({"a", as(scalar(u.reduce({}, {max(col("x"), "m")})) - col("c"), "gap")}),
           "sq");
  EXPECT_EQ(canonical(p.program), canonical(b.program()));
  // `null as z` has no type: the checker says so, for both.
  EXPECT_THROW(check(p.program), UserError);
  const auto& marker = p.input_files.back();
  EXPECT_EQ(marker.relation, "n");
  EXPECT_EQ(marker.null_marker, std::optional<std::string>("NA"));
  EXPECT_EQ(pred("a is null"), "(a is null)");
  EXPECT_EQ(pred("not (s is not null)"), "(not (not (s is null)))");
  EXPECT_EQ(pred("coalesce(b, a, 1) > 0"), "(coalesce(b, a, 1) > 0)");
  EXPECT_EQ(pred("a = null"), "(a = null)");
}

TEST(RaParser, MultiKeyJoinKeepsKeyOrder) {
  ParsedProgram p = parse_ra(R"(
input l(k1 i32, k2 i64, v f64);
input m(j1 i32, j2 i64, w f64);
o = l |> join m on k1 = j1 and k2 = j2;
output o;
)",
                             "t.ra");
  ProgramBuilder b;
  Rel l = b.input("l", {{"k1", Type::I32}, {"k2", Type::I64}, {"v", Type::F64}});
  Rel m = b.input("m", {{"j1", Type::I32}, {"j2", Type::I64}, {"w", Type::F64}});
  b.output(l.join(m, {"k1", "k2"}, {"j1", "j2"}), "o");
  expect_same(p.program, b.program());
}

TEST(RaParser, SetOperatorsAndFunctionFormMatchDsl) {
  ParsedProgram p = parse_ok(R"(
ra = r |> project a;
ua = u |> project a;
x1 = ra |> union ua;
x2 = ra |> intersect ua;
x3 = ra |> except ua;
x4 = ra |> difference ua;
x5 = union(ra, ua, ra);
x6 = except(ra, intersect(ra, ua));
x7 = distinct(ra);
x8 = (r |> project b) |> product ua;
x9 = product(ua, r |> project b);
output x1; output x2; output x3; output x4; output x5; output x6; output x7; output x8;
output x9;
)");
  ProgramBuilder b;
  Rel r, u;
  decls(r, u, b);
  Rel ra = r.project({"a"});
  Rel ua = u.project({"a"});
  b.output(ra.union_with(ua), "x1");
  b.output(ra.intersect(ua), "x2");
  b.output(ra.difference(ua), "x3");
  b.output(ra.difference(ua), "x4");
  b.output(ra.union_with(ua).union_with(ra), "x5");
  b.output(ra.difference(ra.intersect(ua)), "x6");
  b.output(ra.distinct(), "x7");
  b.output(r.project({"b"}).product(ua), "x8");
  b.output(ua.product(r.project({"b"})), "x9");
  // The parsed program shares ra and ua between outputs just like the DSL one.
  expect_same(p.program, b.program());
}

TEST(RaParser, ReduceMatchesDsl) {
  ParsedProgram p = parse_ok(R"(
g = r |> reduce by a, s total = sum(c), n = count(), m = count(*), lo = min(d), hi = max(b),
                 avg(c) as mean;
h = r |> reduce by a;
k = r |> reduce by a, s, n = count();
output g; output h; output k;
)");
  ProgramBuilder b;
  Rel r, u;
  decls(r, u, b);
  b.output(r.reduce({"a", "s"}, {sum(col("c"), "total"), count("n"), count("m"),
                                 min(col("d"), "lo"), max(col("b"), "hi"), avg(col("c"), "mean")}),
           "g");
  b.output(r.reduce({"a"}, {}), "h");
  b.output(r.reduce({"a", "s"}, {count("n")}), "k");
  expect_same(p.program, b.program());
}

TEST(RaParser, ForwardReferencesAndAliasesResolve) {
  ParsedProgram p = parse_ra(R"(
output total;                 -- used before it is defined
total = big |> reduce n = count();
big = alias |> select v > 10;
alias = base;
input base(v i32);
)",
                             "fwd.ra");
  ProgramBuilder b;
  Rel base = b.input("base", {{"v", Type::I32}});
  b.output(base.select(col("v") > 10).reduce({}, {count("n")}), "total");
  expect_same(p.program, b.program());
}

TEST(RaParser, SharedSubexpressionIsOneNode) {
  ParsedProgram p = parse_ok(R"(
f = r |> select a > 0;
o1 = f |> project a;
o2 = f |> project b;
output o1; output o2;
)");
  int selects = 0;
  for (const Node& n : p.program.nodes()) selects += n.kind == OpKind::Select;
  EXPECT_EQ(selects, 1);
}

TEST(RaParser, Expressions) {
  EXPECT_EQ(pred("a + b * c - c / 2 % 3 > 0"), "(((a + (b * c)) - ((c / 2) % 3)) > 0)");
  EXPECT_EQ(pred("not a = 1 or t and a <> 2"), "((not (a = 1)) or (t and (a <> 2)))");
  EXPECT_EQ(pred("a != 1"), "(a <> 1)");
  EXPECT_EQ(pred("(a + 1) * 2 <= -a"), "(((a + 1) * 2) <= (-a))");
  EXPECT_EQ(pred("a in (1, 2, 3)"), "(a in (1, 2, 3))");
  EXPECT_EQ(pred("a not in (1)"), "(not (a in (1)))");
  EXPECT_EQ(pred("s like 'ab%' and s not like '_x'"), "((s like 'ab%') and (not (s like '_x')))");
  EXPECT_EQ(pred("c not between 1.5 and 2"), "(not (c between 1.5 and 2))");
  EXPECT_EQ(pred("starts_with(s, 'it''s')"), "starts_with(s, 'it''s')");
  EXPECT_EQ(pred("year(d) = 1995 and extract(year from d) >= 1990"),
            "((year(d) = 1995) and (year(d) >= 1990))");
  EXPECT_EQ(pred("cast(a as i64) = b and cast(c as int) > 0"),
            "((cast(a as i64) = b) and (cast(c as i32) > 0))");
  EXPECT_EQ(pred("case when a > 1 then 1.0 when a > 0 then 0.5 else 0.0 end > c"),
            "(case when (a > 1) then 1.0 when (a > 0) then 0.5 else 0.0 end > c)");
  EXPECT_EQ(pred("t = true or t = false"), "((t = true) or (t = false))");
  EXPECT_EQ(pred("d = date '1998-12-01' - 90"), "(d = (date '1998-12-01' - 90))");
  EXPECT_EQ(pred("s = \"double\" or s = 'sin''gle'"), "((s = 'double') or (s = 'sin''gle'))");
  // Literal types: i32 when it fits, else i64; L forces i64; f makes f32.
  EXPECT_EQ(pred("b = 2147483647"), "(b = 2147483647)");
  EXPECT_EQ(pred("b = 2147483648"), "(b = 2147483648L)");
  EXPECT_EQ(pred("b = -2147483648"), "(b = -2147483648)");
  EXPECT_EQ(pred("b = 5L"), "(b = 5L)");
  EXPECT_EQ(pred("b = -9223372036854775808"), "(b = -9223372036854775808L)");
  EXPECT_EQ(pred("c = 1.5f"), "(c = 1.5f)");
  EXPECT_EQ(pred("c = 2f"), "(c = 2f)");
  EXPECT_EQ(pred("c = 1e3"), "(c = 1000.0)");
  EXPECT_EQ(pred("c = - 2.5"), "(c = -2.5)");
  EXPECT_EQ(pred("c = --comment\n 1.0"), "(c = 1.0)");
  EXPECT_EQ(pred("c = /* block\n comment */ 1.0"), "(c = 1.0)");
  // Attribute names that are also function or type names.
  ParsedProgram p = parse_ra(
      "input t(year i32, date date, count i64);\n"
      "q = t |> select year > 1 and date < date '2000-01-01' and year(date) = count;\n"
      "output q;",
      "n.ra");
  for (const Node& n : p.program.nodes()) {
    if (n.kind == OpKind::Select) {
      EXPECT_EQ(to_string(n.predicate),
                "(((year > 1) and (date < date '2000-01-01')) and (year(date) = count))");
    }
  }
}

TEST(RaParser, ExpressionsMatchDslTypes) {
  auto find_pred = [](const ParsedProgram& p) {
    for (const Node& n : p.program.nodes())
      if (n.kind == OpKind::Select) return n.predicate;
    return Expr();
  };
  ParsedProgram p = parse_ok("q = r |> select b = 7 and c < 1.5f and a = -3; output q;");
  Expr e = find_pred(p);
  Expr dsl = col("b") == 7 && col("c") < 1.5f && col("a") == -3;
  EXPECT_EQ(to_string(e), to_string(dsl));
  // -3 is a folded literal, not a negation node.
  EXPECT_EQ(e->args[1]->args[1]->kind, ExprKind::Literal);
  EXPECT_EQ(e->args[1]->args[1]->literal.type(), Type::I32);
}

TEST(RaParser, SourceLocations) {
  ParsedProgram p = parse_ra(
      "input r(a i32);\n"
      "q = r\n"
      "  |> select a + 1 > 2;\n"
      "output q;\n",
      "loc.ra");
  const Program& prog = p.program;
  const Node* sel = nullptr;
  for (const Node& n : prog.nodes()) {
    EXPECT_EQ(n.loc.file, "loc.ra");
    EXPECT_GT(n.loc.line, 0u);
    EXPECT_GT(n.loc.column, 0u);
    if (n.kind == OpKind::Select) sel = &n;
    if (n.kind == OpKind::Input) {
      EXPECT_EQ(n.loc, (SourceLoc{"loc.ra", 1, 7}));
    }
    if (n.kind == OpKind::Output) {
      EXPECT_EQ(n.loc, (SourceLoc{"loc.ra", 4, 8}));
    }
  }
  ASSERT_NE(sel, nullptr);
  EXPECT_EQ(sel->loc, (SourceLoc{"loc.ra", 3, 6}));
  const ExprNode& gt = *sel->predicate;
  EXPECT_EQ(gt.loc, (SourceLoc{"loc.ra", 3, 19}));                    // '>'
  EXPECT_EQ(gt.args[0]->loc, (SourceLoc{"loc.ra", 3, 15}));           // '+'
  EXPECT_EQ(gt.args[0]->args[0]->loc, (SourceLoc{"loc.ra", 3, 13}));  // a
  EXPECT_EQ(gt.args[1]->loc, (SourceLoc{"loc.ra", 3, 21}));           // 2
}

TEST(RaParser, InputOptions) {
  ParsedProgram p = parse_ra(R"(
input a(x i32) from "a.csv";
input b(x i32) from "b.txt" format tbl;
input c(x i32) from 'c.csv' delimiter ';' header false;
input d(x i32) format csv delimiter '\t';
input e(x i32 key, y i64 key, z string);
output a; output b; output c; output d; output e;
)",
                             "in.ra");
  ASSERT_EQ(p.input_files.size(), 5u);
  const auto& f = p.input_files;
  EXPECT_EQ(f[0].format, "csv");
  EXPECT_EQ(f[0].delimiter, ',');
  EXPECT_TRUE(f[0].header);
  EXPECT_EQ(f[1].format, "tbl");
  EXPECT_EQ(f[1].path, "b.txt");
  EXPECT_EQ(f[1].delimiter, '|');
  EXPECT_EQ(f[2].delimiter, ';');
  EXPECT_FALSE(f[2].header);
  EXPECT_EQ(f[3].path, "");
  EXPECT_EQ(f[3].delimiter, '\t');
  EXPECT_EQ(f[4].loc, (SourceLoc{"in.ra", 6, 7}));
  for (const Node& n : p.program.nodes())
    if (n.kind == OpKind::Input && n.name == "e") {
      EXPECT_EQ(n.declared.key_size, 2u);
    }
}

// "sorted by" declares the data's order; it parses to the DSL's sorted_by and the
// checker resolves it (unknown attributes are reported at the attribute).
TEST(RaParser, SortedByInputOption) {
  ParsedProgram p = parse_ra(R"(
input s(a i32 key, b f64, c string) sorted by a, b desc from "s.csv";
output s |> reduce by a n = count() as out;
)",
                             "in.ra");
  ProgramBuilder b;
  Rel s =
      b.input("s", {{"a", Type::I32}, {"b", Type::F64}, {"c", Type::String}}, 1, {"a", desc("b")});
  b.output(s.reduce({"a"}, {count("n")}), "out");
  EXPECT_EQ(canonical(p.program), canonical(b.program()));
  EXPECT_EQ(p.input_files.at(0).path, "s.csv");
  Program checked = check(p.program);
  EXPECT_NE(print_program(checked).find("sorted by (a asc, b desc)"), std::string::npos)
      << print_program(checked);

  UserError e = parse_err("input s(a i32) sorted a;\noutput s;");
  EXPECT_NE(std::string(e.what()).find("'by'"), std::string::npos) << e.what();
  ParsedProgram bad = parse_ra("input s(a i32) sorted by z;\noutput s;", "bad.ra");
  try {
    (void)check(bad.program);
    ADD_FAILURE() << "expected an error";
  } catch (const UserError& err) {
    EXPECT_NE(std::string(err.what()).find("'z'"), std::string::npos) << err.what();
    EXPECT_EQ(err.diagnostics().at(0).loc, (SourceLoc{"bad.ra", 1, 26}));
  }
}

TEST(RaParserErrors, SeveralErrorsInOneRun) {
  std::string text =
      "input r(a i32);\n"
      "x = r |> selct a > 1;\n"
      "y = r |> select a >;\n"
      "z = r |> project a * 2;\n"
      "output w;\n";
  UserError e = parse_err(text);
  ASSERT_EQ(e.diagnostics().size(), 4u) << e.what();
  EXPECT_EQ(e.diagnostics()[0].loc, (SourceLoc{"bad.ra", 2, 10}));
  EXPECT_EQ(e.diagnostics()[0].hint, "did you mean 'select'?");
  EXPECT_EQ(e.diagnostics()[1].loc, (SourceLoc{"bad.ra", 3, 20}));
  EXPECT_EQ(e.diagnostics()[2].message, "a computed attribute needs a name");
  EXPECT_EQ(e.diagnostics()[3].kind, ErrorKind::UnknownRelation);
  std::string r = render_diagnostics(e, text);
  EXPECT_NE(r.find("bad.ra:2:10: error: unknown operator 'selct'\n"
                   "  x = r |> selct a > 1;\n"
                   "           ^~~~~\n"
                   "  hint: did you mean 'select'?\n"),
            std::string::npos)
      << r;
}

TEST(RaParserErrors, UnknownRelationSuggestsAName) {
  UserError e = parse_err("input lineitem(a i32);\nq = lineitems |> distinct;\noutput q;\n");
  ASSERT_EQ(e.diagnostics().size(), 1u);
  EXPECT_EQ(e.kind(), ErrorKind::UnknownRelation);
  EXPECT_EQ(e.first().loc, (SourceLoc{"bad.ra", 2, 5}));
  EXPECT_EQ(e.first().hint, "did you mean 'lineitem'?");
}

TEST(RaParserErrors, BrokenDefinitionDoesNotCascade) {
  // q's definition has a syntax error; 'output q' must not add "unknown relation".
  UserError e = parse_err("input r(a i32);\nq = r |> select (a;\noutput q;\n");
  EXPECT_EQ(e.diagnostics().size(), 1u) << e.what();
}

TEST(RaParserErrors, AliasCycleIsReported) {
  UserError e = parse_err("a = b;\nb = c;\nc = a;\noutput a;\n");
  ASSERT_GE(e.diagnostics().size(), 1u);
  EXPECT_EQ(e.kind(), ErrorKind::Cycle) << e.what();
}

TEST(RaParserErrors, DeepNestingFailsCleanly) {
  std::string deep = "input r(a i32);\nq = r |> select " + std::string(100000, '(') + "a" +
                     std::string(100000, ')') + " > 1;\noutput q;\n";
  UserError e = parse_err(deep);
  EXPECT_NE(e.first().message.find("nested too deeply"), std::string::npos);
  std::string rel = "input r(a i32);\nq = " + std::string(5000, '(') + "r" +
                    std::string(5000, ')') + ";\noutput q;\n";
  EXPECT_NE(parse_err(rel).first().message.find("nested too deeply"), std::string::npos);
  std::string nots = "input r(t bool);\nq = r |> select ";
  for (int i = 0; i < 5000; ++i) nots += "not ";
  EXPECT_NE(parse_err(nots + "t;\noutput q;\n").first().message.find("nested too deeply"),
            std::string::npos);
  std::string negs = "input r(a i32);\nq = r |> select " + std::string(5000, '-') + "a > 0;";
  EXPECT_FALSE(parse_err(negs).diagnostics().empty());
}

TEST(RaParserErrors, LongChainsAreBounded) {
  // A flat chain is parsed by a loop but would make a tree too deep for later passes.
  std::string sum = "input r(a i32);\nq = r |> select a";
  for (int i = 0; i < 200000; ++i) sum += " + a";
  UserError e = parse_err(sum + " > 0;\noutput q;\n");
  EXPECT_NE(e.first().message.find("too deep"), std::string::npos);
  // 900 terms are fine.
  std::string ok = "input r(a i32);\nq = r |> select a";
  for (int i = 0; i < 900; ++i) ok += " + a";
  EXPECT_NO_THROW(parse_ra(ok + " > 0;\noutput q;\n", "ok.ra"));
}

TEST(RaParserErrors, ManyErrorsAreCapped) {
  std::string text;
  for (int i = 0; i < 10000; ++i) text += "x = ;\n";
  UserError e = parse_err(text);
  EXPECT_LE(e.diagnostics().size(), kMaxDiagnostics + 1);
}

TEST(RaParserErrors, RenderShowsCaretUnderToken) {
  std::string text = "input r(a i32);\nq = r |> select a > 1\noutput q;\n";
  UserError e = parse_err(text);
  EXPECT_EQ(render_diagnostics(e, text),
            "bad.ra:2:22: error: expected ';' after statement\n"
            "  q = r |> select a > 1\n"
            "                       ^\n"
            "  hint: every statement ends with ';'\n");
  // Tabs are kept so the caret lines up; control bytes are not echoed raw.
  std::string tabbed = "input r(a i32);\n\tq = r |> bogus;\noutput q;";
  UserError e2 = parse_err(tabbed);
  std::string r2 = render_diagnostics(e2, tabbed);
  EXPECT_NE(r2.find("  \tq = r |> bogus;\n  \t         ^~~~~\n"), std::string::npos) << r2;
  std::string ctrl = "input r(a i32);\x1b[31m\n";
  std::string r3 = render_diagnostics(parse_err(ctrl), ctrl);
  EXPECT_EQ(r3.find('\x1b'), std::string::npos) << r3;
}

TEST(RaParserErrors, UnreadableFile) {
  try {
    parse_ra_file("/nonexistent/dir/prog.ra");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.first().message.find("cannot read"), std::string::npos);
  }
}

// ---------------------------------------------------------------- fixpoint

const Node* find_node(const Program& p, OpKind kind, const std::string& name = {}) {
  for (const Node& n : p.nodes())
    if (n.kind == kind && (name.empty() || n.name == name)) return &n;
  return nullptr;
}

std::vector<std::string> names_of(const Program& p, const std::vector<NodeId>& ids) {
  std::vector<std::string> out;
  for (NodeId id : ids) out.push_back(p.node(id).name);
  return out;
}

constexpr const char* kTransitiveClosure =
    "input edges(src i32, dst i32);\n"
    "fixpoint {\n"
    "  path = edges;\n"
    "  path = path |> join (edges |> project src as mid, dst as to) on dst = mid\n"
    "              |> project src, to as dst;\n"
    "}\n"
    "output path;\n";

// One block: a Fixpoint node in the file's program whose def holds the rules as a
// program of their own (one Input per name read, one Output per rule, in order).
TEST(RaParserFixpoint, BuildsTheRulesProgramAndOneNodePerRelation) {
  ParsedProgram p = parse_ra(kTransitiveClosure, "t.ra");
  const Program& prog = p.program;
  const Node* edges = find_node(prog, OpKind::Input, "edges");
  const Node* fp = find_node(prog, OpKind::Fixpoint);
  ASSERT_NE(edges, nullptr);
  ASSERT_NE(fp, nullptr);
  EXPECT_EQ(fp->name, "path");
  EXPECT_EQ(fp->fixpoint_index, 0);
  EXPECT_EQ(fp->inputs, std::vector<NodeId>{edges->id});
  EXPECT_EQ(fp->loc, (SourceLoc{"t.ra", 3, 3}));
  const Node* out = find_node(prog, OpKind::Output);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->inputs, std::vector<NodeId>{fp->id});

  ASSERT_NE(fp->fixpoint, nullptr);
  const FixpointDef& def = *fp->fixpoint;
  EXPECT_EQ(def.names, std::vector<std::string>{"path"});
  EXPECT_EQ(def.outer, std::vector<std::string>{"edges"});
  EXPECT_EQ(def.max_iterations, 0);
  EXPECT_EQ(def.loc, (SourceLoc{"t.ra", 2, 1}));
  ASSERT_NE(def.rules, nullptr);
  const Program& rules = *def.rules;
  EXPECT_EQ(names_of(rules, rules.inputs()), (std::vector<std::string>{"edges", "path"}));
  EXPECT_EQ(names_of(rules, rules.outputs()), (std::vector<std::string>{"path", "path"}));
  const Node& e = rules.node(rules.inputs()[0]);
  const Node& rec = rules.node(rules.inputs()[1]);
  EXPECT_EQ(e.loc, (SourceLoc{"t.ra", 3, 10}));  // first use
  EXPECT_EQ(rec.loc, (SourceLoc{"t.ra", 4, 10}));
  EXPECT_EQ(e.declared.size(), 0u);
  EXPECT_EQ(rec.declared.size(), 0u);
  const Node& base = rules.node(rules.outputs()[0]);
  EXPECT_EQ(base.loc, (SourceLoc{"t.ra", 3, 3}));
  EXPECT_EQ(base.inputs, std::vector<NodeId>{e.id});
  const Node& step = rules.node(rules.outputs()[1]);
  EXPECT_EQ(step.loc, (SourceLoc{"t.ra", 4, 3}));
  const Node& proj = rules.node(step.inputs.at(0));
  ASSERT_EQ(proj.kind, OpKind::Project);
  EXPECT_EQ(proj.loc, (SourceLoc{"t.ra", 5, 18}));
  const Node& join = rules.node(proj.inputs.at(0));
  ASSERT_EQ(join.kind, OpKind::Join);
  EXPECT_EQ(join.inputs.at(0), rec.id);
  EXPECT_EQ(rules.node(join.inputs.at(1)).inputs, std::vector<NodeId>{e.id});
  for (const Node& n : rules.nodes()) EXPECT_EQ(n.loc.file, "t.ra") << describe_node(rules, n);
  // Rules never leak into the file's program.
  EXPECT_EQ(prog.size(), 3u);
}

TEST(RaParserFixpoint, MatchesDsl) {
  ParsedProgram p = parse_ra(kTransitiveClosure, "t.ra");
  ProgramBuilder b;
  Rel edges = b.input("edges", {{"src", Type::I32}, {"dst", Type::I32}});
  FixpointBuilder fp = b.fixpoint();
  Rel e = fp.use(edges);
  Rel path = fp.relation("path");
  fp.rule(path, e);
  fp.rule(path,
          path.join(e.project({as(col("src"), "mid"), as(col("dst"), "to")}), {"dst"}, {"mid"})
              .project({"src", as(col("to"), "dst")}));
  b.output(fp.result(path), "path");
  expect_same(p.program, b.program());  // the same IR, checked to the same typed graph
  EXPECT_NE(canonical(p.program).find("fixpoint 0 of (path) outer (edges)"), std::string::npos)
      << canonical(p.program);
}

// Several names make one group (mutual recursion): one shared def, one node each.
TEST(RaParserFixpoint, MutualRecursionSharesOneDef) {
  ParsedProgram p = parse_ra(
      "input zero(n i32);\n"
      "input succ(a i32, b i32);\n"
      "fixpoint max 10 {\n"
      "  even = zero;\n"
      "  odd = even |> join succ on n = a |> project b as n;\n"
      "  even = odd |> join succ on n = a |> project b as n;\n"
      "}\n"
      "output even;\n"
      "output odd;\n",
      "m.ra");
  const Program& prog = p.program;
  const Node* even = find_node(prog, OpKind::Fixpoint, "even");
  const Node* odd = find_node(prog, OpKind::Fixpoint, "odd");
  ASSERT_NE(even, nullptr);
  ASSERT_NE(odd, nullptr);
  EXPECT_EQ(even->fixpoint, odd->fixpoint);
  EXPECT_EQ(even->fixpoint_index, 0);
  EXPECT_EQ(odd->fixpoint_index, 1);
  EXPECT_EQ(even->loc, (SourceLoc{"m.ra", 4, 3}));
  EXPECT_EQ(odd->loc, (SourceLoc{"m.ra", 5, 3}));
  NodeId zero = find_node(prog, OpKind::Input, "zero")->id;
  NodeId succ = find_node(prog, OpKind::Input, "succ")->id;
  EXPECT_EQ(even->inputs, (std::vector<NodeId>{zero, succ}));
  EXPECT_EQ(odd->inputs, (std::vector<NodeId>{zero, succ}));
  const FixpointDef& def = *even->fixpoint;
  EXPECT_EQ(def.names, (std::vector<std::string>{"even", "odd"}));
  EXPECT_EQ(def.outer, (std::vector<std::string>{"zero", "succ"}));
  EXPECT_EQ(def.max_iterations, 10);
  EXPECT_EQ(names_of(*def.rules, def.rules->outputs()),
            (std::vector<std::string>{"even", "odd", "even"}));
  EXPECT_EQ(def.rules->inputs().size(), 4u);  // zero, even, succ, odd: one Input each

  std::string printed = print_program(prog);
  EXPECT_NE(printed.find(fmt::format("n{} = fixpoint odd [2 of 2: even, odd] (n{}, n{}) max 10\n",
                                     odd->id, zero, succ)),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("  | "), std::string::npos) << printed;  // the rules, once
  EXPECT_EQ(describe_node(prog, *even),
            fmt::format("fixpoint even [1 of 2: even, odd] (n{}, n{}) max 10", zero, succ));
}

// Names resolve in any order, and outer relations are listed in order of first use in
// the text (not in the order the parser builds nodes).
TEST(RaParserFixpoint, ForwardReferencesAndOuterOrder) {
  ParsedProgram p = parse_ra(
      "output r2;\n"
      "r2 = reach |> select x > 0;\n"
      "fixpoint {\n"
      "  reach = start;\n"
      "  reach = reach |> join (edge |> select w > 0) on x = s |> project t as x;\n"
      "}\n"
      "input start(x i32);\n"
      "input edge(s i32, t i32, w i32);\n",
      "f.ra");
  const Node* reach = find_node(p.program, OpKind::Fixpoint, "reach");
  ASSERT_NE(reach, nullptr);
  const FixpointDef& def = *reach->fixpoint;
  EXPECT_EQ(def.outer, (std::vector<std::string>{"start", "edge"}));
  EXPECT_EQ(names_of(*def.rules, def.rules->inputs()),
            (std::vector<std::string>{"start", "reach", "edge"}));
  EXPECT_EQ(reach->inputs, (std::vector<NodeId>{find_node(p.program, OpKind::Input, "start")->id,
                                                find_node(p.program, OpKind::Input, "edge")->id}));
  const Node* sel = find_node(p.program, OpKind::Select);
  ASSERT_NE(sel, nullptr);
  EXPECT_EQ(sel->inputs, std::vector<NodeId>{reach->id});
}

// `fixpoint` and `max` are keywords only where a block starts.
TEST(RaParserFixpoint, KeywordsAreNotReserved) {
  ParsedProgram p = parse_ra(
      "input g(fixpoint i32, max i32);\n"
      "fixpoint = g |> select fixpoint > max;\n"
      "fixpoint max 3 { max = fixpoint; max = max |> project fixpoint + 1 as fixpoint, max; }\n"
      "output max;\n",
      "k.ra");
  const Node* fp = find_node(p.program, OpKind::Fixpoint, "max");
  ASSERT_NE(fp, nullptr);
  EXPECT_EQ(fp->fixpoint->outer, std::vector<std::string>{"fixpoint"});
  EXPECT_EQ(fp->fixpoint->max_iterations, 3);
  EXPECT_EQ(p.program.node(fp->inputs.at(0)).kind, OpKind::Select);
}

struct Expected {
  uint32_t line, column;
  ErrorKind kind;
  std::string message;  // a substring of the message
};

void expect_diagnostics(const std::string& text, const std::vector<Expected>& want) {
  UserError e = parse_err(text);
  const auto& ds = e.diagnostics();
  std::string all = render_diagnostics(e, text);
  ASSERT_EQ(ds.size(), want.size()) << all;
  for (size_t i = 0; i < ds.size(); ++i) {
    EXPECT_EQ(ds[i].loc, (SourceLoc{"bad.ra", want[i].line, want[i].column})) << all;
    EXPECT_EQ(ds[i].kind, want[i].kind) << all;
    EXPECT_NE(ds[i].message.find(want[i].message), std::string::npos) << all;
  }
}

TEST(RaParserFixpointErrors, NestedFixpoint) {
  // Reported once; the inner block's rules still define their names (no cascade).
  expect_diagnostics(
      "input e(a i32);\n"
      "fixpoint {\n"
      "  p = e;\n"
      "  fixpoint max 2 { q = p; }\n"
      "}\n"
      "output q;\n",
      {{4, 3, ErrorKind::Syntax, "fixpoints do not nest"}});
}

TEST(RaParserFixpointErrors, EmptyBlock) {
  expect_diagnostics("input e(a i32);\nfixpoint { }\nfixpoint {\n ;\n}\noutput e;\n",
                     {{2, 10, ErrorKind::Syntax, "needs at least one rule"},
                      {3, 10, ErrorKind::Syntax, "needs at least one rule"}});
}

TEST(RaParserFixpointErrors, BadMax) {
  expect_diagnostics(
      "input e(a i32);\n"
      "fixpoint max 0 { p = e; }\n"
      "fixpoint max -1 { q = e; }\n"
      "fixpoint max 9999999999 { r = e; }\n"
      "fixpoint max 1.5 { s = e; }\n"
      "fixpoint max { t = e; }\n"
      "fixpoint e2 { u = e; }\n"
      "output union(p, q, r, s, t, u) as all;\n",
      {{2, 14, ErrorKind::Syntax, "'max' must be at least 1"},
       {3, 14, ErrorKind::Syntax, "'max' must be at least 1"},
       {4, 14, ErrorKind::Syntax, "'max' is too large (at most 1000000000)"},
       {5, 14, ErrorKind::Syntax, "expected the maximum number of iterations after 'max'"},
       {6, 14, ErrorKind::Syntax, "expected the maximum number of iterations after 'max'"},
       {7, 10, ErrorKind::Syntax, "expected '{' to open the fixpoint block, found 'e2'"}});
}

TEST(RaParserFixpointErrors, InputAndOutputInside) {
  UserError e = parse_err(
      "input e(a i32);\n"
      "fixpoint {\n"
      "  p = e;\n"
      "  output p;\n"
      "  input f(b i32);\n"
      "}\n"
      "output p;\n");
  ASSERT_EQ(e.diagnostics().size(), 2u) << e.what();
  EXPECT_EQ(e.diagnostics()[0].loc, (SourceLoc{"bad.ra", 4, 3}));
  EXPECT_EQ(e.diagnostics()[0].message, "'output' cannot appear inside a fixpoint block");
  EXPECT_EQ(e.diagnostics()[0].hint,
            "close the block (opened at line 2, column 10) with '}' and write outputs after it");
  EXPECT_EQ(e.diagnostics()[1].loc, (SourceLoc{"bad.ra", 5, 3}));
  EXPECT_EQ(e.diagnostics()[1].message, "'input' cannot appear inside a fixpoint block");
}

TEST(RaParserFixpointErrors, DefinedTwice) {
  expect_diagnostics(
      "input e(a i32);\n"
      "fixpoint { e = e; }\n"
      "fixpoint { p = e; }\n"
      "fixpoint { x = e; p = e; }\n"
      "q = e;\n"
      "fixpoint { q = e; }\n"
      "fixpoint { r = e; }\n"
      "r = e;\n"
      "output p;\n",
      {{2, 12, ErrorKind::DuplicateName, "relation 'e' is already defined"},
       {4, 19, ErrorKind::DuplicateName, "relation 'p' is already defined"},
       {6, 12, ErrorKind::DuplicateName, "relation 'q' is already defined"},
       {8, 1, ErrorKind::DuplicateName, "relation 'r' is already defined"}});
}

TEST(RaParserFixpointErrors, UnclosedBlock) {
  UserError e = parse_err("input e(a i32);\nfixpoint {\n  p = e;\n");
  ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
  EXPECT_EQ(e.first().loc, (SourceLoc{"bad.ra", 3, 9}));
  EXPECT_EQ(e.first().message, "expected '}' at the end of the fixpoint block");
  EXPECT_EQ(e.first().hint, "the block opened at line 2, column 10 is not closed");
}

TEST(RaParserFixpointErrors, RecoversInsideTheBlock) {
  // A broken rule is skipped up to its ';' (or the '}'); the block and the file go on,
  // and names whose rules failed are still defined.
  expect_diagnostics(
      "input e(a i32);\n"
      "fixpoint {\n"
      "  p = e |> selct a > 1;\n"
      "  p = p |> select a >;\n"
      "  q = p |> select (a }\n"
      "x = q |> select a > 1\n"
      "fixpoint { r = edgs; }\n"
      "}\n"
      "output union(p, q, r, x) as all;\n",
      {{3, 12, ErrorKind::Syntax, "unknown operator 'selct'"},
       {4, 22, ErrorKind::Syntax, "expected an expression, found ';'"},
       {5, 22, ErrorKind::Syntax, "expected ')'"},
       {6, 22, ErrorKind::Syntax, "expected ';' after statement"},
       {7, 16, ErrorKind::UnknownRelation, "unknown relation 'edgs'"},
       {8, 1, ErrorKind::Syntax, "expected a statement, found '}'"}});
}

TEST(RaParserFixpointErrors, MissingSemicolonBeforeBrace) {
  expect_diagnostics("input e(a i32);\nfixpoint { p = e }\noutput p;\n",
                     {{2, 18, ErrorKind::Syntax, "expected ';' after statement, found '}'"}});
}

TEST(RaParserFixpointErrors, NotARule) {
  expect_diagnostics(
      "input e(a i32);\nfixpoint {\n  p = e;\n  e |> distinct;\n  = e;\n}\noutput p;\n",
      {{4, 3, ErrorKind::Syntax, "expected a rule, found 'e'"},
       {5, 3, ErrorKind::Syntax, "expected a rule, found '='"}});
}

// ------------------------------------------------- fixpoint on the CPU reference

using IntRows = std::set<std::vector<int32_t>>;

HostRelation int_relation(const std::vector<std::string>& attrs, const IntRows& rows) {
  Schema s;
  for (const std::string& a : attrs) s.attributes.push_back({a, Type::I32});
  HostRelation r(s);
  for (const auto& row : rows) {
    std::vector<Value> v;
    for (int32_t x : row) v.push_back(Value::i32(x));
    r.append_row(v);
  }
  return r;
}

IntRows int_rows(const HostRelation& r) {
  IntRows out;
  for (size_t i = 0; i < r.num_rows(); ++i) {
    std::vector<int32_t> row;
    for (const Value& v : r.row(i)) row.push_back(v.as_i32());
    out.insert(row);
  }
  EXPECT_EQ(out.size(), r.num_rows()) << "duplicate tuples";
  return out;
}

// The outputs of a .ra program run by the CPU reference, each as a set of rows.
std::vector<IntRows> run_ra(const std::string& text,
                            const std::vector<std::pair<std::string, HostRelation>>& inputs) {
  std::vector<IntRows> out;
  try {
    Program checked = check(parse_ra(text, "run.ra").program);
    for (const HostRelation& r : execute_reference(checked, inputs)) out.push_back(int_rows(r));
  } catch (const UserError& e) {
    ADD_FAILURE() << render_diagnostics(e, text);
  }
  return out;
}

const IntRows kEdges = {{1, 2}, {2, 3}, {3, 4}, {5, 5}};

TEST(RaParserFixpoint, TransitiveClosureOnTheCpuReference) {
  auto out = run_ra(kTransitiveClosure, {{"edges", int_relation({"src", "dst"}, kEdges)}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], (IntRows{{1, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4}, {5, 5}}));
  // max 1: the edges and one more round, paths of at most 2 edges.
  std::string bounded = kTransitiveClosure;
  bounded.replace(bounded.find("fixpoint {"), 10, "fixpoint max 1 {");
  out = run_ra(bounded, {{"edges", int_relation({"src", "dst"}, kEdges)}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], (IntRows{{1, 2}, {1, 3}, {2, 3}, {2, 4}, {3, 4}, {5, 5}}));
}

TEST(RaParserFixpoint, MutualRecursionOnTheCpuReference) {
  auto out = run_ra(
      "input zero(n i32);\n"
      "input succ(a i32, b i32);\n"
      "fixpoint {\n"
      "  even = zero;\n"
      "  odd = even |> join succ on n = a |> project b as n;\n"
      "  even = odd |> join succ on n = a |> project b as n;\n"
      "}\n"
      "output even;\n"
      "output odd;\n",
      {{"zero", int_relation({"n"}, {{0}})},
       {"succ", int_relation({"a", "b"}, {{0, 1}, {1, 2}, {2, 3}, {3, 4}})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (IntRows{{0}, {2}, {4}}));
  EXPECT_EQ(out[1], (IntRows{{1}, {3}}));
}

// The recursion examples of examples/ra on small graphs, against hand-computed results.
TEST(RaExamples, RecursionExamplesOnTheCpuReference) {
  auto run_example = [](const std::string& file,
                        const std::vector<std::pair<std::string, HostRelation>>& inputs) {
    return run_ra(test::read_text(std::filesystem::path(RANC_EXAMPLES_RA_DIR) / file), inputs);
  };
  auto pairs = [](const IntRows& rows) { return int_relation({"src", "dst"}, rows); };
  EXPECT_EQ(run_example("transitive_closure.ra", {{"edges", pairs(kEdges)}}),
            (std::vector<IntRows>{{{1, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4}, {5, 5}}}));
  EXPECT_EQ(
      run_example("reachability.ra", {{"edges", pairs({{1, 2}, {2, 3}, {3, 1}, {4, 5}, {2, 6}})},
                                      {"source", int_relation({"node"}, {{2}})}}),
      (std::vector<IntRows>{{{1}, {2}, {3}, {6}}}));
  // 1 has children 2 and 3; 4 is 2's child, 5 is 3's; 6 is 4's child, 7 is 5's.
  EXPECT_EQ(
      run_example("same_generation.ra",
                  {{"parent", int_relation({"child", "par"},
                                           {{2, 1}, {3, 1}, {4, 2}, {5, 3}, {6, 4}, {7, 5}})}}),
      (std::vector<IntRows>{{{2, 3}, {3, 2}, {4, 5}, {5, 4}, {6, 7}, {7, 6}}}));
  EXPECT_EQ(
      run_example("connected_components.ra",
                  {{"edges", pairs({{1, 2}, {2, 3}, {5, 4}, {6, 6}, {8, 7}})}}),
      (std::vector<IntRows>{{{1, 1}, {2, 1}, {3, 1}, {4, 4}, {5, 4}, {6, 6}, {7, 7}, {8, 7}}}));
}

TEST(RaExamples, AllExamplesParseAndCheck) {
  auto files = test::files_in(RANC_EXAMPLES_RA_DIR, ".ra");
  ASSERT_GE(files.size(), 3u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    try {
      ParsedProgram p = parse_ra_file(f.string());
      Program c = check(p.program);
      EXPECT_FALSE(c.outputs().empty());
    } catch (const UserError& e) {
      ADD_FAILURE() << render_diagnostics(e, test::read_text(f));
    }
  }
}

}  // namespace
}  // namespace ranc
