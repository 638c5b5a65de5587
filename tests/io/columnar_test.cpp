// Tests of the columnar .rcol format (runtime/src/io/columnar.cpp,
// docs/columnar-format.md): round trips of every type, nullable or not, column
// subsets against the text reader's pruned result, schema checks (nullability
// included), versions (a version 1 file still reads), the atomic write, and
// robustness: every truncation and every flipped byte is a UserError(Data), and
// files whose checksums were recomputed after a bad edit are still refused.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "columnar_v1_fixture.h"
#include "ranc/data/error.h"
#include "ranc/io/columnar.h"
#include "ranc/io/csv.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ranc {
namespace {

namespace fs = std::filesystem;

Schema schema_of(std::vector<std::pair<std::string, Type>> attrs, size_t key = 0) {
  Schema s;
  for (auto& [n, t] : attrs) s.attributes.push_back({n, t});
  s.key_size = key;
  return s;
}

Schema all_types(size_t key = 0) {
  return schema_of({{"b", Type::Bool},
                    {"i", Type::I32},
                    {"l", Type::I64},
                    {"f", Type::F32},
                    {"d", Type::F64},
                    {"dt", Type::Date},
                    {"s", Type::String}},
                   key);
}

class ColumnarTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ranc_columnar_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

std::string read_bytes(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}
void write_bytes(const std::string& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}
// Overwrites the byte at `at` in place (cheaper than rewriting the file per flip).
void poke(const std::string& p, size_t at, char byte) {
  std::fstream f(p, std::ios::binary | std::ios::in | std::ios::out);
  f.seekp(static_cast<std::streamoff>(at));
  f.put(byte);
  ASSERT_TRUE(f.good());
}

// Rows with every type, strings repeated (a real dictionary), extreme values.
HostRelation sample(size_t rows, uint32_t seed, size_t key = 0) {
  HostRelation rel(all_types(key));
  std::mt19937_64 rng(seed);
  const std::vector<std::string> words = {
      "", "alpha", "beta", "gamma", "line\nbreak", "comma, inside", "\xc3\xa9t\xc3\xa9"};
  for (size_t r = 0; r < rows; ++r) {
    std::string str = words[rng() % words.size()];
    if (rng() % 4 == 0) str += std::to_string(rng() % 1000);
    rel.append_row({Value::boolean(rng() & 1), Value::i32(static_cast<int32_t>(rng())),
                    Value::i64(r == 0 ? INT64_MIN : static_cast<int64_t>(rng())),
                    Value::f32(r == 1 ? -0.0f : static_cast<float>(rng() % 100000) / 7.0f),
                    Value::f64(r == 2 ? std::nan("") : static_cast<double>(rng()) / 3.0),
                    Value::date(static_cast<int32_t>(rng() % 40000) - 10000), Value::string(str)});
  }
  return rel;
}

// The sample's attributes, nullable but for i, and `none` (f64, NULL in every row).
Schema nullable_types(size_t key = 0) {
  Schema s = all_types(key);
  for (auto& a : s.attributes) a.nullable = a.name != "i";
  s.attributes.push_back({"none", Type::F64, true});
  return s;
}

// sample() with NULLs: every nullable attribute is NULL in the first and the last row
// and in about one row in four; `none` in every row.
HostRelation nullable_sample(size_t rows, uint32_t seed, size_t key = 0) {
  HostRelation plain = sample(rows, seed, key);
  HostRelation rel(nullable_types(key));
  std::mt19937_64 rng(seed + 1000);
  for (size_t r = 0; r < rows; ++r) {
    std::vector<Value> row = plain.row(r);
    for (size_t c = 0; c < row.size(); ++c)
      if (c != 1 && (r == 0 || r + 1 == rows || rng() % 4 == 0))
        row[c] = Value::null(row[c].type());
    row.push_back(Value::null(Type::F64));
    rel.append_row(row);
  }
  return rel;
}

// Bitwise equality: schema (with key and nullability), rows, each column's bytes and
// validity, the dictionaries.
void expect_identical(const HostRelation& a, const HostRelation& b) {
  ASSERT_EQ(a.schema(), b.schema());
  ASSERT_EQ(a.num_rows(), b.num_rows());
  for (size_t c = 0; c < a.num_columns(); ++c) {
    const Column& x = a.column(c);
    const Column& y = b.column(c);
    ASSERT_EQ(x.nullable(), y.nullable()) << "column " << c;
    ASSERT_EQ(x.validity(), y.validity()) << "column " << c;
    ASSERT_EQ(x.bytes(), y.bytes());
    if (x.bytes() > 0) {
      EXPECT_EQ(std::memcmp(x.raw(), y.raw(), x.bytes()), 0) << "column " << c;
    }
    if (x.type() == Type::String) {
      EXPECT_EQ(x.dictionary()->strings(), y.dictionary()->strings()) << "column " << c;
    }
  }
}

// The first diagnostic of f(), which must throw UserError(Data).
template <typename F>
std::string data_error(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Data) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no UserError";
  return {};
}

// The size of a table entry: 96 bytes in version 2, 64 in version 1.
constexpr size_t kEntry = 96;

