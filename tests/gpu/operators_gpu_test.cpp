// Every operator on the GPU against the CPU reference, at awkward sizes (0, 1, 31, 32,
// 33, one select tile, one tile + 1, many tiles, 2^24) and key distributions (unique,
// duplicates, Zipf skew, no matches, all match), with i32, i64 and multi-attribute keys;
// inner joins also with string keys and with each join algorithm forced.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "gpu_test_util.h"
#include "ranc/dsl.h"
#include "ranc/passes/pass_runner.h"
#include "ranc/passes/plan_sort_orders.h"
#include "test_programs.h"

namespace ranc::gputest {
namespace {

constexpr int64_t kTile = 4096;  // TuningTable<900>::Select tile
const int64_t kSizes[] = {0, 1, 31, 32, 33, kTile, kTile + 1, 100003};
const Dist kDists[] = {Dist::Unique, Dist::Duplicates, Dist::Zipf, Dist::NoMatch, Dist::AllMatch};
// f32 group keys the hash group-by must keep apart: -0.0 and +0.0, NaN, the infinities.
const float kF32Keys[] = {-0.0f, 0.0f, std::numeric_limits<float>::quiet_NaN(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::infinity(), 1.5f, -2.25f};

// Multi: (i64, i32) keys; Multi32: (i32, i32), which a hash join packs into one word.
enum class KeyKind { I32, I64, Multi, Multi32, String };
const char* key_name(KeyKind k) {
  switch (k) {
    case KeyKind::I32:
      return "i32";
    case KeyKind::I64:
      return "i64";
    case KeyKind::Multi:
      return "multi";
    case KeyKind::Multi32:
      return "multi32";
    case KeyKind::String:
      return "string";
  }
  return "?";
}
Type key_type(KeyKind k) {
  return k == KeyKind::I32 || k == KeyKind::Multi32 ? Type::I32
         : k == KeyKind::String                     ? Type::String
                                                    : Type::I64;
}

struct Case {
  int64_t n;
  Dist dist;
  KeyKind key;
};
std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return fmt::format("n{}_{}_{}", info.param.n, dist_name(info.param.dist),
                     key_name(info.param.key));
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (int64_t n : kSizes)
    for (Dist d : kDists) out.push_back({n, d, KeyKind::I32});
  for (int64_t n : {int64_t{33}, kTile + 1, int64_t{100003}})
    for (Dist d : kDists) {
      out.push_back({n, d, KeyKind::I64});
      out.push_back({n, d, KeyKind::Multi});
    }
  return out;
}

// r(k [, k2], v i64, w f64, s string, x i32) and q(qk [, qk2], qv i32, qs string).
struct Data {
  Schema r, q;
  Inputs inputs;
  std::vector<std::string> rkeys, qkeys;
};

Data make_data(const Case& c, uint64_t seed, int64_t nq = -1) {
  std::mt19937_64 rng(seed);
  if (nq < 0) nq = c.dist == Dist::AllMatch ? std::max<int64_t>(1, c.n / 4) : c.n;
  Data d;
  Type kt = key_type(c.key);
  d.r.attributes = {{"k", kt}};
  d.q.attributes = {{"qk", kt}};
  d.rkeys = {"k"};
  d.qkeys = {"qk"};
  auto rk = make_keys(c.dist, c.n, rng, false, nq);
  auto qk = make_keys(c.dist, nq, rng, true, nq);
  std::vector<Column> rc{column_from_keys(kt, rk)}, qc{column_from_keys(kt, qk)};
  if (c.key == KeyKind::Multi || c.key == KeyKind::Multi32) {
    // Second key: a function of the first, so matches stay matches, plus noise in r.
    auto second = [](const std::vector<int64_t>& k) {
      std::vector<int64_t> s;
      for (auto x : k) s.push_back(x % 3);
      return s;
    };
    d.r.attributes.push_back({"k2", Type::I32});
    d.q.attributes.push_back({"qk2", Type::I32});
    d.rkeys.push_back("k2");
    d.qkeys.push_back("qk2");
    rc.push_back(column_from_keys(Type::I32, second(rk)));
    qc.push_back(column_from_keys(Type::I32, second(qk)));
  }
  d.r.attributes.insert(
      d.r.attributes.end(),
      {{"v", Type::I64}, {"w", Type::F64}, {"s", Type::String}, {"x", Type::I32}});
  rc.push_back(random_column(Type::I64, c.n, rng));
  rc.push_back(random_column(Type::F64, c.n, rng));
  rc.push_back(random_column(Type::String, c.n, rng));
  rc.push_back(random_column(Type::I32, c.n, rng));
  d.q.attributes.insert(d.q.attributes.end(), {{"qv", Type::I32}, {"qs", Type::String}});
  qc.push_back(random_column(Type::I32, nq, rng));
  qc.push_back(random_column(Type::String, nq, rng));
  d.inputs.emplace_back("r", make_relation(d.r, std::move(rc)));
  d.inputs.emplace_back("q", make_relation(d.q, std::move(qc)));
  return d;
}

class GpuOperators : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { RANC_REQUIRE_GPU(); }
  void check(const Data& d, const std::function<void(ProgramBuilder&, Rel, Rel)>& build) {
    ProgramBuilder b;
    Rel r = b.input("r", d.r.attributes);
    Rel q = b.input("q", d.q.attributes);
    build(b, r, q);
    Program p = b.check();
    std::string diff = run_and_compare(p, d.inputs);
    EXPECT_EQ(diff, "") << print_program(p);
  }
};

TEST_P(GpuOperators, Select) {
  auto d = make_data(GetParam(), 1);
  check(d, [](ProgramBuilder& b, Rel r, Rel) {
    b.output(r.select(col("x") > 0 && col("s") != "fig"), "sel");
    b.output(r.select(col("x") > 100000), "none");
    b.output(r.select(col("w") == col("w") || col("w") != col("w")), "all");
    b.output(r.select(like(col("s"), "%an%") || starts_with(col("s"), "ch")), "strings");
  });
}

// Input sharing (fuse_pipelines): chains over one relation written by one kernel
// (SharedSelectAgent): four filtering chains (one keeping nothing, one everything), a
// chain keeping every row, a renaming chain (no kernel), a materialised select whose join
// is lowered after the group, and two chains over a hash join's (paged) output.
TEST_P(GpuOperators, InputSharing) {
  auto d = make_data(GetParam(), 12);
  for (auto a : {codegen::JoinAlgorithm::SortMerge, codegen::JoinAlgorithm::Hash}) {
    ProgramBuilder b;
    Rel r = b.input("r", d.r.attributes);
    Rel q = b.input("q", d.q.attributes);
    b.output(r.select(col("x") < 0).join(q, d.rkeys, d.qkeys), "joined");
    b.output(r.select(col("x") >= 0).project({"s", as(col("v") * 3, "v3")}), "high");
    b.output(r.select(col("x") > 100000), "none");
    b.output(r.select(col("w") == col("w") || col("w") != col("w")).project({"x"}), "all");
    b.output(r.project({as(col("w") * 2.0, "w2"), "s"}), "map");
    b.output(r.project({"x", "v"}), "renamed");
    auto j = r.join(q, d.rkeys, d.qkeys);
    b.output(j.select(col("x") > 0), "j_pos");
    b.output(j.select(col("qv") % 2 == 0).project({"qs", "v"}), "j_even");
    Program p = b.check();
    std::string diff = run_and_compare(p, d.inputs, {.join = a});
    EXPECT_EQ(diff, "") << (a == codegen::JoinAlgorithm::Hash ? "hash" : "sort-merge") << "\n"
                        << print_program(p);
  }
}

TEST_P(GpuOperators, Project) {
  auto d = make_data(GetParam(), 2);
  check(d, [](ProgramBuilder& b, Rel r, Rel) {
    b.output(r.project({"s", as(col("v") * 3 + 1, "v3"), as(col("w") / 2.0, "w2"),
                        as(cast(col("x"), Type::F32), "xf"),
                        as(case_when({{col("x") > 0, col("x")}}, -col("x")), "absx"),
                        as(col("x") % 7, "m7")}),
             "proj");
  });
}

TEST_P(GpuOperators, Product) {
  if (GetParam().n > kTile + 1) GTEST_SKIP() << "product of large inputs";
  auto d = make_data(GetParam(), 3, std::min<int64_t>(GetParam().n, 33));
  check(d, [](ProgramBuilder& b, Rel r, Rel q) {
    b.output(r.project({"v", "x"}).product(q.project({"qv"})), "prod");
  });
}

TEST_P(GpuOperators, Joins) {
  auto d = make_data(GetParam(), 4);
  check(d, [&](ProgramBuilder& b, Rel r, Rel q) {
    b.output(r.join(q, d.rkeys, d.qkeys), "inner");
    b.output(r.join(q, d.rkeys, d.qkeys, JoinKind::Inner, col("x") < col("qv")), "inner_residual");
    b.output(r.semi_join(q, d.rkeys, d.qkeys), "semi");
    b.output(r.anti_join(q, d.rkeys, d.qkeys), "anti");
    b.output(r.semi_join(q, d.rkeys, d.qkeys, col("s") < col("qs")), "semi_residual");
    b.output(r.anti_join(q, d.rkeys, d.qkeys, col("x") > col("qv")), "anti_residual");
  });
}

TEST_P(GpuOperators, StringKeyJoin) {
  auto c = GetParam();
  if (c.key != KeyKind::I32) GTEST_SKIP();
  std::mt19937_64 rng(5);
  auto rk = make_keys(c.dist, c.n, rng, false, std::max<int64_t>(1, c.n / 4));
  auto qk =
      make_keys(c.dist, c.dist == Dist::AllMatch ? std::max<int64_t>(1, c.n / 4) : c.n, rng, true);
  Schema rs{{{"ks", Type::String}, {"v", Type::I64}}, 0},
      qs{{{"qks", Type::String}, {"qf", Type::F64}}, 0};
  Inputs in;
  in.emplace_back("r", make_relation(rs, {column_from_keys(Type::String, rk),
                                          random_column(Type::I64, c.n, rng)}));
  in.emplace_back("q", make_relation(qs, {column_from_keys(Type::String, qk),
                                          column_from_keys(Type::F64, qk)}));
  ProgramBuilder b2;
  auto r2 = b2.input("r", rs.attributes);
  auto q2 = b2.input("q", qs.attributes);
  b2.output(r2.join(q2, {"ks"}, {"qks"}), "inner");
  b2.output(r2.semi_join(q2, {"ks"}, {"qks"}), "semi");
  b2.output(r2.project({"ks", as(cast(col("v"), Type::F64), "kf")}).join(q2, {"kf"}, {"qf"}),
            "f64_key");
  EXPECT_EQ(run_and_compare(b2.check(), in), "");
}

TEST_P(GpuOperators, Reduce) {
  auto d = make_data(GetParam(), 6);
  check(d, [&](ProgramBuilder& b, Rel r, Rel) {
    b.output(
        r.reduce(d.rkeys, {ranc::sum(col("v"), "sv"), ranc::sum(col("w"), "sw"), ranc::count("n"),
                           ranc::min(col("s"), "mn"), ranc::max(col("x"), "mx"),
                           ranc::avg(col("x"), "ax"), ranc::min(col("w"), "mnw")}),
        "by_key");
    b.output(r.reduce({}, {ranc::count("n"), ranc::sum(col("x"), "sx"), ranc::max(col("v"), "mv")}),
             "all");
    b.output(r.reduce({"s"}, {ranc::count("n"), ranc::sum(col("v"), "sv")}), "by_string");
  });
}

TEST_P(GpuOperators, SortLimit) {
  auto d = make_data(GetParam(), 7);
  check(d, [&](ProgramBuilder& b, Rel r, Rel) {
    b.output(r.sort({desc(d.rkeys[0]), "w"}), "sort_desc");
    b.output(r.sort({"s", desc("x")}), "sort_string");
    b.output(r.sort({"w"}).limit(10), "top10");
    b.output(r.sort({d.rkeys[0]}).limit(GetParam().n / 2 + 1, 3), "page");
  });
}

TEST_P(GpuOperators, DistinctAndSetOps) {
  auto d = make_data(GetParam(), 8);
  check(d, [&](ProgramBuilder& b, Rel r, Rel q) {
    b.output(r.project({d.rkeys[0]}).distinct(), "distinct_keys");
    b.output(r.distinct(), "distinct_rows");
    std::vector<Projection> rp, qp;
    for (size_t i = 0; i < d.rkeys.size(); ++i) {
      rp.push_back(Projection(d.rkeys[i]));
      qp.push_back(as(col(d.qkeys[i]), d.rkeys[i]));
    }
    auto a = r.project(rp), c = q.project(qp);
    b.output(a.union_with(c), "union");
    b.output(a.intersect(c), "intersect");
    b.output(a.difference(c), "difference");
  });
}

INSTANTIATE_TEST_SUITE_P(Sizes, GpuOperators, ::testing::ValuesIn(cases()), case_name);

// Joins with the join algorithm forced (auto picks sort-merge for inner joins and hash
// for semi/anti joins of these unsorted inputs): every size and distribution, i32, i64,
// two-attribute and string keys (Multi's i64 + i32 keys do not pack into one word, so Hash
// falls back to sort-merge).
struct JoinCase {
  Case c;
  codegen::JoinAlgorithm join;
};
std::string join_case_name(const ::testing::TestParamInfo<JoinCase>& info) {
  return fmt::format("n{}_{}_{}_{}", info.param.c.n, dist_name(info.param.c.dist),
                     key_name(info.param.c.key),
                     info.param.join == codegen::JoinAlgorithm::Hash ? "hash" : "sortmerge");
}
std::vector<JoinCase> join_cases() {
  std::vector<JoinCase> out;
  for (auto join : {codegen::JoinAlgorithm::Hash, codegen::JoinAlgorithm::SortMerge})
    for (KeyKind k :
         {KeyKind::I32, KeyKind::I64, KeyKind::Multi, KeyKind::Multi32, KeyKind::String})
      for (int64_t n : kSizes)
        for (Dist d : kDists) out.push_back({{n, d, k}, join});
  return out;
}

class GpuInnerJoins : public ::testing::TestWithParam<JoinCase> {
 protected:
  void SetUp() override { RANC_REQUIRE_GPU(); }
};

TEST_P(GpuInnerJoins, MatchTheReference) {
  const JoinCase& jc = GetParam();
  auto d = make_data(jc.c, 12);
  ProgramBuilder b;
  Rel r = b.input("r", d.r.attributes);
  Rel q = b.input("q", d.q.attributes);
  b.output(r.join(q, d.rkeys, d.qkeys), "inner");
  b.output(r.join(q, d.rkeys, d.qkeys, JoinKind::Inner, col("x") < col("qv")), "inner_residual");
  b.output(r.join(q, d.rkeys, d.qkeys, JoinKind::Inner, col("s") < col("qs") || col("w") > 0.5),
           "inner_residual_strings");
  auto attrs = [](const std::vector<std::string>& names) {
    std::vector<Projection> out;
    for (const auto& a : names) out.push_back(Projection(a));
    return out;
  };
  b.output(r.project(attrs(d.rkeys)).join(q.project(attrs(d.qkeys)), d.rkeys, d.qkeys),
           "keys_only");
  // Consumers that stream the join: with hash joins its output is a paged list
  // (plan_paged_edges.h), read by a global reduce, a select and a second join.
  b.output(r.join(q, d.rkeys, d.qkeys).reduce({}, {ranc::count("n"), ranc::sum(col("x"), "sx")}),
           "paged_reduce");
  b.output(r.join(q, d.rkeys, d.qkeys, JoinKind::Inner, col("x") < col("qv"))
               .select(col("v") > 0)
               .reduce({}, {ranc::count("n"), ranc::max(col("qv"), "mq")}),
           "paged_select_reduce");
  std::vector<std::string> rk_x = d.rkeys;
  rk_x.push_back("x");
  b.output(r.join(q, d.rkeys, d.qkeys).project(attrs(rk_x)).join(q, d.rkeys, d.qkeys),
           "paged_join_join");
  // Semi and anti joins, forced the same way (hashed: a probe of a hash set of the right
  // keys, with chains of right rows for a residual), with selects fused into both sides
  // (the right one into the set's build) and a paged hash join as the right input.
  b.output(r.semi_join(q, d.rkeys, d.qkeys), "semi");
  b.output(r.anti_join(q, d.rkeys, d.qkeys), "anti");
  b.output(r.semi_join(q, d.rkeys, d.qkeys, col("s") < col("qs")), "semi_residual");
  b.output(r.anti_join(q, d.rkeys, d.qkeys, col("x") > col("qv")), "anti_residual");
  b.output(r.select(col("x") > 0)
               .semi_join(q.select(col("qv") < 0), d.rkeys, d.qkeys)
               .reduce({}, {ranc::count("n"), ranc::sum(col("x"), "sx")}),
           "semi_fused");
  b.output(r.select(col("w") < 0.7)
               .anti_join(q.select(col("qv") > 0), d.rkeys, d.qkeys, col("x") < col("qv"))
               .project(attrs(rk_x)),
           "anti_fused_residual");
  // A foreign-key join (each q row matches at most one distinct key) as the build input.
  b.output(r.semi_join(q.join(r.project(attrs(d.rkeys)).distinct(), d.qkeys, d.rkeys), d.rkeys,
                       d.qkeys),
           "semi_of_join");
  Program p = b.check();
  EXPECT_EQ(run_and_compare(p, d.inputs, {.join = jc.join}), "") << print_program(p);
  if (jc.join == codegen::JoinAlgorithm::Hash) {
    EXPECT_EQ(run_and_compare(p, d.inputs, {.join = jc.join, .paged = false}), "")
        << "paged lists off\n"
        << print_program(p);
    // Semi and anti joins without a residual build their sets, and inner joins of 2049 to
    // 2^21 build rows their global tables, in windows of 16 slots
    // (CodegenOptions::hash_build_window_bits): every table of more than 16 slots is
    // radix-partitioned by its slot bits above a window first.
    EXPECT_EQ(run_and_compare(p, d.inputs, {.join = jc.join, .hash_build_window_bits = 4, .hash_build_window_min_bits = 0}), "")
        << "hash tables built in windows\n"
        << print_program(p);
    // Build sides past one shared-memory table (2048 rows) join a global table by default;
    // radix-partitioned here.
    if (jc.c.n > 2048) {
      EXPECT_EQ(run_and_compare(p, d.inputs, {.join = jc.join, .hash_join_global_rows = 0}), "")
          << "no global table\n"
          << print_program(p);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, GpuInnerJoins, ::testing::ValuesIn(join_cases()), join_case_name);

// Floats are the same join key only when bit-identical: -0.0 and 0.0 differ, a NaN
// matches the same NaN (IR semantics); every join algorithm agrees with the reference.
TEST(GpuJoinKeys, FloatKeysCompareByBits) {
  RANC_REQUIRE_GPU();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> keys = {0.0, -0.0, nan, -nan, inf, -inf, 1.5, 1.5, -2.25, 3.0};
  Column rf(Type::F64), qf(Type::F64), rf32(Type::F32), qf32(Type::F32), rv(Type::I32),
      qv(Type::I32);
  for (size_t i = 0; i < keys.size(); ++i) {
    rf.data<double>().push_back(keys[i]);
    qf.data<double>().push_back(keys[keys.size() - 1 - i]);
    rf32.data<float>().push_back(static_cast<float>(keys[i]));
    qf32.data<float>().push_back(static_cast<float>(keys[keys.size() - 1 - i]));
    rv.data<int32_t>().push_back(static_cast<int32_t>(i));
    qv.data<int32_t>().push_back(static_cast<int32_t>(100 + i));
  }
  Schema rs{{{"f", Type::F64}, {"f32", Type::F32}, {"v", Type::I32}}, 0},
      qs{{{"qf", Type::F64}, {"qf32", Type::F32}, {"qv", Type::I32}}, 0};
  Inputs in;
  in.emplace_back("r", make_relation(rs, {rf, rf32, rv}));
  in.emplace_back("q", make_relation(qs, {qf, qf32, qv}));
  ProgramBuilder b;
  auto r = b.input("r", rs.attributes);
  auto q = b.input("q", qs.attributes);
  b.output(r.join(q, {"f"}, {"qf"}), "f64");
  b.output(r.join(q, {"f32"}, {"qf32"}), "f32");
  b.output(r.join(q, {"f", "f32"}, {"qf", "qf32"}), "both");
  Program p = b.check();
  for (auto join : {codegen::JoinAlgorithm::Hash, codegen::JoinAlgorithm::SortMerge})
    EXPECT_EQ(run_and_compare(p, in, {.join = join}), "")
        << (join == codegen::JoinAlgorithm::Hash ? "hash" : "sort-merge");
}

// Skew on the build (right) side: one key repeated far more often than a shared-memory
// table holds: in the global table (the default at this size) a chain of 16000 rows; radix
// partitioned, a partition built and probed in chunks.
TEST(GpuJoinKeys, HashJoinBuildSideSkew) {
  RANC_REQUIRE_GPU();
  std::mt19937_64 rng(13);
  const int64_t nr = 4097, nq = 20000;
  std::vector<int64_t> rk, qk;
  std::uniform_int_distribution<int64_t> small(0, 400);
  for (int64_t i = 0; i < nr; ++i) rk.push_back(small(rng));
  for (int64_t i = 0; i < nq; ++i) qk.push_back(i % 5 == 0 ? i : 7);  // key 7: 16000 times
  for (Type kt : {Type::I32, Type::I64}) {
    Schema rs{{{"k", kt}, {"v", Type::I32}}, 0}, qs{{{"qk", kt}, {"qv", Type::I32}}, 0};
    Inputs in;
    in.emplace_back(
        "r", make_relation(rs, {column_from_keys(kt, rk), random_column(Type::I32, nr, rng)}));
    in.emplace_back(
        "q", make_relation(qs, {column_from_keys(kt, qk), random_column(Type::I32, nq, rng)}));
    ProgramBuilder b;
    auto r = b.input("r", rs.attributes);
    auto q = b.input("q", qs.attributes);
    b.output(r.join(q, {"k"}, {"qk"}), "inner");
    b.output(r.join(q, {"k"}, {"qk"}, JoinKind::Inner, col("v") < col("qv")), "residual");
    // Semi/anti joins: key 7's chain of 16000 right rows walked by the residual.
    b.output(r.semi_join(q, {"k"}, {"qk"}, col("v") < col("qv")), "semi_residual");
    b.output(r.anti_join(q, {"k"}, {"qk"}, col("v") > col("qv")), "anti_residual");
    b.output(q.semi_join(r, {"qk"}, {"k"}), "semi_reversed");
    for (int64_t global_rows : {int64_t{1} << 21, int64_t{0}})
      EXPECT_EQ(run_and_compare(b.check(), in,
                                {.join = codegen::JoinAlgorithm::Hash, .hash_join_global_rows = global_rows}),
                "")
          << type_name(kt) << " global rows " << global_rows;
  }
}

// A hash join whose left input has a declared key on the join keys and whose right has none
// builds its table on the left and probes it with the right (PhysicalNode::build_left): at
// build sizes that take one shared-memory table (33), the global table (4097, 100003) and
// radix partitions (the global table off), for a plain join, a residual, a project, a select
// and a global reduce folded into the join. The output keeps its attribute order. A declared
// key is not verified: with duplicate "keys" on the left the output outgrows the probe rows
// and is grown and written again, still exact.
TEST(GpuJoinKeys, HashJoinBuiltOnTheKeyedLeft) {
  RANC_REQUIRE_GPU();
  std::mt19937_64 rng(23);
  for (int64_t nl : {int64_t{33}, int64_t{4097}, int64_t{100003}})
    for (bool lie : {false, true})
      for (Type kt : {Type::I32, Type::I64}) {
        std::vector<int64_t> lk(static_cast<size_t>(nl)), rk;
        for (int64_t i = 0; i < nl; ++i) lk[static_cast<size_t>(i)] = lie ? i % (nl / 3 + 1) : 3 * i;
        std::shuffle(lk.begin(), lk.end(), rng);
        const int64_t nr = 2 * nl + 5;
        std::uniform_int_distribution<int64_t> any(0, 3 * nl + 2);  // about a third match
        for (int64_t i = 0; i < nr; ++i) rk.push_back(any(rng));
        Schema ls{{{"k", kt}, {"v", Type::I32}, {"w", Type::I64}}, 1},
            rs{{{"qk", kt}, {"qv", Type::I32}}, 0};
        Inputs in;
        in.emplace_back("l", make_relation(ls, {column_from_keys(kt, lk), random_column(Type::I32, nl, rng),
                                                 random_column(Type::I64, nl, rng)}));
        in.emplace_back("r", make_relation(rs, {column_from_keys(kt, rk), random_column(Type::I32, nr, rng)}));
        ProgramBuilder b;
        auto l = b.input("l", ls.attributes, 1);
        auto r = b.input("r", rs.attributes);
        b.output(l.join(r, {"k"}, {"qk"}), "inner");
        b.output(l.join(r, {"k"}, {"qk"}, JoinKind::Inner, col("v") < col("qv")), "residual");
        b.output(l.join(r, {"k"}, {"qk"}).project({"qv", "w", as(col("v") - col("qv"), "d")}), "mapped");
        b.output(l.join(r, {"k"}, {"qk"}).select(col("v") > col("qv")), "selected");
        b.output(l.join(r, {"k"}, {"qk"}).reduce({}, {ranc::count("n"), ranc::sum(col("qv"), "sq"),
                                                     ranc::max(col("w"), "mw")}),
                 "folded");
        Program p = b.check();
        EXPECT_NE(passes::print_join_choices(
                      passes::run_pipeline(p, {.join = codegen::JoinAlgorithm::Hash}).physical)
                      .find("built on the left input"),
                  std::string::npos);
        for (int64_t global_rows : {int64_t{1} << 21, int64_t{0}})
          EXPECT_EQ(run_and_compare(p, in, {.join = codegen::JoinAlgorithm::Hash,
                                            .hash_join_global_rows = global_rows}),
                    "")
              << "left rows " << nl << (lie ? " (duplicate keys)" : "") << " " << type_name(kt)
              << " global rows " << global_rows;
      }
}

// Sort-merge inner join of a sorted left input, written in one pass (JoinMergeAgent): tiles
// of heavy keys (more than 16 x 1024 matches) left to JoinHeavyExpandAgent among ordinary
// tiles, an output far larger than the left input (grown and written again), both ways.
TEST(GpuJoinKeys, SortMergeHeavyAndLightTiles) {
  RANC_REQUIRE_GPU();
  std::mt19937_64 rng(17);
  std::vector<int64_t> lk, rk;
  for (int64_t i = 0; i < 100000; ++i) lk.push_back(i);
  for (int i = 0; i < 2000; ++i) {
    lk.push_back(7);       // 2000 x 1001 matches: two tiles of only key 7, both heavy
    lk.push_back(100000);  // 2000 x 20
  }
  for (int64_t i = 0; i < 150000; i += 2) rk.push_back(i);
  for (int i = 0; i < 1000; ++i) rk.push_back(7);
  for (int i = 0; i < 20; ++i) rk.push_back(100000);
  std::shuffle(lk.begin(), lk.end(), rng);
  std::shuffle(rk.begin(), rk.end(), rng);
  const int64_t nl = static_cast<int64_t>(lk.size()), nr = static_cast<int64_t>(rk.size());
  for (Type kt : {Type::I32, Type::I64}) {
    Schema ls{{{"k", kt}, {"v", Type::I32}}, 0}, rs{{{"qk", kt}, {"qv", Type::I32}}, 0};
    Inputs in;
    in.emplace_back(
        "l", make_relation(ls, {column_from_keys(kt, lk), random_column(Type::I32, nl, rng)}));
    in.emplace_back(
        "r", make_relation(rs, {column_from_keys(kt, rk), random_column(Type::I32, nr, rng)}));
    ProgramBuilder b;
    auto l = b.input("l", ls.attributes);
    auto r = b.input("r", rs.attributes);
    b.output(l.join(r, {"k"}, {"qk"}), "inner");
    b.output(l.join(r, {"k"}, {"qk"}).project({"k", as(col("v") + col("qv"), "s")}), "mapped");
    // A global reduce folds the matches in the merge (join_reduce.cuh), heavy tiles too;
    // with a select (across both sides, so it stays after the join) and a project that
    // can fail (never here: the divisor is at least 1) between them.
    b.output(l.join(r, {"k"}, {"qk"}).reduce({}, {ranc::count("n"), ranc::sum(col("qv"), "sq")}),
             "counted");
    b.output(l.join(r, {"k"}, {"qk"})
                 .select(col("v") > col("qv"))
                 .project({as(col("v") / (col("qv") % 5 + 6), "x"), "qv"})
                 .reduce({}, {ranc::count("n"), ranc::sum(col("x"), "sx"), ranc::min(col("qv"), "mn"),
                              ranc::max(col("x"), "mx"), ranc::avg(col("qv"), "aq")}),
             "filtered_fold");
    Program p = b.check();
    // The CPU reference once (about 2 million matches), for every option set below.
    const Reference ref = reference(p, in);
    ASSERT_EQ(ref.error, "") << type_name(kt);
    auto compare = [&](const codegen::CodegenOptions& o) {
      return compare_with_reference(p, in, ref.outputs, ref.error, o);
    };
    for (bool one_pass : {true, false})
      EXPECT_EQ(compare({.join = codegen::JoinAlgorithm::SortMerge, .one_pass_merge_join = one_pass}), "")
          << type_name(kt) << (one_pass ? " one pass" : " count + expand");
    // The one pass without its tiles' right keys staged in shared memory (staged is the
    // default), and without the tile-range kernel.
    EXPECT_EQ(compare({.join = codegen::JoinAlgorithm::SortMerge, .stage_join_keys = false}), "")
        << type_name(kt) << " unstaged keys";
    EXPECT_EQ(compare({.join = codegen::JoinAlgorithm::SortMerge, .join_tile_ranges = false}), "")
        << type_name(kt) << " no range kernel";
    // The partitioned hash join: the global reduces fold in its join kernel (join_reduce.cuh's
    // HashJoinReduceAgent; key 7's 2000 x 1001 matches all in one partition), or stream its
    // pages, fused and not.
    EXPECT_EQ(compare({.join = codegen::JoinAlgorithm::Hash, .fold_hash_joins = true}), "")
        << type_name(kt) << " hash, folded";
    EXPECT_EQ(compare({.join = codegen::JoinAlgorithm::Hash, .fold_hash_joins = false}), "")
        << type_name(kt) << " hash, paged";
    EXPECT_EQ(compare({.join = codegen::JoinAlgorithm::Hash, .fusion = false}), "")
        << type_name(kt) << " hash, unfused";
  }
}

// The hash set of a semi/anti join stores ~hash_key(key) with 0 as the empty slot, so the
// one key whose hash is all ones is recorded apart (hash_join.cuh): semi and anti joins
// with that key on both sides, on the left only, and with a residual, for i32 and i64 keys.
TEST(GpuJoinKeys, HashSetAllOnesKey) {
  RANC_REQUIRE_GPU();
  // hash_key_inverse of all ones, on the host (TemplatesGpu.HashKeyInverse checks the
  // device functions are inverses).
  uint32_t h32 = 0xffffffffu;
  h32 ^= h32 >> 16;
  h32 *= 0x7ed1b41du;
  h32 ^= (h32 >> 13) ^ (h32 >> 26);
  h32 *= 0xa5cb9243u;
  h32 ^= h32 >> 16;
  uint64_t h64 = ~uint64_t{0};
  h64 ^= h64 >> 33;
  h64 *= 0x9cb4b2f8129337dbull;
  h64 ^= h64 >> 33;
  h64 *= 0x4f74430c22a54005ull;
  h64 ^= h64 >> 33;
  for (Type kt : {Type::I32, Type::I64}) {
    const int64_t special = kt == Type::I32 ? static_cast<int64_t>(static_cast<int32_t>(h32))
                                            : static_cast<int64_t>(h64);
    const std::vector<int64_t> rk = {special, 1, 2, special, 5, 9};
    const std::vector<int64_t> with = {3, special, 2, special, 8};
    const std::vector<int64_t> without = {3, 2, 8};
    for (const auto* qk : {&with, &without}) {
      Schema rs{{{"k", kt}, {"v", Type::I32}}, 0}, qs{{{"qk", kt}, {"qv", Type::I32}}, 0};
      Column rv(Type::I32), qv(Type::I32);
      for (size_t i = 0; i < rk.size(); ++i) rv.data<int32_t>().push_back(static_cast<int32_t>(i));
      for (size_t i = 0; i < qk->size(); ++i) qv.data<int32_t>().push_back(static_cast<int32_t>(2 * i));
      Inputs in;
      in.emplace_back("r", make_relation(rs, {column_from_keys(kt, rk), rv}));
      in.emplace_back("q", make_relation(qs, {column_from_keys(kt, *qk), qv}));
      ProgramBuilder b;
      auto r = b.input("r", rs.attributes);
      auto q = b.input("q", qs.attributes);
      b.output(r.semi_join(q, {"k"}, {"qk"}), "semi");
      b.output(r.anti_join(q, {"k"}, {"qk"}), "anti");
      b.output(r.semi_join(q, {"k"}, {"qk"}, col("v") < col("qv")), "semi_residual");
      b.output(r.anti_join(q, {"k"}, {"qk"}, col("v") < col("qv")), "anti_residual");
      Program p = b.check();
      for (auto join : {codegen::JoinAlgorithm::Hash, codegen::JoinAlgorithm::SortMerge})
        EXPECT_EQ(run_and_compare(p, in, {.join = join}), "")
            << type_name(kt) << (qk == &with ? " with" : " without") << " the key, "
            << (join == codegen::JoinAlgorithm::Hash ? "hash" : "sort-merge");
      // The sets built in windows of 1 and 2 slots (sorted by all their slot bits, and
      // by all but one): the all-ones key's word sorts and inserts like any other.
      for (int window : {0, 1})
        EXPECT_EQ(run_and_compare(p, in, {.join = codegen::JoinAlgorithm::Hash,
                                          .hash_build_window_bits = window,
                                          .hash_build_window_min_bits = 0}),
                  "")
            << type_name(kt) << (qk == &with ? " with" : " without") << " the key, window "
            << window;
    }
  }
}

// A semi/anti join's hash set built from a right side clustered by its key (rows that
// arrive sorted by it, as lineitem by l_orderkey): the lanes of a warp race to claim the same
// slot and to push onto the same chain. Runs of 1 to 70 equal keys (within a warp, across
// warps and blocks, whole warps of one key), a select fused into the build that drops rows
// inside runs, one key in every row; residuals that some, all or none of a key's rows
// satisfy; i32 and i64 keys; hash against the reference and sort-merge. (Session 35 tried
// inserting once per warp run of equal keys, __match_any_sync: TPC-H SF 10 Q21 went from 14.4
// to 16.7 ms on the H100, so the build stays one insert a row.)
TEST(GpuJoinKeys, ClusteredRightKeys) {
  RANC_REQUIRE_GPU();
  std::mt19937_64 rng(3535);
  for (Type kt : {Type::I32, Type::I64}) {
    for (int shape = 0; shape < 2; ++shape) {
      const int64_t n = 100003;
      std::vector<int64_t> qk;
      int64_t key = -5000;
      while (static_cast<int64_t>(qk.size()) < n) {
        const int64_t run = shape == 1 ? n : 1 + static_cast<int64_t>(rng() % 70);
        for (int64_t k = 0; k < run && static_cast<int64_t>(qk.size()) < n; ++k) qk.push_back(key);
        key += 1 + static_cast<int64_t>(rng() % 3);
      }
      std::vector<int64_t> rk(static_cast<size_t>(n / 3));
      for (auto& k : rk) k = -5100 + static_cast<int64_t>(rng() % static_cast<uint64_t>(key + 5300));
      Schema rs{{{"k", kt}, {"v", Type::I32}}, 0}, qs{{{"qk", kt}, {"qv", Type::I32}}, 0};
      Inputs in;
      in.emplace_back("r", make_relation(rs, {column_from_keys(kt, rk), random_column(Type::I32, n / 3, rng)}));
      in.emplace_back("q", make_relation(qs, {column_from_keys(kt, qk), random_column(Type::I32, n, rng)}));
      ProgramBuilder b;
      auto r = b.input("r", rs.attributes);
      auto q = b.input("q", qs.attributes);
      b.output(r.semi_join(q, {"k"}, {"qk"}), "semi");
      b.output(r.anti_join(q.select(col("qv") % 3 != 0), {"k"}, {"qk"}), "anti_fused");
      b.output(r.semi_join(q, {"k"}, {"qk"}, col("v") < col("qv")), "semi_residual");
      b.output(r.anti_join(q.select(col("qv") % 5 != 1), {"k"}, {"qk"}, col("v") > col("qv")),
               "anti_fused_residual");
      b.output(r.semi_join(q, {"k"}, {"qk"}, col("qv") != col("qv")), "semi_residual_none");
      Program p = b.check();
      for (auto join : {codegen::JoinAlgorithm::Hash, codegen::JoinAlgorithm::SortMerge})
        EXPECT_EQ(run_and_compare(p, in, {.join = join}), "")
            << type_name(kt) << " shape " << shape << " "
            << (join == codegen::JoinAlgorithm::Hash ? "hash" : "sort-merge");
      // Built in windows (runs of equal keys stay together through the partition: their
      // lanes race for one slot at once), of 2^10 slots and of one.
      for (int window : {10, 0})
        EXPECT_EQ(run_and_compare(p, in, {.join = codegen::JoinAlgorithm::Hash,
                                          .hash_build_window_bits = window,
                                          .hash_build_window_min_bits = 0}),
                  "")
            << type_name(kt) << " shape " << shape << " window " << window;
    }
  }
}

// A paged join output whose capacity estimate (the left rows kept) falls short: a
// many-to-many join grows its pages once and runs again; a foreign-key join fits.
TEST(GpuPaged, EstimateShortGrowsOnceAndMatches) {
  RANC_REQUIRE_GPU();
  std::mt19937_64 rng(21);
  for (int64_t n : {int64_t{1000}, int64_t{300000}}) {
    // v is i32: the sum of ~n^2/7 random i64 values would leave the i64 range (an error).
    Schema rs{{{"k", Type::I32}, {"v", Type::I32}}, 0}, qs{{{"qk", Type::I32}, {"qv", Type::I32}}, 0};
    std::vector<int64_t> many, unique;
    // 7 keys: about n^2 / 7 matches, far beyond the estimate (n rows plus a partial page per
    // warp of each partition).
    for (int64_t i = 0; i < n; ++i) many.push_back(i % 7);
    for (int64_t i = 0; i < n; ++i) unique.push_back(i);
    for (bool fk : {false, true}) {
      Inputs in;
      in.emplace_back("r", make_relation(rs, {column_from_keys(Type::I32, many),
                                              random_column(Type::I32, n, rng)}));
      in.emplace_back("q", make_relation(qs, {column_from_keys(Type::I32, fk ? unique : many),
                                              random_column(Type::I32, n, rng)}));
      ProgramBuilder b;
      auto r = b.input("r", rs.attributes);
      auto q = b.input("q", qs.attributes);
      b.output(r.join(q, {"k"}, {"qk"}).select(col("qv") > -500).reduce(
                   {}, {ranc::count("n"), ranc::sum(col("v"), "sv"), ranc::min(col("qv"), "mq")}),
               "agg");
      if (fk || n <= 1000) {  // the many-to-many case at 300000 rows has ~1.3e10 matches
        // The global reduce streams the join's pages (folded into the join kernel, the
        // default, nothing of the join is written and nothing grows).
        for (bool fold : {false, true}) {
          rt::RunStats stats;
          EXPECT_EQ(run_and_compare(b.check(), in,
                                    {.join = codegen::JoinAlgorithm::Hash, .fold_hash_joins = fold},
                                    &stats),
                    "")
              << "n " << n << (fk ? " foreign key" : " many-to-many") << (fold ? ", folded" : "");
          // Regrows are the default plan's: unfused (RANC_NO_FUSION) no reduce folds into the
          // join, and dense (RANC_NO_PAGED) its matches are written otherwise; either way the
          // output may grow another number of times, and the results alone are compared.
          if (passes::pass_enabled("fuse_pipelines", {}) &&
              passes::pass_enabled("plan_paged_edges", {})) {
            EXPECT_EQ(stats.regrows, fk || fold ? 0 : 1) << "n " << n << (fold ? ", folded" : "");
          }
        }
      }
    }
  }
}

// A join whose output passes 2^31 rows (46341 x 46341 rows of one key = 2,147,488,281
// matches), into a global count and sums: every count, offset and output row index on the
// way must be 64-bit. The reference is computed by hand (the CPU reference would enumerate
// the 2^31 pairs). Sort-merge materialises the output densely (about 26 GB), the hash join
// as a paged list grown once from its estimate.
TEST(GpuOperatorsLarge, JoinOutputBeyondTwoToThe31) {
  RANC_REQUIRE_GPU();
  const int64_t n = 46341;
  Schema ls{{{"k", Type::I32}, {"lv", Type::I32}}, 0}, rs{{{"qk", Type::I32}, {"rv", Type::I32}}, 0};
  Column lk(Type::I32), lv(Type::I32), rk(Type::I32), rv(Type::I32);
  for (int64_t i = 0; i < n; ++i) {
    lk.data<int32_t>().push_back(7);
    lv.data<int32_t>().push_back(static_cast<int32_t>(i));
    rk.data<int32_t>().push_back(7);
    rv.data<int32_t>().push_back(1);
  }
  Inputs in;
  in.emplace_back("l", make_relation(ls, {lk, lv}));
  in.emplace_back("r", make_relation(rs, {rk, rv}));
  ProgramBuilder b;
  auto l = b.input("l", ls.attributes);
  auto r = b.input("r", rs.attributes);
  b.output(l.join(r, {"k"}, {"qk"})
               .reduce({}, {ranc::count("n"), ranc::sum(col("lv"), "slv"), ranc::sum(col("rv"), "srv")}),
           "big");
  Program p = b.check();
  const int64_t pairs = n * n;
  ASSERT_GT(pairs, int64_t{1} << 31);
  // Sums are nullable (NULL over no rows), counts are not.
  Column cn(Type::I64), cl(Type::I64, true), cr(Type::I64, true);
  cn.data<int64_t>().push_back(pairs);
  cl.data<int64_t>().push_back(n * (n * (n - 1) / 2));  // each left row once per right row
  cl.validity().push_back(1);
  cr.data<int64_t>().push_back(pairs);
  cr.validity().push_back(1);
  Schema os{{{"n", Type::I64}, {"slv", Type::I64, true}, {"srv", Type::I64, true}}, 0};
  const std::vector<HostRelation> ref = {make_relation(os, {cn, cl, cr})};
  for (auto join : {codegen::JoinAlgorithm::SortMerge, codegen::JoinAlgorithm::Hash})
    EXPECT_EQ(compare_with_reference(p, in, ref, "", {.join = join}), "")
        << (join == codegen::JoinAlgorithm::Hash ? "hash" : "sort-merge");
}

// 2^24 rows through the main operators.
TEST(GpuOperatorsLarge, TwoToThe24) {
  RANC_REQUIRE_GPU();
  const int64_t n = int64_t{1} << 24;
  for (Dist dist : {Dist::Unique, Dist::Zipf}) {
    Case c{n, dist, KeyKind::I32};
    auto d = make_data(c, 9, n / 4);
    ProgramBuilder b;
    Rel r = b.input("r", d.r.attributes);
    Rel q = b.input("q", d.q.attributes);
    b.output(r.select(col("x") > 0).project({"k", "v"}), "select");
    b.output(r.join(q, {"k"}, {"qk"}).project({"k", "qv"}), "join");
    b.output(r.reduce({"k"}, {ranc::sum(col("v"), "sv"), ranc::count("n")}), "reduce");
    b.output(r.project({"k", "x"}).sort({"x", desc("k")}).limit(1000), "sort");
    b.output(r.project({"x"}).distinct(), "distinct");
    EXPECT_EQ(run_and_compare(b.check(), d.inputs), "") << dist_name(dist);
  }
}

// Group-by by hashing (hash_reduce.cuh) against the reference and against grouping by
// sorting: keys of every type that packs (f32 with -0.0, +0.0, NaN and infinities as
// distinct keys, bool with string, date, negative i32), every aggregate, a fused select,
// i32 key counts around a block table's fill limit (1536 keys for the i32 output's state
// of count and a 128-bit sum: 2048 slots), one key for every row (every warp merges 32
// rows before its one table update), and many groups (the records outgrow their estimate
// and the kernel runs again).
TEST(GpuHashReduce, MatchesReferenceAndSortedGrouping) {
  RANC_REQUIRE_GPU();
  std::mt19937_64 rng(23);
  const std::pair<int64_t, int64_t> cases[] = {{1, 97},       {300, 97},     {70001, 97},
                                               {70001, 1},    {70001, 1536}, {70001, 1537},
                                               {400000, 6000}, {3000000, 3000000}};
  for (auto [n, range] : cases) {
    Schema s{{{"kf", Type::F32}, {"kb", Type::Bool}, {"ks", Type::String}, {"kd", Type::Date},
              {"ki", Type::I32}, {"v", Type::I64}, {"w", Type::F64}},
             0};
    std::vector<Column> cols;
    for (const auto& a : s.attributes) cols.emplace_back(a.type);
    for (int64_t i = 0; i < n; ++i) {
      cols[0].append(Value::f32(kF32Keys[rng() % 7]));
      cols[1].append(Value::boolean(rng() & 1));
      cols[2].append(Value::string(fmt::format("s{}", rng() % 5)));
      cols[3].append(Value::date(static_cast<int32_t>(9000 + rng() % 40)));
      cols[4].append(Value::i32(static_cast<int32_t>(rng() % static_cast<uint64_t>(range)) - 40));
      cols[5].append(Value::i64(static_cast<int64_t>(rng() % 2000) - 1000));
      cols[6].append(Value::f64(static_cast<double>(rng() % 1000) / 8.0));
    }
    Inputs in;
    in.emplace_back("r", make_relation(s, std::move(cols)));
    ProgramBuilder b;
    Rel r = b.input("r", s.attributes);
    auto aggs = [] {
      return std::vector<Aggregate>{ranc::count("n"), ranc::sum(col("v"), "sv"),
                                    ranc::sum(col("w"), "sw"), ranc::avg(col("v"), "av"),
                                    ranc::min(col("w"), "mnw"), ranc::max(col("ks"), "mxs"),
                                    ranc::min(col("kf"), "mnf"), ranc::max(col("v"), "mxv")};
    };
    b.output(r.reduce({"kf"}, aggs()), "f32");
    b.output(r.reduce({"kb", "ks"}, aggs()), "bool_string");
    b.output(r.select(col("v") > 0).reduce({"kd", "ks"}, aggs()), "filtered_date_string");
    b.output(r.reduce({"ki"}, {ranc::count("n"), ranc::sum(col("v"), "sv")}), "i32");
    // No count or avg: the state has no row count (each field is an atomic per update).
    b.output(r.reduce({"ki"}, {ranc::sum(col("v"), "sv"), ranc::max(col("w"), "mxw")}), "i32_sum_max");
    Program p = b.check();
    EXPECT_NE(codegen::generate_plan(p).source.find("HashGroupAgent"), std::string::npos);
    EXPECT_EQ(run_and_compare(p, in), "") << "hashed, n = " << n << ", i32 keys " << range;
    EXPECT_EQ(run_and_compare(p, in, {.group_by = codegen::GroupBy::Sort}), "")
        << "sorted, n = " << n << ", i32 keys " << range;
  }
}

// The hash group-by's private states (hash_reduce.cuh: rows of the first Private keys a block
// meets fold into registers; the rest take the block's table; a warp flushes them into the
// table at the end): key counts below, at and above the private count, forced to 1, 4, 8 and
// 32 and off, against the reference. Rows in three stretches: a few keys first (every block
// claims them privately), then all keys (private claims run out, a key reaches the table and
// the block leaves its private states while they hold sums: the flush merges both), with a
// fused select and every aggregate kind.
TEST(GpuHashReduce, PrivateStatesAroundTheirCount) {
  RANC_REQUIRE_GPU();
  std::mt19937_64 rng(31);
  Schema s{{{"k", Type::I32}, {"v", Type::I64}, {"w", Type::F64}}, 0};
  for (int64_t keys : {int64_t{1}, int64_t{3}, int64_t{4}, int64_t{5}, int64_t{8}, int64_t{9},
                       int64_t{33}, int64_t{200}, int64_t{20000}}) {
    const int64_t n = 150001;
    std::vector<Column> cols;
    for (const auto& a : s.attributes) cols.emplace_back(a.type);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t few = std::min<int64_t>(keys, 3);
      const int64_t k = i < n / 3 ? static_cast<int64_t>(rng() % static_cast<uint64_t>(few))
                                  : static_cast<int64_t>(rng() % static_cast<uint64_t>(keys));
      cols[0].append(Value::i32(static_cast<int32_t>(k * 7 - 20)));
      cols[1].append(Value::i64(static_cast<int64_t>(rng() % 2000) - 1000));
      cols[2].append(Value::f64(static_cast<double>(rng() % 1000) / 8.0));
    }
    Inputs in;
    in.emplace_back("r", make_relation(s, std::move(cols)));
    ProgramBuilder b;
    Rel r = b.input("r", s.attributes);
    b.output(r.select(col("v") > -900)
                 .reduce({"k"}, {ranc::count("n"), ranc::sum(col("v"), "sv"),
                                 ranc::sum(col("w"), "sw"), ranc::avg(col("w"), "aw"),
                                 ranc::min(col("v"), "mnv"), ranc::max(col("w"), "mxw")}),
             "g");
    b.output(r.reduce({"k"}, {ranc::sum(col("v"), "sv")}), "sum_only");
    // A one-word state (a float sum) behind a select keeping 5% of the rows (TPC-H Q15's shape).
    b.output(r.select(col("v") >= 900).reduce({"k"}, {ranc::sum(col("w"), "sw")}), "sparse_f64_sum");
    Program p = b.check();
    for (int privates : {-1, 0, 1, 4, 8, 32})
      EXPECT_EQ(run_and_compare(p, in, {.hash_private_states = privates}), "")
          << keys << " keys, private states " << privates;
  }
}

// The hash group-by behind fused selects of every selectivity (hash_reduce.cuh: a warp's items
// with some lanes' rows dropped): none to all of the rows kept, spread at random or in runs (a
// warp sees all or none), one key to more than a block's table holds (records, and past the
// filtered input's room the sorting way), states of 8 and 16 bytes (a tile's rows loaded before
// the first is used) and larger (row by row), private states on and off, against the reference.
TEST(GpuHashReduce, FusedSelectsOfEverySelectivity) {
  RANC_REQUIRE_GPU();
  std::mt19937_64 rng(97);
  Schema s{{{"k", Type::I32}, {"v", Type::I32}, {"w", Type::F64}, {"p", Type::I32}}, 0};
  const int64_t n = 200003;
  for (int64_t keys : {int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{100000}}) {
    std::vector<Column> cols;
    for (const auto& a : s.attributes) cols.emplace_back(a.type);
    for (int64_t i = 0; i < n; ++i) {
      cols[0].append(Value::i32(static_cast<int32_t>(rng() % static_cast<uint64_t>(keys)) - 3));
      cols[1].append(Value::i32(static_cast<int32_t>(rng() % 20001) - 10000));
      cols[2].append(Value::f64(static_cast<double>(rng() % 1000) / 8.0));
      // p: uniform in [0, 1000) row by row for the first half, in runs of 700 rows after
      cols[3].append(Value::i32(i < n / 2 ? static_cast<int32_t>(rng() % 1000)
                                          : static_cast<int32_t>((i / 700 * 389) % 1000)));
    }
    Inputs in;
    in.emplace_back("r", make_relation(s, std::move(cols)));
    ProgramBuilder b;
    Rel r = b.input("r", s.attributes);
    // (a select each: one shared by several reduces would be materialised, not fused)
    for (int keep : {0, 1, 30, 450, 550, 1000}) {
      b.output(r.select(col("p") < keep).reduce({"k"}, {ranc::sum(col("w"), "sw")}),
               fmt::format("f64_sum_{}", keep));
      b.output(r.select(col("p") < keep).reduce({"k"}, {ranc::count("n"), ranc::sum(col("v"), "sv")}),
               fmt::format("count_sum_{}", keep));
      b.output(r.select(col("p") < keep)
                   .reduce({"k"}, {ranc::count("n"), ranc::sum(col("v"), "sv"),
                                   ranc::min(col("w"), "mn"), ranc::max(col("v"), "mx")}),
               fmt::format("large_{}", keep));
    }
    Program p = b.check();
    for (int privates : {-1, 0})
      EXPECT_EQ(run_and_compare(p, in, {.hash_private_states = privates}), "")
          << keys << " keys, private states " << privates;
  }
}

// The hash group-by's phase 1 in whole waves (rt::Launch::whole_waves): over enough tiles that
// its grid passes one wave of the GPU (5M rows: 650 tiles of 7680 rows, more than the H100's 2
// or 3 blocks an SM x 132), so the executor rounds it to a whole number of waves; few and many
// groups, with and without a fused select, states of one word and of several, against the
// reference; without the early run (which would leave phase 1 no rows here) and with it.
TEST(GpuHashReduce, WholeWavesOverManyTiles) {
  RANC_REQUIRE_GPU();
  std::mt19937_64 rng(113);
  Schema s{{{"k", Type::I32}, {"v", Type::I32}, {"w", Type::F64}}, 0};
  const int64_t n = 5000003;
  for (int64_t keys : {int64_t{9}, int64_t{3000}}) {
    std::vector<Column> cols;
    for (const auto& a : s.attributes) cols.emplace_back(a.type);
    for (int64_t i = 0; i < n; ++i) {
      cols[0].append(Value::i32(static_cast<int32_t>(rng() % static_cast<uint64_t>(keys))));
      cols[1].append(Value::i32(static_cast<int32_t>(rng() % 2001) - 1000));
      cols[2].append(Value::f64(static_cast<double>(rng() % 1000) / 8.0));
    }
    Inputs in;
    in.emplace_back("r", make_relation(s, std::move(cols)));
    ProgramBuilder b;
    Rel r = b.input("r", s.attributes);
    b.output(r.reduce({"k"}, {ranc::sum(col("v"), "sv")}), "sum");
    b.output(r.select(col("v") < -200).reduce({"k"}, {ranc::count("n"), ranc::sum(col("w"), "sw"),
                                                      ranc::min(col("v"), "mn")}),
             "filtered");
    for (const bool early : {false, true})
      EXPECT_EQ(run_and_compare(b.check(), in, {.hash_dense_early = early}), "")
          << keys << " keys, early run " << early;
  }
}

// The hash group-by's integer sums by 32-bit atomic adds (common.cuh, atomic_add_words): i32
// values at the type's limits in 64-bit states (a word's carry on most adds, the high word
// moving for either sign), i64 values of up to 2^40 either side in 128-bit states (carries
// through all four words), and the row count, against the reference: one key (every row a
// hot slot's update), a few (private states, then the table), 16 (the warp merge and hot
// slots), 1000 and 70001 (more keys than a block's table: records); private states on and off.
TEST(GpuHashReduce, ExactIntegerSumsByWordAtomics) {
  RANC_REQUIRE_GPU();
  std::mt19937_64 rng(41);
  Schema s{{{"k", Type::I32}, {"v", Type::I32}, {"w", Type::I64}}, 0};
  for (int64_t keys : {int64_t{1}, int64_t{3}, int64_t{16}, int64_t{1000}, int64_t{70001}}) {
    const int64_t n = 200003;
    std::vector<Column> cols;
    for (const auto& a : s.attributes) cols.emplace_back(a.type);
    for (int64_t i = 0; i < n; ++i) {
      cols[0].append(Value::i32(static_cast<int32_t>(rng() % static_cast<uint64_t>(keys)) - 7));
      const uint64_t x = rng();
      const int32_t v = x % 3 == 0   ? static_cast<int32_t>(2147483647 - (x >> 8) % 3)
                        : x % 3 == 1 ? static_cast<int32_t>(-2147483647 - 1 + (x >> 8) % 3)
                                     : static_cast<int32_t>(x >> 32);
      cols[1].append(Value::i32(v));
      cols[2].append(Value::i64(static_cast<int64_t>((x >> 20) % (uint64_t{1} << 41)) - (int64_t{1} << 40)));
    }
    Inputs in;
    in.emplace_back("r", make_relation(s, std::move(cols)));
    ProgramBuilder b;
    Rel r = b.input("r", s.attributes);
    b.output(r.reduce({"k"}, {ranc::sum(col("v"), "sv"), ranc::sum(col("w"), "sw"), ranc::count("n")}),
             "sums");
    b.output(r.reduce({"k"}, {ranc::sum(col("v"), "sv")}), "i32_sum");
    Program p = b.check();
    for (int privates : {-1, 0})
      EXPECT_EQ(run_and_compare(p, in, {.hash_private_states = privates}), "")
          << keys << " keys, private states " << privates;
  }
}

// The hash group-by's way out for many groups: when phase 1's records pass their room
// (CodegenOptions::hash_records, forced small here), the plan sorts the input and reduces it
// instead, into the same output columns (ra_ops/reduce/lowering.cpp). Rooms of 1 record
// (every input with two records takes the fallback), 300 (around it: blocks cross it at
// different keys counts) and the default (the hash path), for one i32 key, two keys (a string
// and a date: the sort packs them), an f32 key with -0.0/+0.0/NaN/infinities, a fused select
// (the fallback materialises a copy of the view over its rows), a computed key (a project) and
// counts only (the sort then carries the keys alone); the input has attributes no reduce reads,
// which the fallback's sort leaves out. Each output is read through a sort by its keys, which
// the planner drops when the reduce already orders them (so the GPU output is compared row by
// row: the fallback's order must be the hash path's). Sizes from 1 row to more than a block's
// tiles.
TEST(GpuHashReduce, SortsTheInputWhenRecordsPassTheirRoom) {
  RANC_REQUIRE_GPU();
  std::mt19937_64 rng(53);
  Schema s{{{"k", Type::I32}, {"ks", Type::String}, {"kd", Type::Date}, {"kf", Type::F32},
            {"v", Type::I32}, {"w", Type::F64}},
           0};
  for (auto [n, keys] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {2, 2}, {5000, 3}, {5000, 5000}, {70001, 600}, {300007, 100000}}) {
    std::vector<Column> cols;
    for (const auto& a : s.attributes) cols.emplace_back(a.type);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = static_cast<int64_t>(rng() % static_cast<uint64_t>(keys));
      cols[0].append(Value::i32(static_cast<int32_t>(k * 3 - 1000)));
      cols[1].append(Value::string(fmt::format("s{}", k % 7)));
      cols[2].append(Value::date(static_cast<int32_t>(8000 + k / 7)));
      cols[3].append(Value::f32(k < 7 ? kF32Keys[k] : static_cast<float>(k) / 4.0f));
      const uint64_t x = rng();
      cols[4].append(Value::i32(x % 4 == 0 ? static_cast<int32_t>(2147483647 - (x >> 8) % 3)
                                           : static_cast<int32_t>(x >> 40) - (1 << 23)));
      cols[5].append(Value::f64(static_cast<double>(rng() % 1000) / 8.0));
    }
    Inputs in;
    in.emplace_back("r", make_relation(s, std::move(cols)));
    ProgramBuilder b;
    Rel r = b.input("r", s.attributes);
    auto aggs = [] {
      return std::vector<Aggregate>{ranc::count("n"), ranc::sum(col("v"), "sv"),
                                    ranc::sum(col("w"), "sw"), ranc::min(col("v"), "mnv"),
                                    ranc::max(col("w"), "mxw"), ranc::avg(col("v"), "av")};
    };
    b.output(r.reduce({"k"}, {ranc::sum(col("v"), "sv")}).sort({"k"}), "i32_sum");
    b.output(r.reduce({"k"}, aggs()).sort({"k"}), "i32_all");
    b.output(r.reduce({"ks", "kd"}, aggs()).sort({"ks", "kd"}), "string_date");
    b.output(r.reduce({"kf"}, aggs()).sort({"kf"}), "f32");
    b.output(r.select(col("v") > 0).reduce({"k"}, aggs()).sort({"k"}), "filtered");
    b.output(r.project({as(col("k") / 7, "q"), "v", "w"}).reduce({"q"}, aggs()).sort({"q"}),
             "computed_key");
    // Counts only: the fallback's sort carries no attribute but the keys (the others are left
    // out), keys-only on the packed word of two keys and on one i32 key.
    b.output(r.reduce({"ks", "kd"}, {ranc::count("n")}).sort({"ks", "kd"}), "string_date_count");
    b.output(r.reduce({"k"}, {ranc::count("n")}).sort({"k"}), "i32_count");
    Program p = b.check();
    // Every user sort is a no-op: the reduces' hashed outputs are ordered by their keys.
    const passes::PhysicalPlan phys = passes::plan_sort_orders(p, {});
    int sorts = 0, hashed = 0;
    for (const Node& node : phys.program.nodes()) {
      const auto& pn = phys.nodes[static_cast<size_t>(node.id)];
      sorts += node.kind == OpKind::Sort && !pn.sort_keys.empty();
      hashed += node.kind == OpKind::Reduce && pn.hash_reduce;
    }
    EXPECT_EQ(sorts, 0);
    EXPECT_EQ(hashed, 8);
    const Reference ref = reference(p, in);
    for (int64_t room : {int64_t{1}, int64_t{300}, int64_t{0}})
      for (int privates : {-1, 0})
        EXPECT_EQ(compare_with_reference(p, in, ref,
                                         {.hash_private_states = privates, .hash_records = room}),
                  "")
            << "n " << n << ", " << keys << " keys, room " << room << ", private states " << privates;
  }
}

