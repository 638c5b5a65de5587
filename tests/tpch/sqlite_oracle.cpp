// The SQLite oracle and result comparison (see sqlite_oracle.h).
#include "sqlite_oracle.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ranc::testing {

namespace {

std::string quote_ident(std::string_view name) {
  std::string q = "\"";
  for (char c : name) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

const char* sql_type(Type t) {
  switch (t) {
    case Type::Bool:
    case Type::I32:
    case Type::I64:
      return "INTEGER";
    case Type::F32:
    case Type::F64:
      return "REAL";
    case Type::Date:
    case Type::String:
      return "TEXT";
  }
  return "TEXT";
}

// A prepared statement, finalized on scope exit.
struct Stmt {
  sqlite3_stmt* s = nullptr;
  ~Stmt() { sqlite3_finalize(s); }
};

}  // namespace

SqliteDb::SqliteDb() {
  if (sqlite3_open(":memory:", &db_) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw std::runtime_error("sqlite: cannot open an in-memory database: " + msg);
  }
  exec("PRAGMA case_sensitive_like = ON");
}

SqliteDb::~SqliteDb() {
  sqlite3_close(db_);
}

void SqliteDb::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw std::runtime_error("sqlite: " + msg + "\nin: " + sql);
  }
}

void SqliteDb::load(const std::string& name, const HostRelation& rel) {
  const Schema& s = rel.schema();
  std::string create = "CREATE TABLE " + quote_ident(name) + " (";
  std::string insert = "INSERT INTO " + quote_ident(name) + " VALUES (";
  for (size_t c = 0; c < s.size(); ++c) {
    create += (c ? ", " : "") + quote_ident(s[c].name) + " " + sql_type(s[c].type);
    insert += c ? ", ?" : "?";
  }
  exec(create + ")");
  insert += ")";
  Stmt st;
  if (sqlite3_prepare_v2(db_, insert.c_str(), -1, &st.s, nullptr) != SQLITE_OK)
    throw std::runtime_error(std::string("sqlite: ") + sqlite3_errmsg(db_));
  std::vector<const Dictionary*> dicts(s.size(), nullptr);
  for (size_t c = 0; c < s.size(); ++c)
    if (s[c].type == Type::String) dicts[c] = rel.column(c).dictionary().get();
  exec("BEGIN");
  for (size_t r = 0; r < rel.num_rows(); ++r) {
    for (size_t c = 0; c < s.size(); ++c) {
      const Column& col = rel.column(c);
      int i = static_cast<int>(c) + 1;
      switch (s[c].type) {
        case Type::Bool:
          sqlite3_bind_int(st.s, i, col.data<uint8_t>()[r]);
          break;
        case Type::I32:
          sqlite3_bind_int(st.s, i, col.data<int32_t>()[r]);
          break;
        case Type::I64:
          sqlite3_bind_int64(st.s, i, col.data<int64_t>()[r]);
          break;
        case Type::F32:
          sqlite3_bind_double(st.s, i, col.data<float>()[r]);
          break;
        case Type::F64:
          sqlite3_bind_double(st.s, i, col.data<double>()[r]);
          break;
        case Type::Date: {
          std::string d = format_date(col.data<int32_t>()[r]);
          sqlite3_bind_text(st.s, i, d.data(), static_cast<int>(d.size()), SQLITE_TRANSIENT);
          break;
        }
        case Type::String: {
          const std::string& str = dicts[c]->at(col.data<int32_t>()[r]);
          sqlite3_bind_text(st.s, i, str.data(), static_cast<int>(str.size()), SQLITE_STATIC);
          break;
        }
      }
    }
    if (sqlite3_step(st.s) != SQLITE_DONE)
      throw std::runtime_error(
          fmt::format("sqlite: inserting row {} into {}: {}", r + 1, name, sqlite3_errmsg(db_)));
    sqlite3_reset(st.s);
  }
  exec("COMMIT");
}

void SqliteDb::load(const TpchTables& tables) {
  for (const auto& [name, rel] : tables) load(name, rel);
}