// Recomputes every checksum of a (possibly edited) file, as a writer would: the
// sections from the table, then the table, then the header (docs/columnar-format.md).
std::string reseal(std::string f) {
  auto u64 = [&](size_t at) {
    uint64_t v;
    std::memcpy(&v, f.data() + at, 8);
    return v;
  };
  auto put = [&](size_t at, uint64_t v) { std::memcpy(f.data() + at, &v, 8); };
  auto pad = [](uint64_t n) { return (n + 63) / 64 * 64; };
  uint32_t n, major;
  std::memcpy(&n, f.data() + 64, 4);
  std::memcpy(&major, f.data() + 8, 4);
  const size_t entry = major == 1 ? 64 : kEntry;
  // Only what lies inside the file (the edit may have broken the table).
  auto inside = [&](uint64_t off, uint64_t len) {
    return off <= f.size() && len <= f.size() - off;
  };
  for (uint32_t i = 0; i < n && inside(64 + 16 + uint64_t{i} * entry, entry); ++i) {
    size_t e = 64 + 16 + size_t{i} * entry;
    if (inside(u64(e + 16), pad(u64(e + 24))))
      put(e + 32, XXH3_64bits(f.data() + u64(e + 16), pad(u64(e + 24))));
    if (u64(e + 48) && inside(u64(e + 40), pad(u64(e + 48))))
      put(e + 56, XXH3_64bits(f.data() + u64(e + 40), pad(u64(e + 48))));
    if (entry > 64 && (f[e + 13] & 1) && inside(u64(e + 64), pad(u64(e + 72))))
      put(e + 80, XXH3_64bits(f.data() + u64(e + 64), pad(u64(e + 72))));
  }
  if (inside(64, u64(40))) put(48, XXH3_64bits(f.data() + 64, u64(40)));
  put(56, XXH3_64bits(f.data(), 56));
  return f;
}

TEST_F(ColumnarTest, RoundTripsEveryTypeWithKeyAndDictionary) {
  HostRelation rel = sample(300, 1, 2);
  ASSERT_GT(rel.column(6).dictionary()->size(), 5u);
  std::string p = path("r.rcol");
  write_columnar(p, rel);
  EXPECT_TRUE(is_columnar_file(p));
  expect_identical(rel, read_columnar(p));                // the file's schema, key included
  expect_identical(rel, read_columnar(p, rel.schema()));  // the declared schema
  EXPECT_TRUE(std::isnan(read_columnar(p).get(2, 4).as_f64()));
  EXPECT_TRUE(std::signbit(read_columnar(p).get(1, 3).as_f32()));
  ColumnarInfo info = read_columnar_info(p);
  EXPECT_EQ(info.major_version, kColumnarMajorVersion);
  EXPECT_EQ(info.rows, 300u);
  EXPECT_EQ(info.schema, rel.schema());
  EXPECT_EQ(info.file_bytes, fs::file_size(p));
  EXPECT_EQ(info.sections[2].data_bytes, 300u * 8);
  EXPECT_EQ(info.sections[6].dictionary_size, rel.column(6).dictionary()->size());
  EXPECT_EQ(fs::file_size(p) % 64, 0u);
}

TEST_F(ColumnarTest, RoundTripsEmptyAndSingleRowRelations) {
  for (size_t rows : {0u, 1u}) {
    HostRelation rel = sample(rows, 2, 1);
    std::string p = path("e.rcol");
    write_columnar(p, rel);
    HostRelation got = read_columnar(p, rel.schema());
    expect_identical(rel, got);
    EXPECT_EQ(got.num_rows(), rows);
  }
}

// A column subset equals the text reader's pruned result on the same data (schema
// order, the kept key prefix, values and dictionaries), on 1 and several threads.
TEST_F(ColumnarTest, ColumnSubsetEqualsTheTextReadersPrunedResult) {
  HostRelation rel = sample(5000, 3);
  CsvOptions text_opt = CsvOptions::csv();
  std::string text = to_csv_string(rel, text_opt);
  Schema declared = all_types(3);  // key b, i, l
  HostRelation full = parse_csv(text, declared, text_opt);
  std::string p = path("r.rcol");
  write_columnar(p, full);
  for (const std::vector<std::string>& keep : std::vector<std::vector<std::string>>{
           {}, {"s"}, {"dt", "s", "b"}, {"b", "i"}, {"i", "l", "f"}, {"d"}}) {
    for (unsigned threads : {1u, 3u}) {
      CsvOptions opt = text_opt;
      opt.columns = keep;
      opt.num_threads = threads;
      HostRelation want = parse_csv(text, declared, opt);
      HostRelation got = read_columnar(p, declared, opt);
      expect_identical(want, got);
      EXPECT_EQ(got.schema().key_size, want.schema().key_size);
      // read_input picks the format from the bytes, not the extension.
      std::string disguised = path("disguised.csv");
      fs::copy_file(p, disguised, fs::copy_options::overwrite_existing);
      expect_identical(want, read_input(disguised, declared, opt));
    }
  }
  // And read_input reads text files as text.
  std::string csv = path("r.csv");
  write_bytes(csv, text);
  EXPECT_FALSE(is_columnar_file(csv));
  expect_identical(full, read_input(csv, declared, text_opt));
}

TEST_F(ColumnarTest, FileMayHaveMoreAttributesThanDeclared) {
  HostRelation rel = sample(100, 4);
  std::string p = path("wide.rcol");
  write_columnar(p, rel);
  // The program declares two of the file's attributes, in another order than the file.
  Schema declared = schema_of({{"s", Type::String}, {"i", Type::I32}}, 1);
  HostRelation got = read_columnar(p, declared);
  EXPECT_EQ(got.schema(), declared);
  ASSERT_EQ(got.num_rows(), 100u);
  for (size_t r = 0; r < 100; ++r) {
    EXPECT_EQ(got.get(r, 0), rel.get(r, 6));
    EXPECT_EQ(got.get(r, 1), rel.get(r, 1));
  }
}

