// The TPC-H queries checked against SQLite: where each query's SQL lives
// (examples/tpch/sql/qN.sql), the schema of its result and how to compare it.
#pragma once

#include <string>
#include <vector>

#include "ranc/data/host_relation.h"
#include "sqlite_oracle.h"

namespace ranc::testing {

struct TpchQuery {
  int number;
  std::string sql_path;             // absolute path of the SQL text
  Schema result;                    // result columns, in SELECT order
  CompareOptions compare;           // ordered + order keys for queries with ORDER BY
  std::vector<std::string> tables;  // the tables the query reads
};

// Queries 1, 3, 4, 5, 6, 10, 12, 14 and 19.
const std::vector<TpchQuery>& tpch_queries();
// The query with that number; std::out_of_range when it is not in the list.
const TpchQuery& tpch_query(int number);
// Where examples/tpch lives in the source tree (for the .ra files next to sql/).
std::string tpch_examples_dir();

// Runs query q in SQLite on the given tables (loaded once into db by the caller).
HostRelation run_sqlite_query(SqliteDb& db, const TpchQuery& q);

}  // namespace ranc::testing
