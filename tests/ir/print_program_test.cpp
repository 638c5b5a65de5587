// Tests of print_program and describe_node: the exact, stable text of every operator
// (checked programs show schema and order), and robustness on unchecked, malformed
// programs, whose nodes error messages describe.
#include <gtest/gtest.h>

#include "ranc/dsl.h"
#include "ranc/ir/program.h"

namespace ranc {
namespace {

TEST(PrintProgram, EveryOperatorOfACheckedProgram) {
  ProgramBuilder b;
  auto li = b.input("lineitem",
                    {{"l_orderkey", Type::I64}, {"l_price", Type::F64}, {"l_qty", Type::I32}}, 1);
  auto ord = b.input("orders", {{"o_orderkey", Type::I64}, {"o_prio", Type::String}}, 1);
  auto j = li.select(col("l_price") > 100)
               .join(ord, {"l_orderkey"}, {"o_orderkey"}, JoinKind::Inner, col("l_qty") < 5);
  auto r = j.reduce({"o_prio"}, {sum(col("l_price"), "total"), count("n")});
  b.output(r.sort({desc("total")}).limit(10, 2), "top");
  auto keys = li.project({"l_orderkey", as(col("l_qty") * 2, "twice")});
  b.output(keys.semi_join(ord, {"l_orderkey"}, {"o_orderkey"}).distinct(), "semi");
  auto a = ord.project({"o_orderkey"});
  auto u = a.union_with(a).intersect(a).difference(a);
  b.output(u.product(li.project({"l_qty"})), "prod");
  Program c = check(b.program());
  EXPECT_EQ(print_program(c),
            "n0 = input lineitem  -> (l_orderkey i64, l_price f64, l_qty i32 | key l_orderkey)\n"
            "n1 = input orders  -> (o_orderkey i64, o_prio string | key o_orderkey)\n"
            "n2 = select n0 where (l_price > 100.0)  -> (l_orderkey i64, l_price f64, l_qty i32 | "
            "key l_orderkey)\n"
            "n3 = join inner n2, n1 on (l_orderkey = o_orderkey) where (l_qty < 5)  -> (l_orderkey "
            "i64, l_price f64, l_qty i32, o_prio string)\n"
            "n4 = reduce n3 by (o_prio) compute (sum(l_price) as total, count() as n)  -> (o_prio "
            "string, total f64, n i64 | key o_prio)\n"
            "n5 = sort n4 by (total desc)  -> (o_prio string, total f64, n i64 | key o_prio) "
            "[order: total desc, o_prio asc, n asc]\n"
            "n6 = limit n5 10 offset 2  -> (o_prio string, total f64, n i64 | key o_prio) [order: "
            "total desc, o_prio asc, n asc]\n"
            "n7 = project n0 (l_orderkey, (l_qty * 2) as twice)  -> (l_orderkey i64, twice i32 | "
            "key l_orderkey)\n"
            "n8 = join semi n7, n1 on (l_orderkey = o_orderkey)  -> (l_orderkey i64, twice i32 | "
            "key l_orderkey)\n"
            "n9 = distinct n8  -> (l_orderkey i64, twice i32 | key l_orderkey)\n"
            "n10 = project n1 (o_orderkey)  -> (o_orderkey i64 | key o_orderkey)\n"
            "n11 = union n10, n10  -> (o_orderkey i64)\n"
            "n12 = intersect n11, n10  -> (o_orderkey i64)\n"
            "n13 = difference n12, n10  -> (o_orderkey i64)\n"
            "n14 = project n0 (l_qty)  -> (l_qty i32)\n"
            "n15 = product n13, n14  -> (o_orderkey i64, l_qty i32)\n"
            "n16 = output n6 as top  -> (o_prio string, total f64, n i64 | key o_prio) [order: "
            "total desc, o_prio asc, n asc]\n"
            "n17 = output n9 as semi  -> (l_orderkey i64, twice i32 | key l_orderkey)\n"
            "n18 = output n15 as prod  -> (o_orderkey i64, l_qty i32)\n");
}

TEST(PrintProgram, ShowsPromotionsTheCheckerMadeExplicit) {
  ProgramBuilder b;
  auto t = b.input("t", {{"a", Type::I32}, {"b", Type::F32}, {"c", Type::I64}});
  b.output(t.project({as(col("a") + col("c"), "s"), as(col("b") * col("c"), "p")}), "o");
  Program c = check(b.program());
  EXPECT_EQ(describe_node(c, c.node(1)),
            "project n0 ((cast(a as i64) + c) as s, (cast(b as f64) * cast(c as f64)) as p)");
}

TEST(PrintProgram, UncheckedProgramsHaveNoSchemas) {
  ProgramBuilder b;
  auto t = b.input("t", {{"a", Type::I32}});
  b.output(t.reduce({}, {count("n")}), "o");
  EXPECT_EQ(print_program(b.program()),
            "n0 = input t\n"
            "n1 = reduce n0 compute (count() as n)\n"
            "n2 = output n1 as o\n");
}

TEST(DescribeNode, MalformedNodesDoNotCrash) {
  Program p;
  Node join;
  join.kind = OpKind::Join;
  join.inputs = {-2, 42};
  join.left_keys = {"a", "b"};
  join.right_keys = {"c"};
  p.add(join);
  Node sel;
  sel.kind = OpKind::Select;  // no predicate, no inputs
  p.add(sel);
  Node agg;
  agg.kind = OpKind::Reduce;
  agg.aggregates = {{"s", AggFunc::Sum, Expr(), {}}};
  p.add(agg);
  EXPECT_EQ(describe_node(p, p.node(0)), "join inner <foreign>, n42 on (a = c, b = ?)");
  EXPECT_EQ(describe_node(p, p.node(1)), "select  where <none>");
  EXPECT_EQ(describe_node(p, p.node(2)), "reduce  compute (sum() as s)");
  Node bad;
  bad.kind = static_cast<OpKind>(200);
  bad.inputs = {1};
  EXPECT_EQ(describe_node(p, bad), "<unknown operator 200> n1");
}

}  // namespace
}  // namespace ranc
