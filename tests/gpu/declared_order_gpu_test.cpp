// Inputs with a declared order ("sorted by"): the planner skips the sorts in front of
// joins, reductions, distinct and set operations, so these programs run the sorted-input
// kernels directly on the bound data. Compared with the CPU reference at awkward sizes
// and distributions, ascending and descending; data that breaks its declared order is
// an ExecutionError on the GPU (and in the reference), never a wrong result.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "gpu_test_util.h"
#include "ranc/dsl.h"
#include "ranc/passes/plan_sort_orders.h"
#include "ranc/ra_ops/ra_ops.h"
#include "ranc/runtime/executor.h"

namespace ranc::gputest {
namespace {

const std::vector<Attribute> kR = {{"k", Type::I32}, {"v", Type::I64}, {"x", Type::I32}};
const std::vector<Attribute> kQ = {{"qk", Type::I32}, {"qv", Type::I32}};

// `rel` sorted by `keys` (the reference's sort: the data a user would bind).
HostRelation sorted(const HostRelation& rel, const std::vector<SortSpec>& keys) {
  ProgramBuilder b;
  b.output(b.input("t", rel.schema().attributes).sort(keys), "t");
  return std::move(execute_reference(b.check(), {{"t", rel}}).at(0));
}

Inputs make_inputs(int64_t n, Dist dist, uint64_t seed, bool descending) {
  std::mt19937_64 rng(seed);
  const int64_t nq = std::max<int64_t>(1, n / 2);
  auto rk = make_keys(dist, n, rng, false, nq);
  auto qk = make_keys(dist, nq, rng, true, nq);
  HostRelation r = make_relation(Schema{kR, 0},
                                 {column_from_keys(Type::I32, rk), random_column(Type::I64, n, rng),
                                  random_column(Type::I32, n, rng)});
  HostRelation q = make_relation(
      Schema{kQ, 0}, {column_from_keys(Type::I32, qk), random_column(Type::I32, nq, rng)});
  SortSpec rs("k", descending), qs("qk", descending);
  Inputs in;
  in.emplace_back("r", sorted(r, {rs}));
  in.emplace_back("q", sorted(q, {qs}));
  return in;
}

Program declared_program(bool descending) {
  ProgramBuilder b;
  Rel r = b.input("r", kR, 0, {SortSpec("k", descending)});
  Rel q = b.input("q", kQ, 0, {SortSpec("qk", descending)});
  b.output(r.join(q, {"k"}, {"qk"}), "join");
  b.output(r.join(q, {"k"}, {"qk"}, JoinKind::Inner, col("x") < col("qv")), "join_residual");
  // A global reduce folded into the one-pass merge (join_reduce.cuh), which also checks
  // the declared order of r; the select stays after the join (it reads both sides).
  b.output(r.join(q, {"k"}, {"qk"})
               .select(col("x") < col("qv"))
               .reduce({}, {sum(col("v"), "sv"), count("n"), max(col("x"), "mx")}),
           "join_fold");
  b.output(r.semi_join(q, {"k"}, {"qk"}), "semi");
  b.output(r.anti_join(q, {"k"}, {"qk"}), "anti");
  b.output(r.reduce({"k"}, {sum(col("v"), "sv"), count("n"), min(col("x"), "mx")}), "reduce");
  b.output(r.project({"k"}).distinct(), "distinct");
  auto a = r.project({"k"}), c = q.project({as(col("qk"), "k")});
  b.output(a.union_with(c), "union");
  b.output(a.intersect(c), "intersect");
  b.output(a.difference(c), "difference");
  return b.check();
}

struct Case {
  int64_t n;
  Dist dist;
  bool descending;
};

class GpuDeclaredOrder : public ::testing::TestWithParam<Case> {};

TEST_P(GpuDeclaredOrder, MatchesTheReference) {
  RANC_REQUIRE_GPU();
  const Case c = GetParam();
  Inputs in = make_inputs(c.n, c.dist, 11 + static_cast<uint64_t>(c.n), c.descending);
  Program p = declared_program(c.descending);
  // With sort-merge joins nothing is sorted on the device: every operator reads the
  // bound rows in their declared order.
  codegen::CodegenOptions sm;
  sm.join = codegen::JoinAlgorithm::SortMerge;
  std::string plan = passes::print_physical_plan(passes::plan_sort_orders(p, sm));
  EXPECT_EQ(plan.find("(inserted)"), std::string::npos) << plan;
  EXPECT_EQ(run_and_compare(p, in, sm), "") << plan;
  EXPECT_EQ(run_and_compare(p, in), "");
  // The one-pass merges without their right keys staged in shared memory (staged, the
  // default, above: descending keys invert their order words).
  sm.stage_join_keys = false;
  EXPECT_EQ(run_and_compare(p, in, sm), "") << "unstaged keys";
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (int64_t n : {0, 1, 31, 33, 4097, 100003})
    for (Dist d : {Dist::Unique, Dist::Duplicates, Dist::Zipf, Dist::NoMatch})
      for (bool desc : {false, true}) out.push_back({n, d, desc});
  return out;
}
std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return fmt::format("n{}_{}_{}", info.param.n, dist_name(info.param.dist),
                     info.param.descending ? "desc" : "asc");
}
INSTANTIATE_TEST_SUITE_P(Sizes, GpuDeclaredOrder, ::testing::ValuesIn(cases()), case_name);

// Data out of its declared order: the input's check kernel stops the run with an
// ExecutionError that names the relation and the order (the reference agrees).
TEST(GpuDeclaredOrderViolation, IsAnExecutionError) {
  RANC_REQUIRE_GPU();
  for (int64_t n : {2, 4097, 100003}) {
    Inputs in = make_inputs(n, Dist::Duplicates, 5, false);
    // Make one row in the middle order after its successor.
    HostRelation& r = in[0].second;
    std::vector<int64_t> keys;
    for (size_t i = 0; i < r.num_rows(); ++i) keys.push_back(r.column(0).get(i).to_int64());
    const size_t at = (keys.size() - 1) / 2;
    keys[at] = keys[at + 1] + 1;
    std::vector<Column> cols{column_from_keys(Type::I32, keys)};
    for (size_t c = 1; c < r.num_columns(); ++c) cols.push_back(r.column(c));
    r = make_relation(r.schema(), std::move(cols));

    Program p = declared_program(false);
    EXPECT_THROW(execute_reference(p, in), UserError);
    rt::Plan plan = codegen::generate_plan(p);
    std::map<std::string, const HostRelation*> bind;
    for (const auto& [name, rel] : in) bind[name] = &rel;
    rt::Executor ex;
    try {
      (void)ex.run(plan, bind);
      ADD_FAILURE() << "n=" << n << ": unsorted input accepted";
    } catch (const UserError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Execution) << e.what();
      EXPECT_NE(std::string(e.what()).find("input relation 'r' is not sorted by (k)"),
                std::string::npos)
          << e.what();
    }
  }
}

