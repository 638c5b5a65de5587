// Seeded random programs (random operator chains of 3 to 8 operators over random small
// relations, valid by construction) run on the GPU fused and unfused and compared with the
// CPU reference. 200 batches of 25 chains (5000 programs): each batch is one program with
// 25 outputs, compiled once fused and once unfused; the units compile on every core
// (NVRTC is thread-safe; the shared precompiled header is off for that) and each batch runs
// as soon as its two units are in. Most batches compile with CodegenOptions::fast_compile
// (NVRTC --Ofast-compile=mid, several times faster to compile), every
// RANC_RANDOM_FULL_EVERY-th (by seed) with the default options. A failure prints the batch
// seed and the chain (output) name; RANC_SEED=<n> changes the base seed,
// RANC_RANDOM_BATCHES=<n> the number of batches, RANC_RANDOM_CHAINS=<n> the chains per
// batch; RANC_RANDOM_PRINT=1 makes the CPU test AreValidByConstruction print every batch's
// program and RANC_RANDOM_DUMP=<dir> write its CUDA sources (b<k>_f.cu, b<k>_u.cu). The join
// algorithm follows the batch seed (auto, hash, sort-merge in turn).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "gpu_test_util.h"
#include "ranc/dsl.h"
#include "ranc/passes/lower_distinct_aggregates.h"
#include "ranc/passes/lower_nulls.h"
#include "ranc/passes/lower_outer_joins.h"
#include "ranc/passes/lower_scalar_subqueries.h"
#include "ranc/ra_ops/ra_ops.h"
#include "sql_programs.h"
#include "test_programs.h"
#include "ranc/runtime/device.h"
#include "ranc/runtime/executor.h"
#include "ranc/runtime/plan_validate.h"

namespace ranc::gputest {
namespace {

struct Cur {
  Rel rel;
  std::vector<Attribute> attrs;
  bool sorted = false;
  // The rows it is expected to have, about (inputs have at most 150; a join's key takes
  // about 10-20 values, a product's right side keeps about 3/20 of B). A join or product
  // that would take it past kMaxExpectedRows is a select instead: chains of them grow
  // without bound (one batch's CPU reference needed more than 24 GB before this).
  double rows = 150;
};
constexpr double kMaxExpectedRows = 3e5;

class Generator {
 public:
  // Odd seeds: nullable attributes with NULLs (a quarter of their values, or all of them in
  // some relations), and the SQL steps (outer joins, union all, is null, coalesce, count(x),
  // count(distinct x)).
  explicit Generator(uint64_t seed) : rng_(seed), nulls_(seed % 2 == 1) {}

  // Inputs A(a_i i32, a_l i64, a_f f64, a_s string, a_b bool), B(b_i i32, b_l i64, b_f f64).
  Inputs make_inputs() {
    Inputs in;
    for (int which = 0; which < 2; ++which) {
      Schema s = which == 0 ? schema_a() : schema_b();
      int64_t n = pick(0, 4) == 0 ? pick(0, 2) : pick(0, 150);
      const double null_rate = pick(0, 5) == 0 ? 1.0 : 0.25;
      std::vector<Column> cols;
      for (const auto& a : s.attributes) {
        std::vector<int64_t> keys;
        for (int64_t i = 0; i < n; ++i) keys.push_back(pick(0, a.type == Type::I64 ? 9 : 19));
        Column c = a.type == Type::String ? random_column(Type::String, n, rng_)
                                          : column_from_keys(a.type, keys);
        if (nulls_ && nullable(a.name)) {
          Column x(a.type, true);
          for (int64_t i = 0; i < n; ++i)
            x.append(std::uniform_real_distribution<double>(0, 1)(rng_) < null_rate
                         ? Value::null(a.type)
                         : c.get(static_cast<size_t>(i)));
          c = std::move(x);
        }
        cols.push_back(std::move(c));
      }
      in.emplace_back(which == 0 ? "A" : "B", make_relation(schema_of(s), std::move(cols)));
    }
    return in;
  }

