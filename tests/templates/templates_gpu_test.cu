// GPU correctness tests of the CUDA templates against host references, at awkward sizes and key
// distributions. Kernels here mirror what the code generator emits. Skips without a GPU.
#include <gtest/gtest.h>

#include <ranc/templates/hash_join.cuh>
#include <ranc/templates/join.cuh>
#include <ranc/templates/paged.cuh>
#include <ranc/templates/product.cuh>
#include <ranc/templates/reduce.cuh>
#include <ranc/templates/select.cuh>
#include <ranc/templates/set_ops.cuh>
#include <ranc/templates/topk.cuh>
#include <ranc/templates/unique.cuh>


#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

using namespace ranc::tpl;
using ll = long long;

namespace {

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    ASSERT_EQ(e_, cudaSuccess) << #x << ": " << cudaGetErrorString(e_);                \
  } while (0)

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}
#define REQUIRE_GPU() \
  if (!have_gpu()) GTEST_SKIP() << "SKIPPED: no GPU"

template <class T>
struct Buf {
  T* p = nullptr;
  size_t n = 0;
  explicit Buf(size_t count) : n(count) { cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(T)); cudaMemset(p, 0, std::max<size_t>(count, 1) * sizeof(T)); }
  explicit Buf(const std::vector<T>& v) : Buf(v.size()) { if (!v.empty()) cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice); }
  ~Buf() { cudaFree(p); }
  Buf(const Buf&) = delete;
  std::vector<T> get(size_t count) const {
    std::vector<T> v(count);
    if (count) cudaMemcpy(v.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost);
    return v;
  }
  T at(size_t i) const { T v{}; cudaMemcpy(&v, p + i, sizeof(T), cudaMemcpyDeviceToHost); return v; }
};

// Small tiles so that modest sizes span many tiles.
using SP = SelectPolicy<128, 4>;
using MP = MergePolicy<64, 5>;
using CP = JoinPolicy<128, 2>;
using EP = JoinPolicy<128, 3>;
using RP = ReducePolicy<64, 3>;
using JP = TilePolicy<128, 4>;

ll tiles_of(ll n, ll t) { return num_tiles(n, t); }
unsigned grid_of(ll items, ll per_block) { return static_cast<unsigned>(num_tiles(items, per_block)); }

__global__ void k_init(void* ts, ll tiles) { init_tile_state(ts, tiles); }
void init_ts(void* ts, ll tiles) { k_init<<<grid_of(tiles, 256), 256>>>(ts, tiles); }

std::vector<ll> sizes_for(ll tile) {
  return {0, 1, 31, 32, 33, tile, tile + 1, 37 * tile + 5, ll(1) << 22};
}

// ------------------------------------------------------------------ select / map / product
struct SelPred { const int* k; __device__ bool operator()(ll i) const { return k[i] % 3 != 0; } };
struct SelEmit { const int* k; int* o; ll* rows; __device__ void operator()(ll i, ll out) const { o[out] = k[i]; rows[out] = i; } };
template <SelectMode M>
__global__ void k_select(const int* k, int* o, ll* rows, ll n, void* ts, ll* cnt) {
  __shared__ SelectAgent<SP>::TempStorage temp;
  SelectAgent<SP>::run<M>(temp, n, SelPred{k}, SelEmit{k, o, rows}, ts, cnt);
}
struct MapF { const int* k; ll* o; __device__ void operator()(ll i) const { o[i] = ll(k[i]) * 2; } };
__global__ void k_map(const int* k, ll* o, ll n) { MapAgent<MapPolicy<128, 4>>::run(n, MapF{k, o}); }
struct ProdEmit { const int* a; const int* b; ll* o; __device__ void operator()(ll i, ll j, ll out) const { o[out] = ll(a[i]) * 100000 + b[j]; } };
__global__ void k_product(const int* a, const int* b, ll* o, ll na, ll nb) { ProductAgent<ProductPolicy<128, 4>>::run(na, nb, ProdEmit{a, b, o}); }

template <SelectMode M>
void check_select(ll n) {
  std::mt19937 rng(n);
  std::vector<int> k(n);
  for (auto& x : k) x = int(rng() % 1000);
  std::vector<int> want;
  std::vector<ll> want_rows;
  for (ll i = 0; i < n; ++i) if (k[i] % 3 != 0) { want.push_back(k[i]); want_rows.push_back(i); }
  Buf<int> dk(k), dout(n);
  Buf<ll> drows(n), cnt(1);
  const ll tiles = tiles_of(n, SP::tile_items);
  Buf<ll> ts(tile_state_elems(tiles));
  init_ts(ts.p, tiles);
  k_select<M><<<unsigned(tiles), SP::block_threads>>>(dk.p, dout.p, drows.p, n, ts.p, cnt.p);
  CK(cudaDeviceSynchronize());
  ASSERT_EQ(cnt.at(0), ll(want.size())) << "n=" << n;
  if (M != SelectMode::count_only) {
    EXPECT_EQ(dout.get(want.size()), want) << "n=" << n;
    EXPECT_EQ(drows.get(want.size()), want_rows) << "n=" << n;
  }
}

TEST(TemplatesGpu, Select) {
  REQUIRE_GPU();
  for (ll n : sizes_for(SP::tile_items)) {
    check_select<SelectMode::staged>(n);
    check_select<SelectMode::direct>(n);
    check_select<SelectMode::count_only>(n);
  }
}

TEST(TemplatesGpu, MapAndProduct) {
  REQUIRE_GPU();
  for (ll n : sizes_for(512)) {
    std::vector<int> k(n);
    for (ll i = 0; i < n; ++i) k[i] = int(i * 7 % 1001);
    Buf<int> dk(k);
    Buf<ll> out(n);
    k_map<<<grid_of(n, 512), 128>>>(dk.p, out.p, n);
    CK(cudaDeviceSynchronize());
    auto got = out.get(n);
    for (ll i = 0; i < n; ++i) ASSERT_EQ(got[i], ll(k[i]) * 2);
  }
  for (ll na : {0, 1, 3, 100}) {
    for (ll nb : {0, 1, 31, 129, 3000}) {
      std::vector<int> a(na), b(nb);
      for (ll i = 0; i < na; ++i) a[i] = int(i);
      for (ll j = 0; j < nb; ++j) b[j] = int(j);
      Buf<int> da(a), db(b);
      Buf<ll> out(na * nb);
      k_product<<<grid_of(na * nb, 512), 128>>>(da.p, db.p, out.p, na, nb);
      CK(cudaDeviceSynchronize());
      auto got = out.get(na * nb);
      for (ll o = 0; o < na * nb; ++o) ASSERT_EQ(got[o], (o / nb) * 100000 + (o % nb)) << na << "x" << nb;
    }
  }
}

// ------------------------------------------------------------------ set operations
struct SCmp { const ll* a; const ll* b; __device__ int operator()(ll i, ll j) const { return cmp3(a[i], b[j]); } };
struct SDup { const ll* x; __device__ bool operator()(ll i) const { return i > 0 && x[i] == x[i - 1]; } };
struct SEmit { const ll* a; const ll* b; ll* o; __device__ void operator()(bool from_b, ll r, ll out) const { o[out] = from_b ? b[r] : a[r]; } };
__global__ void k_part(const ll* a, const ll* b, ll na, ll nb, ll* parts) { merge_path_partitions(na, nb, MP::tile_items, SCmp{a, b}, parts); }
template <SetOp Op>
__global__ void k_setop(const ll* a, const ll* b, ll* o, ll na, ll nb, const ll* parts, void* ts, ll* cnt) {
  __shared__ typename SetOpAgent<MP, Op>::TempStorage temp;
  SetOpAgent<MP, Op>::run(temp, na, nb, parts, SCmp{a, b}, SDup{a}, SDup{b}, SEmit{a, b, o}, ts, cnt);
}

std::vector<ll> sorted_unique(ll n, ll range, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::set<ll> s;
  while (ll(s.size()) < n) s.insert(ll(rng() % range) - range / 2);
  return {s.begin(), s.end()};
}