// The hash group-by under skew and around its tiles, with its records' room (CodegenOptions::
// hash_records) at the groups' count and above it: half the rows of one key (the warps' merges
// and the slot's atomics) beside 1000 or 50000 uniform keys, and all keys distinct (the records
// are then the groups); the blocks' partial groups pass the room on inputs of more than one tile,
// and the input is sorted. i64 sums (128-bit states), f64 sums, min of f32, max of i64, counts,
// against the reference.
TEST(GpuHashReduce, SkewAroundItsTilesAndRoom) {
  RANC_REQUIRE_GPU();
  std::mt19937_64 rng(91);
  Schema s{{{"k", Type::I32}, {"v", Type::I64}, {"w", Type::F64}, {"x", Type::F32}}, 0};
  for (auto [n, keys, heavy] : std::vector<std::tuple<int64_t, int64_t, bool>>{
           {2047, 2047, false}, {2049, 1000, true}, {1048577, 50000, true}, {300001, 300001, false}}) {
    std::vector<Column> cols;
    for (const auto& a : s.attributes) cols.emplace_back(a.type);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = heavy && rng() % 2 == 0 ? 7
                        : keys == n            ? i * 7919 % n
                                               : static_cast<int64_t>(rng() % static_cast<uint64_t>(keys));
      cols[0].append(Value::i32(static_cast<int32_t>(k * 5 - 100000)));
      cols[1].append(Value::i64(static_cast<int64_t>(rng() >> 24) - (int64_t{1} << 39)));
      cols[2].append(Value::f64(static_cast<double>(rng() % 4096) / 16.0));
      cols[3].append(Value::f32(static_cast<float>(static_cast<int64_t>(rng() % 2001) - 1000) / 8.0f));
    }
    Inputs in;
    in.emplace_back("r", make_relation(s, std::move(cols)));
    ProgramBuilder b;
    Rel r = b.input("r", s.attributes);
    b.output(r.reduce({"k"}, {ranc::count("n"), ranc::sum(col("v"), "sv"), ranc::sum(col("w"), "sw"),
                              ranc::min(col("x"), "mnx"), ranc::max(col("v"), "mxv")}),
             "all");
    b.output(r.reduce({"k"}, {ranc::count("n")}), "count");
    Program p = b.check();
    const Reference ref = reference(p, in);
    for (int64_t room : {keys, keys + 1000})
      EXPECT_EQ(compare_with_reference(p, in, ref, {.hash_records = room}), "")
          << "n " << n << ", " << keys << " keys" << (heavy ? " and a heavy one" : "") << ", room " << room;
  }
}

