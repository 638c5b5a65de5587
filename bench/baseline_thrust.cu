// Thrust baselines: each RA operator as one or a few Thrust calls on device
// vectors, timed with CUDA events (median of 5 after one warm-up run).
#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/gather.h>
#include <thrust/host_vector.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/set_operations.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <stdexcept>

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

static double time_median(const std::function<void()>& f, int runs = 5) {
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

}  // namespace ranc::bench