HostRelation SqliteDb::query(const std::string& sql, const Schema& result_schema) {
  HostRelation out(result_schema);
  const char* tail = sql.c_str();
  const char* end = tail + sql.size();
  bool have_result = false;
  while (tail < end) {
    Stmt st;
    const char* next = nullptr;
    if (sqlite3_prepare_v2(db_, tail, static_cast<int>(end - tail), &st.s, &next) != SQLITE_OK)
      throw std::runtime_error(std::string("sqlite: ") + sqlite3_errmsg(db_) + "\nin: " + sql);
    tail = next;
    if (!st.s) continue;  // whitespace or a comment
    const int ncols = sqlite3_column_count(st.s);
    if (ncols > 0) {
      if (static_cast<size_t>(ncols) != result_schema.size())
        throw std::runtime_error(
            fmt::format("sqlite: the query returns {} columns but the result "
                        "schema {} has {}",
                        ncols, result_schema.str(), result_schema.size()));
      out = HostRelation(result_schema);
      have_result = true;
    }
    size_t row = 0;
    int rc;
    while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
      ++row;
      std::vector<Value> values;
      for (int c = 0; c < ncols; ++c) {
        const Attribute& a = result_schema[static_cast<size_t>(c)];
        int t = sqlite3_column_type(st.s, c);
        auto fail = [&](const std::string& why) {
          return std::runtime_error(
              fmt::format("sqlite: result row {} column {} ({}): {}", row, c + 1, a.name, why));
        };
        if (t == SQLITE_NULL) {
          if (!a.nullable) throw fail("NULL in an attribute the result schema says is not nullable");
          values.push_back(Value::null(a.type));
          continue;
        }
        switch (a.type) {
          case Type::Bool:
          case Type::I32:
          case Type::I64: {
            int64_t v;
            if (t == SQLITE_INTEGER) {
              v = sqlite3_column_int64(st.s, c);
            } else if (t == SQLITE_FLOAT) {
              double d = sqlite3_column_double(st.s, c);
              if (d != std::floor(d) || std::fabs(d) > 9e18)
                throw fail(fmt::format("{} is not an integer", d));
              v = static_cast<int64_t>(d);
            } else {
              throw fail("expected an integer");
            }
            if (a.type == Type::Bool)
              values.push_back(Value::boolean(v != 0));
            else if (a.type == Type::I64)
              values.push_back(Value::i64(v));
            else if (v < INT32_MIN || v > INT32_MAX)
              throw fail("out of range for i32");
            else
              values.push_back(Value::i32(static_cast<int32_t>(v)));
            break;
          }
          case Type::F32:
          case Type::F64: {
            if (t != SQLITE_INTEGER && t != SQLITE_FLOAT) throw fail("expected a number");
            double d = sqlite3_column_double(st.s, c);
            values.push_back(a.type == Type::F64 ? Value::f64(d)
                                                 : Value::f32(static_cast<float>(d)));
            break;
          }
          case Type::Date: {
            if (t == SQLITE_INTEGER) {
              values.push_back(Value::date(static_cast<int32_t>(sqlite3_column_int64(st.s, c))));
            } else {
              std::string text(reinterpret_cast<const char*>(sqlite3_column_text(st.s, c)));
              auto d = parse_date(text);
              if (!d) throw fail("'" + text + "' is not a date");
              values.push_back(Value::date(*d));
            }
            break;
          }
          case Type::String: {
            const unsigned char* txt = sqlite3_column_text(st.s, c);
            int n = sqlite3_column_bytes(st.s, c);
            values.push_back(Value::string(
                std::string(reinterpret_cast<const char*>(txt), static_cast<size_t>(n))));
            break;
          }
        }
      }
      if (ncols > 0) out.append_row(values);
    }
    if (rc != SQLITE_DONE)
      throw std::runtime_error(std::string("sqlite: ") + sqlite3_errmsg(db_) + "\nin: " + sql);
  }
  if (!have_result) throw std::runtime_error("sqlite: the SQL has no statement returning rows");
  return out;
}

