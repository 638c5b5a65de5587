// Lowering of join (sort-merge): the right input is sorted by the join keys (physical
// planning); each left row finds its range of equal right keys by binary search.
//   inner: count kernel (per-left-row range of equal keys) -> ScanInt64 -> read the total
//          -> JoinExpandAgent (join.cuh): load-balanced expansion of the key matches (skewed
//          keys spread over many blocks); with a residual, the expansion is compacted like a
//          select into an output sized by the key matches, and the exact size is read back.
//   semi/anti: a SelectAgent over the left rows whose predicate is "some right row in the
//          range satisfies the residual" (or its negation).
// The output keeps the left input's order.
// An inner join that physical planning gave JoinAlgorithm::Hash is lowered by
// lower_hash_join (hash_lowering.cpp) instead.
#include "ranc/codegen/lowering.h"
#include "hash_lowering.h"

namespace ranc::codegen {
namespace {

struct JoinCode {
  const Node& n;
  const DeviceRelation& L;
  const DeviceRelation& R;
  std::vector<int32_t> lcols, rcols;
  std::vector<bool> desc;
  std::vector<int32_t> right_rest;  // right non-key columns, in output order

  // Members: cmp(i, j), lower(i), upper(i, lo) and, with a residual, residual(i, j).
  std::string members(LoweringContext& ctx, KernelParams& p) const {
    std::string s = "  __device__ __forceinline__ int cmp(long long i, long long j) const {\n";
    s += LoweringContext::compare_body(p, L, "i", lcols, R, "j", rcols, desc) + "  }\n";
    std::string nr = p.slot(R.size);
    s += fmt::format(
        "  __device__ __forceinline__ long long lower(long long i) const {{\n"
        "    return ranc::tpl::partition_point(0, {0}, [&](long long j) {{ return cmp(i, j) > 0; "
        "}});\n  }}\n"
        "  __device__ __forceinline__ long long upper(long long i, long long lo) const {{\n"
        "    return ranc::tpl::partition_point(lo, {0}, [&](long long j) {{ return cmp(i, j) >= 0; "
        "}});\n  }}\n",
        nr);
    if (n.predicate.ptr()) {
      const size_t la = L.columns.size();
      std::string r = ctx.expr(n.predicate.ptr(), p, [&](int32_t c) {
        if (static_cast<size_t>(c) < la)
          return LoweringContext::load(p, L, static_cast<size_t>(c), "i");
        return LoweringContext::load(
            p, R, static_cast<size_t>(right_rest.at(static_cast<size_t>(c) - la)), "j");
      });
      s += fmt::format(
          "  __device__ __forceinline__ bool residual(long long i, long long j) const {{ return "
          "{}; }}\n",
          r);
    }
    return s;
  }
  // Statements writing left row i and right row j to output row o.
  std::string write(LoweringContext& ctx, KernelParams& p, const DeviceRelation& out) const {
    std::string s = ctx.copy_row(p, L, "i", out, "o");
    for (size_t k = 0; k < right_rest.size(); ++k) {
      size_t c = static_cast<size_t>(right_rest[k]);
      auto ct = storage_ctype(R.types[c]);
      s += fmt::format("    {}[o] = {}[j];\n",
                       p.buffer(out.columns[L.columns.size() + k], ct, false),
                       p.buffer(R.columns[c], ct));
    }
    return s;
  }
};

}  // namespace

void lower_join(LoweringContext& ctx, const Node& n) {
  if (ctx.physical(n.id).join == JoinAlgorithm::Hash) {
    lower_hash_join(ctx, n);
    return;
  }
  const DeviceRelation L = ctx.relation(n.inputs.at(0));
  const DeviceRelation R = ctx.relation(n.inputs.at(1));
  JoinCode jc{n, L, R, {}, {}, {}, {}};
  for (const auto& k : ctx.physical(n.id).compare_keys) {
    jc.lcols.push_back(n.left_key_index.at(static_cast<size_t>(k.index)));
    jc.rcols.push_back(n.right_key_index.at(static_cast<size_t>(k.index)));
    jc.desc.push_back(k.descending);
  }
  for (size_t c = 0; c < R.columns.size(); ++c)
    if (std::find(n.right_key_index.begin(), n.right_key_index.end(), static_cast<int32_t>(c)) ==
        n.right_key_index.end())
      jc.right_rest.push_back(static_cast<int32_t>(c));
  const bool residual = n.predicate.ptr() != nullptr;

  if (n.join_kind != JoinKind::Inner) {
    DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::slot(L.size), -1);
    KernelParams p;
    std::string m = jc.members(ctx, p);
    std::string found = residual ? "exists(i)" : "(upper(i, lower(i)) > lower(i))";
    if (residual)
      m += "  __device__ __forceinline__ bool exists(long long i) const {\n"
           "    const long long lo = lower(i), hi = upper(i, lo);\n"
           "    for (long long j = lo; j < hi; ++j)\n      if (residual(i, j)) return true;\n    "
           "return false;\n  }\n";
    std::string copy = ctx.copy_row(p, L, "i", out, "o");
    std::string pred = fmt::format("{}{}", n.join_kind == JoinKind::Anti ? "!" : "", found);
    out.size = ctx.select_kernel(n.id, n.join_kind == JoinKind::Semi ? "semijoin" : "antijoin",
                                 L.size, p, pred, copy, m);
    ctx.set_relation(n.id, out);
    return;
  }