// Two runs of `p` against the reference `ref`, under `with_options` and `without_options`, each
// expected to agree with it (`what`: the case, for the message); their statistics, whose
// launch counts tell which of the plan's ways ran.
struct TwoRuns {
  rt::RunStats with, without;
};
TwoRuns runs_with_and_without(const Program& p, const Inputs& in, const Reference& ref,
                              const codegen::CodegenOptions& with_options,
                              const codegen::CodegenOptions& without_options,
                              const std::string& what) {
  TwoRuns r;
  EXPECT_EQ(compare_with_reference(p, in, ref, with_options, &r.with), "") << what;
  EXPECT_EQ(compare_with_reference(p, in, ref, without_options, &r.without), "") << what;
  return r;
}

// The hash group-by's dense way (hash_reduce.cuh's DenseGroupAgent): when phase 1's records pass
// their room (CodegenOptions::hash_records, small here) and the kept rows' key words span at most
// the room and CodegenOptions::hash_dense_slots values (and at least hash_dense_min_slots), the
// rows are merged by atomics into a table indexed by the key word, whose present slots become
// the records; spans that fit shared memory (CodegenOptions::hash_dense_shared_bytes) are merged
// into a table of each block's own there first (DenseGroupAgent::shared_run). Spans of 49 to 300001
// words with gaps (every third key present), at the bottom, middle and top of the i32 range,
// with and without a heavy key (half the rows: the warps' merges), the room and the limit at the
// span (the dense way), one below it (the sort), the minimum at the span and one above, and the
// defaults; an i32 key, a date key, a key
// of two attributes whose word spans twice the i32's (i32, bool), a computed key and a fused
// select; count, i32/i64/f64 sums (64-bit, 128-bit and double atomics), min of f32, max of i64,
// avg; against the reference, each output in key order. (Without the early run, which takes
// the inputs of 2^20 rows and more by default: EarlyRunOverASampleOfTheRows.) One test a case
// (its 17 settings compile 17 plans; the four cases in one test took more than 380 s on an
// H200, past a shard's limit), each with a generator of its own.
struct DenseSpanCase {
  int64_t n, keys, base;
  bool heavy;
};
class GpuHashReduceSpans : public ::testing::TestWithParam<DenseSpanCase> {};
TEST_P(GpuHashReduceSpans, DenseWayOverKeySpans) {
  RANC_REQUIRE_GPU();
  const DenseSpanCase c = GetParam();
  std::mt19937_64 rng(67 + static_cast<uint64_t>(c.keys));
  Schema s{{{"k", Type::I32},
            {"d", Type::Date},
            {"b", Type::Bool},
            {"v", Type::I32},
            {"w", Type::I64},
            {"x", Type::F64},
            {"y", Type::F32}},
           0};
  {
    std::vector<Column> cols;
    for (const auto& a : s.attributes) cols.emplace_back(a.type);
    for (int64_t i = 0; i < c.n; ++i) {
      const int64_t j = c.heavy && rng() % 2 == 0
                            ? c.keys / 2
                            : static_cast<int64_t>(rng() % static_cast<uint64_t>(c.keys));
      cols[0].append(Value::i32(static_cast<int32_t>(c.base + 3 * j)));
      cols[1].append(Value::date(static_cast<int32_t>(9000 + 3 * j)));
      cols[2].append(Value::boolean(rng() % 3 == 0));
      const uint64_t x = rng();
      cols[3].append(Value::i32(x % 4 == 0 ? static_cast<int32_t>(2147483647 - (x >> 8) % 3)
                                           : static_cast<int32_t>(x >> 40) - (1 << 23)));
      cols[4].append(Value::i64(static_cast<int64_t>(rng() >> 24) - (int64_t{1} << 39)));
      cols[5].append(Value::f64(static_cast<double>(rng() % 4096) / 16.0));
      cols[6].append(
          Value::f32(static_cast<float>(static_cast<int64_t>(rng() % 2001) - 1000) / 8.0f));
    }
    Inputs in;
    in.emplace_back("r", make_relation(s, std::move(cols)));
    ProgramBuilder b;
    Rel r = b.input("r", s.attributes);
    auto aggs = [] {
      return std::vector<Aggregate>{ranc::count("n"),           ranc::sum(col("v"), "sv"),
                                    ranc::sum(col("w"), "sw"),  ranc::sum(col("x"), "sx"),
                                    ranc::min(col("y"), "mny"), ranc::max(col("w"), "mxw"),
                                    ranc::avg(col("v"), "av")};
    };
    b.output(r.reduce({"k"}, aggs()).sort({"k"}), "i32");
    b.output(r.reduce({"d"}, {ranc::sum(col("v"), "sv")}).sort({"d"}), "date");
    b.output(r.reduce({"k", "b"}, aggs()).sort({"k", "b"}), "i32_bool");
    b.output(
        r.project({as(col("k") / 2, "q"), "v", "w", "x", "y"}).reduce({"q"}, aggs()).sort({"q"}),
        "computed");
    b.output(r.select(col("v") > 0).reduce({"k"}, aggs()).sort({"k"}), "filtered");
    Program p = b.check();
    const Reference ref = reference(p, in);
    const int64_t span = 3 * (c.keys - 1) + 1;  // of the i32 key's words (the pair's: twice)
    struct Setting {
      int64_t room, dense, fewest, shared, parts = 4;
      bool speculate = false;
    };
    // (shared: the shared-memory tables' bytes, -1 the default: 21760 slots of one-word states,
    // 2816 of aggs()'s eight words, spans of up to `parts` times that in as many ranges of keys;
    // 0 none, so the device table takes the spans from `fewest` on; 16 KB: 1792 slots of one
    // word, none of eight)
    for (const Setting o : std::vector<Setting>{{2 * span, -1, 1, 0},
                                                {2 * span, -1, 1, -1},
                                                {2 * span, -1, 1, -1, 4, true},
                                                {2 * span, -1, 1, -1, 1},
                                                {2 * span, -1, 1, 16 * 1024},
                                                {2 * span, -1, 1, 16 * 1024, 64},
                                                {span, -1, 1, 0},
                                                {span, -1, 1, -1},
                                                {span - 1, -1, 1, -1},
                                                {2 * span, span, 1, 0},
                                                {2 * span, span, 1, -1},
                                                {2 * span, span - 1, 1, -1},
                                                {2 * span, -1, span, 0},
                                                {2 * span, -1, span + 1, 0},
                                                {2 * span, -1, span + 1, -1},
                                                {2 * span, 0, 1, -1},
                                                {0, -1, int64_t{1} << 16, -1}})
      EXPECT_EQ(compare_with_reference(p, in, ref,
                                       {.hash_records = o.room,
                                        .hash_dense_slots = o.dense,
                                        .hash_dense_min_slots = o.fewest,
                                        .hash_dense_shared_bytes = o.shared,
                                        .hash_dense_shared_parts = o.parts,
                                        .hash_dense_speculate = o.speculate,
                                        .hash_dense_early = false}),
                "")
          << "n " << c.n << ", " << c.keys << " keys from " << c.base
          << (c.heavy ? " and a heavy one" : "") << ", room " << o.room << ", dense slots "
          << o.dense << " from " << o.fewest << ", shared bytes " << o.shared << " in " << o.parts
          << " parts at most, speculative " << o.speculate;
    // The shared-memory tables are taken when the span fits them, and only then: with the device
    // table left out (its minimum past the span), the date output alone (a one-word state:
    // 21760 slots, spans of 4 x 21760 in parts) launches other kernels with them (init,
    // shared_run, drain, the records' sort) than without (the input's sort), and the same past
    // 4 x 21760.
    ProgramBuilder one;
    one.output(one.input("r", s.attributes).reduce({"d"}, {ranc::sum(col("v"), "sv")}), "date");
    const Program q = one.check();
    const Reference qref = reference(q, in);
    // (not speculating, as by default: a speculative run that keeps its table launches as many
    // kernels as the sort, at some spans; DenseWaySpeculatesOverTheRecordsSpan counts those)
    const auto [with, without] = runs_with_and_without(q, in, qref,
                                                       {.hash_records = 2 * span,
                                                        .hash_dense_min_slots = span + 1,
                                                        .hash_dense_speculate = false,
                                                        .hash_dense_early = false},
                                                       {.hash_records = 2 * span,
                                                        .hash_dense_min_slots = span + 1,
                                                        .hash_dense_shared_bytes = 0,
                                                        .hash_dense_early = false},
                                                       "");
    EXPECT_EQ(with.kernel_launches != without.kernel_launches, span <= 4 * 21760)
        << "span " << span << ": " << with.kernel_launches << " launches with the shared-memory "
        << "tables, " << without.kernel_launches << " without";
  }
}
INSTANTIATE_TEST_SUITE_P(
    Cases, GpuHashReduceSpans,
    ::testing::Values(DenseSpanCase{20000, 17, -25, false},
                      DenseSpanCase{70001, 1000, int64_t{INT32_MAX} - 2999, true},
                      DenseSpanCase{1048577, 100001, int64_t{INT32_MIN}, false},
                      DenseSpanCase{1048577, 3000, 12345, true}),
    [](const ::testing::TestParamInfo<DenseSpanCase>& i) {
      return fmt::format("keys{}{}", i.param.keys, i.param.heavy ? "_heavy" : "");
    });

