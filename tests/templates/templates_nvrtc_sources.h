// Sample translation units for templates_nvrtc_test: what the code generator emits, per skeleton,
// covering every hook variant with 32- and 64-bit keys.
#pragma once

#define RANC_NVRTC_SOURCES(X) \
  X(SelectMapProduct) X(MergeSetOps) X(SortMergeJoin) X(ReduceUnique) X(HashJoin)

namespace ranc_test_sources {

inline constexpr const char* SelectMapProduct = R"CUDA(
#include <ranc/templates/select.cuh>
#include <ranc/templates/product.cuh>
using namespace ranc::tpl;
struct Pred_n3 { const int* c0; __device__ bool operator()(long long i) const { return c0[i] < 5; } };
struct Emit_n3 { const int* c0; const double* c1; int* o0; double* o1;
  __device__ void operator()(long long i, long long o) const { o0[o] = c0[i]; o1[o] = c1[i] * 2; } };
extern "C" __global__ void n3_init(void* tile_state, long long tiles) { init_tile_state(tile_state, tiles); }
extern "C" __global__ void __launch_bounds__(256) n3_select(const int* c0, const double* c1, int* o0, double* o1,
    long long n, void* tile_state, long long* out_count) {
  using P = SelectPolicy<256, 16>;
  __shared__ typename SelectAgent<P>::TempStorage temp;
  SelectAgent<P>::run(temp, n, Pred_n3{c0}, Emit_n3{c0, c1, o0, o1}, tile_state, out_count);
}
struct Pred_n4 { const long long* c0; const float* c1; int* err;
  __device__ bool operator()(long long i) const {
    return safe_div(c0[i], 3ll, err) == 2 && total_less(c1[i], 1.5f) && saturating_cast<int>(c1[i]) > 0; } };
struct Emit_n4 { const long long* c0; long long* o0;
  __device__ void operator()(long long i, long long o) const { o0[o] = c0[i]; } };
extern "C" __global__ void __launch_bounds__(256) n4_select_direct(const long long* c0, const float* c1,
    long long* o0, long long n, void* tile_state, long long* out_count, int* err) {
  using P = TuningTable<900>::Select;
  __shared__ typename SelectAgent<P>::TempStorage temp;
  SelectAgent<P>::run<SelectMode::direct>(temp, n, Pred_n4{c0, c1, err}, Emit_n4{c0, o0}, tile_state, out_count);
}
extern "C" __global__ void __launch_bounds__(256) n4_select_count(const long long* c0, const float* c1,
    long long n, void* tile_state, long long* out_count, int* err) {
  using P = TuningTable<800>::Select;
  __shared__ typename SelectAgent<P>::TempStorage temp;
  SelectAgent<P>::run<SelectMode::count_only>(temp, n, Pred_n4{c0, c1, err}, NoEmit{}, tile_state, out_count);
}
struct Map_n5 { const double* c0; const long long* c1; double* o0; long long* o1; int* err;
  __device__ void operator()(long long i) const { o0[i] = c0[i] + 1.0; o1[i] = safe_mod(c1[i], -1ll, err); } };
extern "C" __global__ void __launch_bounds__(256) n5_map(const double* c0, const long long* c1, double* o0,
    long long* o1, long long n, int* err) {
  MapAgent<MapPolicy<256, 16>>::run(n, Map_n5{c0, c1, o0, o1, err});
}
extern "C" __global__ void n5_map_gs(const double* c0, const long long* c1, double* o0, long long* o1,
    long long n, int* err) {
  map_grid_stride(n, Map_n5{c0, c1, o0, o1, err});
}
struct Emit_n6 { const int* a0; const double* b0; int* o0; double* o1;
  __device__ void operator()(long long a, long long b, long long o) const { o0[o] = a0[a]; o1[o] = b0[b]; } };
extern "C" __global__ void __launch_bounds__(256) n6_product(const int* a0, const double* b0, int* o0,
    double* o1, long long na, long long nb) {
  ProductAgent<ProductPolicy<256, 16>>::run(na, nb, Emit_n6{a0, b0, o0, o1});
}
)CUDA";