// A reduce grouping by exactly the declared keys checks the order itself, in its own
// pass, and so does a set operation whose tuples pack into one order word ((k i32, v i32):
// SetOpKeysAgent checks the words it stages); wider tuples ((k i32, v i64)) use the check
// kernel: results match the reference on sorted data with duplicates, and data out of order
// is still an ExecutionError (never a crash or a wrong result), wherever the bad row is.
TEST(GpuDeclaredOrderFused, ReduceAndSetOperations) {
  RANC_REQUIRE_GPU();
  for (Type vt : {Type::I64, Type::I32})
  for (int64_t n : {0, 1, 2, 33, 4097, 100003}) {
    SCOPED_TRACE(fmt::format("v {}", type_name(vt)));
    const std::vector<Attribute> kS = {{"k", Type::I32}, {"v", vt}};
    std::mt19937_64 rng(77 + static_cast<uint64_t>(n));
    auto make = [&](int64_t rows) {
      auto k = make_keys(Dist::Duplicates, rows, rng);
      std::vector<int64_t> v;
      for (int64_t i = 0; i < rows; ++i) v.push_back(static_cast<int64_t>(rng() % 3));
      return sorted(make_relation(Schema{kS, 0},
                                  {column_from_keys(Type::I32, k), column_from_keys(vt, v)}),
                    {"k", "v"});
    };
    Inputs in;
    in.emplace_back("a", make(n));
    in.emplace_back("b", make(n / 2 + 1));
    std::vector<Program> programs;
    for (int op = 0; op < 6; ++op) {
      ProgramBuilder b;
      Rel a = b.input("a", kS, 0, {"k", "v"}), c = b.input("b", kS, 0, {"k", "v"});
      // Joins (a sort-merge join checks its left input's order in its own kernel, in one
      // pass or, with a residual, while counting; the projected right input has the kernel).
      Rel cp = c.project({as(col("k"), "ck"), as(col("v"), "cv")});
      Rel o = op == 0   ? a.union_with(c)
              : op == 1 ? a.intersect(c)
              : op == 2 ? a.difference(c)
              : op == 3 ? a.reduce({"k", "v"}, {count("n")})
              : op == 4 ? a.join(cp, {"k"}, {"ck"})
                        : a.join(cp, {"k"}, {"ck"}, JoinKind::Inner, col("v") <= col("cv"));
      b.output(o, "out");
      programs.push_back(b.check());
    }
    for (size_t i = 0; i < programs.size(); ++i) {
      // The reduce checks the order itself, and so do the keyed set operations and the joins
      // (of their left input); wider set operations use the check kernel.
      rt::Plan plan = codegen::generate_plan(programs[i], {.join = codegen::JoinAlgorithm::SortMerge});
      if (i >= 4)
        EXPECT_NE(plan.source.find("out_of_order("), std::string::npos) << "program " << i;
      else
        EXPECT_EQ(plan.source.find("_check_order(") == std::string::npos, i == 3 || vt == Type::I32)
            << "program " << i;
      EXPECT_EQ(run_and_compare(programs[i], in), "") << "program " << i << " n=" << n;
    }
    if (n < 2) continue;
    // Break the order of a (first, middle or last pair) and of b.
    for (int where = 0; where < 4; ++where) {
      Inputs bad = in;
      HostRelation& r = bad[where == 3 ? 1 : 0].second;
      std::vector<int64_t> k, v;
      for (size_t i = 0; i < r.num_rows(); ++i) {
        k.push_back(r.column(0).get(i).to_int64());
        v.push_back(r.column(1).get(i).to_int64());
      }
      if (k.size() < 2) continue;
      const size_t at = where == 0 ? 0 : where == 1 ? (k.size() - 1) / 2 : k.size() - 2;
      k[at] = k[at + 1] + 1;  // row at now orders after row at + 1
      r = make_relation(r.schema(), {column_from_keys(Type::I32, k), column_from_keys(vt, v)});
      for (size_t i = 0; i < programs.size(); ++i) {
        if (where == 3 && i == 3) continue;  // the reduce does not read b
        rt::Plan plan = codegen::generate_plan(programs[i], {.join = codegen::JoinAlgorithm::SortMerge});
        std::map<std::string, const HostRelation*> bind;
        for (const auto& [name, rel] : bad) bind[name] = &rel;
        rt::Executor ex;
        try {
          (void)ex.run(plan, bind);
          ADD_FAILURE() << "program " << i << " n=" << n << " where=" << where
                        << ": unsorted input accepted";
        } catch (const UserError& e) {
          EXPECT_EQ(e.kind(), ErrorKind::Execution) << e.what();
          EXPECT_NE(std::string(e.what()).find("is not sorted by (k, v)"), std::string::npos)
              << e.what();
        }
      }
    }
  }
}