// The dense way's speculative run (DenseGroupAgent::speculative_run; with
// CodegenOptions::hash_dense_speculate, on by default) over the span of the keys phase 1's records
// hold, rounded up to whole shared-memory tables (one-word sums: 21760 slots a table, so the
// records' 20000 keys from 1000 take keys 1000..22759). Phase 1 gives up long before the input's
// last 1000 rows (its room is 400000 records of 4M rows), so their key is not in the records: kept
// when it lies in the padded span (the plan then launches one kernel fewer than finding the input's
// bounds first: the speculative init and run, against the bounds, init and shared_run), thrown away
// when it lies above or below (two launches more: the plan then finds the bounds and takes the
// tables they call for: two shared-memory tables, or the device table past them). Each way against
// the reference.
TEST(GpuHashReduce, DenseWaySpeculatesOverTheRecordsSpan) {
  RANC_REQUIRE_GPU();
  Schema s{{{"k", Type::I32}, {"v", Type::I32}}, 0};
  constexpr int64_t n = (int64_t{1} << 22) + 3, keys = 20000, tail = 1000, room = 400000;
  struct Case {
    int64_t last;  // the last rows' key, from 1000
    bool kept;
  };
  for (const Case c : std::vector<Case>{{1000 + keys - 1, true},
                                        {1000 + keys + 1500, true},
                                        {1000 + keys + 5000, false},
                                        {999, false},
                                        {1000 + keys + 200000, false}}) {
    std::mt19937_64 rng(91);
    std::vector<Column> cols;
    for (const auto& a : s.attributes) cols.emplace_back(a.type);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k =
          i >= n - tail ? c.last : 1000 + static_cast<int64_t>(rng() % static_cast<uint64_t>(keys));
      cols[0].append(Value::i32(static_cast<int32_t>(k)));
      cols[1].append(Value::i32(static_cast<int32_t>(rng() >> 33) - (1 << 30)));
    }
    Inputs in;
    in.emplace_back("r", make_relation(s, std::move(cols)));
    ProgramBuilder b;
    b.output(b.input("r", s.attributes).reduce({"k"}, {ranc::sum(col("v"), "sv")}).sort({"k"}),
             "sums");
    const Program p = b.check();
    const Reference ref = reference(p, in);
    const auto [with, without] = runs_with_and_without(
        p, in, ref, {.hash_records = room, .hash_dense_speculate = true, .hash_dense_early = false},
        {.hash_records = room, .hash_dense_speculate = false, .hash_dense_early = false},
        fmt::format("last key {}", c.last));
    EXPECT_EQ(with.kernel_launches - without.kernel_launches, c.kept ? -1 : 2)
        << "last key " << c.last << ": " << with.kernel_launches << " launches speculating, "
        << without.kernel_launches << " not";
  }
}

