// Sorting on the GPU (packed order words, ranc/codegen/sort_layout.h; the executor's
// differing-bits narrowing) against the CPU reference: every attribute type as the first
// key, ascending and descending, with the values that break naive encodings (signed
// extremes, -0.0 and +0.0, NaNs of both signs, infinities), at awkward sizes; every sort
// shape (a single native column, keys only in one word, a 4-byte payload riding in the
// sort, several words through row ids); keys that are all equal (no radix pass at all)
// and keys that differ only in high bits (a radix pass range that does not start at 0);
// and the internal sorts of joins, grouping and distinct. Then top-k sorts (GpuTopK).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gpu_test_util.h"
#include "ranc/dsl.h"
#include "test_programs.h"

namespace ranc::gputest {
namespace {

// A column of type t with n values from a small domain (ties) mixed with its hard values.
Column hard_column(Type t, int64_t n, std::mt19937_64& rng, bool constant) {
  if (constant) {
    std::vector<int64_t> keys(static_cast<size_t>(n), 3);
    return column_from_keys(t, keys);
  }
  Column c = random_column(t, n, rng);
  auto every = [&](auto& data, const auto& specials) {
    for (size_t i = 0; i < data.size(); i += 7) data[i] = specials[(i / 7) % specials.size()];
  };
  switch (t) {
    case Type::I32:
    case Type::Date:
      every(c.data<int32_t>(), std::vector<int32_t>{std::numeric_limits<int32_t>::min(),
                                                    std::numeric_limits<int32_t>::max(), -1, 0});
      break;
    case Type::I64:
      every(c.data<int64_t>(),
            std::vector<int64_t>{std::numeric_limits<int64_t>::min(),
                                 std::numeric_limits<int64_t>::max(), -1, 0, int64_t{1} << 40});
      break;
    case Type::F32: {
      const float nan = std::numeric_limits<float>::quiet_NaN();
      every(c.data<float>(), std::vector<float>{-0.0f, 0.0f, nan, -nan,
                                                std::numeric_limits<float>::infinity(),
                                                -std::numeric_limits<float>::infinity(),
                                                std::numeric_limits<float>::denorm_min()});
      break;
    }
    case Type::F64: {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      every(c.data<double>(), std::vector<double>{-0.0, 0.0, nan, -nan,
                                                  std::numeric_limits<double>::infinity(),
                                                  -std::numeric_limits<double>::lowest(),
                                                  std::numeric_limits<double>::denorm_min()});
      break;
    }
    default:
      break;  // bools and strings: the random column's small domains
  }
  return c;
}

// i64 values that differ only in bits 40 and up (the low 40 bits equal).
Column high_bits_column(int64_t n, std::mt19937_64& rng) {
  Column c(Type::I64);
  for (int64_t i = 0; i < n; ++i)
    c.data<int64_t>().push_back(static_cast<int64_t>((rng() % 64) << 40) + 12345);
  return c;
}

// r(a t, v i32, w f32, l i64) of n rows: hard values of t and f32 (or all equal: `constant`),
// random v, l differing only in high bits (or all equal).
HostRelation sort_input(Type t, int64_t n, std::mt19937_64& rng, bool constant) {
  Schema rs{{{"a", t}, {"v", Type::I32}, {"w", Type::F32}, {"l", Type::I64}}, 0};
  Column v = random_column(Type::I32, n, rng);
  Column l = constant ? hard_column(Type::I64, n, rng, true) : high_bits_column(n, rng);
  return make_relation(rs, {hard_column(t, n, rng, constant), std::move(v),
                            hard_column(Type::F32, n, rng, constant), std::move(l)});
}

Program sort_program(Type t) {
  ProgramBuilder b;
  auto r = b.input("r", {{"a", t}, {"v", Type::I32}, {"w", Type::F32}, {"l", Type::I64}});
  auto q = b.input("q", {{"k", Type::I32}, {"y", Type::I32}});
  // the whole row: a then the others as tie-breaks (several words through row ids)
  b.output(r.sort({"a"}), "all_asc");
  b.output(r.sort({desc("a"), desc("w")}), "all_desc");
  // a single attribute (native for integer types, one packed word otherwise)
  b.output(r.project({"a"}).sort({"a"}), "one_asc");
  b.output(r.project({"a"}).sort({desc("a")}), "one_desc");
  // two attributes in one word, keys only
  b.output(r.project({"a", "v"}).sort({desc("v"), "a"}), "two");
  // a join's right input (v, a) sorted by v: a rides in the sort as its payload when 4 bytes
  b.output(q.join(r.project({"v", "a"}), {"k"}, {"v"}), "join");
  // grouping and distinct over a
  b.output(r.reduce({"a"}, {ranc::count("n"), ranc::sum(col("l"), "s")}), "grouped");
  b.output(r.project({"a", "v"}).distinct(), "distinct");
  // the high-bits i64 column as a key
  b.output(r.project({"l", "a"}).sort({"l", desc("a")}), "by_l");
  return b.check();
}

class GpuSort : public ::testing::TestWithParam<Type> {};

// One test per type of the first key (the reference sorts Value rows, so sizes stop at
// 2^17 + 3 rows: CUB's onesweep passes, and the differing-bits narrowing, which starts at
// 2^17 keys; 20011 rows sort keys-only words with CUB's merge sort, builtins.cu).
TEST_P(GpuSort, EveryShapeAndSize) {
  RANC_REQUIRE_GPU();
  const codegen::CodegenOptions sorting{.join = codegen::JoinAlgorithm::SortMerge,
                                        .group_by = codegen::GroupBy::Sort};
  const Type t = GetParam();
  {
    const Program p = sort_program(t);
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{33}, int64_t{4097},
                      int64_t{20011}, int64_t{100003}, (int64_t{1} << 17) + 3}) {
      for (bool constant : {false, true}) {
        if (constant && n > 4097) continue;
        std::mt19937_64 rng(static_cast<uint64_t>(n) * 31 + static_cast<uint64_t>(t));
        HostRelation r = sort_input(t, n, rng, constant);
        const int64_t m = std::max<int64_t>(1, n / 3);
        std::vector<int64_t> qk(static_cast<size_t>(m));
        for (auto& k : qk) k = static_cast<int64_t>(rng() % 2001) - 1000;
        HostRelation q = make_relation(Schema{{{"k", Type::I32}, {"y", Type::I32}}, 0},
                                       {column_from_keys(Type::I32, qk),
                                        random_column(Type::I32, m, rng)});
        Inputs in;
        in.emplace_back("r", std::move(r));
        in.emplace_back("q", std::move(q));
        SCOPED_TRACE(fmt::format("{} n={}{}", type_name(t), n, constant ? " constant" : ""));
        EXPECT_EQ(run_and_compare(p, in, sorting), "");
        if (n == 4097) EXPECT_EQ(run_and_compare(p, in), "");  // hash joins and grouping
      }
    }
  }
}

