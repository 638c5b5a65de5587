// Tests of the SQLite oracle (loading relations, running SQL, converting results),
// of compare_results, and of the TPC-H SQL queries on SF 0.01 data, some of them
// cross-checked against a direct C++ computation over the loaded tables.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "ranc/io/tpch.h"
#include "sqlite_oracle.h"
#include "tpch_data.h"
#include "tpch_queries.h"

namespace ranc::testing {
namespace {

Schema schema_of(std::vector<std::pair<std::string, Type>> attrs) {
  Schema s;
  for (auto& [n, t] : attrs) s.attributes.push_back({n, t});
  return s;
}

Value d(const char* iso) {
  return Value::date(*parse_date(iso));
}

HostRelation sales() {
  return HostRelation::from_rows(schema_of({{"id", Type::I64},
                                            {"region", Type::String},
                                            {"amount", Type::F64},
                                            {"day", Type::Date},
                                            {"flag", Type::Bool},
                                            {"qty", Type::I32}}),
                                 {{Value::i64(1), Value::string("EU"), Value::f64(10.5),
                                   d("1994-01-01"), Value::boolean(true), Value::i32(3)},
                                  {Value::i64(2), Value::string("US"), Value::f64(0.25),
                                   d("1994-06-30"), Value::boolean(false), Value::i32(1)},
                                  {Value::i64(3), Value::string("EU"), Value::f64(4.0),
                                   d("1995-01-01"), Value::boolean(true), Value::i32(7)},
                                  {Value::i64(4), Value::string("it's"), Value::f64(-1.0),
                                   d("1993-12-31"), Value::boolean(false), Value::i32(2)}});
}

TEST(SqliteOracle, GroupByWithDatesAndOrder) {
  SqliteDb db;
  db.load("sales", sales());
  auto r = db.query(
      "select region, sum(amount) as total, count(*) as n, min(day) as first_day\n"
      "from sales where day >= '1994-01-01' and day < date('1994-01-01', '+1 year')\n"
      "group by region order by region;",
      schema_of({{"region", Type::String},
                 {"total", Type::F64},
                 {"n", Type::I64},
                 {"first_day", Type::Date}}));
  auto expected = HostRelation::from_rows(
      r.schema(), {{Value::string("EU"), Value::f64(10.5), Value::i64(1), d("1994-01-01")},
                   {Value::string("US"), Value::f64(0.25), Value::i64(1), d("1994-06-30")}});
  auto c = compare_results(expected, r, true);
  EXPECT_TRUE(c.equal) << c.diff;
}

TEST(SqliteOracle, AllTypesRoundTripThroughSqlite) {
  SqliteDb db;
  auto rel = sales();
  db.load("sales", rel);
  auto back = db.query("-- a comment first\nselect * from sales order by id", rel.schema());
  auto c = compare_results(rel, back, true, 0.0);
  EXPECT_TRUE(c.equal) << c.diff;
  // Quotes inside strings, bools as integers, a join and LIKE (case-sensitive).
  auto r = db.query(
      "select a.id, b.region from sales a, sales b where a.id = b.id + 1 and b.flag "
      "and b.region like 'E%' and b.region not like 'e%';",
      schema_of({{"id", Type::I32}, {"region", Type::String}}));
  auto e2 = HostRelation::from_rows(
      r.schema(), {{Value::i32(2), Value::string("EU")}, {Value::i32(4), Value::string("EU")}});
  c = compare_results(e2, r, false);
  EXPECT_TRUE(c.equal) << c.diff;
  auto r3 = db.query("select region from sales where region = 'it''s'",
                     schema_of({{"region", Type::String}}));
  ASSERT_EQ(r3.num_rows(), 1u);
  EXPECT_EQ(r3.get(0, 0), Value::string("it's"));
}

TEST(SqliteOracle, Errors) {
  SqliteDb db;
  db.load("sales", sales());
  auto one = schema_of({{"x", Type::F64}});
  EXPECT_THROW(db.query("select sum(amount) from sales where id > 100", one), std::runtime_error);
  EXPECT_THROW(db.query("select id, amount from sales", one), std::runtime_error);
  EXPECT_THROW(db.query("select nope from sales", one), std::runtime_error);
  EXPECT_THROW(db.query("select region from sales", schema_of({{"x", Type::I32}})),
               std::runtime_error);
  EXPECT_THROW(db.query_file("/nonexistent.sql", one), std::runtime_error);
  try {
    db.query("select sum(amount) from sales where id > 100", one);
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("NULL"), std::string::npos) << e.what();
  }
}

HostRelation rel2(std::vector<std::vector<Value>> rows, Type t1 = Type::String,
                  Type t2 = Type::F64) {
  return HostRelation::from_rows(schema_of({{"k", t1}, {"v", t2}}), rows);
}

TEST(CompareResults, FloatsWithinRelativeTolerance) {
  auto e = rel2({{Value::string("a"), Value::f64(1e6)}, {Value::string("b"), Value::f64(0.0)}});
  auto a = rel2({{Value::string("a"), Value::f64(1e6 * (1 + 5e-10))},
                 {Value::string("b"), Value::f64(5e-10)}});
  EXPECT_TRUE(compare_results(e, a, true).equal);
  auto far = rel2(
      {{Value::string("a"), Value::f64(1e6 * (1 + 5e-9))}, {Value::string("b"), Value::f64(0.0)}});
  auto c = compare_results(e, far, true);
  EXPECT_FALSE(c.equal);
  EXPECT_NE(c.diff.find("row 1:"), std::string::npos) << c.diff;
  EXPECT_NE(c.diff.find("- expected ('a', 1e+06)"), std::string::npos) << c.diff;
  EXPECT_TRUE(compare_results(e, far, true, 1e-8).equal);
  // Strings and integers are exact.
  auto s = rel2({{Value::string("a "), Value::f64(1e6)}, {Value::string("b"), Value::f64(0.0)}});
  EXPECT_FALSE(compare_results(e, s, true).equal);
}

TEST(CompareResults, MultisetsAndOrder) {
  auto e = rel2({{Value::string("a"), Value::f64(1)},
                 {Value::string("b"), Value::f64(2)},
                 {Value::string("b"), Value::f64(2)}});
  auto perm = rel2({{Value::string("b"), Value::f64(2)},
                    {Value::string("a"), Value::f64(1)},
                    {Value::string("b"), Value::f64(2)}});
  EXPECT_TRUE(compare_results(e, perm, false).equal);
  auto c = compare_results(e, perm, true);
  EXPECT_FALSE(c.equal);
  EXPECT_NE(c.diff.find("only the order differs"), std::string::npos) << c.diff;
  // Duplicates count.
  auto fewer = rel2({{Value::string("a"), Value::f64(1)},
                     {Value::string("b"), Value::f64(2)},
                     {Value::string("c"), Value::f64(2)}});
  c = compare_results(e, fewer, false);
  EXPECT_FALSE(c.equal);
  EXPECT_NE(c.diff.find("- expected   ('b', 2)"), std::string::npos) << c.diff;
  EXPECT_NE(c.diff.find("+ unexpected ('c', 2)"), std::string::npos) << c.diff;
  auto shorter = rel2({{Value::string("a"), Value::f64(1)}});
  c = compare_results(e, shorter, true);
  EXPECT_FALSE(c.equal);
  EXPECT_NE(c.diff.find("expected 3 rows, actual has 1 rows"), std::string::npos) << c.diff;
}

TEST(CompareResults, TiesOnOrderKeysMayBePermuted) {
  // ORDER BY v DESC: rows tied on v may come in any order.
  auto e = rel2({{Value::string("x"), Value::f64(3)},
                 {Value::string("a"), Value::f64(2)},
                 {Value::string("b"), Value::f64(2)},
                 {Value::string("c"), Value::f64(1)}});
  auto a = rel2({{Value::string("x"), Value::f64(3)},
                 {Value::string("b"), Value::f64(2)},
                 {Value::string("a"), Value::f64(2 * (1 + 1e-12))},
                 {Value::string("c"), Value::f64(1)}});
  CompareOptions o;
  o.ordered = true;
  o.order_keys = {1};
  auto c = compare_results(e, a, o);
  EXPECT_TRUE(c.equal) << c.diff;
  o.order_keys = {};
  EXPECT_FALSE(compare_results(e, a, o).equal);
  // A wrong row inside a tie group is still reported.
  auto wrong = rel2({{Value::string("x"), Value::f64(3)},
                     {Value::string("b"), Value::f64(2)},
                     {Value::string("z"), Value::f64(2)},
                     {Value::string("c"), Value::f64(1)}});
  o.order_keys = {1};
  c = compare_results(e, wrong, o);
  EXPECT_FALSE(c.equal);
  EXPECT_NE(c.diff.find("rows 2-3 (tied on the order keys)"), std::string::npos) << c.diff;
}

TEST(CompareResults, IntegerWidthsAndTypes) {
  auto e = rel2({{Value::i32(1), Value::i64(5)}}, Type::I32, Type::I64);
  auto a = rel2({{Value::i64(1), Value::i32(5)}}, Type::I64, Type::I32);
  EXPECT_TRUE(compare_results(e, a, false).equal);
  auto f = rel2({{Value::i64(1), Value::f64(5)}}, Type::I64, Type::F64);
  EXPECT_TRUE(compare_results(e, f, false).equal);
  auto s = rel2({{Value::string("1"), Value::i64(5)}}, Type::String, Type::I64);
  auto c = compare_results(e, s, false);
  EXPECT_FALSE(c.equal);
  EXPECT_NE(c.diff.find("column 1: expected k i32, actual k string"), std::string::npos) << c.diff;
  auto three = HostRelation(schema_of({{"a", Type::I32}, {"b", Type::I32}, {"c", Type::I32}}));
  EXPECT_FALSE(compare_results(e, three, false).equal);
}

// ---------------------------------------------------------------------------
// TPC-H at SF 0.01

class TpchSf001 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string why;
    auto dir = tpch_data_dir("0.01", &why);
    if (!dir) {
      skip_reason_ = new std::string(why);
      return;
    }
    tables_ = new TpchTables(load_tpch(*dir));
    db_ = new SqliteDb();
    db_->load(*tables_);
  }
  static void TearDownTestSuite() {
    delete db_;
    delete tables_;
    delete skip_reason_;
    db_ = nullptr;
    tables_ = nullptr;
    skip_reason_ = nullptr;
  }
  void SetUp() override {
    if (skip_reason_) GTEST_SKIP() << "SKIPPED: " << *skip_reason_;
  }
  static const HostRelation& table(const char* name) { return tables_->at(name); }
  static TpchTables* tables_;
  static SqliteDb* db_;
  static std::string* skip_reason_;
};
TpchTables* TpchSf001::tables_ = nullptr;
SqliteDb* TpchSf001::db_ = nullptr;
std::string* TpchSf001::skip_reason_ = nullptr;

