// Radix partitions that move several value arrays (SortPairs::radix_bits with more_values:
// the hash join's partitions, builtins::partition_columns) on a hand-written plan, against a
// stable sort on the host by the partition bits: the default CUB sort per array, and with
// RANC_PARTITION_COLUMNS=1 in the environment the one-pass partitioner (scripts/gpu_check.sh
// runs both). GPU tests skip without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "ranc/runtime/device_relation.h"
#include "ranc/runtime/executor.h"

namespace ranc::rt {
namespace {

// The plan needs a kernel to compile; none is launched.
const char* kSource = R"(extern "C" __global__ void unused_kernel(long long n) {})";

enum class Keys { Random, AllEqual, FewDistinct, Descending };

struct Case {
  int64_t n;
  int bits;
  int values;  // value arrays (1 + more_values)
  bool wide;   // 64-bit key words
  Keys keys;
};

std::ostream& operator<<(std::ostream& os, const Case& c) {
  return os << "n" << c.n << "_bits" << c.bits << "_v" << c.values << (c.wide ? "_u64" : "_u32") << "_k"
            << static_cast<int>(c.keys);
}

// Input t(k, v0..v{m-1}) -> output o(k, v0..v{m-1}) partitioned on bits [0, bits) of k.
Plan partition_plan(const Case& c) {
  const int m = c.values;
  const Type kt = c.wide ? Type::I64 : Type::I32;
  Plan p;
  p.source = kSource;
  p.kernels = {"unused_kernel"};
  const SlotId kN = 0, kBits = 1;
  p.num_slots = 2;
  const SizeExpr n = SizeExpr::slot(kN);
  Schema schema{{{"k", kt}}, 0};
  for (int v = 0; v < m; ++v) schema.attributes.push_back({"v" + std::to_string(v), Type::I32});
  // Buffers: key in, values in, key out, values out.
  p.buffers.push_back(BufferDecl{"t.k", c.wide ? 8 : 4, n, 0});
  for (int v = 0; v < m; ++v) p.buffers.push_back(BufferDecl{"t.v" + std::to_string(v), 4, n, 0});
  p.buffers.push_back(BufferDecl{"o.k", c.wide ? 8 : 4, n, 1});
  for (int v = 0; v < m; ++v) p.buffers.push_back(BufferDecl{"o.v" + std::to_string(v), 4, n, 1});
  auto in = [&](int v) { return static_cast<BufferId>(1 + v); };
  auto out = [&](int v) { return static_cast<BufferId>(m + 2 + v); };
  const BufferId key_out = m + 1;
  std::vector<BufferId> in_cols{0}, out_cols{key_out};
  for (int v = 0; v < m; ++v) {
    in_cols.push_back(in(v));
    out_cols.push_back(out(v));
  }
  p.inputs = {PlanRelation{"t", schema, in_cols, kN}};
  p.steps.push_back(SetSize{kBits, SizeExpr::fixed(c.bits)});
  for (BufferId b : out_cols) p.steps.push_back(Alloc{b});
  SortPairs s{0, key_out, in(0), out(0), kt, false, n, 1, /*encoded=*/true, kBits};
  for (int v = 1; v < m; ++v) s.more_values.push_back({in(v), out(v)});
  p.steps.push_back(s);
  p.outputs = {PlanRelation{"o", schema, out_cols, kN}};
  p.node_names = {"n0 input", "n1 partition"};
  return p;
}

class PartitionGpu : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!gpu_available()) GTEST_SKIP() << "no GPU";
  }
};

TEST_P(PartitionGpu, MatchesStableSortOnThePartitionBits) {
  const Case c = GetParam();
  const size_t n = static_cast<size_t>(c.n);
  std::mt19937_64 rng(static_cast<uint64_t>(c.n) * 31 + static_cast<uint64_t>(c.bits));
  std::vector<uint64_t> keys(n);
  for (size_t i = 0; i < n; ++i) {
    switch (c.keys) {
      case Keys::Random: keys[i] = rng(); break;
      case Keys::AllEqual: keys[i] = 0x9e3779b97f4a7c15ull; break;
      case Keys::FewDistinct: keys[i] = (rng() % 3) * 0x0101010101010101ull; break;
      case Keys::Descending: keys[i] = static_cast<uint64_t>(n - i) * 0x10001ull; break;
    }
    if (!c.wide) keys[i] &= 0xffffffffull;
  }
  HostRelation t(partition_plan(c).inputs[0].schema);
  if (c.wide) {
    auto& k = t.column(0).data<int64_t>();
    for (uint64_t x : keys) k.push_back(static_cast<int64_t>(x));
  } else {
    auto& k = t.column(0).data<int32_t>();
    for (uint64_t x : keys) k.push_back(static_cast<int32_t>(static_cast<uint32_t>(x)));
  }
  for (int v = 0; v < c.values; ++v) {
    auto& col = t.column(1 + static_cast<size_t>(v)).data<int32_t>();
    for (size_t i = 0; i < n; ++i) col.push_back(static_cast<int32_t>(i * (v + 1) + v));
  }
  KernelCache cache(std::nullopt);
  ExecutorOptions opts;
  opts.cache = &cache;
  Executor ex(opts);
  const RunResult r = ex.run(partition_plan(c), {{"t", &t}});
  const HostRelation& o = r.output("o");
  ASSERT_EQ(o.num_rows(), n);
  const uint64_t mask = c.bits >= 64 ? ~0ull : (1ull << c.bits) - 1;
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return (keys[a] & mask) < (keys[b] & mask); });
  size_t bad = 0;
  for (size_t i = 0; i < n && bad < 5; ++i) {
    const uint64_t got = c.wide ? static_cast<uint64_t>(o.column(0).data<int64_t>()[i])
                                : static_cast<uint32_t>(o.column(0).data<int32_t>()[i]);
    if (got != keys[order[i]]) {
      ++bad;
      ADD_FAILURE() << c << ": key at row " << i << " is " << got << ", want " << keys[order[i]];
    }
    for (int v = 0; v < c.values; ++v) {
      const int32_t want = static_cast<int32_t>(order[i] * (v + 1) + v);
      const int32_t have = o.column(1 + static_cast<size_t>(v)).data<int32_t>()[i];
      if (have != want) {
        ++bad;
        ADD_FAILURE() << c << ": value array " << v << " at row " << i << " is " << have << ", want " << want;
      }
    }
  }
  EXPECT_EQ(ex.memory_stats().bytes_in_use, 0);
}

std::vector<Case> cases() {
  std::vector<Case> v;
  // Sizes around the partitioner's 4096-row tile, one and two passes, 1 to 10 value arrays
  // (past the 8 one call moves), both key widths, and skewed keys.
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{4095}, int64_t{4096}, int64_t{4097}, int64_t{100003}})
    for (int bits : {1, 8, 12, 16})
      for (bool wide : {false, true}) v.push_back({n, bits, 3, wide, Keys::Random});
  for (int values : {2, 8, 9, 10}) v.push_back({100003, 16, values, false, Keys::Random});
  for (Keys k : {Keys::AllEqual, Keys::FewDistinct, Keys::Descending})
    for (bool wide : {false, true}) v.push_back({70001, 13, 2, wide, k});
  v.push_back({(int64_t{1} << 22) + 5, 16, 4, false, Keys::Random});
  v.push_back({300007, 24, 2, true, Keys::Random});  // three passes
  v.push_back({300007, 32, 2, false, Keys::Random});  // a whole 32-bit word
  return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, PartitionGpu, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           std::ostringstream os;
                           os << i.param;
                           return os.str();
                         });

}  // namespace
}  // namespace ranc::rt
