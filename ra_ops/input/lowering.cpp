// Lowering of input: one bound device buffer per attribute and a size slot. An input
// with a declared order ("sorted by") is verified before anything relies on it: when
// its only consumer is a reduce that compares adjacent rows by exactly the declared
// keys, a set operation merging packed order words (set_ops.cuh), a sort-merge inner
// join taking it as its left input sorted by the join keys (join.cuh), or a select (its
// view compares each row with its predecessor, in whatever kernel streams it), that
// consumer checks the order on the fly (no extra pass); otherwise a check kernel makes one pass over the key columns. Either way a row that orders before its predecessor sets a flag, and a
// CheckFlag step turns it into an ExecutionError naming the relation.
#include "ranc/codegen/lowering.h"

namespace ranc::codegen {
namespace {

// Does the one consumer of input `id` verify its declared order itself? True for a
// reduce whose group keys are exactly the declared order: it compares every row with
// its predecessor by those keys anyway.
bool consumer_checks_order(LoweringContext& ctx, NodeId id, const passes::Order& declared) {
  const Node* consumer = nullptr;
  int uses = 0;
  for (const Node& m : ctx.program().nodes())
    for (NodeId i : m.inputs)
      if (i == id) {
        consumer = &m;
        ++uses;
      }
  if (uses != 1) return false;
  // A select: whatever kernel reads its view (its materialisation, or the consumer it is
  // fused into) evaluates the view's keep for every row, and keep compares the row with
  // its predecessor first (ra_ops/select/lowering.cpp). Where the rows are read twice (a
  // count pass and a write pass) the flag is only set again.
  if (consumer->kind == OpKind::Select) return true;
  // The left input of a sort-merge inner join sorted by the join keys (JoinMergeAgent, or
  // JoinCountAgent with a filter after the join): each tile compares every left row with its
  // predecessor by the declared order (a hook of its own, so the declared order may have
  // more keys than the join).
  if (consumer->kind == OpKind::Join && consumer->join_kind == JoinKind::Inner &&
      consumer->inputs.at(0) == id &&
      ctx.physical(consumer->id).join == JoinAlgorithm::SortMerge)
    return passes::left_ordered_by_join_keys(declared, *consumer, ctx.physical(consumer->id));
  if (ctx.physical(consumer->id).compare_keys != declared) return false;
  // A reduce: its tiles are row ranges, so every (row - 1, row) pair is compared whatever the
  // data. A set operation whose tuples pack into one order word (SetOpKeysAgent, set_ops.cuh)
  // stages every row's word with its predecessor and also reports partitions that do not
  // advance, which unsorted input can produce; the comparator-based merge could skip rows of
  // unsorted input, so it gets the check kernel.
  if (consumer->kind == OpKind::Reduce) return true;
  const bool set_op = consumer->kind == OpKind::Union || consumer->kind == OpKind::Intersect ||
                      consumer->kind == OpKind::Difference;
  if (!set_op) return false;
  std::vector<Type> types;
  const Node& in = ctx.program().node(id);
  for (size_t c = 0; c < in.schema.size(); ++c) types.push_back(in.schema[c].type);
  return fits_one_order_word(types, declared);
}

}  // namespace

void lower_input(LoweringContext& ctx, const Node& n) {
  DeviceRelation r;
  r.size = ctx.new_slot();
  for (size_t c = 0; c < n.schema.size(); ++c) {
    Type t = n.schema[c].type;
    r.types.push_back(t);
    r.columns.push_back(ctx.declare(fmt::format("n{}.c{}", n.id, c), type_size(t),
                                    rt::SizeExpr::slot(r.size), n.id));
  }
  ctx.add_input(n, r);
  if (!n.sort_keys.empty() && !n.order_trusted) {
    std::vector<int32_t> cols;
    std::vector<bool> desc;
    passes::Order declared;
    for (const SortKey& k : n.sort_keys) {
      cols.push_back(k.index);
      desc.push_back(k.descending);
      declared.push_back({k.index, k.descending});
    }
    rt::BufferId flag =
        ctx.allocate(fmt::format("n{}.order_flag", n.id), 4, rt::SizeExpr::fixed(1), n.id, true);
    const std::string message = fmt::format(
        "input relation '{}' is not sorted by ({}) as declared; sort the data, or "
        "drop the declared order so that ranc sorts it",
        n.name, order_text(n.sort_keys));
    if (consumer_checks_order(ctx, n.id, declared)) {
      r.unverified = PendingOrderCheck{flag, message, cols, desc};
      ctx.set_relation(n.id, r);
      return;
    }
    KernelParams p;
    std::string cmp = LoweringContext::compare_body(p, r, "i", cols, r, "j", cols, desc);
    std::string fl = p.buffer(flag, "int", false), ns = p.slot(r.size);
    std::string name = ctx.kernel_name(n.id, "check_order");
    std::string make = ctx.functor(
        name + "_fn", p,
        fmt::format("  __device__ __forceinline__ int cmp(long long i, long long j) const {{\n{}  "
                    "}}\n",
                    cmp));
    SkeletonCall agent(ctx.templates(), "MapAgent", {ctx.tile_policy("Map")});
    // A thread's pairs are gathered into one flag and stored once: a store after each pair
    // kept the compiler from loading the next pair's rows before it, so each thread's pairs (16
    // with sm_90's Map policy) went to memory one after the other (SASS, session 52).
    std::string body =
        make + "  bool bad = false;\n" +
        agent.call("run", {ns, HookArg::lambda("void", {{"long long", "i"}},
                                               " bad |= i > 0 && f.cmp(i - 1, i) > 0; ")}) +
        fmt::format("  if (bad) {}[0] = 1;\n", fl);
    ctx.kernel(n.id, name, p, body, ctx.map_launch(rt::SizeExpr::slot(r.size)), agent);
    ctx.step(rt::CheckFlag{flag, message, n.id});
  }
  ctx.set_relation(n.id, r);
}

}  // namespace ranc::codegen
