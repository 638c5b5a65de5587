// passes::UniqueKeys (no GPU): the attribute sets that identify a node's rows, derived by
// hand for each rule, and the hash join's build side that follows from them.
#include "ranc/passes/unique_keys.h"

#include <gtest/gtest.h>

#include "ranc/dsl.h"
#include "ranc/passes/pass_runner.h"
#include "ranc/passes/plan_sort_orders.h"

namespace ranc {
namespace {

using passes::KeySet;

struct Tpch {
  ProgramBuilder b;
  // customer(ck key, nation), orders(ok key, ock, date), lineitem(lok, qty) without a key.
  Rel customer = b.input("customer", {{"ck", Type::I32}, {"nation", Type::I32}}, 1);
  Rel orders = b.input("orders", {{"ok", Type::I64}, {"ock", Type::I32}, {"date", Type::Date}}, 1);
  Rel lineitem = b.input("lineitem", {{"lok", Type::I64}, {"qty", Type::I32}});
};

TEST(UniqueKeys, InputsSelectsAndProjects) {
  Tpch t;
  Rel sel = t.orders.select(col("ock") > 5);
  Rel moved = sel.project({"date", as(col("ock") + 1, "x"), "ok"});  // ok is now attribute 2
  Rel dropped = sel.project({"ock", "date"});
  t.b.output(moved, "a");
  t.b.output(dropped, "b");
  t.b.output(t.lineitem, "c");
  t.b.output(t.customer, "d");  // every node used: the checked program keeps the ids
  Program p = t.b.check();
  passes::UniqueKeys k(p);
  EXPECT_EQ(k.of(t.orders.id()), (std::vector<KeySet>{{0}}));
  EXPECT_EQ(k.of(sel.id()), (std::vector<KeySet>{{0}}));
  EXPECT_EQ(k.of(moved.id()), (std::vector<KeySet>{{2}}));
  EXPECT_TRUE(k.of(dropped.id()).empty());
  EXPECT_TRUE(k.of(t.lineitem.id()).empty());
  EXPECT_TRUE(k.within(moved.id(), {0, 2}));
  EXPECT_FALSE(k.within(moved.id(), {0, 1}));
}

TEST(UniqueKeys, JoinsReduceDistinctProduct) {
  Tpch t;
  // Each order matches one customer: the orders' key identifies the joined rows. Output:
  // ck(0) nation(1) ok(2) date(3); the right key ock reads as ck.
  Rel co = t.customer.join(t.orders, {"ck"}, {"ock"});
  // Each order row matches one customer the other way round too.
  Rel oc = t.orders.join(t.customer, {"ock"}, {"ck"});
  // Lineitem has no key; joined to co on the order key, co's rows are unique on ok, so every
  // lineitem row matches at most once: nothing identifies lineitem rows, so no set.
  Rel lco = t.lineitem.join(co, {"lok"}, {"ok"});
  Rel red = t.lineitem.reduce({"lok"}, {ranc::sum(col("qty"), "s")});
  Rel glob = t.lineitem.reduce({}, {ranc::count("n")});
  Rel dist = t.lineitem.distinct();
  Rel prod = t.customer.product(t.orders.project({as(col("ok"), "ok2"), "date"}));
  for (Rel r : {co, oc, lco, red, glob, dist, prod}) t.b.output(r, "o" + std::to_string(r.id()));
  Program p = t.b.check();
  passes::UniqueKeys k(p);
  EXPECT_EQ(k.of(co.id()), (std::vector<KeySet>{{2}}));
  // orders' key (0) holds, and the customer's key reads as the left key ock (1): the pair
  // {ok, ock} is implied by {ok} alone.
  EXPECT_EQ(k.of(oc.id()), (std::vector<KeySet>{{0}}));
  EXPECT_TRUE(k.of(lco.id()).empty());
  EXPECT_EQ(k.of(red.id()), (std::vector<KeySet>{{0}}));
  EXPECT_EQ(k.of(glob.id()), (std::vector<KeySet>{{}}));
  EXPECT_EQ(k.of(dist.id()), (std::vector<KeySet>{{0, 1}}));
  EXPECT_EQ(k.of(prod.id()), (std::vector<KeySet>{{0, 2}}));
}

// Set operations, semi and anti joins, sort and limit: a union is a set (the whole tuple);
// a union all is a bag (nothing); intersect, difference, semi and anti joins, sorts and
// limits keep a subset of their left input's rows, so its sets hold.
TEST(UniqueKeys, SetOperationsAndFilters) {
  Tpch t;
  Rel a = t.orders.project({"ok", "ock"});
  Rel b = t.orders.select(col("ock") > 5).project({"ok", "ock"});
  Rel uni = a.union_with(b), all = a.union_all(b), inter = a.intersect(b), diff = a.difference(b);
  Rel semi = t.orders.semi_join(t.customer, {"ock"}, {"ck"});
  Rel anti = t.lineitem.anti_join(t.orders, {"lok"}, {"ok"});
  Rel sorted = t.orders.sort({"date"}).limit(3);
  for (Rel r : {uni, all, inter, diff, semi, anti, sorted}) t.b.output(r, "o" + std::to_string(r.id()));
  Program p = t.b.check();
  passes::UniqueKeys k(p);
  EXPECT_EQ(k.of(uni.id()), (std::vector<KeySet>{{0, 1}}));
  EXPECT_TRUE(k.of(all.id()).empty());
  EXPECT_EQ(k.of(inter.id()), (std::vector<KeySet>{{0}}));
  EXPECT_EQ(k.of(diff.id()), (std::vector<KeySet>{{0}}));
  EXPECT_EQ(k.of(semi.id()), (std::vector<KeySet>{{0}}));
  EXPECT_TRUE(k.of(anti.id()).empty());
  EXPECT_EQ(k.of(sorted.id()), (std::vector<KeySet>{{0}}));
}

// The hash join builds on the side whose join keys are its key: customer |> join orders
// builds on the customer (left), orders |> join customer on the customer (right), and a join
// of two keyless inputs on the right.
TEST(UniqueKeys, HashJoinBuildSide) {
  Tpch t;
  t.b.output(t.customer.join(t.orders, {"ck"}, {"ock"}), "left_keyed");
  t.b.output(t.orders.join(t.customer, {"ock"}, {"ck"}), "right_keyed");
  t.b.output(t.lineitem.join(t.lineitem.project({as(col("lok"), "k2"), as(col("qty"), "q2")}),
                             {"lok"}, {"k2"}),
             "neither");
  // The lineitem rows joined to the keyed customer-orders rows: build on co (left).
  t.b.output(t.customer.join(t.orders, {"ck"}, {"ock"}).join(t.lineitem, {"ok"}, {"lok"}), "chain");
  Program p = t.b.check();
  const passes::PipelineResult r = passes::run_pipeline(p, {.join = codegen::JoinAlgorithm::Hash});
  std::vector<bool> left;
  for (const Node& n : r.physical.program.nodes())
    if (n.kind == OpKind::Join) left.push_back(r.physical.nodes.at(static_cast<size_t>(n.id)).build_left);
  EXPECT_EQ(left, (std::vector<bool>{true, false, false, true, true}));
  EXPECT_NE(passes::print_join_choices(r.physical).find("built on the left input"), std::string::npos);
}

}  // namespace
}  // namespace ranc