template <SetOp Op>
void check_setop(const std::vector<ll>& a, const std::vector<ll>& b) {
  // Set semantics: inputs may hold duplicates; the output holds each value once.
  std::vector<ll> ua(a), ub(b), want;
  ua.erase(std::unique(ua.begin(), ua.end()), ua.end());
  ub.erase(std::unique(ub.begin(), ub.end()), ub.end());
  if (Op == SetOp::set_union) std::set_union(ua.begin(), ua.end(), ub.begin(), ub.end(), std::back_inserter(want));
  if (Op == SetOp::set_intersect) std::set_intersection(ua.begin(), ua.end(), ub.begin(), ub.end(), std::back_inserter(want));
  if (Op == SetOp::set_difference) std::set_difference(ua.begin(), ua.end(), ub.begin(), ub.end(), std::back_inserter(want));
  if (Op == SetOp::merge_all) std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(want));
  const ll na = a.size(), nb = b.size();
  const ll tiles = tiles_of(na + nb, MP::tile_items);
  Buf<ll> da(a), db(b), out(na + nb), parts(tiles + 1), ts(tile_state_elems(tiles)), cnt(1);
  init_ts(ts.p, tiles);
  k_part<<<grid_of(tiles + 1, 256), 256>>>(da.p, db.p, na, nb, parts.p);
  k_setop<Op><<<unsigned(tiles), MP::block_threads>>>(da.p, db.p, out.p, na, nb, parts.p, ts.p, cnt.p);
  CK(cudaDeviceSynchronize());
  ASSERT_EQ(cnt.at(0), ll(want.size())) << "na=" << na << " nb=" << nb << " op=" << int(Op);
  EXPECT_EQ(out.get(want.size()), want) << "na=" << na << " nb=" << nb << " op=" << int(Op);
}

TEST(TemplatesGpu, SetOps) {
  REQUIRE_GPU();
  for (ll n : sizes_for(MP::tile_items)) {
    for (ll m : {ll(0), ll(1), n / 2 + 3, n}) {
      if (n > (1 << 20) && m != n) continue;
      auto a = sorted_unique(n, 3 * n + 10, unsigned(n));
      auto b = sorted_unique(m, 3 * n + 10, unsigned(m + 17));
      check_setop<SetOp::set_union>(a, b);
      check_setop<SetOp::set_intersect>(a, b);
      check_setop<SetOp::set_difference>(a, b);
      check_setop<SetOp::set_difference>(b, a);
      check_setop<SetOp::merge_all>(a, b);
    }
  }
  // Sorted inputs with duplicates (runs of up to 40 equal values spanning tiles).
  for (ll n : {ll(1), ll(37), ll(5000), ll(300000)}) {
    std::mt19937_64 rng(unsigned(n) + 5);
    std::vector<ll> a, b;
    for (ll v = 0; ll(a.size()) < n; ++v) a.insert(a.end(), ll(rng() % 40) * (rng() % 3 == 0), v);
    for (ll v = 0; ll(b.size()) < n / 2 + 1; v += 2) b.insert(b.end(), ll(rng() % 40) * (rng() % 2), v);
    check_setop<SetOp::set_union>(a, b);
    check_setop<SetOp::set_intersect>(a, b);
    check_setop<SetOp::set_difference>(a, b);
    check_setop<SetOp::set_difference>(b, a);
    check_setop<SetOp::merge_all>(a, b);
  }
  auto a = sorted_unique(5000, 6000, 1);
  check_setop<SetOp::set_intersect>(a, a);  // all match
  check_setop<SetOp::set_difference>(a, a);  // none left
  check_setop<SetOp::set_union>(a, a);
}

// ------------------------------------------------------------------ sort-merge join
struct JCmp { const int* l; const int* r; __device__ int operator()(ll i, ll j) const { return cmp3(l[i], r[j]); } };
struct JRes { const int* lp; const int* rp; __device__ bool operator()(ll i, ll j) const { return (lp[i] + rp[j]) % 3 == 0; } };
struct JEmit { ll* ol; ll* orr; __device__ void operator()(ll i, ll j, ll o) const { ol[o] = i; orr[o] = j; } };
__global__ void k_jcount(const int* l, const int* r, ll nl, ll nr, ll* lo, ll* off, void* ts, ll* total) {
  __shared__ JoinCountAgent<CP>::TempStorage temp;
  JoinCountAgent<CP>::run(temp, nl, nr, JCmp{l, r}, lo, off, ts, total);
}
__global__ void k_jexpand(ll total, ll nl, const ll* lo, const ll* off, ll* ol, ll* orr) {
  __shared__ JoinExpandAgent<EP>::TempStorage temp;
  JoinExpandAgent<EP>::run(temp, total, nl, lo, off, JEmit{ol, orr});
}
template <SelectMode M>
__global__ void k_jres(const int* lp, const int* rp, ll total, ll nl, const ll* lo, const ll* off, ll* ol, ll* orr, void* ts, ll* cnt) {
  __shared__ JoinExpandAgent<EP>::TempStorage temp;
  JoinExpandAgent<EP>::run_residual<M>(temp, total, nl, lo, off, JRes{lp, rp}, JEmit{ol, orr}, ts, cnt);
}
struct RowEmit { ll* o; __device__ void operator()(ll i, ll out) const { o[out] = i; } };
template <class Pred>
__global__ void k_filter(Pred pred, ll n, ll* o, void* ts, ll* cnt) {
  __shared__ SelectAgent<SP>::TempStorage temp;
  SelectAgent<SP>::run(temp, n, pred, RowEmit{o}, ts, cnt);
}

std::vector<int> sorted_keys(ll n, int dist, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<int> k(n);
  for (auto& x : k) {
    if (dist == 0) x = int(rng() % (4 * n + 1));                   // mostly unique
    else if (dist == 1) x = int(rng() % (n / 8 + 1));              // duplicates
    else x = (rng() % 2) ? 7 : int(rng() % (n / 4 + 10));          // heavy skew on key 7
  }
  std::sort(k.begin(), k.end());
  return k;
}

template <class Pred>
std::vector<ll> run_filter(Pred pred, ll n) {
  const ll tiles = tiles_of(n, SP::tile_items);
  Buf<ll> out(n), ts(tile_state_elems(tiles)), cnt(1);
  init_ts(ts.p, tiles);
  k_filter<<<unsigned(tiles), SP::block_threads>>>(pred, n, out.p, ts.p, cnt.p);
  cudaDeviceSynchronize();
  return out.get(cnt.at(0));
}

void check_join(ll nl, ll nr, int dist) {
  auto l = sorted_keys(nl, dist, unsigned(nl * 3 + dist));
  auto r = sorted_keys(nr, dist, unsigned(nr * 5 + dist + 1));
  std::vector<int> lp(nl), rp(nr);
  for (ll i = 0; i < nl; ++i) lp[i] = int(i % 5);
  for (ll j = 0; j < nr; ++j) rp[j] = int(j % 7);
  std::vector<ll> wl, wr, wl_res, wr_res, semi, anti, semi_res, anti_res;
  for (ll i = 0; i < nl; ++i) {
    auto range = std::equal_range(r.begin(), r.end(), l[i]);
    bool any_res = false;
    for (auto it = range.first; it != range.second; ++it) {
      ll j = it - r.begin();
      wl.push_back(i); wr.push_back(j);
      if ((lp[i] + rp[j]) % 3 == 0) { wl_res.push_back(i); wr_res.push_back(j); any_res = true; }
    }
    (range.first != range.second ? semi : anti).push_back(i);
    (any_res ? semi_res : anti_res).push_back(i);
  }
  const ll total_want = wl.size();
  if (total_want > (ll(1) << 26)) return;
  Buf<int> dl(l), dr(r), dlp(lp), drp(rp);
  const ll ctiles = tiles_of(nl, CP::tile_items);
  Buf<ll> ts(tile_state_elems(ctiles)), lo(nl), off(nl), total(1);
  init_ts(ts.p, ctiles);
  k_jcount<<<unsigned(ctiles), CP::block_threads>>>(dl.p, dr.p, nl, nr, lo.p, off.p, ts.p, total.p);
  CK(cudaDeviceSynchronize());
  const ll tot = total.at(0);
  ASSERT_EQ(tot, total_want) << nl << " " << nr << " " << dist;
  Buf<ll> ol(tot), orr(tot);
  k_jexpand<<<grid_of(tot, EP::tile_items), EP::block_threads>>>(tot, nl, lo.p, off.p, ol.p, orr.p);
  CK(cudaDeviceSynchronize());
  EXPECT_EQ(ol.get(tot), wl);
  EXPECT_EQ(orr.get(tot), wr);
  // Residual: count pass, then write pass.
  const ll etiles = tiles_of(tot, EP::tile_items);
  Buf<ll> ts2(tile_state_elems(etiles)), cnt(1);
  init_ts(ts2.p, etiles);
  k_jres<SelectMode::count_only><<<unsigned(etiles), EP::block_threads>>>(dlp.p, drp.p, tot, nl, lo.p, off.p, nullptr, nullptr, ts2.p, cnt.p);
  CK(cudaDeviceSynchronize());
  const ll rc = cnt.at(0);
  ASSERT_EQ(rc, ll(wl_res.size()));
  Buf<ll> rl(rc), rr(rc);
  init_ts(ts2.p, etiles);
  k_jres<SelectMode::staged><<<unsigned(etiles), EP::block_threads>>>(dlp.p, drp.p, tot, nl, lo.p, off.p, rl.p, rr.p, ts2.p, cnt.p);
  CK(cudaDeviceSynchronize());
  EXPECT_EQ(rl.get(rc), wl_res);
  EXPECT_EQ(rr.get(rc), wr_res);
  // Semi / anti, with and without residual.
  EXPECT_EQ(run_filter(JoinMatchPred<JCmp>{JCmp{dl.p, dr.p}, NoResidual{}, nr}, nl), semi);
  EXPECT_EQ(run_filter(JoinMatchPred<JCmp, NoResidual, true>{JCmp{dl.p, dr.p}, NoResidual{}, nr}, nl), anti);
  EXPECT_EQ(run_filter(JoinMatchPred<JCmp, JRes>{JCmp{dl.p, dr.p}, JRes{dlp.p, drp.p}, nr}, nl), semi_res);
  EXPECT_EQ(run_filter(JoinMatchPred<JCmp, JRes, true>{JCmp{dl.p, dr.p}, JRes{dlp.p, drp.p}, nr}, nl), anti_res);
}

