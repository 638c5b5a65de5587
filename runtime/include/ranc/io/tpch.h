// The eight TPC-H tables: their schemas (column names as in the specification)
// and loading a directory of .tbl files as written by dbgen or tpchgen-cli.
//
// Types: order keys are i64 (they exceed 2^31 above SF 300), all other keys and
// integers i32; decimals f64; dates date; flags and text string. The key of each
// schema is its primary key where that is a prefix of the attributes (lineitem
// has none: its primary key is (l_orderkey, l_linenumber)).
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ranc/data/host_relation.h"
#include "ranc/io/csv.h"

namespace ranc::tpch {

inline constexpr std::array<std::string_view, 8> kTables = {
    "region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"};

// The schema of a TPC-H table; UserError(UnknownRelation) for another name.
const Schema& schema(std::string_view table);
bool is_table(std::string_view table);

// Loads dir/<table>.tbl.
HostRelation load_table(const std::string& dir, std::string_view table, ProgressFn progress = {});

// Loads the given tables (all eight when empty) from dir, keyed by table name.
std::map<std::string, HostRelation, std::less<>> load_tables(
    const std::string& dir, const std::vector<std::string>& tables = {});

}  // namespace ranc::tpch
