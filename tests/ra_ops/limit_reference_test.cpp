// limit (ra_ops/limit/reference.cpp): tuples offset .. offset+n-1 of the input's
// order; after a sort that is deterministic.
#include "reference_test_util.h"

namespace ranc::test {
namespace {

const std::vector<Attribute> kA = {{"a", Type::I32}};

HostRelation limit_run(int64_t n, int64_t offset, const Rows& rows, bool sort_first = true) {
  ProgramBuilder b;
  auto t = b.input("t", kA);
  b.output((sort_first ? t.sort({desc("a")}) : t).limit(n, offset), "out");
  return run(b, {{"t", rel(kA, rows)}});
}

const Rows kRows = {{I(3)}, {I(9)}, {I(1)}, {I(7)}, {I(5)}};

TEST(LimitReference, AfterSort) {
  EXPECT_ROWS_EQ(limit_run(2, 0, kRows), Rows{{I(9)}, {I(7)}});
  EXPECT_ROWS_EQ(limit_run(2, 1, kRows), Rows{{I(7)}, {I(5)}});
  EXPECT_ROWS_EQ(limit_run(10, 3, kRows), Rows{{I(3)}, {I(1)}});  // runs past the end
  EXPECT_ROWS_EQ(limit_run(5, 0, kRows), Rows{{I(9)}, {I(7)}, {I(5)}, {I(3)}, {I(1)}});
  EXPECT_EQ(limit_run(0, 0, kRows).num_rows(), 0u);
}

TEST(LimitReference, OffsetAtOrBeyondTheEnd) {
  EXPECT_EQ(limit_run(3, 5, kRows).num_rows(), 0u);
  EXPECT_EQ(limit_run(3, 100, kRows).num_rows(), 0u);
  EXPECT_ROWS_EQ(limit_run(3, 4, kRows), Rows{{I(1)}});
}

TEST(LimitReference, KeepsInputOrderWithoutSort) {
  // The reference keeps the input order (which tuples an executor keeps from an
  // unordered input is unspecified; the count is not).
  EXPECT_ROWS_EQ(limit_run(2, 1, kRows, false), Rows{{I(9)}, {I(1)}});
}

TEST(LimitReference, EmptyInput) {
  EXPECT_EQ(limit_run(3, 0, {}).num_rows(), 0u);
  EXPECT_EQ(limit_run(3, 2, {}).num_rows(), 0u);
}

}  // namespace
}  // namespace ranc::test
