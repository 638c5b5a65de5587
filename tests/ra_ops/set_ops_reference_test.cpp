// union, intersect, difference (ra_ops/set_ops/reference.cpp): SET semantics on
// whole tuples under the total order, each distinct tuple once.
#include <cmath>
#include <limits>

#include "reference_test_util.h"

namespace ranc::test {
namespace {

const std::vector<Attribute> kXA = {{"k", Type::I32}, {"v", Type::String}};
const std::vector<Attribute> kYA = {{"k2", Type::I32}, {"v2", Type::String}};

HostRelation set_run(OpKind op, const Rows& xs, const Rows& ys,
                     const std::vector<Attribute>& xa = kXA,
                     const std::vector<Attribute>& ya = kYA) {
  ProgramBuilder b;
  auto x = b.input("x", xa);
  auto y = b.input("y", ya);
  Rel r = op == OpKind::Union       ? x.union_with(y)
          : op == OpKind::Intersect ? x.intersect(y)
                                    : x.difference(y);
  b.output(r, "out");
  return run(b, {{"x", rel(xa, xs)}, {"y", rel(ya, ys)}});
}

TEST(SetOpsReference, Paper002Table1) {
  Rows x = {{I(3), S("a")}, {I(4), S("a")}, {I(2), S("b")}};
  Rows y = {{I(0), S("a")}, {I(2), S("b")}, {I(3), S("c")}};
  EXPECT_BAG_EQ(set_run(OpKind::Intersect, x, y), Rows{{I(2), S("b")}});
  EXPECT_BAG_EQ(
      set_run(OpKind::Union, x, y),
      Rows{{I(3), S("a")}, {I(4), S("a")}, {I(2), S("b")}, {I(0), S("a")}, {I(3), S("c")}});
  Rows y2 = {{I(4), S("a")}, {I(3), S("a")}};
  EXPECT_BAG_EQ(set_run(OpKind::Difference, x, y2), Rows{{I(2), S("b")}});
}

TEST(SetOpsReference, OutputNamesAreTheLeftInputs) {
  HostRelation out = set_run(OpKind::Union, {{I(1), S("a")}}, {{I(2), S("b")}});
  EXPECT_EQ(out.schema().attributes, kXA);
}

TEST(SetOpsReference, DuplicatesInInputsAppearOnce) {
  Rows x = {{I(1), S("a")}, {I(1), S("a")}, {I(2), S("b")}, {I(2), S("b")}, {I(5), S("e")}};
  Rows y = {{I(2), S("b")}, {I(2), S("b")}, {I(2), S("b")}, {I(9), S("z")}, {I(9), S("z")}};
  EXPECT_BAG_EQ(set_run(OpKind::Union, x, y),
                Rows{{I(1), S("a")}, {I(2), S("b")}, {I(5), S("e")}, {I(9), S("z")}});
  EXPECT_BAG_EQ(set_run(OpKind::Intersect, x, y), Rows{{I(2), S("b")}});
  EXPECT_BAG_EQ(set_run(OpKind::Difference, x, y), Rows{{I(1), S("a")}, {I(5), S("e")}});
  EXPECT_BAG_EQ(set_run(OpKind::Difference, y, x), Rows{{I(9), S("z")}});
  // A relation with itself.
  EXPECT_BAG_EQ(set_run(OpKind::Union, x, x), Rows{{I(1), S("a")}, {I(2), S("b")}, {I(5), S("e")}});
  EXPECT_BAG_EQ(set_run(OpKind::Intersect, x, x),
                Rows{{I(1), S("a")}, {I(2), S("b")}, {I(5), S("e")}});
  EXPECT_EQ(set_run(OpKind::Difference, x, x).num_rows(), 0u);
}

TEST(SetOpsReference, WholeTuplesNotKeys) {
  // Same key, different value: different tuples.
  Rows x = {{I(1), S("a")}, {I(1), S("b")}};
  Rows y = {{I(1), S("b")}, {I(1), S("c")}};
  EXPECT_BAG_EQ(set_run(OpKind::Intersect, x, y), Rows{{I(1), S("b")}});
  EXPECT_BAG_EQ(set_run(OpKind::Difference, x, y), Rows{{I(1), S("a")}});
  EXPECT_EQ(set_run(OpKind::Union, x, y).num_rows(), 3u);
}

TEST(SetOpsReference, EmptyInputs) {
  Rows x = {{I(1), S("a")}, {I(1), S("a")}, {I(2), S("b")}};
  Rows dedup = {{I(1), S("a")}, {I(2), S("b")}};
  EXPECT_BAG_EQ(set_run(OpKind::Union, x, {}), dedup);
  EXPECT_BAG_EQ(set_run(OpKind::Union, {}, x), dedup);
  EXPECT_EQ(set_run(OpKind::Union, {}, {}).num_rows(), 0u);
  EXPECT_EQ(set_run(OpKind::Intersect, x, {}).num_rows(), 0u);
  EXPECT_EQ(set_run(OpKind::Intersect, {}, x).num_rows(), 0u);
  EXPECT_BAG_EQ(set_run(OpKind::Difference, x, {}), dedup);
  EXPECT_EQ(set_run(OpKind::Difference, {}, x).num_rows(), 0u);
}

TEST(SetOpsReference, FloatsAreTheSameTupleOnlyWhenBitIdentical) {
  std::vector<Attribute> fa = {{"f", Type::F64}};
  std::vector<Attribute> ga = {{"g", Type::F64}};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Rows x = {{D(0.0)}, {D(nan)}, {D(nan)}, {D(1.5)}};
  Rows y = {{D(-0.0)}, {D(nan)}};
  // Total order: -0.0 and 0.0 differ; NaN equals (the same) NaN.
  HostRelation i = set_run(OpKind::Intersect, x, y, fa, ga);
  ASSERT_EQ(i.num_rows(), 1u);
  EXPECT_TRUE(std::isnan(i.get(0, 0).as_f64()));
  HostRelation u = set_run(OpKind::Union, x, y, fa, ga);
  EXPECT_EQ(u.num_rows(), 4u);  // 0.0, -0.0, NaN, 1.5
  EXPECT_BAG_EQ(set_run(OpKind::Difference, x, y, fa, ga), Rows{{D(0.0)}, {D(1.5)}});
}

TEST(SetOpsReference, StringsFromDifferentDictionaries) {
  // Each input column has its own dictionary; equal strings must match.
  Rows x = {{I(1), S("apple")}, {I(2), S("kiwi")}, {I(3), S("zebra")}};
  Rows y = {{I(2), S("kiwi")}, {I(3), S("aardvark")}, {I(1), S("apple")}, {I(0), S("")}};
  EXPECT_BAG_EQ(set_run(OpKind::Intersect, x, y), Rows{{I(1), S("apple")}, {I(2), S("kiwi")}});
  EXPECT_BAG_EQ(set_run(OpKind::Difference, x, y), Rows{{I(3), S("zebra")}});
  EXPECT_BAG_EQ(set_run(OpKind::Union, x, y), Rows{{I(1), S("apple")},
                                                   {I(2), S("kiwi")},
                                                   {I(3), S("zebra")},
                                                   {I(3), S("aardvark")},
                                                   {I(0), S("")}});
}

}  // namespace
}  // namespace ranc::test