  static Schema schema_a() {
    return Schema{{{"a_i", Type::I32},
                   {"a_l", Type::I64},
                   {"a_f", Type::F64},
                   {"a_s", Type::String},
                   {"a_b", Type::Bool}},
                  0};
  }
  static Schema schema_b() {
    return Schema{{{"b_i", Type::I32}, {"b_l", Type::I64}, {"b_f", Type::F64}}, 0};
  }
  static bool nullable(const std::string& a) {
    return a == "a_i" || a == "a_s" || a == "a_f" || a == "b_l" || a == "b_i";
  }
  // The schema with the nullable attributes of this batch marked.
  Schema schema_of(Schema s) const {
    for (auto& a : s.attributes) a.nullable = nulls_ && nullable(a.name);
    return s;
  }

  void build(ProgramBuilder& b, int chains) {
    const Schema sa = schema_of(schema_a()), sb = schema_of(schema_b());
    a_ = {b.input("A", sa.attributes), sa.attributes, false};
    b_ = {b.input("B", sb.attributes), sb.attributes, false};
    for (int c = 0; c < chains; ++c) {
      Cur cur = pick(0, 1) ? a_ : b_;
      int ops = static_cast<int>(pick(3, 8));
      for (int k = 0; k < ops; ++k) cur = step(cur);
      b.output(cur.rel, fmt::format("chain{}", c));
    }
  }

 private:
  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  std::string fresh(const char* p) { return fmt::format("{}{}", p, counter_++); }
  const Attribute& any(const Cur& c) {
    return c.attrs[static_cast<size_t>(pick(0, static_cast<int64_t>(c.attrs.size()) - 1))];
  }
  const Attribute* of_type(const std::vector<Attribute>& attrs, std::initializer_list<Type> types) {
    std::vector<const Attribute*> ok;
    for (const auto& a : attrs)
      for (Type t : types)
        if (a.type == t) ok.push_back(&a);
    if (ok.empty()) return nullptr;
    return ok[static_cast<size_t>(pick(0, static_cast<int64_t>(ok.size()) - 1))];
  }

  Expr predicate(const Cur& c) {
    const Attribute& a = any(c);
    if (nulls_ && pick(0, 3) == 0) return pick(0, 1) ? is_null(col(a.name)) : is_not_null(col(a.name));
    switch (a.type) {
      case Type::I32:
      case Type::I64:
        return pick(0, 1) ? col(a.name) > static_cast<int>(pick(0, 15)) : col(a.name) % 3 == 0;
      case Type::F64:
        return col(a.name) < 2.5;
      case Type::String:
        return pick(0, 1) ? col(a.name) < "date" : like(col(a.name), "%an%");
      case Type::Bool:
        return col(a.name);
      default:
        return col(a.name) == col(a.name);
    }
  }

  // The other input with fresh names (so joins and products have disjoint names).
  Cur renamed(const Cur& base) {
    std::vector<Projection> ps;
    Cur out;
    for (const auto& a : base.attrs) {
      std::string n = fresh("r");
      ps.push_back(as(col(a.name), n));
      out.attrs.push_back({n, a.type});
    }
    out.rel = base.rel.project(ps);
    return out;
  }

