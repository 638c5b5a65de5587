// The executor on a hand-written plan: a generated kernel, Iota, SortPairs,
// Gather, ScanInt64, ReadSize, string dictionaries and DictParams, error flags and
// out-of-memory. GPU tests skip without a GPU; compile_plan runs everywhere.
#include "ranc/runtime/executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <numeric>

#include "ranc/runtime/check.h"
#include "ranc/runtime/device_relation.h"
#include "ranc/runtime/errors.h"

namespace ranc::rt {
namespace {

const char* kSource = R"(
extern "C" __global__ void k1_scale(const double* v, double* out, long long n, long long f) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = v[i] * (double)f;
}
extern "C" __global__ void k2_count(const int* k, long long* c, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = (k[i] % 3 == 0) ? 1 : 0;
}
extern "C" __global__ void k3_eq(const int* s, unsigned char* out, long long n, long long code) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = s[i] == code;
}
extern "C" __global__ void k4_like(const int* s, const unsigned char* mask, unsigned char* out,
                                   long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = mask[s[i]];
}
extern "C" __global__ void k5_div(const int* k, int* flag, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n && k[i] == 0) atomicExch(flag, 1);
}
)";

using Inputs = std::map<std::string, const HostRelation*>;

enum Buf : BufferId {
  kInK,
  kInV,
  kInS,
  kUS,
  kScaled,
  kKeysOut,
  kIdxIn,
  kIdxOut,
  kVSorted,
  kSSorted,
  kCounts,
  kOffsets,
  kEq,
  kMask,
  kLike,
  kVDescKeys,
  kVDescIdx,
  kFlag,
  kNumBuffers
};
enum Slot : SlotId { kN, kNU, kPrefix, kCode, kNumSlots };

Schema t_schema() {
  return Schema{{{"k", Type::I32}, {"v", Type::F64}, {"s", Type::String}}, 0};
}
Schema u_schema() {
  return Schema{{{"s", Type::String}}, 0};
}