TEST_F(ColumnarTest, TypeMismatchAndMissingAttributesAreNamed) {
  std::string p = path("lineitem.rcol");
  write_columnar(p, sample(10, 5));
  std::string m = data_error([&] { read_columnar(p, schema_of({{"d", Type::I32}})); });
  EXPECT_NE(m.find("attribute d has type f64 in the file, the program declares i32"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("lineitem.rcol"), std::string::npos) << m;
  m = data_error([&] { read_columnar(p, schema_of({{"i", Type::I32}, {"zz", Type::I64}})); });
  EXPECT_NE(m.find("attribute zz is not in the file (it has b, i, l, f, d, dt, s)"),
            std::string::npos)
      << m;
  // A pruned read does not look at attributes it does not keep...
  CsvOptions opt;
  opt.columns = {"i"};
  EXPECT_EQ(read_columnar(p, schema_of({{"i", Type::I32}, {"zz", Type::I64}}), opt).num_rows(),
            10u);
  // ...but must keep attributes of the schema.
  opt.columns = {"nope"};
  m = data_error([&] { read_columnar(p, all_types(), opt); });
  EXPECT_NE(m.find("cannot keep attribute 'nope'"), std::string::npos) << m;
  m = data_error([&] { read_columnar(p, Schema{}); });
  EXPECT_NE(m.find("without attributes"), std::string::npos) << m;
}

TEST_F(ColumnarTest, WrongMagicAndOtherVersionsAreRefused) {
  std::string p = path("t.rcol");
  write_bytes(p, "a,b\n1,2\n");
  EXPECT_FALSE(is_columnar_file(p));
  std::string m = data_error([&] { read_columnar(p, schema_of({{"a", Type::I32}})); });
  EXPECT_NE(m.find("not a ranc columnar file"), std::string::npos) << m;
  EXPECT_FALSE(is_columnar_file(path("missing.rcol")));
  m = data_error([&] { read_columnar(path("missing.rcol")); });
  EXPECT_NE(m.find("cannot open"), std::string::npos) << m;

  write_columnar(p, sample(10, 6));
  std::string good = read_bytes(p);
  std::string newer = good;
  uint32_t v = 3;
  std::memcpy(newer.data() + 8, &v, 4);
  write_bytes(p, reseal(newer));
  m = data_error([&] { read_columnar(p); });
  EXPECT_NE(m.find(fmt::format("written by format version 3.{}, this ranc reads versions 1 and 2",
                               kColumnarMinorVersion)),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("corrupt"), std::string::npos) << m;
  write_bytes(p, newer);  // the header checksum no longer matches either
  m = data_error([&] { read_columnar(p); });
  EXPECT_NE(m.find("written by format version 3."), std::string::npos) << m;
  EXPECT_NE(m.find("or the header is corrupt"), std::string::npos) << m;
  // A newer minor version of the same major is read.
  std::string minor = good;
  v = 7;
  std::memcpy(minor.data() + 12, &v, 4);
  write_bytes(p, reseal(minor));
  EXPECT_EQ(read_columnar(p).num_rows(), 10u);
}

// Cutting the file at every length is a UserError(Data), never a crash or a result.
TEST_F(ColumnarTest, EveryTruncationIsAnError) {
  HostRelation rel = sample(5, 7, 1);
  std::string p = path("t.rcol");
  write_columnar(p, rel);
  const std::string good = read_bytes(p);
  ASSERT_GT(good.size(), 600u);
  for (size_t len = good.size(); len-- > 0;) {
    fs::resize_file(p, len);
    std::string m = data_error([&] { read_columnar(p, rel.schema()); });
    if (len < 8)
      EXPECT_NE(m.find("not a ranc columnar file"), std::string::npos) << len << ": " << m;
    else
      EXPECT_NE(m.find("truncated"), std::string::npos) << len << ": " << m;
  }
  // The message says which part is cut: here the last column's dictionary.
  write_bytes(p, good.substr(0, good.size() - 1));
  std::string m = data_error([&] { read_columnar(p, rel.schema()); });
  EXPECT_NE(m.find("truncated: the dictionary of column s needs bytes"), std::string::npos) << m;
  EXPECT_NE(m.find(fmt::format("the file has {}", good.size() - 1)), std::string::npos) << m;
  // Bytes appended are an error too.
  write_bytes(p, good + std::string(64, '\0'));
  m = data_error([&] { read_columnar(p, rel.schema()); });
  EXPECT_NE(m.find("64 more than its header records"), std::string::npos) << m;
}

// Every byte of the file is under a checksum (padding included): flipping any bit
// pattern of any byte is a UserError(Data) when every column is read. A read of a
// subset either fails or returns exactly the subset of the original.
TEST_F(ColumnarTest, EveryFlippedByteIsAnError) {
  HostRelation rel = sample(6, 8, 2);
  std::string p = path("f.rcol");
  write_columnar(p, rel);
  const std::string good = read_bytes(p);
  CsvOptions subset;
  subset.columns = {"i", "s"};
  const HostRelation want_subset = read_columnar(p, rel.schema(), subset);
  size_t subset_ok = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t mask : {0x01, 0x80, 0xFF}) {
      poke(p, i, static_cast<char>(good[i] ^ mask));
      data_error([&] { read_columnar(p, rel.schema()); });
      try {
        HostRelation got = read_columnar(p, rel.schema(), subset);
        expect_identical(want_subset, got);
        ++subset_ok;
      } catch (const UserError& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Data);
      }
      if (::testing::Test::HasFailure()) FAIL() << "byte " << i << " mask " << int{mask};
    }
    poke(p, i, good[i]);
  }
  EXPECT_GT(subset_ok, 0u);  // flips in unread columns do not matter to a subset
}

// A larger file (several pages, two string columns' worth of dictionary), every
// 97th byte.
TEST_F(ColumnarTest, FlippedBytesInALargerFileAreErrors) {
  HostRelation rel = sample(20000, 9);
  std::string p = path("big.rcol");
  write_columnar(p, rel);
  const std::string good = read_bytes(p);
  for (size_t i = 0; i < good.size(); i += 97) {
    poke(p, i, static_cast<char>(good[i] ^ 0x10));
    data_error([&] { read_columnar(p, rel.schema()); });
    if (::testing::Test::HasFailure()) FAIL() << "byte " << i;
    poke(p, i, good[i]);
  }
  expect_identical(rel, read_columnar(p, rel.schema()));  // restored
}

