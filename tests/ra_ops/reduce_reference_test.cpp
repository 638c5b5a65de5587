// reduce (ra_ops/reduce/reference.cpp): grouping by the total order and every
// aggregate, with and without group keys, on empty and non-empty inputs.
#include <cmath>
#include <limits>

#include "reference_test_util.h"

namespace ranc::test {
namespace {

const std::vector<Attribute> kA = {
    {"g", Type::String}, {"i", Type::I32}, {"l", Type::I64}, {"f", Type::F32}, {"d", Type::F64}};

HostRelation reduce_run(std::vector<std::string> keys, std::vector<Aggregate> aggs,
                        const Rows& rows, const std::vector<Attribute>& attrs = kA) {
  ProgramBuilder b;
  b.output(b.input("t", attrs).reduce(std::move(keys), std::move(aggs)), "out");
  return run(b, {{"t", rel(attrs, rows)}});
}

const Rows kRows = {
    {S("b"), I(1), L(10), F(0.5f), D(1.0)}, {S("a"), I(2), L(20), F(1.5f), D(-2.0)},
    {S("b"), I(3), L(30), F(2.5f), D(4.0)}, {S("a"), I(-4), L(-5), F(-1.0f), D(8.0)},
    {S("c"), I(7), L(0), F(0.0f), D(0.25)},
};

TEST(ReduceReference, EveryAggregatePerGroup) {
  HostRelation out = reduce_run(
      {"g"},
      {sum(col("i"), "si"), sum(col("l"), "sl"), sum(col("f"), "sf"), sum(col("d"), "sd"),
       count("n"), min(col("i"), "mini"), max(col("l"), "maxl"), min(col("f"), "minf"),
       max(col("g"), "maxg"), avg(col("i"), "avgi"), avg(col("d"), "avgd")},
      kRows);
  EXPECT_EQ(out.schema().attributes, (std::vector<Attribute>{{"g", Type::String},
                                                             {"si", Type::I64},
                                                             {"sl", Type::I64},
                                                             {"sf", Type::F64},
                                                             {"sd", Type::F64},
                                                             {"n", Type::I64},
                                                             {"mini", Type::I32},
                                                             {"maxl", Type::I64},
                                                             {"minf", Type::F32},
                                                             {"maxg", Type::String},
                                                             {"avgi", Type::F64},
                                                             {"avgd", Type::F64}}));
  EXPECT_BAG_EQ(
      out,
      Rows{
          {S("a"), L(-2), L(15), D(0.5), D(6.0), L(2), I(-4), L(20), F(-1.0f), S("a"), D(-1.0),
           D(3.0)},
          {S("b"), L(4), L(40), D(3.0), D(5.0), L(2), I(1), L(30), F(0.5f), S("b"), D(2.0), D(2.5)},
          {S("c"), L(7), L(0), D(0.0), D(0.25), L(1), I(7), L(0), F(0.0f), S("c"), D(7.0), D(0.25)},
      });
}

TEST(ReduceReference, NoGroupKeys) {
  HostRelation out = reduce_run(
      {},
      {count("n"), sum(col("i"), "s"), min(col("g"), "m"), max(col("d"), "x"), avg(col("l"), "a")},
      kRows);
  EXPECT_ROWS_EQ(out, Rows{{L(5), L(9), S("a"), D(8.0), D(11.0)}});
}

TEST(ReduceReference, EmptyInput) {
  // No group keys: one tuple, as in SQL: count 0, the other aggregates NULL (and so
  // nullable). With keys: no groups.
  HostRelation global = reduce_run({}, {count("n"), sum(col("i"), "s"), min(col("g"), "m")}, {});
  EXPECT_EQ(global.schema().str(), "(n i64, s i64 null, m string null)");
  EXPECT_ROWS_EQ(global, Rows{{L(0), Value::null(Type::I64), Value::null(Type::String)}});
  EXPECT_EQ(reduce_run({"g"}, {count("n"), max(col("d"), "x")}, {}).num_rows(), 0u);
}

TEST(ReduceReference, MultipleGroupKeysAndOnlyKeys) {
  std::vector<Attribute> attrs = {{"a", Type::I32}, {"b", Type::Bool}, {"v", Type::I64}};
  Rows rows = {{I(1), B(true), L(1)},
               {I(1), B(false), L(2)},
               {I(1), B(true), L(3)},
               {I(2), B(true), L(4)},
               {I(1), B(false), L(5)}};
  EXPECT_BAG_EQ(
      reduce_run({"a", "b"}, {sum(col("v"), "s"), count("n")}, rows, attrs),
      Rows{{I(1), B(false), L(7), L(2)}, {I(1), B(true), L(4), L(2)}, {I(2), B(true), L(4), L(1)}});
  // Group keys in another order than the schema's.
  EXPECT_BAG_EQ(reduce_run({"b", "a"}, {count("n")}, rows, attrs),
                Rows{{B(false), I(1), L(2)}, {B(true), I(1), L(2)}, {B(true), I(2), L(1)}});
  EXPECT_BAG_EQ(reduce_run({"a"}, {}, rows, attrs), Rows{{I(1)}, {I(2)}});
}

TEST(ReduceReference, IntegerSumsAreExactOrAnError) {
  std::vector<Attribute> attrs = {{"i", Type::I32}, {"l", Type::I64}};
  const int32_t max32 = std::numeric_limits<int32_t>::max();
  const int64_t max64 = std::numeric_limits<int64_t>::max();
  // i32 sums into i64: no 32-bit overflow. An i64 sum passing the range on the way and
  // coming back is exact.
  Rows back = {{I(max32), L(max64)}, {I(max32), L(2)}, {I(1), L(-3)}};
  EXPECT_ROWS_EQ(reduce_run({}, {sum(col("i"), "si"), sum(col("l"), "sl")}, back, attrs),
                 Rows{{L(int64_t{2} * max32 + 1), L(max64 - 1)}});
  // One leaving it is an error naming the aggregate, not a wrapped value.
  Rows over = {{I(1), L(max64)}, {I(1), L(1)}};
  try {
    reduce_run({}, {sum(col("l"), "sl")}, over, attrs);
    ADD_FAILURE() << "no overflow error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.diagnostics()[0].kind, ErrorKind::Execution);
    EXPECT_NE(std::string(e.what()).find("sum 'sl' leaves the i64 range"), std::string::npos)
        << e.what();
  }
  Rows under = {{I(1), L(std::numeric_limits<int64_t>::min())}, {I(1), L(-1)}};
  EXPECT_THROW(reduce_run({}, {sum(col("l"), "sl")}, under, attrs), UserError);
}

TEST(ReduceReference, ExpressionArguments) {
  std::vector<Attribute> attrs = {{"k", Type::I32}, {"p", Type::F64}, {"q", Type::I32}};
  Rows rows = {{I(1), D(2.0), I(3)}, {I(1), D(0.5), I(4)}, {I(2), D(1.0), I(1)}};
  EXPECT_BAG_EQ(
      reduce_run({"k"},
                 {sum(col("p") * cast(col("q"), Type::F64), "rev"), max(col("q") - col("k"), "m")},
                 rows, attrs),
      Rows{{I(1), D(8.0), I(3)}, {I(2), D(1.0), I(-1)}});
}

TEST(ReduceReference, FloatMinMaxUseTheTotalOrder) {
  std::vector<Attribute> attrs = {{"k", Type::I32}, {"x", Type::F64}};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Rows rows = {{I(1), D(3.0)}, {I(1), D(nan)}, {I(1), D(-1.0)}, {I(2), D(0.0)}, {I(2), D(-0.0)}};
  HostRelation out = reduce_run({"k"}, {min(col("x"), "lo"), max(col("x"), "hi")}, rows, attrs);
  Rows got = sorted(rows_of(out));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0][1], D(-1.0));
  EXPECT_TRUE(std::isnan(got[0][2].as_f64()));    // NaN is the largest
  EXPECT_TRUE(std::signbit(got[1][1].as_f64()));  // -0.0 < +0.0
  EXPECT_FALSE(std::signbit(got[1][2].as_f64()));
}

TEST(ReduceReference, GroupsFloatKeysByBits) {
  std::vector<Attribute> attrs = {{"x", Type::F64}};
  EXPECT_EQ(reduce_run({"x"}, {count("n")}, {{D(0.0)}, {D(-0.0)}, {D(0.0)}}, attrs).num_rows(), 2u);
}

TEST(ReduceReference, DatesMinMax) {
  std::vector<Attribute> attrs = {{"d", Type::Date}};
  EXPECT_ROWS_EQ(reduce_run({}, {min(col("d"), "lo"), max(col("d"), "hi"), count("n")},
                            {{Dt("1995-03-15")}, {Dt("1992-02-29")}, {Dt("1998-12-01")}}, attrs),
                 Rows{{Dt("1992-02-29"), Dt("1998-12-01"), L(3)}});
}

}  // namespace
}  // namespace ranc::test