Plan make_plan() {
  Plan p;
  p.source = kSource;
  p.kernels = {"k1_scale", "k2_count", "k3_eq", "k4_like", "k5_div"};
  p.num_slots = kNumSlots;
  auto n = SizeExpr::slot(kN);
  SizeExpr n1 = n;
  n1.constant = 1;
  p.buffers.resize(kNumBuffers);
  auto decl = [&](Buf b, const char* name, int32_t size, SizeExpr count, int32_t node) {
    p.buffers[b] = BufferDecl{name, size, std::move(count), node};
  };
  decl(kInK, "t.k", 4, n, 0);
  decl(kInV, "t.v", 8, n, 0);
  decl(kInS, "t.s", 4, n, 0);
  decl(kUS, "u.s", 4, SizeExpr::slot(kNU), 0);
  decl(kScaled, "k1.out", 8, n, 1);
  decl(kKeysOut, "sort.keys", 4, n, 2);
  decl(kIdxIn, "sort.idx_in", 4, n, 2);
  decl(kIdxOut, "sort.idx_out", 4, n, 2);
  decl(kVSorted, "sorted.v", 8, n, 2);
  decl(kSSorted, "sorted.s", 4, n, 2);
  decl(kCounts, "k2.counts", 8, n, 3);
  decl(kOffsets, "k2.offsets", 8, n1, 3);
  decl(kEq, "k3.eq", 1, n, 4);
  decl(kMask, "like.mask", 1, SizeExpr::fixed(1), 5);
  decl(kLike, "k4.like", 1, n, 5);
  decl(kVDescKeys, "vdesc.keys", 8, n, 6);
  decl(kVDescIdx, "vdesc.idx", 4, n, 6);
  decl(kFlag, "k5.flag", 4, SizeExpr::fixed(1), 7);
  p.inputs = {PlanRelation{"t", t_schema(), {kInK, kInV, kInS}, kN},
              PlanRelation{"u", u_schema(), {kUS}, kNU}};
  p.dict_params = {DictParam{DictParam::Kind::EqCode, "pear", kCode, -1},
                   DictParam{DictParam::Kind::LikeMask, "%an%", -1, kMask}};
  auto launch = [&](const char* k, std::vector<KernelArg> args, int32_t node) {
    return Launch{k, n, 128, 128, 0, true, std::move(args), node};
  };
  p.steps = {
      Alloc{kScaled},
      launch("k1_scale", {ArgBuffer{kInV}, ArgBuffer{kScaled}, ArgSlot{kN}, ArgConst{3}}, 1),
      Alloc{kKeysOut},
      Alloc{kIdxIn},
      Alloc{kIdxOut},
      Iota{kIdxIn, n},
      SortPairs{kInK, kKeysOut, kIdxIn, kIdxOut, Type::I32, false, n, 2},
      Alloc{kVSorted},
      Alloc{kSSorted},
      Gather{kInV, kIdxOut, kVSorted, 8, n, 2},
      Gather{kInS, kIdxOut, kSSorted, 4, n, 2},
      Alloc{kCounts},
      Alloc{kOffsets},
      launch("k2_count", {ArgBuffer{kKeysOut}, ArgBuffer{kCounts}, ArgSlot{kN}}, 3),
      ScanInt64{kCounts, kOffsets, n, 3},
      ReadSize{kPrefix, kOffsets, 0},  // index patched below: offsets[n] is the total
      Free{kCounts},
      Alloc{kEq},
      launch("k3_eq", {ArgBuffer{kInS}, ArgBuffer{kEq}, ArgSlot{kN}, ArgSlot{kCode}}, 4),
      Alloc{kLike},
      launch("k4_like", {ArgBuffer{kInS}, ArgBuffer{kMask}, ArgBuffer{kLike}, ArgSlot{kN}}, 5),
      Free{kMask},
      Alloc{kVDescKeys},
      Alloc{kVDescIdx},
      SortPairs{kInV, kVDescKeys, kIdxIn, kVDescIdx, Type::F64, true, n, 6},
      Alloc{kFlag, true},
      launch("k5_div", {ArgBuffer{kInK}, ArgBuffer{kFlag}, ArgSlot{kN}}, 7),
      CheckFlag{kFlag, "integer division by zero", 7},
  };
  p.outputs = {
      PlanRelation{"scaled", Schema{{{"v3", Type::F64}}, 0}, {kScaled}, kN},
      PlanRelation{"sorted", t_schema(), {kKeysOut, kVSorted, kSSorted}, kN},
      PlanRelation{"offsets", Schema{{{"o", Type::I64}}, 0}, {kOffsets}, kN},
      PlanRelation{"prefix", Schema{{{"k", Type::I32}}, 0}, {kKeysOut}, kPrefix},
      PlanRelation{"eq", Schema{{{"b", Type::Bool}}, 0}, {kEq}, kN},
      PlanRelation{"like", Schema{{{"b", Type::Bool}}, 0}, {kLike}, kN},
      PlanRelation{"vdesc", Schema{{{"v", Type::F64}}, 0}, {kVDescKeys}, kN},
      PlanRelation{"u_out", u_schema(), {kUS}, kNU},
  };
  p.node_names = {"n0 input",  "n1 project", "n2 sort",   "n3 count",
                  "n4 select", "n5 like",    "n6 sort v", "n7 divide"};
  return p;
}

// ReadSize needs the element index n, known only with the data: a plan from the
// compiler would use a counter buffer; here the test patches the index.
Plan plan_for(int64_t n) {
  Plan p = make_plan();
  for (auto& s : p.steps)
    if (auto* r = std::get_if<ReadSize>(&s)) r->index = n;
  return p;
}

HostRelation make_t(int64_t n) {
  const char* words[] = {"pear", "banana", "apple", "mango", "fig", "orange"};
  const double specials[] = {-0.0, 0.0, INFINITY, -INFINITY, 1.5, -2.25};
  HostRelation t(t_schema());
  for (int64_t i = 0; i < n; ++i) {
    int32_t k = static_cast<int32_t>((i * 7919) % 101) - 50;
    if (k == 0) k = 1;  // no division by zero in the main test
    double v = i % 5 == 0 ? specials[(i / 5) % 6] : static_cast<double>((i * 31) % 17) - 8.5;
    t.append_row({Value::i32(k), Value::f64(v), Value::string(words[i % 6])});
  }
  return t;
}

