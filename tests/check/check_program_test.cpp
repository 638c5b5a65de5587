// Tests of check(): a corpus of malformed programs, each asserting the error kind,
// the message and the location of the DSL call that made the mistake; well-formed
// programs checked Before / Expected; and random garbage graphs that must give a
// UserError or a checked program, never anything else.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <functional>
#include <random>
#include <regex>

#include "ranc/dsl.h"
#include "ranc/ir/program.h"

namespace ranc {
namespace {

std::string all_diagnostics(const UserError& e) {
  std::string s;
  for (const auto& d : e.diagnostics())
    s += fmt::format("  [{}] {}\n", error_kind_name(d.kind), d.str());
  return s;
}

// check(p) must fail with a diagnostic of `kind` whose message matches `pattern`
// (regex search), located at this file, `line`; `hint` (if given) must match too.
testing::AssertionResult fails_with(const Program& p, ErrorKind kind, const std::string& pattern,
                                    int line, const std::string& hint = {}) {
  try {
    check(p);
  } catch (const UserError& e) {
    for (const auto& d : e.diagnostics()) {
      if (d.kind == kind && std::regex_search(d.message, std::regex(pattern)) &&
          d.loc.file == __FILE__ && d.loc.line == static_cast<uint32_t>(line) &&
          (hint.empty() || std::regex_search(d.hint, std::regex(hint))))
        return testing::AssertionSuccess();
    }
    return testing::AssertionFailure() << "no " << error_kind_name(kind) << " matching /" << pattern
                                       << "/ at line " << line << "; got:\n"
                                       << all_diagnostics(e);
  } catch (const std::exception& e) {
    return testing::AssertionFailure() << "threw something else: " << e.what();
  }
  return testing::AssertionFailure() << "check() succeeded";
}

size_t diagnostic_count(const Program& p) {
  try {
    check(p);
  } catch (const UserError& e) {
    return e.diagnostics().size();
  }
  return 0;
}

class Corpus : public testing::Test {
 protected:
  ProgramBuilder b;
  Rel li = b.input("lineitem",
                   {{"l_orderkey", Type::I64},
                    {"l_price", Type::F64},
                    {"l_shipdate", Type::Date},
                    {"l_flag", Type::String},
                    {"l_qty", Type::I32},
                    {"l_ok", Type::Bool}},
                   1);
  Rel ord = b.input(
      "orders", {{"o_orderkey", Type::I64}, {"o_date", Type::Date}, {"o_prio", Type::String}}, 1);
  void out(const Rel& r) { b.output(r, "out"); }
};

// The corpus keeps each DSL call and its `__LINE__` capture on one line, which
// clang-format would split.
// clang-format off

// ---- select and expressions ----

TEST_F(Corpus, SelectUnknownAttributeListsInputAndSuggests) {
  auto r = li.select(col("l_pric") > 100.0); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::UnknownAttribute,
                         "unknown attribute 'l_pric' in select predicate; input has: l_orderkey, "
                         "l_price, l_shipdate, l_flag, l_qty, l_ok",
                         line, "did you mean 'l_price'\\?"));
}

TEST_F(Corpus, SelectPredicateNotBool) {
  auto r = li.select(col("l_price") + 1); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch,
                         "select predicate must be bool, but \\(l_price \\+ 1\\) is f64", line));
}

TEST_F(Corpus, CompareStringWithInteger) {
  auto r = li.select(col("l_flag") == 1); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch,
                         "cannot apply '=' to string and i32 in select predicate", line));
}

TEST_F(Corpus, DatePlusFloat) {
  auto r = li.select(col("l_shipdate") + 1.5 > col("l_shipdate")); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch, "cannot apply '\\+' to date and f64",
                         line, "date \\+ i32"));
}

TEST_F(Corpus, DatePlusI64SuggestsCast) {
  auto r = li.select(col("l_shipdate") + col("l_orderkey") > col("l_shipdate")); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch, "cannot apply '\\+' to date and i64",
                         line, "cast the i64 to i32"));
}

TEST_F(Corpus, BoolOrderedComparison) {
  auto r = li.select(col("l_ok") < true); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch, "cannot apply '<' to bool and bool",
                         line, "only be compared with = and <>"));
}

