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

// ---- NULLs (nullable attributes; csv.h describes the rules) ----

Schema nullable_schema(std::vector<std::pair<std::string, Type>> attrs) {
  Schema s = schema_of(std::move(attrs));
  for (auto& a : s.attributes) a.nullable = true;
  return s;
}

// Every NULL row holds the type's zero, strings the code of "" (host_relation.h).
void expect_null_rows_hold_zero(const HostRelation& rel) {
  for (size_t c = 0; c < rel.num_columns(); ++c) {
    const Column& col = rel.column(c);
    if (!col.nullable()) continue;
    ASSERT_EQ(col.validity().size(), col.size()) << "column " << c;
    const size_t width = static_cast<size_t>(type_size(col.type()));
    const auto* bytes = static_cast<const uint8_t*>(col.raw());
    for (size_t r = 0; r < col.size(); ++r) {
      if (col.validity()[r]) continue;
      for (size_t k = 0; k < width; ++k)
        ASSERT_EQ(bytes[r * width + k], 0) << "column " << c << " row " << r;
      if (col.type() == Type::String) {
        ASSERT_EQ(col.dictionary()->at(col.data<int32_t>()[r]), "") << "row " << r;
      }
    }
  }
}

// Same schema, rows, NULLs (validity bytes) and values; NULL rows hold zeros.
void expect_same_with_nulls(const HostRelation& want, const HostRelation& got) {
  ASSERT_EQ(want.schema(), got.schema());
  ASSERT_EQ(want.num_rows(), got.num_rows());
  for (size_t c = 0; c < want.num_columns(); ++c) {
    ASSERT_EQ(want.column(c).nullable(), got.column(c).nullable()) << "column " << c;
    ASSERT_EQ(want.column(c).validity(), got.column(c).validity()) << "column " << c;
  }
  for (size_t r = 0; r < want.num_rows(); ++r)
    for (size_t c = 0; c < want.num_columns(); ++c) {
      Value a = want.get(r, c), b = got.get(r, c);
      ASSERT_EQ(a.is_null(), b.is_null()) << "row " << r << " column " << c;
      ASSERT_EQ(a, b) << "row " << r << " column " << c;
    }
  expect_null_rows_hold_zero(got);
}

TEST(CsvNulls, UnquotedEmptyFieldsAreNullInNullableAttributes) {
  Schema s = nullable_schema({{"b", Type::Bool},
                              {"i", Type::I32},
                              {"l", Type::I64},
                              {"f", Type::F32},
                              {"d", Type::F64},
                              {"dt", Type::Date},
                              {"s", Type::String}});
  auto rel = parse_csv(
      "b,i,l,f,d,dt,s\n"
      ",,,,,,\n"                             // every attribute NULL
      "true,7,-8,1.5,2.5,1994-01-01,\"\"\n"  // a quoted "" is the empty string
      " , \t,  ,,, ,  \n"                    // spaces: NULL but for the string "  "
      "false,0,0,0,0,1970-01-01,x\n",
      s);
  ASSERT_EQ(rel.num_rows(), 4u);
  for (size_t c = 0; c < 7; ++c) {
    EXPECT_TRUE(rel.get(0, c).is_null()) << c;
    EXPECT_EQ(rel.column(c).validity(),
              (std::vector<uint8_t>{0, 1, c == 6 ? uint8_t{1} : uint8_t{0}, 1}))
        << c;
  }
  EXPECT_EQ(rel.get(1, 6), Value::string(""));
  EXPECT_EQ(rel.get(2, 6), Value::string("  "));
  EXPECT_EQ(rel.get(3, 1), Value::i32(0));  // a real zero, not NULL
  EXPECT_FALSE(rel.get(3, 1).is_null());
  // NULL rows hold zeros; the NULL string row holds the code of "", here code 0.
  EXPECT_EQ(rel.column(6).dictionary()->strings(), (std::vector<std::string>{"", "  ", "x"}));
  EXPECT_EQ(rel.column(6).data<int32_t>(), (std::vector<int32_t>{0, 0, 1, 2}));
  EXPECT_EQ(rel.column(1).data<int32_t>(), (std::vector<int32_t>{0, 7, 0, 0}));
  expect_null_rows_hold_zero(rel);
}

