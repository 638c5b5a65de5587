// The ranc operator benchmark: in one run on one GPU, the device-to-device copy
// bandwidth, each RA operator compiled by ranc, and the Thrust baseline for the same
// operator, at 2^26 and 2^28 tuples of (i32 key, i32 value). Throughput counts bytes
// read once plus bytes written. Usage: ra_bench [log2 sizes...] (default 26 28).
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "baseline_thrust.h"
#include "ranc/codegen/codegen.h"
#include "ranc/dsl.h"
#include "ranc/passes/pass_runner.h"
#include "ranc/runtime/executor.h"

using namespace ranc;
using ranc::bench::Measurement;

namespace {

// A device-resident relation of i32 columns owned by the benchmark.
struct DeviceRel {
  Schema schema;
  std::vector<int32_t*> cols;
  int64_t rows = 0;
  rt::DeviceInput binding() const {
    rt::DeviceInput d;
    d.schema = schema;
    for (auto* c : cols) d.columns.push_back(c);
    d.num_rows = rows;
    return d;
  }
  void free() {
    for (auto* c : cols) RANC_BENCH_CK(cudaFree(c));
    cols.clear();
  }
};

DeviceRel upload(Schema schema, const std::vector<std::vector<int32_t>>& cols) {
  DeviceRel r{std::move(schema), {}, cols.empty() ? 0 : static_cast<int64_t>(cols[0].size())};
  for (const auto& c : cols) {
    void* raw = nullptr;
    RANC_BENCH_CK(cudaMalloc(&raw, std::max<size_t>(1, c.size()) * 4));
    auto* p = static_cast<int32_t*>(raw);
    RANC_BENCH_CK(cudaMemcpy(p, c.data(), c.size() * 4, cudaMemcpyHostToDevice));
    r.cols.push_back(p);
  }
  return r;
}

Schema kv(const char* k, const char* v, size_t key = 1) {
  return Schema{{{k, Type::I32}, {v, Type::I32}}, key};
}

// Runs a program's plan several times with device-resident inputs; the median of the
// executor's step time (compile and output download excluded).
struct RancRun {
  double seconds = 0;
  std::vector<int64_t> output_rows;
};
RancRun run_ranc(rt::Executor& ex, const Program& checked,
                 const std::map<std::string, rt::InputBinding>& inputs,
                 const codegen::CodegenOptions& options = {}, int runs = 5) {
  rt::Plan plan = codegen::generate_plan(checked, options);
  std::vector<double> t;
  RancRun r;
  for (int i = 0; i < runs + 1; ++i) {
    rt::RunResult res = ex.run_bound(plan, inputs);
    if (i == 0) {
      for (auto& [name, rel] : res.outputs)
        r.output_rows.push_back(static_cast<int64_t>(rel.num_rows()));
      continue;  // warm-up: compile, cache, pool growth
    }
    t.push_back(res.stats.execute_seconds);
  }
  std::sort(t.begin(), t.end());
  r.seconds = t[t.size() / 2];
  return r;
}

void print_row(const Measurement& m, double copy_gbps, const char* who) {
  std::printf("  %-14s %-7s %12zu %10.3f ms %9.1f GB/s %6.1f%% of copy\n", m.op.c_str(), who,
              m.tuples, m.seconds * 1e3, m.gbps(), 100.0 * m.gbps() / copy_gbps);
}

// A plan's median execute time over three runs after a warm-up, its first output's rows
// and the pool's peak bytes.
struct PlanTiming {
  double seconds;
  int64_t rows, peak;
};
PlanTiming time_plan(rt::Executor& ex, const rt::Plan& plan,
                     const std::map<std::string, rt::InputBinding>& inputs) {
  std::vector<double> t;
  int64_t rows = 0, peak = 0;
  for (int i = 0; i < 4; ++i) {
    rt::RunResult res = ex.run_bound(plan, inputs);
    rows = static_cast<int64_t>(res.outputs.at(0).second.num_rows());
    peak = std::max(peak, res.stats.peak_device_bytes);
    if (i > 0) t.push_back(res.stats.execute_seconds);
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], rows, peak};
}

// R(k, r1..rp) and S(fk, s1..sp) on the device from the keys k and the foreign keys fk, with
// 4-byte payloads r_c = 3 k + c and s_c = 5 i + c (paper 004's join relations).
struct JoinRelations {
  DeviceRel r, s;
  std::vector<Attribute> ra, sa;
  void free() {
    r.free();
    s.free();
  }
};
JoinRelations join_relations(const std::vector<int32_t>& k, const std::vector<int32_t>& fk, int p) {
  std::vector<std::vector<int32_t>> rc{k}, sc{fk};
  std::vector<Attribute> ra{{"k", Type::I32}}, sa{{"fk", Type::I32}};
  for (int c = 0; c < p; ++c) {
    std::vector<int32_t> a(k.size()), b(fk.size());
    for (size_t i = 0; i < k.size(); ++i) a[i] = static_cast<int32_t>(k[i] * 3 + c);
    for (size_t i = 0; i < fk.size(); ++i) b[i] = static_cast<int32_t>(i * 5 + c);
    rc.push_back(std::move(a));
    sc.push_back(std::move(b));
    ra.push_back({fmt::format("r{}", c + 1), Type::I32});
    sa.push_back({fmt::format("s{}", c + 1), Type::I32});
  }
  return {upload(Schema{ra, 0}, rc), upload(Schema{sa, 0}, sc), ra, sa};
}