TEST_F(Corpus, AndOnNonBool) {
  auto r = li.select(col("l_qty") && col("l_price") > 1.0); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch, "'and' needs bool operands, got i32 and bool", line));
}

TEST_F(Corpus, NotOnInteger) {
  auto r = li.select(!col("l_qty")); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch, "'not' needs a bool operand, got i32", line));
}

TEST_F(Corpus, NegateString) {
  auto r = li.project({as(-col("l_flag"), "neg")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch,
                         "cannot negate a value of type string in project expression 'neg'", line));
}

TEST_F(Corpus, ModuloOnFloat) {
  auto r = li.project({as(col("l_price") % 2, "m")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch, "cannot apply '%' to f64 and i32",
                         line, "integers only"));
}

TEST_F(Corpus, CastStringToInteger) {
  auto r = li.project({as(cast(col("l_flag"), Type::I32), "c")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch, "cannot cast string to i32", line,
                         "strings cannot be cast"));
}

TEST_F(Corpus, CaseBranchesIncompatible) {
  auto r = li.project({as(case_when({{col("l_ok"), col("l_qty")}}, col("l_flag")), "c")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch,
                         "case branches have incompatible types i32 and string", line));
}

TEST_F(Corpus, CaseConditionNotBool) {
  auto r = li.project({as(case_when({{col("l_qty"), 1}}, 2), "c")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch,
                         "case condition l_qty must be bool, but it is i32", line));
}

TEST_F(Corpus, YearOfInteger) {
  auto r = li.project({as(year(col("l_qty")), "y")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch, "year\\(\\) needs a date, got i32", line));
}

TEST_F(Corpus, LikeOnNumber) {
  auto r = li.select(like(col("l_price"), "1%")); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch, "like needs a string, got f64", line));
}

TEST_F(Corpus, InListMixedKinds) {
  auto r = li.select(in_list(col("l_flag"), {"A", 3})); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch,
                         "cannot compare string with the i32 value 3 in 'in'", line));
}

TEST_F(Corpus, BetweenOnBool) {
  auto r = li.select(between(col("l_ok"), false, true)); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch, "cannot compare bool with bounds",
                         line, "no range"));
}

// ---- project ----

TEST_F(Corpus, ProjectDuplicateName) {
  auto r = li.project({"l_price", as(col("l_qty") * 2, "l_price")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::DuplicateName,
                         "attribute 'l_price' appears twice in project \\(positions 1 and 2\\)",
                         line));
}

TEST_F(Corpus, ProjectUnknownAttribute) {
  auto r = li.project({as(col("qty") * 2, "twice")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::UnknownAttribute,
                         "unknown attribute 'qty' in project expression 'twice'", line));
}

TEST_F(Corpus, ProjectNothing) {
  auto r = li.project({}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::InvalidArgument, "project keeps no attributes", line));
}

// ---- product and set operations ----

TEST_F(Corpus, ProductNameClash) {
  auto r = li.product(li.project({"l_qty"})); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::DuplicateName,
                         "attribute 'l_qty' is in both inputs of product", line,
                         "rename 'l_qty' on one side with a project"));
}

TEST_F(Corpus, UnionArityDiffers) {
  auto r = li.project({"l_qty"}).union_with(ord); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::SchemaMismatch,
                         "inputs of union are not compatible: left \\(l_qty i32\\), right "
                         "\\(o_orderkey i64, o_date date, o_prio string \\| key o_orderkey\\); "
                         "the left has 1 attributes, the right 3",
                         line));
}

TEST_F(Corpus, IntersectTypesDiffer) {
  auto r = li.project({"l_orderkey", "l_flag"}).intersect(ord.project({"o_orderkey", "o_date"})); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::SchemaMismatch,
                         "attribute 2 is l_flag string on the left but o_date date on the right",
                         line));
}

// ---- join ----

TEST_F(Corpus, JoinUnknownLeftKey) {
  auto r = li.join(ord, {"l_orderkye"}, {"o_orderkey"}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::UnknownAttribute,
                         "unknown attribute 'l_orderkye' in join keys; the left input has: "
                         "l_orderkey",
                         line, "did you mean 'l_orderkey'"));
}

TEST_F(Corpus, JoinUnknownRightKey) {
  auto r = li.join(ord, {"l_orderkey"}, {"l_orderkey"}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::UnknownAttribute,
                         "unknown attribute 'l_orderkey' in join keys; the right input has: "
                         "o_orderkey, o_date, o_prio",
                         line));
}

