// Thrust baselines: each RA operator as one or a few Thrust calls on device
// vectors, timed with CUDA events (median of 5 after one warm-up run).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/gather.h>
#include <thrust/host_vector.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/set_operations.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>

#include "baseline_thrust.h"

namespace ranc::bench {

#define BENCH_CUDA(expr)                                                                   \
  do {                                                                                     \
    cudaError_t e_ = (expr);                                                               \
    if (e_ != cudaSuccess)                                                                 \
      throw std::runtime_error(std::string(#expr) + ": " + cudaGetErrorString(e_) + " at " \
                               __FILE__);                                                  \
  } while (0)

std::string device_name() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return "";
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "";
  return p.name;
}

std::string device_or_skip() {
  std::string d = device_name();
  if (d.empty()) std::printf("SKIPPED: no GPU available\n");
  return d;
}

double time_median(const std::function<void()>& f, int runs) {
  cudaEvent_t a, b;
  BENCH_CUDA(cudaEventCreate(&a));
  BENCH_CUDA(cudaEventCreate(&b));
  f();  // warm-up
  BENCH_CUDA(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    BENCH_CUDA(cudaEventRecord(a));
    f();
    BENCH_CUDA(cudaEventRecord(b));
    BENCH_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms / 1e3);
  }
  BENCH_CUDA(cudaEventDestroy(a));
  BENCH_CUDA(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

Measurement measure_copy(size_t bytes) {
  void *src = nullptr, *dst = nullptr;
  BENCH_CUDA(cudaMalloc(&src, bytes));
  BENCH_CUDA(cudaMalloc(&dst, bytes));
  BENCH_CUDA(cudaMemset(src, 1, bytes));
  double s = time_median([&] { BENCH_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); });
  BENCH_CUDA(cudaFree(src));
  BENCH_CUDA(cudaFree(dst));
  return {"copy (d2d)", bytes / 8, s, 2.0 * static_cast<double>(bytes)};
}

struct Half {
  int32_t threshold;
  __host__ __device__ bool operator()(const thrust::tuple<int32_t, int32_t>& t) const {
    return thrust::get<0>(t) < threshold;
  }
};
struct MapOp {
  __host__ __device__ thrust::tuple<int32_t, int32_t> operator()(
      const thrust::tuple<int32_t, int32_t>& t) const {
    return thrust::make_tuple(thrust::get<0>(t) + 1, thrust::get<1>(t) * 3 + 1);
  }
};

struct PackWord {
  __host__ __device__ uint64_t operator()(int32_t k, int32_t v) const {
    return (static_cast<uint64_t>(static_cast<uint32_t>(k)) << 32) | static_cast<uint32_t>(v);
  }
};
template <class T>
T* raw(thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}

std::vector<Measurement> run_thrust_baselines(size_t n) {
  std::vector<Measurement> out;
  const double tb = 8.0;  // bytes per (key, value) tuple
  std::mt19937_64 rng(42);
  thrust::host_vector<int32_t> hk(n), hv(n);
  for (size_t i = 0; i < n; ++i) {
    hk[i] = static_cast<int32_t>(rng() & 0x7fffffff);
    hv[i] = static_cast<int32_t>(rng());
  }
  thrust::device_vector<int32_t> k = hk, v = hv, ok(n), ov(n);
  auto in = thrust::make_zip_iterator(thrust::make_tuple(k.begin(), v.begin()));
  auto o = thrust::make_zip_iterator(thrust::make_tuple(ok.begin(), ov.begin()));

  {  // select 50%
    size_t kept = 0;
    double s = time_median([&] { kept = thrust::copy_if(thrust::device, in, in + n, o, Half{1 << 30}) - o; });
    out.push_back({"select 50%", n, s, tb * n + tb * kept});
  }
  {  // map: (k, v) -> (k + 1, 3v + 1)
    double s = time_median([&] { thrust::transform(thrust::device, in, in + n, o, MapOp{}); });
    out.push_back({"project (map)", n, s, 2 * tb * n});
  }
  {  // sort_by_key (pairs)
    thrust::device_vector<int32_t> sk(n), sv(n);
    double s = time_median([&] {
      thrust::copy(k.begin(), k.end(), sk.begin());
      thrust::copy(v.begin(), v.end(), sv.begin());
      thrust::sort_by_key(thrust::device, sk.begin(), sk.end(), sv.begin());
    });
    out.push_back({"sort pairs", n, s, 2 * tb * n});
  }
  {  // CUB radix sorts straight from the input to the output buffers (no copies):
     // (i32 key, i32 value) pairs; i32 keys only; the rows (k, v) as one 64-bit word
     // k << 32 | v, keys only (the one-word sort of a two-attribute key). CUB picks its
     // offset type from the count's type, and its tuning from the offset type: a 32-bit count
     // is its fastest (onesweep tiles of 384 x 23 pairs, not 384 x 17), the rows without a
     // suffix; "n64" rows pass the count as int64_t.
    thrust::device_vector<int32_t> sk(n), sv(n);
    thrust::device_vector<uint64_t> w(n), sw(n);
    thrust::transform(k.begin(), k.end(), v.begin(), w.begin(), PackWord{});
    auto sorts = [&](auto count, const char* suffix) {
      size_t pairs_bytes = 0, keys_bytes = 0, words_bytes = 0;
      BENCH_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, pairs_bytes, raw(k), raw(sk), raw(v),
                                                 raw(sv), count));
      BENCH_CUDA(cub::DeviceRadixSort::SortKeys(nullptr, keys_bytes, raw(k), raw(sk), count));
      BENCH_CUDA(cub::DeviceRadixSort::SortKeys(nullptr, words_bytes, raw(w), raw(sw), count));
      thrust::device_vector<char> temp(std::max({pairs_bytes, keys_bytes, words_bytes}));
      void* t = thrust::raw_pointer_cast(temp.data());
      double s = time_median([&] {
        BENCH_CUDA(cub::DeviceRadixSort::SortPairs(t, pairs_bytes, raw(k), raw(sk), raw(v),
                                                   raw(sv), count));
      });
      out.push_back({std::string("cub sort pairs") + suffix, n, s, 2 * tb * n});
      if (suffix[0] == 0) {
        // The same sort timed as ranc's plans are: on the host, from the call to the stream's
        // end, with the outputs and the scratch allocated from a stream-ordered pool (kept
        // warm: release threshold max) and the scratch freed, on a stream of its own.
        cudaStream_t st;
        BENCH_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        cudaMemPool_t pool;
        BENCH_CUDA(cudaDeviceGetDefaultMemPool(&pool, 0));
        uint64_t keep = UINT64_MAX;
        BENCH_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
        std::vector<double> th;
        for (int i = 0; i < 6; ++i) {
          const auto t0 = std::chrono::steady_clock::now();
          void *ok = nullptr, *ov = nullptr, *tmp = nullptr;
          BENCH_CUDA(cudaMallocAsync(&ok, 4 * n, st));
          BENCH_CUDA(cudaMallocAsync(&ov, 4 * n, st));
          BENCH_CUDA(cudaMallocAsync(&tmp, pairs_bytes, st));
          BENCH_CUDA(cub::DeviceRadixSort::SortPairs(tmp, pairs_bytes, raw(k), static_cast<int32_t*>(ok),
                                                     raw(v), static_cast<int32_t*>(ov), count, 0,
                                                     32, st));
          BENCH_CUDA(cudaFreeAsync(tmp, st));
          BENCH_CUDA(cudaStreamSynchronize(st));
          const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          if (i > 0) th.push_back(sec);
          BENCH_CUDA(cudaFreeAsync(ok, st));
          BENCH_CUDA(cudaFreeAsync(ov, st));
          BENCH_CUDA(cudaStreamSynchronize(st));
        }
        BENCH_CUDA(cudaStreamDestroy(st));
        std::sort(th.begin(), th.end());
        out.push_back({"cub sort pairs host-timed", n, th[th.size() / 2], 2 * tb * n});
      }
      s = time_median([&] {
        BENCH_CUDA(cub::DeviceRadixSort::SortKeys(t, keys_bytes, raw(k), raw(sk), count));
      });
      out.push_back({std::string("cub sort keys") + suffix, n, s, 2 * 4.0 * n});
      s = time_median([&] {
        BENCH_CUDA(cub::DeviceRadixSort::SortKeys(t, words_bytes, raw(w), raw(sw), count));
      });
      out.push_back({std::string("cub sort words") + suffix, n, s, 2 * tb * n});
    };
    sorts(static_cast<uint32_t>(n), "");
    sorts(static_cast<int64_t>(n), " n64");
  }
  // Sorted unique inputs for set operations: a = even numbers, b = multiples of 3, values derived.
  {
    thrust::device_vector<int32_t> a(n), b(n), av(n), bv(n);
    thrust::sequence(a.begin(), a.end(), 0, 2);
    thrust::sequence(b.begin(), b.end(), 0, 3);
    thrust::copy(a.begin(), a.end(), av.begin());
    thrust::copy(b.begin(), b.end(), bv.begin());
    thrust::device_vector<int32_t> rk(2 * n), rv(2 * n);
    size_t m = 0;
    double s = time_median([&] {
      m = thrust::set_union_by_key(thrust::device, a.begin(), a.end(), b.begin(), b.end(), av.begin(),
                                   bv.begin(), rk.begin(), rv.begin()).first - rk.begin();
    });
    out.push_back({"union", 2 * n, s, 2 * tb * n + tb * m});
    s = time_median([&] {
      m = thrust::set_intersection_by_key(thrust::device, a.begin(), a.end(), b.begin(), b.end(),
                                          av.begin(), rk.begin(), rv.begin()).first - rk.begin();
    });
    out.push_back({"intersect", 2 * n, s, 2 * tb * n + tb * m});
    s = time_median([&] {
      m = thrust::set_difference_by_key(thrust::device, a.begin(), a.end(), b.begin(), b.end(),
                                        av.begin(), bv.begin(), rk.begin(), rv.begin()).first - rk.begin();
    });
    out.push_back({"difference", 2 * n, s, 2 * tb * n + tb * m});
  }
  {  // PK-FK join, sorted inputs, 100% match: pk has n/4 unique keys, fk has n sorted keys.
    size_t npk = n / 4;
    thrust::device_vector<int32_t> pk(npk), pv(npk), fk(n), fv(n), pos(n), jk(n), jfv(n), jv(n);
    thrust::sequence(pk.begin(), pk.end(), 0, 2);
    thrust::sequence(pv.begin(), pv.end(), 7);
    thrust::host_vector<int32_t> hfk(n);
    for (size_t i = 0; i < n; ++i) hfk[i] = static_cast<int32_t>(2 * (i / 4));
    fk = hfk;
    thrust::sequence(fv.begin(), fv.end());
    double s = time_median([&] {
      thrust::lower_bound(thrust::device, pk.begin(), pk.end(), fk.begin(), fk.end(), pos.begin());
      thrust::gather(thrust::device, pos.begin(), pos.end(), pv.begin(), jv.begin());
      // An operator-at-a-time system materialises the output relation (k, fv, pv).
      thrust::copy(thrust::device, fk.begin(), fk.end(), jk.begin());
      thrust::copy(thrust::device, fv.begin(), fv.end(), jfv.begin());
    });
    // read fk keys + values and pk keys + values once; write (k, fv, pv).
    out.push_back({"join pk-fk", n, s, tb * n + tb * npk + 12.0 * n});
  }
  {  // reduce_by_key over sorted keys, ~16 tuples per group.
    thrust::host_vector<int32_t> hg(n);
    for (size_t i = 0; i < n; ++i) hg[i] = static_cast<int32_t>(i / 16);
    thrust::device_vector<int32_t> g = hg, rk(n), rv(n);
    size_t m = 0;
    double s = time_median([&] {
      m = thrust::reduce_by_key(thrust::device, g.begin(), g.end(), v.begin(), rk.begin(), rv.begin()).first -
          rk.begin();
    });
    out.push_back({"reduce sorted", n, s, tb * n + tb * m});
  }
  return out;
}