inline constexpr const char* MergeSetOps = R"CUDA(
#include <ranc/templates/set_ops.cuh>
using namespace ranc::tpl;
// 32-bit single-column tuples and 64-bit + double two-column tuples.
struct Cmp32 { const int* a; const int* b; __device__ int operator()(long long i, long long j) const { return cmp3(a[i], b[j]); } };
struct Dup32 { const int* x; __device__ bool operator()(long long i) const { return i > 0 && x[i] == x[i - 1]; } };
struct Emit32 { const int* a; const int* b; int* o;
  __device__ void operator()(bool from_b, long long r, long long out) const { o[out] = from_b ? b[r] : a[r]; } };
struct Cmp64 { const long long* a0; const double* a1; const long long* b0; const double* b1;
  __device__ int operator()(long long i, long long j) const { return cmp3_chain(cmp3(a0[i], b0[j]), cmp3(a1[i], b1[j])); } };
struct Dup64 { const long long* x0; const double* x1; __device__ bool operator()(long long i) const { return i > 0 && x0[i] == x0[i - 1] && total_equal(x1[i], x1[i - 1]); } };
struct Emit64 { const long long* a0; const double* a1; const long long* b0; const double* b1; long long* o0; double* o1;
  __device__ void operator()(bool from_b, long long r, long long out) const {
    o0[out] = from_b ? b0[r] : a0[r]; o1[out] = from_b ? b1[r] : a1[r]; } };
using P = TuningTable<900>::Merge;
extern "C" __global__ void m_init(void* ts, long long tiles) { init_tile_state(ts, tiles); }
extern "C" __global__ void m_part32(const int* a, const int* b, long long na, long long nb, long long* parts) {
  merge_path_partitions(na, nb, P::tile_items, Cmp32{a, b}, parts); }
extern "C" __global__ void m_part64(const long long* a0, const double* a1, const long long* b0, const double* b1,
    long long na, long long nb, long long* parts) {
  merge_path_partitions(na, nb, P::tile_items, Cmp64{a0, a1, b0, b1}, parts); }
#define SETOP32(NAME, OP) \
extern "C" __global__ void __launch_bounds__(P::block_threads) NAME(const int* a, const int* b, int* o, long long na, \
    long long nb, const long long* parts, void* ts, long long* out_count) { \
  __shared__ typename SetOpAgent<P, OP>::TempStorage temp; \
  SetOpAgent<P, OP>::run(temp, na, nb, parts, Cmp32{a, b}, Dup32{a}, Dup32{b}, Emit32{a, b, o}, ts, out_count); }
SETOP32(u32, SetOp::set_union)
SETOP32(i32, SetOp::set_intersect)
SETOP32(d32, SetOp::set_difference)
SETOP32(m32, SetOp::merge_all)
#define SETOP64(NAME, OP) \
extern "C" __global__ void __launch_bounds__(P::block_threads) NAME(const long long* a0, const double* a1, \
    const long long* b0, const double* b1, long long* o0, double* o1, long long na, long long nb, \
    const long long* parts, void* ts, long long* out_count) { \
  __shared__ typename SetOpAgent<P, OP>::TempStorage temp; \
  SetOpAgent<P, OP>::run(temp, na, nb, parts, Cmp64{a0, a1, b0, b1}, Dup64{a0, a1}, Dup64{b0, b1}, Emit64{a0, a1, b0, b1, o0, o1}, ts, out_count); }
SETOP64(u64, SetOp::set_union)
SETOP64(i64k, SetOp::set_intersect)
SETOP64(d64, SetOp::set_difference)
)CUDA";

inline constexpr const char* SortMergeJoin = R"CUDA(
#include <ranc/templates/join.cuh>
using namespace ranc::tpl;
template <class K> struct Cmp { const K* l; const K* r; __device__ int operator()(long long i, long long j) const { return cmp3(l[i], r[j]); } };
template <class K> struct Emit { const K* l; const double* rp; K* o0; double* o1;
  __device__ void operator()(long long i, long long j, long long o) const { o0[o] = l[i]; o1[o] = rp[j]; } };