// Keys-only sorts of packed 64-bit words go to a merge sort above CUB's radix single tile
// (4864 keys) up to 2^18 keys (builtins.cu): sizes on both sides of both bounds, with many
// duplicates, through sort, distinct and a descending key.
TEST(GpuSortWords, MergeSortBounds) {
  RANC_REQUIRE_GPU();
  ProgramBuilder b;
  Rel t = b.input("t", {{"a", Type::I32}, {"b", Type::I32}});
  b.output(t.sort({"a", "b"}), "s");
  b.output(t.distinct(), "d");
  b.output(t.sort({desc("a"), "b"}), "s2");
  const Program p = b.check();
  for (int64_t n : {int64_t{4864}, int64_t{4865}, int64_t{9000}, int64_t{65537}, int64_t{262144},
                    int64_t{262145}}) {
    std::mt19937_64 rng(static_cast<uint64_t>(n));
    std::vector<int64_t> a(static_cast<size_t>(n)), c(static_cast<size_t>(n));
    for (auto& x : a) x = static_cast<int64_t>(rng() % 301) - 150;
    for (auto& x : c) x = static_cast<int64_t>(rng() % 50);
    Inputs in;
    in.emplace_back("t", make_relation(Schema{{{"a", Type::I32}, {"b", Type::I32}}, 0},
                                       {column_from_keys(Type::I32, a), column_from_keys(Type::I32, c)}));
    EXPECT_EQ(run_and_compare(p, in), "") << "n " << n;
  }
}

