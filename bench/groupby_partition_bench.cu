// groupby_partition_bench: ways to group 2^N unsorted (i32 key, i32 value) rows into G groups
// (keys uniform in [0, G), G = 2^B) with the sum of the values into i64, for choosing how ranc's
// many-group aggregation should work (issue 9's target: 2^28 rows into 2^24 groups at 50% of
// copy; ranc's plan sorts all the key's bits and reduces the runs, 7.2% on the H200):
//   "cub sort + ReduceByKey": SortPairs on bits [0, B), then ReduceByKey (the sort path);
//   "partition 2 passes + buckets": SortPairs on bits [8, B) only (the keys' high bits, two
//     onesweep passes at B = 24), then one block per bucket of 256 keys sums the bucket's rows
//     in shared memory;
//   "partition 2 passes + offsets + buckets": the same, with every bucket's first row found by
//     one thread a bucket before the bucket kernel (no binary search in front of each block);
//   "partition 1 pass + cluster": SortPairs on bits [B - 8, B) (one pass), then a cluster of 8
//     blocks per bucket of 2^(B-8) keys sums the bucket's rows into the 8 blocks' shared
//     memory (distributed shared memory atomics; B <= 24);
//   "global atomics": one atomicAdd a row into a key-indexed table in device memory; then the
//     same with the slots with rows marked four ways (global_sums_marked: ranc's dense way's
//     presence flags);
//   "plan-like partition": what a plan would run for any i32 key: the key words' differing bits
//     (one pass and a read-back), a word per row with the bucket (the differing bits above the
//     lowest 8) in its low bits and the lane (those 8) above, SortPairs of (word, value) on the
//     bucket bits, the buckets' first rows, a block a bucket summing into shared memory and
//     counting its present keys, an exclusive sum of the counts, and a block a bucket writing its
//     present groups in key order: (key, sum) arrays of the groups present, as the CUB chain's.
//   "one pass: counts, scatter TxI, sums" (G >= 2^15): parts of 2^14 keys (one block's
//     shared-memory table of 64-bit sums, 128 KB); the rows counted a part (a shared-memory
//     histogram a block), the counts scanned into each part's first row, then one pass moves
//     every (key, value) into its part (tiles of T x I rows ranked within their parts, placed in
//     shared memory in part order, each part's run claimed from a cursor by one device atomic
//     a tile, and stored from there), then a block a part (or, with fewer parts than two a
//     multiprocessor, several, adding their tables into the output) sums its rows in shared
//     memory; it prints the split of the time.
// The partitioned ways write a key-indexed table of G sums (a group absent from the input
// sums to 0), where a plan writes only the groups present: the bench measures the passes, not
// the compaction (about 12 bytes a group more). Every way's sums are checked against the host
// ("ok" / "WRONG"; exit code 1 on any WRONG).
//   groupby_partition_bench [log2 rows = 28] [log2 groups = 24]
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <functional>
#include <random>
#include <string>
#include <thrust/iterator/transform_iterator.h>
#include <vector>

#include "baseline_thrust.h"

namespace cg = cooperative_groups;