struct Res { const double* lp; const double* rp; __device__ bool operator()(long long i, long long j) const { return lp[i] < rp[j]; } };
using C = TuningTable<900>::JoinCount;
using E = TuningTable<900>::JoinExpand;
using S = TuningTable<900>::Select;
extern "C" __global__ void j_init(void* ts, long long tiles) { init_tile_state(ts, tiles); }
#define JOIN(K, SUF) \
extern "C" __global__ void __launch_bounds__(C::block_threads) j_count##SUF(const K* l, const K* r, long long nl, long long nr, \
    long long* lo, long long* offsets, void* ts, long long* total) { \
  __shared__ typename JoinCountAgent<C>::TempStorage temp; \
  JoinCountAgent<C>::run(temp, nl, nr, Cmp<K>{l, r}, lo, offsets, ts, total); } \
extern "C" __global__ void __launch_bounds__(E::block_threads) j_expand##SUF(const K* l, const double* rp, K* o0, double* o1, \
    long long total, long long nl, const long long* lo, const long long* offsets) { \
  __shared__ typename JoinExpandAgent<E>::TempStorage temp; \
  JoinExpandAgent<E>::run(temp, total, nl, lo, offsets, Emit<K>{l, rp, o0, o1}); } \
extern "C" __global__ void __launch_bounds__(E::block_threads) j_rcount##SUF(const double* lp, const double* rp, \
    long long total, long long nl, const long long* lo, const long long* offsets, void* ts, long long* out_count) { \
  __shared__ typename JoinExpandAgent<E>::TempStorage temp; \
  JoinExpandAgent<E>::run_residual<SelectMode::count_only>(temp, total, nl, lo, offsets, Res{lp, rp}, NoJoinEmit{}, ts, out_count); } \
extern "C" __global__ void __launch_bounds__(E::block_threads) j_rwrite##SUF(const K* l, const double* lp, const double* rp, \
    K* o0, double* o1, long long total, long long nl, const long long* lo, const long long* offsets, void* ts, long long* out_count) { \
  __shared__ typename JoinExpandAgent<E>::TempStorage temp; \
  JoinExpandAgent<E>::run_residual(temp, total, nl, lo, offsets, Res{lp, rp}, Emit<K>{l, rp, o0, o1}, ts, out_count); } \
