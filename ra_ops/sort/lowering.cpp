// Lowering of sort: the keys packed into order words and radix-sorted word by word
// (LoweringContext::sort, ranc/codegen/sort_layout.h). A sort whose input already has the
// order (physical planning) aliases its input.
//
// A top-k sort (PhysicalNode::top_k = k > 0, passes/plan_top_k.h: only limits read its first
// k rows) sorts only the rows that can be among the first k: a radix select on the first
// order word (templates/topk.cuh: a pass for its range and the histogram of its top 11 bits,
// then, while the bin holding the k-th row has too many rows, a histogram of the next 11 bits
// inside it; a one-block pick after each) gives a threshold T and the number m of rows whose
// first word is at most T (read back once); one SelectAgent pass compacts those m rows, and
// they are sorted as any relation is. m >= min(k, n), usually k plus part of a bin.
#include <algorithm>
#include <optional>
#include <utility>

#include "ranc/codegen/lowering.h"
#include "ranc/passes/prune_attributes.h"

namespace ranc::codegen {
namespace {

constexpr int32_t kTopKThreads = 256;
// Blocks of a strided pass (the range and histogram passes: a block's histogram is merged
// with one atomic per bin, so the grid is bounded; 1024 blocks of 256 threads fill an H100).
constexpr int64_t kTopKGrid = 1024;
constexpr int64_t kTopKTile = int64_t{kTopKThreads} * 16;
constexpr int kTopKDigitBits = 11;
constexpr int64_t kTopKMinBinRows = 4096;  // ranc::tpl::kTopKMinBinRows
// sizeof(ranc::tpl::TopKState) / 8 (topk.cuh asserts it) and the element of its `kept` (its
// sixth field; its threshold, the fourth, is read as element 3 below).
constexpr int64_t kTopKStateWords = 8 + (int64_t{1} << kTopKDigitBits);
constexpr int64_t kTopKKeptIndex = 5;

// The rows of `in` that can be among the first k of the order `keys`, unordered.
DeviceRelation top_k_rows(LoweringContext& ctx, const Node& n, const DeviceRelation& in,
                          const passes::Order& keys, int64_t k) {
  const SortLayout layout = sort_layout(in.types, keys);
  // word(i): the first order word of row i, as an unsigned 64-bit value.
  auto word_member = [&](KernelParams& p) {
    return fmt::format(
        "  __device__ __forceinline__ unsigned long long word(long long i) const {{\n"
        "    return (unsigned long long)({});\n  }}\n",
        LoweringContext::order_word(p, in, layout, 0, "i"));
  };
  const rt::BufferId state = ctx.allocate(fmt::format("n{}.topk_state", n.id), 8,
                                          rt::SizeExpr::fixed(kTopKStateWords), n.id, true);
  const int64_t bin_rows = ctx.options().top_k_bin_rows;

  // A strided pass over the rows: min(kTopKGrid, ceil(n / kTopKTile)) blocks.
  rt::SizeExpr rows = rt::SizeExpr::slot(in.size);
  rows.at_most = kTopKGrid * kTopKTile;
  const LaunchShape first_pass{rows, kTopKTile, kTopKThreads, true};
  // Levels after the first run only when n > min(bin_rows, kTopKMinBinRows) (else the first
  // level's bin holds few enough rows, topk.cuh): kTopKGrid blocks then, no launch otherwise.
  rt::SizeExpr later{-kTopKGrid * std::min(bin_rows, kTopKMinBinRows),
                     {rt::SizeTerm{kTopKGrid, {in.size}}}};
  later.saturate = true;
  later.at_most = kTopKGrid;
  const LaunchShape later_pass{later, 1, kTopKThreads, true};
  rt::SizeExpr later_one = later;
  later_one.at_most = 1;

  const int word_bits = layout.words[0].bits;
  const int first_shift = word_bits > kTopKDigitBits ? word_bits - kTopKDigitBits : 0;
  // A strided pass's kernel n<id>_<what>, emitted and launched; returns its arguments.
  auto strided = [&](std::string_view skeleton, std::string_view what, const LaunchShape& shape,
                     bool first) {
    KernelParams p;
    const std::string members = word_member(p);
    const std::string ns = p.slot(in.size), st = p.buffer(state, "void", false);
    const std::string name = ctx.kernel_name(n.id, what);
    const std::string make = ctx.functor(name + "_fn", p, members);
    SkeletonCall agent(ctx.templates(), std::string(skeleton), {std::to_string(kTopKThreads)},
                       "Agent");
    std::vector<CallArg> args = {"temp", ns};
    if (first) args.push_back(fmt::format("{}LL", first_shift));
    args.push_back(HookArg::lambda("unsigned long long", {{"long long", "i"}}, " return f.word(i); "));
    args.push_back(st);
    const std::string body = make + agent.declare() + agent.temp_storage() + agent.call("run", args);
    return std::make_pair(ctx.kernel(n.id, name, p, body, shape, agent), p.args());
  };
  // The pick after each level: one kernel for the whole unit (it reads the state and takes
  // k, the bin bound and the level's shift, -1 after the first, as arguments).
  const std::string pick = ctx.shared_kernel("topk_pick", [](const std::string& name) {
    return fmt::format(
        "extern \"C\" __global__ void __launch_bounds__({0}) {1}(void* __restrict__ state, "
        "long long n, long long k, long long bin_rows, long long first_shift) {{\n"
        "  __shared__ ranc::tpl::TopKPickTemp<{0}> temp;\n"
        "  ranc::tpl::topk_pick<{0}>(temp, state, n, k, bin_rows, first_shift);\n}}\n\n",
        kTopKThreads, name);
  });
  auto launch_pick = [&](int level, const LaunchShape& shape) {
    ctx.launch(n.id, pick,
               {rt::ArgBuffer{state}, rt::ArgSlot{in.size}, rt::ArgConst{k},
                rt::ArgConst{bin_rows}, rt::ArgConst{level == 0 ? first_shift : -1}},
               shape);
  };

  // Level 0: the range and the histogram of the top 11 bits in one pass; later levels (each
  // resolves 11 more bits of the first level's bins) only while a bin holds too many rows.
  // Every later level runs the same histogram kernel (the state says which bits it counts).
  strided("TopKFirstAgent", "topk_first", first_pass, true);
  const LaunchShape one{rt::SizeExpr::fixed(1), 1, kTopKThreads, false};
  launch_pick(0, one);
  const int levels = (first_shift + kTopKDigitBits - 1) / kTopKDigitBits;
  std::optional<std::pair<std::string, std::vector<rt::KernelArg>>> histogram;
  for (int l = 1; l <= levels; ++l) {
    if (!histogram)
      histogram = strided("TopKHistogramAgent", "topk_histogram", later_pass, false);
    else
      ctx.launch(n.id, histogram->first, histogram->second, later_pass);
    launch_pick(l, LaunchShape{later_one, 1, kTopKThreads, true});
  }

  // The kept rows: exactly state.kept of them.
  DeviceRelation out;
  out.types = in.types;
  out.size = ctx.new_slot();
  ctx.step(rt::ReadSize{out.size, state, kTopKKeptIndex});
  for (size_t c = 0; c < in.types.size(); ++c)
    out.columns.push_back(ctx.allocate(fmt::format("n{}.topk.c{}", n.id, c),
                                       type_size(in.types[c]), rt::SizeExpr::slot(out.size), n.id));
  KernelParams p;
  const std::string members = word_member(p);
  const std::string threshold =
      fmt::format("{}[3]", p.buffer(state, "unsigned long long"));  // TopKState::threshold
  const std::string copy = ctx.copy_row(p, in, "i", out, "o");
  ctx.select_kernel(n.id, "topk_select", in.size, p, fmt::format("word(i) <= {}", threshold),
                    copy, members, {}, "Select", false);
  return out;
}

// A sort the planner inserted for a reduce alone (its group-by by sorting) moves only the
// attributes the reduce reads: its input may carry others for other consumers (TPC-H Q17's
// lineitem also feeds a join: l_extendedprice, gathered for nothing, was half of the sort's
// gather). The others are left out (buffer -1: LoweringContext::sort gathers nothing).
DeviceRelation only_what_a_reduce_reads(LoweringContext& ctx, const Node& n, DeviceRelation in) {
  if (in.view || !ctx.physical(n.id).inserted || ctx.physical(n.id).keeps_words) return in;
  const auto readers = passes::consumers_of(ctx.program()).at(static_cast<size_t>(n.id));
  if (readers.size() != 1) return in;
  const Node& reader = ctx.program().node(readers[0].first);
  if (reader.kind != OpKind::Reduce) return in;
  const std::vector<bool> reads = passes::reduce_attributes_read(reader, in.columns.size());
  for (size_t c = 0; c < in.columns.size(); ++c)
    if (!reads[c]) in.columns[c] = -1;
  return in;
}

}  // namespace

void lower_sort(LoweringContext& ctx, const Node& n) {
  // A global barrier: its input is materialised, except a chain fused into the kernel that
  // packs whole tuples into words (fuse_pipelines), whose sorted words may stay packed for
  // the consumers (PhysicalNode::keeps_words).
  const NodeId i = n.inputs.at(0);
  const DeviceRelation& rel = ctx.relation(i);
  const DeviceRelation in = ctx.fused(i) ? rel : ctx.dense(rel);
  const passes::PhysicalNode& p = ctx.physical(n.id);
  if (p.top_k > 0 && !p.sort_keys.empty()) {
    ctx.set_relation(n.id, ctx.sort(n.id, top_k_rows(ctx, n, in, p.sort_keys, p.top_k), p.sort_keys));
    return;
  }
  ctx.set_relation(n.id, ctx.sort(n.id, only_what_a_reduce_reads(ctx, n, in), p.sort_keys,
                                  p.keeps_words));
}

}  // namespace ranc::codegen
