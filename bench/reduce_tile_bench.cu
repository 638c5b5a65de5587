// reduce_tile_bench: the segmented reduce template (templates/reduce.cuh) driven by hand-written
// hooks shaped like the generated ones (an i32 key with its declared-order check, a sum of i32),
// for choosing its tile shape, state width and staging without the generator in the way; next to
// CUB's DeviceReduce::ReduceByKey and the GPU's copy bandwidth on the same arrays.
//   reduce_tile_bench [log2 rows = 28] [rows per group = 16] [ab: only the template's group
//   stores in place and deferred, three times each, interleaved]
// Each variant's outputs are checked against a host computation ("ok" / "WRONG"; exit code 1 on
// any WRONG). "reduce + fixup" is the three kernels of reduce.cuh timed by events (median of 15,
// baseline_thrust.h's time_median; the copy ceiling is its measure_copy);
// "kernel" is the reduce kernel alone, timed by events around it over a freshly reset tile
// state each run (until session 33 it reran over the states its last run left complete, so
// every look-back finished at once: a lower bound that read 0.2 ms low at 2^28).
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

#define CK(x)                                                                     \
  do {                                                                            \
    cudaError_t e_ = (x);                                                         \
    if (e_ != cudaSuccess) {                                                      \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(2);                                                               \
    }                                                                             \
  } while (0)

