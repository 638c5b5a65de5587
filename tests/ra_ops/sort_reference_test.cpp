// sort (ra_ops/sort/reference.cpp): keys with directions, ties broken by the
// remaining attributes ascending, the total order for floats and strings.
#include <cmath>
#include <limits>

#include "reference_test_util.h"

namespace ranc::test {
namespace {

const std::vector<Attribute> kA = {{"a", Type::I32}, {"b", Type::String}, {"c", Type::F64}};

HostRelation sort_run(std::vector<SortSpec> keys, const Rows& rows,
                      const std::vector<Attribute>& attrs = kA) {
  ProgramBuilder b;
  b.output(b.input("t", attrs).sort(std::move(keys)), "out");
  return run(b, {{"t", rel(attrs, rows)}});
}

const Rows kRows = {
    {I(2), S("x"), D(1.0)}, {I(1), S("y"), D(2.0)},  {I(2), S("a"), D(3.0)},
    {I(3), S("x"), D(0.5)}, {I(1), S("y"), D(-1.0)}, {I(2), S("x"), D(1.0)},
};

TEST(SortReference, AscendingWithTieBreaks) {
  // Ties on a are broken by b then c, ascending.
  EXPECT_ROWS_EQ(sort_run({"a"}, kRows), Rows{{I(1), S("y"), D(-1.0)},
                                              {I(1), S("y"), D(2.0)},
                                              {I(2), S("a"), D(3.0)},
                                              {I(2), S("x"), D(1.0)},
                                              {I(2), S("x"), D(1.0)},
                                              {I(3), S("x"), D(0.5)}});
}

TEST(SortReference, Descending) {
  // Descending on a; the tie breaks stay ascending.
  EXPECT_ROWS_EQ(sort_run({desc("a")}, kRows), Rows{{I(3), S("x"), D(0.5)},
                                                    {I(2), S("a"), D(3.0)},
                                                    {I(2), S("x"), D(1.0)},
                                                    {I(2), S("x"), D(1.0)},
                                                    {I(1), S("y"), D(-1.0)},
                                                    {I(1), S("y"), D(2.0)}});
}

TEST(SortReference, MultiKeyMixedDirections) {
  EXPECT_ROWS_EQ(sort_run({desc("b"), "c"}, kRows), Rows{{I(1), S("y"), D(-1.0)},
                                                         {I(1), S("y"), D(2.0)},
                                                         {I(3), S("x"), D(0.5)},
                                                         {I(2), S("x"), D(1.0)},
                                                         {I(2), S("x"), D(1.0)},
                                                         {I(2), S("a"), D(3.0)}});
  // Key order matters: c first.
  EXPECT_ROWS_EQ(sort_run({desc("c"), "a"}, kRows), Rows{{I(2), S("a"), D(3.0)},
                                                         {I(1), S("y"), D(2.0)},
                                                         {I(2), S("x"), D(1.0)},
                                                         {I(2), S("x"), D(1.0)},
                                                         {I(3), S("x"), D(0.5)},
                                                         {I(1), S("y"), D(-1.0)}});
}

TEST(SortReference, TieBreakUsesAttributesLeftToRight) {
  // Key c: ties broken by a then b (not b then a).
  Rows rows = {{I(2), S("a"), D(0)}, {I(1), S("z"), D(0)}, {I(1), S("b"), D(0)}};
  EXPECT_ROWS_EQ(sort_run({"c"}, rows),
                 Rows{{I(1), S("b"), D(0)}, {I(1), S("z"), D(0)}, {I(2), S("a"), D(0)}});
}

TEST(SortReference, FloatsByTotalOrder) {
  std::vector<Attribute> attrs = {{"x", Type::F64}};
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostRelation out = sort_run(
      {"x"}, {{D(1.0)}, {D(nan)}, {D(0.0)}, {D(-inf)}, {D(-0.0)}, {D(inf)}, {D(-nan)}}, attrs);
  ASSERT_EQ(out.num_rows(), 7u);
  EXPECT_TRUE(std::isnan(out.get(0, 0).as_f64()) && std::signbit(out.get(0, 0).as_f64()));  // -NaN
  EXPECT_EQ(out.get(1, 0), D(-inf));
  EXPECT_TRUE(std::signbit(out.get(2, 0).as_f64()));  // -0.0
  EXPECT_EQ(out.get(2, 0).as_f64(), 0.0);
  EXPECT_FALSE(std::signbit(out.get(3, 0).as_f64()));  // +0.0
  EXPECT_EQ(out.get(4, 0), D(1.0));
  EXPECT_EQ(out.get(5, 0), D(inf));
  EXPECT_TRUE(std::isnan(out.get(6, 0).as_f64()) && !std::signbit(out.get(6, 0).as_f64()));
}

TEST(SortReference, StringsByBytesAndOtherTypes) {
  std::vector<Attribute> attrs = {{"s", Type::String}, {"d", Type::Date}, {"t", Type::Bool}};
  Rows rows = {{S("b"), Dt("1992-01-01"), B(true)}, {S("B"), Dt("1992-01-01"), B(true)},
               {S(""), Dt("1992-01-01"), B(true)},  {S("ab"), Dt("1991-01-01"), B(false)},
               {S("a"), Dt("1993-01-01"), B(true)}, {S("b"), Dt("1990-01-01"), B(false)}};
  EXPECT_ROWS_EQ(sort_run({"s"}, rows, attrs), Rows{{S(""), Dt("1992-01-01"), B(true)},
                                                    {S("B"), Dt("1992-01-01"), B(true)},
                                                    {S("a"), Dt("1993-01-01"), B(true)},
                                                    {S("ab"), Dt("1991-01-01"), B(false)},
                                                    {S("b"), Dt("1990-01-01"), B(false)},
                                                    {S("b"), Dt("1992-01-01"), B(true)}});
  EXPECT_ROWS_EQ(sort_run({desc("t"), desc("d")}, rows, attrs),
                 Rows{{S("a"), Dt("1993-01-01"), B(true)},
                      {S(""), Dt("1992-01-01"), B(true)},
                      {S("B"), Dt("1992-01-01"), B(true)},
                      {S("b"), Dt("1992-01-01"), B(true)},
                      {S("ab"), Dt("1991-01-01"), B(false)},
                      {S("b"), Dt("1990-01-01"), B(false)}});
}

TEST(SortReference, EmptyAndSingle) {
  EXPECT_EQ(sort_run({"a"}, {}).num_rows(), 0u);
  EXPECT_ROWS_EQ(sort_run({desc("a")}, {{I(1), S("q"), D(0)}}), Rows{{I(1), S("q"), D(0)}});
}

// A declared input order ("sorted by") is checked: data in that order (ties in any
// order) passes through unchanged, data out of it is an ExecutionError naming the
// relation and the first row out of place.
TEST(InputReference, DeclaredOrderIsVerified) {
  const std::vector<Attribute> attrs = {{"k", Type::I32}, {"v", Type::F64}};
  auto run_declared = [&](const Rows& rows) {
    ProgramBuilder b;
    b.output(b.input("t", attrs, 0, {"k", desc("v")}), "out");
    return run(b, {{"t", rel(attrs, rows)}});
  };
  const Rows ok = {{I(1), D(2.0)}, {I(1), D(-0.0)}, {I(1), D(-0.0)}, {I(4), D(9.0)}};
  EXPECT_ROWS_EQ(run_declared(ok), ok);
  EXPECT_ROWS_EQ(run_declared({}), Rows{});
  try {
    run_declared({{I(1), D(2.0)}, {I(1), D(3.0)}, {I(0), D(9.0)}});
    ADD_FAILURE() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Execution);
    EXPECT_NE(std::string(e.what()).find("'t' is not sorted by (k, v desc) as declared: row 1"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ranc::test
