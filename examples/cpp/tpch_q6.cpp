// TPC-H Q6 (forecasting revenue change) in the C++ DSL, on real data: how much
// revenue would have been gained in 1994 by dropping discounts of 0.05 to 0.07 on
// small orders (quantity < 24)? Loads lineitem.tbl from the directory given on the
// command line and runs the query on the CPU reference executor. The same query as
// a .ra file: examples/tpch/q6.ra; in SQL: examples/tpch/sql/q6.sql.
//
//   scripts/tpch_gen.sh 0.01 /tmp/tpch-sf0.01
//   build/examples/tpch_q6 /tmp/tpch-sf0.01
#include <cstdio>
#include <exception>

#include "ranc/dsl.h"
#include "ranc/io/tpch.h"
#include "ranc/ra_ops/ra_ops.h"

using namespace ranc;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s TPCH_DIR   (a directory holding lineitem.tbl)\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];

  ProgramBuilder b;
  // The input has lineitem's full schema, the one the loader produces.
  const Schema& li_schema = tpch::schema("lineitem");
  Rel lineitem = b.input("lineitem", li_schema.attributes, li_schema.key_size);

  // Parameters as in sql/q6.sql: DATE = 1994-01-01, DISCOUNT = 0.06, QUANTITY = 24.
  // The discount range 0.06 +- 0.01 is written as the literals 0.05 and 0.07
  // (0.06 - 0.01 computed in floating point is 0.049999...).
  Rel q6 = lineitem
               .select(col("l_shipdate") >= date_lit("1994-01-01") &&
                       col("l_shipdate") < date_lit("1995-01-01") &&
                       between(col("l_discount"), 0.05, 0.07) && col("l_quantity") < 24)
               .reduce({}, {sum(col("l_extendedprice") * col("l_discount"), "revenue")});
  b.output(q6, "q6");

  try {
    Program checked = b.check();
    HostRelation li = tpch::load_table(dir, "lineitem");
    std::fprintf(stderr, "loaded %zu lineitem rows from %s/lineitem.tbl\n", li.num_rows(),
                 dir.c_str());
    std::vector<HostRelation> out = execute_reference(checked, {{"lineitem", std::move(li)}});
    std::printf("%s", out.at(0).to_table().c_str());
  } catch (const UserError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
