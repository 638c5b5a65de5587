// Seeded random programs (random operator chains over random small relations, valid by
// construction) run on the GPU and compared with the CPU reference. 50 batches of 20
// chains: each batch is one program with 20 outputs, so one NVRTC compile per batch.
// A failure prints the batch seed and the chain (output) name; RANC_SEED=<n> changes the
// base seed, RANC_RANDOM_BATCHES=<n> the number of batches. The join algorithm follows
// the batch seed (auto, hash, sort-merge in turn).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "gpu_test_util.h"
#include "ranc/dsl.h"

namespace ranc::gputest {
namespace {

struct Cur {
  Rel rel;
  std::vector<Attribute> attrs;
  bool sorted = false;
};

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  // Inputs A(a_i i32, a_l i64, a_f f64, a_s string, a_b bool), B(b_i i32, b_l i64, b_f f64).
  Inputs make_inputs() {
    Inputs in;
    for (int which = 0; which < 2; ++which) {
      Schema s = which == 0 ? schema_a() : schema_b();
      int64_t n = pick(0, 4) == 0 ? pick(0, 2) : pick(0, 150);
      std::vector<Column> cols;
      for (const auto& a : s.attributes) {
        std::vector<int64_t> keys;
        for (int64_t i = 0; i < n; ++i) keys.push_back(pick(0, a.type == Type::I64 ? 9 : 19));
        cols.push_back(a.type == Type::String ? random_column(Type::String, n, rng_)
                                              : column_from_keys(a.type, keys));
      }
      in.emplace_back(which == 0 ? "A" : "B", make_relation(s, std::move(cols)));
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

  void build(ProgramBuilder& b, int chains) {
    a_ = {b.input("A", schema_a().attributes), schema_a().attributes, false};
    b_ = {b.input("B", schema_b().attributes), schema_b().attributes, false};
    for (int c = 0; c < chains; ++c) {
      Cur cur = pick(0, 1) ? a_ : b_;
      int ops = static_cast<int>(pick(1, 4));
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
          ps.push_back(as(col(x->name) * 3 + 1, n));
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
        Cur other = renamed(pick(0, 1) ? a_ : b_);
        const Attribute* lk = of_type(cur.attrs, {Type::I32, Type::I64, Type::F64, Type::String});
        if (!lk) return out;
        const Attribute* rk = of_type(other.attrs, {lk->type});
        if (!rk) return out;
        JoinKind kind = static_cast<JoinKind>(pick(0, 2));
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
        if (kind == JoinKind::Inner) out.attrs = joined;
        out.sorted = false;
        return out;
      }
      case 8: {  // set operation over one attribute
        const Attribute& x = any(cur);
        Cur other = pick(0, 1) ? a_ : b_;
        const Attribute* y = of_type(other.attrs, {x.type});
        if (!y) return out;
        Rel l = cur.rel.project({x.name}), r = other.rel.project({y->name});
        int op = static_cast<int>(pick(0, 2));
        out.rel = op == 0 ? l.union_with(r) : op == 1 ? l.intersect(r) : l.difference(r);
        out.attrs = {x};
        out.sorted = false;
        return out;
      }
      default: {  // product with a small selection of B
        Cur other = renamed(b_);
        other.rel = other.rel.select(col(other.attrs[0].name) < 3);
        out.rel = cur.rel.product(other.rel);
        out.attrs.insert(out.attrs.end(), other.attrs.begin(), other.attrs.end());
        out.sorted = false;
        return out;
      }
    }
  }

  std::mt19937_64 rng_;
  int counter_ = 0;
  Cur a_, b_;
};

uint64_t base_seed() {
  const char* s = std::getenv("RANC_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261122;
}
int batches() {
  const char* s = std::getenv("RANC_RANDOM_BATCHES");
  return s ? std::atoi(s) : 50;
}
constexpr int kChains = 20;

// The join algorithm of a batch, from its seed so that RANC_SEED reproduces it: auto,
// hash and sort-merge in turn.
codegen::CodegenOptions batch_options(uint64_t seed) {
  constexpr codegen::JoinAlgorithm kAlgorithms[] = {codegen::JoinAlgorithm::Auto,
                                                    codegen::JoinAlgorithm::Hash,
                                                    codegen::JoinAlgorithm::SortMerge};
  return {.join = kAlgorithms[seed % 3]};
}
const char* join_name(const codegen::CodegenOptions& o) {
  return o.join == codegen::JoinAlgorithm::Hash        ? "hash"
         : o.join == codegen::JoinAlgorithm::SortMerge ? "sort-merge"
                                                       : "auto";
}

// Without a GPU: every generated program checks, plans and runs on the reference.
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
  g.build(b, kChains);
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
    EXPECT_NO_THROW(codegen::generate_plan(p, batch_options(seed))) << "seed " << seed;
  }
}

TEST(RandomPrograms, MatchTheReferenceOnTheGpu) {
  RANC_REQUIRE_GPU();
  int failures = 0;
  for (int k = 0; k < batches(); ++k) {
    std::optional<Batch> batch = make_batch(k);
    if (!batch) continue;
    const uint64_t seed = batch->seed;
    const Program& p = batch->program;
    const Inputs& in = batch->inputs;
    auto t0 = std::chrono::steady_clock::now();
    const codegen::CodegenOptions options = batch_options(seed);
    std::string diff = run_and_compare(p, in, options);
    std::printf("batch %d (RANC_SEED=%llu, %s joins): %s in %.1f s\n", k,
                static_cast<unsigned long long>(seed), join_name(options),
                diff.empty() ? "ok" : "MISMATCH",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::fflush(stdout);
    if (!diff.empty()) {
      ++failures;
      ADD_FAILURE() << "RANC_SEED=" << seed << " RANC_RANDOM_BATCHES=1 (" << join_name(options)
                    << " joins): " << diff << "\n"
                    << print_program(p);
    }
  }
  std::printf("random programs: %d batches x %d chains, %d failing batches\n", batches(), kChains,
              failures);
}

}  // namespace
}  // namespace ranc::gputest