// The speculative run's miss check reads each key word's whole 64-bit distance from the span,
// not only the 32-bit slot it lands in (shared_part's far_high and far_low): a key of two
// attributes (a bool above an i32) whose last rows differ from the records' only in the bool
// lies 2^32 slots past them, its low bits inside the table. And over a filtered input (a
// select in front) a row the select drops never reaches the table or the check: last rows
// outside the span but all dropped keep the run. Against the reference; a kept run launches one
// kernel fewer than finding the bounds first, a thrown-away one two more (as
// DenseWaySpeculatesOverTheRecordsSpan).
TEST(GpuHashReduce, DenseWaySpeculationChecksWholeWordsAndFilters) {
  RANC_REQUIRE_GPU();
  Schema s{{{"f", Type::Bool}, {"k", Type::I32}, {"v", Type::I32}}, 0};
  constexpr int64_t n = (int64_t{1} << 22) + 3, keys = 20000, tail = 1000, room = 400000;
  struct Case {
    bool two_keys;  // reduce by (f, k), else a select v > 0 in front and reduce by k
    bool last_f;
    int64_t last_k;
    int32_t last_v;  // (filtered: v <= 0 drops the row)
    bool kept;
  };
  for (const Case c : std::vector<Case>{{true, true, 1005, 7, false},
                                        {true, false, 1005, 7, true},
                                        {false, false, 1005, 7, true},
                                        {false, false, 999, 7, false},
                                        {false, false, 999, -7, true},
                                        {false, false, 1000 + keys + 200000, 0, true}}) {
    std::mt19937_64 rng(93);
    std::vector<Column> cols;
    for (const auto& a : s.attributes) cols.emplace_back(a.type);
    for (int64_t i = 0; i < n; ++i) {
      const bool last = i >= n - tail;
      cols[0].append(Value::boolean(last && c.last_f));
      cols[1].append(Value::i32(static_cast<int32_t>(
          last ? c.last_k : 1000 + static_cast<int64_t>(rng() % static_cast<uint64_t>(keys)))));
      // (the select keeps 15/16 of the other rows: with half, phase 1 met the last rows
      // before its records passed their room, and their key joined the records' span)
      cols[2].append(Value::i32(last ? c.last_v : static_cast<int32_t>(rng() >> 34) - (1 << 26)));
    }
    Inputs in;
    in.emplace_back("r", make_relation(s, std::move(cols)));
    ProgramBuilder b;
    Rel r = b.input("r", s.attributes);
    if (c.two_keys)
      b.output(r.reduce({"f", "k"}, {ranc::sum(col("v"), "sv")}).sort({"f", "k"}), "sums");
    else
      b.output(r.select(col("v") > 0).reduce({"k"}, {ranc::sum(col("v"), "sv")}).sort({"k"}),
               "sums");
    const Program p = b.check();
    const Reference ref = reference(p, in);
    const std::string what =
        fmt::format("{} keys, last rows ({}, {}, {})", c.two_keys ? "two" : "filtered, one",
                    c.last_f, c.last_k, c.last_v);
    const auto [with, without] = runs_with_and_without(
        p, in, ref, {.hash_records = room, .hash_dense_speculate = true, .hash_dense_early = false},
        {.hash_records = room, .hash_dense_speculate = false, .hash_dense_early = false}, what);
    EXPECT_EQ(with.kernel_launches - without.kernel_launches, c.kept ? -1 : 2)
        << what << ": " << with.kernel_launches << " launches speculating, "
        << without.kernel_launches << " not";
  }
}