TEST_F(Corpus, JoinKeyTypesDiffer) {
  auto r = li.join(ord, {"l_orderkey"}, {"o_date"}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch,
                         "join key types differ: left 'l_orderkey' is i64 but right 'o_date' is date",
                         line));
}

TEST_F(Corpus, JoinWithoutKeys) {
  auto r = li.join(ord, {}, {}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::InvalidArgument,
                         "join needs at least one key attribute", line, "product"));
}

TEST_F(Corpus, JoinKeyCountsDiffer) {
  auto r = li.join(ord, {"l_orderkey", "l_shipdate"}, {"o_orderkey"}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::InvalidArgument,
                         "join has 2 left key\\(s\\) but 1 right key\\(s\\)", line));
}

TEST_F(Corpus, JoinNameClash) {
  auto o2 = ord.project({"o_orderkey", as(col("o_prio"), "l_flag")});
  auto r = li.join(o2, {"l_orderkey"}, {"o_orderkey"}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::DuplicateName,
                         "attribute 'l_flag' is in both inputs of join", line,
                         "rename 'l_flag' on one side with a project before the join"));
}

TEST_F(Corpus, JoinResidualNotBool) {
  auto r = li.join(ord, {"l_orderkey"}, {"o_orderkey"}, JoinKind::Inner, col("o_date") - col("l_shipdate")); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch,
                         "join residual predicate must be bool, but \\(o_date - l_shipdate\\) is i32",
                         line));
}

TEST_F(Corpus, SemiJoinResidualUnknownAttribute) {
  auto r = li.semi_join(ord, {"l_orderkey"}, {"o_orderkey"}, col("o_dat") < col("l_shipdate")); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::UnknownAttribute,
                         "unknown attribute 'o_dat' in join residual predicate", line,
                         "did you mean 'o_date'"));
}

// ---- reduce ----

TEST_F(Corpus, ReduceUnknownGroupKey) {
  auto r = li.reduce({"l_flg"}, {count("n")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::UnknownAttribute,
                         "unknown attribute 'l_flg' in reduce group keys", line,
                         "did you mean 'l_flag'"));
}

TEST_F(Corpus, ReduceDuplicateGroupKey) {
  auto r = li.reduce({"l_flag", "l_flag"}, {count("n")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::DuplicateName,
                         "attribute 'l_flag' appears twice in the reduce group keys", line));
}

TEST_F(Corpus, ReduceAggregateClashesWithGroupKey) {
  auto r = li.reduce({"l_flag"}, {sum(col("l_price"), "l_flag")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::DuplicateName,
                         "aggregate name 'l_flag' is already used by a group key", line));
}

TEST_F(Corpus, ReduceDuplicateAggregateName) {
  auto r = li.reduce({}, {sum(col("l_price"), "x"), max(col("l_qty"), "x")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::DuplicateName,
                         "aggregate name 'x' is already used by an aggregate", line));
}

TEST_F(Corpus, SumOfString) {
  auto r = li.reduce({"l_orderkey"}, {sum(col("l_flag"), "s")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch,
                         "sum\\(\\) needs a numeric argument, but l_flag is string \\(aggregate 's'\\)",
                         line));
}

TEST_F(Corpus, AvgOfDate) {
  auto r = li.reduce({}, {avg(col("l_shipdate"), "a")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch, "avg\\(\\) needs a numeric argument", line));
}

TEST_F(Corpus, MinOfBool) {
  auto r = li.reduce({}, {min(col("l_ok"), "m")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::TypeMismatch,
                         "min\\(\\) needs a non-bool argument, but l_ok is bool", line));
}

TEST_F(Corpus, CountDistinctWithoutArgument) {
  Aggregate a{"n", AggFunc::Count, Expr(), {}};
  a.distinct = true;
  auto r = li.reduce({}, {a}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::InvalidArgument,
                         "count\\(distinct\\) needs an argument \\(aggregate 'n'\\)", line));
}

TEST_F(Corpus, SumWithoutArgument) {
  auto r = li.reduce({}, {Aggregate{"s", AggFunc::Sum, Expr(), {}}}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::InvalidArgument, "sum\\(\\) needs an argument", line));
}