HostRelation SqliteDb::query_file(const std::string& path, const Schema& result_schema) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open SQL file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return query(ss.str(), result_schema);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

// ---------------------------------------------------------------------------
// Comparison

std::string format_row(const std::vector<Value>& row) {
  std::string s = "(";
  for (size_t i = 0; i < row.size(); ++i) {
    if (i) s += ", ";
    const Value& v = row[i];
    s += (v.type() == Type::String || v.type() == Type::Date) ? v.literal_str() : v.str();
  }
  return s + ")";
}

namespace {

bool values_match(const Value& e, const Value& a, const CompareOptions& o) {
  if (is_floating(e.type()) || is_floating(a.type())) {
    if (!is_numeric(e.type()) || !is_numeric(a.type())) return false;
    double x = e.to_double(), y = a.to_double();
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    if (std::isinf(x) || std::isinf(y)) return x == y;
    double tol = std::max(o.rel_tol * std::max(std::fabs(x), std::fabs(y)), o.abs_tol);
    return std::fabs(x - y) <= tol;
  }
  if (is_integer(e.type()) && is_integer(a.type())) return e.to_int64() == a.to_int64();
  return e.type() == a.type() && total_compare(e, a) == 0;
}

bool rows_match(const std::vector<Value>& e, const std::vector<Value>& a, const CompareOptions& o) {
  for (size_t i = 0; i < e.size(); ++i)
    if (!values_match(e[i], a[i], o)) return false;
  return true;
}

// Orders rows by their non-floating columns first, then the floating ones, so
// that rows differing only by rounding sit at the same place on both sides.
struct RowOrder {
  std::vector<size_t> cols;
  explicit RowOrder(const Schema& s) {
    for (size_t c = 0; c < s.size(); ++c)
      if (!is_floating(s[c].type)) cols.push_back(c);
    for (size_t c = 0; c < s.size(); ++c)
      if (is_floating(s[c].type)) cols.push_back(c);
  }
  static std::strong_ordering cmp_value(const Value& a, const Value& b) {
    if (a.type() == b.type()) return total_compare(a, b);
    if (is_numeric(a.type()) && is_numeric(b.type())) {
      if (is_integer(a.type()) && is_integer(b.type())) return a.to_int64() <=> b.to_int64();
      return total_compare_f64(a.to_double(), b.to_double());
    }
    return a.type() <=> b.type();
  }
  std::strong_ordering operator()(const std::vector<Value>& a, const std::vector<Value>& b) const {
    for (size_t c : cols) {
      auto r = cmp_value(a[c], b[c]);
      if (r != 0) return r;
    }
    return std::strong_ordering::equal;
  }
};

std::vector<std::vector<Value>> all_rows(const HostRelation& r) {
  std::vector<std::vector<Value>> rows;
  rows.reserve(r.num_rows());
  for (size_t i = 0; i < r.num_rows(); ++i) rows.push_back(r.row(i));
  return rows;
}

// Compares two slices as multisets; appends what differs to diff. `where` names
// the slice in messages.
bool compare_multiset(std::vector<std::vector<Value>> e, std::vector<std::vector<Value>> a,
                      const RowOrder& order, const CompareOptions& o, const std::string& where,
                      std::string& diff, size_t& shown) {
  auto less = [&](const auto& x, const auto& y) { return order(x, y) < 0; };
  std::sort(e.begin(), e.end(), less);
  std::sort(a.begin(), a.end(), less);
  std::vector<const std::vector<Value>*> missing, extra;
  size_t i = 0, j = 0;
  while (i < e.size() || j < a.size()) {
    if (i < e.size() && j < a.size() && rows_match(e[i], a[j], o)) {
      ++i, ++j;
    } else if (j == a.size() || (i < e.size() && order(e[i], a[j]) < 0)) {
      missing.push_back(&e[i++]);
    } else {
      extra.push_back(&a[j++]);
    }
  }
  if (missing.empty() && extra.empty()) return true;
  diff += fmt::format("{}{} expected row(s) not found, {} unexpected row(s):\n", where,
                      missing.size(), extra.size());
  for (size_t k = 0; k < std::max(missing.size(), extra.size()) && shown < o.max_diffs;
       ++k, ++shown) {
    if (k < missing.size()) diff += "  - expected   " + format_row(*missing[k]) + "\n";
    if (k < extra.size()) diff += "  + unexpected " + format_row(*extra[k]) + "\n";
  }
  return false;
}

}  // namespace

