// Result schemas and comparison settings of the TPC-H queries.
#include "tpch_queries.h"

#include <stdexcept>

namespace ranc::testing {

namespace {

Schema result(std::initializer_list<std::pair<const char*, Type>> attrs) {
  Schema s;
  for (const auto& [n, t] : attrs) s.attributes.push_back({n, t});
  return s;
}

CompareOptions ordered_by(std::vector<size_t> keys) {
  CompareOptions o;
  o.ordered = true;
  o.order_keys = std::move(keys);
  return o;
}

constexpr Type I32 = Type::I32, I64 = Type::I64, F64 = Type::F64, Date = Type::Date,
               Str = Type::String;

}  // namespace

std::string tpch_examples_dir() {
  return std::string(RANC_SOURCE_DIR) + "/examples/tpch";
}

const std::vector<TpchQuery>& tpch_queries() {
  static const std::vector<TpchQuery> qs = [] {
    std::vector<TpchQuery> v = {
        {1,
         "",
         result({{"l_returnflag", Str},
                 {"l_linestatus", Str},
                 {"sum_qty", F64},
                 {"sum_base_price", F64},
                 {"sum_disc_price", F64},
                 {"sum_charge", F64},
                 {"avg_qty", F64},
                 {"avg_price", F64},
                 {"avg_disc", F64},
                 {"count_order", I64}}),
         ordered_by({0, 1}),
         {"lineitem"}},
        {3,
         "",
         result({{"l_orderkey", I64},
                 {"revenue", F64},
                 {"o_orderdate", Date},
                 {"o_shippriority", I32}}),
         ordered_by({1, 2}),
         {"customer", "orders", "lineitem"}},
        {4,
         "",
         result({{"o_orderpriority", Str}, {"order_count", I64}}),
         ordered_by({0}),
         {"orders", "lineitem"}},
        {5,
         "",
         result({{"n_name", Str}, {"revenue", F64}}),
         ordered_by({1}),
         {"customer", "orders", "lineitem", "supplier", "nation", "region"}},
        {6, "", result({{"revenue", F64}}), {}, {"lineitem"}},
        {10,
         "",
         result({{"c_custkey", I32},
                 {"c_name", Str},
                 {"revenue", F64},
                 {"c_acctbal", F64},
                 {"n_name", Str},
                 {"c_address", Str},
                 {"c_phone", Str},
                 {"c_comment", Str}}),
         ordered_by({2}),
         {"customer", "orders", "lineitem", "nation"}},
        {12,
         "",
         result({{"l_shipmode", Str}, {"high_line_count", I64}, {"low_line_count", I64}}),
         ordered_by({0}),
         {"orders", "lineitem"}},
        {14, "", result({{"promo_revenue", F64}}), {}, {"lineitem", "part"}},
        {19, "", result({{"revenue", F64}}), {}, {"lineitem", "part"}},
    };
    for (auto& q : v)
      q.sql_path = tpch_examples_dir() + "/sql/q" + std::to_string(q.number) + ".sql";
    return v;
  }();
  return qs;
}

const TpchQuery& tpch_query(int number) {
  for (const auto& q : tpch_queries())
    if (q.number == number) return q;
  throw std::out_of_range("TPC-H query " + std::to_string(number) + " is not in the test set");
}

HostRelation run_sqlite_query(SqliteDb& db, const TpchQuery& q) {
  return db.query_file(q.sql_path, q.result);
}

}  // namespace ranc::testing