bool total_less(double a, double b) {
  return total_compare_f64(a, b) < 0;
}

TEST(ExecutorCompile, PlanSourceCompilesWithoutGpu) {
  KernelCache cache(std::nullopt);
  CacheLookup r = compile_plan(make_plan(), 90, cache);
  ASSERT_GT(r.cubin->size(), 4u);
  EXPECT_EQ((*r.cubin)[1], 'E');
  EXPECT_EQ(compile_plan(make_plan(), 90, cache).source, CacheSource::Memory);
}

// RANC_MEMORY_LIMIT: a size sets ExecutorOptions::memory_limit; anything else is an error
// naming the variable, when the executor is made (no GPU needed).
// Environment variable `name` set to `bad` makes the executor's constructor fail naming it;
// set to `good` it constructs.
void expect_size_from_env(const char* name, const char* bad, const char* good) {
  ASSERT_EQ(setenv(name, bad, 1), 0);
  const std::string want = std::string(name) + "=" + bad + " is not a size";
  try {
    Executor ex;
    ADD_FAILURE() << "no error for " << name << "=" << bad;
  } catch (const ExecutionError& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
  ASSERT_EQ(setenv(name, good, 1), 0);
  EXPECT_NO_THROW(Executor{});
  ASSERT_EQ(unsetenv(name), 0);
}

TEST(Executor, MemoryLimitFromTheEnvironment) { expect_size_from_env("RANC_MEMORY_LIMIT", "8 gigs", "8G"); }

TEST(Executor, ReserveFromTheEnvironment) { expect_size_from_env("RANC_RESERVE", "lots", "1G"); }

TEST(Executor, NoGpuIsAClearError) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is present";
  Executor ex;
  HostRelation t = make_t(10);
  HostRelation u(u_schema());
  try {
    ex.run(plan_for(10), Inputs{{"t", &t}, {"u", &u}});
    FAIL() << "expected NoGpuError";
  } catch (const NoGpuError& e) {
    EXPECT_NE(std::string(e.what()).find("no GPU available"), std::string::npos) << e.what();
  }
}

class ExecutorGpu : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override {
    if (!gpu_available()) GTEST_SKIP() << "no GPU";
  }
};