TEST_F(TpchSf001, TablesHaveTheSpecifiedSizes) {
  // SF 0.01: fixed sizes for region and nation, the rest scale.
  EXPECT_EQ(table("region").num_rows(), 5u);
  EXPECT_EQ(table("nation").num_rows(), 25u);
  EXPECT_EQ(table("supplier").num_rows(), 100u);
  EXPECT_EQ(table("customer").num_rows(), 1500u);
  EXPECT_EQ(table("part").num_rows(), 2000u);
  EXPECT_EQ(table("partsupp").num_rows(), 8000u);
  EXPECT_EQ(table("orders").num_rows(), 15000u);
  EXPECT_GT(table("lineitem").num_rows(), 55000u);
  EXPECT_LT(table("lineitem").num_rows(), 65000u);
}

TEST_F(TpchSf001, EveryQueryRunsAndHasRows) {
  std::map<int, size_t> rows = {{1, 4},   {3, 10}, {4, 5},  {6, 1},
                                {10, 20}, {12, 2}, {14, 1}, {19, 1}};
  for (const auto& q : tpch_queries()) {
    HostRelation r = run_sqlite_query(*db_, q);
    EXPECT_GT(r.num_rows(), 0u) << "Q" << q.number;
    if (rows.count(q.number)) {
      EXPECT_EQ(r.num_rows(), rows[q.number]) << "Q" << q.number;
    }
    // Comparing a result with itself passes.
    auto c = compare_results(r, r, q.compare);
    EXPECT_TRUE(c.equal) << c.diff;
  }
}