TEST(CsvNulls, NonNullableAttributesBesideNullableOnes) {
  // k is not nullable: its empty string is the string ""; x is nullable.
  Schema s = schema_of({{"k", Type::String}, {"x", Type::I64}, {"y", Type::I32}});
  s.attributes[1].nullable = true;
  auto rel = parse_csv("k,x,y\n,,1\na,5,2\n", s);
  ASSERT_EQ(rel.num_rows(), 2u);
  EXPECT_FALSE(rel.column(0).nullable());
  EXPECT_TRUE(rel.column(0).validity().empty());
  EXPECT_EQ(rel.get(0, 0), Value::string(""));
  EXPECT_TRUE(rel.get(0, 1).is_null());
  EXPECT_EQ(rel.get(1, 1), Value::i64(5));
  EXPECT_FALSE(rel.column(2).nullable());
  EXPECT_EQ(rel.get(1, 2), Value::i32(2));
}

TEST(TblNulls, EmptyFieldsAreNullWithAndWithoutTrailingDelimiter) {
  Schema s = nullable_schema({{"k", Type::I32}, {"s", Type::String}, {"d", Type::Date}});
  for (std::string text : {"1||1995-03-04|\n|x||\n||\n", "1||1995-03-04\n|x|\n||"}) {
    auto rel = parse_csv(text, s, CsvOptions::tbl(), "t.tbl");
    ASSERT_EQ(rel.num_rows(), 3u) << text;
    EXPECT_EQ(rel.column(0).validity(), (std::vector<uint8_t>{1, 0, 0})) << text;
    EXPECT_EQ(rel.column(1).validity(), (std::vector<uint8_t>{0, 1, 0})) << text;
    EXPECT_EQ(rel.column(2).validity(), (std::vector<uint8_t>{1, 0, 0})) << text;
    EXPECT_EQ(rel.get(0, 2), Value::date(*parse_date("1995-03-04")));
    EXPECT_EQ(rel.get(1, 1), Value::string("x"));
    // Quotes are data in .tbl: "" is a two-character string, not NULL.
    auto q = parse_csv("1|\"\"|1995-03-04|\n", s, CsvOptions::tbl());
    EXPECT_EQ(q.get(0, 1), Value::string("\"\""));
    expect_null_rows_hold_zero(rel);
  }
}