TEST_P(ExecutorGpu, HandWrittenPlanMatchesHost) {
  int64_t n = GetParam();
  HostRelation t = make_t(n);
  HostRelation u = HostRelation::from_rows(
      u_schema(), {{Value::string("zebra")}, {Value::string("apple")}, {Value::string("kiwi")}});
  KernelCache cache(std::nullopt);
  ExecutorOptions opts;
  opts.cache = &cache;
  opts.sync_each_step = true;
  Executor ex(opts);
  RunResult r = ex.run(plan_for(n), Inputs{{"t", &t}, {"u", &u}});

  // scaled
  const auto& scaled = r.output("scaled");
  ASSERT_EQ(scaled.num_rows(), static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(scaled.get(i, 0).as_f64(), t.get(i, 1).as_f64() * 3) << i;

  // sorted: stable by k
  std::vector<uint32_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0u);
  std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
    return t.get(a, 0).as_i32() < t.get(b, 0).as_i32();
  });
  const auto& sorted = r.output("sorted");
  ASSERT_EQ(sorted.num_rows(), static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(sorted.get(i, 0), t.get(idx[i], 0)) << i;
    EXPECT_EQ(sorted.get(i, 1), t.get(idx[i], 1)) << i;
    EXPECT_EQ(sorted.get(i, 2), t.get(idx[i], 2)) << i;
  }

  // offsets and ReadSize
  const auto& offsets = r.output("offsets");
  int64_t run = 0;
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(offsets.get(i, 0).as_i64(), run) << i;
    run += sorted.get(i, 0).as_i32() % 3 == 0;
  }
  EXPECT_EQ(r.output("prefix").num_rows(), static_cast<size_t>(run));

  // dictionary parameters
  for (int64_t i = 0; i < n; ++i) {
    const std::string& s = t.get(i, 2).as_string();
    EXPECT_EQ(r.output("eq").get(i, 0).as_bool(), s == "pear") << i;
    EXPECT_EQ(r.output("like").get(i, 0).as_bool(), s.find("an") != std::string::npos) << i;
  }

  // float keys, descending, IEEE totalOrder (bitwise: -0.0 after +0.0)
  std::vector<double> vs;
  for (int64_t i = 0; i < n; ++i) vs.push_back(t.get(i, 1).as_f64());
  std::stable_sort(vs.begin(), vs.end(), [](double a, double b) { return total_less(b, a); });
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>(r.output("vdesc").get(i, 0).as_f64()),
              std::bit_cast<uint64_t>(vs[i]))
        << i;
  }

  // u passes through, recoded into the run's dictionary and decoded again
  const auto& u_out = r.output("u_out");
  ASSERT_EQ(u_out.num_rows(), 3u);
  EXPECT_EQ(u_out.get(0, 0).as_string(), "zebra");
  EXPECT_EQ(u_out.get(1, 0).as_string(), "apple");
  EXPECT_EQ(u_out.get(2, 0).as_string(), "kiwi");

  EXPECT_GT(r.stats.peak_device_bytes, 0);
  EXPECT_GT(r.stats.kernel_launches, 0);
  EXPECT_EQ(ex.memory_stats().bytes_in_use, 0);  // everything freed

  // Second run: the program comes from the in-memory cache and is already loaded.
  RunResult r2 = ex.run(plan_for(n), Inputs{{"t", &t}, {"u", &u}});
  EXPECT_EQ(r2.stats.compile_source, CacheSource::Memory);
  EXPECT_EQ(r2.stats.load_seconds, 0);
}

INSTANTIATE_TEST_SUITE_P(Sizes, ExecutorGpu, ::testing::Values(0, 1, 31, 33, 129, 1000, 100003));

// Memory reserved ahead (ExecutorOptions::reserve_bytes, DevicePool::reserve) is not counted
// as in use, and a run on it gives the same outputs as one without.
TEST(ExecutorGpuReserve, SameResultsAndAccounting) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU";
  const int64_t n = 100003;
  HostRelation t = make_t(n);
  HostRelation u = HostRelation::from_rows(u_schema(), {{Value::string("kiwi")}});
  KernelCache cache(std::nullopt);
  ExecutorOptions plain_opts, reserved_opts;
  plain_opts.cache = reserved_opts.cache = &cache;
  reserved_opts.reserve_bytes = int64_t{256} << 20;
  Executor plain(plain_opts), reserved(reserved_opts);
  reserved.prepare();
  EXPECT_EQ(reserved.memory_stats().bytes_in_use, 0);
  const RunResult a = plain.run(plan_for(n), Inputs{{"t", &t}, {"u", &u}});
  const RunResult b = reserved.run(plan_for(n), Inputs{{"t", &t}, {"u", &u}});
  for (const char* name : {"scaled", "sorted", "offsets", "prefix", "vdesc"}) {
    const HostRelation& x = a.output(name);
    const HostRelation& y = b.output(name);
    ASSERT_EQ(x.num_rows(), y.num_rows()) << name;
    for (size_t i = 0; i < x.num_rows(); ++i) ASSERT_EQ(x.row(i), y.row(i)) << name << " row " << i;
  }
  EXPECT_EQ(a.stats.peak_device_bytes, b.stats.peak_device_bytes);
  EXPECT_EQ(reserved.memory_stats().bytes_in_use, 0);
}