struct ToI64 {
  __host__ __device__ long long operator()(int32_t x) const { return x; }
};

std::vector<Measurement> run_group_by_baselines(const int32_t* g, const int32_t* v, size_t n) {
  std::vector<Measurement> out;
  // For the check (cheap at 2^28 rows): the number of distinct keys (a bitmap over the
  // keys, which are >= 0) and the total of v; a result must have that many groups, keys
  // strictly ascending, and sums adding up to the total.
  std::vector<int32_t> hg(n), hv(n);
  BENCH_CUDA(cudaMemcpy(hg.data(), g, n * 4, cudaMemcpyDeviceToHost));
  BENCH_CUDA(cudaMemcpy(hv.data(), v, n * 4, cudaMemcpyDeviceToHost));
  std::vector<bool> seen(size_t{1} << 31);
  size_t groups = 0;
  long long total = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto key = static_cast<uint32_t>(hg[i]) & 0x7fffffffu;
    if (!seen[key]) ++groups;
    seen[key] = true;
    total += hv[i];
  }
  const double bytes = 8.0 * n + 12.0 * groups;
  thrust::device_vector<int32_t> sk(n), sv(n), uk(n);
  thrust::device_vector<long long> sums(n);
  thrust::device_vector<int64_t> runs(1);
  auto check = [&](const char* who, size_t m) {
    std::vector<int32_t> k(m);
    std::vector<long long> s(m);
    BENCH_CUDA(cudaMemcpy(k.data(), raw(uk), m * 4, cudaMemcpyDeviceToHost));
    BENCH_CUDA(cudaMemcpy(s.data(), raw(sums), m * 8, cudaMemcpyDeviceToHost));
    bool ok = m == groups;
    long long got = 0;
    for (size_t i = 0; ok && i < m; ++i) {
      ok = k[i] >= 0 && (i == 0 || k[i - 1] < k[i]);
      got += s[i];
    }
    ok = ok && got == total;
    if (!ok) std::fprintf(stderr, "%s: wrong group-by result (%zu groups, want %zu)\n", who, m, groups);
    return ok;
  };
  {
    size_t m = 0;
    double s = time_median([&] {
      thrust::copy(thrust::device, g, g + n, sk.begin());
      thrust::copy(thrust::device, v, v + n, sv.begin());
      thrust::sort_by_key(thrust::device, sk.begin(), sk.end(), sv.begin());
      auto vals = thrust::make_transform_iterator(sv.begin(), ToI64{});
      m = thrust::reduce_by_key(thrust::device, sk.begin(), sk.end(), vals, uk.begin(), sums.begin())
              .first -
          uk.begin();
    });
    out.push_back({"thrust group-by", n, check("thrust group-by", m) ? s : -1, bytes});
  }
  {
    // 32-bit counts: CUB's fastest tuning (see the radix sorts above).
    size_t sort_bytes = 0, reduce_bytes = 0;
    auto vals = thrust::make_transform_iterator(raw(sv), ToI64{});
    BENCH_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, g, raw(sk), v, raw(sv),
                                               static_cast<uint32_t>(n)));
    BENCH_CUDA(cub::DeviceReduce::ReduceByKey(nullptr, reduce_bytes, raw(sk), raw(uk), vals,
                                              raw(sums), raw(runs), ::cuda::std::plus<long long>{},
                                              static_cast<uint32_t>(n)));
    thrust::device_vector<char> temp(std::max(sort_bytes, reduce_bytes));
    void* t = thrust::raw_pointer_cast(temp.data());
    double s = time_median([&] {
      BENCH_CUDA(cub::DeviceRadixSort::SortPairs(t, sort_bytes, g, raw(sk), v, raw(sv),
                                                 static_cast<uint32_t>(n)));
      BENCH_CUDA(cub::DeviceReduce::ReduceByKey(t, reduce_bytes, raw(sk), raw(uk), vals, raw(sums),
                                                raw(runs), ::cuda::std::plus<long long>{},
                                                static_cast<uint32_t>(n)));
    });
    int64_t m = 0;
    BENCH_CUDA(cudaMemcpy(&m, raw(runs), 8, cudaMemcpyDeviceToHost));
    out.push_back({"cub group-by", n, check("cub group-by", static_cast<size_t>(m)) ? s : -1, bytes});
  }
  return out;
}

