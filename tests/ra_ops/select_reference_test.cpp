// select (ra_ops/select/reference.cpp): keeps the tuples satisfying the predicate,
// with their multiplicities and in input order.
#include <limits>

#include "reference_test_util.h"

namespace ranc::test {
namespace {

const std::vector<Attribute> kXYZ = {{"f0", Type::I32}, {"f1", Type::Bool}, {"f2", Type::String}};

HostRelation select_run(Expr pred, const HostRelation& data) {
  ProgramBuilder b;
  auto x = b.input("x", data.schema().attributes);
  b.output(x.select(std::move(pred)), "out");
  return run(b, {{"x", data}});
}

TEST(SelectReference, Paper002Table1) {
  // x = {(3,True,a),(4,True,a),(2,False,b),(3,False,a)}; SELECT field.0 == 2 -> (2,False,b)
  HostRelation x = rel(kXYZ, {{I(3), B(true), S("a")},
                              {I(4), B(true), S("a")},
                              {I(2), B(false), S("b")},
                              {I(3), B(false), S("a")}});
  EXPECT_ROWS_EQ(select_run(col("f0") == 2, x), Rows{{I(2), B(false), S("b")}});
}

TEST(SelectReference, KeepsDuplicatesAndInputOrder) {
  HostRelation x = rel(kXYZ, {{I(5), B(true), S("q")},
                              {I(1), B(false), S("a")},
                              {I(5), B(true), S("q")},
                              {I(3), B(true), S("b")},
                              {I(5), B(false), S("c")}});
  EXPECT_ROWS_EQ(select_run(col("f0") >= 3 && col("f1"), x),
                 Rows{{I(5), B(true), S("q")}, {I(5), B(true), S("q")}, {I(3), B(true), S("b")}});
  EXPECT_ROWS_EQ(select_run(col("f2") > "b", x),
                 Rows{{I(5), B(true), S("q")}, {I(5), B(true), S("q")}, {I(5), B(false), S("c")}});
}

TEST(SelectReference, NoneAndAll) {
  HostRelation x = rel(kXYZ, {{I(1), B(true), S("a")}, {I(2), B(false), S("b")}});
  EXPECT_EQ(select_run(col("f0") > 100, x).num_rows(), 0u);
  EXPECT_ROWS_EQ(select_run(col("f0") > 0, x), rows_of(x));
}

TEST(SelectReference, EmptyInput) {
  HostRelation out = select_run(col("f0") == 2, rel(kXYZ, {}));
  EXPECT_EQ(out.num_rows(), 0u);
  EXPECT_EQ(out.schema().attributes, kXYZ);
}

TEST(SelectReference, StringPredicatesThroughTheDictionary) {
  std::vector<Attribute> attrs = {{"id", Type::I32}, {"name", Type::String}};
  HostRelation x = rel(attrs, {{I(1), S("PROMO BRUSHED TIN")},
                               {I(2), S("LARGE PLATED BRASS")},
                               {I(3), S("PROMO ANODIZED BRASS")},
                               {I(4), S("")}});
  ProgramBuilder b;
  auto t = b.input("x", attrs);
  b.output(t.select(like(col("name"), "%BRASS") && starts_with(col("name"), "PROMO")), "out");
  EXPECT_ROWS_EQ(run(b, {{"x", x}}), Rows{{I(3), S("PROMO ANODIZED BRASS")}});
}

TEST(SelectReference, FloatPredicateUsesIeeeComparison) {
  std::vector<Attribute> attrs = {{"v", Type::F64}};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostRelation x = rel(attrs, {{D(nan)}, {D(-0.0)}, {D(1.0)}, {D(0.0)}});
  // NaN fails every ordered comparison; -0.0 = 0.0.
  EXPECT_ROWS_EQ(select_run(col("v") >= 0.0, x), Rows{{D(-0.0)}, {D(1.0)}, {D(0.0)}});
  EXPECT_ROWS_EQ(select_run(col("v") == 0.0, x), Rows{{D(-0.0)}, {D(0.0)}});
}

}  // namespace
}  // namespace ranc::test