TEST_F(Corpus, ReduceWithNothing) {
  auto r = li.reduce({}, {}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::InvalidArgument,
                         "reduce has neither group keys nor aggregates", line));
}

// ---- sort, limit ----

TEST_F(Corpus, SortUnknownKey) {
  auto r = li.sort({"l_shpdate"}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::UnknownAttribute,
                         "unknown attribute 'l_shpdate' in sort keys", line,
                         "did you mean 'l_shipdate'"));
}

TEST_F(Corpus, SortDuplicateKey) {
  auto r = li.sort({"l_qty", desc("l_qty")}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::DuplicateName,
                         "attribute 'l_qty' appears twice in the sort keys", line));
}

TEST_F(Corpus, SortWithoutKeys) {
  auto r = li.sort({}); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::InvalidArgument, "sort needs at least one key", line));
}

TEST_F(Corpus, NegativeLimit) {
  auto r = li.limit(-1); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::InvalidArgument, "limit count must be >= 0, got -1", line));
}

TEST_F(Corpus, NegativeOffset) {
  auto r = li.limit(10, -5); const int line = __LINE__;
  out(r);
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::InvalidArgument, "limit offset must be >= 0, got -5", line));
}

// ---- inputs, outputs, graph ----

TEST(CheckInputs, DuplicateAttribute) {
  ProgramBuilder b;
  auto r = b.input("t", {{"a", Type::I32}, {"a", Type::I64}}); const int line = __LINE__;
  b.output(r, "out");
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::DuplicateName,
                         "attribute 'a' is declared twice in input relation 't'", line));
}

TEST(CheckInputs, NoAttributes) {
  ProgramBuilder b;
  auto r = b.input("t", {}); const int line = __LINE__;
  b.output(r, "out");
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::InvalidArgument,
                         "input relation 't' declares no attributes", line));
}

TEST(CheckInputs, KeyLongerThanSchema) {
  ProgramBuilder b;
  auto r = b.input("t", {{"a", Type::I32}}, 2); const int line = __LINE__;
  b.output(r, "out");
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::InvalidArgument,
                         "the key of input relation 't' has 2 attributes, but the relation has only 1",
                         line));
}

TEST(CheckInputs, DuplicateRelationName) {
  ProgramBuilder b;
  auto r1 = b.input("t", {{"a", Type::I32}});
  auto r2 = b.input("t", {{"b", Type::I32}}); const int line = __LINE__;
  b.output(r1, "o1");
  b.output(r2, "o2");
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::DuplicateName,
                         "input relation 't' is defined twice", line));
}

TEST(CheckOutputs, DuplicateOutputName) {
  ProgramBuilder b;
  auto r = b.input("t", {{"a", Type::I32}});
  b.output(r, "o");
  b.output(r.distinct(), "o"); const int line = __LINE__;
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::DuplicateName, "output 'o' is defined twice", line));
}

TEST(CheckOutputs, EmptyOutputName) {
  ProgramBuilder b;
  auto r = b.input("t", {{"a", Type::I32}});
  b.output(r, ""); const int line = __LINE__;
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::InvalidArgument, "output has no name", line));
}

TEST(CheckOutputs, NoOutput) {
  ProgramBuilder b;
  b.input("t", {{"a", Type::I32}}).select(col("a") > 1); const int line = __LINE__;
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::NoOutput, "the program has no outputs", line));
}

TEST(CheckGraph, RelationFromAnotherBuilder) {
  ProgramBuilder b1, b2;
  auto t = b1.input("t", {{"a", Type::I32}});
  auto u = b2.input("u", {{"b", Type::I32}});
  auto r = t.product(u); const int line = __LINE__;
  b1.output(r, "out");
  EXPECT_TRUE(fails_with(b1.program(), ErrorKind::InvalidGraph,
                         "product uses a relation from another ProgramBuilder", line));
}

// Raw Program API: what the DSL cannot express but the .ra front end or a bug can.
Node raw(OpKind kind, std::vector<NodeId> inputs, int line, std::string name = {}) {
  Node n;
  n.kind = kind;
  n.inputs = std::move(inputs);
  n.name = std::move(name);
  n.loc = SourceLoc{__FILE__, static_cast<uint32_t>(line), 0};
  if (kind == OpKind::Input) n.declared = Schema{{{"x", Type::I32}}, 0};
  if (kind == OpKind::Select) n.predicate = col("x") > 0;
  return n;
}