// Paper 004's join workloads (its artifact's defaults): R(k, r1..rp) with k a shuffled
// permutation of [0, n) (primary keys), S(fk, s1..sp) with fk in [0, n) uniform or Zipf
// (foreign keys, every one matching), 4-byte keys and payloads; S join R on fk = k,
// output (fk, s1..sp, r1..rp). `p` payload columns per side: 1 is the narrow join, 3 the
// wide one. ranc's partitioned hash join and sort-merge join on the same device arrays;
// peak = the plan's pool peak plus the input columns.
void bench_joins(rt::Executor& ex, int lg, double copy_gbps) {
  const size_t n = size_t{1} << lg;
  std::mt19937_64 rng(7);
  std::vector<int32_t> k(n);
  for (size_t i = 0; i < n; ++i) k[i] = static_cast<int32_t>(i);
  std::shuffle(k.begin(), k.end(), rng);
  for (double zipf : {0.0, 1.0}) {
    std::vector<int32_t> fk(n);
    for (size_t i = 0; i < n; ++i) {
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
      // Zipf 1.0 by the continuous 1/x law on [1, n + 1): rank = floor((n + 1)^u) - 1.
      const size_t r = zipf == 0.0 ? static_cast<size_t>(rng() % n)
                                   : std::min(n - 1, static_cast<size_t>(std::pow(double(n) + 1, u)) - 1);
      fk[i] = static_cast<int32_t>(r);
    }
    for (int p : {1, 3}) {
      JoinRelations j = join_relations(k, fk, p);
      ProgramBuilder b;
      b.output(b.input("s", j.sa).join(b.input("r", j.ra), {"fk"}, {"k"}), "out");
      const Program prog = b.check();
      const double in_bytes = 8.0 * (1 + p) * n, bytes = in_bytes + 4.0 * (1 + 2 * p) * n;
      const std::string op =
          fmt::format("join {} {}", p == 1 ? "narrow" : "wide", zipf == 0.0 ? "uniform" : "zipf1");
      for (auto algo : {codegen::JoinAlgorithm::Hash, codegen::JoinAlgorithm::SortMerge}) {
        codegen::CodegenOptions o;
        o.join = algo;
        const auto [sec, rows, peak] =
            time_plan(ex, codegen::generate_plan(prog, o), {{"s", j.s.binding()}, {"r", j.r.binding()}});
        std::printf("  %-20s %-10s %10.3f ms %9.1f GB/s %6.1f%% of copy  rows %lld  peak %.2f GB\n",
                    op.c_str(), algo == codegen::JoinAlgorithm::Hash ? "hash" : "sort-merge",
                    sec * 1e3, bytes / sec / 1e9, 100.0 * bytes / sec / 1e9 / copy_gbps,
                    static_cast<long long>(rows), (static_cast<double>(peak) + in_bytes) / 1e9);
        if (rows != static_cast<int64_t>(n)) std::fprintf(stderr, "%s: %lld rows, want %zu\n", op.c_str(), static_cast<long long>(rows), n);
      }
      j.free();
    }
  }
}

// Where the hash join overtakes the sort-merge join (issue 9's `--join=auto`), and where its
// global table (hash_join.cuh's GlobalJoinTable) stops beating radix partitions:
// S(fk, s1..sp) of 2^ps rows probing R(k, r1..rp) of 2^bs rows, k a shuffled permutation of
// [0, 2^bs), fk uniform in it (every probe row matches once); on the same device arrays the
// hash join with the global table at every build size past 2048 rows, radix-partitioned, and
// the sort-merge join, for build sizes 2^bs <= 2^ps up to the largest probe size given.
void bench_join_sizes(rt::Executor& ex, int max_lg) {
  std::mt19937_64 rng(11);
  for (int ps = 16; ps <= max_lg; ps += 2)
    for (int bs = 12; bs <= ps; bs += 2)
      for (int p : {1, 3}) {
        const size_t n = size_t{1} << ps, m = size_t{1} << bs;
        std::vector<int32_t> k(m), fk(n);
        for (size_t i = 0; i < m; ++i) k[i] = static_cast<int32_t>(i);
        std::shuffle(k.begin(), k.end(), rng);
        for (size_t i = 0; i < n; ++i) fk[i] = static_cast<int32_t>(rng() % m);
        JoinRelations j = join_relations(k, fk, p);
        ProgramBuilder b;
        b.output(b.input("s", j.sa).join(b.input("r", j.ra), {"fk"}, {"k"}), "out");
        const Program prog = b.check();
        double ms[3];
        for (int a = 0; a < 3; ++a) {
          codegen::CodegenOptions o;
          o.join = a < 2 ? codegen::JoinAlgorithm::Hash : codegen::JoinAlgorithm::SortMerge;
          o.hash_join_global_rows = a == 0 ? (int64_t{1} << 29) : 0;
          const auto t = time_plan(ex, codegen::generate_plan(prog, o),
                                   {{"s", j.s.binding()}, {"r", j.r.binding()}});
          ms[a] = t.seconds * 1e3;
          if (t.rows != static_cast<int64_t>(n))
            std::fprintf(stderr, "join sizes 2^%d x 2^%d: %lld rows, want %zu\n", ps, bs,
                         static_cast<long long>(t.rows), n);
        }
        std::printf("  probe 2^%-2d build 2^%-2d payloads %d   hash global %9.3f ms   partitioned %9.3f ms   "
                    "sort-merge %9.3f ms   partitioned/global %.2f   merge/best hash %.2f\n",
                    ps, bs, p, ms[0], ms[1], ms[2], ms[1] / ms[0], ms[2] / std::min(ms[0], ms[1]));
        j.free();
      }
}

// Semi and anti joins of unsorted inputs: S(fk, s1) against R(k) with k the even numbers of
// [0, 2n) shuffled and fk uniform in [0, 2n) (half of S matches), 4-byte keys and payload.
// Hash (a probe of a hash set of R's keys, the default for unsorted right inputs) against
// sort-merge (R sorted, then a binary search per S row; the default before), on the same
// device arrays. Bytes: S and R read once, the kept rows written.
void bench_semi_joins(rt::Executor& ex, int lg, double copy_gbps) {
  const size_t n = size_t{1} << lg;
  std::mt19937_64 rng(11);
  std::vector<int32_t> k(n), fk(n), s1(n);
  for (size_t i = 0; i < n; ++i) k[i] = static_cast<int32_t>(2 * i);
  std::shuffle(k.begin(), k.end(), rng);
  for (size_t i = 0; i < n; ++i) {
    fk[i] = static_cast<int32_t>(rng() % (2 * n));
    s1[i] = static_cast<int32_t>(i);
  }
  const std::vector<Attribute> ra{{"k", Type::I32}}, sa{{"fk", Type::I32}, {"s1", Type::I32}};
  DeviceRel dr = upload(Schema{ra, 0}, {k}), ds = upload(Schema{sa, 0}, {fk, s1});
  for (bool anti : {false, true}) {
    ProgramBuilder b;
    Rel S = b.input("s", sa), R = b.input("r", ra);
    b.output(anti ? S.anti_join(R, {"fk"}, {"k"}) : S.semi_join(R, {"fk"}, {"k"}), "out");
    const Program prog = b.check();
    // "hash rows" with the set built in row order, "hash win20" in windows of 2^20 slots
    // (CodegenOptions::hash_build_window_bits) at every size (the default takes them only
    // from 2^hash_build_window_min_bits slots on: the set has 2^(lg+1)), "sort-merge".
    for (int way = 0; way < 3; ++way) {
      codegen::CodegenOptions o;
      o.join = way < 2 ? codegen::JoinAlgorithm::Hash : codegen::JoinAlgorithm::SortMerge;
      if (way == 0) o.hash_build_window_bits = -1;
      if (way == 1) o.hash_build_window_min_bits = 0;
      const auto [sec, rows, peak] =
          time_plan(ex, codegen::generate_plan(prog, o), {{"s", ds.binding()}, {"r", dr.binding()}});
      const double bytes = 12.0 * n + 8.0 * static_cast<double>(rows);
      std::printf("  %-20s %-10s %10.3f ms %9.1f GB/s %6.1f%% of copy  rows %lld  peak %.2f GB\n",
                  anti ? "anti join" : "semi join",
                  way == 0 ? "hash rows" : way == 1 ? "hash win20" : "sort-merge", sec * 1e3,
                  bytes / sec / 1e9, 100.0 * bytes / sec / 1e9 / copy_gbps,
                  static_cast<long long>(rows), (static_cast<double>(peak) + 12.0 * n) / 1e9);
    }
  }
  dr.free();
  ds.free();
}

