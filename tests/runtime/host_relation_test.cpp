// HostRelation's row order on the columns (sorted_row_ids, compare_row_ids) against the Value
// order it must equal (compare_rows over row()): every type, NULLs, NaN and signed zeros,
// strings whose codes a later append renumbers, and ties.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ranc/data/host_relation.h"

namespace ranc {
namespace {

HostRelation random_relation(size_t n, uint64_t seed) {
  Schema s{{{"b", Type::Bool, true},
            {"i", Type::I32},
            {"d", Type::Date, true},
            {"l", Type::I64},
            {"f", Type::F32, true},
            {"x", Type::F64},
            {"s", Type::String, true}},
           0};
  HostRelation r(s);
  std::mt19937_64 rng(seed);
  const double f64s[] = {0.0, -0.0, 1.5, -2.25, std::numeric_limits<double>::infinity(),
                         -std::numeric_limits<double>::infinity(), std::nan("")};
  const float f32s[] = {0.0f, -0.0f, 3.5f, -1.0f, std::nanf(""), std::numeric_limits<float>::infinity()};
  const char* strs[] = {"", "a", "ab", "b", "\xc3\xa9", "Z", "a\x01"};
  for (size_t k = 0; k < n; ++k) {
    // Few distinct values a column, so rows tie on leading columns and later ones decide.
    auto null = [&] { return rng() % 5 == 0; };
    r.append_row({null() ? Value::null(Type::Bool) : Value::boolean(rng() & 1),
                  Value::i32(static_cast<int32_t>(rng() % 3) - 1),
                  null() ? Value::null(Type::Date) : Value::date(static_cast<int32_t>(rng() % 3)),
                  Value::i64(static_cast<int64_t>(rng() % 3) - 1),
                  null() ? Value::null(Type::F32) : Value::f32(f32s[rng() % 6]),
                  Value::f64(f64s[rng() % 7]),
                  null() ? Value::null(Type::String) : Value::string(strs[rng() % 7])});
  }
  return r;
}

TEST(HostRelationOrder, RowIdsSortAsTheValueRows) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    const HostRelation r = random_relation(3000, seed);
    const std::vector<size_t> ids = r.sorted_row_ids();
    ASSERT_EQ(ids.size(), r.num_rows());
    const std::vector<std::vector<Value>> rows = r.sorted_rows();
    std::vector<bool> seen(ids.size(), false);
    for (size_t k = 0; k < ids.size(); ++k) {
      ASSERT_FALSE(seen[ids[k]]) << "row id " << ids[k] << " twice";
      seen[ids[k]] = true;
      // Rows in order by the Value order, and sorted_rows() the same rows.
      if (k > 0) ASSERT_TRUE(compare_rows(r.row(ids[k - 1]), r.row(ids[k])) <= 0) << "seed " << seed << " at " << k;
      ASSERT_TRUE(compare_rows(rows[k], r.row(ids[k])) == 0);
      // Ties come in row-id order (a stable sort).
      if (k > 0 && compare_rows(r.row(ids[k - 1]), r.row(ids[k])) == 0) ASSERT_LT(ids[k - 1], ids[k]);
    }
    // compare_row_ids is compare_rows on pairs, both ways.
    std::mt19937_64 rng(seed);
    for (int t = 0; t < 20000; ++t) {
      const size_t i = rng() % r.num_rows(), j = rng() % r.num_rows();
      ASSERT_TRUE(r.compare_row_ids(i, j) == compare_rows(r.row(i), r.row(j))) << i << " vs " << j;
    }
  }
}

// Strings appended after the codes were read get codes of a new dictionary: the order
// must follow the strings, not the codes a column had before.
TEST(HostRelationOrder, StringsAppendedAfterARead) {
  HostRelation r(Schema{{{"s", Type::String}}, 0});
  for (const char* s : {"m", "c", "x"}) r.append_row({Value::string(s)});
  EXPECT_EQ(r.sorted_row_ids(), (std::vector<size_t>{1, 0, 2}));
  for (const char* s : {"a", "n"}) r.append_row({Value::string(s)});
  EXPECT_EQ(r.sorted_row_ids(), (std::vector<size_t>{3, 1, 0, 4, 2}));
  EXPECT_TRUE(r.compare_row_ids(3, 1) == std::strong_ordering::less);
  EXPECT_TRUE(r.compare_row_ids(2, 4) == std::strong_ordering::greater);
}

}  // namespace
}  // namespace ranc