namespace {

struct alignas(8) Sum128 {
  unsigned long long a, ah;
};
struct alignas(8) Sum64 {
  long long a;
};

// Mode 0: a 128-bit state (add128); 1: a 64-bit state; 2: a 128-bit state whose accumulate adds
// in 64 bits (the high word a sign extension; merges in 128).
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

// "direct": the ReduceAgent's protocol (head counts, look-back, segmented scan, carry/tail/meta
// for the fixup) with the rows loaded straight into registers by 16-byte vector loads (thread t
// holds rows t * Items ..), no staging in shared memory and no per-row hook reads; the key of a
// group a thread finishes is its own first key (a group's rows share it). A measure of how far
// the template's staged, hook-driven loop is from a hand-specialised one.
// StagedEmit: the groups a tile finishes are written to shared memory by the threads that
// finish them, then stored by the whole block in order (coalesced), instead of each thread
// storing its groups where they go (scattered across a warp's store instructions).
template <int Threads, int Items, bool StagedEmit = false>
struct DirectTile {
  static_assert(Items % 4 == 0 && Items < 32, "direct: Items");
  static constexpr int kTile = Threads * Items;
  using State = Sum64;
  using Item = SegmentItem<State>;
  struct Temp {
    typename BlockScan<int, Threads>::TempStorage count_scan;
    typename BlockScan<Item, Threads>::TempStorage seg_scan;
    TilePrefix::TempStorage prefix;
    int s_key[StagedEmit ? kTile : 1];
    long long s_sum[StagedEmit ? kTile : 1];
    int open_last;
  };
  // A tile's rows of one thread, its neighbours' keys (the row before its first, for lane 0,
  // and the row after its last, for lane 31: the other lanes take them from their neighbours).
  struct Rows {
    int key[Items], val[Items];
    int prev, next;
  };
  __device__ __forceinline__ static void load(const Fn<1>& f, long long n, long long tile, Rows& r) {
    const long long first = tile * kTile + static_cast<long long>(threadIdx.x) * Items;
    const int lane = static_cast<int>(threadIdx.x & 31);
    if (first + Items <= n) {
#pragma unroll
      for (int q = 0; q < Items / 4; ++q) {
        const int4 a = reinterpret_cast<const int4*>(f.g + first)[q];
        const int4 b = reinterpret_cast<const int4*>(f.v + first)[q];
        r.key[4 * q] = a.x, r.key[4 * q + 1] = a.y, r.key[4 * q + 2] = a.z, r.key[4 * q + 3] = a.w;
        r.val[4 * q] = b.x, r.val[4 * q + 1] = b.y, r.val[4 * q + 2] = b.z, r.val[4 * q + 3] = b.w;
      }
    } else {
#pragma unroll
      for (int k = 0; k < Items; ++k) {
        r.key[k] = first + k < n ? f.g[first + k] : 0;
        r.val[k] = first + k < n ? f.v[first + k] : 0;
      }
    }
    r.prev = lane == 0 && first > 0 && first <= n ? f.g[first - 1] : 0;
    r.next = lane == 31 && first + Items < n ? f.g[first + Items] : 0;
  }
  __device__ __forceinline__ static void run(Temp& temp, const Fn<1>& f, long long n, long long tile,
                                             const Rows& r, TileState& ts, void* carry_buf,
                                             void* tail_buf, long long* meta, long long* out_count,
                                             bool last_tile) {
    State* carry = static_cast<State*>(carry_buf);
    State* tail = static_cast<State*>(tail_buf);
    const long long base = tile * kTile;
    const long long tile_last = min64(base + kTile, n) - 1;
    const long long first = base + static_cast<long long>(threadIdx.x) * Items;
    const int valid = static_cast<int>(max64(0, min64(Items, tile_last - first + 1)));
    const int lane = static_cast<int>(threadIdx.x & 31);
    int prev = __shfl_up_sync(0xffffffffu, r.key[Items - 1], 1);
    int next = __shfl_down_sync(0xffffffffu, r.key[0], 1);
    if (lane == 0) prev = r.prev;
    const bool has_next = valid > 0 && first + valid < n;
    if (lane == 31) next = r.next;  // (valid < Items only at the end of the rows: no next)
    unsigned head = 0;
    bool disorder = false;
    if (valid > 0) {
      if (first == 0 || prev != r.key[0]) head |= 1u;
      disorder |= first > 0 && prev > r.key[0];
#pragma unroll
      for (int k = 1; k < Items; ++k) {
        if (k < valid && r.key[k] != r.key[k - 1]) head |= 1u << k;
        disorder |= k < valid && r.key[k - 1] > r.key[k];
      }
      if (!has_next || next != r.key[valid - 1]) head |= 1u << valid;
      disorder |= has_next && r.key[valid - 1] > next;
    }
    if (disorder) f.order_flag[0] = 1;
    if constexpr (StagedEmit)
      if (threadIdx.x == 0) temp.open_last = 0;  // (read after the scans' barriers)
    const unsigned rows_mask = (1u << valid) - 1;
    int heads_before, tile_heads;
    BlockScan<int, Threads>(temp.count_scan).ExclusiveSum(__popc(head & rows_mask), heads_before, tile_heads);
    long long inclusive;
    const long long prefix = TilePrefix::run(temp.prefix, ts, tile, tile_heads, inclusive);
    if (threadIdx.x == 0 && valid > 0 && (head & 1u)) carry[tile] = State{};
    State pre{}, cur{};
    long long cur_head = -1;
    int cur_key = 0;
    long long group = prefix + heads_before - 1;
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      if (k < valid) {
        if ((head >> k) & 1u) {
          if (cur_head < 0) pre = cur;
          cur.a = 0;
          cur_head = first + k;
          cur_key = r.key[k];
          ++group;
        }
        cur.a += r.val[k];
        if (((head >> (k + 1)) & 1u) && cur_head >= 0) {
          if constexpr (StagedEmit) {
            temp.s_key[group - prefix] = cur_key;
            temp.s_sum[group - prefix] = cur.a;
          } else {
            f.out_g[group] = cur_key;
            f.out_s[group] = cur.a;
          }
        }
      }
    }
    Item carry_in;
    const Item identity{-1, State{}};
    BlockScan<Item, Threads>(temp.seg_scan).ExclusiveScan(Item{cur_head, cur}, carry_in, identity,
                                                          SegmentOp<Agg<Fn<1>>>{Agg<Fn<1>>{&f}});
    const bool holds_last = valid > 0 && first + valid - 1 == tile_last;
    const unsigned ends = head & (rows_mask | (1u << valid));
    if (valid > 0 && !(head & 1u)) {
      State s = carry_in.state;
      s.a += (cur_head >= 0 ? pre : cur).a;
      if (ends != 0) {
        if (carry_in.head_row >= 0) {
          if constexpr (StagedEmit) {
            temp.s_key[heads_before - 1] = r.key[0];
            temp.s_sum[heads_before - 1] = s.a;
          } else {
            f.out_g[prefix + heads_before - 1] = r.key[0];
            f.out_s[prefix + heads_before - 1] = s.a;
          }
        } else {
          carry[tile] = s;
        }
      } else if (holds_last) {
        if (carry_in.head_row >= 0) {
          tail[tile] = s;
          if constexpr (StagedEmit) temp.open_last = 1;
          meta[3 * tile + 0] = prefix + heads_before - 1;
          meta[3 * tile + 1] = carry_in.head_row;
        } else {
          carry[tile] = s;
          meta[3 * tile + 0] = -1;
          meta[3 * tile + 1] = -1;
        }
      }
    }
    if (holds_last && cur_head >= 0) {
      const bool open = !((head >> valid) & 1u);
      if (open) tail[tile] = cur;
      if constexpr (StagedEmit)
        if (open) temp.open_last = 1;
      meta[3 * tile + 0] = open ? group : -1;
      meta[3 * tile + 1] = cur_head;
    } else if (holds_last && ends != 0) {
      meta[3 * tile + 0] = -1;
      meta[3 * tile + 1] = -1;
    }
    if (threadIdx.x == 0) {
      meta[3 * tile + 2] = tile_heads;
      if (tile_last < base) {
        meta[3 * tile + 0] = -1;
        meta[3 * tile + 1] = -1;
      }
    }
    if (last_tile && threadIdx.x == 0) *out_count = inclusive;
    if constexpr (StagedEmit) {
      __syncthreads();
      const int emitted = tile_heads - temp.open_last;
      for (int i = static_cast<int>(threadIdx.x); i < emitted; i += Threads) {
        f.out_g[prefix + i] = temp.s_key[i];
        f.out_s[prefix + i] = temp.s_sum[i];
      }
      __syncthreads();
    }
  }
};

