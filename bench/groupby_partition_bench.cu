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
//   "global atomics": one atomicAdd a row into a key-indexed table in device memory.
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
#include <functional>
#include <random>
#include <string>
#include <thrust/iterator/transform_iterator.h>
#include <vector>

#include "baseline_thrust.h"

namespace cg = cooperative_groups;

namespace {

using u64 = unsigned long long;

// The first index in keys[0, n) whose key >> shift is at least `bucket` (keys sorted by
// key >> shift).
__device__ long long lower_bucket(const int* keys, long long n, int shift, long long bucket) {
  long long lo = 0, hi = n;
  while (lo < hi) {
    const long long mid = (lo + hi) >> 1;
    if ((static_cast<long long>(static_cast<unsigned>(keys[mid])) >> shift) < bucket) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// offsets[b] = the first row of bucket b (keys sorted by key >> shift), b in [0, buckets]: one
// thread a bucket, so the binary searches' latency overlaps across the whole grid instead of
// stalling each bucket's block before it starts.
__global__ void bucket_offsets(const int* keys, long long n, int shift, long long buckets, long long* offsets) {
  const long long b = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (b <= buckets) offsets[b] = lower_bucket(keys, n, shift, b);
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
    range[threadIdx.x] =
        offsets ? offsets[bucket + threadIdx.x] : lower_bucket(keys, n, 8, bucket + threadIdx.x);
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
  if (threadIdx.x < 2) range[threadIdx.x] = lower_bucket(keys, n, shift, bucket + threadIdx.x);
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

__global__ void global_sums(const int* keys, const int* vals, long long n, u64* out) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) atomicAdd(&out[keys[i]], static_cast<u64>(static_cast<long long>(vals[i])));
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
  double copy_gbs = 0;
  bool wrong = false;
};

void report(Data& d, const char* name, double ms, bool ok) {
  const double bytes = 8.0 * d.n + 12.0 * d.groups;
  std::printf("  %-40s %8.3f ms %5.1f%% of copy %s\n", name, ms, 100.0 * bytes / ms / 1e6 / d.copy_gbs,
              ok ? "ok" : "WRONG");
  d.wrong = d.wrong || !ok;
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

// SortPairs of (keys, vals) on bits [begin, end) into (keys_out, vals_out).
struct Sorter {
  void* temp = nullptr;
  size_t bytes = 0;
  void run(Data& d, int begin, int end) {
    size_t need = 0;
    RANC_BENCH_CK(cub::DeviceRadixSort::SortPairs(nullptr, need, d.keys, d.keys_out, d.vals,
                                                  d.vals_out, d.n, begin, end));
    if (need > bytes) {
      if (temp) RANC_BENCH_CK(cudaFree(temp));
      RANC_BENCH_CK(cudaMalloc(&temp, need));
      bytes = need;
    }
    RANC_BENCH_CK(cub::DeviceRadixSort::SortPairs(temp, bytes, d.keys, d.keys_out, d.vals,
                                                  d.vals_out, d.n, begin, end));
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string device = ranc::bench::device_name();
  if (device.empty()) {
    std::printf("SKIPPED: no GPU available\n");
    return 0;
  }
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
    std::vector<int> gk(count);
    std::vector<long long> gs(count);
    RANC_BENCH_CK(cudaMemcpy(gk.data(), rk, 4 * count, cudaMemcpyDeviceToHost));
    RANC_BENCH_CK(cudaMemcpy(gs.data(), rs, 8 * count, cudaMemcpyDeviceToHost));
    std::vector<char> seen(d.groups, 0);
    for (long long i = 0; i < d.n; ++i) seen[k[i]] = 1;
    const long long present = std::count(seen.begin(), seen.end(), 1);
    bool ok = count == present;
    for (long long i = 0; i < count && ok; ++i)
      ok = gk[i] >= 0 && gk[i] < d.groups && seen[gk[i]] && gs[i] == d.want[gk[i]] && (i == 0 || gk[i] > gk[i - 1]);
    report(d, "cub sort + ReduceByKey", median_ms(run), ok);
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
      bucket_offsets<<<static_cast<unsigned>((buckets + 256) / 256), 256>>>(d.keys_out, d.n, 8, buckets, offsets);
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
  table_variant(d, "global atomics", [&] {  // one atomic a row into a table in device memory
    RANC_BENCH_CK(cudaMemsetAsync(d.table, 0, 8 * d.groups));
    global_sums<<<static_cast<unsigned>((d.n + 255) / 256), 256>>>(d.keys, d.vals, d.n, d.table);
  });
  {  // the partition passes alone, for the split of the time
    const double two = median_ms([&] { sorter.run(d, 8, bits); });
    const double one = median_ms([&] { sorter.run(d, bits - 8, bits); });
    const double all = median_ms([&] { sorter.run(d, 0, bits); });
    std::printf("  SortPairs alone: bits [8, %d) %.3f ms, [%d, %d) %.3f ms, [0, %d) %.3f ms\n", bits, two,
                bits - 8, bits, one, bits, all);
  }
  return d.wrong ? 1 : 0;
}