// Sorts of whole tuples packed into one word take their input chain into the kernel that
// writes the words (fuse_pipelines): a sort-merge or a hash join's write stage, with or
// without a residual select, a select's compaction, a map; distincts and set operations read
// the sorted words still packed (64-, 32- and 1-bit words); fused and unfused, against the reference, with
// duplicates, -0.0/NaN floats and sizes around the merge sort's and radix sort's ranges.
TEST(GpuSortWords, WholeTuplesFromFusedChains) {
  RANC_REQUIRE_GPU();
  ProgramBuilder b;
  Rel e = b.input("e", {{"s", Type::I32}, {"d", Type::I32}, {"w", Type::F32}, {"f", Type::Bool}});
  Rel g = b.input("g", {{"m", Type::I32}, {"t", Type::I32}});
  b.output(e.join(g, {"d"}, {"m"}).project({"s", "t"}).distinct(), "paths");
  b.output(e.join(g, {"d"}, {"m"}).select(col("s") < col("t")).project({"t", "f"}).distinct(),
           "filtered");
  b.output(e.select(col("s") > 0).project({"w"}).distinct(), "floats");
  b.output(e.project({"f"}).distinct(), "bools");
  b.output(e.select(col("s") != col("d")).project({"d", "s"}).sort({desc("d"), "s"}), "sorted");
  b.output(e.project({"w", "s"}).distinct(), "float_int");
  // Set operations over sorted words (their inputs' sorts keep them packed).
  b.output(e.project({"s", "d"}).select(col("s") > -20).union_with(g), "union");
  b.output(e.project({"d", "s"}).intersect(g.project({"t", "m"})), "intersect");
  b.output(g.difference(e.project({"s", "d"})), "difference");
  const Program p = b.check();
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{33}, int64_t{4097}, int64_t{70001}}) {
    std::mt19937_64 rng(static_cast<uint64_t>(n) + 5);
    std::vector<int64_t> s(static_cast<size_t>(n)), d(static_cast<size_t>(n));
    for (auto& x : s) x = static_cast<int64_t>(rng() % 101) - 50;
    for (auto& x : d) x = static_cast<int64_t>(rng() % 101) - 50;
    const int64_t m = std::max<int64_t>(1, n / 20);
    std::vector<int64_t> gm(static_cast<size_t>(m)), gt(static_cast<size_t>(m));
    for (auto& x : gm) x = static_cast<int64_t>(rng() % 101) - 50;
    for (auto& x : gt) x = static_cast<int64_t>(rng() % 2001) - 1000;
    Inputs in;
    in.emplace_back("e", make_relation(Schema{{{"s", Type::I32}, {"d", Type::I32}, {"w", Type::F32},
                                               {"f", Type::Bool}}, 0},
                                       {column_from_keys(Type::I32, s), column_from_keys(Type::I32, d),
                                        hard_column(Type::F32, n, rng, false),
                                        random_column(Type::Bool, n, rng)}));
    in.emplace_back("g", make_relation(Schema{{{"m", Type::I32}, {"t", Type::I32}}, 0},
                                       {column_from_keys(Type::I32, gm), column_from_keys(Type::I32, gt)}));
    const Reference ref = reference(p, in);
    for (const codegen::CodegenOptions& o :
         {codegen::CodegenOptions{.join = codegen::JoinAlgorithm::SortMerge},
          codegen::CodegenOptions{.join = codegen::JoinAlgorithm::Hash},
          codegen::CodegenOptions{.fusion = false}})
      EXPECT_EQ(compare_with_reference(p, in, ref, o), "")
          << "n " << n << (o.fusion ? "" : " unfused") << " join " << static_cast<int>(o.join);
  }
}

INSTANTIATE_TEST_SUITE_P(Types, GpuSort, ::testing::ValuesIn(kAllTypes),
                         [](const auto& info) { return std::string(type_name(info.param)); });

// The executor's narrowing past 2^17 keys looks at a sample of 2^14 evenly spaced keys first
// and skips the pass over all keys when the sample already differs in more bits than the last
// radix pass covers: keys of full entropy (i32 and i64), keys whose only differences sit between
// the sample points (all equal but a few rows with high bits set: the sample sees no difference,
// the full pass must find them), and keys of small range with one outlier between the samples.
TEST(GpuSortNarrowing, SampledBitsAndKeysBetweenTheSamples) {
  RANC_REQUIRE_GPU();
  const int64_t n = (int64_t{1} << 18) + 5;
  std::mt19937_64 rng(77);
  Schema s{{{"a", Type::I32}, {"l", Type::I64}, {"v", Type::I32}}, 0};
  for (int shape = 0; shape < 3; ++shape) {
    Column a(Type::I32), l(Type::I64);
    for (int64_t i = 0; i < n; ++i) {
      const bool between = i % 16 == 7 && i % 1000 == 7;  // never a sample point (stride 16)
      switch (shape) {
        case 0:  // full entropy
          a.data<int32_t>().push_back(static_cast<int32_t>(rng()));
          l.data<int64_t>().push_back(static_cast<int64_t>(rng()));
          break;
        case 1:  // equal but for rows between the sample points
          a.data<int32_t>().push_back(between ? (1 << 30) + 5 : 5);
          l.data<int64_t>().push_back(between ? (int64_t{1} << 62) - 9 : -9);
          break;
        default:  // a small range, an outlier between the sample points
          a.data<int32_t>().push_back(between ? -(1 << 29) : static_cast<int32_t>(rng() % 200));
          l.data<int64_t>().push_back(between ? int64_t{1} << 50 : static_cast<int64_t>(rng() % 300));
          break;
      }
    }
    Inputs in;
    in.emplace_back("r", make_relation(s, {std::move(a), std::move(l), random_column(Type::I32, n, rng)}));
    ProgramBuilder b;
    auto r = b.input("r", s.attributes);
    b.output(r.project({"a"}).sort({"a"}), "a");
    b.output(r.project({"l", "v"}).sort({desc("l"), "v"}), "l");
    b.output(r.project({"a", "v"}).sort({"a", "v"}), "av");
    EXPECT_EQ(run_and_compare(b.check(), in), "") << "shape " << shape;
  }
}

