// The .ra parser: every construct parses to the same program the C++ DSL builds,
// locations are right, names resolve in any order, diagnostics render like a
// compiler's, and hostile input (deep nesting, huge chains) fails cleanly.
#include <gtest/gtest.h>

#include <regex>

#include "ranc/dsl.h"
#include "ranc/frontend/ra_lexer.h"
#include "ranc/frontend/ra_parser.h"
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