struct SemiEmit##SUF { const K* l; K* o; __device__ void operator()(long long i, long long out) const { o[out] = l[i]; } }; \
extern "C" __global__ void __launch_bounds__(S::block_threads) j_semi##SUF(const K* l, const K* r, K* o, long long nl, \
    long long nr, void* ts, long long* out_count) { \
  __shared__ typename SelectAgent<S>::TempStorage temp; \
  SelectAgent<S>::run(temp, nl, JoinMatchPred<Cmp<K>>{Cmp<K>{l, r}, NoResidual{}, nr}, SemiEmit##SUF{l, o}, ts, out_count); } \
extern "C" __global__ void __launch_bounds__(S::block_threads) j_anti##SUF(const K* l, const K* r, K* o, long long nl, \
    long long nr, void* ts, long long* out_count) { \
  __shared__ typename SelectAgent<S>::TempStorage temp; \
  SelectAgent<S>::run(temp, nl, JoinMatchPred<Cmp<K>, NoResidual, true>{Cmp<K>{l, r}, NoResidual{}, nr}, SemiEmit##SUF{l, o}, ts, out_count); } \
extern "C" __global__ void __launch_bounds__(S::block_threads) j_semires##SUF(const K* l, const K* r, const double* lp, \
    const double* rp, K* o, long long nl, long long nr, void* ts, long long* out_count) { \
  __shared__ typename SelectAgent<S>::TempStorage temp; \
  SelectAgent<S>::run(temp, nl, JoinMatchPred<Cmp<K>, Res>{Cmp<K>{l, r}, Res{lp, rp}, nr}, SemiEmit##SUF{l, o}, ts, out_count); } \
extern "C" __global__ void __launch_bounds__(S::block_threads) j_antires##SUF(const K* l, const K* r, const double* lp, \
    const double* rp, K* o, long long nl, long long nr, void* ts, long long* out_count) { \
  __shared__ typename SelectAgent<S>::TempStorage temp; \
  SelectAgent<S>::run(temp, nl, JoinMatchPred<Cmp<K>, Res, true>{Cmp<K>{l, r}, Res{lp, rp}, nr}, SemiEmit##SUF{l, o}, ts, out_count); }
JOIN(int, _32)
JOIN(long long, _64)
)CUDA";

inline constexpr const char* ReduceUnique = R"CUDA(
#include <ranc/templates/reduce.cuh>
#include <ranc/templates/unique.cuh>
using namespace ranc::tpl;
template <class K> struct Same { const K* k; __device__ bool operator()(long long i, long long j) const { return k[i] == k[j]; } };
struct Agg { const double* v; const int* w;
  struct State { double sum; long long count; double min; long long max; };
  __device__ State init() const { return {0.0, 0, __longlong_as_double(0x7ff0000000000000ll), (long long)0x8000000000000000ull}; }
  __device__ void accumulate(State& s, long long r) const {
    s.sum += v[r]; s.count += 1; s.min = total_less(v[r], s.min) ? v[r] : s.min; s.max = w[r] > s.max ? w[r] : s.max; }
  __device__ void merge(State& a, const State& b) const {
    a.sum += b.sum; a.count += b.count; a.min = total_less(b.min, a.min) ? b.min : a.min; a.max = b.max > a.max ? b.max : a.max; } };
template <class K> struct Emit { const K* k; K* ok; double* osum; long long* ocount; double* omin; long long* omax; double* oavg;
  __device__ void operator()(long long g, long long first, const Agg::State& s) const {
    ok[g] = k[first]; osum[g] = s.sum; ocount[g] = s.count; omin[g] = s.min; omax[g] = s.max;
    oavg[g] = s.count ? s.sum / s.count : 0.0; } };
using R = TuningTable<900>::Reduce;
extern "C" __global__ void r_init(void* ts, long long tiles) { init_tile_state(ts, tiles); }
#define REDUCE(K, SUF) \
extern "C" __global__ void __launch_bounds__(R::block_threads) r_reduce##SUF(const K* k, const double* v, const int* w, \
    K* ok, double* osum, long long* ocount, double* omin, long long* omax, double* oavg, long long n, void* ts, \
    void* carry, void* tail, long long* meta, long long* out_count) { \
  __shared__ typename ReduceAgent<R>::TempStorageT<Agg::State> temp; \
  ReduceAgent<R>::run(temp, n, Same<K>{k}, Agg{v, w}, Emit<K>{k, ok, osum, ocount, omin, omax, oavg}, ts, carry, tail, meta, out_count, \
      [](long long, long long) { return false; }, [](void*&) { return 0; }); } \
extern "C" __global__ void r_fixup##SUF(const K* k, const double* v, const int* w, \
    K* ok, double* osum, long long* ocount, double* omin, long long* omax, double* oavg, long long tiles, \
    const void* carry, const void* tail, const long long* meta) { \
  ReduceFixupAgent::run(tiles, Agg{v, w}, Emit<K>{k, ok, osum, ocount, omin, omax, oavg}, carry, tail, meta); } \
struct UEmit##SUF { const K* k; K* o; __device__ void operator()(long long i, long long out) const { o[out] = k[i]; } }; \
extern "C" __global__ void __launch_bounds__(256) u_unique##SUF(const K* k, K* o, long long n, void* ts, long long* out_count) { \
  using P = TuningTable<900>::Select; \
  __shared__ typename UniqueAgent<P>::TempStorage temp; \
  UniqueAgent<P>::run(temp, n, UniquePred<Same<K>>{Same<K>{k}}, UEmit##SUF{k, o}, ts, out_count); }
REDUCE(int, _32)
REDUCE(long long, _64)
struct Copy { const int* k; int* o; __device__ void operator()(long long i) const { o[i] = k[i]; } };
extern "C" __global__ void limit_map(const int* k, int* o, long long n) { MapAgent<TuningTable<900>::Map>::run(n, Copy{k, o}); }
)CUDA";

inline constexpr const char* HashJoin = R"CUDA(
#include <ranc/templates/hash_join.cuh>
using namespace ranc::tpl;
struct Res { const double* lp; const double* rp; __device__ bool operator()(long long i, long long j) const { return lp[i] != rp[j]; } };
struct Emit { long long* ol; long long* orr;
  __device__ void operator()(long long i, long long j, long long o) const { ol[o] = i; orr[o] = j; } };
using J = TuningTable<900>::HashJoin;
extern "C" __global__ void h_keys32(const int* k, long long n, unsigned int* h, unsigned int* rows) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { h[i] = hash_key((unsigned int)k[i]); rows[i] = (unsigned int)i; if (hash_key_inverse(h[i]) != (unsigned int)k[i]) rows[i] = ~0u; } }
extern "C" __global__ void h_keys64(const double* k, long long n, unsigned long long* h, unsigned int* rows) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { h[i] = hash_key(total_order_key(k[i])); rows[i] = (unsigned int)i; } }
#define HJ(KT, SUF) \
extern "C" __global__ void h_bounds_search##SUF(long long n, const KT* keys, long long bits, long long* bounds) { \
  partition_bounds_search((long long)blockIdx.x * blockDim.x + threadIdx.x, n, keys, bits, bounds); } \
