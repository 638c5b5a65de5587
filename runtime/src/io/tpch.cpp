// TPC-H table schemas (specification 2.18, section 1.4) and loading .tbl files.
#include "ranc/io/tpch.h"

#include <fmt/format.h>

#include "ranc/data/error.h"

namespace ranc::tpch {

namespace {

Schema make(std::initializer_list<std::pair<const char*, Type>> attrs, size_t key) {
  Schema s;
  for (const auto& [name, type] : attrs) s.attributes.push_back({name, type});
  s.key_size = key;
  return s;
}

constexpr Type I32 = Type::I32, I64 = Type::I64, F64 = Type::F64, Date = Type::Date,
               Str = Type::String;

const std::map<std::string, Schema, std::less<>>& schemas() {
  static const std::map<std::string, Schema, std::less<>> m = {
      {"region", make({{"r_regionkey", I32}, {"r_name", Str}, {"r_comment", Str}}, 1)},
      {"nation",
       make({{"n_nationkey", I32}, {"n_name", Str}, {"n_regionkey", I32}, {"n_comment", Str}}, 1)},
      {"supplier", make({{"s_suppkey", I32},
                         {"s_name", Str},
                         {"s_address", Str},
                         {"s_nationkey", I32},
                         {"s_phone", Str},
                         {"s_acctbal", F64},
                         {"s_comment", Str}},
                        1)},
      {"customer", make({{"c_custkey", I32},
                         {"c_name", Str},
                         {"c_address", Str},
                         {"c_nationkey", I32},
                         {"c_phone", Str},
                         {"c_acctbal", F64},
                         {"c_mktsegment", Str},
                         {"c_comment", Str}},
                        1)},
      {"part", make({{"p_partkey", I32},
                     {"p_name", Str},
                     {"p_mfgr", Str},
                     {"p_brand", Str},
                     {"p_type", Str},
                     {"p_size", I32},
                     {"p_container", Str},
                     {"p_retailprice", F64},
                     {"p_comment", Str}},
                    1)},
      {"partsupp", make({{"ps_partkey", I32},
                         {"ps_suppkey", I32},
                         {"ps_availqty", I32},
                         {"ps_supplycost", F64},
                         {"ps_comment", Str}},
                        2)},
      {"orders", make({{"o_orderkey", I64},
                       {"o_custkey", I32},
                       {"o_orderstatus", Str},
                       {"o_totalprice", F64},
                       {"o_orderdate", Date},
                       {"o_orderpriority", Str},
                       {"o_clerk", Str},
                       {"o_shippriority", I32},
                       {"o_comment", Str}},
                      1)},
      {"lineitem", make({{"l_orderkey", I64},
                         {"l_partkey", I32},
                         {"l_suppkey", I32},
                         {"l_linenumber", I32},
                         {"l_quantity", F64},
                         {"l_extendedprice", F64},
                         {"l_discount", F64},
                         {"l_tax", F64},
                         {"l_returnflag", Str},
                         {"l_linestatus", Str},
                         {"l_shipdate", Date},
                         {"l_commitdate", Date},
                         {"l_receiptdate", Date},
                         {"l_shipinstruct", Str},
                         {"l_shipmode", Str},
                         {"l_comment", Str}},
                        0)},
  };
  return m;
}

}  // namespace

bool is_table(std::string_view table) {
  return schemas().count(table) != 0;
}

const Schema& schema(std::string_view table) {
  auto it = schemas().find(table);
  if (it == schemas().end()) {
    Diagnostic d;
    d.kind = ErrorKind::UnknownRelation;
    d.message = fmt::format("'{}' is not a TPC-H table", table);
    d.hint = "the tables are region, nation, supplier, customer, part, partsupp, orders, lineitem";
    throw UserError(std::move(d));
  }
  return it->second;
}

HostRelation load_table(const std::string& dir, std::string_view table, ProgressFn progress) {
  CsvOptions opt = CsvOptions::tbl();
  opt.progress = std::move(progress);
  return read_csv(fmt::format("{}/{}.tbl", dir, table), schema(table), opt);
}

std::map<std::string, HostRelation, std::less<>> load_tables(
    const std::string& dir, const std::vector<std::string>& tables) {
  std::map<std::string, HostRelation, std::less<>> out;
  if (tables.empty()) {
    for (auto t : kTables) out.emplace(std::string(t), load_table(dir, t));
  } else {
    for (const auto& t : tables) out.emplace(t, load_table(dir, t));
  }
  return out;
}

}  // namespace ranc::tpch