namespace {

using u64 = unsigned long long;

// The bucket of a key sorted by key >> shift.
struct ShiftBucket {
  int shift;
  __device__ long long operator()(int key) const {
    return static_cast<long long>(static_cast<unsigned>(key)) >> shift;
  }
};
// The bucket of an encoded word sorted by its low bits (encode_words).
struct LowBitsBucket {
  unsigned mask;
  __device__ long long operator()(unsigned word) const { return word & mask; }
};

// The first index in keys[0, n) whose bucket (of(key)) is at least `bucket` (keys sorted by it).
template <class K, class Of>
__device__ long long lower_bucket(const K* keys, long long n, Of of, long long bucket) {
  long long lo = 0, hi = n;
  while (lo < hi) {
    const long long mid = (lo + hi) >> 1;
    if (of(keys[mid]) < bucket)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// offsets[b] = the first row of bucket b (as lower_bucket), b in [0, buckets]: one thread a
// bucket, so the binary searches' latency overlaps across the whole grid instead of stalling each
// bucket's block before it starts.
template <class K, class Of>
__global__ void bucket_offsets(const K* keys, long long n, Of of, long long buckets,
                               long long* offsets) {
  const long long b = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (b <= buckets) offsets[b] = lower_bucket(keys, n, of, b);
}

// One block a bucket of 256 keys (keys sorted by key >> 8): its rows' sums in shared memory.
// The bucket's rows come from offsets (bucket_offsets), or, when it is null, from a binary
// search by two of the block's threads.
__global__ void __launch_bounds__(256)
    bucket_sums(const int* keys, const int* vals, long long n, const long long* offsets, u64* out) {
  __shared__ u64 sums[256];
  __shared__ long long range[2];
  const long long bucket = blockIdx.x;
  sums[threadIdx.x] = 0;
  if (threadIdx.x < 2)
    range[threadIdx.x] = offsets ? offsets[bucket + threadIdx.x]
                                 : lower_bucket(keys, n, ShiftBucket{8}, bucket + threadIdx.x);
  __syncthreads();
  for (long long i = range[0] + threadIdx.x; i < range[1]; i += blockDim.x)
    atomicAdd(&sums[keys[i] & 255], static_cast<u64>(static_cast<long long>(vals[i])));
  __syncthreads();
  out[bucket * 256 + threadIdx.x] = sums[threadIdx.x];
}

// A cluster of 8 blocks a bucket of `per_bucket` keys (keys sorted by key >> shift, shift =
// log2 per_bucket): block r of the cluster holds the sums of the bucket's keys
// [r * per_bucket / 8, (r + 1) * per_bucket / 8) in its shared memory; every block adds a
// share of the bucket's rows into whichever block holds its key.
__global__ void __cluster_dims__(8, 1, 1) __launch_bounds__(1024)
    cluster_sums(const int* keys, const int* vals, long long n, int shift, u64* out) {
  extern __shared__ u64 sums[];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  const long long bucket = blockIdx.x / 8;
  const int per_block = (1 << shift) / 8;
  __shared__ long long range[2];
  for (int j = threadIdx.x; j < per_block; j += blockDim.x) sums[j] = 0;
  if (threadIdx.x < 2)
    range[threadIdx.x] = lower_bucket(keys, n, ShiftBucket{shift}, bucket + threadIdx.x);
  cluster.sync();
  const long long lo = range[0], rows = range[1] - range[0];
  const long long share = (rows + 7) / 8, a = lo + rank * share, b = min(lo + rows, a + share);
  const int mask = (1 << shift) - 1;
  for (long long i = a + threadIdx.x; i < b; i += blockDim.x) {
    const int local = keys[i] & mask;
    u64* owner = cluster.map_shared_rank(sums, static_cast<unsigned>(local / per_block));
    atomicAdd(&owner[local % per_block], static_cast<u64>(static_cast<long long>(vals[i])));
  }
  cluster.sync();
  for (int j = threadIdx.x; j < per_block; j += blockDim.x)
    out[(bucket << shift) + static_cast<long long>(rank) * per_block + j] = sums[j];
}

// mask[0] |= key word ^ key word of row 0, over rows [0, n) (key word: the i32 key with its sign
// bit flipped, which orders like the key); mask[1] = row 0's key word (mask zeroed before).
__global__ void differing_bits(const int* keys, long long n, unsigned* mask) {
  const unsigned first = static_cast<unsigned>(keys[0]) ^ 0x80000000u;
  if (blockIdx.x == 0 && threadIdx.x == 0) mask[1] = first;
  unsigned x = 0;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    x |= (static_cast<unsigned>(keys[i]) ^ 0x80000000u) ^ first;
  x = __reduce_or_sync(0xffffffffu, x);
  if ((threadIdx.x & 31) == 0 && x != 0) atomicOr(mask, x);
}

// Bits [begin, begin + lane_bits) of a key word are its lane in its bucket, the next bucket_bits
// its bucket: the word sorted on bits [0, bucket_bits) has the bucket low, the lane above.
struct Split {
  int begin = 0, lane_bits = 0, bucket_bits = 0;
  unsigned base = 0;  // the key words' bits outside [begin, begin + lane_bits + bucket_bits)
};

__global__ void encode_words(const int* keys, long long n, Split sp, unsigned* words) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const unsigned w = (static_cast<unsigned>(keys[i]) ^ 0x80000000u) >> sp.begin;
  const unsigned bucket = (w >> sp.lane_bits) & ((1u << sp.bucket_bits) - 1u);
  words[i] = bucket | ((w & ((1u << sp.lane_bits) - 1u)) << sp.bucket_bits);
}

// A block a bucket (256 lanes): the sums of its lanes into table[b * 256 + lane], whether each
// is present into seen[], and the bucket's count of present lanes into counts[b].
__global__ void __launch_bounds__(256)
    bucket_lane_sums(const unsigned* words, const int* vals, const long long* offsets,
                     int bucket_bits, u64* table, unsigned char* seen, long long* counts) {
  __shared__ u64 sums[256];
  __shared__ unsigned char here[256];
  const long long b = blockIdx.x;
  sums[threadIdx.x] = 0;
  here[threadIdx.x] = 0;
  __syncthreads();
  for (long long i = offsets[b] + threadIdx.x; i < offsets[b + 1]; i += blockDim.x) {
    const unsigned lane = words[i] >> bucket_bits;
    atomicAdd(&sums[lane], static_cast<u64>(static_cast<long long>(vals[i])));
    here[lane] = 1;
  }
  __syncthreads();
  table[b * 256 + threadIdx.x] = sums[threadIdx.x];
  seen[b * 256 + threadIdx.x] = here[threadIdx.x];
  const int present = __syncthreads_count(here[threadIdx.x]);
  if (threadIdx.x == 0) counts[b] = present;
}

// A block a bucket: its present lanes' (key, sum) at starts[b] on, in lane (so key) order.
__global__ void __launch_bounds__(256)
    write_present(const u64* table, const unsigned char* seen, const long long* starts, Split sp,
                  int* out_keys, long long* out_sums) {
  __shared__ int warp_total[8];
  const long long b = blockIdx.x;
  const bool mine = seen[b * 256 + threadIdx.x] != 0;
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned votes = __ballot_sync(0xffffffffu, mine);
  if (lane == 0) warp_total[warp] = __popc(votes);
  __syncthreads();
  int before = __popc(votes & ((1u << lane) - 1u));
  for (unsigned w = 0; w < warp; ++w) before += warp_total[w];
  if (!mine) return;
  const long long at = starts[b] + before;
  const unsigned word =
      sp.base | ((static_cast<unsigned>(b) << sp.lane_bits | threadIdx.x) << sp.begin);
  out_keys[at] = static_cast<int>(word ^ 0x80000000u);
  out_sums[at] = static_cast<long long>(table[b * 256 + threadIdx.x]);
}

__global__ void global_sums(const int* keys, const int* vals, long long n, u64* out) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) atomicAdd(&out[keys[i]], static_cast<u64>(static_cast<long long>(vals[i])));
}

