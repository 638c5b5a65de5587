// project (ra_ops/project/reference.cpp): keeps, reorders, renames and computes
// attributes row by row, keeping multiplicities and order.
#include "reference_test_util.h"

namespace ranc::test {
namespace {

const std::vector<Attribute> kXYZ = {{"f0", Type::I32}, {"f1", Type::Bool}, {"f2", Type::String}};

TEST(ProjectReference, Paper002Table1) {
  // x = {(3,True,a),(4,True,a),(2,False,b)}; PROJECT [field.0, field.2] -> {(3,a),(4,a),(2,b)}
  ProgramBuilder b;
  auto x = b.input("x", kXYZ);
  b.output(x.project({"f0", "f2"}), "out");
  HostRelation out = run(
      b,
      {{"x",
        rel(kXYZ, {{I(3), B(true), S("a")}, {I(4), B(true), S("a")}, {I(2), B(false), S("b")}})}});
  EXPECT_ROWS_EQ(out, Rows{{I(3), S("a")}, {I(4), S("a")}, {I(2), S("b")}});
  EXPECT_EQ(out.schema().attributes,
            (std::vector<Attribute>{{"f0", Type::I32}, {"f2", Type::String}}));
}

TEST(ProjectReference, ComputesReordersRenamesAndKeepsDuplicates) {
  ProgramBuilder b;
  auto x = b.input("x", kXYZ);
  b.output(x.project({as(col("f2"), "name"), as(col("f0") * 10 + 1, "v"), "f1",
                      as(cast(col("f0"), Type::F64) / 2.0, "half")}),
           "out");
  HostRelation out = run(
      b,
      {{"x", rel(kXYZ,
                 {{I(3), B(true), S("a")}, {I(3), B(true), S("a")}, {I(-2), B(false), S("zz")}})}});
  EXPECT_ROWS_EQ(out, Rows{{S("a"), I(31), B(true), D(1.5)},
                           {S("a"), I(31), B(true), D(1.5)},
                           {S("zz"), I(-19), B(false), D(-1.0)}});
  EXPECT_EQ(out.schema()[0].name, "name");
  EXPECT_EQ(out.schema()[3].type, Type::F64);
}

TEST(ProjectReference, ComputedStringColumnAndSameAttributeTwice) {
  ProgramBuilder b;
  auto x = b.input("x", kXYZ);
  b.output(x.project({as(case_when({{col("f1"), col("f2")}}, "none"), "s"), as(col("f0"), "a"),
                      as(col("f0"), "b")}),
           "out");
  HostRelation out =
      run(b, {{"x", rel(kXYZ, {{I(1), B(true), S("m")}, {I(2), B(false), S("k")}})}});
  EXPECT_ROWS_EQ(out, Rows{{S("m"), I(1), I(1)}, {S("none"), I(2), I(2)}});
}

TEST(ProjectReference, EmptyInput) {
  ProgramBuilder b;
  auto x = b.input("x", kXYZ);
  b.output(x.project({as(col("f0") / col("f0"), "q"), "f2"}), "out");
  HostRelation out = run(b, {{"x", rel(kXYZ, {})}});
  EXPECT_EQ(out.num_rows(), 0u);
  EXPECT_EQ(out.schema().size(), 2u);
}

}  // namespace
}  // namespace ranc::test