TEST(CheckGraph, DanglingInputId) {
  Program p;
  p.add(raw(OpKind::Input, {}, __LINE__, "t"));
  const int line = __LINE__; p.add(raw(OpKind::Select, {7}, line));
  p.add(raw(OpKind::Output, {1}, __LINE__, "out"));
  EXPECT_TRUE(fails_with(p, ErrorKind::InvalidGraph,
                         "select \\(node n1\\) refers to node n7, which does not exist", line));
}

TEST(CheckGraph, NegativeInputId) {
  Program p;
  p.add(raw(OpKind::Input, {}, __LINE__, "t"));
  const int line = __LINE__; p.add(raw(OpKind::Output, {-5}, line, "out"));
  EXPECT_TRUE(fails_with(p, ErrorKind::InvalidGraph, "refers to node n-5, which does not exist", line));
}

TEST(CheckGraph, WrongArity) {
  Program p;
  p.add(raw(OpKind::Input, {}, __LINE__, "t"));
  const int line = __LINE__; p.add(raw(OpKind::Join, {0}, line));
  p.add(raw(OpKind::Output, {1}, __LINE__, "out"));
  EXPECT_TRUE(fails_with(p, ErrorKind::InvalidGraph, "join takes 2 input\\(s\\), but node n1 has 1", line));
}

TEST(CheckGraph, InputWithInputs) {
  Program p;
  p.add(raw(OpKind::Input, {}, __LINE__, "t"));
  const int line = __LINE__; p.add(raw(OpKind::Input, {0}, line, "u"));
  p.add(raw(OpKind::Output, {1}, __LINE__, "out"));
  EXPECT_TRUE(fails_with(p, ErrorKind::InvalidGraph, "input takes 0 input\\(s\\), but node n1 has 1", line));
}

TEST(CheckGraph, CycleOfNamedRelations) {
  Program p;
  const int line_a = __LINE__; p.add(raw(OpKind::Select, {1}, line_a, "a"));
  p.add(raw(OpKind::Select, {0}, __LINE__, "b"));
  p.add(raw(OpKind::Output, {0}, __LINE__, "out"));
  EXPECT_TRUE(fails_with(p, ErrorKind::Cycle, "^relation 'a' depends on itself: a -> b -> a$", line_a));
}

TEST(CheckGraph, SelfLoopOfUnnamedNode) {
  Program p;
  p.add(raw(OpKind::Input, {}, __LINE__, "t"));
  const int line = __LINE__; p.add(raw(OpKind::Union, {0, 1}, line));
  p.add(raw(OpKind::Output, {1}, __LINE__, "out"));
  EXPECT_TRUE(fails_with(p, ErrorKind::Cycle,
                         "^node n1 \\(union n0, n1\\) depends on itself: n1 \\(union\\) -> n1 \\(union\\)$",
                         line));
}

TEST(CheckGraph, OutputUsedAsInput) {
  Program p;
  p.add(raw(OpKind::Input, {}, __LINE__, "t"));
  p.add(raw(OpKind::Output, {0}, __LINE__, "first"));
  const int line = __LINE__; p.add(raw(OpKind::Distinct, {1}, line));
  p.add(raw(OpKind::Output, {2}, __LINE__, "second"));
  EXPECT_TRUE(fails_with(p, ErrorKind::InvalidGraph, "distinct uses output 'first' as its input", line));
}

// ---- several mistakes at once ----

TEST_F(Corpus, ReportsEveryIndependentMistake) {
  auto r1 = li.select(col("nope") > 1); const int line1 = __LINE__;
  auto r2 = ord.sort({"also_nope"}); const int line2 = __LINE__;
  b.output(r1, "o1");
  b.output(r2, "o2");
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::UnknownAttribute, "'nope'", line1));
  EXPECT_TRUE(fails_with(b.program(), ErrorKind::UnknownAttribute, "'also_nope'", line2));
  EXPECT_EQ(diagnostic_count(b.program()), 2u);
}

// clang-format on

TEST_F(Corpus, SkipsNodesDownstreamOfAFailure) {
  auto r = li.select(col("nope") > 1).project({"l_qty", "l_qty"}).sort({"zzz"});
  out(r);
  EXPECT_EQ(diagnostic_count(b.program()), 1u);
}