  // Inner join: per-left-row key match ranges, their scan and total.
  rt::SizeExpr nl = rt::SizeExpr::slot(L.size);
  rt::BufferId lo = ctx.allocate(fmt::format("n{}.lower", n.id), 8, nl, n.id);
  rt::BufferId offs = -1;
  rt::SlotId total = -1;
  // A left input sorted by the join keys (in the comparison's sequence and directions)
  // takes JoinCountAgent: each tile narrows its searches to the right rows matching
  // its key range, and the counts are scanned in the same pass (decoupled look-back).
  const auto& lorder = ctx.physical(n.inputs.at(0)).order;
  bool left_sorted = lorder.size() >= jc.lcols.size();
  for (size_t t = 0; left_sorted && t < jc.lcols.size(); ++t)
    left_sorted = lorder[t].index == jc.lcols[t] && lorder[t].descending == jc.desc[t];
  if (left_sorted) {
    const int64_t ctile =
        static_cast<int64_t>(ctx.policy_threads("JoinCount")) * ctx.policy_items("JoinCount");
    rt::SlotId ctiles = ctx.num_tiles(n.id, L.size, -1, ctile);
    rt::BufferId cstate = ctx.tile_state(n.id, "count_state", "join_count_init", ctiles);
    rt::BufferId tot =
        ctx.allocate(fmt::format("n{}.total", n.id), 8, rt::SizeExpr::fixed(1), n.id);
    offs = ctx.allocate(fmt::format("n{}.offsets", n.id), 8, nl, n.id);
    KernelParams p;
    std::string m = jc.members(ctx, p);
    std::string ns = p.slot(L.size), nr = p.slot(R.size), plo = p.buffer(lo, "long long", false),
                po = p.buffer(offs, "long long", false), ts = p.buffer(cstate, "void", false),
                pt = p.buffer(tot, "long long", false);
    std::string name = ctx.kernel_name(n.id, "join_count");
    std::string make = ctx.functor(name + "_fn", p, m);
    std::string body = fmt::format(
        "{}  using Agent = ranc::tpl::JoinCountAgent<{}>;\n"
        "  __shared__ typename Agent::TempStorage temp;\n"
        "  Agent::run(temp, {}, {}, [&](long long i, long long j) {{ return f.cmp(i, j); }}, {}, "
        "{}, {}, {});\n",
        make, ctx.policy("JoinCount"), ns, nr, plo, po, ts, pt);
    ctx.kernel(n.id, name, p, body,
               LaunchShape{rt::SizeExpr::slot(ctiles), 1, ctx.policy_threads("JoinCount"), false});
    total = ctx.new_slot();
    ctx.step(rt::ReadSize{total, tot, 0});
  } else {
    rt::BufferId cnt = ctx.allocate(fmt::format("n{}.counts", n.id), 8, nl, n.id);
    KernelParams p;
    std::string m = jc.members(ctx, p);
    std::string plo = p.buffer(lo, "long long", false), pc = p.buffer(cnt, "long long", false);
    ctx.map_kernel(n.id, "join_count", p, L.size,
                   fmt::format("    const long long l = lower(i), h = upper(i, l);\n"
                               "    {}[i] = l;\n    {}[i] = h - l;\n",
                               plo, pc),
                   m);
    offs = ctx.allocate(fmt::format("n{}.offsets", n.id), 8,
                        rt::SizeExpr{1, {rt::SizeTerm{1, {L.size}}}}, n.id);
    ctx.step(rt::ScanInt64{cnt, offs, nl, n.id});
    total = ctx.read_element(n.id, offs, L.size);
  }