// Files with valid checksums whose content is still wrong (a buggy or hostile
// writer) are refused too: the reader checks the structure, not just checksums.
TEST_F(ColumnarTest, StructuralErrorsBehindValidChecksums) {
  HostRelation rel = sample(4, 10);
  std::string p = path("s.rcol");
  write_columnar(p, rel);
  const std::string good = read_bytes(p);
  auto u64 = [&](const std::string& f, size_t at) {
    uint64_t v;
    std::memcpy(&v, f.data() + at, 8);
    return v;
  };
  const size_t table = 64;
  auto entry_at = [&](size_t i) { return table + 16 + i * kEntry; };
  auto expect = [&](const char* what, std::string bad, const char* want) {
    write_bytes(p, reseal(std::move(bad)));
    std::string m = data_error([&] { read_columnar(p, rel.schema()); });
    EXPECT_NE(m.find(want), std::string::npos) << what << ": " << m;
  };
  auto set64 = [](std::string& f, size_t at, uint64_t v) { std::memcpy(f.data() + at, &v, 8); };
  auto set32 = [](std::string& f, size_t at, uint32_t v) { std::memcpy(f.data() + at, &v, 4); };
  std::string f;

  // A string code outside the dictionary (column s is attribute 6).
  f = good;
  set32(f, u64(good, entry_at(6) + 16) + 4, 1000);
  expect("code", f, "row 1 has the string code 1000");
  f = good;
  set32(f, u64(good, entry_at(6) + 16), static_cast<uint32_t>(-1));
  expect("negative code", f, "row 0 has the string code -1");
  // A bool that is neither 0 nor 1.
  f = good;
  f[u64(good, entry_at(0) + 16) + 2] = 2;
  expect("bool", f, "row 2 holds 2, not 0 or 1");
  // A dictionary out of order: swap the first two strings' bytes (equal lengths
  // are not guaranteed, so set the first end offset past the second).
  const size_t dict = u64(good, entry_at(6) + 40);
  const uint64_t count = u64(good, dict);
  ASSERT_GE(count, 2u);
  f = good;
  set64(f, dict + 16, u64(good, dict + 8 + 8 * count) + 1);
  expect("offsets", f, "corrupt the dictionary of column s");
  f = good;
  set64(f, dict, count * 1000);
  expect("count", f, "strings do not fit");
  f = good;
  {
    // Make string 1 equal to string 0 by giving both the same bytes range: end1 = end0.
    set64(f, dict + 16, u64(good, dict + 24));
    expect("order", f, "corrupt the dictionary of column s");
  }
  // Row count that disagrees with the columns.
  f = good;
  set64(f, 24, 5);
  expect("rows", f, "but 5 rows of bool need 5");
  // Overlapping or misplaced sections.
  f = good;
  set64(f, entry_at(1) + 16, u64(good, entry_at(0) + 16));
  expect("overlap", f, "column i starts at byte");
  // An unknown type code, a duplicate name, a key longer than the schema.
  f = good;
  f[entry_at(2) + 12] = 42;
  expect("type", f, "unknown type code 42");
  f = good;
  f[table + u64(good, entry_at(1))] = 'b';  // attribute "i" renamed "b"
  expect("dup", f, "attribute b appears twice");
  f = good;
  set32(f, table + 4, 8);
  expect("key", f, "a key of 8 attributes out of 7");
  f = good;
  set64(f, 32, uint64_t{1} << 63);
  expect("huge size", f, "corrupt header");
  f = good;
  set32(f, table, 0x7fffffff);
  expect("huge count", f, "attributes do not fit");
}

// Random edits of the header, table, dictionaries and validity sections with the
// checksums recomputed (so the structural checks are all that stands between them
// and the reader): each read returns or throws UserError(Data), never crashes or
// throws anything else. Run under AddressSanitizer this also checks that nothing is
// read out of bounds.
TEST_F(ColumnarTest, ResealedRandomEditsNeverCrash) {
  std::mt19937_64 rng(16);
  for (const HostRelation& rel : {sample(8, 15), nullable_sample(8, 15)}) {
    std::string p = path("r.rcol");
    write_columnar(p, rel);
    const std::string good = read_bytes(p);
    uint64_t dict;
    std::memcpy(&dict, good.data() + 64 + 16 + 6 * kEntry + 40, 8);  // column s's dictionary
    size_t returned = 0, refused = 0;
    for (int iter = 0; iter < 1500; ++iter) {
      std::string f = good;
      for (int k = 0, edits = 1 + static_cast<int>(rng() % 4); k < edits; ++k) {
        // Mostly the metadata and the sections from the dictionary on, where structure
        // lives.
        size_t at = rng() % 3 == 0 ? dict + rng() % (good.size() - dict) : rng() % 1024;
        f[at % f.size()] = static_cast<char>(rng() % 4 == 0 ? 0xFF : rng());
      }
      write_bytes(p, reseal(f));
      try {
        (void)read_columnar(p);
        ++returned;
      } catch (const UserError& e) {
        ASSERT_EQ(e.kind(), ErrorKind::Data) << e.what();
        ++refused;
      }
    }
    EXPECT_GT(refused, 0u);
    EXPECT_GT(returned, 0u);  // edits of names or of unchecked values can be harmless
  }
}

