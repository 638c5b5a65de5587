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
// A one-tuple result of a reduce without group keys: its aggregates are NULL over no rows.
Schema nullable_result(std::initializer_list<std::pair<const char*, Type>> attrs) {
  Schema s = result(attrs);
  for (auto& a : s.attributes) a.nullable = true;
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
        {2,
         "",
         result({{"s_acctbal", F64},
                 {"s_name", Str},
                 {"n_name", Str},
                 {"p_partkey", I32},
                 {"p_mfgr", Str},
                 {"s_address", Str},
                 {"s_phone", Str},
                 {"s_comment", Str}}),
         ordered_by({0, 2, 1, 3}),
         {"part", "supplier", "partsupp", "nation", "region"}},
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
        {6, "", nullable_result({{"revenue", F64}}), {}, {"lineitem"}},
        {7,
         "",
         result({{"supp_nation", Str}, {"cust_nation", Str}, {"l_year", I32}, {"revenue", F64}}),
         ordered_by({0, 1, 2}),
         {"supplier", "lineitem", "orders", "customer", "nation"}},
        {8,
         "",
         result({{"o_year", I32}, {"mkt_share", F64}}),
         ordered_by({0}),
         {"part", "supplier", "lineitem", "orders", "customer", "nation", "region"}},
        {9,
         "",
         result({{"nation", Str}, {"o_year", I32}, {"sum_profit", F64}}),
         ordered_by({0, 1}),
         {"part", "supplier", "lineitem", "partsupp", "orders", "nation"}},
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
        {11,
         "",
         result({{"ps_partkey", I32}, {"value", F64}}),
         ordered_by({1}),
         {"partsupp", "supplier", "nation"}},
        {12,
         "",
         result({{"l_shipmode", Str}, {"high_line_count", I64}, {"low_line_count", I64}}),
         ordered_by({0}),
         {"orders", "lineitem"}},
        {13,
         "",
         result({{"c_count", I64}, {"custdist", I64}}),
         ordered_by({1, 0}),
         {"customer", "orders"}},
        {14, "", nullable_result({{"promo_revenue", F64}}), {}, {"lineitem", "part"}},
        {15,
         "",
         result({{"s_suppkey", I32},
                 {"s_name", Str},
                 {"s_address", Str},
                 {"s_phone", Str},
                 {"total_revenue", F64}}),
         ordered_by({0}),
         {"lineitem", "supplier"}},
        {16,
         "",
         result({{"p_brand", Str}, {"p_type", Str}, {"p_size", I32}, {"supplier_cnt", I64}}),
         ordered_by({3, 0, 1, 2}),
         {"partsupp", "part", "supplier"}},
        {17, "", nullable_result({{"avg_yearly", F64}}), {}, {"lineitem", "part"}},
        {18,
         "",
         result({{"c_name", Str},
                 {"c_custkey", I32},
                 {"o_orderkey", I64},
                 {"o_orderdate", Date},
                 {"o_totalprice", F64},
                 {"sum_qty", F64}}),
         ordered_by({4, 3}),
         {"customer", "orders", "lineitem"}},
        {19, "", nullable_result({{"revenue", F64}}), {}, {"lineitem", "part"}},
        {20,
         "",
         result({{"s_name", Str}, {"s_address", Str}}),
         ordered_by({0}),
         {"supplier", "nation", "partsupp", "part", "lineitem"}},
        {21,
         "",
         result({{"s_name", Str}, {"numwait", I64}}),
         ordered_by({1, 0}),
         {"supplier", "lineitem", "orders", "nation"}},
        {22,
         "",
         result({{"cntrycode", Str}, {"numcust", I64}, {"totacctbal", F64}}),
         ordered_by({0}),
         {"customer", "orders"}},
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
