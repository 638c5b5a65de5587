// SQLite as an independent oracle: load host relations into an in-memory SQLite
// database, run SQL, read the result back as a HostRelation of a given schema,
// and compare two results (floats within a relative tolerance, everything else
// exactly; ordered or as multisets) with a readable diff.
//
// Storage in SQLite: bool, i32, i64 as INTEGER; f32, f64 as REAL; string as TEXT;
// date as TEXT 'YYYY-MM-DD', so that date literals in SQL are written '1994-01-01'
// and compare correctly, and date('1994-01-01', '+1 year') works. LIKE is made
// case-sensitive, as in SQL.
#pragma once

#include <string>
#include <vector>

#include "ranc/data/host_relation.h"
#include "tpch_data.h"

struct sqlite3;

namespace ranc::testing {

// Errors of SQLite (bad SQL, NULL results, type mismatches) are std::runtime_error.
class SqliteDb {
 public:
  SqliteDb();  // an empty in-memory database
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Creates table `name` with the relation's attribute names and inserts its rows.
  void load(const std::string& name, const HostRelation& rel);
  // Loads every table (named by the map key).
  void load(const TpchTables& tables);
  // Runs statements that return no rows.
  void exec(const std::string& sql);
  // Runs sql (one or more statements separated by ';'; the last one that returns
  // rows gives the result) and converts its rows to result_schema, column by
  // column: INTEGER or REAL for numbers, TEXT or INTEGER days for dates, TEXT for
  // strings. The column count must match; NULLs are an error (ranc has none).
  HostRelation query(const std::string& sql, const Schema& result_schema);
  HostRelation query_file(const std::string& path, const Schema& result_schema);

  sqlite3* handle() { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

struct CompareOptions {
  // Rows must appear in the same order (a query with ORDER BY).
  bool ordered = false;
  // With ordered: the columns the query sorts by. Rows of the expected result
  // that tie on all of them may appear in any order among themselves. Empty
  // means every row position is exact.
  std::vector<size_t> order_keys;
  double rel_tol = 1e-9;
  double abs_tol = 1e-9;  // for values near zero
  size_t max_diffs = 10;  // rows shown in the diff
};

struct Comparison {
  bool equal = true;
  std::string diff;  // empty when equal
  explicit operator bool() const { return equal; }
};

// Compares the results column by column by position (names may differ). Floating
// values (either side f32/f64) match within max(rel_tol * max(|e|, |a|), abs_tol)
// (NaN matches NaN); integers match across i32/i64; everything else exactly.
Comparison compare_results(const HostRelation& expected, const HostRelation& actual,
                           const CompareOptions& options);
Comparison compare_results(const HostRelation& expected, const HostRelation& actual, bool ordered,
                           double rel_tol = 1e-9);

// One row as "(a, 'text', 1.5, date '1994-01-01')" for messages.
std::string format_row(const std::vector<Value>& row);

}  // namespace ranc::testing