TEST(CsvNulls, NullMarker) {
  Schema s = nullable_schema({{"i", Type::I32}, {"s", Type::String}, {"f", Type::F64}});
  CsvOptions opt = CsvOptions::csv();
  opt.null_marker = "NA";
  auto rel = parse_csv(
      "i,s,f\n"
      "NA,NA,NA\n"      // NULL everywhere
      " NA ,\"NA\",\n"  // trimmed for numbers; quoted is text; empty is still NULL
      "1, NA,2\n"       // strings are compared exactly: " NA" is text
      "2,na,3\n",       // case matters
      s, opt);
  ASSERT_EQ(rel.num_rows(), 4u);
  EXPECT_EQ(rel.column(0).validity(), (std::vector<uint8_t>{0, 0, 1, 1}));
  EXPECT_EQ(rel.column(1).validity(), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(rel.column(2).validity(), (std::vector<uint8_t>{0, 0, 1, 1}));
  EXPECT_EQ(rel.get(1, 1), Value::string("NA"));
  EXPECT_EQ(rel.get(2, 1), Value::string(" NA"));
  EXPECT_EQ(rel.get(3, 1), Value::string("na"));
  // The NULL string row holds the code of "" although no field is empty.
  EXPECT_EQ(rel.column(1).dictionary()->strings(),
            (std::vector<std::string>{"", " NA", "NA", "na"}));
  expect_null_rows_hold_zero(rel);

  // .tbl with a marker (\N as MySQL and Hive write it).
  CsvOptions tbl = CsvOptions::tbl();
  tbl.null_marker = "\\N";
  auto t = parse_csv("\\N|\\N|1.5|\n3||\\N|\n", s, tbl);
  EXPECT_EQ(t.column(0).validity(), (std::vector<uint8_t>{0, 1}));
  EXPECT_EQ(t.column(1).validity(), (std::vector<uint8_t>{0, 0}));
  EXPECT_EQ(t.column(2).validity(), (std::vector<uint8_t>{1, 0}));

  // In an attribute that is not nullable the marker is a string's text.
  auto plain = parse_csv("i,s,f\n1,NA,2\n",
                         schema_of({{"i", Type::I32}, {"s", Type::String}, {"f", Type::F64}}), opt);
  EXPECT_EQ(plain.get(0, 1), Value::string("NA"));
  // An empty marker is the default: only empty fields.
  opt.null_marker = "";
  auto e = parse_csv("i,s,f\n,,\n", s, opt);
  EXPECT_TRUE(e.get(0, 1).is_null());
}

TEST(CsvNulls, MarkersThatCannotBeAFieldAreRefused) {
  Schema s = nullable_schema({{"i", Type::I32}});
  struct Case {
    std::string marker;
    bool tbl;
    std::string message;
  };
  std::vector<Case> cases = {
      {"a,b", false, "the null marker 'a,b' holds the delimiter ','"},
      {"a|b", true, "the null marker 'a|b' holds the delimiter '|'"},
      {"x\ny", false, "the null marker 'x\ny' holds a line break"},
      {"\"q", false, "the null marker '\"q' begins with a quote"},
      {" NA", false, "the null marker ' NA' begins or ends with a space or tab"},
      {"NA\t", true, "the null marker 'NA\t' begins or ends with a space or tab"},
  };
  for (const auto& c : cases) {
    CsvOptions opt = c.tbl ? CsvOptions::tbl() : CsvOptions::csv();
    opt.null_marker = c.marker;
    for (bool write : {false, true}) {
      try {
        if (write)
          to_csv_string(HostRelation::from_rows(s, {{Value::i32(1)}}), opt);
        else
          parse_csv(c.tbl ? "1|\n" : "i\n1\n", s, opt);
        ADD_FAILURE() << "no error for marker " << c.marker;
      } catch (const UserError& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
        EXPECT_EQ(e.first().message, c.message);
      }
    }
  }
  // A quote is fine in a .tbl marker: there is no quoting.
  CsvOptions tbl = CsvOptions::tbl();
  tbl.null_marker = "\"null\"";
  EXPECT_TRUE(parse_csv("\"null\"|\n", s, tbl).get(0, 0).is_null());
}

TEST(CsvNullErrors, EmptyAndMarkerInNonNullableAttributesHintAtNull) {
  auto s = schema_of({{"k", Type::I32}, {"x", Type::Date}});
  auto d = parse_error("k,x\n1,2000-01-01\n2,\n", s);
  EXPECT_EQ(d.loc, (SourceLoc{"t.csv", 3, 3}));
  EXPECT_EQ(d.message, "empty field is not a valid date for attribute x");
  EXPECT_EQ(d.hint,
            "to read an empty field as NULL, declare the attribute nullable: 'x date null'");
  EXPECT_EQ(d.str(),
            "t.csv:3:3: error: empty field is not a valid date for attribute x (hint: to read an "
            "empty field as NULL, declare the attribute nullable: 'x date null')");
  // .tbl, located the same way.
  d = parse_error("1|2000-01-01|\n2||\n", s, CsvOptions::tbl(), "x.tbl");
  EXPECT_EQ(d.loc, (SourceLoc{"x.tbl", 2, 3}));
  EXPECT_EQ(d.hint,
            "to read an empty field as NULL, declare the attribute nullable: 'x date null'");
  // The marker in an attribute that is not nullable.
  CsvOptions opt = CsvOptions::csv();
  opt.null_marker = "NA";
  d = parse_error("k,x\nNA,2000-01-01\n", s, opt);
  EXPECT_EQ(d.loc, (SourceLoc{"t.csv", 2, 1}));
  EXPECT_EQ(d.message, "'NA' is not a valid i32 for attribute k");
  EXPECT_EQ(d.hint, "to read 'NA' as NULL, declare the attribute nullable: 'k i32 null'");
  // Other bad values get no hint.
  d = parse_error("k,x\nzz,2000-01-01\n", s, opt);
  EXPECT_EQ(d.message, "'zz' is not a valid i32 for attribute k");
  EXPECT_EQ(d.hint, "");
  // With a marker an empty field is still what NULL looks like.
  d = parse_error("k,x\n,2000-01-01\n", s, opt);
  EXPECT_EQ(d.hint, "to read an empty field as NULL, declare the attribute nullable: 'k i32 null'");
}

TEST(CsvNullErrors, QuotedFieldsAreNeverNull) {
  Schema s = nullable_schema({{"k", Type::I32}, {"x", Type::F64}});
  auto d = parse_error("k,x\n1,\"\"\n", s);
  EXPECT_EQ(d.loc, (SourceLoc{"t.csv", 2, 3}));
  EXPECT_EQ(d.message, "empty field is not a valid f64 for attribute x");
  EXPECT_EQ(d.hint, "a quoted field is never NULL: write an empty field without quotes for NULL");
  CsvOptions opt = CsvOptions::csv();
  opt.null_marker = "NA";
  d = parse_error("k,x\n\"NA\",1\n", s, opt);
  EXPECT_EQ(d.loc, (SourceLoc{"t.csv", 2, 1}));
  EXPECT_EQ(d.message, "'NA' is not a valid i32 for attribute k");
  EXPECT_EQ(d.hint, "a quoted field is never NULL: write 'NA' without quotes for NULL");
  // A bad value of a nullable attribute is still located and typed.
  d = parse_error("k,x\n1,2\n,x1\n", s);
  EXPECT_EQ(d.loc, (SourceLoc{"t.csv", 3, 2}));
  EXPECT_EQ(d.message, "'x1' is not a valid f64 for attribute x");
  EXPECT_EQ(d.hint, "");
}

TEST(WriterNulls, NullsAndValuesThatWouldReadAsNull) {
  Schema s = nullable_schema({{"i", Type::I32}, {"s", Type::String}, {"b", Type::Bool}});
  s.attributes.push_back({"t", Type::String});  // not nullable
  auto rel = HostRelation::from_rows(
      s, {{Value::null(Type::I32), Value::string(""), Value::null(Type::Bool), Value::string("")},
          {Value::i32(0), Value::null(Type::String), Value::boolean(true), Value::string("NA")},
          {Value::i32(3), Value::string("NA"), Value::boolean(false), Value::string("x")}});
  // CSV: NULL is empty; the nullable "" is quoted, the other "" is not.
  EXPECT_EQ(to_csv_string(rel), "i,s,b,t\n,\"\",,\n0,,true,NA\n3,NA,false,x\n");
  // With a marker: NULL is the marker; a nullable value spelled like it is quoted.
  CsvOptions opt = CsvOptions::csv();
  opt.null_marker = "NA";
  EXPECT_EQ(to_csv_string(rel, opt), "i,s,b,t\nNA,\"\",NA,\n0,NA,true,NA\n3,\"NA\",false,x\n");
  expect_same_with_nulls(rel, parse_csv(to_csv_string(rel), s));
  expect_same_with_nulls(rel, parse_csv(to_csv_string(rel, opt), s, opt));
  // A number spelled like the marker is quoted (a quoted number is a number).
  opt.null_marker = "0";
  EXPECT_EQ(to_csv_string(rel, opt), "i,s,b,t\n0,\"\",0,\n\"0\",0,true,NA\n3,NA,false,x\n");
  expect_same_with_nulls(rel, parse_csv(to_csv_string(rel, opt), s, opt));
}

TEST(WriterNulls, TblCannotWriteWhatWouldReadBackAsNull) {
  Schema s = nullable_schema({{"k", Type::I32}, {"s", Type::String}});
  auto ok = HostRelation::from_rows(s, {{Value::null(Type::I32), Value::string("a")},
                                        {Value::i32(2), Value::null(Type::String)}});
  EXPECT_EQ(to_csv_string(ok, CsvOptions::tbl()), "|a|\n2||\n");
  expect_same_with_nulls(ok, parse_csv(to_csv_string(ok, CsvOptions::tbl()), s, CsvOptions::tbl()));
  // The empty string of a nullable attribute would read back as NULL.
  auto empty = HostRelation::from_rows(
      s, {{Value::i32(1), Value::string("x")}, {Value::i32(2), Value::string("")}});
  try {
    to_csv_string(empty, CsvOptions::tbl());
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Data);
    EXPECT_EQ(e.first().message,
              "row 2 of attribute s ('') cannot be written without quoting: the attribute is "
              "nullable and the value would read back as NULL");
  }
  // With a marker the empty string is fine, and a value spelled like the marker is not.
  CsvOptions tbl = CsvOptions::tbl();
  tbl.null_marker = "\\N";
  // ...but an empty field is NULL too, so the empty string still cannot be written.
  EXPECT_THROW(to_csv_string(empty, tbl), UserError);
  EXPECT_EQ(to_csv_string(ok, tbl), "\\N|a|\n2|\\N|\n");
  auto marker = HostRelation::from_rows(s, {{Value::i32(1), Value::string("\\N")}});
  try {
    to_csv_string(marker, tbl);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.first().message,
              "row 1 of attribute s ('\\N') cannot be written without quoting: the attribute is "
              "nullable and the value would read back as NULL");
  }
  tbl.null_marker = "7";
  auto seven = HostRelation::from_rows(s, {{Value::i32(7), Value::string("a")}});
  try {
    to_csv_string(seven, tbl);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.first().message,
              "row 1 of attribute k ('7') cannot be written without quoting: it is the null "
              "marker's text and would read back as NULL");
  }
}