// The early run (DenseGroupAgent::early_run; CodegenOptions::hash_dense_early), before phase 1:
// the span of a sample of the kept rows (every 16th row here: n / 65536), widened to whole
// shared-memory tables, then the speculative run over it. Against the reference, and by the
// launches against the same plan without it (phase 1's records have room for every row, so
// that plan takes one way whatever the blocks' timing): a missed early run launches three
// kernels more (the sample's bounds, the early init and run; the plan then goes on as without
// it), a sample of too narrow a span one more (its bounds only), an input below
// hash_dense_early_min_rows none; a kept one not three more (no phase 1, no records' sort), and
// as many for every kept case of the one program (whose plans without differ: 4 keys make few
// records). Cases: dense keys; rows of a
// far key between the sampled rows (missed); such rows dropped by a select (kept); keys at the
// smallest key word (the table's margin cut at word 0); a bool key above an i32 that flips
// between the sampled rows (a word 2^32 away: missed); 4 keys (kept: the least span is 1 by
// default); 30000 keys (two tables, kept); rows between the sampled ones of a key 100 past the
// sample's largest, within the tables' room past the span (kept: the 21760 slots of a one-word
// state leave 880 each side of 20000 keys); 16 keys below a least span of 256; a row count
// below the least.
TEST(GpuHashReduce, EarlyRunOverASampleOfTheRows) {
  RANC_REQUIRE_GPU();
  Schema s{{{"f", Type::Bool}, {"k", Type::I32}, {"v", Type::I32}}, 0};
  constexpr int64_t n = (int64_t{1} << 20) + 5, room = n;
  struct Case {
    const char* what;
    int64_t first_key, keys;
    bool odd_rows;  // rows 16j + 7 for j < 64 take odd_key, odd_f and odd_v
    int64_t odd_key;
    bool odd_f;
    int32_t odd_v;
    bool two_keys;     // reduce by (f, k), else by k after a select v > 0
    int64_t min_rows;  // CodegenOptions::hash_dense_early_min_rows
    int64_t min_span;  // CodegenOptions::hash_dense_early_min_span
    int expected;      // launches with the early run less those without (or kKept)
  };
  constexpr int kKept = -1000;
  int64_t kept_launches = -1;  // (the first kept case's, all of the one-key program)
  const int64_t base = 1000, far = base + 20000 + 30000, lowest = INT32_MIN;
  for (const Case& c : std::vector<Case>{
           {"dense keys", base, 20000, false, 0, false, 1, false, 65536, 1, kKept},
           {"far rows between the sampled", base, 20000, true, far, false, 1, false, 65536, 1, 3},
           {"far rows dropped by the select", base, 20000, true, far, false, -1, false, 65536, 1,
            kKept},
           {"keys at word 0", lowest, 20000, false, 0, false, 1, false, 65536, 1, kKept},
           {"a flipped bool between the sampled", base, 20000, true, base + 5, true, 1, true, 65536,
            1, 3},
           {"4 keys", base, 4, false, 0, false, 1, false, 65536, 1, kKept},
           {"30000 keys (two tables)", base, 30000, false, 0, false, 1, false, 65536, 1, kKept},
           {"rows of a key past the sample, inside the margin", base, 20000, true,
            base + 20000 + 100, false, 1, false, 65536, 1, kKept},
           {"16 keys below the least span", base, 16, false, 0, false, 1, false, 65536, 256, 1},
           {"fewer rows than the least", base, 20000, false, 0, false, 1, false, int64_t{1} << 21,
            1, 0}}) {
    std::mt19937_64 rng(97);
    std::vector<Column> cols;
    for (const auto& a : s.attributes) cols.emplace_back(a.type);
    for (int64_t i = 0; i < n; ++i) {
      const bool odd = c.odd_rows && i % 16 == 7 && i / 16 < 64;
      const int64_t k =
          odd ? c.odd_key
              : c.first_key + static_cast<int64_t>(rng() % static_cast<uint64_t>(c.keys));
      cols[0].append(Value::boolean(odd && c.odd_f));
      cols[1].append(Value::i32(static_cast<int32_t>(k)));
      // (the select keeps 15/16 of the other rows)
      cols[2].append(Value::i32(odd ? c.odd_v : static_cast<int32_t>(rng() >> 34) - (1 << 26)));
    }
    Inputs in;
    in.emplace_back("r", make_relation(s, std::move(cols)));
    ProgramBuilder b;
    Rel r = b.input("r", s.attributes);
    if (c.two_keys)
      b.output(r.reduce({"f", "k"}, {ranc::sum(col("v"), "sv"), count("n")}).sort({"f", "k"}),
               "sums");
    else
      b.output(r.select(col("v") > 0).reduce({"k"}, {ranc::sum(col("v"), "sv")}).sort({"k"}),
               "sums");
    const Program p = b.check();
    const Reference ref = reference(p, in);
    const auto [with, without] =
        runs_with_and_without(p, in, ref,
                              {.hash_records = room,
                               .hash_dense_early = true,
                               .hash_dense_early_min_rows = c.min_rows,
                               .hash_dense_early_min_span = c.min_span},
                              {.hash_records = room, .hash_dense_early = false}, c.what);
    const int64_t more = with.kernel_launches - without.kernel_launches;
    if (c.expected == kKept) {
      EXPECT_FALSE(c.two_keys);
      EXPECT_NE(more, 3) << c.what << ": " << with.kernel_launches
                         << " launches with the early run, " << without.kernel_launches
                         << " without";
      if (kept_launches < 0) kept_launches = with.kernel_launches;
      EXPECT_EQ(with.kernel_launches, kept_launches) << c.what;
    } else
      EXPECT_EQ(more, c.expected) << c.what << ": " << with.kernel_launches
                                  << " launches with the early run, " << without.kernel_launches
                                  << " without";
  }
}