TEST_F(Corpus, SeveralMistakesInOneExpression) {
  auto r = li.select(col("x1") > 1 && col("x2") < 2);
  out(r);
  EXPECT_EQ(diagnostic_count(b.program()), 2u);
}

TEST_F(Corpus, ExpressionLocationWinsOverNodeLocation) {
  SourceLoc at{"query.ra", 12, 7};
  auto r = li.select(col("l_price", at) > col("l_flag"));
  out(r);
  try {
    check(b.program());
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.first().kind, ErrorKind::TypeMismatch);
    // The comparison itself has no location, so the node's is used.
    EXPECT_EQ(e.first().loc.file, __FILE__);
  }
  ProgramBuilder b2;
  auto t = b2.input("t", {{"a", Type::I32}});
  b2.output(t.select(col("b", at) > 1), "o");
  try {
    check(b2.program());
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.first().loc, at);
  }
}

// ---- well-formed programs: Before (DSL) / Expected (schema, order, key) ----

TEST_F(Corpus, CheckedProgramKeepsOnlyWhatOutputsNeedInTopologicalOrder) {
  // Property: unused nodes are dropped; inputs come before users; outputs last, in
  // the order they were declared.
  auto unused = li.select(col("l_qty") > 3);
  (void)unused;
  auto top = ord.sort({desc("o_date")});
  b.output(top, "first");
  b.output(li.project({"l_orderkey"}), "second");
  Program c = check(b.program());
  EXPECT_TRUE(c.checked());
  EXPECT_EQ(print_program(c),
            "n0 = input lineitem  -> (l_orderkey i64, l_price f64, l_shipdate date, l_flag string, "
            "l_qty i32, l_ok bool | key l_orderkey)\n"
            "n1 = input orders  -> (o_orderkey i64, o_date date, o_prio string | key o_orderkey)\n"
            "n2 = sort n1 by (o_date desc)  -> (o_orderkey i64, o_date date, o_prio string | key "
            "o_orderkey) [order: o_date desc, o_orderkey asc, o_prio asc]\n"
            "n3 = project n0 (l_orderkey)  -> (l_orderkey i64 | key l_orderkey)\n"
            "n4 = output n2 as first  -> (o_orderkey i64, o_date date, o_prio string | key "
            "o_orderkey) [order: o_date desc, o_orderkey asc, o_prio asc]\n"
            "n5 = output n3 as second  -> (l_orderkey i64 | key l_orderkey)\n");
  ASSERT_EQ(c.outputs().size(), 2u);
  EXPECT_EQ(c.node(c.outputs()[0]).name, "first");
}

TEST_F(Corpus, ForwardReferencesAreRenumbered) {
  // Property: a program whose nodes refer to later nodes (the .ra language allows
  // it) comes out in topological order.
  Program p;
  p.add(raw(OpKind::Output, {1}, __LINE__, "out"));
  p.add(raw(OpKind::Select, {2}, __LINE__));
  p.add(raw(OpKind::Input, {}, __LINE__, "t"));
  Program c = check(p);
  EXPECT_EQ(print_program(c),
            "n0 = input t  -> (x i32)\n"
            "n1 = select n0 where (x > 0)  -> (x i32)\n"
            "n2 = output n1 as out  -> (x i32)\n");
}

TEST_F(Corpus, OrderFlowsThroughSelectProjectLimitDistinct) {
  // Property: select/limit/distinct keep the order; project keeps the prefix whose
  // attributes pass through (renamed and moved are fine) and cuts at the first
  // dropped or computed one.
  auto s = li.sort({"l_flag", desc("l_qty")});
  auto p = s.select(col("l_ok"))
               .limit(5)
               .distinct()
               .project({as(col("l_qty"), "q"), "l_flag", as(col("l_orderkey") + 1, "l_orderkey")});
  out(p);
  Program c = check(b.program());
  const Node& n = c.node(c.outputs()[0]);
  EXPECT_EQ(n.schema.str(), "(q i32, l_flag string, l_orderkey i64)");
  ASSERT_EQ(n.order.size(), 2u);
  EXPECT_EQ(n.order[0].attr, "l_flag");
  EXPECT_EQ(n.order[0].index, 1);
  EXPECT_FALSE(n.order[0].descending);
  EXPECT_EQ(n.order[1].attr, "q");
  EXPECT_EQ(n.order[1].index, 0);
  EXPECT_TRUE(n.order[1].descending);
}