// Top-k sorts (passes/plan_top_k.h): `sort |> limit k` of 2^lg unsorted (k, v) rows, ranc's
// radix select + compaction + sort of the kept rows against ranc's full sort of the same plan
// (the pass switched off) and CUB's full radix sort of the rows as 64-bit words (CCCL 3.0 has
// no top-k: a hand-written chain sorts everything). Bytes = the input read once (8 per row).
void bench_top_k(rt::Executor& ex, int lg, double copy_gbps) {
  const size_t n = size_t{1} << lg;
  std::mt19937_64 rng(5);
  std::vector<int32_t> k(n), v(n), g(n);
  for (size_t i = 0; i < n; ++i) {
    k[i] = static_cast<int32_t>(rng() & 0x7fffffff);
    v[i] = static_cast<int32_t>(rng());
    g[i] = static_cast<int32_t>(rng() % 1000);
  }
  DeviceRel dr = upload(kv("k", "v", 0), {k, v}), dg = upload(kv("g", "v", 0), {g, v});
  std::map<std::string, Measurement> base;
  for (auto& m : bench::run_thrust_baselines(n)) base[m.op] = m;
  struct Case {
    const char* name;
    const DeviceRel* rel;
    std::vector<SortSpec> keys;
    int64_t limit;
  };
  const std::vector<Case> cases = {
      {"sort k |> limit 100", &dr, {SortSpec("k")}, 100},
      {"sort k desc |> limit 10^4", &dr, {desc("k")}, 10000},
      {"sort v, k |> limit 10", &dr, {SortSpec("v"), SortSpec("k")}, 10},
      {"sort g (1000 values) |> limit 100", &dg, {SortSpec("g")}, 100},
      {"sort k |> limit 2^20", &dr, {SortSpec("k")}, int64_t{1} << 20},
  };
  for (const Case& c : cases) {
    ProgramBuilder b;
    b.output(b.input("r", c.rel->schema.attributes).sort(c.keys).limit(c.limit), "out");
    const Program prog = b.check();
    const auto top = time_plan(ex, codegen::generate_plan(prog), {{"r", c.rel->binding()}});
    codegen::CodegenOptions full;
    full.disabled_passes = {"plan_top_k"};
    const auto all = time_plan(ex, codegen::generate_plan(prog, full), {{"r", c.rel->binding()}});
    const double bytes = 8.0 * n;
    std::printf("  %-34s top-k %8.3f ms %6.1f%% of copy  peak %.2f GB | full sort %8.3f ms "
                "peak %.2f GB | %.1fx\n",
                c.name, top.seconds * 1e3, 100.0 * bytes / top.seconds / 1e9 / copy_gbps,
                static_cast<double>(top.peak) / 1e9, all.seconds * 1e3,
                static_cast<double>(all.peak) / 1e9, all.seconds / top.seconds);
    if (top.rows != all.rows) std::fprintf(stderr, "%s: row counts differ\n", c.name);
  }
  for (const char* op : {"cub sort words", "cub sort pairs"})
    if (auto it = base.find(op); it != base.end())
      std::printf("  %-34s %8.3f ms (the whole input sorted)\n", op, it->second.seconds * 1e3);
  dr.free();
  dg.free();
}

}  // namespace