extern "C" __global__ void __launch_bounds__(J::block_threads) h_run##SUF(long long bits, long long nl, const KT* lk, \
    const unsigned int* lr, const long long* lb, const KT* rk, const unsigned int* rr, const long long* rb, \
    GlobalJoinTable g, long long* ol, long long* orr, long long capacity, unsigned long long* header) { \
  extern __shared__ __align__(16) unsigned char smem[]; \
  auto& temp = *reinterpret_cast<typename HashJoinAgent<J, KT>::TempStorage*>(smem); \
  HashJoinAgent<J, KT>::run<true>(temp, bits, nl, lk, lb, rk, rb, g, NoResidual{}, Emit{ol, orr}, capacity, header); } \
extern "C" __global__ void h_gbuild##SUF(GlobalJoinTable g, const KT* h, long long n) { \
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
  if (i < n) global_join_insert(g, h[i], (unsigned int)i); } \
extern "C" __global__ void __launch_bounds__(J::block_threads) h_rrun##SUF(long long bits, long long nl, const KT* lk, \
    const unsigned int* lr, const long long* lb, const KT* rk, const unsigned int* rr, const long long* rb, \
    const double* lp, const double* rp, long long* ol, long long* orr, long long capacity, unsigned long long* header) { \
  extern __shared__ __align__(16) unsigned char smem[]; \
  auto& temp = *reinterpret_cast<typename HashJoinAgent<J, KT>::TempStorage*>(smem); \
  HashJoinAgent<J, KT>::run<false>(temp, bits, nl, lk, lb, rk, rb, GlobalJoinTable{nullptr, nullptr, nullptr, 0}, \
                            Res{lp, rp}, Emit{ol, orr}, capacity, header); } \
extern "C" __global__ void __launch_bounds__(J::block_threads) h_paged##SUF(long long bits, long long nl, const KT* lk, \
    const unsigned int* lr, const long long* lb, const KT* rk, const unsigned int* rr, const long long* rb, \
    PagedOut out, long long* ol, long long* orr) { \
  extern __shared__ __align__(16) unsigned char smem[]; \
  auto& temp = *reinterpret_cast<typename HashJoinAgent<J, KT>::TempStorage*>(smem); \
  HashJoinAgent<J, KT>::run_paged<1024, false>(temp, out, bits, nl, lk, lb, rk, rb, \
                                               GlobalJoinTable{nullptr, nullptr, nullptr, 0}, NoResidual{}, Emit{ol, orr}); }
HJ(unsigned int, _32)
HJ(unsigned long long, _64)
)CUDA";

}  // namespace ranc_test_sources
