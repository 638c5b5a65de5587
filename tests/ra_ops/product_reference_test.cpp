// product (ra_ops/product/reference.cpp): every pair, left attributes then right.
#include "reference_test_util.h"

namespace ranc::test {
namespace {

TEST(ProductReference, Paper002Table1) {
  // x = {(3,a),(4,a)}, y = {(True,2)}; PRODUCT x y -> {(3,a,True,2),(4,a,True,2)}
  std::vector<Attribute> xa = {{"x0", Type::I32}, {"x1", Type::String}};
  std::vector<Attribute> ya = {{"y0", Type::Bool}, {"y1", Type::I32}};
  ProgramBuilder b;
  b.output(b.input("x", xa).product(b.input("y", ya)), "out");
  HostRelation out =
      run(b, {{"x", rel(xa, {{I(3), S("a")}, {I(4), S("a")}})}, {"y", rel(ya, {{B(true), I(2)}})}});
  EXPECT_BAG_EQ(out, Rows{{I(3), S("a"), B(true), I(2)}, {I(4), S("a"), B(true), I(2)}});
  EXPECT_EQ(out.schema().size(), 4u);
}

TEST(ProductReference, EveryPairWithDuplicates) {
  std::vector<Attribute> xa = {{"a", Type::I32}};
  std::vector<Attribute> ya = {{"b", Type::String}, {"c", Type::F64}};
  ProgramBuilder b;
  b.output(b.input("x", xa).product(b.input("y", ya)), "out");
  HostRelation out = run(b, {{"x", rel(xa, {{I(1)}, {I(1)}, {I(2)}})},
                             {"y", rel(ya, {{S("p"), D(0.5)}, {S("q"), D(-1)}})}});
  EXPECT_BAG_EQ(out, Rows{{I(1), S("p"), D(0.5)},
                          {I(1), S("q"), D(-1)},
                          {I(1), S("p"), D(0.5)},
                          {I(1), S("q"), D(-1)},
                          {I(2), S("p"), D(0.5)},
                          {I(2), S("q"), D(-1)}});
}

TEST(ProductReference, EmptySides) {
  std::vector<Attribute> xa = {{"a", Type::I32}};
  std::vector<Attribute> ya = {{"b", Type::I64}};
  for (int empty = 0; empty < 3; ++empty) {
    ProgramBuilder b;
    b.output(b.input("x", xa).product(b.input("y", ya)), "out");
    Rows xs = empty == 0 || empty == 2 ? Rows{} : Rows{{I(1)}, {I(2)}};
    Rows ys = empty == 1 || empty == 2 ? Rows{} : Rows{{L(7)}};
    EXPECT_EQ(run(b, {{"x", rel(xa, xs)}, {"y", rel(ya, ys)}}).num_rows(), 0u) << empty;
  }
}

}  // namespace
}  // namespace ranc::test