TEST(TemplatesGpu, SortMergeJoin) {
  REQUIRE_GPU();
  for (int dist : {0, 1, 2}) {
    for (ll n : sizes_for(CP::tile_items)) {
      if (n > (1 << 20) && dist != 0) continue;
      check_join(n, n, dist);
      check_join(n, n / 3 + 1, dist);
      check_join(n / 2 + 1, n, dist);
    }
  }
  check_join(3, 200000, 2);  // one key with ~100k matches per left row: load balancing
}

// ------------------------------------------------------------------ reduce / unique
struct RSame { const int* k; __device__ bool operator()(ll i, ll j) const { return k[i] == k[j]; } };
struct RAgg {
  const int* v;
  struct State { ll sum; ll count; ll min; ll max; };
  __device__ State init() const { return {0, 0, LLONG_MAX, LLONG_MIN}; }
  __device__ void accumulate(State& s, ll r) const { s.sum += v[r]; s.count += 1; s.min = min(s.min, ll(v[r])); s.max = max(s.max, ll(v[r])); }
  __device__ void merge(State& a, const State& b) const { a.sum += b.sum; a.count += b.count; a.min = min(a.min, b.min); a.max = max(a.max, b.max); }
};
struct REmit { const int* k; ll* o; __device__ void operator()(ll g, ll first, const RAgg::State& s) const {
  o[5 * g] = k[first]; o[5 * g + 1] = s.sum; o[5 * g + 2] = s.count; o[5 * g + 3] = s.min; o[5 * g + 4] = s.max; } };
// RAgg reading v through a pointer the stage hook may move.
struct PAgg {
  const int* const* v;
  using State = RAgg::State;
  __device__ State init() const { return RAgg{*v}.init(); }
  __device__ void accumulate(State& s, ll r) const { RAgg{*v}.accumulate(s, r); }
  __device__ void merge(State& a, const State& b) const { RAgg{*v}.merge(a, b); }
};
// Staged: the hooks read the tile's rows from shared memory (stage_rows), which is poisoned
// first, so a hook reading a row outside [lo, hi) reads a wrong value. Release: the release
// hook gives the keys' copy back (tiles of many groups then store them in windows from it).
template <bool Staged, bool Release = false>
__global__ void k_reduce(const int* k, const int* v, ll* o, ll n, void* ts, void* carry, void* tail, ll* meta, ll* cnt) {
  using A = ReduceAgent<RP>;
  __shared__ A::TempStorageT<RAgg::State> temp;
  __shared__ __align__(16) int sk[stage_elems<int>(A::max_stage_rows)];
  __shared__ __align__(16) int sv[stage_elems<int>(A::max_stage_rows)];
  for (int i = threadIdx.x; i < int(stage_elems<int>(A::max_stage_rows)); i += RP::block_threads) sk[i] = sv[i] = 0x5a5a5a5a;
  __syncthreads();
  const int* kk = k;
  const int* vv = v;
  A::run(temp, n, [&](ll i, ll j) { return kk[i] == kk[j]; }, PAgg{&vv},
         [&](ll g, ll first, const RAgg::State& s) { REmit{kk, o}(g, first, s); }, ts, carry, tail, meta, cnt,
         [&](ll lo, ll hi) {
           if (!Staged) return false;
           kk = stage_rows<RP::block_threads>(sk, k, lo, hi);
           vv = stage_rows<RP::block_threads>(sv, v, lo, hi);
           return true;
         },
         [&](void*& mem) {
           if (!Release) return 0;
           kk = k;
           mem = sk;
           return int(sizeof(sk));
         });
}
__global__ void k_fixup(const int* k, const int* v, ll* o, ll tiles, const void* carry, const void* tail, const ll* meta) {
  ReduceFixupAgent::run(tiles, RAgg{v}, REmit{k, o}, carry, tail, meta);
}
struct UEmit { const int* k; int* o; __device__ void operator()(ll i, ll out) const { o[out] = k[i]; } };
__global__ void k_unique(const int* k, int* o, ll n, void* ts, ll* cnt) {
  __shared__ UniqueAgent<SP>::TempStorage temp;
  UniqueAgent<SP>::run(temp, n, UniquePred<RSame>{RSame{k}}, UEmit{k, o}, ts, cnt);
}

TEST(TemplatesGpu, ReduceAndUnique) {
  REQUIRE_GPU();
  for (int dist : {0, 1, 2, 3, 4}) {
    for (ll n : sizes_for(RP::tile_items)) {
      // dist 4: groups of exactly three tiles, so groups that span tiles end exactly at a
      // tile boundary (the next tile starts with a head and has no rows before it).
      std::vector<int> k = dist == 3 ? std::vector<int>(n, 42) : dist == 4 ? std::vector<int>(n) : sorted_keys(n, dist, unsigned(n + dist));
      if (dist == 4) for (ll i = 0; i < n; ++i) k[i] = int(i / (3 * RP::tile_items));
      std::vector<int> v(n);
      std::mt19937 rng(n);
      for (auto& x : v) x = int(rng() % 2001) - 1000;
      std::vector<ll> want;
      for (ll i = 0; i < n;) {
        ll j = i, sum = 0, mn = LLONG_MAX, mx = LLONG_MIN;
        for (; j < n && k[j] == k[i]; ++j) { sum += v[j]; mn = std::min<ll>(mn, v[j]); mx = std::max<ll>(mx, v[j]); }
        want.insert(want.end(), {ll(k[i]), sum, j - i, mn, mx});
        i = j;
      }
      const ll groups = want.size() / 5;
      const ll tiles = tiles_of(n, RP::tile_items);
      Buf<int> dk(k), dv(v);
      Buf<ll> out(5 * std::max<ll>(n, 1)), ts(tile_state_elems(tiles)), meta(3 * tiles), cnt(1);
      Buf<RAgg::State> carry(tiles), tail(tiles);
      for (int mode : {0, 1, 2}) {  // in place, staged, staged with the keys' copy released
        const bool staged = mode > 0;
        init_ts(ts.p, tiles);
        // Scratch is not zeroed in real use (pool memory): poison it.
        CK(cudaMemset(carry.p, 0x5a, sizeof(RAgg::State) * tiles));
        CK(cudaMemset(tail.p, 0x5a, sizeof(RAgg::State) * tiles));
        CK(cudaMemset(out.p, 0x5a, sizeof(ll) * 5 * std::max<ll>(n, 1)));
        if (mode == 2)
          k_reduce<true, true><<<unsigned(tiles), RP::block_threads>>>(dk.p, dv.p, out.p, n, ts.p, carry.p, tail.p, meta.p, cnt.p);
        else if (staged)
          k_reduce<true><<<unsigned(tiles), RP::block_threads>>>(dk.p, dv.p, out.p, n, ts.p, carry.p, tail.p, meta.p, cnt.p);
        else
          k_reduce<false><<<unsigned(tiles), RP::block_threads>>>(dk.p, dv.p, out.p, n, ts.p, carry.p, tail.p, meta.p, cnt.p);
        k_fixup<<<grid_of(tiles, 256), 256>>>(dk.p, dv.p, out.p, tiles, carry.p, tail.p, meta.p);
        CK(cudaDeviceSynchronize());
        ASSERT_EQ(cnt.at(0), groups) << "n=" << n << " dist=" << dist << " mode=" << mode;
        EXPECT_EQ(out.get(5 * groups), want) << "n=" << n << " dist=" << dist << " mode=" << mode;
      }

      std::vector<int> uniq(k.begin(), k.end());
      uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
      const ll st = tiles_of(n, SP::tile_items);
      Buf<ll> ts2(tile_state_elems(st)), cnt2(1);
      Buf<int> uout(n);
      init_ts(ts2.p, st);
      k_unique<<<unsigned(st), SP::block_threads>>>(dk.p, uout.p, n, ts2.p, cnt2.p);
      CK(cudaDeviceSynchronize());
      ASSERT_EQ(cnt2.at(0), ll(uniq.size()));
      EXPECT_EQ(uout.get(uniq.size()), uniq);
    }
  }
}