// Union, intersect and difference of declared-sorted inputs whose tuples pack into one order
// word: staged (set_ops.cuh's SetOpStagedAgent copies each tile's rows of every column into
// shared memory, A's and B's rows of a column in one array at 1-, 4- and 8-byte widths) and
// unstaged, against the reference, around the merge tiles (3840 rows on sm_90), with
// duplicates, an empty input on either side and inputs that share no tuple.
TEST(GpuDeclaredSetOps, StagedAndUnstaged) {
  RANC_REQUIRE_GPU();
  const std::vector<std::vector<Attribute>> schemas = {
      {{"k", Type::I32}},
      {{"k", Type::I32}, {"v", Type::I32}},
      {{"k", Type::I64}},
      {{"b", Type::Bool}, {"k", Type::I32}},
      {{"k", Type::Date}, {"v", Type::F32}}};
  const std::vector<std::pair<int64_t, int64_t>> sizes = {
      {0, 5}, {5, 0}, {1, 1}, {3839, 3840}, {3841, 2}, {7683, 7681}, {100003, 50001}};
  std::mt19937_64 rng(2027);
  for (size_t si = 0; si < schemas.size(); ++si) {
    const auto& attrs = schemas[si];
    std::vector<std::string> names;
    for (const auto& a : attrs) names.push_back(a.name);
    for (const auto& [na, nb] : sizes) {
      for (Dist dist : {Dist::Duplicates, Dist::NoMatch}) {
        auto make = [&](int64_t rows, bool other) {
          std::vector<Column> cols;
          for (size_t c = 0; c < attrs.size(); ++c) {
            std::vector<int64_t> k = make_keys(dist, rows, rng, other);
            // A second attribute of few values, so tuples repeat and differ in it.
            if (c > 0) for (auto& x : k) x %= 3;
            cols.push_back(column_from_keys(attrs[c].type, k));
          }
          return sorted(make_relation(Schema{attrs, 0}, std::move(cols)),
                        std::vector<SortSpec>(names.begin(), names.end()));
        };
        Inputs in;
        in.emplace_back("a", make(na, false));
        in.emplace_back("b", make(nb, true));
        ProgramBuilder b;
        std::vector<SortSpec> order(names.begin(), names.end());
        Rel x = b.input("a", attrs, 0, order), y = b.input("b", attrs, 0, order);
        b.output(x.union_with(y), "union");
        b.output(x.intersect(y), "intersect");
        b.output(x.difference(y), "difference");
        b.output(y.difference(x), "difference_ba");
        const Program p = b.check();
        for (bool stage : {true, false}) {
          SCOPED_TRACE(fmt::format("schema {}, {} x {} rows, {}, staged {}", si, na, nb,
                                   dist_name(dist), stage));
          const rt::Plan plan = codegen::generate_plan(p, {.stage_set_op_inputs = stage});
          EXPECT_EQ(plan.source.find("SetOpStagedAgent<") != std::string::npos, stage);
          EXPECT_EQ(run_and_compare(p, in, {.stage_set_op_inputs = stage}), "");
        }
      }
    }
  }
}