  Cur step(const Cur& cur) {
    Cur out = cur;
    switch (pick(0, 9)) {
      case 0:
      case 1:
        out.rel = cur.rel.select(predicate(cur));
        return out;
      case 2: {  // project: a subset in random order plus maybe a computed attribute
        std::vector<Attribute> attrs = cur.attrs;
        std::shuffle(attrs.begin(), attrs.end(), rng_);
        attrs.resize(static_cast<size_t>(pick(1, static_cast<int64_t>(attrs.size()))));
        std::vector<Projection> ps;
        for (const auto& a : attrs) ps.push_back(Projection(a.name));
        if (const Attribute* x = of_type(cur.attrs, {Type::I32, Type::I64}); x && pick(0, 1)) {
          std::string n = fresh("p");
          Expr e = col(x->name) * 3 + 1;
          if (nulls_ && pick(0, 1)) e = coalesce({e, Expr(0)});  // i32 0 promotes to i64
          ps.push_back(as(e, n));
          attrs.push_back({n, x->type});
        }
        out.rel = cur.rel.project(ps);
        out.attrs = attrs;
        out.sorted = false;  // the kept prefix of the order is not tracked here
        return out;
      }
      case 3: {  // sort, maybe then limit
        std::vector<SortSpec> keys;
        for (int k = 0, nk = static_cast<int>(pick(1, 2)); k < nk; ++k) {
          const std::string& name = any(cur).name;
          bool dup = false;
          for (const auto& s : keys) dup = dup || s.attr == name;
          if (!dup) keys.push_back(SortSpec(name, pick(0, 1) == 1));
        }
        out.rel = cur.rel.sort(keys);
        out.sorted = true;
        if (pick(0, 1)) out.rel = out.rel.limit(pick(0, 20), pick(0, 5));
        return out;
      }
      case 4:
        if (cur.sorted) {
          out.rel = cur.rel.limit(pick(0, 30), pick(0, 3));
          return out;
        }
        [[fallthrough]];
      case 5:
        out.rel = cur.rel.distinct();
        return out;
      case 6: {  // reduce
        std::vector<std::string> keys;
        std::vector<Attribute> attrs;
        for (int k = 0, nk = static_cast<int>(pick(0, 2)); k < nk; ++k) {
          const Attribute& a = any(cur);
          if (std::find(keys.begin(), keys.end(), a.name) != keys.end()) continue;
          keys.push_back(a.name);
          attrs.push_back(a);
        }
        std::vector<Aggregate> aggs;
        std::string n = fresh("n");
        aggs.push_back(ranc::count(n));
        attrs.push_back({n, Type::I64});
        if (nulls_ && pick(0, 1)) {
          const Attribute& x = any(cur);
          n = fresh("c");
          Aggregate c = ranc::count(col(x.name), n);
          c.distinct = pick(0, 1) == 1;
          aggs.push_back(c);
          attrs.push_back({n, Type::I64});
        }
        if (const Attribute* x = of_type(cur.attrs, {Type::I32, Type::I64})) {
          n = fresh("s");
          aggs.push_back(ranc::sum(col(x->name), n));
          attrs.push_back({n, Type::I64});
        }
        if (const Attribute* x =
                of_type(cur.attrs, {Type::I32, Type::I64, Type::F64, Type::String})) {
          n = fresh("m");
          aggs.push_back(pick(0, 1) ? ranc::min(col(x->name), n) : ranc::max(col(x->name), n));
          attrs.push_back({n, x->type});
        }
        out.rel = cur.rel.reduce(keys, aggs);
        out.attrs = attrs;
        out.sorted = false;
        return out;
      }
      case 7: {  // join
        if (cur.rows * 150 / 10 > kMaxExpectedRows) {
          out.rel = cur.rel.select(predicate(cur));
          return out;
        }
        Cur other = renamed(pick(0, 1) ? a_ : b_);
        const Attribute* lk = of_type(cur.attrs, {Type::I32, Type::I64, Type::F64, Type::String});
        if (!lk) return out;
        const Attribute* rk = of_type(other.attrs, {lk->type});
        if (!rk) return out;
        JoinKind kind = static_cast<JoinKind>(pick(0, nulls_ ? 5 : 2));
        Expr residual;
        std::vector<Attribute> joined = cur.attrs;
        for (const auto& a : other.attrs)
          if (a.name != rk->name) joined.push_back(a);
        if (pick(0, 2) == 0) {
          const Attribute* x = of_type(cur.attrs, {Type::I32});
          const Attribute* y = nullptr;
          for (const auto& a : other.attrs)
            if (a.type == Type::I32 && a.name != rk->name) y = &a;
          if (x && y) residual = col(x->name) < col(y->name);
        }
        out.rel = cur.rel.join(other.rel, {lk->name}, {rk->name}, kind, residual);
        if (kind != JoinKind::Semi && kind != JoinKind::Anti) {
          out.attrs = joined;
          out.rows = cur.rows * 150 / 10 + cur.rows;  // outer joins keep unmatched rows
        }
        out.sorted = false;
        return out;
      }
      case 8: {  // set operation over one attribute
        const Attribute& x = any(cur);
        Cur other = pick(0, 1) ? a_ : b_;
        const Attribute* y = of_type(other.attrs, {x.type});
        if (!y) return out;
        Rel l = cur.rel.project({x.name}), r = other.rel.project({y->name});
        int op = static_cast<int>(pick(0, nulls_ ? 3 : 2));
        out.rel = op == 0   ? l.union_with(r)
                  : op == 1 ? l.intersect(r)
                  : op == 2 ? l.difference(r)
                            : l.union_all(r);
        out.attrs = {x};
        out.sorted = false;
        out.rows = cur.rows + 150;
        return out;
      }
      default: {  // product with a small selection of B
        if (cur.rows * 150 * 3 / 20 > kMaxExpectedRows) {
          out.rel = cur.rel.select(predicate(cur));
          return out;
        }
        Cur other = renamed(b_);
        other.rel = other.rel.select(col(other.attrs[0].name) < 3);
        out.rel = cur.rel.product(other.rel);
        out.attrs.insert(out.attrs.end(), other.attrs.begin(), other.attrs.end());
        out.sorted = false;
        out.rows = cur.rows * 150 * 3 / 20;
        return out;
      }
    }
  }

