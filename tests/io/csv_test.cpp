// Tests of the CSV / .tbl reader and writer (runtime/src/io/csv.cpp): every type,
// quoting, .tbl trailing delimiters, CRLF, blank lines, error locations and
// messages, header checks, parallel chunking and round trips.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "ranc/data/error.h"
#include "ranc/io/csv.h"

namespace ranc {
namespace {

Schema schema_of(std::vector<std::pair<std::string, Type>> attrs) {
  Schema s;
  for (auto& [n, t] : attrs) s.attributes.push_back({n, t});
  return s;
}

Schema all_types() {
  return schema_of({{"b", Type::Bool},
                    {"i", Type::I32},
                    {"l", Type::I64},
                    {"f", Type::F32},
                    {"d", Type::F64},
                    {"dt", Type::Date},
                    {"s", Type::String}});
}

// The diagnostic of parsing text, which must fail.
Diagnostic parse_error(std::string_view text, const Schema& schema,
                       const CsvOptions& opt = CsvOptions::csv(), std::string_view name = "t.csv") {
  try {
    parse_csv(text, schema, opt, name);
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Data);
    return e.first();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return {};
}

std::string tmp_path(const std::string& name) {
  auto dir =
      std::filesystem::temp_directory_path() / ("ranc_io_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

TEST(Csv, ReadsEveryType) {
  auto rel = parse_csv(
      "b,i,l,f,d,dt,s\n"
      "true,1,-9000000000,1.5,2.25,1994-01-01,hello\n"
      "F,-2147483648,9223372036854775807,-0.5,1e300,1970-01-01,\n"
      "1,2147483647,0,3,-0,2000-02-29,\"a,b\"\"c\"\n",
      all_types());
  ASSERT_EQ(rel.num_rows(), 3u);
  EXPECT_EQ(rel.get(0, 0), Value::boolean(true));
  EXPECT_EQ(rel.get(1, 0), Value::boolean(false));
  EXPECT_EQ(rel.get(2, 0), Value::boolean(true));
  EXPECT_EQ(rel.get(1, 1), Value::i32(INT32_MIN));
  EXPECT_EQ(rel.get(2, 1), Value::i32(INT32_MAX));
  EXPECT_EQ(rel.get(0, 2), Value::i64(-9000000000LL));
  EXPECT_EQ(rel.get(1, 2), Value::i64(INT64_MAX));
  EXPECT_EQ(rel.get(0, 3), Value::f32(1.5f));
  EXPECT_EQ(rel.get(1, 4), Value::f64(1e300));
  EXPECT_TRUE(std::signbit(rel.get(2, 4).as_f64()));
  EXPECT_EQ(rel.get(0, 5), Value::date(*parse_date("1994-01-01")));
  EXPECT_EQ(rel.get(1, 5), Value::date(0));
  EXPECT_EQ(rel.get(0, 6), Value::string("hello"));
  EXPECT_EQ(rel.get(1, 6), Value::string(""));
  EXPECT_EQ(rel.get(2, 6), Value::string("a,b\"c"));
  // The dictionary is sorted and codes follow it.
  const auto& dict = *rel.column(6).dictionary();
  EXPECT_EQ(dict.strings(), (std::vector<std::string>{"", "a,b\"c", "hello"}));
  EXPECT_EQ(rel.column(6).data<int32_t>(), (std::vector<int32_t>{2, 0, 1}));
}

TEST(Csv, QuotedFieldsHoldNewlinesAndDelimiters) {
  auto s = schema_of({{"a", Type::I32}, {"s", Type::String}});
  auto rel = parse_csv("a,s\n1,\"x\ny\"\n2,\"\"\"\"\n3,\"p,q\"\n", s);
  ASSERT_EQ(rel.num_rows(), 3u);
  EXPECT_EQ(rel.get(0, 1), Value::string("x\ny"));
  EXPECT_EQ(rel.get(1, 1), Value::string("\""));
  EXPECT_EQ(rel.get(2, 1), Value::string("p,q"));
  // A quoted number is a number.
  auto r2 = parse_csv("a,s\n\"7\",x\n", s);
  EXPECT_EQ(r2.get(0, 0), Value::i32(7));
}

TEST(Csv, CrlfBomAndTrailingBlankLines) {
  auto s = schema_of({{"a", Type::I32}, {"s", Type::String}});
  auto rel = parse_csv(
      "\xEF\xBB\xBF"
      "a,s\r\n1,x\r\n2,\"y\"\r\n\r\n\n",
      s);
  ASSERT_EQ(rel.num_rows(), 2u);
  EXPECT_EQ(rel.get(0, 1), Value::string("x"));
  EXPECT_EQ(rel.get(1, 1), Value::string("y"));
  // No final newline.
  auto r2 = parse_csv("a,s\n1,x\n2,z", s);
  ASSERT_EQ(r2.num_rows(), 2u);
  EXPECT_EQ(r2.get(1, 1), Value::string("z"));
  // Header only, and empty input without a header.
  EXPECT_EQ(parse_csv("a,s\n", s).num_rows(), 0u);
  EXPECT_EQ(parse_csv("", s, CsvOptions::tbl()).num_rows(), 0u);
}

TEST(Csv, NumbersMayHaveSurroundingSpacesAndPlus) {
  auto s = schema_of({{"a", Type::I32}, {"d", Type::F64}, {"t", Type::Date}});
  auto rel = parse_csv("a,d,t\n +5 , 2.5 , 1999-12-31 \n", s);
  EXPECT_EQ(rel.get(0, 0), Value::i32(5));
  EXPECT_EQ(rel.get(0, 1), Value::f64(2.5));
  EXPECT_EQ(rel.get(0, 2), Value::date(*parse_date("1999-12-31")));
}

TEST(Tbl, AcceptsWithAndWithoutTrailingDelimiter) {
  auto s = schema_of({{"k", Type::I64}, {"name", Type::String}, {"price", Type::F64}});
  for (std::string text : {"1|AB|1.5|\n2|C D|2.25|\n", "1|AB|1.5\n2|C D|2.25\n",
                           "1|AB|1.5|\r\n2|C D|2.25|", "1|AB|1.5\r\n2|C D|2.25|\n\n"}) {
    auto rel = parse_csv(text, s, CsvOptions::tbl(), "x.tbl");
    ASSERT_EQ(rel.num_rows(), 2u) << text;
    EXPECT_EQ(rel.get(1, 0), Value::i64(2));
    EXPECT_EQ(rel.get(1, 1), Value::string("C D"));
    EXPECT_EQ(rel.get(1, 2), Value::f64(2.25));
  }
  // Quotes are data in .tbl.
  auto rel = parse_csv("1|\"q|3|\n", s, CsvOptions::tbl());
  EXPECT_EQ(rel.get(0, 1), Value::string("\"q"));
  // An empty last string field with the trailing '|'.
  auto r2 =
      parse_csv("1|1|\n", schema_of({{"k", Type::I32}, {"s", Type::String}}), CsvOptions::tbl());
  EXPECT_EQ(r2.get(0, 1), Value::string("1"));
  auto r3 =
      parse_csv("1||\n", schema_of({{"k", Type::I32}, {"s", Type::String}}), CsvOptions::tbl());
  EXPECT_EQ(r3.get(0, 1), Value::string(""));
}

TEST(CsvErrors, BadValueNamesFileLineColumnAttributeAndType) {
  auto s = schema_of({{"l_orderkey", Type::I64}, {"l_quantity", Type::F64}});
  auto d = parse_error("1|2|\n2|3|\n3|abc|\n", s, CsvOptions::tbl(), "lineitem.tbl");
  EXPECT_EQ(d.loc, (SourceLoc{"lineitem.tbl", 3, 3}));
  EXPECT_EQ(d.message, "'abc' is not a valid f64 for attribute l_quantity");
  EXPECT_EQ(d.str(), "lineitem.tbl:3:3: error: 'abc' is not a valid f64 for attribute l_quantity");
}

TEST(CsvErrors, EachTypeSaysWhatWasExpected) {
  struct Case {
    Type type;
    std::string text;
    std::string message;
  };
  std::vector<Case> cases = {
      {Type::Bool, "yes", "'yes' is not a valid bool (true/false/t/f/1/0) for attribute x"},
      {Type::I32, "2147483648", "'2147483648' is out of range for i32 for attribute x"},
      {Type::I32, "1.5", "'1.5' is not a valid i32 for attribute x"},
      {Type::I64, "99999999999999999999",
       "'99999999999999999999' is out of range for i64 for attribute x"},
      {Type::I64, "12a", "'12a' is not a valid i64 for attribute x"},
      {Type::F32, "1e60", "'1e60' is out of range for f32 for attribute x"},
      {Type::F64, "1.2.3", "'1.2.3' is not a valid f64 for attribute x"},
      {Type::Date, "1994-02-30", "'1994-02-30' is not a valid date (YYYY-MM-DD) for attribute x"},
      {Type::Date, "19940101", "'19940101' is not a valid date (YYYY-MM-DD) for attribute x"},
      {Type::I32, "", "empty field is not a valid i32 for attribute x"},
  };
  for (const auto& c : cases) {
    auto s = schema_of({{"k", Type::I32}, {"x", c.type}});
    auto d = parse_error("k,x\n1," + c.text + "\n", s);
    EXPECT_EQ(d.message, c.message) << c.text;
    EXPECT_EQ(d.loc, (SourceLoc{"t.csv", 2, 3})) << c.text;
  }
}

TEST(CsvErrors, FieldCounts) {
  auto s = schema_of({{"a", Type::I32}, {"b", Type::I32}, {"c", Type::I32}});
  auto d = parse_error("a,b,c\n1,2,3\n1,2\n", s);
  EXPECT_EQ(d.loc, (SourceLoc{"t.csv", 3, 4}));
  EXPECT_EQ(d.message, "line has 2 fields but 3 are expected (attribute c is missing)");
  d = parse_error("a,b,c\n1,2,3,4,5\n", s);
  EXPECT_EQ(d.loc, (SourceLoc{"t.csv", 2, 6}));
  EXPECT_EQ(d.message, "line has more than 3 fields (about 5); expected 3");
  // A trailing delimiter is only accepted where the options say so.
  d = parse_error("a,b,c\n1,2,3,\n", s);
  EXPECT_EQ(d.loc, (SourceLoc{"t.csv", 2, 6}));
  // Blank lines are fine at the end only.
  d = parse_error("a,b,c\n1,2,3\n\n4,5,6\n", s);
  EXPECT_EQ(d.loc, (SourceLoc{"t.csv", 3, 1}));
  EXPECT_EQ(d.message, "empty line; expected 3 fields");
}

TEST(CsvErrors, Quoting) {
  auto s = schema_of({{"a", Type::I32}, {"s", Type::String}});
  auto d = parse_error("a,s\n1,\"abc\n2,x\n", s);
  EXPECT_EQ(d.message, "unterminated quoted field");
  EXPECT_EQ(d.loc, (SourceLoc{"t.csv", 2, 3}));
  d = parse_error("a,s\n1,\"ab\"c\n", s);
  EXPECT_EQ(d.loc, (SourceLoc{"t.csv", 2, 7}));
  // Lines after a quoted newline are counted as physical lines.
  d = parse_error("a,s\n1,\"x\ny\"\nq,z\n", s);
  EXPECT_EQ(d.loc, (SourceLoc{"t.csv", 4, 1}));
}

TEST(CsvErrors, Header) {
  auto s = schema_of({{"a", Type::I32}, {"b", Type::I32}});
  auto d = parse_error("a,c\n1,2\n", s);
  EXPECT_EQ(d.loc, (SourceLoc{"t.csv", 1, 3}));
  EXPECT_EQ(d.message,
            "header column 2 is 'c' but attribute 2 of the schema is 'b' (expected header: a, b)");
  d = parse_error("a,b,c\n", s);
  EXPECT_EQ(d.message,
            "header has 3 columns but the schema has 2 attributes (expected header: a, b)");
  d = parse_error("a\n", s);
  EXPECT_EQ(d.message,
            "header has 1 columns but the schema has 2 attributes (expected header: a, b)");
  d = parse_error("", s);
  EXPECT_EQ(d.message, "empty input; expected a header line naming the attributes");
  // Quoted header names and CRLF are fine.
  EXPECT_EQ(parse_csv("\"a\",b\r\n1,2\r\n", s).num_rows(), 1u);
}

TEST(CsvErrors, MissingFile) {
  try {
    read_csv("/nonexistent/x.csv", schema_of({{"a", Type::I32}}));
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Data);
    EXPECT_NE(std::string(e.what()).find("cannot open '/nonexistent/x.csv'"), std::string::npos);
  }
}

// A large random relation: many chunks, many threads.
HostRelation random_relation(size_t rows, uint32_t seed, bool nasty_strings) {
  auto s = all_types();
  HostRelation rel(s);
  std::mt19937_64 rng(seed);
  std::vector<std::string> words = {"alpha", "beta", "gamma", "delta", "x", ""};
  if (nasty_strings) {
    words.push_back("comma, inside");
    words.push_back("quote \" inside");
    words.push_back("line\nbreak");
    words.push_back("\"leading quote");
    words.push_back("crlf\r\n");
  }
  for (size_t r = 0; r < rows; ++r) {
    std::string str = words[rng() % words.size()];
    if (rng() % 3 == 0) str += std::to_string(rng() % 100000);
    std::uniform_real_distribution<double> ud(-1e6, 1e6);
    rel.append_row({Value::boolean(rng() & 1), Value::i32(static_cast<int32_t>(rng())),
                    Value::i64(static_cast<int64_t>(rng())),
                    Value::f32(static_cast<float>(ud(rng))), Value::f64(ud(rng) / 3.0),
                    Value::date(static_cast<int32_t>(rng() % 20000)), Value::string(str)});
  }
  return rel;
}

void expect_same(const HostRelation& a, const HostRelation& b) {
  ASSERT_EQ(a.num_rows(), b.num_rows());
  ASSERT_EQ(a.schema(), b.schema());
  for (size_t r = 0; r < a.num_rows(); ++r)
    for (size_t c = 0; c < a.num_columns(); ++c)
      ASSERT_EQ(a.get(r, c), b.get(r, c)) << "row " << r << " column " << c;
}

TEST(RoundTrip, CsvWithQuotingManyChunks) {
  auto rel = random_relation(60000, 1, true);
  std::string text = to_csv_string(rel);
  ASSERT_GT(text.size(), 2u << 20);  // large enough to be split into chunks
  for (unsigned threads : {1u, 2u, 7u}) {
    CsvOptions opt;
    opt.num_threads = threads;
    expect_same(rel, parse_csv(text, rel.schema(), opt));
  }
}

TEST(RoundTrip, TblFileWithProgress) {
  auto rel = random_relation(50000, 2, false);
  std::string path = tmp_path("r.tbl");
  write_tbl(rel, path);
  CsvOptions opt = CsvOptions::tbl();
  opt.num_threads = 3;
  uint64_t last_done = 0, last_total = 0;
  int calls = 0;
  opt.progress = [&](uint64_t done, uint64_t total) {
    EXPECT_LE(done, total);
    EXPECT_GE(done, last_done);
    last_done = done;
    last_total = total;
    ++calls;
  };
  expect_same(rel, read_csv(path, rel.schema(), opt));
  EXPECT_GE(calls, 1);
  EXPECT_EQ(last_done, std::filesystem::file_size(path));
  EXPECT_EQ(last_total, last_done);
  expect_same(rel, read_relation_file(path, rel.schema()));
  // Each line ends with the delimiter, as dbgen writes it.
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.back(), '|');
  std::filesystem::remove(path);
}

TEST(RoundTrip, ErrorsInLaterChunksHaveTheRightLine) {
  auto rel = random_relation(40000, 3, false);
  std::string text = to_csv_string(rel, CsvOptions::tbl());
  // Corrupt the i32 field of row 30000 (line 30000 of the file).
  size_t pos = 0;
  for (int i = 0; i < 29999; ++i) pos = text.find('\n', pos) + 1;
  size_t field = text.find('|', pos) + 1;
  text.insert(field, "z");
  for (unsigned threads : {1u, 4u}) {
    CsvOptions opt = CsvOptions::tbl();
    opt.num_threads = threads;
    auto d = parse_error(text, rel.schema(), opt, "big.tbl");
    EXPECT_EQ(d.loc.line, 30000u);
    EXPECT_EQ(d.loc.column, field - pos + 1);
    EXPECT_NE(d.message.find("is not a valid i32 for attribute i"), std::string::npos);
  }
}

// Keeping some attributes (prune_attributes): the result equals the full read
// narrowed to them, across chunks and threads, in CSV with quoting and in .tbl.
TEST(Columns, KeptAttributesEqualTheFullReadNarrowed) {
  auto rel = random_relation(60000, 4, true);
  std::string csv = to_csv_string(rel);
  auto tbl_rel = random_relation(60000, 5, false);
  std::string tbl = to_csv_string(tbl_rel, CsvOptions::tbl());
  for (const std::vector<std::string>& keep :
       std::vector<std::vector<std::string>>{{"s"}, {"i", "d", "s"}, {"b", "dt"}, {"s", "b"}}) {
    for (unsigned threads : {1u, 5u}) {
      for (bool is_tbl : {false, true}) {
        const HostRelation& full = is_tbl ? tbl_rel : rel;
        CsvOptions opt = is_tbl ? CsvOptions::tbl() : CsvOptions::csv();
        opt.num_threads = threads;
        opt.columns = keep;
        HostRelation got = parse_csv(is_tbl ? tbl : csv, full.schema(), opt);
        // Kept attributes come in schema order whatever the order asked.
        Schema want_schema;
        for (const auto& a : full.schema().attributes)
          if (std::find(keep.begin(), keep.end(), a.name) != keep.end())
            want_schema.attributes.push_back(a);
        ASSERT_EQ(got.schema(), want_schema);
        ASSERT_EQ(got.num_rows(), full.num_rows());
        for (size_t c = 0; c < want_schema.size(); ++c) {
          size_t fc = *full.schema().find(want_schema[c].name);
          for (size_t r = 0; r < full.num_rows(); ++r)
            ASSERT_EQ(got.get(r, c), full.get(r, fc)) << want_schema[c].name << " row " << r;
        }
      }
    }
  }
}

// A skipped field is not converted (a bad value there is no error), but the line
// still needs all its fields, a kept field is still checked with its location, and
// the header still names every attribute.
TEST(Columns, SkippedFieldsAreNotConvertedButCounted) {
  auto s = schema_of({{"a", Type::I32}, {"x", Type::F64}, {"b", Type::Date}});
  CsvOptions opt = CsvOptions::csv();
  opt.columns = {"a", "b"};
  HostRelation r = parse_csv("a,x,b\n1,not a number,2024-01-02\n", s, opt);
  ASSERT_EQ(r.num_rows(), 1u);
  EXPECT_EQ(r.get(0, 0), Value::i32(1));
  EXPECT_EQ(r.get(0, 1), Value::date(*parse_date("2024-01-02")));

  auto d = parse_error("a,x,b\n1,2.5,2024-01-02\n2,3.5,yesterday\n", s, opt);
  EXPECT_EQ(d.loc.line, 3u);
  EXPECT_EQ(d.loc.column, 7u);
  EXPECT_NE(d.message.find("is not a valid date"), std::string::npos) << d.message;
  d = parse_error("a,x,b\n1,2.5\n", s, opt);
  EXPECT_NE(d.message.find("attribute b is missing"), std::string::npos) << d.message;
  d = parse_error("a,b\n1,2024-01-02\n", s, opt);
  EXPECT_NE(d.message.find("header"), std::string::npos) << d.message;
  opt.columns = {"a", "nope"};
  d = parse_error("a,x,b\n1,2.5,2024-01-02\n", s, opt);
  EXPECT_NE(d.message.find("'nope'"), std::string::npos) << d.message;
}

// The kept key is the longest kept prefix of the declared key.
TEST(Columns, KeyIsTheKeptPrefix) {
  auto s = schema_of({{"k1", Type::I32}, {"k2", Type::I32}, {"v", Type::I32}});
  s.key_size = 2;
  CsvOptions opt = CsvOptions::tbl();
  opt.columns = {"k1", "v"};
  EXPECT_EQ(parse_csv("1|2|3|\n", s, opt).schema().key_size, 1u);
  opt.columns = {"k2", "v"};
  EXPECT_EQ(parse_csv("1|2|3|\n", s, opt).schema().key_size, 0u);
  opt.columns = {"v", "k1", "k2"};
  EXPECT_EQ(parse_csv("1|2|3|\n", s, opt).schema().key_size, 2u);
}

TEST(RoundTrip, MalformedQuotingAcrossChunksMatchesSerial) {
  // A bare quote in an unquoted field upsets the quote-parity split; the result
  // must still equal a serial parse.
  auto s = schema_of({{"a", Type::I32}, {"s", Type::String}});
  std::string text = "a,s\n";
  for (int i = 0; i < 200000; ++i) {
    text += std::to_string(i) + ",";
    text += (i % 1000 == 7) ? "ab\"c" : (i % 777 == 0 ? "\"multi\nline\"" : "plain");
    text += "\n";
  }
  CsvOptions one;
  one.num_threads = 1;
  CsvOptions many;
  many.num_threads = 8;
  expect_same(parse_csv(text, s, one), parse_csv(text, s, many));
}

TEST(Writer, FormatsAndQuoting) {
  auto s = schema_of({{"b", Type::Bool}, {"d", Type::F64}, {"t", Type::Date}, {"s", Type::String}});
  auto rel = HostRelation::from_rows(
      s, {{Value::boolean(true), Value::f64(0.1), Value::date(0), Value::string("a,b")},
          {Value::boolean(false), Value::f64(1e21), Value::date(-1), Value::string("q\"")}});
  EXPECT_EQ(to_csv_string(rel),
            "b,d,t,s\ntrue,0.1,1970-01-01,\"a,b\"\nfalse,1e+21,1969-12-31,\"q\"\"\"\n");
  EXPECT_EQ(to_csv_string(rel, CsvOptions::tbl()),
            "true|0.1|1970-01-01|a,b|\nfalse|1e+21|1969-12-31|q\"|\n");
  // .tbl cannot hold the delimiter.
  auto bad = HostRelation::from_rows(schema_of({{"s", Type::String}}), {{Value::string("a|b")}});
  EXPECT_THROW(to_csv_string(bad, CsvOptions::tbl()), UserError);
  // A lone empty string is quoted so the line is not blank.
  auto lone = HostRelation::from_rows(schema_of({{"s", Type::String}}),
                                      {{Value::string("")}, {Value::string("x")}});
  std::string t = to_csv_string(lone);
  EXPECT_EQ(t, "s\n\"\"\nx\n");
  expect_same(lone, parse_csv(t, lone.schema()));
}

TEST(Writer, SpecialFloatsRoundTrip) {
  auto s = schema_of({{"d", Type::F64}, {"f", Type::F32}});
  auto rel = HostRelation::from_rows(s, {{Value::f64(INFINITY), Value::f32(-INFINITY)},
                                         {Value::f64(-0.0), Value::f32(1e-30f)},
                                         {Value::f64(5e-324), Value::f32(3.4028235e38f)}});
  expect_same(rel, parse_csv(to_csv_string(rel), s));
  auto nan = HostRelation::from_rows(s, {{Value::f64(NAN), Value::f32(NAN)}});
  auto back = parse_csv(to_csv_string(nan), s);
  EXPECT_TRUE(std::isnan(back.get(0, 0).as_f64()));
}

TEST(Formats, FromPath) {
  EXPECT_EQ(format_from_path("a/lineitem.tbl"), TextFormat::Tbl);
  EXPECT_EQ(format_from_path("X.CSV"), TextFormat::Csv);
  EXPECT_EQ(format_from_path("x.txt"), std::nullopt);
}

}  // namespace
}  // namespace ranc