// ---- Operator-at-a-time chains ------------------------------------------------------
// Each operator of a chain is one or a few Thrust calls whose result is materialised
// in a device vector allocated before the timed region; a projection computes its new
// columns and shares a pass-through column (as cudf does), a join materialises its
// output relation (as "join pk-fk" above). i32 arithmetic wraps modulo 2^32 (computed
// through uint32, so no signed overflow on the device or in the CPU check).

static __host__ __device__ inline int32_t wrap_mul_add(int32_t x, uint32_t m, uint32_t a) {
  return static_cast<int32_t>(static_cast<uint32_t>(x) * m + a);
}

// k >= threshold, on (k, v).
struct KeyAtLeast {
  int32_t threshold;
  __host__ __device__ bool operator()(const thrust::tuple<int32_t, int32_t>& t) const {
    return thrust::get<0>(t) >= threshold;
  }
};
// v % 2 == 0 on a stencil column v.
struct IsEven {
  __host__ __device__ bool operator()(int32_t v) const { return v % 2 == 0; }
};
// (k, v) -> (k + 1, 3v + 1)
struct ChainMap {
  __host__ __device__ thrust::tuple<int32_t, int32_t> operator()(
      const thrust::tuple<int32_t, int32_t>& t) const {
    return thrust::make_tuple(wrap_mul_add(thrust::get<0>(t), 1u, 1u),
                              wrap_mul_add(thrust::get<1>(t), 3u, 1u));
  }
};
// v -> 3v
struct Times3 {
  __host__ __device__ int32_t operator()(int32_t v) const { return wrap_mul_add(v, 3u, 0u); }
};
// v -> (i64)v * 2 + 1
struct TwicePlusOne {
  __host__ __device__ long long operator()(int32_t v) const {
    return static_cast<long long>(v) * 2 + 1;
  }
};
// (v, pv) -> (i64)v + pv
struct SumVP {
  __host__ __device__ long long operator()(const thrust::tuple<int32_t, int32_t>& t) const {
    return static_cast<long long>(thrust::get<0>(t)) + thrust::get<1>(t);
  }
};