// Keys that arrive in the order a sort asks for (data sorted by its key) are copied, not
// sorted: the executor's sample of 2^14 keys is in order, the pass over all keys confirms it
// (RunStats::sorts_skipped). Shape 0: a user sort of an i32 ascending over negative and
// positive keys with ties (a signed order: as unsigned words the negatives would come last),
// of an i64 descending through zero, and a group-by's inserted sort: all three skip. Shape 1:
// the same keys but one adjacent pair swapped between the sample points (the sample is in
// order, the keys are not), and the i64 ascending, against the descending sort asked: none
// skips, and every output still equals the reference.
TEST(GpuSortPresorted, KeysInOrderAreCopiedAndOneSwapIsSorted) {
  RANC_REQUIRE_GPU();
  const int64_t n = (int64_t{1} << 18) + 5;
  std::mt19937_64 rng(35);
  Schema s{{{"a", Type::I32}, {"l", Type::I64}, {"v", Type::I32}}, 0};
  ProgramBuilder b;
  auto r = b.input("r", s.attributes);
  b.output(r.project({"a"}).sort({"a"}), "a");
  b.output(r.project({"l"}).sort({desc("l")}), "l");
  b.output(r.project({"a", "v"}).reduce({"a"}, {ranc::sum(col("v"), "sv"), ranc::count("n")}), "g");
  const Program p = b.check();
  for (int shape = 0; shape < 2; ++shape) {
    Column a(Type::I32), l(Type::I64);
    for (int64_t i = 0; i < n; ++i) {
      a.data<int32_t>().push_back(static_cast<int32_t>(i / 3 - n / 6));
      const int64_t down = (n / 4 - i / 2) * 1000000007;
      l.data<int64_t>().push_back(shape == 0 ? down : -down);
    }
    if (shape == 1) {  // rows 16 * 1000 + 7 and + 8: never sample points (stride 16)
      auto& av = a.data<int32_t>();
      av[16007] = av[16008] + 1;
    }
    Inputs in;
    in.emplace_back("r", make_relation(s, {std::move(a), std::move(l), random_column(Type::I32, n, rng)}));
    rt::RunStats stats;
    EXPECT_EQ(run_and_compare(p, in, {.group_by = codegen::GroupBy::Sort}, &stats), "")
        << "shape " << shape;
    if (shape == 0)
      EXPECT_GE(stats.sorts_skipped, 3);
    else
      EXPECT_EQ(stats.sorts_skipped, 0);
  }
}