Comparison compare_results(const HostRelation& expected, const HostRelation& actual,
                           const CompareOptions& o) {
  Comparison out;
  const Schema& es = expected.schema();
  const Schema& as = actual.schema();
  if (es.size() != as.size()) {
    out.equal = false;
    out.diff = fmt::format("expected {} columns {}, actual has {} columns {}\n", es.size(),
                           es.str(), as.size(), as.str());
    return out;
  }
  for (size_t c = 0; c < es.size(); ++c) {
    Type et = es[c].type, at = as[c].type;
    bool ok =
        et == at || (is_numeric(et) && is_numeric(at) &&
                     (is_floating(et) || is_floating(at) || (is_integer(et) && is_integer(at))));
    if (!ok) {
      out.equal = false;
      out.diff += fmt::format("column {}: expected {} {}, actual {} {}\n", c + 1, es[c].name,
                              type_name(et), as[c].name, type_name(at));
    }
  }
  if (!out.equal) return out;
  if (expected.num_rows() != actual.num_rows())
    out.diff += fmt::format("expected {} rows, actual has {} rows\n", expected.num_rows(),
                            actual.num_rows());
  auto e = all_rows(expected);
  auto a = all_rows(actual);
  RowOrder order(es);
  size_t shown = 0;
  if (!o.ordered || e.size() != a.size()) {
    out.equal = compare_multiset(std::move(e), std::move(a), order, o, "", out.diff, shown);
    return out;
  }
  // Ordered, same size: walk runs of expected rows tying on the order keys.
  size_t i = 0;
  while (i < e.size()) {
    size_t k = i + 1;
    if (!o.order_keys.empty()) {
      while (k < e.size()) {
        bool tie = true;
        for (size_t c : o.order_keys)
          if (!values_match(e[i][c], e[k][c], o)) tie = false;
        if (!tie) break;
        ++k;
      }
    }
    if (k == i + 1) {
      if (!rows_match(e[i], a[i], o)) {
        out.equal = false;
        if (shown++ < o.max_diffs)
          out.diff += fmt::format("row {}:\n  - expected {}\n  + actual   {}\n", i + 1,
                                  format_row(e[i]), format_row(a[i]));
      }
    } else {
      std::vector<std::vector<Value>> es_(e.begin() + static_cast<ptrdiff_t>(i),
                                          e.begin() + static_cast<ptrdiff_t>(k));
      std::vector<std::vector<Value>> as_(a.begin() + static_cast<ptrdiff_t>(i),
                                          a.begin() + static_cast<ptrdiff_t>(k));
      if (!compare_multiset(std::move(es_), std::move(as_), order, o,
                            fmt::format("rows {}-{} (tied on the order keys): ", i + 1, k),
                            out.diff, shown))
        out.equal = false;
    }
    i = k;
  }
  if (!out.equal) {
    // Tell apart "wrong order" from "wrong rows".
    std::string ms;
    size_t dummy = 0;
    if (compare_multiset(all_rows(expected), all_rows(actual), order, o, "", ms, dummy))
      out.diff += "(the same rows as a multiset: only the order differs)\n";
  }
  return out;
}

Comparison compare_results(const HostRelation& expected, const HostRelation& actual, bool ordered,
                           double rel_tol) {
  CompareOptions o;
  o.ordered = ordered;
  o.rel_tol = rel_tol;
  return compare_results(expected, actual, o);
}

}  // namespace ranc::testing