TEST_F(ColumnarTest, WriteIsAtomicAndLeavesNoTemporaryFile) {
  HostRelation rel = sample(50, 11);
  std::string p = path("a.rcol");
  write_bytes(p, "old contents");
  write_columnar(p, rel);
  expect_identical(rel, read_columnar(p));
  write_columnar(p, sample(3, 12));  // overwrite in place
  EXPECT_EQ(read_columnar(p).num_rows(), 3u);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"a.rcol"});
  // A failed write leaves nothing behind and the old file intact.
  HostRelation dup(schema_of({{"x", Type::I32}, {"x", Type::I64}}));
  std::string m = data_error([&] { write_columnar(p, dup); });
  EXPECT_NE(m.find("attribute x appears twice"), std::string::npos) << m;
  m = data_error([&] { write_columnar(path("no/such/dir/x.rcol"), rel); });
  EXPECT_NE(m.find("cannot write"), std::string::npos) << m;
  names.clear();
  for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"a.rcol"});
  EXPECT_EQ(read_columnar(p).num_rows(), 3u);
}

TEST_F(ColumnarTest, ThreadsAndProgress) {
  HostRelation rel = sample(3000, 13);
  std::string p = path("p.rcol");
  write_columnar(p, rel);
  CsvOptions opt;
  opt.num_threads = 4;
  uint64_t last_done = 0, last_total = 0;
  int calls = 0;
  opt.progress = [&](uint64_t done, uint64_t total) {
    EXPECT_LE(done, total);
    EXPECT_GE(done, last_done);
    last_done = done;
    last_total = total;
    ++calls;
  };
  expect_identical(rel, read_columnar(p, rel.schema(), opt));
  EXPECT_GE(calls, 1);
  EXPECT_EQ(last_done, last_total);
  // Every section read: the file less its header and table.
  ColumnarInfo info = read_columnar_info(p);
  uint64_t sections = 0;
  for (const auto& s : info.sections)
    sections += (s.data_bytes + 63) / 64 * 64 + (s.dictionary_bytes + 63) / 64 * 64 +
                (s.validity_bytes + 63) / 64 * 64;
  EXPECT_EQ(last_total, sections);
  EXPECT_LT(sections, info.file_bytes);
}

TEST_F(ColumnarTest, PreferColumnarFallsBackToTheRcolOfAMissingTextFile) {
  std::string tbl = path("lineitem.tbl"), rcol = path("lineitem.rcol");
  EXPECT_EQ(prefer_columnar(tbl), tbl);  // neither exists
  write_columnar(rcol, sample(2, 14));
  EXPECT_EQ(prefer_columnar(tbl), rcol);
  write_bytes(tbl, "");
  EXPECT_EQ(prefer_columnar(tbl), tbl);  // the text file wins when present
  EXPECT_EQ(prefer_columnar(rcol), rcol);
}

// ---- Nullable columns (format version 2) ----

TEST_F(ColumnarTest, RoundTripsNullableColumnsOfEveryType) {
  for (size_t rows : {0u, 1u, 2u, 300u}) {
    HostRelation rel = nullable_sample(rows, 31, 2);
    std::string p = path("n.rcol");
    write_columnar(p, rel);
    expect_identical(rel, read_columnar(p));                // the file's schema: nullable
    expect_identical(rel, read_columnar(p, rel.schema()));  // the declared schema
    ColumnarInfo info = read_columnar_info(p);
    EXPECT_EQ(info.major_version, 2u);
    EXPECT_EQ(info.schema, rel.schema());
    EXPECT_TRUE(info.schema[0].nullable);
    EXPECT_FALSE(info.schema[1].nullable);
    for (size_t c = 0; c < info.sections.size(); ++c)
      EXPECT_EQ(info.sections[c].validity_bytes, c == 1 ? 0u : rows) << c;
    EXPECT_EQ(fs::file_size(p) % 64, 0u);
    if (rows == 0) continue;
    HostRelation got = read_columnar(p);
    // NULL in the first and the last row of every nullable column; `none` everywhere.
    for (size_t c = 0; c < got.num_columns(); ++c) {
      EXPECT_EQ(got.get(0, c).is_null(), c != 1) << c;
      EXPECT_EQ(got.get(rows - 1, c).is_null(), c != 1) << c;
    }
    for (size_t r = 0; r < rows; ++r) EXPECT_TRUE(got.get(r, 7).is_null()) << r;
    // NULL strings hold the code of "", which is code 0.
    EXPECT_EQ(got.column(6).dictionary()->at(0), "");
    EXPECT_EQ(got.column(6).data<int32_t>()[0], 0);
  }
}

// A relation whose NULLs sit where the tests below expect them:
//   x i32 null   s string null   y i64 null   t string null   k i32
//   1            a               5            a               10
//   2            NULL            6            b               11
//   NULL         b               7            a               12
//   4            a               8            b               13
HostRelation hand_made() {
  Schema s = schema_of({{"x", Type::I32},
                        {"s", Type::String},
                        {"y", Type::I64},
                        {"t", Type::String},
                        {"k", Type::I32}});
  for (size_t c = 0; c < 4; ++c) s.attributes[c].nullable = true;
  auto row = [](Value x, Value s, int64_t y, const char* t, int32_t k) {
    return std::vector<Value>{x, s, Value::i64(y), Value::string(t), Value::i32(k)};
  };
  return HostRelation::from_rows(s, {row(Value::i32(1), Value::string("a"), 5, "a", 10),
                                     row(Value::i32(2), Value::null(Type::String), 6, "b", 11),
                                     row(Value::null(Type::I32), Value::string("b"), 7, "a", 12),
                                     row(Value::i32(4), Value::string("a"), 8, "b", 13)});
}