// Consecutive CheckFlag and ReadSize steps (Frees between them) wait for the device once:
// the plan's ReadSize in the middle is one wait, and a CheckFlag, a ReadSize and a CheckFlag
// at its end are another, with the values each step would have read alone; a flag that is
// set still stops the run at its own step.
TEST(ExecutorGpuReadBacks, ConsecutiveReadBacksShareOneWait) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU";
  const int64_t n = 1000;
  Plan p = plan_for(n);
  const SlotId last = p.num_slots++;
  p.steps.push_back(ReadSize{last, kOffsets, n - 1});
  p.steps.push_back(CheckFlag{kFlag, "integer division by zero", 7});
  p.outputs.push_back(PlanRelation{"prefix_last", Schema{{{"k", Type::I32}}, 0}, {kKeysOut}, last});
  HostRelation t = make_t(n);
  HostRelation u = HostRelation::from_rows(u_schema(), {{Value::string("kiwi")}});
  Executor ex;
  RunResult r = ex.run(p, Inputs{{"t", &t}, {"u", &u}});
  EXPECT_EQ(r.stats.readbacks, 2);
  const auto& offsets = r.output("offsets");
  EXPECT_EQ(r.output("prefix_last").num_rows(), static_cast<size_t>(offsets.get(n - 1, 0).as_i64()));
  const auto& sorted = r.output("sorted");
  EXPECT_EQ(r.output("prefix").num_rows(),
            static_cast<size_t>(offsets.get(n - 1, 0).as_i64() + (sorted.get(n - 1, 0).as_i32() % 3 == 0)));
  t.column(0).data<int32_t>()[17] = 0;
  try {
    ex.run(p, Inputs{{"t", &t}, {"u", &u}});
    FAIL() << "expected ExecutionError";
  } catch (const ExecutionError& e) {
    EXPECT_EQ(e.node_name(), "n7 divide");
  }
}

// A ReadSize with `when` reads its element only when that slot is non-zero; else its slot
// is 0 (a path the plan takes only at some sizes, hash_lowering.cpp's windows).
TEST(ExecutorGpuReadBacks, ReadSizeWhen) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU";
  const int64_t n = 1000;
  HostRelation t = make_t(n);
  HostRelation u = HostRelation::from_rows(u_schema(), {{Value::string("kiwi")}});
  for (int64_t on : {0, 1, 5}) {
    Plan p = plan_for(n);
    const SlotId gate = p.num_slots++, last = p.num_slots++;
    p.steps.push_back(SetSize{gate, SizeExpr::fixed(on)});
    p.steps.push_back(ReadSize{last, kOffsets, n - 1, -1, gate});
    p.outputs.push_back(PlanRelation{"prefix_last", Schema{{{"k", Type::I32}}, 0}, {kKeysOut}, last});
    Executor ex;
    RunResult r = ex.run(p, Inputs{{"t", &t}, {"u", &u}});
    const int64_t total = r.output("offsets").get(n - 1, 0).as_i64();
    ASSERT_GT(total, 0);
    EXPECT_EQ(r.output("prefix_last").num_rows(), static_cast<size_t>(on ? total : 0)) << on;
  }
}

// Inputs already on the device give the same outputs as host inputs; the string
// column of `u` has its own dictionary and is recoded on the device.
TEST(ExecutorGpuDeviceInputs, SameResultsAsHostInputs) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU";
  const int64_t n = 777;
  HostRelation t = make_t(n);
  HostRelation u = HostRelation::from_rows(
      u_schema(), {{Value::string("zebra")}, {Value::string("apple")}, {Value::string("kiwi")}});
  Executor ex;
  RunResult host = ex.run(plan_for(n), Inputs{{"t", &t}, {"u", &u}});

  cudaStream_t stream = nullptr;
  RANC_CUDA_CHECK(cudaStreamCreate(&stream));
  {
    DevicePool pool(0, stream);
    DeviceRelation dt = upload(t, pool, "t");
    DeviceRelation du = upload(u, pool, "u");
    DeviceInput it{t_schema(), {dt.column(0), dt.column(1), dt.column(2)}, n, dt.dictionary()};
    DeviceInput iu{u_schema(), {du.column(0)}, 3, du.dictionary()};
    RunResult dev = ex.run_bound(plan_for(n), {{"t", InputBinding(it)}, {"u", InputBinding(iu)}});
    ASSERT_EQ(dev.outputs.size(), host.outputs.size());
    for (size_t o = 0; o < host.outputs.size(); ++o) {
      const HostRelation& a = host.outputs[o].second;
      const HostRelation& b = dev.outputs[o].second;
      ASSERT_EQ(a.num_rows(), b.num_rows()) << host.outputs[o].first;
      for (size_t r = 0; r < a.num_rows(); ++r)
        EXPECT_EQ(a.row(r), b.row(r)) << host.outputs[o].first << " row " << r;
    }
    // Downloading the device relation gives the input back.
    HostRelation back = download(dt, stream);
    for (int64_t r = 0; r < n; ++r) EXPECT_EQ(back.row(r), t.row(r));
  }
  RANC_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST(ExecutorGpuErrors, ErrorFlagRaisesExecutionErrorNamingTheNode) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU";
  HostRelation t = make_t(40);
  t.column(0).data<int32_t>()[17] = 0;
  HostRelation u(u_schema());
  Executor ex;
  try {
    ex.run(plan_for(40), Inputs{{"t", &t}, {"u", &u}});
    FAIL() << "expected ExecutionError";
  } catch (const ExecutionError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Execution);
    EXPECT_EQ(e.node_name(), "n7 divide");
    EXPECT_NE(std::string(e.what()).find("integer division by zero"), std::string::npos);
  }
  EXPECT_EQ(ex.memory_stats().bytes_in_use, 0);
}