// How the dense way of ranc's hash group-by (hash_reduce.cuh's DenseGroupAgent) can mark the
// slots with rows, beside one atomic a row: Mark::store, a flag store a row; Mark::first, a flag
// stored when the add's returned old value is 0 (the plan's way since session 49: the first
// merge always sees it); Mark::load, a flag stored when a plain read of it finds 0; Mark::count,
// no flag but a count beside the sum in a 16-byte slot (the count is the presence), out[2k] the
// sum and out[2k + 1] the count.
enum class Mark { store, first, load, count };
template <Mark M>
__global__ void global_sums_marked(const int* keys, const int* vals, long long n, u64* out,
                                   unsigned char* flags) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int k = keys[i];
  const u64 v = static_cast<u64>(static_cast<long long>(vals[i]));
  if constexpr (M == Mark::count) {
    atomicAdd(&out[2 * k], v);
    atomicAdd(&out[2 * k + 1], 1ull);
  } else if constexpr (M == Mark::first) {
    if (atomicAdd(&out[k], v) == 0) flags[k] = 1;
  } else {
    atomicAdd(&out[k], v);
    if (M == Mark::store || *static_cast<volatile unsigned char*>(&flags[k]) == 0) flags[k] = 1;
  }
}


// The one-pass partitioned way (session 54): parts of 2^shift consecutive keys (a part's sums
// fit one block's shared memory), the rows moved once into their parts, then a block (or
// `members` blocks) a part sums its rows in shared memory.
//
// A row's rank among the rows of its part (-1: no row) counted so far in h[part]. kMatch: by its
// warp's peers of the same part, whose count the peers' leader adds to h[part]: one
// shared-memory atomic a distinct part a warp (a few parts would otherwise serialise every row
// on one counter; with many, __match_any_sync costs more than the atomics: session 54, 2.3 ms
// to count 2^28 keys into 1024 parts). Else one atomic a row.
template <bool kMatch>
__device__ __forceinline__ int warp_rank(int part, int* h) {
  if constexpr (!kMatch) return part >= 0 ? atomicAdd(&h[part], 1) : 0;
  const unsigned peers = __match_any_sync(0xffffffffu, part);
  const int lane = static_cast<int>(threadIdx.x & 31), leader = __ffs(peers) - 1;
  int first = 0;
  if (lane == leader && part >= 0) first = atomicAdd(&h[part], __popc(peers));
  first = __shfl_sync(0xffffffffu, first, leader);
  return first + __popc(peers & ((1u << lane) - 1u));
}

// counts[p] += the rows of part p (key >> shift), p < parts; counts zeroed before.
template <bool kMatch>
__global__ void __launch_bounds__(512)
    part_counts(const int* keys, long long n, int shift, int parts, unsigned long long* counts) {
  extern __shared__ int h[];
  for (int p = threadIdx.x; p < parts; p += blockDim.x) h[p] = 0;
  __syncthreads();
  constexpr int kLoads = 8;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x * kLoads;
  for (long long b = static_cast<long long>(blockIdx.x) * blockDim.x * kLoads; b < n; b += step) {
    int part[kLoads];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
      const long long i = b + k * blockDim.x + threadIdx.x;
      part[k] = i < n ? keys[i] >> shift : -1;
    }
#pragma unroll
    for (int k = 0; k < kLoads; ++k) warp_rank<kMatch>(part[k], h);
  }
  __syncthreads();
  for (int p = threadIdx.x; p < parts; p += blockDim.x)
    if (h[p] != 0) atomicAdd(&counts[p], static_cast<unsigned long long>(h[p]));
}

