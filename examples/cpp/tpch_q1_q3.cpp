// A first ranc program in the C++ DSL: TPC-H Q1- and Q3-shaped queries on a few
// inline rows, checked and run on the CPU reference executor.
#include <cstdio>

#include "ranc/dsl.h"
#include "ranc/ra_ops/ra_ops.h"

using namespace ranc;

static Value d(const char* s) {
  return Value::date(*parse_date(s));
}
static Value str(const char* s) {
  return Value::string(s);
}

int main() {
  ProgramBuilder b;
  Schema lineitem_schema{{{"l_orderkey", Type::I64},
                          {"l_quantity", Type::F64},
                          {"l_extendedprice", Type::F64},
                          {"l_discount", Type::F64},
                          {"l_tax", Type::F64},
                          {"l_returnflag", Type::String},
                          {"l_linestatus", Type::String},
                          {"l_shipdate", Type::Date}},
                         0};
  Schema orders_schema{{{"o_orderkey", Type::I64},
                        {"o_custkey", Type::I64},
                        {"o_orderdate", Type::Date},
                        {"o_shippriority", Type::I32}},
                       1};
  Schema customer_schema{{{"c_custkey", Type::I64}, {"c_mktsegment", Type::String}}, 1};

  Rel lineitem = b.input("lineitem", lineitem_schema.attributes);
  Rel orders = b.input("orders", orders_schema.attributes, 1);
  Rel customer = b.input("customer", customer_schema.attributes, 1);

  // Q1: pricing summary per (returnflag, linestatus) for lines shipped by 1998-09-02.
  Rel q1 =
      lineitem.select(col("l_shipdate") <= date_lit("1998-09-02"))
          .project({"l_returnflag", "l_linestatus", "l_quantity", "l_extendedprice", "l_discount",
                    as(col("l_extendedprice") * (1.0 - col("l_discount")), "disc_price"),
                    as(col("l_extendedprice") * (1.0 - col("l_discount")) * (1.0 + col("l_tax")),
                       "charge")})
          .reduce({"l_returnflag", "l_linestatus"},
                  {sum(col("l_quantity"), "sum_qty"), sum(col("l_extendedprice"), "sum_base_price"),
                   sum(col("disc_price"), "sum_disc_price"), sum(col("charge"), "sum_charge"),
                   avg(col("l_quantity"), "avg_qty"), avg(col("l_discount"), "avg_disc"),
                   count("count_order")})
          .sort({"l_returnflag", "l_linestatus"});
  b.output(q1, "q1");

  // Q3: unshipped orders of BUILDING customers with the highest revenue.
  Rel building = customer.select(col("c_mktsegment") == "BUILDING");
  Rel early_orders = orders.select(col("o_orderdate") < date_lit("1995-03-15"));
  Rel late_lines = lineitem.select(col("l_shipdate") > date_lit("1995-03-15"));
  Rel q3 =
      building.join(early_orders, {"c_custkey"}, {"o_custkey"})
          .join(late_lines, {"o_orderkey"}, {"l_orderkey"})
          .project({"o_orderkey", "o_orderdate", "o_shippriority",
                    as(col("l_extendedprice") * (1.0 - col("l_discount")), "volume")})
          .reduce({"o_orderkey", "o_orderdate", "o_shippriority"}, {sum(col("volume"), "revenue")})
          .sort({desc("revenue"), "o_orderdate"})
          .limit(10);
  b.output(q3, "q3");

  HostRelation li = HostRelation::from_rows(
      lineitem_schema, {
                           {Value::i64(1), Value::f64(17), Value::f64(1000), Value::f64(0.04),
                            Value::f64(0.02), str("N"), str("O"), d("1996-03-13")},
                           {Value::i64(1), Value::f64(36), Value::f64(2000), Value::f64(0.09),
                            Value::f64(0.06), str("N"), str("O"), d("1996-04-12")},
                           {Value::i64(2), Value::f64(38), Value::f64(3000), Value::f64(0.00),
                            Value::f64(0.05), str("N"), str("O"), d("1997-01-28")},
                           {Value::i64(3), Value::f64(45), Value::f64(4000), Value::f64(0.06),
                            Value::f64(0.00), str("R"), str("F"), d("1994-02-02")},
                           {Value::i64(3), Value::f64(49), Value::f64(5000), Value::f64(0.10),
                            Value::f64(0.00), str("R"), str("F"), d("1993-11-09")},
                           {Value::i64(4), Value::f64(30), Value::f64(6000), Value::f64(0.03),
                            Value::f64(0.08), str("A"), str("F"), d("1995-04-10")},
                           {Value::i64(5), Value::f64(15), Value::f64(7000), Value::f64(0.02),
                            Value::f64(0.04), str("N"), str("O"), d("1998-10-30")},
                       });
  HostRelation ord = HostRelation::from_rows(
      orders_schema, {
                         {Value::i64(1), Value::i64(10), d("1995-01-02"), Value::i32(0)},
                         {Value::i64(2), Value::i64(20), d("1995-03-01"), Value::i32(0)},
                         {Value::i64(3), Value::i64(10), d("1993-10-14"), Value::i32(0)},
                         {Value::i64(4), Value::i64(10), d("1995-03-20"), Value::i32(0)},
                     });
  HostRelation cust = HostRelation::from_rows(
      customer_schema, {{Value::i64(10), str("BUILDING")}, {Value::i64(20), str("MACHINERY")}});

  // Expected, by hand: Q1 keeps every line but order 5's (shipped 1998-10-30).
  //   A F: qty 30, base 6000, disc_price 6000*0.97 = 5820, charge 5820*1.08 = 6285.6, 1 line
  //   N O: qty 17+36+38 = 91, base 6000, disc_price 960+1820+3000 = 5780,
  //        charge 979.2+1929.2+3150 = 6058.4, avg_qty 91/3, avg_disc 0.13/3, 3 lines
  //   R F: qty 94, base 9000, disc_price 3760+4500 = 8260, charge 8260 (no tax), 2 lines
  // Q3: customer 10 is BUILDING; its orders before 1995-03-15 are 1 and 3; only order
  // 1 has lines shipped after that date: revenue 1000*0.96 + 2000*0.91 = 2780.
  try {
    Program checked = b.check();
    std::printf("%s\n", print_program(checked).c_str());
    auto outputs =
        execute_reference(checked, {{"lineitem", li}, {"orders", ord}, {"customer", cust}});
    std::printf("q1:\n%s\nq3:\n%s", outputs[0].to_table().c_str(), outputs[1].to_table().c_str());
  } catch (const UserError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