TEST(WriterNulls, ALoneNullableAttribute) {
  Schema s = nullable_schema({{"x", Type::I64}});
  auto rel =
      HostRelation::from_rows(s, {{Value::i64(1)}, {Value::null(Type::I64)}, {Value::i64(3)}});
  // CSV without a trailing delimiter: a NULL would be a blank line.
  try {
    to_csv_string(rel);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.first().message,
              "row 2 of attribute x is NULL, which would be written as an empty line and read "
              "back as a blank line");
    EXPECT_NE(e.first().hint.find("null_marker"), std::string::npos);
  }
  CsvOptions opt = CsvOptions::csv();
  opt.null_marker = "NULL";
  EXPECT_EQ(to_csv_string(rel, opt), "x\n1\nNULL\n3\n");
  expect_same_with_nulls(rel, parse_csv(to_csv_string(rel, opt), s, opt));
  // .tbl has a trailing delimiter: "|" is an empty field.
  EXPECT_EQ(to_csv_string(rel, CsvOptions::tbl()), "1|\n|\n3|\n");
  expect_same_with_nulls(rel,
                         parse_csv(to_csv_string(rel, CsvOptions::tbl()), s, CsvOptions::tbl()));
  // A blank line is not read as a NULL: blank lines are allowed only at the end.
  auto d = parse_error("x\n1\n\n3\n", s);
  EXPECT_EQ(d.loc, (SourceLoc{"t.csv", 3, 1}));
  EXPECT_EQ(d.message, "empty line; expected 1 fields");
  EXPECT_NE(d.hint.find("null marker"), std::string::npos) << d.hint;
  // A lone nullable string: "" is quoted, NULL with a marker.
  Schema ss = nullable_schema({{"s", Type::String}});
  auto str = HostRelation::from_rows(ss, {{Value::string("")}, {Value::null(Type::String)}});
  EXPECT_EQ(to_csv_string(str, opt), "s\n\"\"\nNULL\n");
  expect_same_with_nulls(str, parse_csv(to_csv_string(str, opt), ss, opt));
}