TEST_F(ColumnarTest, NullabilityOfTheDeclaredSchema) {
  HostRelation rel = hand_made();
  std::string p = path("h.rcol");
  write_columnar(p, rel);
  Schema strict = rel.schema();
  for (auto& a : strict.attributes) a.nullable = false;
  // x holds a NULL (in row 2): an error naming the file, the attribute and the row.
  try {
    read_columnar(p, strict);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Data);
    EXPECT_EQ(e.first().loc.file, p);
    EXPECT_EQ(e.first().message,
              "attribute x holds NULL in row 2 (counting from 0), but the program declares it "
              "not nullable");
    EXPECT_EQ(e.first().hint, "declare it nullable: 'x i32 null'");
  }
  CsvOptions opt;
  opt.columns = {"s"};
  std::string m = data_error([&] { read_columnar(p, strict, opt); });
  EXPECT_NE(m.find("attribute s holds NULL in row 1 (counting from 0)"), std::string::npos) << m;
  // y and t are nullable in the file but hold no NULL: they read as not nullable.
  opt.columns = {"y", "t", "k"};
  HostRelation got = read_columnar(p, strict, opt);
  ASSERT_EQ(got.num_rows(), 4u);
  for (size_t c = 0; c < 3; ++c) {
    EXPECT_FALSE(got.column(c).nullable()) << c;
    EXPECT_TRUE(got.column(c).validity().empty()) << c;
  }
  EXPECT_EQ(got.column(0).data<int64_t>(), (std::vector<int64_t>{5, 6, 7, 8}));
  EXPECT_EQ(got.get(3, 1), Value::string("b"));
  // k is not nullable in the file: declared nullable, every row is valid.
  Schema loose = rel.schema();
  loose.attributes[4].nullable = true;
  got = read_columnar(p, loose);
  EXPECT_EQ(got.column(4).validity(), (std::vector<uint8_t>{1, 1, 1, 1}));
  EXPECT_EQ(got.column(0).validity(), (std::vector<uint8_t>{1, 1, 0, 1}));
  EXPECT_EQ(got.column(1).validity(), (std::vector<uint8_t>{1, 0, 1, 1}));
  EXPECT_EQ(got.column(1).dictionary()->strings(), (std::vector<std::string>{"", "a", "b"}));
  EXPECT_EQ(got.column(1).data<int32_t>(), (std::vector<int32_t>{1, 0, 2, 1}));
  EXPECT_EQ(got.column(0).data<int32_t>(), (std::vector<int32_t>{1, 2, 0, 4}));
}

// Damaged validity sections: a flipped byte fails its checksum; with the checksums
// recomputed, the structure is still checked.
TEST_F(ColumnarTest, DamagedValiditySections) {
  HostRelation rel = hand_made();
  std::string p = path("v.rcol");
  write_columnar(p, rel);
  const std::string good = read_bytes(p);
  auto u64 = [&](size_t at) {
    uint64_t v;
    std::memcpy(&v, good.data() + at, 8);
    return v;
  };
  auto entry_at = [&](size_t i) { return 64 + 16 + i * kEntry; };
  const size_t vx = u64(entry_at(0) + 64), vs = u64(entry_at(1) + 64), vt = u64(entry_at(3) + 64);
  ASSERT_EQ(u64(entry_at(0) + 72), 4u);
  ASSERT_EQ(good.substr(vx, 4), std::string("\1\1\0\1", 4));
  ASSERT_EQ(u64(entry_at(4) + 64), 0u);  // k: no validity
  auto expect = [&](const char* what, std::string bad, bool seal, const std::string& want) {
    write_bytes(p, seal ? reseal(std::move(bad)) : std::move(bad));
    std::string m = data_error([&] { read_columnar(p, rel.schema()); });
    EXPECT_NE(m.find(want), std::string::npos) << what << ": " << m;
  };
  std::string f;
  f = good;
  f[vx + 1] ^= 1;
  expect("flip", f, false,
         fmt::format("checksum mismatch in the validity of column x (bytes {}..{})", vx, vx + 64));
  f = good;
  f[vx + 10] = 1;  // the padding is under the checksum too
  expect("padding", f, false, "checksum mismatch in the validity of column x");
  f = good;
  f[vx + 1] = 2;
  expect("not 0 or 1", f, true, "corrupt the validity of column x: row 1 holds 2, not 0 or 1");
  f = good;
  f[vx] = 0;  // row 0 of x holds 1
  expect("value under NULL", f, true,
         "corrupt column x: row 0 is NULL but its value is not the type's zero");
  f = good;
  f[vs] = 0;  // row 0 of s holds the code of "a"
  expect("string under NULL", f, true,
         "corrupt column s: row 0 is NULL but its value is not the type's zero");
  f = good;
  f[vt] = 0;  // row 0 of t holds code 0, "a": t has no ""
  expect("no empty string", f, true,
         "corrupt the dictionary of column t: the column has NULL rows, which hold the code of "
         "the empty string, but the dictionary has no empty string");
  auto set64 = [](std::string& s, size_t at, uint64_t v) { std::memcpy(s.data() + at, &v, 8); };
  f = good;
  set64(f, entry_at(0) + 72, 3);
  expect("length", f, true,
         "corrupt schema table: the validity of column x has 3 bytes, but 4 rows need 4");
  f = good;
  set64(f, entry_at(0) + 64, vx + 64);
  expect(
      "offset", f, true,
      fmt::format("corrupt schema table: the validity of column x starts at byte {}, expected {}",
                  vx + 64, vx));
  f = good;
  f[entry_at(0) + 13] = 0;
  expect("flag cleared", f, true,
         "corrupt schema table: column x is not nullable but has a validity section");
  f = good;
  f[entry_at(4) + 13] = 1;
  expect("flag set", f, true,
         "corrupt schema table: the validity of column k has 0 bytes, but 4 rows need 4");
  // The validity is the last section of the last nullable column: cutting the file
  // says so.
  const size_t vlast = u64(entry_at(3) + 64);
  ASSERT_EQ(vlast + 64, u64(entry_at(4) + 16));  // k's data follows t's validity
  f = good.substr(0, vlast + 10);
  expect("truncated", f, false,
         fmt::format("truncated: the validity of column t needs bytes {}..{}", vlast, vlast + 64));
  // Bit 1 (ascending, 2.1) belongs to i32, i64 and date columns without NULLs.
  f = good;
  f[entry_at(0) + 13] = 0x03;
  expect("ascending and nullable", f, true,
         "corrupt schema table: column x of type i32 null is flagged ascending");
  // The other flag bits are reserved for minor versions: a reader ignores them.
  f = good;
  f[entry_at(0) + 13] = 0x05;
  write_bytes(p, reseal(f));
  expect_identical(rel, read_columnar(p, rel.schema()));
}

