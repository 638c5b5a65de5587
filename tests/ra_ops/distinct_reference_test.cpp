// distinct (ra_ops/distinct/reference.cpp): each distinct tuple once; the first
// occurrences in input order, so a sorted input stays sorted.
#include <limits>

#include "reference_test_util.h"

namespace ranc::test {
namespace {

const std::vector<Attribute> kA = {{"a", Type::I32}, {"s", Type::String}};

HostRelation distinct_run(const Rows& rows, bool sort_desc_first = false,
                          const std::vector<Attribute>& attrs = kA) {
  ProgramBuilder b;
  auto t = b.input("t", attrs);
  b.output((sort_desc_first ? t.sort({desc(attrs[0].name)}) : t).distinct(), "out");
  return run(b, {{"t", rel(attrs, rows)}});
}

TEST(DistinctReference, RemovesDuplicateTuples) {
  Rows rows = {{I(2), S("b")}, {I(1), S("a")}, {I(2), S("b")}, {I(2), S("c")}, {I(1), S("a")}};
  EXPECT_BAG_EQ(distinct_run(rows), Rows{{I(2), S("b")}, {I(1), S("a")}, {I(2), S("c")}});
}

TEST(DistinctReference, KeepsASortedInputSorted) {
  Rows rows = {{I(1), S("a")}, {I(3), S("z")}, {I(2), S("b")}, {I(3), S("z")}, {I(1), S("a")}};
  EXPECT_ROWS_EQ(distinct_run(rows, true), Rows{{I(3), S("z")}, {I(2), S("b")}, {I(1), S("a")}});
}

TEST(DistinctReference, EmptyAllSameAllDifferent) {
  EXPECT_EQ(distinct_run({}).num_rows(), 0u);
  EXPECT_BAG_EQ(distinct_run({{I(4), S("x")}, {I(4), S("x")}, {I(4), S("x")}}),
                Rows{{I(4), S("x")}});
  Rows all = {{I(1), S("x")}, {I(2), S("x")}, {I(1), S("y")}};
  EXPECT_BAG_EQ(distinct_run(all), all);
}

TEST(DistinctReference, FloatsByBits) {
  std::vector<Attribute> attrs = {{"x", Type::F64}};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // 0.0 and -0.0 are different tuples; NaN and the same NaN are one.
  EXPECT_EQ(
      distinct_run({{D(0.0)}, {D(-0.0)}, {D(nan)}, {D(nan)}, {D(0.0)}}, false, attrs).num_rows(),
      3u);
}

}  // namespace
}  // namespace ranc::test