// A relation with NULLs in every nullable type: about one value in five is NULL,
// every nullable attribute is NULL in the first and the last row, `none` is NULL in
// every row and `k` is not nullable. `empty_strings` adds "" (not NULL) to the
// strings, `nasty` strings that need quoting.
HostRelation random_nullable_relation(size_t rows, uint32_t seed, bool empty_strings, bool nasty) {
  Schema s = nullable_schema({{"b", Type::Bool},
                              {"i", Type::I32},
                              {"l", Type::I64},
                              {"f", Type::F32},
                              {"d", Type::F64},
                              {"dt", Type::Date},
                              {"s", Type::String},
                              {"none", Type::String}});
  s.attributes.insert(s.attributes.begin(), Attribute{"k", Type::I64, false});
  HostRelation rel(s);
  std::mt19937_64 rng(seed);
  std::vector<std::string> words = {"alpha", "beta", "gamma", "NULL-ish", "x"};
  if (empty_strings) words.push_back("");
  if (nasty) {
    words.push_back("comma, inside");
    words.push_back("quote \" inside");
    words.push_back("line\nbreak");
    words.push_back("\"leading quote");
    words.push_back("NULL");
  }
  std::uniform_real_distribution<double> ud(-1e6, 1e6);
  for (size_t r = 0; r < rows; ++r) {
    const bool edge = r == 0 || r + 1 == rows;
    auto null = [&] { return edge || rng() % 5 == 0; };
    std::string str = words[rng() % words.size()];
    if (rng() % 3 == 0) str += std::to_string(rng() % 100000);
    rel.append_row(
        {Value::i64(static_cast<int64_t>(r)),
         null() ? Value::null(Type::Bool) : Value::boolean(rng() & 1),
         null() ? Value::null(Type::I32) : Value::i32(static_cast<int32_t>(rng())),
         null() ? Value::null(Type::I64) : Value::i64(static_cast<int64_t>(rng())),
         null() ? Value::null(Type::F32) : Value::f32(static_cast<float>(ud(rng))),
         null() ? Value::null(Type::F64) : Value::f64(ud(rng) / 3.0),
         null() ? Value::null(Type::Date) : Value::date(static_cast<int32_t>(rng() % 20000)),
         null() ? Value::null(Type::String) : Value::string(str), Value::null(Type::String)});
  }
  return rel;
}