// Since 2.1 the writer flags i32, i64 and date columns without NULLs whose rows ascend
// (non-decreasing, the first less than the last), and a read of a flagged column checks it:
// a flag on rows out of order, or on equal rows, is an error naming the column and the row.
TEST_F(ColumnarTest, AscendingColumnsAreFlaggedAndChecked) {
  Schema s = schema_of({{"up", Type::I32},      // ascending with ties, negative to positive
                        {"down", Type::I64},    // descending
                        {"same", Type::Date},   // constant
                        {"big", Type::I64},     // ascending through INT64_MIN..INT64_MAX
                        {"f", Type::F64},       // ascending, but not a flagged type
                        {"n", Type::I32},       // ascending, nullable
                        {"day", Type::Date}});  // ascending by one day a row
  s.attributes[5].nullable = true;
  HostRelation rel(s);
  const int rows = 1000;
  for (int r = 0; r < rows; ++r)
    rel.append_row({Value::i32(r / 3 - 100), Value::i64(rows - r), Value::date(7),
                    Value::i64(r == 0 ? INT64_MIN : r == rows - 1 ? INT64_MAX : r),
                    Value::f64(r * 0.5), r == 0 ? Value::null(Type::I32) : Value::i32(r),
                    Value::date(r - 500)});
  const std::string p = path("a.rcol");
  write_columnar(p, rel);
  ColumnarInfo info = read_columnar_info(p);
  EXPECT_EQ(info.minor_version, kColumnarMinorVersion);
  std::vector<bool> flagged;
  for (const auto& sec : info.sections) flagged.push_back(sec.ascending);
  EXPECT_EQ(flagged, (std::vector<bool>{true, false, false, true, false, false, true}));
  expect_identical(rel, read_columnar(p, rel.schema()));
  // CsvOptions::ascending names the flagged columns read (checked), and only those.
  std::vector<std::string> told;
  CsvOptions o;
  o.ascending = [&](const std::string& a) { told.push_back(a); };
  read_columnar(p, rel.schema(), o);
  EXPECT_EQ(told, (std::vector<std::string>{"up", "big", "day"}));
  told.clear();
  o.columns = {"down", "day"};
  read_columnar(p, rel.schema(), o);
  EXPECT_EQ(told, (std::vector<std::string>{"day"}));

  // One row and no rows: nothing ascends.
  for (int n : {0, 1}) {
    HostRelation small(schema_of({{"k", Type::I32}}));
    for (int r = 0; r < n; ++r) small.append_row({Value::i32(r)});
    write_columnar(p, small);
    EXPECT_FALSE(read_columnar_info(p).sections[0].ascending) << n << " rows";
  }

  // A writer that flagged wrongly, with every checksum right: the read of that column fails,
  // a read of the others does not.
  write_columnar(p, rel);
  const std::string good = read_bytes(p);
  auto entry_at = [&](size_t i) { return 64 + 16 + i * kEntry; };
  auto data_at = [&](size_t i) {
    uint64_t v;
    std::memcpy(&v, good.data() + entry_at(i) + 16, 8);
    return static_cast<size_t>(v);
  };
  // The edited file, resealed, read whole: an error saying `want`.
  auto expect = [&](std::string bad, const std::string& want) {
    write_bytes(p, reseal(std::move(bad)));
    std::string m = data_error([&] { read_columnar(p, rel.schema()); });
    EXPECT_NE(m.find(want), std::string::npos) << m;
  };
  std::string f = good;
  f[entry_at(1) + 13] |= 2;  // down
  expect(f, "corrupt column down: flagged ascending, but row 1 holds 999, less than row 0's 1000");
  EXPECT_EQ(read_columnar(p, schema_of({{"up", Type::I32}})).num_rows(), 1000u);
  f = good;
  f[entry_at(2) + 13] |= 2;  // same
  expect(f, "corrupt column same: flagged ascending, but its 1000 rows hold no two distinct values");
  f = good;
  int32_t v = 5;  // row 600 of day (100) set below row 599's 99
  std::memcpy(f.data() + data_at(6) + 600 * 4, &v, 4);
  expect(f, "corrupt column day: flagged ascending, but row 600 holds 5, less than row 599's 99");
  f = good;
  f[entry_at(4) + 13] |= 2;  // f: a type that is never flagged
  write_bytes(p, reseal(f));
  const std::string m = data_error([&] { read_columnar_info(p); });
  EXPECT_NE(m.find("column f of type f64 is flagged ascending"), std::string::npos) << m;
}

// As EveryFlippedByteIsAnError, for a file with validity sections.
TEST_F(ColumnarTest, EveryFlippedByteOfANullableFileIsAnError) {
  HostRelation rel = nullable_sample(6, 32, 1);
  std::string p = path("nf.rcol");
  write_columnar(p, rel);
  const std::string good = read_bytes(p);
  CsvOptions subset;
  subset.columns = {"i", "dt"};
  const HostRelation want_subset = read_columnar(p, rel.schema(), subset);
  size_t subset_ok = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t mask : {0x01, 0xFF}) {
      poke(p, i, static_cast<char>(good[i] ^ mask));
      data_error([&] { read_columnar(p, rel.schema()); });
      try {
        expect_identical(want_subset, read_columnar(p, rel.schema(), subset));
        ++subset_ok;
      } catch (const UserError& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Data);
      }
      if (::testing::Test::HasFailure()) FAIL() << "byte " << i << " mask " << int{mask};
    }
    poke(p, i, good[i]);
  }
  EXPECT_GT(subset_ok, 0u);
  for (size_t len = good.size(); len-- > 0;) {
    fs::resize_file(p, len);
    data_error([&] { read_columnar(p, rel.schema()); });
    if (::testing::Test::HasFailure()) FAIL() << "length " << len;
  }
}