  std::mt19937_64 rng_;
  bool nulls_;
  int counter_ = 0;
  Cur a_, b_;
};

uint64_t base_seed() {
  const char* s = std::getenv("RANC_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261122;
}
int batches() {
  const char* s = std::getenv("RANC_RANDOM_BATCHES");
  return s ? std::atoi(s) : 200;
}
int chains() {
  const char* s = std::getenv("RANC_RANDOM_CHAINS");
  return s ? std::atoi(s) : 25;
}

// The join algorithm of a batch, from its seed so that RANC_SEED reproduces it: auto,
// hash and sort-merge in turn.
// Every full_every()-th batch (by seed) compiles with the default NVRTC options, the others
// with --Ofast-compile=mid (CodegenOptions::fast_compile: the same results, compiled several
// times faster): 5000 programs fused and unfused are 400 units of ~350-450 kernels each.
// RANC_RANDOM_FULL_EVERY=1 compiles every batch as ranc does by default.
int full_every() {
  const char* s = std::getenv("RANC_RANDOM_FULL_EVERY");
  return s ? std::max(1, std::atoi(s)) : 50;
}
codegen::CodegenOptions batch_options(uint64_t seed) {
  constexpr codegen::JoinAlgorithm kAlgorithms[] = {codegen::JoinAlgorithm::Auto,
                                                    codegen::JoinAlgorithm::Hash,
                                                    codegen::JoinAlgorithm::SortMerge};
  codegen::CodegenOptions o{.join = kAlgorithms[seed % 3]};
  o.fast_compile = seed % static_cast<uint64_t>(full_every()) != 0;
  // Every other batch of each join algorithm gives the hash group-by's records a small room, so
  // a reduce whose blocks' partial groups pass it sorts its input (its way out for many groups,
  // which the batches' sizes would otherwise never reach): one record in half of those batches
  // (two groups or more sort), 40 in the other half (more than 40 groups, or blocks over one
  // tile whose partial groups pass 40, sort; fewer keep the records). In those batches the dense
  // way takes every span of keys that fits the room (hash_dense_min_slots = 1): a room of 1 takes
  // it for one key, 40 for spans of up to 40 keys; past that they sort. Half of those batches
  // merge in shared-memory tables first (the default for such spans), half in the device's
  // table alone (hash_dense_shared_bytes = 0); half of the former run speculatively over the
  // span of the records' keys first (hash_dense_speculate; such small rooms often miss: the
  // plan then finds the bounds as without).
  if ((seed / 3) % 2 == 1) {
    o.hash_records = (seed / 3) % 4 == 3 ? 40 : 1;
    o.hash_dense_min_slots = 1;
    if ((seed / 12) % 2 == 1)
      o.hash_dense_shared_bytes = 0;
    else
      o.hash_dense_speculate = (seed / 24) % 2 == 1;
  }
  return o;
}
std::string join_name(const codegen::CodegenOptions& o) {
  std::string s = o.join == codegen::JoinAlgorithm::Hash        ? "hash"
                  : o.join == codegen::JoinAlgorithm::SortMerge ? "sort-merge"
                                                                : "auto";
  return s + (o.fast_compile ? " joins, fast compile" : " joins") +
         (o.hash_records > 0
              ? fmt::format(", hash group-by dense ({}) or sorting past {} record{}",
                            o.hash_dense_shared_bytes == 0 ? "device table"
                            : o.hash_dense_speculate       ? "shared-memory tables, speculative"
                                                           : "shared-memory tables",
                            o.hash_records, o.hash_records == 1 ? "" : "s")
              : "");
}

// Without a GPU: every generated program checks and plans into a valid plan, fused and unfused.
// Batch k's inputs and checked program; nullopt (with a failure recorded) when the
// generated program does not check.
struct Batch {
  uint64_t seed;
  Inputs inputs;
  Program program;
};
std::optional<Batch> make_batch(int k) {
  uint64_t seed = base_seed() + static_cast<uint64_t>(k);
  Generator g(seed);
  Inputs in = g.make_inputs();
  ProgramBuilder b;
  g.build(b, chains());
  try {
    return Batch{seed, std::move(in), b.check()};
  } catch (const UserError& e) {
    ADD_FAILURE() << "RANC_SEED=" << seed << ": generated program does not check: " << e.what();
    return std::nullopt;
  }
}

TEST(RandomPrograms, AreValidByConstruction) {
  for (int k = 0; k < batches(); ++k) {
    std::optional<Batch> batch = make_batch(k);
    if (!batch) continue;
    const uint64_t seed = batch->seed;
    const Program& p = batch->program;
    if (std::getenv("RANC_RANDOM_PRINT")) std::printf("seed %llu:\n%s\n", static_cast<unsigned long long>(seed), print_program(p).c_str());
    // Fused and unfused, and every kernel holds exactly its fused group.
    for (bool fusion : {true, false}) {
      codegen::CodegenOptions o = batch_options(seed);
      o.fusion = fusion;
      try {
        passes::PipelineResult r = passes::run_pipeline(p, o);
        EXPECT_EQ(testing::kernel_group_mismatch(r), "") << "seed " << seed << "\n"
                                                         << print_program(p);
        // The plan the executor would run is well formed (every launched kernel is defined
        // once, shared kernels included; every buffer allocated before use).
        rt::validate_plan(r.plan);
        if (const char* dir = std::getenv("RANC_RANDOM_DUMP")) {
          rt::Plan plan = codegen::generate_plan(p, o);
          std::FILE* f = std::fopen(fmt::format("{}/b{}_{}.cu", dir, k, fusion ? "f" : "u").c_str(), "w");
          if (f) { std::fputs(plan.source.c_str(), f); std::fclose(f); }
          f = std::fopen(fmt::format("{}/b{}_{}.launches", dir, k, fusion ? "f" : "u").c_str(), "w");
          for (const auto& st : plan.steps)
            if (const auto* l = std::get_if<rt::Launch>(&st); l && f) std::fprintf(f, "%s\n", l->kernel.c_str());
          if (f) std::fclose(f);
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << "seed " << seed << (fusion ? " fused: " : " unfused: ") << e.what();
      }
    }
  }
}

// Without a GPU: code generation is a function of the program and the options, also when
// several threads generate at once (the GPU test generates its units on every core and each
// run generates its plan again, to find the compiled unit in the kernel cache by its source).
TEST(RandomPrograms, CodegenIsTheSameOnEveryThread) {
  const int n = std::min(batches(), 24);
  std::vector<Batch> all;
  for (int k = 0; k < n; ++k)
    if (std::optional<Batch> batch = make_batch(k)) all.push_back(std::move(*batch));
  auto source = [&](size_t i) {
    codegen::CodegenOptions o = batch_options(all[i / 2].seed);
    o.fusion = i % 2 == 0;
    return codegen::generate_plan(all[i / 2].program, o).source;
  };
  std::vector<std::string> serial(2 * all.size()), parallel(2 * all.size());
  for (size_t i = 0; i < serial.size(); ++i) serial[i] = source(i);
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < 2 * parallel.size();) {
        std::string s = source(i % parallel.size());
        if (i >= parallel.size()) parallel[i % parallel.size()] = std::move(s);
      }
    });
  for (auto& t : pool) t.join();
  for (size_t i = 0; i < serial.size(); ++i)
    EXPECT_TRUE(serial[i] == parallel[i]) << "RANC_SEED=" << all[i / 2].seed
                                          << (i % 2 ? " unfused" : " fused");
}

// Without a GPU: the SQL lowering passes (compiler/src/passes/lower_*.cpp) keep every
// random program's results on the CPU reference, NULLs included (odd seeds have them): the
// lowered program runs on the inputs in lower_nulls' (a.valid, a) layout.
TEST(RandomPrograms, LoweringKeepsTheReferenceResults) {
  int with_nulls = 0;
  for (int k = 0; k < std::min(batches(), 40); ++k) {
    std::optional<Batch> batch = make_batch(k);
    if (!batch) continue;
    with_nulls += batch->seed % 2 == 1;
    const Program& p = batch->program;
    Program lowered = passes::lower_nulls(passes::lower_outer_joins(
        passes::lower_distinct_aggregates(passes::lower_scalar_subqueries(p))));
    sqltest::Bindings laid;
    for (const auto& [n, r] : batch->inputs) laid.emplace_back(n, sqltest::to_layout(r));
    std::vector<HostRelation> want, got;
    std::string want_error, got_error;
    try {
      want = execute_reference(p, batch->inputs);
    } catch (const UserError& e) {
      want_error = e.what();
    }
    try {
      got = execute_reference(lowered, laid);
    } catch (const UserError& e) {
      got_error = e.what();
    }
    ASSERT_EQ(want_error.empty(), got_error.empty())
        << "RANC_SEED=" << batch->seed << ": " << want_error << " | " << got_error;
    if (!want_error.empty()) continue;
    ASSERT_EQ(want.size(), got.size());
    const auto outs = p.outputs();
    for (size_t i = 0; i < want.size(); ++i) {
      const Node& o = p.node(outs[i]);
      HostRelation back = sqltest::from_layout(got[i], o.schema);
      std::vector<size_t> order;
      for (const SortKey& key : o.order) order.push_back(static_cast<size_t>(*o.schema.find(key.attr)));
      EXPECT_EQ(compare_outputs(o.name, back, want[i], order, !o.order.empty(), 1e-12), "")
          << "RANC_SEED=" << batch->seed << "\n" << print_program(p);
    }
  }
  EXPECT_GT(with_nulls, 0);
}

// The comparison the random programs rely on (no GPU needed): an output ordered by k
// alone may list rows tying on k in any order, but not move a row to another run of k,
// and an unordered output is a multiset.
TEST(RandomPrograms, OrderedOutputsCompareTiesAsMultisets) {
  const Schema s{{{"k", Type::I32}, {"v", Type::I32}}, 0};
  auto rel = [&](std::vector<int64_t> k, std::vector<int64_t> v) {
    std::vector<Column> cols;
    cols.push_back(column_from_keys(Type::I32, k));
    cols.push_back(column_from_keys(Type::I32, v));
    return make_relation(s, std::move(cols));
  };
  const HostRelation ref = rel({1, 1, 1, 2, 3, 3}, {5, 6, 7, 1, 9, 8});
  const std::vector<size_t> by_k{0}, by_k_v{0, 1};
  // Ties on k reordered: equal when ordered by k, not when ordered by (k, v).
  const HostRelation ties = rel({1, 1, 1, 2, 3, 3}, {7, 5, 6, 1, 8, 9});
  EXPECT_EQ(compare_outputs("o", ties, ref, by_k, true, 0), "");
  EXPECT_NE(compare_outputs("o", ties, ref, by_k_v, true, 0), "");
  // The same multiset with the runs in another order: only the unordered comparison agrees.
  const HostRelation moved = rel({2, 1, 1, 1, 3, 3}, {1, 5, 6, 7, 9, 8});
  EXPECT_NE(compare_outputs("o", moved, ref, by_k, true, 0), "");
  EXPECT_EQ(compare_outputs("o", moved, ref, {}, false, 0), "");
  // A row of one run swapped with a row of the next run that has the same v.
  const HostRelation swapped = rel({1, 1, 2, 1, 3, 3}, {5, 6, 1, 7, 9, 8});
  EXPECT_NE(compare_outputs("o", swapped, ref, by_k, true, 0), "");
  // Different values inside a run.
  const HostRelation other = rel({1, 1, 1, 2, 3, 3}, {5, 6, 4, 1, 9, 8});
  EXPECT_NE(compare_outputs("o", other, ref, by_k, true, 0), "");
  EXPECT_NE(compare_outputs("o", other, ref, {}, false, 0), "");
  // A row twice where the reference has two rows: the same rows as a set, not as a multiset.
  const HostRelation twice = rel({1, 1, 1, 2, 3, 3}, {5, 6, 7, 1, 9, 9});
  EXPECT_NE(compare_outputs("o", twice, ref, {}, false, 0), "");
  EXPECT_NE(compare_outputs("o", twice, ref, by_k, true, 0), "");
}

TEST(RandomPrograms, MatchTheReferenceOnTheGpu) {
  RANC_REQUIRE_GPU();
  const int arch = rt::find_gpu(0)->arch();
  auto t0 = std::chrono::steady_clock::now();
  std::vector<Batch> all;
  for (int k = 0; k < batches(); ++k)
    if (std::optional<Batch> batch = make_batch(k)) all.push_back(std::move(*batch));
  // Generate and compile every unit (unit 2k: batch k fused, 2k + 1: unfused) on every core
  // into the kernel cache (one NVRTC compile a core: RANC_JIT_THREADS=1 unless set); batch k
  // runs as soon as its two units are in, while the later ones compile, and its runs hit the
  // cache.
  const size_t units = 2 * all.size();
  if (!std::getenv("RANC_JIT_PCH")) setenv("RANC_JIT_PCH", "off", 1);
  if (!std::getenv("RANC_JIT_THREADS")) setenv("RANC_JIT_THREADS", "1", 1);
  std::atomic<size_t> next{0};
  std::atomic<int> compile_failures{0};
  std::mutex m;
  std::condition_variable cv;
  std::vector<char> compiled(units, 0);
  std::vector<std::thread> pool;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < units;) {
        try {
          codegen::CodegenOptions o = batch_options(all[i / 2].seed);
          o.fusion = i % 2 == 0;
          const rt::Plan plan = codegen::generate_plan(all[i / 2].program, o);
          (void)rt::compile_plan(plan, arch, rt::KernelCache::global());
        } catch (const std::exception& e) {
          ++compile_failures;
          std::printf("compile of batch %zu (%s) failed: %s\n", i / 2, i % 2 ? "unfused" : "fused",
                      e.what());
        }
        {
          std::lock_guard<std::mutex> lock(m);
          compiled[i] = 1;
        }
        cv.notify_all();
      }
    });
  int failures = 0;
  for (size_t k = 0; k < all.size(); ++k) {
    {
      std::unique_lock<std::mutex> lock(m);
      cv.wait(lock, [&] { return compiled[2 * k] && compiled[2 * k + 1]; });
    }
    const Batch& batch = all[k];
    const uint64_t seed = batch.seed;
    auto t1 = std::chrono::steady_clock::now();
    codegen::CodegenOptions options = batch_options(seed);
    std::string diff = run_and_compare(batch.program, batch.inputs, options);
    options.fusion = false;
    std::string diff_unfused = run_and_compare(batch.program, batch.inputs, options);
    const bool ok = diff.empty() && diff_unfused.empty();
    std::printf("batch %zu (RANC_SEED=%llu, %s): %s in %.2f s\n", k,
                static_cast<unsigned long long>(seed), join_name(options).c_str(),
                ok                ? "ok"
                : diff.empty()    ? "MISMATCH unfused"
                : diff_unfused.empty() ? "MISMATCH fused"
                                  : "MISMATCH fused and unfused",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count());
    std::fflush(stdout);
    if (!ok) {
      ++failures;
      ADD_FAILURE() << "RANC_SEED=" << seed << " RANC_RANDOM_BATCHES=1 RANC_RANDOM_CHAINS="
                    << chains() << " (" << join_name(options) << "):\n  fused: "
                    << (diff.empty() ? "ok" : diff)
                    << "\n  unfused: " << (diff_unfused.empty() ? "ok" : diff_unfused) << "\n"
                    << print_program(batch.program);
    }
  }
  for (auto& t : pool) t.join();
  EXPECT_EQ(compile_failures.load(), 0);
  std::printf("random programs: %zu batches x %d chains of 3-8 operators, fused and unfused, %d "
              "failing batches; %zu units compiled on %u threads, all done in %.1f s\n",
              all.size(), chains(), failures, units, threads,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace
}  // namespace ranc::gputest