// Several MiB, so the reader splits the text into chunks; 1 and 4 threads.
TEST(RoundTripNulls, CsvWithQuotingManyChunks) {
  auto rel = random_nullable_relation(60000, 21, true, true);
  std::string text = to_csv_string(rel);
  ASSERT_GT(text.size(), 2u << 20);
  for (unsigned threads : {1u, 4u}) {
    CsvOptions opt;
    opt.num_threads = threads;
    HostRelation got = parse_csv(text, rel.schema(), opt);
    expect_same_with_nulls(rel, got);
    EXPECT_TRUE(got.get(0, 7).is_null());
    EXPECT_TRUE(got.get(59999, 7).is_null());
  }
}

TEST(RoundTripNulls, TblFileManyChunks) {
  auto rel = random_nullable_relation(70000, 22, false, false);
  std::string path = tmp_path("nulls.tbl");
  write_tbl(rel, path);
  ASSERT_GT(std::filesystem::file_size(path), 2u << 20);
  for (unsigned threads : {1u, 4u}) {
    CsvOptions opt = CsvOptions::tbl();
    opt.num_threads = threads;
    expect_same_with_nulls(rel, read_csv(path, rel.schema(), opt));
  }
  std::filesystem::remove(path);
}

// With a marker NULL is written as the marker: CSV keeps "" (quoted) and the string
// NULL (quoted) apart from it; .tbl writes \N (its strings hold no "", which an empty
// field would read back as NULL).
TEST(RoundTripNulls, WithNullMarkerManyChunks) {
  auto csv_rel = random_nullable_relation(60000, 23, true, true);
  CsvOptions csv = CsvOptions::csv();
  csv.null_marker = "NULL";
  std::string text = to_csv_string(csv_rel, csv);
  auto tbl_rel = random_nullable_relation(60000, 24, false, false);
  CsvOptions tbl = CsvOptions::tbl();
  tbl.null_marker = "\\N";
  std::string tbl_text = to_csv_string(tbl_rel, tbl);
  ASSERT_EQ(tbl_text.substr(0, 2), "0|");
  ASSERT_NE(tbl_text.find("|\\N|"), std::string::npos);
  for (unsigned threads : {1u, 4u}) {
    csv.num_threads = tbl.num_threads = threads;
    expect_same_with_nulls(csv_rel, parse_csv(text, csv_rel.schema(), csv));
    expect_same_with_nulls(tbl_rel, parse_csv(tbl_text, tbl_rel.schema(), tbl));
  }
}