int main(int argc, char** argv) {
  // "ra_bench chains 28": only the fused operator chains; "ra_bench groupby 28": only the
  // group-by rows (with TPC-H Q1's shape); "ra_bench q1 28": only Q1's shape.
  bool chains_only = false, groupby_only = false, q1_only = false, joins_only = false, semi_only = false,
       topk_only = false, setops_only = false, merges_only = false, reduce_only = false,
       mergejoin_only = false, select_chains_only = false, join_sizes_only = false, sorts_only = false;
  std::vector<int> log_sizes;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "chains")
      chains_only = true;
    else if (std::string(argv[i]) == "selchains")  // the chains without joins, and one select
      chains_only = select_chains_only = true;
    else if (std::string(argv[i]) == "joins")
      joins_only = true;
    else if (std::string(argv[i]) == "semijoins")
      joins_only = semi_only = true;
    else if (std::string(argv[i]) == "joinsizes")  // hash vs sort-merge over probe/build sizes
      join_sizes_only = true;
    else if (std::string(argv[i]) == "groupby")
      groupby_only = true;
    else if (std::string(argv[i]) == "q1")  // only the TPC-H Q1-shaped group-by
      groupby_only = q1_only = true;
    else if (std::string(argv[i]) == "topk")
      topk_only = true;
    else if (std::string(argv[i]) == "setops")
      setops_only = true;
    else if (std::string(argv[i]) == "merges")  // set operations, sorted join, sorted reduce
      merges_only = true;
    else if (std::string(argv[i]) == "sorts")  // the sorts only (with every baseline)
      sorts_only = true;
    else if (std::string(argv[i]) == "sortedreduce")  // the sorted reduce only
      merges_only = reduce_only = true;
    else if (std::string(argv[i]) == "mergejoin")  // the sorted PK-FK join only, no baselines:
      merges_only = mergejoin_only = true;         // quick A/B runs of its tile shapes
    else
      log_sizes.push_back(std::atoi(argv[i]));
  }
  if (log_sizes.empty()) log_sizes = {26, 28};
  std::string dev = bench::device_or_skip();
  if (dev.empty()) return 0;
  std::printf("device: %s\n", dev.c_str());
  rt::Executor ex;
  // "ra_bench topk 28": top-k sorts only.
  if (topk_only) {
    for (int lg : log_sizes) {
      const double copy_gbps = bench::measure_copy((size_t{1} << lg) * 8).gbps();
      std::printf("\nn = 2^%d, copy %.1f GB/s\n", lg, copy_gbps);
      try {
        bench_top_k(ex, lg, copy_gbps);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "ranc failed: %s\n", e.what());
        return 1;
      }
    }
    return 0;
  }
  // "ra_bench joinsizes 26": hash vs sort-merge join, probe sizes 2^16..2^26, build sizes
  // 2^12..probe.
  if (join_sizes_only) {
    try {
      bench_join_sizes(ex, log_sizes.back());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ranc failed: %s\n", e.what());
      return 1;
    }
    return 0;
  }
  // "ra_bench joins 27": paper 004's join workloads, then semi/anti joins ("semijoins": only
  // those).
  if (joins_only) {
    for (int lg : log_sizes) {
      const double copy_gbps = bench::measure_copy((size_t{1} << lg) * 8).gbps();
      std::printf("\n|R| = |S| = 2^%d, copy %.1f GB/s\n", lg, copy_gbps);
      try {
        if (!semi_only) bench_joins(ex, lg, copy_gbps);
        bench_semi_joins(ex, lg, copy_gbps);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "ranc failed: %s\n", e.what());
        return 1;
      }
    }
    return 0;
  }
  for (int lg : log_sizes) {
    const size_t n = size_t{1} << lg;
    Measurement copy = bench::measure_copy(n * 8);
    const double copy_gbps = copy.gbps();
    std::printf("\nn = 2^%d tuples (i32 key, i32 value); copy of %zu MB: %.1f GB/s (read+write)\n",
                lg, n * 8 >> 20, copy_gbps);
    std::vector<Measurement> base;
    if (!chains_only && !groupby_only && !mergejoin_only) base = bench::run_thrust_baselines(n);
    std::map<std::string, Measurement> base_by_op;
    for (auto& m : base) base_by_op[m.op] = m;

    std::mt19937_64 rng(42);
    std::vector<int32_t> k(n), v(n);
    for (size_t i = 0; i < n; ++i) {
      k[i] = static_cast<int32_t>(rng() & 0x7fffffff);
      v[i] = static_cast<int32_t>(rng());
    }
    DeviceRel r = upload(kv("k", "v", 0), {k, v});
    auto report = [&](const std::string& op, double seconds, double bytes, size_t tuples,
                      const std::vector<std::string>& baselines = {}) {
      Measurement m{op, tuples, seconds, bytes};
      print_row(m, copy_gbps, "ranc");
      for (const std::string& b : baselines.empty() ? std::vector<std::string>{op} : baselines) {
        auto it = base_by_op.find(b);
        if (it != base_by_op.end())
          print_row(it->second, copy_gbps, b.rfind("cub", 0) == 0 ? "cub" : "thrust");
      }
    };
    try {
      // Group-by of unsorted (g, v) rows, g uniform in [0, G): sum((i64)v) per g. ranc's
      // default hashes (hash_reduce.cuh); --group-by=sort sorts the input by g first; the
      // sort + reduce_by_key chains of Thrust and CUB on the same arrays. 16 groups: more
      // than a block's private states (4), so a block leaves them once a key reaches its table
      // (hash_reduce.cuh; staying cost one atomic merge a row on a few hot slots).
      // RANC_BENCH_GROUPS="14,20": these log2 group counts instead (2 to 30; A/B runs; then
      // no Q1 shape).
      const char* env_groups = std::getenv("RANC_BENCH_GROUPS");
      const std::string only_groups = env_groups && *env_groups ? env_groups : "";
      std::vector<int64_t> group_counts{int64_t{4},       int64_t{16},      int64_t{1} << 10,
                                        int64_t{1} << 14, int64_t{1} << 17, int64_t{1} << 20,
                                        int64_t{1} << 22, int64_t{1} << 24};
      if (!only_groups.empty()) {
        group_counts.clear();
        for (const std::string& item : passes::split_list(env_groups)) {
          const int bits = std::atoi(item.c_str());
          if (bits >= 2 && bits <= 30)
            group_counts.push_back(int64_t{1} << bits);
          else
            std::fprintf(stderr, "RANC_BENCH_GROUPS: skipped %s (not a log2 count in [2, 30])\n",
                         item.c_str());
        }
      }
      if (!chains_only && !setops_only && !merges_only && !q1_only && !sorts_only) {
        for (int64_t groups : group_counts) {
          if (static_cast<size_t>(groups) > n) continue;
          std::vector<int32_t> g(n);
          for (size_t i = 0; i < n; ++i) g[i] = static_cast<int32_t>(k[i] % groups);
          DeviceRel dg = upload(kv("g", "v", 0), {g, v});
          std::map<std::string, Measurement> gb;
          for (auto& m : bench::run_group_by_baselines(dg.cols[0], dg.cols[1], n)) gb[m.op] = m;
          ProgramBuilder b;
          b.output(b.input("r", kv("g", "v", 0).attributes).reduce({"g"}, {sum(col("v"), "s")}), "out");
          const Program p = b.check();
          RancRun hashed = run_ranc(ex, p, {{"r", dg.binding()}});
          RancRun plain = run_ranc(ex, p, {{"r", dg.binding()}}, {.hash_private_states = 0});
          RancRun sorted = run_ranc(ex, p, {{"r", dg.binding()}}, {.group_by = codegen::GroupBy::Sort});
          // Room for a record per row: phase 1's records never overflow, so they are sorted and
          // merged however many there are (before session 19, the plan past the room's estimate).
          RancRun records = run_ranc(ex, p, {{"r", dg.binding()}}, {.hash_records = static_cast<int64_t>(n)});
          // The dense way's shared-memory tables after a pass over the input's key bounds instead
          // of first over the span of phase 1's records' keys (the default since session 52;
          // RANC_HASH_DENSE_SPECULATE=0).
          RancRun bounds = run_ranc(ex, p, {{"r", dg.binding()}}, {.hash_dense_speculate = false});
          // Without the early run over a sample's span before phase 1 (the default since
          // session 53; RANC_HASH_DENSE_EARLY=0).
          RancRun late = run_ranc(ex, p, {{"r", dg.binding()}}, {.hash_dense_early = false});
          // The partitioned way (off by default, RANC_HASH_PARTITION=1): spans past the
          // shared-memory tables' few parts counted, moved once into parts and summed a part a
          // block (session 54).
          RancRun parted = run_ranc(ex, p, {{"r", dg.binding()}}, {.hash_partitioned = true});
          const double bytes = 8.0 * n + 12.0 * static_cast<double>(hashed.output_rows[0]);
          const std::string op = fmt::format("group-by 2^{:.0f}", std::log2(static_cast<double>(groups)));
          print_row({op, n, hashed.seconds, bytes}, copy_gbps, "hash");
          print_row({op, n, plain.seconds, bytes}, copy_gbps, "hash-np");
          print_row({op, n, sorted.seconds, bytes}, copy_gbps, "sort");
          print_row({op, n, records.seconds, bytes}, copy_gbps, "hash-rec");
          print_row({op, n, bounds.seconds, bytes}, copy_gbps, "hash-bounds");
          print_row({op, n, late.seconds, bytes}, copy_gbps, "hash-late");
          print_row({op, n, parted.seconds, bytes}, copy_gbps, "hash-part");
          for (const char* who : {"thrust group-by", "cub group-by"})
            if (auto it = gb.find(who); it != gb.end()) {
              Measurement m = it->second;
              m.op = op;
              print_row(m, copy_gbps, who[0] == 't' ? "thrust" : "cub");
            }
          if (hashed.output_rows[0] != sorted.output_rows[0] ||
              plain.output_rows[0] != sorted.output_rows[0] ||
              records.output_rows[0] != sorted.output_rows[0] ||
              bounds.output_rows[0] != sorted.output_rows[0] ||
              late.output_rows[0] != sorted.output_rows[0] ||
              parted.output_rows[0] != sorted.output_rows[0])
            std::fprintf(stderr, "%s: hash and sort group counts differ\n", op.c_str());
          dg.free();
        }
      }
      if (groupby_only && only_groups.empty()) {  // (not in A/B runs of group counts)
        // TPC-H Q1's shape: n rows of (flag, status, quantity, price, discount, tax, shipdate),
        // flag and status strings (dictionary codes, as lineitem's), in four groups of 25 / 1 /
        // 49 / 25% (as lineitem's A-F, N-F, N-O, R-F), shipdate kept for 98% of rows, eight
        // aggregates over the kept rows. Bytes: the
        // 44 of a row's seven attributes, read once; Q1's target (issue 8: within 3x of
        // reading its columns once at copy bandwidth) is 33.3% of copy. Private states on
        // (the default) and off (RANC_HASH_PRIVATE=0), and the sort path, same inputs.
        std::vector<int32_t> flag(n), status(n), day(n);
        std::vector<double> qty(n), price(n), disc(n), tax(n);
        std::mt19937_64 g1(7);
        for (size_t i = 0; i < n; ++i) {
          const uint64_t x = g1();
          const int pct = static_cast<int>(x % 100);
          // codes of the dictionary A, F, N, O, R (0..4): flags A, N, R; statuses F, O
          flag[i] = pct < 25 ? 0 : pct < 75 ? 2 : 4;
          status[i] = pct >= 26 && pct < 75 ? 3 : 1;
          day[i] = static_cast<int32_t>((x >> 8) % 10000);
          qty[i] = static_cast<double>(1 + (x >> 20) % 50);
          price[i] = 900.0 + static_cast<double>((x >> 28) % 100000) / 100.0;
          disc[i] = static_cast<double>((x >> 44) % 11) / 100.0;
          tax[i] = static_cast<double>((x >> 50) % 9) / 100.0;
        }
        std::vector<void*> dev;
        auto up = [&](const void* src, size_t bytes) {
          void* d = nullptr;
          RANC_BENCH_CK(cudaMalloc(&d, std::max<size_t>(bytes, 1)));
          RANC_BENCH_CK(cudaMemcpy(d, src, bytes, cudaMemcpyHostToDevice));
          dev.push_back(d);
          return static_cast<const void*>(d);
        };
        Schema q1s{{{"f", Type::String}, {"s", Type::String}, {"q", Type::F64}, {"p", Type::F64},
                    {"d", Type::F64}, {"t", Type::F64}, {"sd", Type::I32}},
                   0};
        rt::DeviceInput in;
        in.schema = q1s;
        in.num_rows = static_cast<int64_t>(n);
        in.dictionary = Dictionary::from_strings({"A", "F", "N", "O", "R"});
        in.columns = {up(flag.data(), 4 * n),  up(status.data(), 4 * n), up(qty.data(), 8 * n),
                      up(price.data(), 8 * n), up(disc.data(), 8 * n),   up(tax.data(), 8 * n),
                      up(day.data(), 4 * n)};
        ProgramBuilder b;
        b.output(b.input("r", q1s.attributes)
                     .select(col("sd") <= 9800)
                     .reduce({"f", "s"},
                             {sum(col("q"), "sum_qty"), sum(col("p"), "sum_base_price"),
                              sum(col("p") * (Expr(1.0) - col("d")), "sum_disc_price"),
                              sum(col("p") * (Expr(1.0) - col("d")) * (Expr(1.0) + col("t")),
                                  "sum_charge"),
                              avg(col("q"), "avg_qty"), avg(col("p"), "avg_price"),
                              avg(col("d"), "avg_disc"), count("count_order")}),
                 "out");
        const Program p = b.check();
        const double bytes = 44.0 * static_cast<double>(n);
        const std::string op = "q1 shape";
        RancRun priv = run_ranc(ex, p, {{"r", in}});
        RancRun plain = run_ranc(ex, p, {{"r", in}}, {.hash_private_states = 0});
        RancRun sorted = run_ranc(ex, p, {{"r", in}}, {.group_by = codegen::GroupBy::Sort});
        print_row({op, n, priv.seconds, bytes}, copy_gbps, "hash");
        print_row({op, n, plain.seconds, bytes}, copy_gbps, "hash-np");
        print_row({op, n, sorted.seconds, bytes}, copy_gbps, "sort");
        if (priv.output_rows[0] != 4 || plain.output_rows[0] != 4 || sorted.output_rows[0] != 4)
          std::fprintf(stderr, "q1 shape: expected 4 groups\n");
        for (void* d : dev) RANC_BENCH_CK(cudaFree(d));
      }
      if (!chains_only && !groupby_only) {
      if (!setops_only && !merges_only && !sorts_only) {  // select 50%
        ProgramBuilder b;
        b.output(b.input("r", kv("k", "v", 0).attributes).select(col("k") < (1 << 30)), "out");
        RancRun rr = run_ranc(ex, b.check(), {{"r", r.binding()}});
        report("select 50%", rr.seconds, 8.0 * n + 8.0 * rr.output_rows[0], n);
      }
      if (!setops_only && !merges_only && !sorts_only) {  // project (map)
        ProgramBuilder b;
        // Both attributes are computed so ranc and Thrust move the same bytes (a plain
        // pass-through attribute is shared with the input, not copied).
        b.output(b.input("r", kv("k", "v", 0).attributes)
                     .project({as(col("k") + 1, "k"), as(col("v") * 3 + 1, "v")}),
                 "out");
        RancRun rr = run_ranc(ex, b.check(), {{"r", r.binding()}});
        report("project (map)", rr.seconds, 16.0 * n, n);
      }
      if (!setops_only && !merges_only && !sorts_only) {  // product: n/4 x 4 -> n tuples of 4 attributes
        std::vector<int32_t> k4(n / 4), v4(n / 4);
        std::copy(k.begin(), k.begin() + n / 4, k4.begin());
        std::copy(v.begin(), v.begin() + n / 4, v4.begin());
        DeviceRel a = upload(kv("a", "av", 0), {k4, v4});
        DeviceRel s = upload(kv("s", "sv", 0), {{1, 2, 3, 4}, {5, 6, 7, 8}});
        ProgramBuilder b;
        b.output(b.input("a", kv("a", "av", 0).attributes)
                     .product(b.input("s", kv("s", "sv", 0).attributes)),
                 "out");
        RancRun rr = run_ranc(ex, b.check(), {{"a", a.binding()}, {"s", s.binding()}});
        report("product", rr.seconds, 8.0 * (n / 4) + 32.0 + 16.0 * n, n);
        a.free();
        s.free();
      }
      if (!reduce_only && !mergejoin_only && !sorts_only) {  // set operations on sorted unique inputs: a = 2i, b = 3i
        std::vector<int32_t> a(n), b2(n);
        for (size_t i = 0; i < n; ++i) {
          a[i] = static_cast<int32_t>(2 * i);
          b2[i] = static_cast<int32_t>(3 * i);
        }
        DeviceRel da = upload(kv("k", "v", 2), {a, a});
        DeviceRel db = upload(kv("k", "v", 2), {b2, b2});
        for (OpKind op : {OpKind::Union, OpKind::Intersect, OpKind::Difference}) {
          ProgramBuilder b;
          // The inputs are sorted, and declared so: no sort runs (the declared order is
          // verified by one pass over the key columns, which counts in the time).
          Rel x = b.input("a", kv("k", "v").attributes, 0, {"k", "v"}),
              y = b.input("b", kv("k", "v").attributes, 0, {"k", "v"});
          Rel o = op == OpKind::Union       ? x.union_with(y)
                  : op == OpKind::Intersect ? x.intersect(y)
                                            : x.difference(y);
          b.output(o, "out");
          RancRun rr = run_ranc(ex, b.check(), {{"a", da.binding()}, {"b", db.binding()}});
          std::string name(op_kind_name(op));
          report(name, rr.seconds, 16.0 * n + 8.0 * rr.output_rows[0], 2 * n);
        }
        da.free();
        db.free();
      }
      if (setops_only) {  // "ra_bench setops 28": the set operations only
        r.free();
        continue;
      }
      if (!reduce_only && !sorts_only) {  // PK-FK join on sorted inputs, 100% match
        size_t npk = n / 4;
        std::vector<int32_t> pk(npk), pv(npk), fk(n), fv(n);
        for (size_t i = 0; i < npk; ++i)
          pk[i] = static_cast<int32_t>(2 * i), pv[i] = static_cast<int32_t>(i + 7);
        for (size_t i = 0; i < n; ++i)
          fk[i] = static_cast<int32_t>(2 * (i / 4)), fv[i] = static_cast<int32_t>(i);
        DeviceRel dp = upload(kv("pk", "pv"), {pk, pv});
        DeviceRel df = upload(kv("fk", "fv"), {fk, fv});
        {  // sorted inputs, declared so: sort-merge join without sorts
          ProgramBuilder b;
          Rel f = b.input("f", kv("fk", "fv").attributes, 0, {"fk"}),
              p = b.input("p", kv("pk", "pv").attributes, 0, {"pk"});
          b.output(f.join(p, {"fk"}, {"pk"}), "out");
          RancRun rr = run_ranc(ex, b.check(), {{"f", df.binding()}, {"p", dp.binding()}});
          report("join pk-fk", rr.seconds, 8.0 * n + 8.0 * npk + 12.0 * n, n);
        }
        if (!merges_only) {  // the same inputs, order not declared: partitioned hash join
          ProgramBuilder b;
          Rel f = b.input("f", kv("fk", "fv").attributes),
              p = b.input("p", kv("pk", "pv").attributes);
          b.output(f.join(p, {"fk"}, {"pk"}), "out");
          RancRun rr = run_ranc(ex, b.check(), {{"f", df.binding()}, {"p", dp.binding()}},
                                {.join = codegen::JoinAlgorithm::Hash});
          report("join pk-fk hash", rr.seconds, 8.0 * n + 8.0 * npk + 12.0 * n, n);
        }
        dp.free();
        df.free();
      }
      if (!mergejoin_only && !sorts_only) {  // segmented reduction over sorted keys, 16 tuples per group
        std::vector<int32_t> g(n);
        for (size_t i = 0; i < n; ++i) g[i] = static_cast<int32_t>(i / 16);
        DeviceRel dg = upload(kv("g", "v"), {g, v});
        ProgramBuilder b;
        b.output(b.input("r", kv("g", "v").attributes, 0, {"g"}).reduce({"g"}, {sum(col("v"), "s")}),
                 "out");
        RancRun rr = run_ranc(ex, b.check(), {{"r", dg.binding()}});
        // The output sum is i64: 4 + 8 bytes per group.
        report("reduce sorted", rr.seconds, 8.0 * n + 12.0 * rr.output_rows[0], n);
        dg.free();
      }
      if (merges_only) {  // "ra_bench merges 28": set operations, sorted join and reduce only
        r.free();
        continue;
      }
      {  // sort pairs: `sort k` orders by (k, v) (ties by the other attribute): both keys
         // pack into one 64-bit word, sorted keys-only
        ProgramBuilder b;
        b.output(b.input("r", kv("k", "v", 0).attributes).sort({"k"}), "out");
        RancRun rr = run_ranc(ex, b.check(), {{"r", r.binding()}});
        report("sort pairs", rr.seconds, 16.0 * n, n, {"sort pairs", "cub sort words", "cub sort words n64"});
      }
      {  // sort of one i32 attribute: CUB sorts the column itself
        ProgramBuilder b;
        b.output(b.input("r", {{"k", Type::I32}}).sort({"k"}), "out");
        DeviceRel kr{Schema{{{"k", Type::I32}}, 0}, {r.cols[0]}, r.rows};
        RancRun rr = run_ranc(ex, b.check(), {{"r", kr.binding()}});
        report("sort keys", rr.seconds, 8.0 * n, n, {"cub sort keys", "cub sort keys n64"});
      }
      {  // the sort codegen emits for an internal sort of (k, v) by k (a join's or a
         // reduce's input; GeneratePlan.SortShapes): one SortPairs step with v as the
         // payload, run by the executor as a plan of its own
        ProgramBuilder b;
        b.output(b.input("r", kv("k", "v", 0).attributes), "out");
        rt::Plan plan = codegen::generate_plan(b.check());
        plan.steps.clear();
        plan.outputs.clear();
        const rt::SlotId size = plan.inputs.at(0).size;
        const rt::BufferId k_in = plan.inputs[0].columns.at(0), v_in = plan.inputs[0].columns.at(1);
        const rt::BufferId k_out = static_cast<rt::BufferId>(plan.buffers.size());
        plan.buffers.push_back({"sorted k", 4, rt::SizeExpr::slot(size)});
        plan.buffers.push_back({"sorted v", 4, rt::SizeExpr::slot(size)});
        plan.steps = {rt::Alloc{k_out}, rt::Alloc{k_out + 1},
                      rt::SortPairs{k_in, k_out, v_in, k_out + 1, Type::I32, false,
                                    rt::SizeExpr::slot(size)}};
        plan.outputs.push_back({"out", kv("k", "v", 0), {k_out, k_out + 1}, size});
        std::vector<double> t;
        for (int i = 0; i < 6; ++i) {
          rt::RunResult res = ex.run_bound(plan, {{"r", r.binding()}});
          if (i > 0) t.push_back(res.stats.execute_seconds);
        }
        std::sort(t.begin(), t.end());
        report("sort by key", t[t.size() / 2], 16.0 * n, n,
               {"cub sort pairs", "cub sort pairs host-timed", "cub sort pairs n64"});
      }
      }  // !chains_only
      if (sorts_only) {  // "ra_bench sorts 28": the sorts only
        r.free();
        continue;
      }
      if (groupby_only) {
        r.free();
        continue;
      }
      // Fused operator chains: ranc fused (the default), ranc unfused (--no-fusion: every
      // intermediate in device memory) and the Thrust operator-at-a-time chain.
      std::printf("\n  chains (fused / unfused / thrust), n = 2^%d:\n", lg);
      std::map<std::string, Measurement> chain_base;
      for (auto& m : bench::run_thrust_chains(n)) chain_base[m.op] = m;
      auto chain = [&](const std::string& op, const Program& p,
                       const std::map<std::string, rt::InputBinding>& in,
                       const std::function<double(const RancRun&)>& bytes,
                       codegen::CodegenOptions o = {}) {
        RancRun fused = run_ranc(ex, p, in, o);
        codegen::CodegenOptions off = o;
        off.fusion = false;
        RancRun unfused = run_ranc(ex, p, in, off);
        Measurement f{op, n, fused.seconds, bytes(fused)}, u{op, n, unfused.seconds, bytes(unfused)};
        print_row(f, copy_gbps, "fused");
        print_row(u, copy_gbps, "unfused");
        if (auto it = chain_base.find(op); it != chain_base.end())
          print_row(it->second, copy_gbps, "thrust");
        std::printf("  %-14s fused is %.2fx unfused\n", op.c_str(), unfused.seconds / fused.seconds);
      };
      auto rows = [](const RancRun& rr) {
        double t = 0;
        for (int64_t x : rr.output_rows) t += static_cast<double>(x);
        return t;
      };
      {
        ProgramBuilder b;
        b.output(b.input("r", kv("k", "v", 0).attributes)
                     .select(col("k") < (1 << 30))
                     .select(col("v") % 2 == 0)
                     .project({as(col("k") + 1, "k1"), as(col("v") * 3 + 1, "v3")}),
                 "out");
        chain("select-select-project", b.check(), {{"r", r.binding()}},
              [&](const RancRun& rr) { return 8.0 * n + 8.0 * rows(rr); });
      }
      {
        ProgramBuilder b;
        Rel in = b.input("r", kv("k", "v", 0).attributes);
        b.output(in.select(col("k") < (1 << 30)), "low");
        b.output(in.select(col("k") >= 3 * (1 << 29)), "high");
        chain("two-selects", b.check(), {{"r", r.binding()}},
              [&](const RancRun& rr) { return 8.0 * n + 8.0 * rows(rr); });
      }
      {
        ProgramBuilder b;
        b.output(b.input("r", kv("k", "v", 0).attributes)
                     .select(col("k") < (1 << 30))
                     .project({as(cast(col("v"), Type::I64) * 2 + 1, "x")})
                     .reduce({}, {sum(col("x"), "s")}),
                 "out");
        chain("select-project-reduce", b.check(), {{"r", r.binding()}},
              [&](const RancRun&) { return 8.0 * n + 8.0; });
      }
      if (select_chains_only) {  // one select of half the rows, for the select chains' A/B
        ProgramBuilder b;
        b.output(b.input("r", kv("k", "v", 0).attributes).select(col("k") < (1 << 30)), "out");
        chain("select", b.check(), {{"r", r.binding()}},
              [&](const RancRun& rr) { return 8.0 * n + 8.0 * rows(rr); });
        // Rows of 16 bytes written (i32, i32, i64): their row numbers staged (SelectAgent).
        ProgramBuilder w;
        w.output(w.input("r", kv("k", "v", 0).attributes)
                     .select(col("k") < (1 << 30))
                     .project({"k", "v", as(cast(col("v"), Type::I64) * 3, "w")}),
                 "out");
        chain("select-project wide", w.check(), {{"r", r.binding()}},
              [&](const RancRun& rr) { return 8.0 * n + 16.0 * rows(rr); });
      }
      if (n % 4 == 0 && !select_chains_only) {  // PK-FK chains: F(k = 2(i/4), v = i), S(pk = 2i, pv = i + 7), both sorted
        const size_t npk = n / 4;
        std::vector<int32_t> fk(n), fv(n), pk(npk), pv(npk);
        for (size_t i = 0; i < n; ++i)
          fk[i] = static_cast<int32_t>(2 * (i / 4)), fv[i] = static_cast<int32_t>(i);
        for (size_t i = 0; i < npk; ++i)
          pk[i] = static_cast<int32_t>(2 * i), pv[i] = static_cast<int32_t>(i + 7);
        DeviceRel df = upload(kv("k", "v"), {fk, fv});
        DeviceRel dp = upload(kv("pk", "pv"), {pk, pv});
        std::map<std::string, rt::InputBinding> in = {{"f", df.binding()}, {"s", dp.binding()}};
        {
          ProgramBuilder b;
          Rel f = b.input("f", kv("k", "v").attributes, 0, {"k"}),
              sp = b.input("s", kv("pk", "pv").attributes, 0, {"pk"});
          b.output(f.select(col("v") % 2 == 0)
                       .project({"k", as(col("v") * 3, "w")})
                       .join(sp, {"k"}, {"pk"}),
                   "out");
          chain("select-project-join", b.check(), in, [&](const RancRun& rr) {
            return 8.0 * n + 8.0 * npk + 12.0 * rows(rr);
          });
        }
        {
          ProgramBuilder b;
          Rel f = b.input("f", kv("k", "v").attributes, 0, {"k"}),
              sp = b.input("s", kv("pk", "pv").attributes, 0, {"pk"});
          b.output(f.join(sp, {"k"}, {"pk"})
                       .select(col("v") % 2 == 0)
                       .reduce({}, {sum(col("v") + col("pv"), "s")}),
                   "out");
          chain("join-select-reduce", b.check(), in,
                [&](const RancRun&) { return 8.0 * n + 8.0 * npk + 8.0; });
          // The same chain with the partitioned hash join (inputs taken as unsorted): the
          // join kernel folds the matches into the sum (fold_hash_joins, join_reduce.cuh), or
          // (RANC_HASH_FOLD=0) the reduce streams the join's pages.
          ProgramBuilder h;
          Rel hf = h.input("f", kv("k", "v").attributes), hs = h.input("s", kv("pk", "pv").attributes);
          h.output(hf.join(hs, {"k"}, {"pk"})
                       .select(col("v") % 2 == 0)
                       .reduce({}, {sum(col("v") + col("pv"), "s")}),
                   "out");
          const Program hp = h.check();
          const double hbytes = 8.0 * n + 8.0 * npk + 8.0;
          chain("join-select-reduce hash", hp, in, [&](const RancRun&) { return hbytes; },
                {.join = codegen::JoinAlgorithm::Hash});
          chain("jsr hash paged", hp, in, [&](const RancRun&) { return hbytes; },
                {.join = codegen::JoinAlgorithm::Hash, .fold_hash_joins = false});
          // The matches written for a group-by of 16 groups (hashed), which streams them: a
          // paged list (plan_paged_edges.h) against dense, and the page size.
          ProgramBuilder g;
          Rel gf = g.input("f", kv("k", "v").attributes), gs = g.input("s", kv("pk", "pv").attributes);
          g.output(gf.join(gs, {"k"}, {"pk"})
                       .select(col("v") % 2 == 0)
                       .project({as(col("pv") % 16, "g"), as(col("v") + col("pv"), "x")})
                       .reduce({"g"}, {sum(col("x"), "s")}),
                   "out");
          const Program gp = g.check();
          chain("join-select-groupby hash", gp, in, [&](const RancRun&) { return hbytes; },
                {.join = codegen::JoinAlgorithm::Hash});
          RancRun dense = run_ranc(ex, gp, in, {.join = codegen::JoinAlgorithm::Hash, .paged = false});
          print_row({"jsgb hash", n, dense.seconds, hbytes}, copy_gbps, "dense");
          for (int pr : {128, 256, 512, 1024, 2048, 4096, 16384}) {
            // A page size whose slot capacity does not fit is the typed out-of-memory error
            // (16384 rows at 2^28): reported, and the chains after it still run.
            try {
              RancRun pg = run_ranc(ex, gp, in, {.join = codegen::JoinAlgorithm::Hash, .page_rows = pr});
              std::printf("  %-14s paged, %5d rows per page: %8.3f ms (dense %.3f ms: %.2fx)\n", "jsgb hash",
                          pr, pg.seconds * 1e3, dense.seconds * 1e3, dense.seconds / pg.seconds);
            } catch (const std::exception& e) {
              std::printf("  %-14s paged, %5d rows per page: failed: %s\n", "jsgb hash", pr, e.what());
            }
          }
        }
        {
          ProgramBuilder h;
          Rel hf = h.input("f", kv("k", "v").attributes), hs = h.input("s", kv("pk", "pv").attributes);
          h.output(hf.select(col("v") % 2 == 0)
                       .project({"k", as(col("v") * 3, "w")})
                       .join(hs, {"k"}, {"pk"}),
                   "out");
          chain("select-project-join hash", h.check(), in, [&](const RancRun& rr) {
            return 8.0 * n + 8.0 * npk + 12.0 * rows(rr);
          }, {.join = codegen::JoinAlgorithm::Hash});
        }
        df.free();
        dp.free();
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ranc failed: %s\n", e.what());
      r.free();
      return 1;
    }
    r.free();
  }
  return 0;
}
