// join (ra_ops/join/reference.cpp): inner, semi and anti equi-joins with
// duplicates, multi-attribute keys and residual predicates.
#include <limits>

#include "reference_test_util.h"

namespace ranc::test {
namespace {

const std::vector<Attribute> kXA = {{"k", Type::I32}, {"x", Type::String}};
const std::vector<Attribute> kYA = {{"rk", Type::I32}, {"y", Type::String}};

HostRelation join_run(JoinKind kind, const Rows& xs, const Rows& ys, Expr residual = {},
                      const std::vector<Attribute>& xa = kXA,
                      const std::vector<Attribute>& ya = kYA, std::vector<std::string> lk = {"k"},
                      std::vector<std::string> rk = {"rk"}) {
  ProgramBuilder b;
  auto x = b.input("x", xa);
  auto y = b.input("y", ya);
  b.output(x.join(y, std::move(lk), std::move(rk), kind, std::move(residual)), "out");
  return run(b, {{"x", rel(xa, xs)}, {"y", rel(ya, ys)}});
}

TEST(JoinReference, Paper002Table1) {
  // x = {(3,a),(4,a),(2,b)}, y = {(0,a),(2,f),(3,c)}; JOIN x y -> {(3,a,c),(2,b,f)}
  HostRelation out = join_run(JoinKind::Inner, {{I(3), S("a")}, {I(4), S("a")}, {I(2), S("b")}},
                              {{I(0), S("a")}, {I(2), S("f")}, {I(3), S("c")}});
  EXPECT_BAG_EQ(out, Rows{{I(3), S("a"), S("c")}, {I(2), S("b"), S("f")}});
  EXPECT_EQ(out.schema().attributes,
            (std::vector<Attribute>{{"k", Type::I32}, {"x", Type::String}, {"y", Type::String}}));
}

TEST(JoinReference, DuplicatesOnBothSidesMultiply) {
  Rows x = {{I(1), S("a")}, {I(1), S("b")}, {I(2), S("c")}, {I(1), S("a")}};
  Rows y = {{I(1), S("p")}, {I(3), S("q")}, {I(1), S("r")}};
  EXPECT_BAG_EQ(join_run(JoinKind::Inner, x, y), Rows{{I(1), S("a"), S("p")},
                                                      {I(1), S("a"), S("r")},
                                                      {I(1), S("b"), S("p")},
                                                      {I(1), S("b"), S("r")},
                                                      {I(1), S("a"), S("p")},
                                                      {I(1), S("a"), S("r")}});
  EXPECT_BAG_EQ(join_run(JoinKind::Semi, x, y),
                Rows{{I(1), S("a")}, {I(1), S("b")}, {I(1), S("a")}});
  EXPECT_BAG_EQ(join_run(JoinKind::Anti, x, y), Rows{{I(2), S("c")}});
}

TEST(JoinReference, NoMatches) {
  Rows x = {{I(1), S("a")}, {I(2), S("b")}};
  Rows y = {{I(3), S("c")}, {I(4), S("d")}};
  EXPECT_EQ(join_run(JoinKind::Inner, x, y).num_rows(), 0u);
  EXPECT_EQ(join_run(JoinKind::Semi, x, y).num_rows(), 0u);
  EXPECT_BAG_EQ(join_run(JoinKind::Anti, x, y), x);
}

TEST(JoinReference, AllMatch) {
  Rows x = {{I(7), S("a")}, {I(7), S("b")}};
  Rows y = {{I(7), S("c")}, {I(7), S("d")}, {I(7), S("e")}};
  EXPECT_EQ(join_run(JoinKind::Inner, x, y).num_rows(), 6u);
  EXPECT_BAG_EQ(join_run(JoinKind::Semi, x, y), x);
  EXPECT_EQ(join_run(JoinKind::Anti, x, y).num_rows(), 0u);
}

TEST(JoinReference, EmptyInputs) {
  Rows x = {{I(1), S("a")}, {I(2), S("b")}};
  for (JoinKind kind : {JoinKind::Inner, JoinKind::Semi, JoinKind::Anti}) {
    EXPECT_EQ(join_run(kind, {}, x).num_rows(), 0u);
    EXPECT_EQ(join_run(kind, {}, {}).num_rows(), 0u);
  }
  EXPECT_EQ(join_run(JoinKind::Inner, x, {}).num_rows(), 0u);
  EXPECT_EQ(join_run(JoinKind::Semi, x, {}).num_rows(), 0u);
  EXPECT_BAG_EQ(join_run(JoinKind::Anti, x, {}), x);
}

TEST(JoinReference, MultiAttributeKeysAndRightKeysDropped) {
  std::vector<Attribute> xa = {{"a", Type::I32}, {"b", Type::String}, {"v", Type::F64}};
  std::vector<Attribute> ya = {{"w", Type::I64}, {"rb", Type::String}, {"ra", Type::I32}};
  Rows x = {{I(1), S("p"), D(0.5)}, {I(1), S("q"), D(1.5)}, {I(2), S("p"), D(2.5)}};
  Rows y = {
      {L(10), S("p"), I(1)}, {L(20), S("p"), I(2)}, {L(30), S("q"), I(2)}, {L(40), S("p"), I(1)}};
  HostRelation out = join_run(JoinKind::Inner, x, y, {}, xa, ya, {"a", "b"}, {"ra", "rb"});
  EXPECT_EQ(out.schema().attributes,
            (std::vector<Attribute>{
                {"a", Type::I32}, {"b", Type::String}, {"v", Type::F64}, {"w", Type::I64}}));
  EXPECT_BAG_EQ(out, Rows{{I(1), S("p"), D(0.5), L(10)},
                          {I(1), S("p"), D(0.5), L(40)},
                          {I(2), S("p"), D(2.5), L(20)}});
}

TEST(JoinReference, ResidualSeesLeftThenRightNonKeyAttributes) {
  std::vector<Attribute> xa = {{"k", Type::I32}, {"lo", Type::I32}};
  std::vector<Attribute> ya = {{"rk", Type::I32}, {"val", Type::I32}};
  Rows x = {{I(1), I(5)}, {I(1), I(50)}, {I(2), I(0)}, {I(3), I(0)}};
  Rows y = {{I(1), I(10)}, {I(1), I(20)}, {I(2), I(-1)}, {I(3), I(7)}, {I(3), I(8)}};
  Expr residual = col("val") > col("lo");
  EXPECT_BAG_EQ(
      join_run(JoinKind::Inner, x, y, residual, xa, ya),
      Rows{{I(1), I(5), I(10)}, {I(1), I(5), I(20)}, {I(3), I(0), I(7)}, {I(3), I(0), I(8)}});
  // semi: at least one right match satisfies the residual, each left tuple once.
  EXPECT_BAG_EQ(join_run(JoinKind::Semi, x, y, residual, xa, ya), Rows{{I(1), I(5)}, {I(3), I(0)}});
  // anti: no right match satisfies it (including key matches that fail the residual).
  EXPECT_BAG_EQ(join_run(JoinKind::Anti, x, y, residual, xa, ya),
                Rows{{I(1), I(50)}, {I(2), I(0)}});
}

TEST(JoinReference, ResidualDivisionOnlyOnKeyMatches) {
  std::vector<Attribute> xa = {{"k", Type::I32}, {"n", Type::I32}};
  std::vector<Attribute> ya = {{"rk", Type::I32}, {"d", Type::I32}};
  // The (2, d=0) right tuple matches no left key, so its division never runs.
  Rows x = {{I(1), I(10)}};
  Rows y = {{I(1), I(5)}, {I(2), I(0)}};
  EXPECT_BAG_EQ(join_run(JoinKind::Inner, x, y, col("n") / col("d") == 2, xa, ya),
                Rows{{I(1), I(10), I(5)}});
  Rows y0 = {{I(1), I(0)}};
  try {
    join_run(JoinKind::Inner, x, y0, col("n") / col("d") == 2, xa, ya);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Execution);
    EXPECT_NE(e.first().message.find("join"), std::string::npos) << e.first().message;
  }
}

TEST(JoinReference, KeysUseTheTotalOrder) {
  std::vector<Attribute> xa = {{"k", Type::F64}, {"id", Type::I32}};
  std::vector<Attribute> ya = {{"rk", Type::F64}, {"rid", Type::I32}};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Rows x = {{D(0.0), I(1)}, {D(-0.0), I(2)}, {D(nan), I(3)}, {D(2.5), I(4)}};
  Rows y = {{D(0.0), I(10)}, {D(nan), I(30)}, {D(2.5), I(40)}};
  // -0.0 does not match 0.0; NaN matches the same NaN.
  HostRelation out = join_run(JoinKind::Inner, x, y, {}, xa, ya);
  Rows got = sorted(rows_of(out));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0][1], I(1));
  EXPECT_EQ(got[0][2], I(10));
  EXPECT_EQ(got[1][1], I(4));
  EXPECT_EQ(got[2][1], I(3));
  EXPECT_EQ(got[2][2], I(30));
}

TEST(JoinReference, StringKeysFromDifferentDictionaries) {
  std::vector<Attribute> xa = {{"name", Type::String}, {"id", Type::I32}};
  std::vector<Attribute> ya = {{"rname", Type::String}, {"score", Type::I64}};
  Rows x = {{S("bob"), I(1)}, {S("alice"), I(2)}, {S("carol"), I(3)}, {S("bob"), I(4)}};
  Rows y = {{S("aaron"), L(5)}, {S("bob"), L(7)}, {S("carol"), L(9)}, {S("zed"), L(0)}};
  EXPECT_BAG_EQ(join_run(JoinKind::Inner, x, y, {}, xa, ya, {"name"}, {"rname"}),
                Rows{{S("bob"), I(1), L(7)}, {S("carol"), I(3), L(9)}, {S("bob"), I(4), L(7)}});
  EXPECT_BAG_EQ(join_run(JoinKind::Anti, x, y, {}, xa, ya, {"name"}, {"rname"}),
                Rows{{S("alice"), I(2)}});
}

}  // namespace
}  // namespace ranc::test