template <int Threads, int Items, bool StagedEmit>
__global__ void __launch_bounds__(Threads)
    direct_kernel(Fn<1> f, long long n, void* ts_buf, void* carry_buf, void* tail_buf, long long* meta,
                  long long* out_count) {
  using T = DirectTile<Threads, Items, StagedEmit>;
  __shared__ typename T::Temp temp;
  TileState ts = make_tile_state(ts_buf);
  typename T::Rows r;
  T::load(f, n, blockIdx.x, r);
  T::run(temp, f, n, blockIdx.x, r, ts, carry_buf, tail_buf, meta, out_count, blockIdx.x == gridDim.x - 1);
}

// "pipelined": a grid of resident blocks takes tiles in order from a counter (so every tile a
// look-back waits for is held by a running block) and loads the next tile's rows into a second
// set of registers before it works on the current one: the loads of one tile overlap the scans,
// look-back and stores of the other, instead of waiting for other blocks to fill the memory
// pipe. The counter (counter[0]) starts at 0. Measured slower than a block a tile (H200,
// session 44: 2.2-4.5 ms against 1.19 at 16 rows a group): a claimed tile not yet begun
// publishes no count, so the look-backs behind it wait for its block's current tile.
template <int Threads, int Items, int MinBlocks>
__global__ void __launch_bounds__(Threads, MinBlocks)
    piped_kernel(Fn<1> f, long long n, long long tiles, unsigned long long* counter, void* ts_buf,
                 void* carry_buf, void* tail_buf, long long* meta, long long* out_count) {
  using T = DirectTile<Threads, Items>;
  __shared__ typename T::Temp temp;
  __shared__ long long claimed;
  TileState ts = make_tile_state(ts_buf);
  // A block holds at most one tile it has not begun (the one it loads while it works on the
  // current one): a tile that holds more leaves look-backs waiting on tiles whose blocks are busy
  // (session 44: two ahead ran 6.6-13.8 ms, one ahead 2.2-4.5).
  auto claim = [&]() -> long long {
    if (threadIdx.x == 0) claimed = static_cast<long long>(atomicAdd(counter, 1ull));
    __syncthreads();
    const long long t = claimed;
    __syncthreads();  // read by all before the next claim writes it
    return t;
  };
  typename T::Rows a, b;
  long long t0 = claim();
  if (t0 < tiles) T::load(f, n, t0, a);
  while (t0 < tiles) {  // two tiles an iteration, the register sets alternating
    const long long t1 = claim();
    if (t1 < tiles) T::load(f, n, t1, b);
    T::run(temp, f, n, t0, a, ts, carry_buf, tail_buf, meta, out_count, t0 == tiles - 1);
    if (t1 >= tiles) break;
    t0 = claim();
    if (t0 < tiles) T::load(f, n, t0, a);
    T::run(temp, f, n, t1, b, ts, carry_buf, tail_buf, meta, out_count, t1 == tiles - 1);
  }
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
  unsigned long long* counter = nullptr;
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
  CK(cudaMemset(d.out_s, 0, 8 * d.groups));
  run();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  long long count = 0;
  int flags[2] = {0, 0};
  CK(cudaMemcpy(&count, d.count, 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&flags[0], d.order_flag, 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&flags[1], d.overflow, 4, cudaMemcpyDeviceToHost));
  std::vector<long long> got(d.groups);
  CK(cudaMemcpy(got.data(), d.out_s, 8 * d.groups, cudaMemcpyDeviceToHost));
  std::vector<int> got_g(d.groups);
  CK(cudaMemcpy(got_g.data(), d.out_g, 4 * d.groups, cudaMemcpyDeviceToHost));
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
  CK(cudaEventCreate(&start));
  CK(cudaEventCreate(&stop));
  for (int i = 0; i < 15; ++i) {
    init_kernel<<<static_cast<unsigned>((tiles + 255) / 256), 256>>>(d.ts, tiles);
    CK(cudaEventRecord(start));
    reduce(f);
    CK(cudaEventRecord(stop));
    CK(cudaEventSynchronize(stop));
    float t = 0;
    CK(cudaEventElapsedTime(&t, start, stop));
    kernel_runs.push_back(t);
  }
  CK(cudaEventDestroy(start));
  CK(cudaEventDestroy(stop));
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
__global__ void zero_counter(unsigned long long* c) { *c = 0; }
template <int Threads, int Items, int MinBlocks>
void piped_variant(Data& d, const char* name) {
  const long long tiles = num_tiles(d.n, Threads * Items);
  int per_sm = 0, sms = 0, dev = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, piped_kernel<Threads, Items, MinBlocks>, Threads, 0));
  const long long grid = std::min<long long>(tiles, static_cast<long long>(per_sm) * sms);
  char label[96];
  std::snprintf(label, sizeof label, "%s (%d a SM)", name, per_sm);
  run_variant<1>(d, label, tiles, [&](const Fn<1>& f) {
    zero_counter<<<1, 1>>>(d.counter);
    piped_kernel<Threads, Items, MinBlocks><<<static_cast<unsigned>(grid), Threads>>>(
        f, d.n, tiles, d.counter, d.ts, d.carry, d.tail, d.meta, d.count);
  });
}
template <int Threads, int Items, bool StagedEmit = false>
void direct_variant(Data& d, const char* name) {
  const long long tiles = num_tiles(d.n, Threads * Items);
  run_variant<1>(d, name, tiles, [&](const Fn<1>& f) {
    direct_kernel<Threads, Items, StagedEmit><<<static_cast<unsigned>(tiles), Threads>>>(f, d.n, d.ts, d.carry, d.tail,
                                                                             d.meta, d.count);
  });
}

}  // namespace