// ------------------------------------------------------------------ hash join
// The launch sequence of hash_join.cuh: hashed keys and row ids, a radix partition on the low
// `bits` bits (CUB, as the runtime's partition step), the partitions' bounds, then the join over
// probe tiles. JT: a 256-slot table (128-row chunks) so that small inputs already need chunked
// builds; JD: the default 8192-slot table in dynamic shared memory.
using JT = HashJoinAgent<JP, unsigned, 256>;
using JD = HashJoinAgent<JP, unsigned>;
__global__ void k_hash_keys(const int* k, ll n, unsigned* h, unsigned* rows) {
  const ll i = static_cast<ll>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) { h[i] = hash_key(static_cast<unsigned>(k[i])); rows[i] = static_cast<unsigned>(i); }
}
__global__ void k_bounds_search(ll n, const unsigned* keys, ll bits, ll* bounds) {
  partition_bounds_search(static_cast<ll>(blockIdx.x) * blockDim.x + threadIdx.x, n, keys, bits, bounds);
}
// Positions i, j are in partition order: the partitioned row ids give the original rows.
struct HEmit { ll* o; const unsigned* lrows; const unsigned* rrows;
  __device__ void operator()(ll i, ll j, ll out) const { o[out] = (ll(lrows[i]) << 32) | rrows[j]; } };
// Matches whose left and right row ids have the same parity only (a residual).
struct HParity { const unsigned* lrows; const unsigned* rrows;
  __device__ bool operator()(ll i, ll j) const { return ((lrows[i] ^ rrows[j]) & 1) == 0; } };
struct NoRes { const unsigned* lrows; const unsigned* rrows;
  __device__ bool operator()(ll, ll) const { return true; } };
template <class A, class Res, bool Global>
__global__ void k_hj(ll bits, ll nl, const unsigned* lk, const unsigned* lr, const ll* lb, const unsigned* rk,
                     const unsigned* rr, const ll* rb, GlobalJoinTable g, ll* o, ll capacity,
                     unsigned long long* header) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto& temp = *reinterpret_cast<typename A::TempStorage*>(smem);
  A::template run<Global>(temp, bits, nl, lk, lb, rk, rb, g, Res{lr, rr}, HEmit{o, lr, rr}, capacity, header);
}
// The global table's build (hash_lowering.cpp's hash_global_build): one thread per build row.
template <class KeyT>
__global__ void k_global_build(GlobalJoinTable g, const KeyT* h, ll n) {
  const ll i = static_cast<ll>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) global_join_insert(g, h[i], static_cast<unsigned>(i));
}
// A global table of the n build keys h (row order), in device memory owned by the caller.
template <class KeyT>
struct GlobalTableBufs {
  std::unique_ptr<Buf<unsigned long long>> slots;
  std::unique_ptr<Buf<unsigned>> heads, next;
  GlobalJoinTable g{nullptr, nullptr, nullptr, 0};
};
template <class KeyT>
void build_global_table(const KeyT* h, ll n, GlobalTableBufs<KeyT>& t) {
  {
    auto& slots = t.slots;
    auto& heads = t.heads;
    auto& next = t.next;
    auto& g = t.g;
    ll cap = 2;
    while (cap < 2 * n) cap *= 2;
    slots = std::make_unique<Buf<unsigned long long>>(cap + 1);
    heads = std::make_unique<Buf<unsigned>>(cap + 1);
    next = std::make_unique<Buf<unsigned>>(std::max<ll>(n, 1));
    CK(cudaMemset(slots->p, 0, (cap + 1) * 8));
    CK(cudaMemset(heads->p, 0, (cap + 1) * 4));
    g = GlobalJoinTable{slots->p, heads->p, next->p, cap};
    if (n > 0) k_global_build<KeyT><<<unsigned((n + 255) / 256), 256>>>(g, h, n);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
  }
}

struct Partitioned { std::unique_ptr<Buf<unsigned>> keys, rows; std::unique_ptr<Buf<ll>> bounds; };
void partition(const Buf<int>& k, ll n, ll bits, Partitioned& p) {
  Buf<unsigned> h(std::max<ll>(n, 1)), rows(std::max<ll>(n, 1));
  p.keys = std::make_unique<Buf<unsigned>>(std::max<ll>(n, 1));
  p.rows = std::make_unique<Buf<unsigned>>(std::max<ll>(n, 1));
  p.bounds = std::make_unique<Buf<ll>>((ll(1) << bits) + 1);
  CK(cudaMemset(p.bounds->p, 0, ((ll(1) << bits) + 1) * sizeof(ll)));
  if (n == 0) return;
  k_hash_keys<<<unsigned((n + 255) / 256), 256>>>(k.p, n, h.p, rows.p);
  CK(cudaDeviceSynchronize());
  // The radix partition on the host: a stable sort by the low `bits` bits (the runtime's
  // partition step is CUB's radix sort on the same bits, tested with the operators).
  std::vector<unsigned> hk = h.get(n), order(static_cast<size_t>(n));
  for (ll i = 0; i < n; ++i) order[static_cast<size_t>(i)] = static_cast<unsigned>(i);
  const unsigned pm = static_cast<unsigned>((1ull << bits) - 1);
  std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) { return (hk[a] & pm) < (hk[b] & pm); });
  std::vector<unsigned> sk(static_cast<size_t>(n));
  for (size_t i = 0; i < order.size(); ++i) sk[i] = hk[order[i]];
  CK(cudaMemcpy(p.keys->p, sk.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(p.rows->p, order.data(), n * 4, cudaMemcpyHostToDevice));
  const ll nb = (ll(1) << bits) + 1;
  k_bounds_search<<<unsigned((nb + 255) / 256), 256>>>(n, p.keys->p, bits, p.bounds->p);
  CK(cudaDeviceSynchronize());
  // The bounds on the host: partition q starts at the first row whose partition is q or later.
  std::vector<ll> want(static_cast<size_t>(nb));
  for (ll q = 0; q < nb; ++q)
    want[static_cast<size_t>(q)] = std::partition_point(sk.begin(), sk.end(), [&](unsigned h) {
                                     return ll(h & pm) < q;
                                   }) - sk.begin();
  EXPECT_EQ(p.bounds->get(nb), want) << "n=" << n << " bits=" << bits;
}

// The matching (left row << 32 | right row) pairs of an equi-join, sorted (the host reference);
// false when there are more than `limit` (the caller skips such a case).
bool join_pairs(const std::vector<int>& l, const std::vector<int>& r, size_t limit, std::vector<ll>& want) {
  std::vector<std::pair<int, ll>> rs;
  for (ll j = 0; j < ll(r.size()); ++j) rs.push_back({r[j], j});
  std::sort(rs.begin(), rs.end());
  for (ll i = 0; i < ll(l.size()); ++i) {
    auto it = std::lower_bound(rs.begin(), rs.end(), std::make_pair(l[i], ll(-1)));
    for (; it != rs.end() && it->first == l[i]; ++it) want.push_back((i << 32) | it->second);
  }
  if (want.size() > limit) return false;
  std::sort(want.begin(), want.end());
  return true;
}

template <class A, class Res, bool Global = false>
void run_hash_join(const Partitioned& pl, ll nl, const Partitioned& pr, ll bits, const std::vector<ll>& want,
                   const std::string& what, GlobalJoinTable g = GlobalJoinTable{nullptr, nullptr, nullptr, 0}) {
  const ll tiles = tiles_of(nl, JP::tile_items);
  // First with a short capacity (the estimate of a foreign-key join: the probe rows, less one),
  // then with the count the first run claimed, as the executor's regrow does.
  ll capacity = std::max<ll>(1, nl - 1);
  CK(cudaFuncSetAttribute(k_hj<A, Res, Global>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          int(sizeof(typename A::TempStorage))));
  for (int attempt = 0; attempt < 2; ++attempt) {
    Buf<ll> out(capacity);
    Buf<unsigned long long> header(1);
    CK(cudaMemset(header.p, 0, 8));
    if (nl > 0)
      k_hj<A, Res, Global><<<unsigned(tiles), JP::block_threads, sizeof(typename A::TempStorage)>>>(
          bits, nl, pl.keys->p, pl.rows->p, pl.bounds->p, pr.keys->p, pr.rows->p, pr.bounds->p, g, out.p,
          capacity, header.p);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const ll claimed = ll(header.at(0));
    ASSERT_EQ(claimed, ll(want.size())) << what;
    if (claimed > capacity) {
      ASSERT_EQ(attempt, 0) << what;
      capacity = claimed;
      continue;
    }
    auto got = out.get(claimed);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << what;
    break;
  }
}

