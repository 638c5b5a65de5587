// reduce_tile_bench: the segmented reduce template (templates/reduce.cuh) driven by hand-written
// hooks shaped like the generated ones (an i32 key with its declared-order check, a sum of i32),
// for choosing its tile shape, state width and staging without the generator in the way; next to
// CUB's DeviceReduce::ReduceByKey and the GPU's copy bandwidth on the same arrays.
//   reduce_tile_bench [log2 rows = 28] [rows per group = 16; "~G": groups of random sizes, each
//   row starting a new group with probability 1/G] [ab: only the template's group stores in place
//   (five- and six-block register caps) and deferred in tiles of fewer than 8, 5 (the default)
//   and 4 rows a group (six-block caps), three times each, interleaved]
// Each variant's outputs are checked against a host computation ("ok" / "WRONG"; exit code 1 on
// any WRONG). "reduce + fixup" is the three kernels of reduce.cuh timed by events (median of 15,
// baseline_thrust.h's time_median; the copy ceiling is its measure_copy);
// "kernel" is the reduce kernel alone, timed by events around it over a freshly reset tile
// state each run (until session 33 it reran over the states its last run left complete, so
// every look-back finished at once: a lower bound that read 0.2 ms low at 2^28).
// Session 44's hand-specialised kernels ("direct" vector loads, staged emits, a persistent
// pipelined grid) were removed in session 45, when the template's deferred emits matched the
// staged-emit kernel (bench/RESULTS.md, sessions 44 and 45; the code is in git at 263dfeb).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_reduce.cuh>
#include <ranc/templates/reduce.cuh>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "baseline_thrust.h"

using namespace ranc::tpl;