// The first m elements of a device vector, on the host.
static thrust::host_vector<int32_t> download(const thrust::device_vector<int32_t>& d, size_t m) {
  return thrust::host_vector<int32_t>(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(m));
}

std::vector<Measurement> run_thrust_chains(size_t n) {
  std::vector<Measurement> out;
  const double tb = 8.0;  // bytes per (key, value) tuple
  // A chain's result is checked once (after its timed runs) against the CPU.
  auto verdict = [](Measurement& m, bool ok) {
    if (!ok) {
      std::fprintf(stderr, "thrust chain %s: MISMATCH\n", m.op.c_str());
      m.seconds = -1;
    }
  };
  const int32_t quarter = 1 << 30, three_eighths = 3 << 29;

  // R(k, v): uniform keys, the same generator as run_thrust_baselines.
  std::mt19937_64 rng(42);
  thrust::host_vector<int32_t> hk(n), hv(n);
  for (size_t i = 0; i < n; ++i) {
    hk[i] = static_cast<int32_t>(rng() & 0x7fffffff);
    hv[i] = static_cast<int32_t>(rng());
  }
  thrust::device_vector<int32_t> k = hk, v = hv;
  auto in = thrust::make_zip_iterator(thrust::make_tuple(k.begin(), v.begin()));

  // The join chains: R(k = 2(i/4), v = i), n rows; S(pk = 2i, pv = i + 7), n/4 rows,
  // sorted by pk. Every R row matches one S row when n is a multiple of 4.
  const size_t npk = n / 4;
  const bool join_ok = n >= 4 && n % 4 == 0;
  thrust::host_vector<int32_t> hjk(n), hjv(n), hpk(npk), hpv(npk);
  for (size_t i = 0; i < n; ++i) {
    hjk[i] = static_cast<int32_t>(2 * (i / 4));
    hjv[i] = static_cast<int32_t>(i);
  }
  for (size_t i = 0; i < npk; ++i) {
    hpk[i] = static_cast<int32_t>(2 * i);
    hpv[i] = static_cast<int32_t>(i + 7);
  }
  // The CPU join: the index of the S row k matches, or -1.
  auto probe = [&](int32_t key) -> std::ptrdiff_t {
    auto it = std::lower_bound(hpk.begin(), hpk.end(), key);
    return it != hpk.end() && *it == key ? it - hpk.begin() : -1;
  };
  thrust::device_vector<int32_t> jk = hjk, jv = hjv, pk = hpk, pv = hpv;
  auto skipped = [&](const char* op) {
    // lower_bound + gather assumes every row matches; with n % 4 != 0 some do not.
    std::fprintf(stderr, "thrust chain %s: skipped, n = %zu is not a positive multiple of 4\n", op, n);
    out.push_back({op, n, -1, 0});
  };

  {  // select k < 2^30, select v % 2 == 0, project (k + 1, 3v + 1)
    thrust::device_vector<int32_t> ak(n), av(n), bk(n), bv(n), ok(n), ov(n);
    auto a = thrust::make_zip_iterator(thrust::make_tuple(ak.begin(), av.begin()));
    auto b = thrust::make_zip_iterator(thrust::make_tuple(bk.begin(), bv.begin()));
    auto o = thrust::make_zip_iterator(thrust::make_tuple(ok.begin(), ov.begin()));
    size_t m1 = 0, m2 = 0;
    double s = time_median([&] {
      m1 = static_cast<size_t>(thrust::copy_if(thrust::device, in, in + n, a, Half{quarter}) - a);
      m2 = static_cast<size_t>(thrust::copy_if(thrust::device, a, a + m1, av.begin(), b, IsEven{}) - b);
      thrust::transform(thrust::device, b, b + m2, o, ChainMap{});
    });
    Measurement m{"select-select-project", n, s, tb * n + tb * m2};
    thrust::host_vector<int32_t> rk = download(ok, m2), rv = download(ov, m2);
    bool good = true;
    size_t j = 0;
    for (size_t i = 0; i < n && good; ++i) {
      if (!(hk[i] < quarter && hv[i] % 2 == 0)) continue;
      good = j < m2 && rk[j] == hk[i] + 1 && rv[j] == wrap_mul_add(hv[i], 3u, 1u);
      ++j;
    }
    verdict(m, good && j == m2);
    out.push_back(m);
  }

  if (!join_ok) {
    skipped("select-project-join");
  } else {  // select v % 2 == 0, project (k, w = 3v), join k = pk -> (k, w, pv)
    thrust::device_vector<int32_t> ak(n), av(n), w(n), pos(n), ok(n), ow(n), opv(n);
    auto rin = thrust::make_zip_iterator(thrust::make_tuple(jk.begin(), jv.begin()));
    auto a = thrust::make_zip_iterator(thrust::make_tuple(ak.begin(), av.begin()));
    size_t m1 = 0;
    double s = time_median([&] {
      m1 = static_cast<size_t>(thrust::copy_if(thrust::device, rin, rin + n, jv.begin(), a, IsEven{}) - a);
      // project: w is computed, k is passed through (shared, not copied)
      thrust::transform(thrust::device, av.begin(), av.begin() + m1, w.begin(), Times3{});
      // join on sorted S: vectorised binary search, gather pv, materialise (k, w, pv)
      thrust::lower_bound(thrust::device, pk.begin(), pk.end(), ak.begin(), ak.begin() + m1, pos.begin());
      thrust::gather(thrust::device, pos.begin(), pos.begin() + m1, pv.begin(), opv.begin());
      thrust::copy(thrust::device, ak.begin(), ak.begin() + m1, ok.begin());
      thrust::copy(thrust::device, w.begin(), w.begin() + m1, ow.begin());
    });
    Measurement m{"select-project-join", n, s, tb * n + tb * npk + 12.0 * m1};
    thrust::host_vector<int32_t> rk = download(ok, m1), rw = download(ow, m1), rpv = download(opv, m1);
    bool good = true;
    size_t j = 0;
    for (size_t i = 0; i < n && good; ++i) {
      if (hjv[i] % 2 != 0) continue;
      std::ptrdiff_t p = probe(hjk[i]);
      if (p < 0) continue;
      good = j < m1 && rk[j] == hjk[i] && rw[j] == wrap_mul_add(hjv[i], 3u, 0u) && rpv[j] == hpv[p];
      ++j;
    }
    verdict(m, good && j == m1);
    out.push_back(m);
  }

  if (!join_ok) {
    skipped("join-select-reduce");
  } else {  // join k = pk -> (k, v, pv), select v % 2 == 0, sum of (i64)(v + pv)
    thrust::device_vector<int32_t> pos(n), ok(n), ov(n), opv(n), bk(n), bv(n), bpv(n);
    auto o = thrust::make_zip_iterator(thrust::make_tuple(ok.begin(), ov.begin(), opv.begin()));
    auto b = thrust::make_zip_iterator(thrust::make_tuple(bk.begin(), bv.begin(), bpv.begin()));
    auto vpv = thrust::make_zip_iterator(thrust::make_tuple(bv.begin(), bpv.begin()));
    long long sum = 0;
    double s = time_median([&] {
      thrust::lower_bound(thrust::device, pk.begin(), pk.end(), jk.begin(), jk.end(), pos.begin());
      thrust::gather(thrust::device, pos.begin(), pos.end(), pv.begin(), opv.begin());
      thrust::copy(thrust::device, jk.begin(), jk.end(), ok.begin());
      thrust::copy(thrust::device, jv.begin(), jv.end(), ov.begin());
      size_t m1 = static_cast<size_t>(thrust::copy_if(thrust::device, o, o + n, ov.begin(), b, IsEven{}) - b);
      sum = thrust::transform_reduce(thrust::device, vpv, vpv + m1, SumVP{}, 0LL, thrust::plus<long long>());
    });
    Measurement m{"join-select-reduce", n, s, tb * n + tb * npk + 8.0};
    long long expect = 0;
    for (size_t i = 0; i < n; ++i) {
      std::ptrdiff_t p = probe(hjk[i]);
      if (p >= 0 && hjv[i] % 2 == 0) expect += static_cast<long long>(hjv[i]) + hpv[p];
    }
    verdict(m, sum == expect);
    out.push_back(m);
  }
  {  // two selects over the same R: k < 2^30 and k >= 3 * 2^29
    thrust::device_vector<int32_t> ak(n), av(n), bk(n), bv(n);
    auto a = thrust::make_zip_iterator(thrust::make_tuple(ak.begin(), av.begin()));
    auto b = thrust::make_zip_iterator(thrust::make_tuple(bk.begin(), bv.begin()));
    size_t m1 = 0, m2 = 0;
    double s = time_median([&] {
      m1 = static_cast<size_t>(thrust::copy_if(thrust::device, in, in + n, a, Half{quarter}) - a);
      m2 = static_cast<size_t>(thrust::copy_if(thrust::device, in, in + n, b, KeyAtLeast{three_eighths}) - b);
    });
    // R is read once: a fused kernel reads it once for both selects.
    Measurement m{"two-selects", n, s, tb * n + tb * (m1 + m2)};
    thrust::host_vector<int32_t> r1k = download(ak, m1), r1v = download(av, m1),
                                 r2k = download(bk, m2), r2v = download(bv, m2);
    bool good = true;
    size_t j1 = 0, j2 = 0;
    for (size_t i = 0; i < n && good; ++i) {
      if (hk[i] < quarter) {
        good = j1 < m1 && r1k[j1] == hk[i] && r1v[j1] == hv[i];
        ++j1;
      }
      if (good && hk[i] >= three_eighths) {
        good = j2 < m2 && r2k[j2] == hk[i] && r2v[j2] == hv[i];
        ++j2;
      }
    }
    verdict(m, good && j1 == m1 && j2 == m2);
    out.push_back(m);
  }

  {  // select k < 2^30, project x = (i64)v * 2 + 1, sum of x
    thrust::device_vector<int32_t> ak(n), av(n);
    thrust::device_vector<long long> x(n);
    auto a = thrust::make_zip_iterator(thrust::make_tuple(ak.begin(), av.begin()));
    long long sum = 0;
    double s = time_median([&] {
      size_t m1 = static_cast<size_t>(thrust::copy_if(thrust::device, in, in + n, a, Half{quarter}) - a);
      thrust::transform(thrust::device, av.begin(), av.begin() + m1, x.begin(), TwicePlusOne{});
      sum = thrust::reduce(thrust::device, x.begin(), x.begin() + m1, 0LL);
    });
    Measurement m{"select-project-reduce", n, s, tb * n + 8.0};
    long long expect = 0;
    for (size_t i = 0; i < n; ++i)
      if (hk[i] < quarter) expect += static_cast<long long>(hv[i]) * 2 + 1;
    verdict(m, sum == expect);
    out.push_back(m);
  }

  return out;
}

}  // namespace ranc::bench