// An 8-byte attribute as the sort's own values (CodegenOptions::sort_wide_payload: SortPairs
// with value_bytes 8, no row ids and no gather) in the sorts of group-bys (user sorts break
// ties on every attribute, so their keys are whole tuples): an f64 behind an i64 key (an
// inserted sort), an i64 behind a date and an i32 packed into one word, an f64 behind an i32
// key (the hash group-by's sorting way, or an inserted sort with --group-by=sort); keys of full
// entropy, of a small range, and all equal (the executor's copy instead of a sort), sizes below
// and above the executor's narrowing (2^17 keys); on and off, against the reference.
TEST(GpuSortWords, EightBytePayloadsMoveWithTheKeys) {
  RANC_REQUIRE_GPU();
  std::mt19937_64 rng(171);
  Schema s{{{"k", Type::I32}, {"l", Type::I64}, {"d", Type::Date}, {"x", Type::F64}, {"y", Type::I64}},
           0};
  for (int64_t n : {int64_t{1}, int64_t{1000}, (int64_t{1} << 17) + 9}) {
    for (int shape = 0; shape < 3; ++shape) {
      std::vector<Column> cols;
      for (const auto& a : s.attributes) cols.emplace_back(a.type);
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t x = rng();
        const int64_t k = shape == 0 ? static_cast<int64_t>(x) : shape == 1 ? static_cast<int64_t>(x % 300) : 4;
        cols[0].append(Value::i32(static_cast<int32_t>(k)));
        cols[1].append(Value::i64(shape == 0 ? static_cast<int64_t>(rng()) : k - 100));
        cols[2].append(Value::date(static_cast<int32_t>(9000 + k % 50)));
        cols[3].append(Value::f64(static_cast<double>(rng() % 100000) / 16.0 - 1000.0));
        cols[4].append(Value::i64(static_cast<int64_t>(rng() % (uint64_t{1} << 40))));
      }
      Inputs in;
      in.emplace_back("r", make_relation(s, std::move(cols)));
      ProgramBuilder b;
      auto r = b.input("r", s.attributes);
      b.output(r.reduce({"l"}, {ranc::sum(col("x"), "sx")}), "by_i64");
      b.output(r.reduce({"d", "k"}, {ranc::sum(col("y"), "sy"), ranc::min(col("y"), "my")}),
               "by_packed");
      b.output(r.reduce({"k"}, {ranc::avg(col("x"), "ax")}), "by_i32");
      const Program p = b.check();
      for (auto g : {codegen::GroupBy::Auto, codegen::GroupBy::Sort})
        for (bool wide : {true, false})
          EXPECT_EQ(run_and_compare(p, in, {.group_by = g, .hash_records = 1, .sort_wide_payload = wide}),
                    "")
              << "n " << n << ", shape " << shape << ", sort group-by "
              << (g == codegen::GroupBy::Sort) << ", wide " << wide;
    }
  }
}

// Top-k sorts (passes/plan_top_k.h, templates/topk.cuh): sorts that only limits read,
// against the reference's full sort and window. Every type as the first key, both directions,
// windows with offsets, a window past the input, two limits of one sort, a select in front,
// keys that are all equal or differ only in high bits, sizes 0 to 2^17 + 3; with the default
// bin size (one level at these sizes) and with bins of 1 and 64 rows (every level runs, down
// to single values, and ties at the threshold are split across levels).
Program top_k_program(Type t) {
  ProgramBuilder b;
  auto r = b.input("r", {{"a", t}, {"v", Type::I32}, {"w", Type::F32}, {"l", Type::I64}});
  b.output(r.sort({"a"}).limit(10), "a10");
  b.output(r.sort({desc("a"), desc("w")}).limit(5, 3), "a_desc");
  b.output(r.project({"a"}).sort({desc("a")}).limit(1), "one");
  b.output(r.project({"a", "v"}).sort({"v", desc("a")}).limit(1000), "two");
  auto by_l = r.sort({"l", desc("a")});
  b.output(by_l.limit(7), "l7");
  b.output(by_l.limit(20, 40), "l_window");
  b.output(r.select(col("v") > 0).sort({"w", "a"}).limit(33), "selected");
  b.output(r.sort({desc("v")}).limit(4097, 100000), "far");
  return b.check();
}

class GpuTopK : public ::testing::TestWithParam<Type> {};

TEST_P(GpuTopK, EveryTypeWindowAndSize) {
  RANC_REQUIRE_GPU();
  const Type t = GetParam();
  const Program p = top_k_program(t);
  {
    rt::Plan plan = codegen::generate_plan(p);
    // Launches: sorts of the same types share the kernel.
    const int range = testing::launches_named(plan, "_topk_first");
    ASSERT_EQ(range, 7);  // every sort is a top-k
  }
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{33}, int64_t{4097},
                    int64_t{100003}, (int64_t{1} << 17) + 3}) {
    for (bool constant : {false, true}) {
      if (constant && n > 4097) continue;
      std::mt19937_64 rng(static_cast<uint64_t>(n) * 17 + static_cast<uint64_t>(t));
      Inputs in;
      in.emplace_back("r", sort_input(t, n, rng, constant));
      for (int64_t bin_rows : {int64_t{1} << 20, int64_t{64}, int64_t{1}}) {
        SCOPED_TRACE(fmt::format("{} n={}{} bin rows {}", type_name(t), n,
                                 constant ? " constant" : "", bin_rows));
        EXPECT_EQ(run_and_compare(p, in, {.top_k_bin_rows = bin_rows}), "");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, GpuTopK, ::testing::ValuesIn(kAllTypes),
                         [](const auto& info) { return std::string(type_name(info.param)); });

}  // namespace
}  // namespace ranc::gputest