TEST_F(Corpus, NoOrderClaimedForJoinReduceUnionProduct) {
  auto s = li.sort({"l_orderkey"});
  b.output(s.join(ord, {"l_orderkey"}, {"o_orderkey"}), "j");
  b.output(s.reduce({"l_orderkey"}, {count("n")}), "r");
  b.output(s.project({"l_orderkey"}).union_with(ord.project({"o_orderkey"})), "u");
  b.output(s.product(ord), "p");
  Program c = check(b.program());
  for (NodeId id : c.outputs()) EXPECT_TRUE(c.node(id).order.empty()) << c.node(id).name;
}

TEST_F(Corpus, JoinSchemas) {
  // Property: inner = left attributes then the right's non-key attributes; semi and
  // anti = the left's; the residual sees the inner join's attributes.
  b.output(li.join(ord, {"l_orderkey"}, {"o_orderkey"}, JoinKind::Inner,
                   col("o_date") < col("l_shipdate")),
           "inner");
  b.output(li.anti_join(ord, {"l_orderkey"}, {"o_orderkey"}, col("o_date") < col("l_shipdate")),
           "anti");
  Program c = check(b.program());
  const Node& inner = c.node(c.outputs()[0]);
  EXPECT_EQ(inner.schema.str(),
            "(l_orderkey i64, l_price f64, l_shipdate date, l_flag string, l_qty i32, l_ok bool, "
            "o_date date, o_prio string)");
  const Node& anti = c.node(c.outputs()[1]);
  EXPECT_EQ(anti.schema, c.node(0).schema);
  const Node& join = c.node(anti.inputs[0]);
  EXPECT_EQ(join.left_key_index, std::vector<int32_t>{0});
  EXPECT_EQ(join.right_key_index, std::vector<int32_t>{0});
  EXPECT_EQ(join.predicate->args[0]->attr_index, 6);  // o_date in the inner join's schema
}

TEST_F(Corpus, ReduceSchemaAndTypes) {
  // Property: group keys then aggregates; sum of ints is i64, of floats f64; count
  // i64; min/max keep the type; avg f64; key = the group keys.
  b.output(
      li.reduce({"l_flag", "l_shipdate"},
                {sum(col("l_qty"), "sq"), sum(col("l_price"), "sp"), count("n"),
                 min(col("l_flag"), "mf"), max(col("l_shipdate"), "md"), avg(col("l_qty"), "aq")}),
      "r");
  Program c = check(b.program());
  const Node& r = c.node(c.node(c.outputs()[0]).inputs[0]);
  EXPECT_EQ(r.schema.str(),
            "(l_flag string, l_shipdate date, sq i64, sp f64, n i64, mf string, md date, aq f64 | "
            "key l_flag, l_shipdate)");
  EXPECT_EQ(r.group_key_index, (std::vector<int32_t>{3, 2}));
}

TEST_F(Corpus, ProjectKeyIsPassedThroughPrefix) {
  ProgramBuilder b2;
  auto t = b2.input("t", {{"a", Type::I32}, {"b", Type::I32}, {"c", Type::I32}}, 2);
  b2.output(t.project({"a", "b"}), "kept");
  b2.output(t.project({as(col("a"), "x"), "c"}), "renamed_prefix");
  b2.output(t.project({"b", "a"}), "moved");
  Program c = check(b2.program());
  EXPECT_EQ(c.node(c.outputs()[0]).schema.key_size, 2u);
  EXPECT_EQ(c.node(c.outputs()[1]).schema.key_size, 1u);
  EXPECT_EQ(c.node(c.outputs()[2]).schema.key_size, 0u);
}

TEST_F(Corpus, CheckingACheckedProgramAgainGivesTheSameProgram) {
  auto r = li.select(col("l_qty") + 1 > col("l_price")).sort({"l_price"});
  out(r);
  Program c1 = check(b.program());
  Program c2 = check(c1);
  EXPECT_EQ(print_program(c1), print_program(c2));
}

// ---- random garbage never crashes ----

