// Tests of the TPC-H schemas (ranc/io/tpch.h) and of reading .tbl files as the
// official dbgen and tpchgen-cli write them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ranc/data/error.h"
#include "ranc/io/csv.h"
#include "ranc/io/tpch.h"
#include "tpch_data.h"

namespace ranc {
namespace {

TEST(TpchSchema, TablesAndColumns) {
  EXPECT_EQ(tpch::kTables.size(), 8u);
  size_t columns = 0;
  for (auto t : tpch::kTables) {
    EXPECT_TRUE(tpch::is_table(t));
    columns += tpch::schema(t).size();
  }
  EXPECT_EQ(columns, 61u);  // 3 + 4 + 7 + 8 + 9 + 5 + 9 + 16
  const Schema& l = tpch::schema("lineitem");
  EXPECT_EQ(l.size(), 16u);
  EXPECT_EQ(l[0], (Attribute{"l_orderkey", Type::I64}));
  EXPECT_EQ(l[4], (Attribute{"l_quantity", Type::F64}));
  EXPECT_EQ(l[10], (Attribute{"l_shipdate", Type::Date}));
  EXPECT_EQ(l[15], (Attribute{"l_comment", Type::String}));
  EXPECT_EQ(tpch::schema("orders")[0], (Attribute{"o_orderkey", Type::I64}));
  EXPECT_EQ(tpch::schema("partsupp").key_size, 2u);
  EXPECT_FALSE(tpch::is_table("lineitems"));
  try {
    tpch::schema("lineitems");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnknownRelation);
  }
}

// Lines as the official dbgen (SF 1) writes them: '|' after every field.
constexpr const char* kDbgenLineitem =
    "1|155190|7706|1|17|21168.23|0.04|0.02|N|O|1996-03-13|1996-02-12|1996-03-22|DELIVER IN "
    "PERSON|TRUCK|egular courts above the|\n"
    "1|67310|7311|2|36|45983.16|0.09|0.06|N|O|1996-04-12|1996-02-28|1996-04-20|TAKE BACK "
    "RETURN|MAIL|ly final dependencies: slyly bold |\n"
    "3|42970|17|1|45|86058.75|0.06|0.00|R|F|1994-02-02|1994-01-04|1994-02-23|NONE|AIR|ongside "
    "of the furiously brave acco|\n";

TEST(TpchTbl, ParsesDbgenOutputWithAndWithoutTrailingBar) {
  std::string with = kDbgenLineitem;
  std::string without;
  for (size_t i = 0; i < with.size(); ++i)
    if (!(with[i] == '|' && with[i + 1] == '\n')) without += with[i];
  for (const std::string& text : {with, without}) {
    auto rel = parse_csv(text, tpch::schema("lineitem"), CsvOptions::tbl(), "lineitem.tbl");
    ASSERT_EQ(rel.num_rows(), 3u);
    EXPECT_EQ(rel.get(0, 0), Value::i64(1));
    EXPECT_EQ(rel.get(0, 1), Value::i32(155190));
    EXPECT_EQ(rel.get(0, 5), Value::f64(21168.23));
    EXPECT_EQ(rel.get(2, 8), Value::string("R"));
    EXPECT_EQ(rel.get(2, 10), Value::date(*parse_date("1994-02-02")));
    EXPECT_EQ(rel.get(1, 15), Value::string("ly final dependencies: slyly bold "));
  }
}

TEST(TpchTbl, ErrorNamesTheTpchAttribute) {
  std::string text = kDbgenLineitem;
  text.replace(text.find("45|86058.75"), 2, "4x");
  try {
    parse_csv(text, tpch::schema("lineitem"), CsvOptions::tbl(), "lineitem.tbl");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "lineitem.tbl:3:14: error: '4x' is not a valid f64 for attribute l_quantity");
  }
}