// Each tile of kThreads x kItems rows: its rows ranked within their parts (warp_rank), the
// tile's count of each part scanned, a run of each part's rows claimed from cursors[part] (one
// device atomic a part present in the tile), the rows placed in shared memory in part order,
// then stored from there, so that consecutive threads store consecutive rows of a part's run.
// The order of the rows within a part depends on the timing (the bench only sums them).
template <int kThreads, int kItems, bool kMatch>
__global__ void __launch_bounds__(kThreads)
    scatter_parts(const int* keys, const int* vals, long long n, int shift, int parts,
                  unsigned long long* cursors, int* out_keys, int* out_vals) {
  constexpr int kTile = kThreads * kItems;
  using Scan = cub::BlockScan<int, kThreads>;
  __shared__ typename Scan::TempStorage scan_temp;
  extern __shared__ __align__(16) unsigned char smem[];
  long long* base = reinterpret_cast<long long*>(smem);  // parts
  int* sk = reinterpret_cast<int*>(base + parts);         // kTile
  int* sv = sk + kTile;                                    // kTile
  int* h = sv + kTile;                                     // parts
  int* off = h + parts;                                    // parts
  const int per = (parts + kThreads - 1) / kThreads;       // parts a thread scans
  for (long long tile = blockIdx.x; tile * kTile < n; tile += gridDim.x) {
    const long long b0 = tile * kTile;
    for (int p = threadIdx.x; p < parts; p += kThreads) h[p] = 0;
    int key[kItems], val[kItems], rank[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const long long i = b0 + k * kThreads + threadIdx.x;
      key[k] = i < n ? keys[i] : -1;
      val[k] = i < n ? vals[i] : 0;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kItems; ++k) rank[k] = warp_rank<kMatch>(key[k] >= 0 ? key[k] >> shift : -1, h);
    __syncthreads();
    int sum = 0;
    for (int j = 0; j < per; ++j) {
      const int p = threadIdx.x * per + j;
      if (p < parts) sum += h[p];
    }
    int before = 0, total = 0;
    Scan(scan_temp).ExclusiveSum(sum, before, total);
    for (int j = 0; j < per; ++j) {
      const int p = threadIdx.x * per + j;
      if (p >= parts) break;
      off[p] = before;
      if (h[p] != 0) base[p] = static_cast<long long>(atomicAdd(&cursors[p], static_cast<unsigned long long>(h[p])));
      before += h[p];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      if (key[k] >= 0) {
        const int at = off[key[k] >> shift] + rank[k];
        sk[at] = key[k];
        sv[at] = val[k];
      }
    __syncthreads();
    for (int s = threadIdx.x; s < total; s += kThreads) {  // (the tile's placed rows)
      const int k = sk[s], p = k >> shift;
      const long long to = base[p] + (s - off[p]);
      out_keys[to] = k;
      out_vals[to] = sv[s];
    }
    __syncthreads();
  }
}

// The 64-bit add of a sign-extended i32 into a shared-memory sum by 32-bit atomics (sm_90's
// 64-bit shared-memory add is a compare-and-swap loop): the low word, then the high word only
// when the carry and the sign do not cancel.
__device__ __forceinline__ void add_i32(u64* slot, int v) {
  unsigned* w = reinterpret_cast<unsigned*>(slot);
  const unsigned lo = atomicAdd(w, static_cast<unsigned>(v));
  const unsigned hi = (lo + static_cast<unsigned>(v) < lo ? 1u : 0u) + (v < 0 ? 0xffffffffu : 0u);
  if (hi != 0) atomicAdd(w + 1, hi);
}

// `members` blocks a part (starts[p], starts[p + 1]: its rows), each summing its share of the
// part's rows into a table of 2^shift sums in shared memory, then storing it into the part's
// keys of out (members 1) or adding it there (out zeroed before).
__global__ void __launch_bounds__(1024)
    part_sums(const int* keys, const int* vals, const unsigned long long* starts, int shift,
              int members, u64* out) {
  extern __shared__ u64 t[];
  const int width = 1 << shift;
  const long long p = blockIdx.x / members, m = blockIdx.x % members;
  for (int j = threadIdx.x; j < width; j += blockDim.x) t[j] = 0;
  __syncthreads();
  const long long lo = static_cast<long long>(starts[p]), hi = static_cast<long long>(starts[p + 1]);
  const long long share = (hi - lo + members - 1) / members;
  const long long a = lo + m * share, e = min(hi, a + share);
  constexpr int kLoads = 8;
  for (long long b = a; b < e; b += static_cast<long long>(blockDim.x) * kLoads) {
    int k[kLoads], v[kLoads];
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      const long long i = b + j * blockDim.x + threadIdx.x;
      k[j] = i < e ? keys[i] & (width - 1) : -1;
      v[j] = i < e ? vals[i] : 0;
    }
#pragma unroll
    for (int j = 0; j < kLoads; ++j)
      if (k[j] >= 0) add_i32(&t[k[j]], v[j]);
  }
  __syncthreads();
  u64* to = out + (p << shift);
  for (int j = threadIdx.x; j < width; j += blockDim.x)
    if (members == 1)
      to[j] = t[j];
    else if (t[j] != 0)
      atomicAdd(&to[j], t[j]);
}

struct Widen {
  __host__ __device__ long long operator()(int x) const { return x; }
};

struct Data {
  long long n = 0, groups = 0;
  int bits = 0;
  int *keys = nullptr, *vals = nullptr, *keys_out = nullptr, *vals_out = nullptr;
  u64* table = nullptr;
  std::vector<long long> want;
  std::vector<char> seen;  // the keys present
  long long present = 0;
  double copy_gbs = 0;
  bool wrong = false;
};

void report(Data& d, const char* name, double ms, bool ok) {
  const double bytes = 8.0 * d.n + 12.0 * d.groups;
  std::printf("  %-40s %8.3f ms %5.1f%% of copy %s\n", name, ms, 100.0 * bytes / ms / 1e6 / d.copy_gbs,
              ok ? "ok" : "WRONG");
  d.wrong = d.wrong || !ok;
}