// A file of version 1.0 (before nullable columns), kept byte for byte, still reads.
TEST_F(ColumnarTest, ReadsVersion1Files) {
  std::string p = path("v1.rcol");
  const std::string v1(reinterpret_cast<const char*>(test::kColumnarV1File),
                       sizeof test::kColumnarV1File);
  write_bytes(p, v1);
  ColumnarInfo info = read_columnar_info(p);
  EXPECT_EQ(info.major_version, 1u);
  EXPECT_EQ(info.minor_version, 0u);
  EXPECT_EQ(info.rows, 3u);
  EXPECT_EQ(info.schema, all_types(1));
  for (const auto& s : info.sections) EXPECT_EQ(s.validity_bytes, 0u);
  HostRelation want = HostRelation::from_rows(
      all_types(1),
      {{Value::boolean(true), Value::i32(-7), Value::i64(9000000000LL), Value::f32(1.5f),
        Value::f64(-2.25), Value::date(*parse_date("1994-01-01")), Value::string("alpha")},
       {Value::boolean(false), Value::i32(2147483647), Value::i64(-1), Value::f32(-0.0f),
        Value::f64(1e300), Value::date(-1), Value::string("")},
       {Value::boolean(true), Value::i32(0), Value::i64(42), Value::f32(3.0f), Value::f64(0.5),
        Value::date(0), Value::string("beta")}});
  expect_identical(want, read_columnar(p));
  expect_identical(want, read_columnar(p, want.schema()));
  // Read into nullable attributes: every row valid.
  Schema nullable = all_types(1);
  for (auto& a : nullable.attributes) a.nullable = true;
  HostRelation got = read_columnar(p, nullable);
  for (size_t c = 0; c < got.num_columns(); ++c)
    EXPECT_EQ(got.column(c).validity(), (std::vector<uint8_t>{1, 1, 1})) << c;
  EXPECT_EQ(got.get(1, 6), Value::string(""));
  // Written again, it is a version 2 file with the same relation.
  write_columnar(p, read_columnar(p));
  EXPECT_EQ(read_columnar_info(p).major_version, 2u);
  expect_identical(want, read_columnar(p));
  // Damage to a version 1 file is found as before.
  write_bytes(p, v1);
  for (size_t i = 0; i < v1.size(); ++i) {
    poke(p, i, static_cast<char>(v1[i] ^ 0x40));
    data_error([&] { read_columnar(p); });
    if (::testing::Test::HasFailure()) FAIL() << "byte " << i;
    poke(p, i, v1[i]);
  }
  std::string m = data_error([&] {
    write_bytes(p, v1.substr(0, v1.size() - 1));
    read_columnar(p);
  });
  EXPECT_NE(m.find("truncated: the dictionary of column s"), std::string::npos) << m;
}

// A NULL row whose storage is not the type's zero breaks host_relation.h's rule: the
// writer refuses it as a bug rather than write a file the reader refuses.
TEST_F(ColumnarTest, WriterRefusesNullRowsThatAreNotZero) {
  Schema s = schema_of({{"x", Type::I32}});
  s.attributes[0].nullable = true;
  HostRelation rel = HostRelation::from_rows(s, {{Value::i32(1)}, {Value::i32(2)}});
  rel.column(0).validity()[1] = 0;
  try {
    write_columnar(path("z.rcol"), rel);
    ADD_FAILURE() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("column x: row 1 is NULL but its storage is not the "
                                         "type's zero"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(path("z.rcol")));
}

// Text with NULLs, read in chunks on 4 threads, written as .rcol and read back (all
// columns and subsets, on 1 and 4 threads): the same relation as the text reader's.
TEST_F(ColumnarTest, NullableTextAndColumnarAgree) {
  HostRelation rel = nullable_sample(60000, 33, 1);
  std::string text = to_csv_string(rel);
  ASSERT_GT(text.size(), 2u << 20);
  CsvOptions text_opt = CsvOptions::csv();
  text_opt.num_threads = 4;
  HostRelation full = parse_csv(text, rel.schema(), text_opt);
  expect_identical(rel, full);
  std::string p = path("t.rcol");
  write_columnar(p, full);
  for (const std::vector<std::string>& keep :
       std::vector<std::vector<std::string>>{{}, {"s"}, {"none", "i"}, {"dt", "s", "b", "none"}}) {
    for (unsigned threads : {1u, 4u}) {
      CsvOptions opt = text_opt;
      opt.columns = keep;
      opt.num_threads = threads;
      uint64_t last_done = 0, last_total = 0;
      opt.progress = [&](uint64_t done, uint64_t total) {
        last_done = done;
        last_total = total;
      };
      HostRelation got = read_columnar(p, rel.schema(), opt);
      opt.progress = {};
      expect_identical(parse_csv(text, rel.schema(), opt), got);
      EXPECT_EQ(last_done, last_total);
      if (keep.empty()) {  // every section: the file less its header and table
        const uint64_t table = (16 + 8 * kEntry + 12 + 63) / 64 * 64;  // 12 bytes of names
        EXPECT_EQ(last_total, read_columnar_info(p).file_bytes - 64 - table);
      }
    }
  }
}

}  // namespace
}  // namespace ranc