// The partitioned way of the hash group-by (CodegenOptions::hash_partitioned, off by default;
// PartitionGroupAgent): with the early run's sample, spans past its shared-memory tables (4 x
// 21760 one-word keys) of at most 2048 parts of 16384 keys (8192 for two words) are counted by
// part, moved once into their parts and summed a part at a time, against the reference, beside
// the same plan without it (a room for every record, so that plan's path does not depend on the
// blocks' timing). Kept: 2^17 keys (9 parts, ranked by a warp's peers), every ninth key of
// 2^17 (73 parts, an atomic a row), keys from the bottom of the i32 range (its key word 0), a
// heavy key (half the rows), a select in front, a two-word state (sum and count, 17 parts of
// 8192); missed: rows of a far key between the sampled rows (the count's miss flag: phase 1
// then, the sample's and the count's launches more than without); not taken (the sample's
// launch more): a span of 3000 parts (past 2048), and 1000 keys spread over 2^20 values (fewer
// distinct keys in the sample than the way takes: phase 1's tables hold them).
TEST(GpuHashReduce, PartitionedWayOverWideSpans) {
  RANC_REQUIRE_GPU();
  Schema s{{{"k", Type::I32}, {"v", Type::I32}, {"w", Type::I64}}, 0};
  constexpr int64_t n = (int64_t{1} << 20) + 5, room = n;
  struct Case {
    const char* what;
    int64_t first_key, keys, step;
    bool heavy, far_rows, filtered, two_words;
    int expected;  // launches with the partitioned way less those without (or kKept)
  };
  constexpr int kKept = -1000;
  const int64_t base = 1000, lowest = INT32_MIN;
  std::map<int, int64_t> kept_launches;  // (the first kept case's, by the program)
  for (const Case& c : std::vector<Case>{
           {"2^17 keys", base, 1 << 17, 1, false, false, false, false, kKept},
           {"every ninth of 2^17 keys", base, 1 << 17, 9, false, false, false, false, kKept},
           {"keys from key word 0", lowest, 1 << 17, 1, false, false, false, false, kKept},
           {"a heavy key", base, 1 << 17, 3, true, false, false, false, kKept},
           {"a select in front", base, 1 << 17, 1, false, false, true, false, kKept},
           {"a two-word state", base, 1 << 17, 1, false, false, false, true, kKept},
           {"far rows between the sampled", base, 1 << 17, 1, false, true, false, false, 2},
           {"3000 parts' span", base, 1 << 17, 375, false, false, false, false, 1},
           {"1000 keys over 2^20 values", base, 1000, 1000, false, false, false, false, 1}}) {
    std::mt19937_64 rng(131);
    std::vector<Column> cols;
    for (const auto& a : s.attributes) cols.emplace_back(a.type);
    for (int64_t i = 0; i < n; ++i) {
      const bool far = c.far_rows && i % 16 == 7 && i / 16 < 64;
      const int64_t j = c.heavy && rng() % 2 == 0
                            ? c.keys / 3
                            : static_cast<int64_t>(rng() % static_cast<uint64_t>(c.keys));
      const int64_t k = far ? base + c.keys * c.step + 40 * 16384 : c.first_key + c.step * j;
      cols[0].append(Value::i32(static_cast<int32_t>(k)));
      // (i32 values near the type's limits: the 64-bit sums carry; the select keeps 3/4)
      const uint64_t x = rng();
      cols[1].append(Value::i32(x % 4 == 0 ? static_cast<int32_t>(-2147483647 + (x >> 8) % 3)
                                           : static_cast<int32_t>(x >> 34) - (1 << 28)));
      cols[2].append(Value::i64(static_cast<int64_t>(rng() >> 24) - (int64_t{1} << 39)));
    }
    Inputs in;
    in.emplace_back("r", make_relation(s, std::move(cols)));
    ProgramBuilder b;
    Rel r = b.input("r", s.attributes);
    const Rel src = c.filtered ? r.select(col("v") > -2000000000) : r;
    if (c.two_words)
      b.output(src.reduce({"k"}, {ranc::sum(col("v"), "sv"), count("n")}).sort({"k"}), "sums");
    else
      b.output(src.reduce({"k"}, {ranc::sum(col("v"), "sv")}).sort({"k"}), "sums");
    const Program p = b.check();
    const Reference ref = reference(p, in);
    const auto [with, without] = runs_with_and_without(
        p, in, ref, {.hash_records = room, .hash_dense_early = true, .hash_partitioned = true},
        {.hash_records = room, .hash_dense_early = true}, c.what);
    const int64_t more = with.kernel_launches - without.kernel_launches;
    if (c.expected == kKept) {
      // sample, count, starts, init, scatter, run and the dense way's count and write instead
      // of phase 1, the records' sort and merge: neither 1 more (the way not taken) nor 2 (a
      // miss)
      EXPECT_TRUE(more != 1 && more != 2)
          << c.what << ": " << with.kernel_launches << " launches with the partitioned way, "
          << without.kernel_launches << " without";
      // (the same launches for every kept case of one program)
      const int program = c.two_words ? 2 : c.filtered ? 1 : 0;
      if (!kept_launches.count(program)) kept_launches[program] = with.kernel_launches;
      EXPECT_EQ(with.kernel_launches, kept_launches[program]) << c.what;
    } else
      EXPECT_EQ(more, c.expected) << c.what << ": " << with.kernel_launches
                                  << " launches with the partitioned way, "
                                  << without.kernel_launches << " without";
  }
}