namespace {

struct alignas(8) Sum128 {
  unsigned long long a, ah;
};
struct alignas(8) Sum64 {
  long long a;
};

// Mode 0: a 128-bit state (add128); 1: a 64-bit state; 2: a 128-bit state whose accumulate adds
// in 64 bits (the high word a sign extension; merges in 128).
// 256 x 15 tiles that defer their emits below R rows a group on average (ReduceAgent's default,
// 5, comes from DeferRowsPerGroup).
template <int R>
struct DeferPolicy : TilePolicy<256, 15> {
  static constexpr int defer_rows_per_group = R;
};
static_assert(ReduceAgent<DeferPolicy<8>>::kDeferRowsPerGroup == 8);
static_assert(ReduceAgent<TilePolicy<256, 15>>::kDeferRowsPerGroup == 5);

template <int Mode>
struct Fn {
  const int* g;
  const int* v;
  int* order_flag;
  int* out_g;
  long long* out_s;
  int* overflow;
  using State = std::conditional_t<Mode == 1, Sum64, Sum128>;
  __device__ State init() const { return State{}; }
  __device__ void accumulate(State& s, long long r) const {
    if constexpr (Mode == 1) {
      s.a += v[r];
    } else if constexpr (Mode == 2) {
      s.a += static_cast<unsigned long long>(static_cast<long long>(v[r]));
      s.ah = static_cast<unsigned long long>(static_cast<long long>(s.a) >> 63);
    } else {
      add128(s.a, s.ah, v[r]);
    }
  }
  __device__ void merge(State& a, const State& b) const {
    if constexpr (Mode == 1) {
      if (add_overflows(a.a, b.a)) overflow[0] = 1;
    } else {
      merge128(a.a, a.ah, b.a, b.ah);
    }
  }
  __device__ bool same(long long i, long long j) const {
    const int c = cmp3(g[j], g[i]);
    if (c > 0) order_flag[0] = 1;
    return c == 0;
  }
  __device__ void write(long long group, long long first, const State& s) const {
    out_g[group] = g[first];
    if constexpr (Mode != 1)
      if (!fits_i64(s.a, s.ah)) overflow[0] = 1;
    out_s[group] = static_cast<long long>(s.a);
  }
};
template <class F>
struct Agg {
  const F* f;
  using State = typename F::State;
  __device__ State init() const { return f->init(); }
  __device__ void accumulate(State& s, long long r) const { f->accumulate(s, r); }
  __device__ void merge(State& a, const State& b) const { f->merge(a, b); }
};

__global__ void init_kernel(void* tile_state, long long tiles) { init_tile_state(tile_state, tiles); }

// Staged: the stage hook copies the tile's rows of g and v into shared memory and points the
// functor at the copies, as the generator's does. Release: the release hook gives g's copy back
// (pointing the functor at g again), as the generator's does for a key accumulate does not read:
// tiles of many groups then store their groups a window at a time from it. The generator caps
// such a kernel's registers at 5 blocks an SM (MinBlocks 5): ptxas takes 56 otherwise (4 blocks).
// MinBlocks: __launch_bounds__'s minimum blocks an SM (0: none), which caps the registers.
template <class P, bool Staged, int Mode, bool Release = false, int MinBlocks = 0>
__global__ void __launch_bounds__(P::block_threads, MinBlocks)
    reduce_kernel(Fn<Mode> f, long long n, void* ts, void* carry, void* tail, long long* meta, long long* count) {
  using State = typename Fn<Mode>::State;
  using Agent = ReduceAgent<P>;
  __shared__ typename Agent::template TempStorageT<State> temp;
  __shared__ __align__(16) int sg[Staged ? stage_elems<int>(Agent::max_stage_rows) : 1];
  __shared__ __align__(16) int sv[Staged ? stage_elems<int>(Agent::max_stage_rows) : 1];
  const int* const global_g = f.g;
  Agent::run(
      temp, n, [&](long long i, long long j) { return f.same(i, j); }, Agg<Fn<Mode>>{&f},
      [&](long long group, long long first, const State& s) { f.write(group, first, s); }, ts, carry,
      tail, meta, count, [&](long long lo, long long hi) {
        if (!Staged) return false;
        f.g = stage_rows<P::block_threads>(sg, f.g, lo, hi);
        f.v = stage_rows<P::block_threads>(sv, f.v, lo, hi);
        return true;
      },
      [&](void*& mem) {
        if (!Staged || !Release) return 0;
        f.g = global_g;
        mem = sg;
        return static_cast<int>(sizeof(sg));
      });
}
template <int Mode>
__global__ void fixup_kernel(Fn<Mode> f, long long tiles, void* carry, void* tail, long long* meta) {
  using State = typename Fn<Mode>::State;
  ReduceFixupAgent::run(
      tiles, Agg<Fn<Mode>>{&f},
      [&](long long group, long long first, const State& s) { f.write(group, first, s); }, carry, tail,
      meta);
}

// Median milliseconds of 15 runs.
template <class Run>
double median_ms(Run run) {
  return ranc::bench::time_median(run, 15) * 1e3;
}

struct Data {
  long long n = 0, groups = 0;
  int *g = nullptr, *v = nullptr, *order_flag = nullptr, *out_g = nullptr, *overflow = nullptr;
  long long *out_s = nullptr, *meta = nullptr, *count = nullptr;
  void *ts = nullptr, *carry = nullptr, *tail = nullptr;
  std::vector<long long> want;
  double copy_gbs = 0;
  bool wrong = false;
};

// One variant: `reduce(f)` launches its reduce kernel over `tiles` tiles.
template <int Mode, class Reduce>
void run_variant(Data& d, const char* name, long long tiles, Reduce reduce) {
  const Fn<Mode> f{d.g, d.v, d.order_flag, d.out_g, d.out_s, d.overflow};
  auto run = [&] {
    init_kernel<<<static_cast<unsigned>((tiles + 255) / 256), 256>>>(d.ts, tiles);
    reduce(f);
    fixup_kernel<Mode><<<static_cast<unsigned>((tiles + 255) / 256), 256>>>(f, tiles, d.carry, d.tail, d.meta);
  };
  RANC_BENCH_CK(cudaMemset(d.out_s, 0, 8 * d.groups));
  run();
  RANC_BENCH_CK(cudaGetLastError());
  RANC_BENCH_CK(cudaDeviceSynchronize());
  long long count = 0;
  int flags[2] = {0, 0};
  RANC_BENCH_CK(cudaMemcpy(&count, d.count, 8, cudaMemcpyDeviceToHost));
  RANC_BENCH_CK(cudaMemcpy(&flags[0], d.order_flag, 4, cudaMemcpyDeviceToHost));
  RANC_BENCH_CK(cudaMemcpy(&flags[1], d.overflow, 4, cudaMemcpyDeviceToHost));
  std::vector<long long> got(d.groups);
  RANC_BENCH_CK(cudaMemcpy(got.data(), d.out_s, 8 * d.groups, cudaMemcpyDeviceToHost));
  std::vector<int> got_g(d.groups);
  RANC_BENCH_CK(cudaMemcpy(got_g.data(), d.out_g, 4 * d.groups, cudaMemcpyDeviceToHost));
  bool keys_ok = true;
  for (long long i = 0; i < d.groups; ++i) keys_ok = keys_ok && got_g[i] == static_cast<int>(i);
  const bool ok = count == d.groups && got == d.want && keys_ok && flags[0] == 0 && flags[1] == 0;
  d.wrong = d.wrong || !ok;
  const double ms = median_ms(run);
  // The reduce kernel alone, each run over a freshly reset tile state (a state left complete
  // by the run before would let every tile's look-back finish at once): events around the
  // reduce only, the reset and the fixup outside them; median of 15.
  std::vector<float> kernel_runs;
  cudaEvent_t start, stop;
  RANC_BENCH_CK(cudaEventCreate(&start));
  RANC_BENCH_CK(cudaEventCreate(&stop));
  for (int i = 0; i < 15; ++i) {
    init_kernel<<<static_cast<unsigned>((tiles + 255) / 256), 256>>>(d.ts, tiles);
    RANC_BENCH_CK(cudaEventRecord(start));
    reduce(f);
    RANC_BENCH_CK(cudaEventRecord(stop));
    RANC_BENCH_CK(cudaEventSynchronize(stop));
    float t = 0;
    RANC_BENCH_CK(cudaEventElapsedTime(&t, start, stop));
    kernel_runs.push_back(t);
  }
  RANC_BENCH_CK(cudaEventDestroy(start));
  RANC_BENCH_CK(cudaEventDestroy(stop));
  std::sort(kernel_runs.begin(), kernel_runs.end());
  const double kernel_ms = kernel_runs[kernel_runs.size() / 2];
  const double bytes = 8.0 * d.n + 12.0 * d.groups;
  std::printf("  %-40s %8.3f ms %5.1f%% of copy (kernel %.3f ms) %s\n", name, ms,
              100.0 * bytes / ms / 1e6 / d.copy_gbs, kernel_ms, ok ? "ok" : "WRONG");
}

template <class P, bool Staged, int Mode, bool Release = false, int MinBlocks = 0>
void variant(Data& d, const char* name) {
  run_variant<Mode>(d, name, num_tiles(d.n, P::tile_items), [&](const Fn<Mode>& f) {
    reduce_kernel<P, Staged, Mode, Release, MinBlocks><<<static_cast<unsigned>(num_tiles(d.n, P::tile_items)), P::block_threads>>>(
        f, d.n, d.ts, d.carry, d.tail, d.meta, d.count);
  });
}
}  // namespace