// `count` groups (keys, sums in device memory) against the host: every present key once, in
// ascending order, with its sum.
bool groups_ok(const Data& d, const int* keys, const long long* sums, long long count) {
  if (count != d.present) return false;
  std::vector<int> gk(count);
  std::vector<long long> gs(count);
  RANC_BENCH_CK(cudaMemcpy(gk.data(), keys, 4 * count, cudaMemcpyDeviceToHost));
  RANC_BENCH_CK(cudaMemcpy(gs.data(), sums, 8 * count, cudaMemcpyDeviceToHost));
  for (long long i = 0; i < count; ++i)
    if (gk[i] < 0 || gk[i] >= d.groups || !d.seen[gk[i]] || gs[i] != d.want[gk[i]] ||
        (i > 0 && gk[i] <= gk[i - 1]))
      return false;
  return true;
}

// The key-indexed table against the host's sums.
bool table_ok(const Data& d) {
  std::vector<u64> got(d.groups);
  RANC_BENCH_CK(cudaMemcpy(got.data(), d.table, 8 * d.groups, cudaMemcpyDeviceToHost));
  for (long long g = 0; g < d.groups; ++g)
    if (static_cast<long long>(got[g]) != d.want[g]) return false;
  return true;
}

double median_ms(const std::function<void()>& f) { return ranc::bench::time_median(f, 7) * 1e3; }

// A way that writes the key-indexed table: one run into a table poisoned with 0xff bytes (a sum
// it does not write reads wrong), checked against the host, then its median time.
void table_variant(Data& d, const char* name, const std::function<void()>& run) {
  RANC_BENCH_CK(cudaMemset(d.table, 0xff, 8 * d.groups));
  run();
  RANC_BENCH_CK(cudaGetLastError());
  RANC_BENCH_CK(cudaDeviceSynchronize());
  const bool ok = table_ok(d);
  report(d, name, median_ms(run), ok);
}

// Device scratch (CUB's temporary storage) that grows to the largest size asked for.
struct Scratch {
  void* ptr = nullptr;
  size_t bytes = 0;
  void grow(size_t need) {
    if (need <= bytes) return;
    if (ptr) RANC_BENCH_CK(cudaFree(ptr));
    RANC_BENCH_CK(cudaMalloc(&ptr, need));
    bytes = need;
  }
};