void check_hash_join(ll nl, ll nr, int dist, ll bits) {
  auto l = sorted_keys(nl, dist, unsigned(nl + 11 * dist));
  auto r = sorted_keys(nr, dist, unsigned(nr + 13 * dist + 1));
  std::mt19937 rng(unsigned(nl + nr));
  std::shuffle(l.begin(), l.end(), rng);
  std::shuffle(r.begin(), r.end(), rng);
  std::vector<ll> want;
  if (!join_pairs(l, r, size_t(1) << 26, want)) return;
  Buf<int> dl(l), dr(r);
  Partitioned pl, pr;
  partition(dl, nl, bits, pl);
  partition(dr, nr, bits, pr);
  const std::string what = std::to_string(nl) + " " + std::to_string(nr) + " dist " + std::to_string(dist) +
                           " bits " + std::to_string(bits);
  run_hash_join<JT, NoRes>(pl, nl, pr, bits, want, what + " small table");
  run_hash_join<JD, NoRes>(pl, nl, pr, bits, want, what + " default table");
  std::vector<ll> even;
  for (ll x : want)
    if ((((x >> 32) ^ x) & 1) == 0) even.push_back(x);
  run_hash_join<JT, HParity>(pl, nl, pr, bits, even, what + " residual");
  if (bits == 0) {
    // The global table (GlobalJoinTable: 0 bits, built in device memory from the row-order keys;
    // chains for duplicate build keys, key 7's heavy one included).
    GlobalTableBufs<unsigned> gt;
    build_global_table(pr.keys->p, nr, gt);
    run_hash_join<JD, NoRes, true>(pl, nl, pr, 0, want, what + " global table", gt.g);
    run_hash_join<JD, HParity, true>(pl, nl, pr, 0, even, what + " global table, residual", gt.g);
  }
  // Stable partitioning: within every partition, row ids increase; bounds cover the rows.
  if (nl == 0) return;
  auto rows = pl.rows->get(nl);
  auto bounds = pl.bounds->get((ll(1) << bits) + 1);
  ASSERT_EQ(bounds.front(), 0);
  ASSERT_EQ(bounds.back(), nl);
  for (ll p = 0; p < (ll(1) << bits); ++p)
    for (ll i = bounds[p] + 1; i < bounds[p + 1]; ++i) ASSERT_LT(rows[i - 1], rows[i]) << what;
}

__global__ void k_hash_roundtrip(const unsigned long long* x, ll n, int* bad) {
  const ll i = static_cast<ll>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned w = static_cast<unsigned>(x[i]);
  if (hash_key_inverse(hash_key(w)) != w || hash_key_inverse(hash_key(x[i])) != x[i]) atomicAdd(bad, 1);
}
// hash_key is a bijection and hash_key_inverse its inverse (the join recovers keys from h).
TEST(TemplatesGpu, HashKeyInverse) {
  REQUIRE_GPU();
  std::mt19937_64 rng(5);
  std::vector<unsigned long long> x = {0, 1, 2, 0xffffffffull, 0x80000000ull, ~0ull, 1ull << 63};
  while (x.size() < 100000) x.push_back(rng());
  Buf<unsigned long long> dx(x);
  Buf<int> bad(1);
  CK(cudaMemset(bad.p, 0, 4));
  k_hash_roundtrip<<<unsigned((x.size() + 255) / 256), 256>>>(dx.p, ll(x.size()), bad.p);
  CK(cudaDeviceSynchronize());
  EXPECT_EQ(bad.at(0), 0);
}

TEST(TemplatesGpu, HashJoin) {
  REQUIRE_GPU();
  for (int dist : {0, 1, 2}) {
    for (ll n : sizes_for(JP::tile_items)) {
      if (n > (1 << 20) && dist != 0) continue;
      for (ll bits : {0, 3, 10}) {
        if (n > (1 << 16) && bits < 10) continue;  // chunked build over huge partitions is slow, not wrong
        check_hash_join(n, n, dist, bits);
        check_hash_join(n / 3 + 1, n, dist, bits);
        check_hash_join(n, n / 5, dist, bits);
      }
    }
  }
  // Empty sides.
  check_hash_join(0, 1000, 0, 3);
  check_hash_join(1000, 0, 0, 3);
}