// A nullable attribute kept among skipped ones keeps its validity, across chunks.
TEST(RoundTripNulls, KeptNullableAttributes) {
  auto rel = random_nullable_relation(60000, 25, true, true);
  std::string text = to_csv_string(rel);
  CsvOptions opt;
  opt.num_threads = 4;
  opt.columns = {"s", "dt", "k"};
  HostRelation got = parse_csv(text, rel.schema(), opt);
  ASSERT_EQ(got.num_columns(), 3u);
  ASSERT_EQ(got.num_rows(), rel.num_rows());
  const size_t from[] = {0, 6, 7};  // k, dt, s in schema order
  for (size_t c = 0; c < 3; ++c) {
    EXPECT_EQ(got.schema()[c], rel.schema()[from[c]]);
    EXPECT_EQ(got.column(c).validity(), rel.column(from[c]).validity());
    for (size_t r = 0; r < rel.num_rows(); ++r)
      ASSERT_EQ(got.get(r, c), rel.get(r, from[c])) << c << " " << r;
  }
  expect_null_rows_hold_zero(got);
}

// An error in a late chunk of a file with nullable attributes keeps its location.
TEST(RoundTripNulls, ErrorsInLaterChunksOfNullableFiles) {
  auto rel = random_nullable_relation(40000, 26, false, false);
  std::string text = to_csv_string(rel, CsvOptions::tbl());
  // Make line 30000's k (not nullable, the first field) empty.
  size_t pos = 0;
  for (int i = 0; i < 29999; ++i) pos = text.find('\n', pos) + 1;
  text.erase(pos, text.find('|', pos) - pos);
  for (unsigned threads : {1u, 4u}) {
    CsvOptions opt = CsvOptions::tbl();
    opt.num_threads = threads;
    auto d = parse_error(text, rel.schema(), opt, "big.tbl");
    EXPECT_EQ(d.loc, (SourceLoc{"big.tbl", 30000, 1}));
    EXPECT_EQ(d.message, "empty field is not a valid i64 for attribute k");
    EXPECT_EQ(d.hint,
              "to read an empty field as NULL, declare the attribute nullable: 'k i64 null'");
  }
}

}  // namespace
}  // namespace ranc