// Q6 and Q1 computed directly from the loaded columns: checks the loader and the
// oracle against each other.
TEST_F(TpchSf001, Q6MatchesADirectComputation) {
  const HostRelation& l = table("lineitem");
  const auto& s = l.schema();
  const auto& qty = l.column(*s.find("l_quantity")).data<double>();
  const auto& price = l.column(*s.find("l_extendedprice")).data<double>();
  const auto& disc = l.column(*s.find("l_discount")).data<double>();
  const auto& ship = l.column(*s.find("l_shipdate")).data<int32_t>();
  int32_t lo = *parse_date("1994-01-01"), hi = *parse_date("1995-01-01");
  double sum = 0;
  for (size_t i = 0; i < l.num_rows(); ++i)
    if (ship[i] >= lo && ship[i] < hi && disc[i] >= 0.05 && disc[i] <= 0.07 && qty[i] < 24)
      sum += price[i] * disc[i];
  auto mine = HostRelation::from_rows(tpch_query(6).result, {{Value::f64(sum)}});
  auto c = compare_results(run_sqlite_query(*db_, tpch_query(6)), mine, false);
  EXPECT_TRUE(c.equal) << c.diff;
}

TEST_F(TpchSf001, Q1MatchesADirectComputation) {
  const HostRelation& l = table("lineitem");
  const auto& s = l.schema();
  const auto& rf = l.column(*s.find("l_returnflag"));
  const auto& ls = l.column(*s.find("l_linestatus"));
  const auto& qty = l.column(*s.find("l_quantity")).data<double>();
  const auto& price = l.column(*s.find("l_extendedprice")).data<double>();
  const auto& disc = l.column(*s.find("l_discount")).data<double>();
  const auto& tax = l.column(*s.find("l_tax")).data<double>();
  const auto& ship = l.column(*s.find("l_shipdate")).data<int32_t>();
  struct Acc {
    double q = 0, p = 0, dp = 0, ch = 0, d = 0;
    int64_t n = 0;
  };
  std::map<std::pair<std::string, std::string>, Acc> groups;
  int32_t cut = *parse_date("1998-09-02");
  for (size_t i = 0; i < l.num_rows(); ++i) {
    if (ship[i] > cut) continue;
    auto& a = groups[{rf.dictionary()->at(rf.data<int32_t>()[i]),
                      ls.dictionary()->at(ls.data<int32_t>()[i])}];
    a.q += qty[i];
    a.p += price[i];
    a.dp += price[i] * (1 - disc[i]);
    a.ch += price[i] * (1 - disc[i]) * (1 + tax[i]);
    a.d += disc[i];
    ++a.n;
  }
  std::vector<std::vector<Value>> rows;
  for (const auto& [k, a] : groups) {
    double n = static_cast<double>(a.n);
    rows.push_back({Value::string(k.first), Value::string(k.second), Value::f64(a.q),
                    Value::f64(a.p), Value::f64(a.dp), Value::f64(a.ch), Value::f64(a.q / n),
                    Value::f64(a.p / n), Value::f64(a.d / n), Value::i64(a.n)});
  }
  auto mine = HostRelation::from_rows(tpch_query(1).result, rows);
  auto c = compare_results(run_sqlite_query(*db_, tpch_query(1)), mine, tpch_query(1).compare);
  EXPECT_TRUE(c.equal) << c.diff;
}

TEST_F(TpchSf001, QueryFilesExist) {
  for (const auto& q : tpch_queries())
    EXPECT_TRUE(std::filesystem::exists(q.sql_path)) << q.sql_path;
  EXPECT_THROW(tpch_query(23), std::out_of_range);
}

}  // namespace
}  // namespace ranc::testing