// SortPairs of (keys, vals) on bits [begin, end) into (keys_out, vals_out).
struct Sorter {
  Scratch temp;
  void run(Data& d, int begin, int end) {
    size_t need = 0;
    RANC_BENCH_CK(cub::DeviceRadixSort::SortPairs(nullptr, need, d.keys, d.keys_out, d.vals,
                                                  d.vals_out, d.n, begin, end));
    temp.grow(need);
    RANC_BENCH_CK(cub::DeviceRadixSort::SortPairs(temp.ptr, temp.bytes, d.keys, d.keys_out, d.vals,
                                                  d.vals_out, d.n, begin, end));
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string device = ranc::bench::device_or_skip();
  if (device.empty()) return 0;
  const int log_n = argc > 1 ? std::atoi(argv[1]) : 28;
  const int bits = argc > 2 ? std::atoi(argv[2]) : 24;
  if (log_n < 10 || log_n > 30 || bits < 9 || bits > 24) {
    std::printf("usage: groupby_partition_bench [log2 rows in 10..30] [log2 groups in 9..24]\n");
    return 2;
  }
  Data d;
  d.n = 1ll << log_n;
  d.bits = bits;
  d.groups = 1ll << bits;
  std::vector<int> k(d.n), v(d.n);
  std::mt19937 rng(7);
  d.want.assign(d.groups, 0);
  for (long long i = 0; i < d.n; ++i) {
    k[i] = static_cast<int>(rng() & (d.groups - 1));
    v[i] = static_cast<int>(rng() % 2000001) - 1000000;
    d.want[k[i]] += v[i];
  }
  d.seen.assign(d.groups, 0);
  for (long long i = 0; i < d.n; ++i) d.seen[k[i]] = 1;
  d.present = std::count(d.seen.begin(), d.seen.end(), 1);
  RANC_BENCH_CK(cudaMalloc(&d.keys, 4 * d.n));
  RANC_BENCH_CK(cudaMalloc(&d.vals, 4 * d.n));
  RANC_BENCH_CK(cudaMalloc(&d.keys_out, 4 * d.n));
  RANC_BENCH_CK(cudaMalloc(&d.vals_out, 4 * d.n));
  RANC_BENCH_CK(cudaMalloc(&d.table, 8 * d.groups));
  RANC_BENCH_CK(cudaMemcpy(d.keys, k.data(), 4 * d.n, cudaMemcpyHostToDevice));
  RANC_BENCH_CK(cudaMemcpy(d.vals, v.data(), 4 * d.n, cudaMemcpyHostToDevice));
  d.copy_gbs = ranc::bench::measure_copy(8 * static_cast<size_t>(d.n)).gbps();
  std::printf("device: %s\nn = 2^%d rows, 2^%d groups (uniform keys), sum of i32 into i64; copy %.1f GB/s\n",
              device.c_str(), log_n, bits, d.copy_gbs);
  Sorter sorter;

  {  // the sort path: every key bit, then the runs
    int* rk = nullptr;
    long long* rs = nullptr;
    long long* runs = nullptr;
    RANC_BENCH_CK(cudaMalloc(&rk, 4 * d.groups));
    RANC_BENCH_CK(cudaMalloc(&rs, 8 * d.groups));
    RANC_BENCH_CK(cudaMalloc(&runs, 8));
    void* temp = nullptr;
    size_t bytes = 0;
    // The values widen to i64 as the reduce reads them (ranc sums i32 into i64).
    auto in = thrust::make_transform_iterator(static_cast<const int*>(d.vals_out), Widen{});
    RANC_BENCH_CK(cub::DeviceReduce::ReduceByKey(nullptr, bytes, d.keys_out, rk, in, rs, runs,
                                                 cuda::std::plus<>{}, d.n));
    RANC_BENCH_CK(cudaMalloc(&temp, bytes));
    auto run = [&] {
      sorter.run(d, 0, bits);
      RANC_BENCH_CK(cub::DeviceReduce::ReduceByKey(temp, bytes, d.keys_out, rk, in, rs, runs,
                                                   cuda::std::plus<>{}, d.n));
    };
    run();
    RANC_BENCH_CK(cudaDeviceSynchronize());
    long long count = 0;
    RANC_BENCH_CK(cudaMemcpy(&count, runs, 8, cudaMemcpyDeviceToHost));
    report(d, "cub sort + ReduceByKey", median_ms(run), groups_ok(d, rk, rs, count));
    RANC_BENCH_CK(cudaFree(temp));
    RANC_BENCH_CK(cudaFree(rk));
    RANC_BENCH_CK(cudaFree(rs));
    RANC_BENCH_CK(cudaFree(runs));
  }
  const long long buckets = d.groups / 256;
  table_variant(d, "partition 2 passes + buckets", [&] {  // a block a bucket of 256 keys
    sorter.run(d, 8, bits);
    bucket_sums<<<static_cast<unsigned>(buckets), 256>>>(d.keys_out, d.vals_out, d.n, nullptr,
                                                         d.table);
  });
  {  // the same, each bucket's rows found by one thread a bucket first (prepared in session 47,
     // not yet run: the device budget was spent)
    long long* offsets = nullptr;
    RANC_BENCH_CK(cudaMalloc(&offsets, 8 * (buckets + 1)));
    table_variant(d, "partition 2 passes + offsets + buckets", [&] {
      sorter.run(d, 8, bits);
      bucket_offsets<<<static_cast<unsigned>((buckets + 256) / 256), 256>>>(
          d.keys_out, d.n, ShiftBucket{8}, buckets, offsets);
      bucket_sums<<<static_cast<unsigned>(buckets), 256>>>(d.keys_out, d.vals_out, d.n, offsets,
                                                           d.table);
    });
    RANC_BENCH_CK(cudaFree(offsets));
  }
  if (bits >= 11) {  // one pass on the top 8 bits, then a cluster of 8 blocks a bucket
    const int shift = bits - 8;
    const size_t smem = 8 * ((size_t{1} << shift) / 8);
    RANC_BENCH_CK(cudaFuncSetAttribute(cluster_sums, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(smem)));
    table_variant(d, "partition 1 pass + cluster", [&] {
      sorter.run(d, shift, bits);
      cluster_sums<<<256 * 8, 1024, smem>>>(d.keys_out, d.vals_out, d.n, shift, d.table);
    });
  }
  {  // what a plan would run (see the file comment), into (key, sum) arrays of the groups present
    unsigned* mask = nullptr;
    unsigned *words = nullptr, *sorted = nullptr;
    int* gk = nullptr;
    long long *gs = nullptr, *offsets = nullptr, *counts = nullptr, *starts = nullptr;
    unsigned char* seen = nullptr;
    RANC_BENCH_CK(cudaMalloc(&mask, 8));
    RANC_BENCH_CK(cudaMalloc(&words, 4 * d.n));
    RANC_BENCH_CK(cudaMalloc(&sorted, 4 * d.n));
    RANC_BENCH_CK(cudaMalloc(&gk, 4 * d.groups));
    RANC_BENCH_CK(cudaMalloc(&gs, 8 * d.groups));
    RANC_BENCH_CK(cudaMalloc(&seen, d.groups));
    Scratch temp;
    Split sp;
    long long buckets = 0;
    auto run = [&] {
      RANC_BENCH_CK(cudaMemsetAsync(mask, 0, 8));
      differing_bits<<<132 * 8, 256>>>(d.keys, d.n, mask);
      unsigned back[2] = {0, 0};
      RANC_BENCH_CK(cudaMemcpy(back, mask, 8, cudaMemcpyDeviceToHost));  // the plan's read-back
      const unsigned m = back[0], first = back[1];
      const int end = m == 0 ? 0 : 32 - __builtin_clz(m);
      sp.begin = m == 0 ? 0 : __builtin_ctz(m);
      sp.lane_bits = std::min(8, end - sp.begin);
      sp.bucket_bits = end - sp.begin - sp.lane_bits;
      const unsigned span = (end - sp.begin >= 32 ? ~0u : ((1u << (end - sp.begin)) - 1u))
                            << sp.begin;
      sp.base = first & ~span;
      const long long nb = 1ll << sp.bucket_bits;
      if (nb != buckets) {  // (the scratch for this split, once)
        if (offsets) RANC_BENCH_CK(cudaFree(offsets));
        if (counts) RANC_BENCH_CK(cudaFree(counts));
        if (starts) RANC_BENCH_CK(cudaFree(starts));
        RANC_BENCH_CK(cudaMalloc(&offsets, 8 * (nb + 1)));
        RANC_BENCH_CK(cudaMalloc(&counts, 8 * (nb + 1)));
        RANC_BENCH_CK(cudaMalloc(&starts, 8 * (nb + 1)));
        buckets = nb;
      }
      encode_words<<<static_cast<unsigned>((d.n + 255) / 256), 256>>>(d.keys, d.n, sp, words);
      size_t need = 0;
      RANC_BENCH_CK(cub::DeviceRadixSort::SortPairs(nullptr, need, words, sorted, d.vals,
                                                    d.vals_out, d.n, 0, sp.bucket_bits));
      size_t scan_need = 0;
      RANC_BENCH_CK(cub::DeviceScan::ExclusiveSum(nullptr, scan_need, counts, starts, buckets + 1));
      temp.grow(std::max(need, scan_need));
      RANC_BENCH_CK(cub::DeviceRadixSort::SortPairs(temp.ptr, temp.bytes, words, sorted, d.vals,
                                                    d.vals_out, d.n, 0, sp.bucket_bits));
      bucket_offsets<<<static_cast<unsigned>((buckets + 256) / 256), 256>>>(
          sorted, d.n, LowBitsBucket{(1u << sp.bucket_bits) - 1u}, buckets, offsets);
      bucket_lane_sums<<<static_cast<unsigned>(buckets), 256>>>(
          sorted, d.vals_out, offsets, sp.bucket_bits, d.table, seen, counts);
      RANC_BENCH_CK(cudaMemsetAsync(counts + buckets, 0, 8));
      RANC_BENCH_CK(
          cub::DeviceScan::ExclusiveSum(temp.ptr, temp.bytes, counts, starts, buckets + 1));
      write_present<<<static_cast<unsigned>(buckets), 256>>>(d.table, seen, starts, sp, gk, gs);
    };
    run();
    RANC_BENCH_CK(cudaGetLastError());
    RANC_BENCH_CK(cudaDeviceSynchronize());
    long long count = 0;
    RANC_BENCH_CK(cudaMemcpy(&count, starts + buckets, 8, cudaMemcpyDeviceToHost));
    const bool ok = groups_ok(d, gk, gs, count);
    report(d, "plan-like partition (any i32 key)", median_ms(run), ok);
    for (void* ptr : std::initializer_list<void*>{mask, words, sorted, gk, gs, seen, temp.ptr,
                                                  offsets, counts, starts})
      RANC_BENCH_CK(cudaFree(ptr));
  }

  if (bits >= 15) {  // the one-pass partitioned way: parts of 2^14 keys (128 KB of sums a block)
    constexpr int kShift = 14;
    const int parts = 1 << (bits - kShift);
    int sms = 0;
    RANC_BENCH_CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    // Enough blocks a part for two a multiprocessor (each adds its table into out).
    const int members = std::max(1, (2 * sms + parts - 1) / parts);
    // Ranks by warp peers below this many parts, else an atomic a row.
    constexpr int kMatchBelow = 64;
    unsigned long long *counts = nullptr, *starts = nullptr, *cursors = nullptr;
    RANC_BENCH_CK(cudaMalloc(&counts, 8 * (parts + 1)));
    RANC_BENCH_CK(cudaMalloc(&starts, 8 * (parts + 1)));
    RANC_BENCH_CK(cudaMalloc(&cursors, 8 * (parts + 1)));
    Scratch temp;
    size_t need = 0;
    RANC_BENCH_CK(cub::DeviceScan::ExclusiveSum(nullptr, need, counts, starts, parts + 1));
    temp.grow(need);
    const size_t sums_smem = 8 * (size_t{1} << kShift);
    RANC_BENCH_CK(cudaFuncSetAttribute(part_sums, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(sums_smem)));
    auto counted = [&] {
      RANC_BENCH_CK(cudaMemsetAsync(counts, 0, 8 * (parts + 1)));
      if (parts >= kMatchBelow)
        part_counts<false><<<sms * 4, 512, 4 * parts>>>(d.keys, d.n, kShift, parts, counts);
      else
        part_counts<true><<<sms * 4, 512, 4 * parts>>>(d.keys, d.n, kShift, parts, counts);
      RANC_BENCH_CK(cub::DeviceScan::ExclusiveSum(temp.ptr, temp.bytes, counts, starts, parts + 1));
      RANC_BENCH_CK(cudaMemcpyAsync(cursors, starts, 8 * (parts + 1), cudaMemcpyDeviceToDevice));
    };
    auto summed = [&] {
      if (members > 1) RANC_BENCH_CK(cudaMemsetAsync(d.table, 0, 8 * d.groups));
      part_sums<<<static_cast<unsigned>(parts * members), 1024, sums_smem>>>(
          d.keys_out, d.vals_out, starts, kShift, members, d.table);
    };
    auto way = [&](auto kernel, int threads, int tile, const char* name) {
      const size_t smem = 16 * static_cast<size_t>(parts) + 8 * static_cast<size_t>(tile);
      RANC_BENCH_CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem)));
      int per_sm = 0;
      RANC_BENCH_CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
      const unsigned grid = static_cast<unsigned>(std::max(1, per_sm) * sms);
      auto scattered = [&] {
        kernel<<<grid, threads, smem>>>(d.keys, d.vals, d.n, kShift, parts, cursors, d.keys_out,
                                        d.vals_out);
      };
      table_variant(d, name, [&] {
        counted();
        scattered();
        summed();
      });
      const double c = median_ms(counted);
      const double cs = median_ms([&] {
        counted();
        scattered();
      });
      std::printf("    (%d parts, %d blocks a part, %d scatter blocks an SM: counts + scan %.3f ms, "
                  "scatter %.3f ms, sums %.3f ms)\n",
                  parts, members, per_sm, c, cs - c, median_ms(summed));
    };
    const bool match = parts < kMatchBelow;
    way(match ? scatter_parts<512, 8, true> : scatter_parts<512, 8, false>, 512, 4096,
        "one pass: counts, scatter 512x8, sums");
    way(match ? scatter_parts<512, 16, true> : scatter_parts<512, 16, false>, 512, 8192,
        "one pass: counts, scatter 512x16, sums");
    way(match ? scatter_parts<256, 16, true> : scatter_parts<256, 16, false>, 256, 4096,
        "one pass: counts, scatter 256x16, sums");
    for (void* ptr : std::initializer_list<void*>{counts, starts, cursors, temp.ptr})
      RANC_BENCH_CK(cudaFree(ptr));
  }
  table_variant(d, "global atomics", [&] {  // one atomic a row into a table in device memory
    RANC_BENCH_CK(cudaMemsetAsync(d.table, 0, 8 * d.groups));
    global_sums<<<static_cast<unsigned>((d.n + 255) / 256), 256>>>(d.keys, d.vals, d.n, d.table);
  });
  {  // the same with the slots with rows marked (the dense way's presence), each checked
    unsigned char* flags = nullptr;
    u64* pairs = nullptr;
    RANC_BENCH_CK(cudaMalloc(&flags, d.groups));
    RANC_BENCH_CK(cudaMalloc(&pairs, 16 * d.groups));
    const unsigned grid = static_cast<unsigned>((d.n + 255) / 256);
    // The flags set must be the keys present.
    auto flags_ok = [&] {
      std::vector<unsigned char> f(d.groups);
      RANC_BENCH_CK(cudaMemcpy(f.data(), flags, d.groups, cudaMemcpyDeviceToHost));
      for (long long g = 0; g < d.groups; ++g)
        if ((f[g] != 0) != (d.seen[g] != 0)) return false;
      return true;
    };
    auto marked = [&](const char* name, auto kernel) {
      auto run = [&] {
        RANC_BENCH_CK(cudaMemsetAsync(d.table, 0, 8 * d.groups));
        RANC_BENCH_CK(cudaMemsetAsync(flags, 0, d.groups));
        kernel<<<grid, 256>>>(d.keys, d.vals, d.n, d.table, flags);
      };
      RANC_BENCH_CK(cudaMemset(d.table, 0xff, 8 * d.groups));
      run();
      RANC_BENCH_CK(cudaGetLastError());
      RANC_BENCH_CK(cudaDeviceSynchronize());
      const bool ok = table_ok(d) && flags_ok();
      report(d, name, median_ms(run), ok);
    };
    marked("global atomics + a flag store a row", global_sums_marked<Mark::store>);
    marked("global atomics + flags at first adds", global_sums_marked<Mark::first>);
    marked("global atomics + flags read first", global_sums_marked<Mark::load>);
    {  // a count beside each sum (16-byte slots): the counts are the presence
      auto run = [&] {
        RANC_BENCH_CK(cudaMemsetAsync(pairs, 0, 16 * d.groups));
        global_sums_marked<Mark::count><<<grid, 256>>>(d.keys, d.vals, d.n, pairs, nullptr);
      };
      run();
      RANC_BENCH_CK(cudaGetLastError());
      RANC_BENCH_CK(cudaDeviceSynchronize());
      std::vector<u64> got(2 * d.groups);
      RANC_BENCH_CK(cudaMemcpy(got.data(), pairs, 16 * d.groups, cudaMemcpyDeviceToHost));
      bool ok = true;
      for (long long g = 0; g < d.groups; ++g)
        ok = ok && static_cast<long long>(got[2 * g]) == d.want[g] && (got[2 * g + 1] != 0) == (d.seen[g] != 0);
      report(d, "global atomics + a count a row (16-byte slots)", median_ms(run), ok);
    }
    RANC_BENCH_CK(cudaFree(flags));
    RANC_BENCH_CK(cudaFree(pairs));
  }
  {  // the partition passes alone, for the split of the time
    const double two = median_ms([&] { sorter.run(d, 8, bits); });
    const double one = median_ms([&] { sorter.run(d, bits - 8, bits); });
    const double all = median_ms([&] { sorter.run(d, 0, bits); });
    std::printf("  SortPairs alone: bits [8, %d) %.3f ms, [%d, %d) %.3f ms, [0, %d) %.3f ms\n", bits, two,
                bits - 8, bits, one, bits, all);
  }
  return d.wrong ? 1 : 0;
}