int main(int argc, char** argv) {
  const std::string device = ranc::bench::device_name();
  if (device.empty()) {
    std::printf("SKIPPED: no GPU available\n");
    return 0;
  }
  const int log_n = argc > 1 ? std::atoi(argv[1]) : 28;
  const long long per = argc > 2 ? std::atoll(argv[2]) : 16;
  const bool ab = argc > 3 && std::string(argv[3]) == "ab";
  if (log_n < 1 || log_n > 31 || per < 1) {
    std::printf("usage: reduce_tile_bench [log2 rows in 1..31] [rows per group >= 1]\n");
    return 2;
  }
  Data d;
  d.n = 1ll << log_n;
  d.groups = (d.n + per - 1) / per;
  std::vector<int> g(d.n), v(d.n);
  std::mt19937 rng(1);
  d.want.assign(d.groups, 0);
  for (long long i = 0; i < d.n; ++i) {
    g[i] = static_cast<int>(i / per);
    v[i] = static_cast<int>(rng() % 2000001) - 1000000;
    d.want[i / per] += v[i];
  }
  CK(cudaMalloc(&d.g, 4 * d.n));
  CK(cudaMalloc(&d.v, 4 * d.n));
  CK(cudaMalloc(&d.order_flag, 4));
  CK(cudaMalloc(&d.overflow, 4));
  CK(cudaMalloc(&d.out_g, 4 * d.groups));
  CK(cudaMalloc(&d.out_s, 8 * d.groups));
  const long long max_tiles = num_tiles(d.n, 64);
  CK(cudaMalloc(&d.ts, tile_state_bytes(max_tiles)));
  CK(cudaMalloc(&d.carry, 16 * max_tiles));
  CK(cudaMalloc(&d.tail, 16 * max_tiles));
  CK(cudaMalloc(&d.meta, 24 * max_tiles));
  CK(cudaMalloc(&d.count, 8));
  CK(cudaMalloc(&d.counter, 8));
  CK(cudaMemcpy(d.g, g.data(), 4 * d.n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.v, v.data(), 4 * d.n, cudaMemcpyHostToDevice));
  CK(cudaMemset(d.order_flag, 0, 4));
  CK(cudaMemset(d.overflow, 0, 4));

  d.copy_gbs = ranc::bench::measure_copy(8 * static_cast<size_t>(d.n)).gbps();
  std::printf("device: %s\nn = 2^%d rows, %lld a group, sum of i32; copy %.1f GB/s (read+write)\n",
              device.c_str(), log_n, per, d.copy_gbs);
  {
    int *keys_out = nullptr, *sums_out = nullptr;
    long long* runs = nullptr;
    CK(cudaMalloc(&keys_out, 4 * d.groups));
    CK(cudaMalloc(&sums_out, 4 * d.groups));
    CK(cudaMalloc(&runs, 8));
    size_t bytes = 0;
    CK(cub::DeviceReduce::ReduceByKey(nullptr, bytes, d.g, keys_out, d.v, sums_out, runs, cuda::std::plus<>{},
                                      d.n));
    void* temp = nullptr;
    CK(cudaMalloc(&temp, bytes));
    const double ms = median_ms([&] {
      CK(cub::DeviceReduce::ReduceByKey(temp, bytes, d.g, keys_out, d.v, sums_out, runs, cuda::std::plus<>{},
                                        d.n));
    });
    std::printf("  %-40s %8.3f ms %5.1f%% of copy (i32 sums: 8 bytes a group written)\n",
                "CUB DeviceReduce::ReduceByKey", ms, 100.0 * (8.0 * d.n + 8.0 * d.groups) / ms / 1e6 / d.copy_gbs);
    CK(cudaFree(temp));
    CK(cudaFree(keys_out));
    CK(cudaFree(sums_out));
    CK(cudaFree(runs));
  }
  if (ab) {  // the template's stores in place and deferred, interleaved, three times each
    for (int i = 0; i < 3; ++i) {
      variant<TilePolicy<256, 15>, true, 1>(d, "256 x 15, 64-bit, staged, emits in place");
      variant<TilePolicy<256, 15>, true, 1, true, 5>(d, "256 x 15, 64-bit, staged (the default)");
      variant<TilePolicy<256, 15>, true, 1, true>(d, "256 x 15, staged, deferred, no register cap");
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
  direct_variant<256, 8>(d, "256 x 8, 64-bit, direct vector loads");
  direct_variant<256, 16>(d, "256 x 16, 64-bit, direct vector loads");
  direct_variant<128, 16>(d, "128 x 16, 64-bit, direct vector loads");
  direct_variant<512, 8>(d, "512 x 8, 64-bit, direct vector loads");
  direct_variant<256, 8, true>(d, "256 x 8, direct, staged emits");
  direct_variant<128, 16, true>(d, "128 x 16, direct, staged emits");
  direct_variant<256, 12, true>(d, "256 x 12, direct, staged emits");
  piped_variant<256, 8, 1>(d, "256 x 8, pipelined");
  piped_variant<256, 16, 1>(d, "256 x 16, pipelined");
  piped_variant<128, 16, 1>(d, "128 x 16, pipelined");
  piped_variant<128, 8, 1>(d, "128 x 8, pipelined");
  piped_variant<256, 8, 3>(d, "256 x 8, pipelined, 3 blocks");
  piped_variant<128, 16, 4>(d, "128 x 16, pipelined, 4 blocks");
  return d.wrong ? 1 : 0;
}