// A declared-sorted input whose one consumer is a select: the select's view checks the order
// in whatever kernel reads it (ra_ops/select/lowering.cpp), with no check kernel: the select
// materialised, fused into a hash join's probe side, into a global reduce, into a sorted
// reduce by the declared keys, before a limit, a sort-merge join and a set operation; fused
// and unfused. Sorted data gives the reference's results; a pair out of order anywhere (first,
// middle, last; also in rows the select drops) is an ExecutionError naming the relation.
TEST(GpuDeclaredOrderFused, SelectChecksItsInput) {
  RANC_REQUIRE_GPU();
  const std::vector<Attribute> kS = {{"k", Type::I32}, {"v", Type::I32}};
  std::vector<Program> programs;
  for (int op = 0; op < 8; ++op) {
    ProgramBuilder b;
    Rel a = b.input("a", kS, 0, {"k", "v"});
    Rel c = b.input("c", {{"ck", Type::I32}, {"cv", Type::I32}}, 0);
    Rel s = a.select(col("v") < 2);
    Rel o = op == 0   ? s
            : op == 1 ? s.join(c, {"k"}, {"ck"})
            : op == 2 ? s.reduce({}, {sum(col("v"), "sv"), count("n"), max(col("k"), "mk")})
            : op == 3 ? s.reduce({"k"}, {count("n"), sum(col("v"), "sv")})
            : op == 4 ? s.limit(7)
            : op == 5 ? s.project({"k", as(col("v") + 1, "w")}).distinct()
            : op == 6 ? s.project({"k"}).union_with(c.project({as(col("ck"), "k")}))
                      : s.select(col("k") > 3).project({"k"});
    b.output(o, "out");
    programs.push_back(b.check());
  }
  const std::vector<codegen::CodegenOptions> variants = {
      {.join = codegen::JoinAlgorithm::Hash},
      {.join = codegen::JoinAlgorithm::SortMerge},
      {.join = codegen::JoinAlgorithm::Hash, .fusion = false}};
  for (int64_t n : {0, 1, 2, 33, 4097, 100003}) {
    std::mt19937_64 rng(91 + static_cast<uint64_t>(n));
    auto k = make_keys(Dist::Duplicates, n, rng);
    std::vector<int64_t> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<int64_t>(rng() % 4));
    Inputs in;
    in.emplace_back("a", sorted(make_relation(Schema{kS, 0}, {column_from_keys(Type::I32, k),
                                                             column_from_keys(Type::I32, v)}),
                                {"k", "v"}));
    const int64_t nc = n / 3 + 1;
    in.emplace_back("c", make_relation(Schema{{{"ck", Type::I32}, {"cv", Type::I32}}, 0},
                                       {column_from_keys(Type::I32, make_keys(Dist::Unique, nc, rng)),
                                        random_column(Type::I32, nc, rng)}));
    for (size_t i = 0; i < programs.size(); ++i) {
      const rt::Plan plan = codegen::generate_plan(programs[i], variants[0]);
      EXPECT_EQ(plan.source.find("n0_check_order("), std::string::npos) << "program " << i;
      for (size_t o = 0; o < variants.size(); ++o)
        EXPECT_EQ(run_and_compare(programs[i], in, variants[o]), "")
            << "program " << i << " options " << o << " n=" << n;
    }
    if (n < 2) continue;
    for (int where = 0; where < 3; ++where) {
      Inputs bad = in;
      HostRelation& r = bad[0].second;
      std::vector<int64_t> bk, bv;
      for (size_t i = 0; i < r.num_rows(); ++i) {
        bk.push_back(r.column(0).get(i).to_int64());
        bv.push_back(r.column(1).get(i).to_int64());
      }
      const size_t at = where == 0 ? 0 : where == 1 ? (bk.size() - 1) / 2 : bk.size() - 2;
      bk[at] = bk[at + 1] + 1;  // row at now orders after row at + 1
      bv[at] = 3;               // and the select drops it
      r = make_relation(r.schema(), {column_from_keys(Type::I32, bk), column_from_keys(Type::I32, bv)});
      for (size_t i = 0; i < programs.size(); ++i)
        for (size_t o = 0; o < variants.size(); ++o) {
          const rt::Plan plan = codegen::generate_plan(programs[i], variants[o]);
          std::map<std::string, const HostRelation*> bind;
          for (const auto& [name, rel] : bad) bind[name] = &rel;
          rt::Executor ex;
          try {
            (void)ex.run(plan, bind);
            ADD_FAILURE() << "program " << i << " options " << o << " n=" << n << " where=" << where
                          << ": unsorted input accepted";
          } catch (const UserError& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Execution) << e.what();
            EXPECT_NE(std::string(e.what()).find("input relation 'a' is not sorted by (k, v)"),
                      std::string::npos)
                << e.what();
          }
        }
    }
  }
}

}  // namespace
}  // namespace ranc::gputest