TEST(TpchTbl, LoadsTpchgenOutput) {
  std::string why;
  auto dir = testing::tpch_data_dir("0.01", &why);
  if (!dir) GTEST_SKIP() << "SKIPPED: " << why;
  auto tables = testing::load_tpch(*dir);
  ASSERT_EQ(tables.size(), 8u);
  EXPECT_EQ(tables.at("nation").num_rows(), 25u);
  EXPECT_EQ(tables.at("orders").num_rows(), 15000u);
  const HostRelation& l = tables.at("lineitem");
  // Every line of the file became a row.
  std::ifstream in(*dir + "/lineitem.tbl");
  size_t lines = 0;
  for (std::string s; std::getline(in, s);) ++lines;
  EXPECT_EQ(l.num_rows(), lines);
  EXPECT_EQ(l.get(0, 0), Value::i64(1));
  EXPECT_EQ(l.get(0, 4), Value::f64(17));
  EXPECT_EQ(l.get(0, 13), Value::string("DELIVER IN PERSON"));
  EXPECT_EQ(l.get(0, 10), Value::date(*parse_date("1996-03-13")));
  EXPECT_EQ(l.column(8).dictionary()->strings(), (std::vector<std::string>{"A", "N", "R"}));
  EXPECT_EQ(tables.at("region").get(4, 1), Value::string("MIDDLE EAST"));
  // Written back as .tbl, the table reads back the same.
  auto tmp = std::filesystem::temp_directory_path() / "ranc_io_test_orders.tbl";
  write_tbl(tables.at("orders"), tmp.string());
  auto back = read_tbl(tmp.string(), tpch::schema("orders"));
  ASSERT_EQ(back.num_rows(), 15000u);
  for (size_t r = 0; r < back.num_rows(); r += 997)
    EXPECT_EQ(back.row(r), tables.at("orders").row(r));
  std::filesystem::remove(tmp);
}

// The parallel reader (chunks split at line boundaries, dictionaries built per chunk
// and merged) gives exactly what one thread reading the file in order gives, on every
// table of TPC-H SF 0.1 (lineitem: 600 K rows, 76 MB), all attributes and Q1's subset.
TEST(TpchTbl, Sf01ParallelEqualsSingleThreaded) {
  std::string why;
  auto dir = testing::tpch_data_dir("0.1", &why);
  if (!dir) GTEST_SKIP() << "SKIPPED: " << why;
  for (std::string_view tv : tpch::kTables) {
    const std::string table(tv);
    const std::string path = *dir + "/" + table + ".tbl";
    for (bool subset : {false, true}) {
      if (subset && table != "lineitem") continue;
      CsvOptions one = CsvOptions::tbl(), many = CsvOptions::tbl();
      one.num_threads = 1;
      many.num_threads = 7;  // odd, so chunk edges fall anywhere
      if (subset) {
        one.columns = many.columns = {"l_returnflag", "l_linestatus", "l_quantity",
                                      "l_extendedprice", "l_discount", "l_tax", "l_shipdate"};
      }
      const HostRelation a = read_csv(path, tpch::schema(table), one);
      const HostRelation b = read_csv(path, tpch::schema(table), many);
      ASSERT_EQ(a.schema(), b.schema()) << table;
      ASSERT_EQ(a.num_rows(), b.num_rows()) << table;
      ASSERT_GT(a.num_rows(), 0u) << table;
      for (size_t c = 0; c < a.schema().size(); ++c) {
        const auto* da = a.column(c).dictionary().get();
        const auto* db = b.column(c).dictionary().get();
        ASSERT_EQ(da == nullptr, db == nullptr) << table << " column " << c;
        if (da) ASSERT_EQ(da->strings(), db->strings()) << table << " column " << c;
      }
      for (size_t r = 0; r < a.num_rows(); ++r)
        ASSERT_EQ(a.row(r), b.row(r)) << table << " row " << r << (subset ? " (Q1's columns)" : "");
    }
  }
}

}  // namespace
}  // namespace ranc