  // Expansion (join.cuh JoinExpandAgent): each block takes a tile of key matches and finds
  // their left rows by a load-balanced search over the offsets, so skewed keys spread over
  // many blocks. With a residual the matches are compacted like a select (output sized by
  // the key matches, an upper bound; the exact size is read back).
  const int64_t etile =
      static_cast<int64_t>(ctx.policy_threads("JoinExpand")) * ctx.policy_items("JoinExpand");
  rt::SlotId etiles = -1;
  rt::BufferId state = -1, count = -1;
  if (residual) {
    etiles = ctx.num_tiles(n.id, total, -1, etile);
    state = ctx.tile_state(n.id, "tile_state", "join_init", etiles);
    count = ctx.allocate(fmt::format("n{}.count", n.id), 8, rt::SizeExpr::fixed(1), n.id);
  }
  DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::slot(total), total);
  {
    KernelParams p;
    std::string m = residual ? jc.members(ctx, p) : "";
    std::string w = jc.write(ctx, p, out);
    m += fmt::format(
        "  __device__ __forceinline__ void write(long long i, long long j, long long o) const "
        "{{\n{}  }}\n",
        w);
    std::string plo = p.buffer(lo, "long long"), po = p.buffer(offs, "long long"),
                ns = p.slot(L.size), nt = p.slot(total);
    std::string ts, cn;
    if (residual) ts = p.buffer(state, "void", false), cn = p.buffer(count, "long long", false);
    std::string name = ctx.kernel_name(n.id, "join_write");
    std::string make = ctx.functor(name + "_fn", p, m);
    std::string body = fmt::format(
        "{}  using Agent = ranc::tpl::JoinExpandAgent<{}>;\n  __shared__ typename "
        "Agent::TempStorage temp;\n",
        make, ctx.policy("JoinExpand"));
    if (!residual) {
      body += fmt::format(
          "  Agent::run(temp, {}, {}, {}, {}, [&](long long i, long long j, long long o) {{ "
          "f.write(i, j, o); }});\n",
          nt, ns, plo, po);
      ctx.kernel(
          n.id, name, p, body,
          LaunchShape{rt::SizeExpr::slot(total), etile, ctx.policy_threads("JoinExpand"), true});
    } else {
      body += fmt::format(
          "  Agent::run_residual(temp, {}, {}, {}, {}, [&](long long i, long long j) {{ return "
          "f.residual(i, j); }},\n"
          "                      [&](long long i, long long j, long long o) {{ f.write(i, j, o); "
          "}}, {}, {});\n",
          nt, ns, plo, po, ts, cn);
      ctx.kernel(
          n.id, name, p, body,
          LaunchShape{rt::SizeExpr::slot(etiles), 1, ctx.policy_threads("JoinExpand"), false});
      out.size = ctx.new_slot();
      ctx.step(rt::ReadSize{out.size, count, 0});
    }
  }
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