// ------------------------------------------------------------------ paged lists
// Paged output against its dense meaning. Each block b writes rows[b] rows (value
// b << 32 | index) in rounds where thread t contributes (t * 7 + round) % 5 rows, so rounds
// span page boundaries in every way: a block exactly filling pages, one row over, empty blocks,
// thousands of blocks claiming pages at once, and a capacity too small (the needed count must be
// exact and nothing written beyond the capacity).
constexpr int kPR = 64;  // small pages: many boundaries
constexpr int kPT = 128;
using PW = BlockPageWriter<kPT, kPR>;
__global__ void k_paged_write(const ll* rows, PagedOut out, ll* col) {
  __shared__ PW::TempStorage t;
  PW::init(t);
  const ll b = blockIdx.x, want = rows[b];
  ll done = 0;
  for (int round = 0; done < want; ++round) {
    // The block's rows this round: thread shares, clipped to what is left, in thread order.
    const ll share = (threadIdx.x * 7 + round) % 5;
    __shared__ ll before[kPT + 1];
    before[threadIdx.x + 1] = share;
    __syncthreads();
    if (threadIdx.x == 0) {
      before[0] = 0;
      for (int k = 1; k <= kPT; ++k) before[k] += before[k - 1];
    }
    __syncthreads();
    const ll lo = min64(done + before[threadIdx.x], want), hi = min64(done + before[threadIdx.x + 1], want);
    const ll mine = hi - lo;
    const ll x = PW::reserve(t, out, mine);
    for (ll m = 0; m < mine; ++m) {
      const ll h = PW::handle(t, out, x + m);
      if (h >= 0) col[h] = (b << 32) | (lo + m);
    }
    done = min64(done + before[kPT], want);
    __syncthreads();
  }
  PW::finish(t, out, b);
}
// The same with one chain per warp (WarpPageWriter, as the hash join uses it): chain c = block * 4
// + warp writes rows[c] rows, lane l contributing (l * 7 + round) % 5 per round.
__global__ void k_paged_write_warp(const ll* rows, PagedOut out, ll* col) {
  const ll chain = blockIdx.x * ll(kPT / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  const ll want = rows[chain];
  WarpPageWriter<kPR> w;
  ll done = 0;
  for (int round = 0; done < want; ++round) {
    const ll share = (lane * 7 + round) % 5;
    ll incl = share;
    for (int d = 1; d < 32; d <<= 1) {
      const ll v = __shfl_up_sync(0xffffffffu, incl, d);
      if (lane >= d) incl += v;
    }
    const ll all = __shfl_sync(0xffffffffu, incl, 31);
    const ll lo = min64(done + incl - share, want), hi = min64(done + incl, want);
    const ll mine = hi - lo;
    const ll x = w.reserve(out, mine);
    for (ll m = 0; m < mine; ++m) {
      const ll h = w.handle(out, x + m);
      if (h >= 0) col[h] = (chain << 32) | (lo + m);
    }
    done = min64(done + all, want);
  }
  w.finish(out, chain);
}
__global__ void k_paged_count(const int* page_rows, ll slots, ll* kept) {
  const ll h = blockIdx.x * ll(blockDim.x) + threadIdx.x;
  if (h < slots && paged_keep<kPR>(page_rows, h)) atomicAdd(reinterpret_cast<unsigned long long*>(kept), 1ull);
}

// Runs k_paged_write with `capacity` pages; checks the list when it fits. Returns header[0].
ll check_paged(const std::vector<ll>& rows, ll capacity, bool warps = false) {
  const ll blocks = ll(rows.size());
  ll total = 0, need = 0;
  for (ll r : rows) {
    total += r;
    need += (r + kPR - 1) / kPR;
  }
  Buf<ll> drows(rows), header(4), col(capacity * kPR);
  Buf<int> page_rows(capacity), page_next(capacity), heads(blocks);
  PagedOut out{page_rows.p, page_next.p, heads.p, header.p, capacity};
  if (warps)
    k_paged_write_warp<<<unsigned(blocks / (kPT / 32)), kPT>>>(drows.p, out, col.p);
  else
    k_paged_write<<<unsigned(blocks), kPT>>>(drows.p, out, col.p);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const ll claimed = header.at(0);
  EXPECT_EQ(claimed, need) << "pages claimed";
  EXPECT_EQ(header.at(1), total) << "rows written";
  if (claimed > capacity) return claimed;
  auto pr = page_rows.get(capacity), pn = page_next.get(capacity);
  auto hd = heads.get(blocks);
  auto c = col.get(capacity * kPR);
  std::vector<int> seen(capacity, 0);
  for (ll b = 0; b < blocks; ++b) {
    ll next_index = 0;
    for (int p = hd[b]; p >= 0; p = pn[p]) {
      EXPECT_LT(p, claimed);
      EXPECT_EQ(seen[p]++, 0) << "page " << p << " in two chains";
      EXPECT_GT(pr[p], 0);
      EXPECT_LE(pr[p], kPR);
      if (pn[p] >= 0) EXPECT_EQ(pr[p], kPR) << "only the last page of a chain is partial";
      for (int s = 0; s < pr[p]; ++s, ++next_index)
        if (c[p * kPR + s] != ((b << 32) | next_index)) {
          ADD_FAILURE() << "block " << b << " page " << p << " slot " << s;
          return claimed;
        }
    }
    EXPECT_EQ(next_index, rows[b]) << "block " << b;
  }
  Buf<ll> kept(1);
  const ll slots = claimed * kPR;
  if (slots) k_paged_count<<<unsigned((slots + 255) / 256), 256>>>(page_rows.p, slots, kept.p);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(kept.at(0), total) << "rows kept by paged_keep";
  return claimed;
}

TEST(TemplatesGpu, PagedWriterPageBoundaries) {
  REQUIRE_GPU();
  // Per-block row counts at and around page boundaries.
  std::vector<ll> edge = {0, 1, kPR - 1, kPR, kPR + 1, 2 * kPR, 2 * kPR + 1, 0, 5 * kPR - 1, 1000};
  ll need = 0;
  for (ll r : edge) need += (r + kPR - 1) / kPR;
  EXPECT_EQ(check_paged(edge, need), need);          // exactly full
  EXPECT_EQ(check_paged(edge, need + 7), need);      // room to spare
  EXPECT_EQ(check_paged(edge, need - 1), need);      // one page short: the exact need comes back
  EXPECT_EQ(check_paged(edge, 1), need);
  EXPECT_EQ(check_paged({0, 0, 0}, 1), 0);           // nothing written
  // Thousands of blocks claiming pages at once.
  std::vector<ll> many(4000);
  std::mt19937 rng(7);
  need = 0;
  for (auto& r : many) {
    r = std::uniform_int_distribution<ll>(0, 5 * kPR)(rng);
    need += (r + kPR - 1) / kPR;
  }
  EXPECT_EQ(check_paged(many, need), need);
  EXPECT_EQ(check_paged(many, need / 2), need);
  // One chain per warp (4 per block).
  EXPECT_EQ(check_paged(many, need, true), need);
  EXPECT_EQ(check_paged(many, need - 1, true), need);
  std::vector<ll> edge8 = {0, 1, kPR - 1, kPR, kPR + 1, 2 * kPR, 0, 3 * kPR + 7};
  ll need8 = 0;
  for (ll r : edge8) need8 += (r + kPR - 1) / kPR;
  EXPECT_EQ(check_paged(edge8, need8, true), need8);
}

// The hash join writing pages in one pass: the same matches as the dense write.
__global__ void k_hj_paged(ll bits, ll nl, const unsigned* lk, const unsigned* lr, const ll* lb, const unsigned* rk,
                           const unsigned* rr, const ll* rb, PagedOut out, ll* o) {
  __shared__ JT::TempStorage temp;
  JT::run_paged<kPR, false>(temp, out, bits, nl, lk, lb, rk, rb, GlobalJoinTable{nullptr, nullptr, nullptr, 0},
                     NoResidual{}, HEmit{o, lr, rr});
}

void check_hash_join_paged(ll nl, ll nr, int dist, ll bits) {
  auto l = sorted_keys(nl, dist, unsigned(nl + 5 * dist));
  auto r = sorted_keys(nr, dist, unsigned(nr + 3 * dist + 1));
  std::mt19937 rng(unsigned(nl + 2 * nr));
  std::shuffle(l.begin(), l.end(), rng);
  std::shuffle(r.begin(), r.end(), rng);
  std::vector<ll> want;
  if (!join_pairs(l, r, size_t(1) << 24, want)) return;
  Buf<int> dl(l), dr(r);
  Partitioned pl, pr;
  partition(dl, nl, bits, pl);
  partition(dr, nr, bits, pr);
  const ll tiles = tiles_of(nl, JP::tile_items);
  // First with a deliberately short capacity (one page), then with the count it reports.
  ll capacity = 1;
  for (int attempt = 0; attempt < 2; ++attempt) {
    Buf<ll> header(4), o(capacity * kPR);
    CK(cudaMemset(header.p, 0, 4 * sizeof(ll)));
    Buf<int> page_rows(capacity), page_next(capacity), heads(tiles * (JP::block_threads / 32));
    PagedOut out{page_rows.p, page_next.p, heads.p, header.p, capacity};
    if (nl > 0)
      k_hj_paged<<<unsigned(tiles), JP::block_threads>>>(bits, nl, pl.keys->p, pl.rows->p, pl.bounds->p, pr.keys->p,
                                                         pr.rows->p, pr.bounds->p, out, o.p);
    CK(cudaDeviceSynchronize());
    const ll claimed = header.at(0);
    ASSERT_EQ(header.at(1), ll(want.size())) << nl << " " << nr << " " << dist << " bits " << bits;
    if (claimed > capacity) {
      ASSERT_EQ(attempt, 0) << "the rerun must fit";
      capacity = claimed;
      continue;
    }
    auto rows = page_rows.get(claimed);
    auto all = o.get(claimed * kPR);
    std::vector<ll> got;
    for (ll p = 0; p < claimed; ++p)
      for (int s = 0; s < rows[p]; ++s) got.push_back(all[p * kPR + s]);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << nl << " " << nr << " " << dist << " bits " << bits;
    break;
  }
}

TEST(TemplatesGpu, HashJoinPaged) {
  REQUIRE_GPU();
  for (int dist : {0, 1, 2}) {
    for (ll n : sizes_for(JP::tile_items)) {
      if (n > (1 << 20) && dist != 0) continue;
      for (ll bits : {0, 3, 10}) {
        if (n > (1 << 16) && bits < 10) continue;
        check_hash_join_paged(n, n, dist, bits);
        check_hash_join_paged(n / 3 + 1, n, dist, bits);
      }
    }
  }
}


// ------------------------------------------------------------------ block primitives (block.cuh)
// 2x2 integer matrices mod 1e9+7 under multiplication: associative, not commutative, 16 bytes,
// so a scan that combined out of order or moved the wrong words would show.
struct Mat { ll a, b, c, d; };
constexpr ll kMod = 1000000007;
__host__ __device__ Mat mat_mul(const Mat& x, const Mat& y) {
  return Mat{(x.a * y.a + x.b * y.c) % kMod, (x.a * y.b + x.b * y.d) % kMod,
             (x.c * y.a + x.d * y.c) % kMod, (x.c * y.b + x.d * y.d) % kMod};
}
struct MatMul { __device__ Mat operator()(const Mat& x, const Mat& y) const { return mat_mul(x, y); } };
struct MinMaxCount { int mn, mx; ll count; };
struct MinMaxOp {
  __device__ MinMaxCount operator()(const MinMaxCount& x, const MinMaxCount& y) const {
    return MinMaxCount{x.mn < y.mn ? x.mn : y.mn, x.mx > y.mx ? x.mx : y.mx, x.count + y.count};
  }
};

template <int T>
__global__ void k_block_scan(const Mat* in, Mat* out, Mat* agg, const ll* cnt, ll* cnt_excl, ll* cnt_agg) {
  __shared__ typename BlockScan<Mat, T>::TempStorage tm;
  __shared__ typename BlockScan<ll, T>::TempStorage tl;
  const ll i = static_cast<ll>(blockIdx.x) * T + threadIdx.x;
  Mat r, a;
  BlockScan<Mat, T>(tm).ExclusiveScan(in[i], r, Mat{1, 0, 0, 1}, MatMul{}, a);
  out[i] = r;
  if (threadIdx.x == 0) agg[blockIdx.x] = a;
  // Blocked arrangement, 3 items per thread, straight after the first scan (same storage reuse rule).
  ll items[3], excl[3], total;
  for (int k = 0; k < 3; ++k) items[k] = cnt[(static_cast<ll>(blockIdx.x) * T + threadIdx.x) * 3 + k];
  BlockScan<ll, T>(tl).ExclusiveSum(items, excl, total);
  for (int k = 0; k < 3; ++k) cnt_excl[(static_cast<ll>(blockIdx.x) * T + threadIdx.x) * 3 + k] = excl[k];
  if (threadIdx.x == T - 1) cnt_agg[blockIdx.x] = total;
}
template <int T>
__global__ void k_block_reduce(const int* in, MinMaxCount* out) {
  __shared__ typename BlockReduce<MinMaxCount, T>::TempStorage t;
  const int v = in[static_cast<ll>(blockIdx.x) * T + threadIdx.x];
  const MinMaxCount r = BlockReduce<MinMaxCount, T>(t).Reduce(MinMaxCount{v, v, 1}, MinMaxOp{});
  // The storage is reused straight away.
  const MinMaxCount r2 = BlockReduce<MinMaxCount, T>(t).Reduce(MinMaxCount{-v, -v, 2}, MinMaxOp{});
  if (threadIdx.x == 0) {
    out[2 * blockIdx.x] = r;
    out[2 * blockIdx.x + 1] = r2;
  }
}
template <int T, int N>
__global__ void k_block_sort(unsigned* keys, int* vals, int begin_bit, int end_bit) {
  __shared__ typename BlockRadixSort<unsigned, T, N, int>::TempStorage t;
  unsigned k[N];
  int v[N];
  const ll base = static_cast<ll>(blockIdx.x) * T * N + threadIdx.x * N;
  for (int j = 0; j < N; ++j) { k[j] = keys[base + j]; v[j] = vals[base + j]; }
  BlockRadixSort<unsigned, T, N, int>(t).Sort(k, v, begin_bit, end_bit);
  for (int j = 0; j < N; ++j) { keys[base + j] = k[j]; vals[base + j] = v[j]; }
}
__global__ void k_tile_prefix(const ll* agg, void* ts, ll* excl, ll* incl) {
  __shared__ TilePrefix::TempStorage t;
  TileState s = make_tile_state(ts);
  ll inclusive;
  const ll e = TilePrefix::run(t, s, agg[blockIdx.x], inclusive);
  if (threadIdx.x == 5) { excl[blockIdx.x] = e; incl[blockIdx.x] = inclusive; }
}

template <int T>
void check_block_scan(int blocks, std::mt19937_64& rng) {
  std::vector<Mat> in(static_cast<size_t>(blocks) * T);
  for (auto& m : in) m = Mat{ll(rng() % 5), ll(rng() % 5), ll(rng() % 5), ll(rng() % 5)};
  std::vector<ll> cnt(in.size() * 3);
  for (auto& c : cnt) c = static_cast<ll>(rng() % 1000);
  Buf<Mat> din(in), dout(in.size()), dagg(blocks);
  Buf<ll> dcnt(cnt), dexcl(cnt.size()), dtot(blocks);
  k_block_scan<T><<<blocks, T>>>(din.p, dout.p, dagg.p, dcnt.p, dexcl.p, dtot.p);
  CK(cudaDeviceSynchronize());
  auto out = dout.get(in.size());
  auto agg = dagg.get(blocks);
  auto excl = dexcl.get(cnt.size());
  auto tot = dtot.get(blocks);
  for (int b = 0; b < blocks; ++b) {
    Mat run{1, 0, 0, 1};
    ll crun = 0;
    for (int t = 0; t < T; ++t) {
      const size_t i = static_cast<size_t>(b) * T + t;
      ASSERT_EQ(std::tie(out[i].a, out[i].b, out[i].c, out[i].d), std::tie(run.a, run.b, run.c, run.d))
          << "block " << b << " thread " << t;
      run = mat_mul(run, in[i]);
      for (int k = 0; k < 3; ++k) {
        ASSERT_EQ(excl[i * 3 + k], crun) << "block " << b << " thread " << t << " item " << k;
        crun += cnt[i * 3 + k];
      }
    }
    EXPECT_EQ(std::tie(agg[b].a, agg[b].b, agg[b].c, agg[b].d), std::tie(run.a, run.b, run.c, run.d));
    EXPECT_EQ(tot[b], crun);
  }
}

TEST(TemplatesGpu, BlockScanNonCommutative) {
  REQUIRE_GPU();
  std::mt19937_64 rng(7);
  check_block_scan<32>(3, rng);
  check_block_scan<128>(5, rng);
  check_block_scan<256>(4, rng);
  check_block_scan<512>(2, rng);
}

TEST(TemplatesGpu, BlockReduce) {
  REQUIRE_GPU();
  std::mt19937_64 rng(8);
  constexpr int T = 192;
  const int blocks = 7;
  std::vector<int> in(static_cast<size_t>(blocks) * T);
  for (auto& v : in) v = static_cast<int>(rng() % 2000001) - 1000000;
  Buf<int> din(in);
  Buf<MinMaxCount> dout(2 * blocks);
  k_block_reduce<T><<<blocks, T>>>(din.p, dout.p);
  CK(cudaDeviceSynchronize());
  auto out = dout.get(2 * blocks);
  for (int b = 0; b < blocks; ++b) {
    auto first = in.begin() + static_cast<ll>(b) * T;
    const int mn = *std::min_element(first, first + T), mx = *std::max_element(first, first + T);
    EXPECT_EQ(out[2 * b].mn, mn);
    EXPECT_EQ(out[2 * b].mx, mx);
    EXPECT_EQ(out[2 * b].count, T);
    EXPECT_EQ(out[2 * b + 1].mn, -mx);
    EXPECT_EQ(out[2 * b + 1].mx, -mn);
    EXPECT_EQ(out[2 * b + 1].count, 2 * T);
  }
}

template <int T, int N>
void check_block_sort(int blocks, int begin_bit, int end_bit, unsigned key_range, std::mt19937_64& rng) {
  const size_t n = static_cast<size_t>(blocks) * T * N;
  std::vector<unsigned> keys(n);
  std::vector<int> vals(n);
  for (size_t i = 0; i < n; ++i) {
    keys[i] = static_cast<unsigned>(rng() % key_range);
    vals[i] = static_cast<int>(i);
  }
  Buf<unsigned> dk(keys);
  Buf<int> dv(vals);
  k_block_sort<T, N><<<blocks, T>>>(dk.p, dv.p, begin_bit, end_bit);
  CK(cudaDeviceSynchronize());
  auto gk = dk.get(n);
  auto gv = dv.get(n);
  const unsigned mask = end_bit - begin_bit >= 32 ? ~0u : ((1u << (end_bit - begin_bit)) - 1u) << begin_bit;
  for (int b = 0; b < blocks; ++b) {
    std::vector<std::pair<unsigned, int>> want;
    for (int i = 0; i < T * N; ++i) want.emplace_back(keys[b * T * N + i], vals[b * T * N + i]);
    // Stable by the sorted bits only.
    std::stable_sort(want.begin(), want.end(),
                     [&](const auto& x, const auto& y) { return (x.first & mask) < (y.first & mask); });
    for (int i = 0; i < T * N; ++i) {
      ASSERT_EQ(gk[b * T * N + i], want[i].first) << "block " << b << " slot " << i << " bits " << begin_bit << ".." << end_bit;
      ASSERT_EQ(gv[b * T * N + i], want[i].second) << "block " << b << " slot " << i;
    }
  }
}

TEST(TemplatesGpu, BlockRadixSortIsStable) {
  REQUIRE_GPU();
  std::mt19937_64 rng(9);
  check_block_sort<128, 4>(3, 0, 13, 1u << 13, rng);  // odd bit count: a last 1-bit pass
  check_block_sort<128, 4>(2, 0, 4, 16, rng);         // many equal keys
  check_block_sort<256, 1>(2, 0, 11, 1u << 11, rng);
  check_block_sort<64, 7>(2, 3, 9, 1u << 12, rng);     // a bit range inside the key
  check_block_sort<128, 4>(1, 0, 32, ~0u, rng);        // full 32-bit keys
}

TEST(TemplatesGpu, TilePrefixAcrossManyTiles) {
  REQUIRE_GPU();
  std::mt19937_64 rng(10);
  for (ll tiles : {1ll, 2ll, 31ll, 32ll, 33ll, 1000ll, 100003ll}) {
    std::vector<ll> agg(static_cast<size_t>(tiles));
    for (auto& a : agg) a = (rng() % 4 == 0) ? 0 : static_cast<ll>(rng() % (1ll << 40));
    Buf<ll> dagg(agg), dex(tiles), din(tiles);
    Buf<ll> ts(tile_state_elems(tiles));
    init_ts(ts.p, tiles);
    k_tile_prefix<<<static_cast<unsigned>(tiles), 64>>>(dagg.p, ts.p, dex.p, din.p);
    CK(cudaDeviceSynchronize());
    auto ex = dex.get(tiles);
    auto in = din.get(tiles);
    ll run = 0;
    for (ll t = 0; t < tiles; ++t) {
      ASSERT_EQ(ex[t], run) << "tiles " << tiles << " tile " << t;
      run += agg[t];
      ASSERT_EQ(in[t], run) << "tiles " << tiles << " tile " << t;
    }
  }
}

// ------------------------------------------------------------------ helpers
__global__ void k_helpers(ll* o, int* err) {
  o[0] = safe_div(7ll, 0ll, err);
  o[1] = safe_div(LLONG_MIN, -1ll, err);
  o[2] = safe_mod(LLONG_MIN, -1ll, err);
  o[3] = saturating_cast<int>(__longlong_as_double(0x7ff8000000000000ll));  // NaN
  o[4] = saturating_cast<int>(1e20);
  o[5] = saturating_cast<int>(-1e20);
  o[6] = saturating_cast<ll>(9.3e18);
  o[7] = cmp3(-0.0, 0.0);
  o[8] = cmp3(__longlong_as_double(0xfff8000000000000ll), -__longlong_as_double(0x7ff0000000000000ll));  // -NaN < -inf
  o[9] = cmp3(__longlong_as_double(0x7ff8000000000000ll), __longlong_as_double(0x7ff0000000000000ll));   // NaN > inf
  o[10] = safe_div(-7, 2, err);
}
TEST(TemplatesGpu, Helpers) {
  REQUIRE_GPU();
  Buf<ll> o(11);
  Buf<int> err(1);
  k_helpers<<<1, 1>>>(o.p, err.p);
  CK(cudaDeviceSynchronize());
  EXPECT_EQ(o.get(11), (std::vector<ll>{0, LLONG_MIN, 0, 0, INT_MAX, INT_MIN, LLONG_MAX, -1, -1, 1, -3}));
  EXPECT_EQ(err.at(0), int(kErrDivisionByZero));
}

// gallop_partition_point agrees with partition_point for every start and every answer:
// a sorted array with runs of 1..40 equal values, searched for the end of each value's run
// from every lower position (including past the run, and empty ranges).
__global__ void k_gallop(const int* v, ll n, ll* mismatches) {
  const ll lo = blockIdx.x * static_cast<ll>(blockDim.x) + threadIdx.x;
  if (lo > n) return;
  for (ll k = 0; k < n; k += 7) {
    const int key = v[k];
    auto pred = [&](ll r) { return v[r] <= key; };
    for (ll hi : {n, lo, lo + 1 < n ? lo + 1 : n}) {
      if (hi < lo) continue;
      const ll a = gallop_partition_point(lo, hi, pred), b = partition_point(lo, hi, pred);
      if (a != b) atomicAdd(reinterpret_cast<unsigned long long*>(mismatches), 1ull);
    }
  }
}
TEST(TemplatesGpu, GallopPartitionPoint) {
  REQUIRE_GPU();
  std::vector<int> h;
  for (int value = 0, run = 1; h.size() < 3000; ++value, run = run % 40 + 1)
    h.insert(h.end(), static_cast<size_t>(run), value);
  Buf<int> v(h);
  Buf<ll> bad(1);
  const ll n = static_cast<ll>(h.size());
  k_gallop<<<static_cast<unsigned>((n + 256) / 256), 256>>>(v.p, n, bad.p);
  CK(cudaDeviceSynchronize());
  EXPECT_EQ(bad.at(0), 0);
}


// The top-k radix select (topk.cuh) as the generator launches it: the first pass, its pick, then
// every later level's histogram and pick. Checked against the sorted words: T holds at least
// min(k, n) rows, `kept` counts the words <= T, the k-th smallest is <= T, and with bins of one
// row T keeps exactly the words up to the k-th smallest.
__global__ void k_topk_first(const unsigned long long* w, ll n, ll first_shift, void* st) {
  __shared__ TopKFirstAgent<128>::TempStorage temp;
  TopKFirstAgent<128>::run(temp, n, first_shift, [&](ll i) { return w[i]; }, st);
}
__global__ void k_topk_histogram(const unsigned long long* w, ll n, void* st) {
  __shared__ TopKHistogramAgent<128>::TempStorage temp;
  TopKHistogramAgent<128>::run(temp, n, [&](ll i) { return w[i]; }, st);
}
__global__ void k_topk_pick(void* st, ll n, ll k, ll bin_rows, ll first_shift) {
  __shared__ TopKPickTemp<128> temp;
  topk_pick<128>(temp, st, n, k, bin_rows, first_shift);
}
TEST(TemplatesGpu, TopKSelect) {
  REQUIRE_GPU();
  std::mt19937_64 rng(77);
  struct Case {
    const char* name;
    int bits;  // the word's used bits
    std::vector<unsigned long long> w;
  };
  std::vector<Case> cases;
  for (ll n : {0LL, 1LL, 5LL, 1000LL, 100003LL}) {
    Case u{"uniform 64", 64, {}}, narrow{"narrow", 64, {}}, equal{"equal", 32, {}},
        w32{"uniform 32", 32, {}}, skew{"skewed", 64, {}}, ends{"extremes", 64, {}};
    for (ll i = 0; i < n; ++i) {
      u.w.push_back(rng());
      narrow.w.push_back(0x8000000000000000ull + 1000 + rng() % 11);
      equal.w.push_back(12345);
      w32.w.push_back(rng() & 0xffffffffull);
      skew.w.push_back(rng() % 16 == 0 ? rng() : rng() % 3);
      ends.w.push_back(i % 3 == 0 ? 0ull : i % 3 == 1 ? ~0ull : rng());
    }
    for (Case* c : {&u, &narrow, &equal, &w32, &skew, &ends}) cases.push_back(std::move(*c));
  }
  for (const Case& c : cases) {
    const ll n = static_cast<ll>(c.w.size());
    std::vector<unsigned long long> sorted = c.w;
    std::sort(sorted.begin(), sorted.end());
    Buf<unsigned long long> w(c.w);
    const ll first_shift = c.bits > kTopKDigitBits ? c.bits - kTopKDigitBits : 0;
    const int levels = static_cast<int>((first_shift + kTopKDigitBits - 1) / kTopKDigitBits);
    for (ll k : {1LL, 7LL, n - 1, n, n + 3}) {
      if (k < 1) continue;
      for (ll bin_rows : {1LL, 64LL, 1LL << 20}) {
        SCOPED_TRACE(testing::Message() << c.name << " n=" << n << " k=" << k << " bin rows " << bin_rows);
        Buf<ll> st(sizeof(TopKState) / 8);
        const unsigned grid = static_cast<unsigned>(std::min<ll>(64, std::max<ll>(1, (n + 511) / 512)));
        if (n > 0) k_topk_first<<<grid, 128>>>(w.p, n, first_shift, st.p);
        k_topk_pick<<<1, 128>>>(st.p, n, k, bin_rows, first_shift);
        for (int l = 0; l < levels; ++l) {
          k_topk_histogram<<<grid, 128>>>(w.p, n, st.p);
          k_topk_pick<<<1, 128>>>(st.p, n, k, bin_rows, -1);
        }
        CK(cudaDeviceSynchronize());
        const auto state = st.get(8);
        const unsigned long long t = static_cast<unsigned long long>(state[3]);
        const ll kept = state[5];
        EXPECT_EQ(state[7], 0) << "still active after every level";
        const ll le = std::upper_bound(sorted.begin(), sorted.end(), t) - sorted.begin();
        EXPECT_EQ(kept, le) << "kept is the number of words <= T";
        EXPECT_GE(kept, std::min(k, n));
        if (k <= n && n > 0) {
          EXPECT_LE(sorted[static_cast<size_t>(k - 1)], t);
          if (bin_rows == 1) {
            const ll exact = std::upper_bound(sorted.begin(), sorted.end(), sorted[static_cast<size_t>(k - 1)]) - sorted.begin();
            EXPECT_EQ(kept, exact) << "single-row bins keep the words up to the k-th only";
          }
        }
        const auto hist = st.get(8 + kTopKBins);
        EXPECT_TRUE(std::all_of(hist.begin() + 8, hist.end(), [](ll h) { return h == 0; }))
            << "the histogram is zeroed for the next level";
      }
    }
  }
}

}  // namespace