TEST(CheckRandom, GarbageGraphsGiveUserErrorOrACheckedProgram) {
  std::mt19937 rng(20261122);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const std::vector<std::string> names = {"a", "b", "c", "", "a", "x", "l_price"};
  const std::vector<Type> types(std::begin(kAllTypes), std::end(kAllTypes));
  auto name = [&] { return names[static_cast<size_t>(pick(static_cast<int>(names.size())))]; };
  std::function<Expr(int)> expr = [&](int depth) -> Expr {
    int k = depth > 2 ? pick(2) : pick(11);
    switch (k) {
      case 0:
        return col(name());
      case 1:
        return lit(std::vector<Value>{Value::i32(1), Value::f64(2.5), Value::boolean(true),
                                      Value::string("s"), Value::date(3),
                                      Value::i64(4)}[static_cast<size_t>(pick(6))]);
      case 2:
        return make_unary(static_cast<UnaryOp>(pick(2)), expr(depth + 1));
      case 3:
        return make_binary(static_cast<BinaryOp>(pick(13)), expr(depth + 1), expr(depth + 1));
      case 4:
        return between(expr(depth + 1), expr(depth + 1), expr(depth + 1));
      case 5:
        return in_list(expr(depth + 1), {expr(depth + 1)});
      case 6:
        return cast(expr(depth + 1), types[static_cast<size_t>(pick(7))]);
      case 7:
        return case_when({{expr(depth + 1), expr(depth + 1)}}, expr(depth + 1));
      case 8:
        return year(expr(depth + 1));
      case 9:
        return like(expr(depth + 1), "a%");
      default:
        return Expr();  // a missing expression
    }
  };
  int succeeded = 0, failed = 0;
  // Odd rounds build garbage edges; even rounds a well-formed graph (inputs first,
  // valid edges, outputs last) with garbage parameters, to reach the typing rules.
  for (int round = 0; round < 1000; ++round) {
    bool wild = round % 2 == 1;
    Program p;
    int size = 1 + pick(10);
    for (int i = 0; i < size; ++i) {
      Node n;
      if (wild) {
        n.kind = static_cast<OpKind>(pick(static_cast<int>(OpKind::Output) + 1));
      } else if (i < 2) {
        n.kind = OpKind::Input;
      } else {
        n.kind = i == size - 1 ? OpKind::Output : static_cast<OpKind>(1 + pick(11));
      }
      int arity = wild && pick(5) == 0 ? pick(4) : op_arity(n.kind);
      for (int j = 0; j < arity; ++j)
        n.inputs.push_back(wild ? (pick(6) == 0 ? pick(30) - 15 : pick(size)) : pick(i));
      n.name = wild ? name() : fmt::format("r{}", i);
      for (int j = wild ? pick(4) : 1 + pick(3); j > 0; --j)
        n.declared.attributes.push_back(
            {wild ? name() : fmt::format("a{}_{}", i, j), types[static_cast<size_t>(pick(7))]});
      n.declared.key_size = static_cast<size_t>(pick(3));
      if (pick(3)) n.predicate = expr(0);
      for (int j = pick(3); j > 0; --j) n.exprs.push_back({name(), expr(0), {}});
      n.join_kind = static_cast<JoinKind>(pick(3));
      for (int j = pick(3); j > 0; --j) n.left_keys.push_back(name());
      for (int j = pick(3); j > 0; --j) n.right_keys.push_back(name());
      for (int j = pick(3); j > 0; --j) n.group_keys.push_back(name());
      for (int j = pick(3); j > 0; --j)
        n.aggregates.push_back({name(), static_cast<AggFunc>(pick(5)), expr(1), {}});
      for (int j = pick(3); j > 0; --j) n.sort_keys.push_back({name(), pick(2) == 1, {}, -1});
      n.limit = pick(4) - 1;
      n.offset = pick(4) - 1;
      p.add(std::move(n));
    }
    try {
      Program c = check(p);
      EXPECT_TRUE(c.checked());
      (void)print_program(c);
      ++succeeded;
    } catch (const UserError& e) {
      EXPECT_FALSE(e.diagnostics().empty());
      for (const auto& n : p.nodes()) (void)describe_node(p, n);
      ++failed;
    }
    // Anything else escapes and fails the test.
  }
  EXPECT_GT(failed, 0);
  EXPECT_GT(succeeded, 0);
}

}  // namespace
}  // namespace ranc