int main(int argc, char** argv) {
  const std::string device = ranc::bench::device_or_skip();
  if (device.empty()) return 0;
  const int log_n = argc > 1 ? std::atoi(argv[1]) : 28;
  const std::string per_arg = argc > 2 ? argv[2] : "16";
  const bool random_sizes = !per_arg.empty() && per_arg[0] == '~';
  const double per = std::atof(per_arg.c_str() + (random_sizes ? 1 : 0));
  const bool ab = argc > 3 && std::string(argv[3]) == "ab";
  if (log_n < 1 || log_n > 31 || per < 1 || (!random_sizes && per != static_cast<long long>(per))) {
    std::printf("usage: reduce_tile_bench [log2 rows in 1..31] [rows per group: an integer >= 1, or ~G]\n");
    return 2;
  }
  Data d;
  d.n = 1ll << log_n;
  std::vector<int> g(d.n), v(d.n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  long long group = -1;
  for (long long i = 0; i < d.n; ++i) {
    if (random_sizes ? (i == 0 || uniform(rng) * per < 1.0) : i % static_cast<long long>(per) == 0) {
      ++group;
      d.want.push_back(0);
    }
    g[i] = static_cast<int>(group);
    v[i] = static_cast<int>(rng() % 2000001) - 1000000;
    d.want[group] += v[i];
  }
  d.groups = group + 1;
  RANC_BENCH_CK(cudaMalloc(&d.g, 4 * d.n));
  RANC_BENCH_CK(cudaMalloc(&d.v, 4 * d.n));
  RANC_BENCH_CK(cudaMalloc(&d.order_flag, 4));
  RANC_BENCH_CK(cudaMalloc(&d.overflow, 4));
  RANC_BENCH_CK(cudaMalloc(&d.out_g, 4 * d.groups));
  RANC_BENCH_CK(cudaMalloc(&d.out_s, 8 * d.groups));
  const long long max_tiles = num_tiles(d.n, 64);
  RANC_BENCH_CK(cudaMalloc(&d.ts, tile_state_bytes(max_tiles)));
  RANC_BENCH_CK(cudaMalloc(&d.carry, 16 * max_tiles));
  RANC_BENCH_CK(cudaMalloc(&d.tail, 16 * max_tiles));
  RANC_BENCH_CK(cudaMalloc(&d.meta, 24 * max_tiles));
  RANC_BENCH_CK(cudaMalloc(&d.count, 8));
  RANC_BENCH_CK(cudaMemcpy(d.g, g.data(), 4 * d.n, cudaMemcpyHostToDevice));
  RANC_BENCH_CK(cudaMemcpy(d.v, v.data(), 4 * d.n, cudaMemcpyHostToDevice));
  RANC_BENCH_CK(cudaMemset(d.order_flag, 0, 4));
  RANC_BENCH_CK(cudaMemset(d.overflow, 0, 4));

  d.copy_gbs = ranc::bench::measure_copy(8 * static_cast<size_t>(d.n)).gbps();
  std::printf("device: %s\nn = 2^%d rows, %s%g a group (%lld groups), sum of i32; copy %.1f GB/s (read+write)\n",
              device.c_str(), log_n, random_sizes ? "random sizes, mean " : "", per, d.groups, d.copy_gbs);
  {
    int *keys_out = nullptr, *sums_out = nullptr;
    long long* runs = nullptr;
    RANC_BENCH_CK(cudaMalloc(&keys_out, 4 * d.groups));
    RANC_BENCH_CK(cudaMalloc(&sums_out, 4 * d.groups));
    RANC_BENCH_CK(cudaMalloc(&runs, 8));
    size_t bytes = 0;
    RANC_BENCH_CK(cub::DeviceReduce::ReduceByKey(nullptr, bytes, d.g, keys_out, d.v, sums_out, runs,
                                                 cuda::std::plus<>{}, d.n));
    void* temp = nullptr;
    RANC_BENCH_CK(cudaMalloc(&temp, bytes));
    const double ms = median_ms([&] {
      RANC_BENCH_CK(cub::DeviceReduce::ReduceByKey(temp, bytes, d.g, keys_out, d.v, sums_out, runs,
                                                   cuda::std::plus<>{}, d.n));
    });
    std::printf("  %-40s %8.3f ms %5.1f%% of copy (i32 sums: 8 bytes a group written)\n",
                "CUB DeviceReduce::ReduceByKey", ms, 100.0 * (8.0 * d.n + 8.0 * d.groups) / ms / 1e6 / d.copy_gbs);
    RANC_BENCH_CK(cudaFree(temp));
    RANC_BENCH_CK(cudaFree(keys_out));
    RANC_BENCH_CK(cudaFree(sums_out));
    RANC_BENCH_CK(cudaFree(runs));
  }
  if (ab) {  // the template's stores in place and deferred below 8, 5 and 4 rows a group,
           // interleaved, three times each (session 46's A/B of the caps is in git at 95ef687)
    for (int i = 0; i < 3; ++i) {
      variant<TilePolicy<256, 15>, true, 1, false, 5>(d, "staged, in place, 5-block cap");
      variant<TilePolicy<256, 15>, true, 1, false, 6>(d, "staged, in place, 6-block cap");
      variant<DeferPolicy<8>, true, 1, true, 6>(d, "deferred below 8 rows a group, 6-block cap");
      variant<TilePolicy<256, 15>, true, 1, true, 6>(d, "deferred below 5 (the default), 6-block cap");
      variant<DeferPolicy<4>, true, 1, true, 6>(d, "deferred below 4 rows a group, 6-block cap");
    }
    return d.wrong ? 1 : 0;
  }
  variant<TilePolicy<128, 8>, false, 0>(d, "128 x 8, 128-bit, in place (before)");
  variant<TilePolicy<128, 15>, false, 0>(d, "128 x 15, 128-bit, in place");
  variant<TilePolicy<128, 15>, false, 1>(d, "128 x 15, 64-bit, in place");
  variant<TilePolicy<128, 15>, false, 2>(d, "128 x 15, 128-bit, 64-bit accumulate");
  variant<TilePolicy<256, 15>, false, 1>(d, "256 x 15, 64-bit, in place");
  variant<TilePolicy<256, 15>, true, 1>(d, "256 x 15, 64-bit, staged, emits in place");
  variant<TilePolicy<256, 15>, true, 1, true, 5>(d, "256 x 15, 64-bit, staged (the default)");
  variant<TilePolicy<256, 11>, false, 1>(d, "256 x 11, 64-bit, in place");
  variant<TilePolicy<256, 11>, true, 1>(d, "256 x 11, 64-bit, staged");
  variant<TilePolicy<256, 19>, true, 1>(d, "256 x 19, 64-bit, staged");
  return d.wrong ? 1 : 0;
}