TEST(ExecutorGpuErrors, AbsurdAllocationIsOutOfMemoryNamingTheOperator) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU";
  Plan p = plan_for(5);
  p.buffers[kScaled].count = SizeExpr::fixed(int64_t{1} << 47);  // 1 PiB of doubles
  HostRelation t = make_t(5);
  HostRelation u(u_schema());
  Executor ex;
  try {
    ex.run(p, Inputs{{"t", &t}, {"u", &u}});
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(e.operator_name().find("n1 project"), std::string::npos) << e.what();
    EXPECT_EQ(e.bytes_requested(), (int64_t{1} << 47) * 8);
  }
  EXPECT_EQ(ex.memory_stats().bytes_in_use, 0);
}

// Small blocks come back from the pool's host-side cache (same class, same block), the
// accounting counts the bytes asked for, and a cache past its capacity frees for real.
TEST(DevicePoolGpu, SmallBlocksAreReusedAndAccounted) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU";
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  {
    DevicePool pool(0, s);
    void* a = pool.allocate(1000, "a");
    EXPECT_EQ(pool.stats().bytes_in_use, 1000);
    pool.free(a);
    EXPECT_EQ(pool.stats().bytes_in_use, 0);
    void* b = pool.allocate(1020, "b");  // the same 1024-byte class
    EXPECT_EQ(b, a);
    EXPECT_EQ(pool.stats().bytes_in_use, 1020);
    void* c = pool.allocate(1000, "c");  // the class is empty now: a new block
    EXPECT_NE(c, b);
    ASSERT_EQ(cudaMemsetAsync(b, 1, 1020, s), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(c, 2, 1000, s), cudaSuccess);
    pool.free(b);
    pool.free(c);
    // More freed small blocks than the cache holds, and large ones, stay correct.
    std::vector<void*> many;
    for (int i = 0; i < 40; ++i) many.push_back(pool.allocate(DevicePool::kCachedBlockMax, "many"));
    void* big = pool.allocate(DevicePool::kCachedBlockMax + 1, "big");
    for (void* p : many) pool.free(p);
    pool.free(big);
    EXPECT_EQ(pool.stats().bytes_in_use, 0);
    pool.trim();
    EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  }
  EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

TEST(ExecutorGpuErrors, InputErrorsAreUserErrors) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU";
  HostRelation t = make_t(5);
  HostRelation wrong(Schema{{{"k", Type::I64}}, 0});
  Executor ex;
  try {
    ex.run(plan_for(5), Inputs{{"t", &t}});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnknownRelation);
    EXPECT_NE(std::string(e.what()).find("'u'"), std::string::npos);
  }
  try {
    ex.run(plan_for(5), Inputs{{"t", &t}, {"u", &wrong}});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::SchemaMismatch);
    EXPECT_NE(std::string(e.what()).find("(k i64)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ranc::rt