// The sorted reduce (reduce.cuh) over input declared sorted, around its tiles (3840 rows on
// sm_90): every row its own group, groups of 16, groups of one tile that start and end at
// tile boundaries, one group over every tile; groups of 2, 3, 4, 5, 7 and 9 rows and of
// random lengths 1..8 and 1..12 (tiles of fewer than 5 rows a group store their groups through
// shared memory, up to its capacity, the rest where they end: reduce.cuh's deferred emits);
// each column staged in shared memory and read in place (CodegenOptions::stage_reduce_inputs);
// i32 sums near the type's limits in 64-bit states beside i64 sums in 128-bit ones; and the
// global reduce's 64-bit i32 sum.
TEST(GpuSortedReduce, AroundItsTilesStagedAndInPlace) {
  RANC_REQUIRE_GPU();
  Schema s{{{"k", Type::I32}, {"v", Type::I32}, {"w", Type::I64}, {"x", Type::F64}}, 0};
  std::mt19937_64 rng(17);
  for (int64_t n : {int64_t{3839}, int64_t{3840}, int64_t{3841}, int64_t{7681}, int64_t{100003}}) {
    for (int64_t per : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}, int64_t{5}, int64_t{7}, int64_t{9},
                        int64_t{16}, int64_t{3840}, int64_t{1} << 40, int64_t{-8}, int64_t{-12}}) {
      std::vector<Column> cols;
      for (const auto& a : s.attributes) cols.emplace_back(a.type);
      int32_t key = -5;
      int64_t left = per < 0 ? 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(-per)) : 0;
      for (int64_t i = 0; i < n; ++i) {
        if (per < 0 && left-- == 0) {  // a new group of 1..-per rows
          ++key;
          left = static_cast<int64_t>(rng() % static_cast<uint64_t>(-per));
        }
        cols[0].append(Value::i32(per < 0 ? key : static_cast<int32_t>(i / per) - 5));
        const int32_t v = static_cast<int32_t>(rng() % 2 ? 2147483647 - rng() % 3 : -2147483647 - 1 + rng() % 3);
        cols[1].append(Value::i32(v));
        cols[2].append(Value::i64(static_cast<int64_t>(rng() % (uint64_t{1} << 41)) - (int64_t{1} << 40)));
        cols[3].append(Value::f64(static_cast<double>(rng() % 1000) / 4.0));
      }
      Inputs in;
      in.emplace_back("r", make_relation(s, std::move(cols)));
      ProgramBuilder b;
      Rel r = b.input("r", s.attributes, 0, {"k"});
      b.output(r.reduce({"k"}, {ranc::sum(col("v"), "sv"), ranc::sum(col("w"), "sw"),
                                ranc::count("n"), ranc::min(col("v"), "mnv"),
                                ranc::max(col("x"), "mxx"), ranc::avg(col("v"), "av")}),
               "all");
      b.output(r.reduce({"k"}, {ranc::sum(col("v"), "sv")}), "sum_i32");
      b.output(r.reduce({}, {ranc::sum(col("v"), "sv"), ranc::count("n")}), "global");
      Program p = b.check();
      for (bool staged : {true, false})
        EXPECT_EQ(run_and_compare(p, in, {.stage_reduce_inputs = staged}), "")
            << "n " << n << ", " << per << " rows a group (negative: random up to), staged " << staged;
    }
  }
}

// A hash join whose build side needs more than kMaxRadixBits partitions (2^23 unique
// 64-bit keys: partitions average 2048 rows, twice a shared-memory table chunk).
TEST(GpuOperatorsLarge, HashJoinBeyondMaxRadixBits) {
  RANC_REQUIRE_GPU();
  const int64_t n = int64_t{1} << 23;
  Case c{n, Dist::Unique, KeyKind::I64};
  auto d = make_data(c, 10);
  ProgramBuilder b;
  Rel r = b.input("r", d.r.attributes);
  Rel q = b.input("q", d.q.attributes);
  b.output(r.join(q, {"k"}, {"qk"}).project({"k", "x", "qv"}), "join");
  EXPECT_EQ(run_and_compare(b.check(), d.inputs, {.join = codegen::JoinAlgorithm::Hash}), "");
}

// The programs of the NVRTC test, on random data.
TEST(GpuOperatorsCoverage, ExpressionAndOperatorPrograms) {
  RANC_REQUIRE_GPU();
  std::mt19937_64 rng(11);
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{77}, int64_t{5000}}) {
    Program e = testing::expressions_program();
    Schema rs = e.node(e.inputs()[0]).schema;
    std::vector<Column> cols;
    for (const auto& a : rs.attributes) cols.push_back(random_column(a.type, n, rng));
    Inputs in;
    in.emplace_back("r", make_relation(rs, std::move(cols)));
    EXPECT_EQ(run_and_compare(e, in), "") << "expressions, n = " << n;

    Program o = testing::operators_program();
    Inputs in2;
    for (NodeId id : o.inputs()) {
      const Node& nd = o.node(id);
      std::vector<Column> c2;
      auto keys = make_keys(Dist::Duplicates, n, rng);
      for (size_t i = 0; i < nd.schema.size(); ++i)
        c2.push_back(i < 4 ? column_from_keys(nd.schema[i].type, keys)
                           : random_column(nd.schema[i].type, n, rng));
      in2.emplace_back(nd.name, make_relation(nd.schema, std::move(c2)));
    }
    EXPECT_EQ(run_and_compare(o, in2), "") << "operators, n = " << n;
    EXPECT_EQ(run_and_compare(o, in2, {.join = codegen::JoinAlgorithm::SortMerge}), "")
        << "operators (sort-merge joins), n = " << n;

    Program h = testing::hash_join_program();
    Inputs in3;
    for (NodeId id : h.inputs()) {
      const Node& nd = h.node(id);
      std::vector<Column> c3;
      auto keys = make_keys(Dist::Duplicates, n, rng);
      for (size_t i = 0; i < nd.schema.size(); ++i)
        c3.push_back(i < 7 ? column_from_keys(nd.schema[i].type, keys)
                           : random_column(nd.schema[i].type, n, rng));
      in3.emplace_back(nd.name, make_relation(nd.schema, std::move(c3)));
    }
    EXPECT_EQ(run_and_compare(h, in3, {.join = codegen::JoinAlgorithm::Hash}), "")
        << "hash joins, n = " << n;
  }
}

}  // namespace
}  // namespace ranc::gputest
