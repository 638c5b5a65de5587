// Lowering of an inner join as a partitioned hash join (hash_join.cuh, paper 004's PHJ
// with GFTR), chosen by physical planning (PhysicalNode::join == Hash). The right input is
// the build side, the left the probe side (or the other way round with
// PhysicalNode::build_left: the left's join keys are its key and the right's are not), and
// the output columns are left then right non-key columns as the schema says. "left" and
// "right" below are the probe and the build side. Steps, in the order hash_join.cuh
// documents:
//   per side X in {left, right}:
//     n<id>_hash_keys_X:  h = hash_key(packed key) of every row that takes part, with what
//                         the join reads of the row later (Read): the 32-bit words of its
//                         4-byte attributes (Carried) and, when an 8-byte attribute is
//                         read, its row id (Row); key attributes are recovered from h
//                         (Key). Compacted when a fused select filters the side (a select
//                         kernel), else a map kernel.
//   s_bits = min(kMaxRadixBits, ceil_log2(ceil(n_right / kTargetBuildRows))), s_parts =
//   2^s_bits, computed on the host (no read-back). A build side of more than
//   kTargetBuildRows (2048) and at most CodegenOptions::hash_join_global_rows kept rows, or a
//   quarter of the probe rows kept (plan_build), takes 0 bits and a global table instead
//   (gated sizes, rt::SizeExpr::gate):
//     n<id>_hash_global_build: global_join_insert of every kept build row (hash_join.cuh's
//                              GlobalJoinTable, in device memory, about L2's size at most),
//   and the join's launch runs its _global kernel (rt::Launch::alt_kernel), which probes that
//   table with the probe rows in row order: neither side is partitioned.
//   per side: a radix partition of h on bits [0, s_bits) moving the row ids and carried
//     words along (one SortPairs step: CUB onesweep sorts, or with RANC_PARTITION_COLUMNS=1
//     builtins::partition_columns moving them all in one pass per 8 bits), and
//     n<id>_hash_bounds_X: the first row of every partition. With 0 bits nothing is
//     partitioned (row order is read).
//   n<id>_<ops>_hash: over tiles of the probe side, build each partition's rows into a
//                     shared-memory table and probe it, writing every output attribute of
//                     each match (left position i, right position j in partition order)
//                     directly into the output columns, sized by the probe rows (exact
//                     for a foreign-key join) and grown and run again when the matches
//                     need more (rt::Regrow).
// Or, when plan_paged_edges makes the output a paged list (its consumers all stream it),
// the same kernel (n<id>_<ops>_hash_paged) writes pages claimed per warp.
// The join's output is a view over the matches (i, j), so select and project stages after
// the join are evaluated in the join kernel (a select joins the residual); it is emitted
// when the view is materialised. Either input may be a view over row numbers
// (select/project fused into the key kernel): rows it drops are not partitioned.
// Keys are packed into one 32- or 64-bit word (passes::hash_join_key_bits): integers,
// dates, string codes and bools as unsigned values, floats by total_order_key so that two
// keys are equal exactly when their bits are (the IR's key semantics). The output has no
// order.
#include "hash_lowering.h"

namespace ranc::codegen {
namespace {

// C++ expression: key attribute `c` of `rel` at row `row` as an unsigned word.
std::string key_word(KernelParams& p, const DeviceRelation& rel, int32_t c, std::string_view row) {
  const Type t = rel.types[static_cast<size_t>(c)];
  std::string v = fmt::format("(({}){})", storage_ctype(t),
                              LoweringContext::raw(p, rel, static_cast<size_t>(c), row));
  switch (t) {
    case Type::F32:
    case Type::F64:
      return fmt::format("ranc::tpl::total_order_key({})", v);
    case Type::Bool:
      return fmt::format("({} != 0 ? 1u : 0u)", v);
    case Type::I64:
      return fmt::format("(unsigned long long){}", v);
    default:
      return fmt::format("(unsigned int){}", v);
  }
}

// C++ expression: the packed key of row `row` of `rel` (one word, or two 32-bit words).
std::string packed_key(KernelParams& p, const DeviceRelation& rel, const std::vector<int32_t>& cols,
                       std::string_view row) {
  if (cols.size() == 1) return key_word(p, rel, cols[0], row);
  return fmt::format("((unsigned long long){} << 32) | {}", key_word(p, rel, cols[0], row),
                     key_word(p, rel, cols[1], row));
}

// `r` itself when its rows can be streamed by row number, else materialised.
DeviceRelation streamed(LoweringContext& ctx, DeviceRelation r) {
  if (r.view && r.view->source != RowView::Source::Index) r = ctx.dense(r);
  return r;
}

// The width of the word join `n`'s keys pack into (passes::hash_join_key_bits; 0: none).
int packed_key_bits(const Node& n, const DeviceRelation& R) {
  std::vector<Type> key_types;
  for (int32_t c : n.right_key_index) key_types.push_back(R.types.at(static_cast<size_t>(c)));
  return passes::hash_join_key_bits(key_types);
}

// Whether a table of 2^bits slots is built in windows: a slot that is 1 when bits reaches
// CodegenOptions::hash_build_window_min_bits (a table larger than L2), else 0.
rt::SlotId windowed_slot(LoweringContext& ctx, rt::SlotId bits) {
  const rt::SlotId on = ctx.new_slot();
  ctx.step(rt::SetSize{on, rt::SizeExpr::fixed(1).gated(bits, ctx.options().hash_build_window_min_bits)});
  return on;
}

// The radix partition of a table built in windows of 2^window slots (hash_join.cuh,
// CodegenOptions::hash_build_window_bits): `radix` = the bits a table of 2^bits slots has
// above a window (at most the key word's; 0 unless slot `on` is set), `sorting` =
// min(1, radix), the factor of the partitioned rows (none when the table fits one window).
// `gate` bounds radix further (the global table's when it is not taken).
struct WindowSlots {
  rt::SlotId radix, sorting;
};
template <class Gate>
WindowSlots window_slots(LoweringContext& ctx, rt::SlotId bits, rt::SlotId on, int window,
                         int32_t key_size, const Gate& gate) {
  WindowSlots w{ctx.new_slot(), ctx.new_slot()};
  const rt::SlotId above = ctx.new_slot();
  rt::SizeExpr r{-int64_t{window}, {rt::SizeTerm{1, {bits}}}};
  r.saturate = true;
  r.at_most = 8 * key_size;  // (a table of more slots than 2^32: the low 32 bits of its index)
  ctx.step(rt::SetSize{above, gate(r)});
  ctx.step(rt::SetSize{w.radix, rt::SizeExpr::slot(above).gated(on, 1)});
  rt::SizeExpr z = rt::SizeExpr::slot(w.radix);
  z.at_most = 1;
  ctx.step(rt::SetSize{w.sorting, z});
  return w;
}

// How the join reads an attribute of a side at a position in partition order.
enum class Read : uint8_t {
  Key,      // a key attribute: recovered from the hashed key word (hash_key_inverse)
  Carried,  // a 4-byte attribute (or a bool) partitioned alongside the keys (GFTR)
  Row,      // an 8-byte attribute: through the partitioned row id
};

// One input of the join and, once partitioned, its buffers. Every array exists in row
// order (compacted, written by the key kernel; a dense side's int column is its own
// row-order array) and in partition order (empty when the radix bits are 0: then the join
// reads the row-order arrays).
struct Side {
  DeviceRelation rel;
  std::vector<int32_t> key_cols;
  std::string_view name;      // "left" or "right"
  std::vector<int32_t> needed = {};  // the attributes the join's output reads
  rt::SlotId kept = -1;       // rows taking part
  rt::BufferId hashed = -1, keys = -1;  // hashed keys: row order, partition order
  rt::BufferId ids = -1, rows = -1;     // row ids (uint32), when an attribute is read by Row
  std::vector<int32_t> carried = {};    // attributes read by Carried
  std::vector<rt::BufferId> carried_in = {}, carried_out = {};  // their 32-bit words: row, partition order
  rt::BufferId bounds = -1;   // first row of every partition: parts + 1 int64

  Read read(int32_t c) const {
    if (std::find(key_cols.begin(), key_cols.end(), c) != key_cols.end()) return Read::Key;
    return type_size(rel.types[static_cast<size_t>(c)]) == 8 ? Read::Row : Read::Carried;
  }
};

// C++ expression: the 32-bit word of the value `v` of type `t` (a carried attribute).
std::string word_of(Type t, const std::string& v) {
  if (t == Type::F32) return fmt::format("__float_as_uint({})", v);
  if (t == Type::Bool) return fmt::format("({} ? 1u : 0u)", v);
  return fmt::format("(unsigned int)({})", v);
}
// C++ expression: the value of type `t` whose 32-bit word is `w`.
std::string value_of_word(Type t, const std::string& w) {
  if (t == Type::F32) return fmt::format("__uint_as_float({})", w);
  if (t == Type::Bool) return fmt::format("({} != 0u)", w);
  return fmt::format("(int)({})", w);
}
// C++ expression: the value of key attribute type `t` from its unsigned key word `w`
// (key_word's inverse).
std::string value_of_key_word(Type t, const std::string& w) {
  switch (t) {
    case Type::F32:
      return fmt::format("ranc::tpl::from_total_order_key((unsigned int)({}))", w);
    case Type::F64:
      return fmt::format("ranc::tpl::from_total_order_key((unsigned long long)({}))", w);
    case Type::Bool:
      return fmt::format("(({}) != 0)", w);
    case Type::I64:
      return fmt::format("(long long)({})", w);
    default:
      return fmt::format("(int)(unsigned int)({})", w);
  }
}

struct HashJoinCode {
  LoweringContext& ctx;
  const Node& n;
  Side left, right;
  std::string key_t;  // "unsigned int" or "unsigned long long"
  int32_t key_size = 4;
  // The table is built on the left input and the right probes it (PhysicalNode::build_left);
  // the kernels' (probe, build) positions then reach the view's members as (j, i).
  bool build_left = false;
  Side& probe() { return build_left ? right : left; }
  Side& build() { return build_left ? left : right; }
  const Side& probe() const { return build_left ? right : left; }
  const Side& build() const { return build_left ? left : right; }
  // The view's members take (left position, right position); the agent passes (probe, build).
  const char* positions() const { return build_left ? "j, i" : "i, j"; }
  rt::SlotId bits = -1, parts = -1;
  rt::SlotId partitioned = -1;  // min(1, bits)
  // The global table (GlobalJoinTable; gcap is its capacity, 0 when the build side is
  // partitioned or fits one shared-memory table); -1 when the option turns it off.
  rt::SlotId gcap = -1, gmode = -1;  // gmode: 1 when the join probes the global table
  rt::BufferId gslots = -1, gheads = -1, gnext = -1;

  // "select_project_" when a fused chain feeds the side, for kernel names.
  std::string prefix(const Side& s) const {
    return s.rel.view ? s.rel.view->op_names(ctx.program()) + "_" : "";
  }

  // Step 1: the hashed keys of the rows that take part, in row order, with their row ids
  // and carried attributes.
  void hash_keys(Side& s) {
    const rt::SizeExpr rows = rt::SizeExpr::slot(s.rel.size);
    bool need_rows = false;
    for (int32_t c : s.needed) {
      if (s.read(c) == Read::Row) need_rows = true;
      if (s.read(c) == Read::Carried) s.carried.push_back(c);
    }
    s.hashed = ctx.allocate(fmt::format("n{}.{}_hashed", n.id, s.name), key_size, rows, n.id);
    if (need_rows) s.ids = ctx.allocate(fmt::format("n{}.{}_ids", n.id, s.name), 4, rows, n.id);
    // A carried attribute that is a column of a dense side with int storage is already the
    // array of its words in row order: the partition reads the column itself instead of a
    // copy (at 2^27 rows a copy is 0.5 GB written and read again). Float columns are copied,
    // so that the kernels never see one buffer as both float* and unsigned int*.
    std::vector<bool> copied;
    for (int32_t c : s.carried) {
      const Type t = s.rel.types[static_cast<size_t>(c)];
      const bool alias = !s.rel.view && value_ctype(t) == "int" && type_size(t) == 4;
      copied.push_back(!alias);
      s.carried_in.push_back(
          alias ? s.rel.columns[static_cast<size_t>(c)]
                : ctx.allocate(fmt::format("n{}.{}_c{}", n.id, s.name, c), 4, rows, n.id));
    }
    KernelParams p;
    const std::string hk = p.buffer(s.hashed, key_t, false);
    const std::string key = packed_key(p, s.rel, s.key_cols, "i");
    const std::string what = fmt::format("{}hash_keys_{}", prefix(s), s.name);
    const bool filters = s.rel.view && s.rel.view->filters;
    const std::string at = filters ? "o" : "i";
    std::string stmts = fmt::format("    {}[{}] = ranc::tpl::hash_key(({}){});\n", hk, at, key_t, key);
    if (need_rows)
      stmts += fmt::format("    {}[{}] = (unsigned int)i;\n", p.buffer(s.ids, "unsigned int", false), at);
    for (size_t k = 0; k < s.carried.size(); ++k) {
      if (!copied[k]) continue;
      const auto c = static_cast<size_t>(s.carried[k]);
      stmts += fmt::format("    {}[{}] = {};\n", p.buffer(s.carried_in[k], "unsigned int", false), at,
                           word_of(s.rel.types[c], LoweringContext::load(p, s.rel, c, "i")));
    }
    if (filters) {
      const std::string keep = LoweringContext::keep(p, s.rel, "i");
      s.kept = ctx.select_kernel(n.id, what, s.rel.size, p, keep, stmts, {},
                                 LoweringContext::fused_nodes({&s.rel}, n.id));
    } else {
      ctx.map_kernel(n.id, what, p, s.rel.size, stmts, {}, LoweringContext::fused_nodes({&s.rel}, n.id));
      s.kept = s.rel.size;
    }
  }

  // Steps 3 and 4: the radix partition and the partitions' bounds. The partition moves the
  // row ids (or the first carried attribute, or nothing) and the further carried attributes
  // (SortPairs::more_values), all by the same stable permutation. With 0 bits (the build side
  // fits one table) nothing is partitioned: the partition-order buffers get no rows and the
  // kernels read the row-order ones (sel).
  void partition(Side& s) {
    const rt::SizeExpr count{0, {rt::SizeTerm{1, {s.kept, partitioned}}}};
    const Type word = key_size == 8 ? Type::I64 : Type::I32;
    s.keys = ctx.allocate(fmt::format("n{}.{}_keys", n.id, s.name), key_size, count, n.id);
    for (size_t k = 0; k < s.carried.size(); ++k)
      s.carried_out.push_back(ctx.allocate(
          fmt::format("n{}.{}_c{}_part", n.id, s.name, s.carried[k]), 4, count, n.id));
    size_t first_carried = 0;
    rt::SortPairs main{s.hashed, s.keys, -1, -1, word, false, count, n.id, true};
    if (s.ids >= 0) {
      s.rows = ctx.allocate(fmt::format("n{}.{}_rows", n.id, s.name), 4, count, n.id);
      main.values_in = s.ids;
      main.values_out = s.rows;
    } else if (!s.carried.empty()) {
      main.values_in = s.carried_in[0];
      main.values_out = s.carried_out[0];
      first_carried = 1;
    }
    main.radix_bits = bits;
    // The other carried attributes move with the same permutation, in the same passes.
    for (size_t k = first_carried; k < s.carried.size(); ++k)
      main.more_values.push_back({s.carried_in[k], s.carried_out[k]});
    ctx.step(main);
    const rt::SizeExpr bound_count{1, {rt::SizeTerm{1, {parts}}}};
    s.bounds = ctx.allocate(fmt::format("n{}.{}_bounds", n.id, s.name), 8, bound_count, n.id);
    KernelParams p;
    const std::string nk = p.slot(s.kept), b = p.buffer(s.bounds, "long long", false);
    const std::string k = sel(p, s.keys, s.hashed, key_t), nb = p.slot(bits);
    // One binary search a bound, one a thread (MapSearch).
    const rt::SlotId nbounds = ctx.new_slot();
    ctx.step(rt::SetSize{nbounds, bound_count});
    ctx.map_kernel(n.id, fmt::format("hash_bounds_{}", s.name), p, nbounds,
                   fmt::format("    ranc::tpl::partition_bounds_search(i, {}, {}, {}, {});\n", nk, k, nb, b),
                   {}, {}, "MapSearch");
  }
  // C++ expression: the array in partition order, or in row order when the bits are 0.
  std::string sel(KernelParams& p, rt::BufferId part, rt::BufferId row, std::string_view ctype) const {
    return fmt::format("({} ? {} : {})", p.slot(bits), p.buffer(part, ctype), p.buffer(row, ctype));
  }
  // C++ expression: attribute c of side s at position `pos` (partition order), of its value type.
  std::string attr(KernelParams& p, const Side& s, int32_t c, std::string_view pos) const {
    const Type t = s.rel.types[static_cast<size_t>(c)];
    switch (s.read(c)) {
      case Read::Key: {
        const std::string w0 = fmt::format("ranc::tpl::hash_key_inverse({}[{}])",
                                           sel(p, s.keys, s.hashed, key_t), pos);
        if (s.key_cols.size() == 1) return value_of_key_word(t, w0);
        const bool first = s.key_cols[0] == c;
        return value_of_key_word(t, first ? fmt::format("(unsigned int)({} >> 32)", w0)
                                          : fmt::format("(unsigned int)({})", w0));
      }
      case Read::Carried: {
        const size_t k = static_cast<size_t>(
            std::find(s.carried.begin(), s.carried.end(), c) - s.carried.begin());
        return value_of_word(
            t, fmt::format("{}[{}]", sel(p, s.carried_out[k], s.carried_in[k], "unsigned int"), pos));
      }
      case Read::Row:
        break;
    }
    return LoweringContext::load(p, s.rel, static_cast<size_t>(c),
                                 fmt::format("(long long){}[{}]",
                                             sel(p, s.rows, s.ids, "unsigned int"), pos));
  }

  SkeletonCall join_agent() const {
    return SkeletonCall(ctx.templates(), "HashJoinAgent", {ctx.tile_policy("HashJoin"), key_t},
                        "Agent");
  }
  int64_t tile() const {
    return static_cast<int64_t>(ctx.policy_threads("HashJoin")) * ctx.policy_items("HashJoin");
  }
  // The join's grid: a block per probe tile and one more per two partitions (the kernel
  // spreads the probe rows evenly), so that a probe side smaller than the build side still
  // gets about a block per partition or two rather than a few blocks building many tables.
  rt::SizeExpr join_items() const {
    return rt::SizeExpr{0, {rt::SizeTerm{1, {probe().kept}}, rt::SizeTerm{tile() / 2, {parts}}}};
  }
  // A paged output has a chain of pages per warp, each ending in a partial page: its grid is
  // capped at kPagedBlocks blocks (each then takes several tiles) so that the partial pages
  // stay a bounded overhead.
  static constexpr int64_t kPagedBlocks = 1024;
  rt::SizeExpr paged_items() const {
    rt::SizeExpr e = join_items();
    e.at_most = kPagedBlocks * tile();
    return e;
  }
  // Bytes of HashJoinAgent's TempStorage with its default 8192 slots (a static_assert in the
  // kernel checks it).
  int64_t smem_bytes() const { return int64_t{8192} * (key_size + 4) + 64; }
  // Blocks an SM that __launch_bounds__ asks for: at most 64 registers a thread, so that two
  // 512-thread blocks share an SM. Left to itself ptxas gave the wide join (three carried
  // columns a side) 106 registers, one block an SM: its join kernel took 8.3 ms where it had
  // taken 6.5 ms, and capped at 64 the whole wide join went from 24.4 to 21.2 ms (H100, 2^27
  // rows, bench/RESULTS.md, session 26).
  int32_t min_blocks() const { return std::max(1, 65536 / (ctx.policy_threads("HashJoin") * 64)); }

  // Registers the parameters of HashJoinAgent::run from `bits` through the global table:
  // `global` for the kernel that probes the global table, else for the one that joins in
  // shared memory, whose table argument is a constant without one (its global-table code is
  // compiled out; both kernels take the same parameters).
  std::vector<CallArg> join_args(KernelParams& p, bool global) const {
    std::vector<CallArg> args = {p.slot(bits), p.slot(probe().kept)};
    for (const Side* s : {&probe(), &build()}) {
      args.emplace_back(CallArg(sel(p, s->keys, s->hashed, key_t)));
      args.emplace_back(p.buffer(s->bounds, "long long"));
    }
    const std::string g = global_table(p);
    args.emplace_back(CallArg(global ? g : std::string(kNoGlobalTable)));
    return args;
  }
  static constexpr const char* kNoGlobalTable = "ranc::tpl::GlobalJoinTable{nullptr, nullptr, nullptr, 0}";
  // C++ expression: the GlobalJoinTable argument (capacity 0 when there is none).
  std::string global_table(KernelParams& p) const {
    if (gcap < 0) return kNoGlobalTable;
    return fmt::format("ranc::tpl::GlobalJoinTable{{{}, {}, {}, {}}}",
                       p.buffer(gslots, "unsigned long long", false),
                       gheads >= 0 ? p.buffer(gheads, "unsigned int", false) : "nullptr",
                       p.buffer(gnext, "unsigned int", false), p.slot(gcap));
  }

  // The radix bits and, with the option on, the global table: build sides of at most
  // kSharedBuildRows kept rows join one shared-memory table per probe piece (0 bits); up to
  // max(the option's global rows, the probe rows kept / kGlobalProbeRatio, at most
  // kGlobalRatioMaxRows) they go into one table in device memory (0 bits, gcap > 0); larger
  // ones are partitioned into partitions of about kSharedBuildRows rows. All on the host
  // from the rows kept (no read-back). A table that fits L2 (2^21 rows: 32 MB of slots) beat
  // partitions at every probe size measured (ra_bench joinsizes, 1.4-2.6x at 2^16..2^22
  // probe rows); past L2 each probe is a random DRAM access, which still beat partitioning
  // both sides when the probe side was 4.4x (TPC-H SF 10 Q3, 7.3M build rows: 3.61 against
  // 4.65 ms) or 26x the build side (Q5: 3.96 against 6.11 ms), and lost at 0.2x (Q9's 15M
  // orders, 6.97 against 4.83 ms) and 1.1x (Q7, 8.00 against 7.56 ms) (H100, session 31).
  static constexpr int64_t kSharedBuildRows = 2048;  // HashJoinAgent<..., 8192>::kTargetBuildRows
  static constexpr int64_t kGlobalProbeRatio = 4;
  static constexpr int64_t kGlobalRatioMaxRows = int64_t{1} << 26;  // 1 GB of slots
  void plan_build() {
    const int64_t global_rows = ctx.options().hash_join_global_rows;
    const bool global = global_rows > kSharedBuildRows;
    // take = the build rows kept when they are at most max(global_rows, probe / ratio), else 0.
    rt::SlotId take = -1;
    if (global) {
      const rt::SlotId limit = ctx.new_slot();
      rt::SizeExpr l = rt::SizeExpr::slot(probe().kept);
      l.divisor = kGlobalProbeRatio;
      l.at_most = std::max(global_rows, kGlobalRatioMaxRows);
      l.at_least = global_rows;
      ctx.step(rt::SetSize{limit, l});
      const rt::SlotId over = ctx.new_slot();  // build rows past the limit, or 0
      rt::SizeExpr o{0, {rt::SizeTerm{1, {build().kept}}, rt::SizeTerm{-1, {limit}}}};
      o.saturate = true;
      ctx.step(rt::SetSize{over, o});
      take = ctx.new_slot();
      ctx.step(rt::SetSize{take, rt::SizeExpr::slot(build().kept).gated(over, 0, 0)});
    }
    bits = ctx.new_slot();
    rt::SizeExpr b = rt::SizeExpr::slot(build().kept);
    b.divisor = kSharedBuildRows;
    b.fn = rt::SizeFn::CeilLog2;
    b.at_most = 16;  // kMaxRadixBits
    // Partitions only when the global table is not taken.
    ctx.step(rt::SetSize{bits, global ? b.gated(take, 0, 0) : b});
    partitioned = ctx.new_slot();
    rt::SizeExpr z = rt::SizeExpr::slot(bits);
    z.at_most = 1;
    ctx.step(rt::SetSize{partitioned, z});
    parts = ctx.new_slot();
    rt::SizeExpr q = rt::SizeExpr::slot(bits);
    q.fn = rt::SizeFn::Pow2;
    ctx.step(rt::SetSize{parts, q});
    ctx.emit(fmt::format(
        "static_assert(ranc::tpl::kMaxRadixBits == 16 && "
        "ranc::tpl::HashJoinAgent<{}, unsigned int>::kTargetBuildRows == {}, "
        "\"hash_lowering.cpp's radix bits follow hash_join.cuh\");\n",
        ctx.policy("HashJoin"), kSharedBuildRows));
    if (!global) return;
    // gcap = 2^ceil_log2(2 * kept) when the global table is taken, else 0.
    auto gated = [&](const rt::SizeExpr& e) { return e.gated(take, kSharedBuildRows + 1); };
    const rt::SlotId glog = ctx.new_slot();
    rt::SizeExpr l{0, {rt::SizeTerm{2, {build().kept}}}};
    l.fn = rt::SizeFn::CeilLog2;
    ctx.step(rt::SetSize{glog, l});
    gcap = ctx.new_slot();
    rt::SizeExpr c = rt::SizeExpr::slot(glog);
    c.fn = rt::SizeFn::Pow2;
    ctx.step(rt::SetSize{gcap, gated(c)});
    const rt::SlotId gbuild = ctx.new_slot();
    ctx.step(rt::SetSize{gbuild, gated(rt::SizeExpr::slot(build().kept))});
    gmode = ctx.new_slot();
    ctx.step(rt::SetSize{gmode, gated(rt::SizeExpr::fixed(1))});
    // 64-bit keys keep the one key whose hash is all ones in slot `capacity`.
    const rt::SizeExpr slots{key_size == 8 ? 1 : 0, {rt::SizeTerm{1, {gcap}}}};
    gslots = ctx.allocate(fmt::format("n{}.global_table", n.id), 8, gated(slots), n.id, /*zero=*/true);
    if (key_size == 8)
      gheads = ctx.allocate(fmt::format("n{}.global_heads", n.id), 4, gated(slots), n.id, /*zero=*/true);
    gnext = ctx.allocate(fmt::format("n{}.global_next", n.id), 4, rt::SizeExpr::slot(gbuild), n.id);
    const int window = ctx.options().hash_build_window_bits;
    if (window >= 0) {
      build_global_in_windows(window, glog, gbuild, gated);
      return;
    }
    // The build: one thread per kept build row, its hashed key in row order.
    KernelParams p;
    const std::string t = global_table(p);
    const std::string hk = p.buffer(build().hashed, key_t);
    // One row a thread (MapSearch): an insert is a chain of dependent atomics; at 16 rows a
    // thread they ran one after another (4096 rows took 0.12 ms, H100).
    ctx.map_kernel(n.id, "hash_global_build", p, gbuild,
                   fmt::format("    ranc::tpl::global_join_insert({}, {}[i], (unsigned int)i);\n", t, hk),
                   {}, {}, "MapSearch");
  }
  // The global table built in windows of 2^window slots (hash_join.cuh,
  // CodegenOptions::hash_build_window_bits): the kept build rows' window_rotate'd hashes with
  // their positions, radix-partitioned on the bits the table's 2^glog slots have above a
  // window, then inserted in that order; a table that fits one window, or of fewer than
  // 2^hash_build_window_min_bits slots, is built from the hashes in row order (no words, no
  // partition).
  template <class Gated>
  void build_global_in_windows(int window, rt::SlotId glog, rt::SlotId gbuild, const Gated& gated) {
    const WindowSlots ws = window_slots(ctx, glog, windowed_slot(ctx, glog), window, key_size, gated);
    const rt::SlotId rows = ctx.new_slot();  // the rows partitioned: gbuild, or 0
    ctx.step(rt::SetSize{rows, rt::SizeExpr{0, {rt::SizeTerm{1, {gbuild, ws.sorting}}}}});
    auto array = [&](const char* name, int32_t bytes) {
      return ctx.allocate(fmt::format("n{}.{}", n.id, name), bytes, rt::SizeExpr::slot(rows), n.id);
    };
    const rt::BufferId words = array("global_words", key_size), ids = array("global_ids", 4);
    const rt::BufferId swords = array("global_windows", key_size), sids = array("global_window_ids", 4);
    {
      KernelParams p;
      ctx.map_kernel(n.id, "hash_global_words", p, rows,
                     fmt::format("    {}[i] = ranc::tpl::window_rotate<{}>({}[i]);\n"
                                 "    {}[i] = (unsigned int)i;\n",
                                 p.buffer(words, key_t, false), window,
                                 p.buffer(build().hashed, key_t), p.buffer(ids, "unsigned int", false)));
    }
    rt::SortPairs sort{words, swords, ids, sids, key_size == 8 ? Type::I64 : Type::I32, false,
                       rt::SizeExpr::slot(rows), n.id, true};
    sort.radix_bits = ws.radix;
    ctx.step(sort);
    KernelParams p;
    const std::string t = global_table(p);
    const std::string on = p.slot(ws.sorting);
    ctx.map_kernel(n.id, "hash_global_build", p, gbuild,
                   fmt::format("    if ({0}) ranc::tpl::global_join_insert({1}, "
                               "ranc::tpl::window_unrotate<{2}>({3}[i]), {4}[i]);\n"
                               "    else ranc::tpl::global_join_insert({1}, {5}[i], (unsigned int)i);\n",
                               on, t, window, p.buffer(swords, key_t), p.buffer(sids, "unsigned int"),
                               p.buffer(build().hashed, key_t)),
                   {}, {}, "MapSearch");
  }

  // The hook for the view's filter (residual and fused selects) at the match's positions.
  HookArg filter_hook(KernelParams& p, const DeviceRelation& view) const {
    if (view.view->keep_fn.empty()) return HookArg::stock("NoResidual");
    p.use(*view.view);
    return HookArg::lambda("bool", {{"long long", "i"}, {"long long", "j"}},
                           fmt::format(" return f.{}({}); ", view.view->keep_fn, positions()));
  }
  HookArg emit_hook() const {
    return HookArg::lambda("void", {{"long long", "i"}, {"long long", "j"}, {"long long", "o"}},
                           fmt::format(" f.emit({}, o); ", positions()));
  }
  // HashJoinAgent's arguments in order: `lead`, the partitions (join_args), the residual,
  // emit, then `rest`.
  static std::vector<CallArg> join_call(std::vector<CallArg> lead, std::vector<CallArg> parts,
                                        HookArg residual, HookArg emit, std::vector<CallArg> rest) {
    for (CallArg& a : parts) lead.push_back(std::move(a));
    lead.emplace_back(std::move(residual));
    lead.emplace_back(std::move(emit));
    for (CallArg& a : rest) lead.push_back(std::move(a));
    return lead;
  }

  // The functor member that writes every output attribute of the match (left position i,
  // right position j) to output row (or page handle) o of `out`.
  std::string emit_member(KernelParams& p, const DeviceRelation& view,
                          const DeviceRelation& out) const {
    return fmt::format(
        "  __device__ __forceinline__ void emit(long long i, long long j, long long o) "
        "const {{\n{}  }}\n",
        ctx.copy_row(p, view, "i, j", out, "o"));
  }

  // Emits join kernel n<last>_<what> (dense or paged): its functor with `member`, the
  // agent's TempStorage in dynamic shared memory, `pre` statements and the agent call
  // call(false), launched over `items` with `regrow`; with the global table on, also
  // n<last>_<what>_global with call(true), which the launch runs instead when the build side
  // takes the global table (rt::Launch::alt_kernel): each kernel holds one way's code.
  void join_kernel(const RowView& v, const std::string& what, KernelParams& p,
                   const std::string& member, const SkeletonCall& agent, const std::string& pre,
                   const std::function<std::string(bool)>& call, rt::SizeExpr items, rt::Regrow regrow) {
    const NodeId at = v.nodes.back();
    const std::string name = ctx.kernel_name(at, what);
    const std::string head = ctx.functor(name + "_fn", p, member) + agent.declare() +
                             agent.dynamic_temp_storage(smem_bytes()) + pre;
    LaunchShape shape{std::move(items), tile(), ctx.policy_threads("HashJoin"), true,
                      v.nodes, std::move(regrow), static_cast<int32_t>(smem_bytes()),
                      min_blocks()};
    global_specialisation(at, what, p, head + call(true), shape);
    ctx.kernel(n.id, name, p, head + call(false), shape, agent);
  }
  // With the global table on: emits n<at>_<what>_global (`body`) and makes `shape`'s launch
  // run it when gmode is 1.
  void global_specialisation(NodeId at, const std::string& what, KernelParams& p,
                             const std::string& body, LaunchShape& shape) {
    if (gcap < 0) return;
    shape.alt_kernel = ctx.emit_kernel(ctx.kernel_name(at, what + "_global"), p, body, shape);
    shape.alt_when = gmode;
  }

  // The dense output, sized by the probe rows and grown when the matches need more.
  DeviceRelation write_dense(const DeviceRelation& rel) {
    const RowView& v = *rel.view;
    const Node& last = ctx.program().node(v.nodes.back());
    const std::string ops = v.op_names(ctx.program());
    const rt::SlotId cap = ctx.new_slot();
    rt::SizeExpr capx = rt::SizeExpr::slot(probe().kept);
    capx.at_least = 1;
    ctx.step(rt::SetSize{cap, capx});
    const rt::SlotId total = ctx.new_slot();
    DeviceRelation out = ctx.allocate_relation(last, rel.types, rt::SizeExpr::slot(cap), total);
    rt::BufferId header =
        ctx.allocate(fmt::format("n{}.matches", n.id), 8, rt::SizeExpr::fixed(1), n.id, true);
    KernelParams p;
    join_args(p, true);
    HookArg hook = filter_hook(p, rel);
    std::string pc = p.slot(cap), hd = p.buffer(header, "unsigned long long", false);
    std::string member = emit_member(p, rel, out);
    SkeletonCall agent = join_agent();
    auto call = [&](bool global) {
      return agent.call("run", join_call({"temp"}, join_args(p, global), hook, emit_hook(), {pc, hd}),
                        {global ? "true" : "false"});
    };
    join_kernel(v, ops + "_hash", p, member, agent, "", call, join_items(),
                rt::Regrow{header, 0, cap, total, out.columns});
    return out;
  }

  // A global reduce folded into the join (join_reduce.cuh's HashJoinReduceAgent): the join
  // kernel's grid passes every match to the reduce's fold, which applies the view's stages
  // (FoldSpec::members), and each block writes one partial state; nothing is written of the
  // matches, and no output is sized or grown.
  FoldPartials fold(const DeviceRelation& rel, const FoldSpec& spec) {
    const RowView& v = *rel.view;
    KernelParams& p = *spec.params;
    std::vector<NodeId> nodes = v.nodes;
    nodes.push_back(spec.reduce);
    FoldPartials out;
    out.count = ctx.new_slot();  // the join's blocks, as the runtime computes its grid
    {
      rt::SizeExpr b = join_items();
      b.divisor = tile();
      b.at_least = 1;
      ctx.step(rt::SetSize{out.count, b});
    }
    out.partials = ctx.allocate(fmt::format("n{}.partials", spec.reduce), 8,
                                rt::SizeExpr{0, {rt::SizeTerm{spec.state_words, {out.count}}}},
                                spec.reduce);
    join_args(p, true);
    const std::string pp = p.buffer(out.partials, "void", false);
    p.slot(out.count);
    const std::string fn = spec.name + "_fn";
    SkeletonCall agent(ctx.templates(), "HashJoinReduceAgent", {ctx.tile_policy("HashJoin"), key_t},
                       "Agent");
    agent.bind("State", spec.state);
    // The view's filter (the join's residual, fused selects) is part of fold: no residual.
    auto call = [&](bool global) {
      return agent.call("run",
                        join_call({"temp"}, join_args(p, global), HookArg::stock("NoResidual"),
                                  fold_agg_object(spec.state), {pp}),
                        {global ? "true" : "false"});
    };
    const std::string head = ctx.functor(fn, p, spec.members) +
                             fold_agg_struct(fn, spec.state, build_left) +
                             agent.declare() + agent.dynamic_temp_storage(smem_bytes());
    LaunchShape shape{join_items(), tile(), ctx.policy_threads("HashJoin"), true, nodes,
                      std::nullopt, static_cast<int32_t>(smem_bytes()), min_blocks()};
    global_specialisation(spec.reduce, spec.what + "_global", p, head + call(true), shape);
    ctx.kernel(spec.reduce, spec.name, p, head + call(false), shape, agent);
    return out;
  }

  // One pass writing a paged list (paged.cuh), each warp claiming pages for its matches.
  // The capacity estimate is the left rows kept (a foreign-key join's output at most) plus
  // one partial page per warp of every block; when the matches need more, the runtime
  // grows the pages to the exact count the first run claimed and runs the kernel again
  // (rt::Regrow).
  DeviceRelation write_paged(const DeviceRelation& rel) {
    const RowView& v = *rel.view;
    const NodeId id = n.id;
    const Node& last = ctx.program().node(v.nodes.back());
    const std::string ops = v.op_names(ctx.program());
    const int64_t R = ctx.options().page_rows;
    const int64_t warps = ctx.policy_threads("HashJoin") / 32;  // one chain of pages each
    const rt::SlotId tiles = ctx.new_slot();  // the join's blocks
    {
      rt::SizeExpr b = paged_items();
      b.divisor = tile();
      b.at_least = 1;
      ctx.step(rt::SetSize{tiles, b});
    }
    const rt::SlotId cap = ctx.new_slot();
    rt::SizeExpr capx{0, {rt::SizeTerm{1, {probe().kept}}, rt::SizeTerm{warps * R, {tiles}}}, R};
    capx.at_least = 1;
    ctx.step(rt::SetSize{cap, capx});
    DeviceRelation out =
        ctx.allocate_relation(last, rt::SizeExpr{0, {rt::SizeTerm{R, {cap}}}}, -1);
    const rt::SizeExpr pages = rt::SizeExpr::slot(cap);
    rt::BufferId page_rows = ctx.allocate(fmt::format("n{}.page_rows", last.id), 4, pages, id);
    rt::BufferId page_next = ctx.allocate(fmt::format("n{}.page_next", last.id), 4, pages, id);
    rt::BufferId heads = ctx.allocate(fmt::format("n{}.page_heads", last.id), 4,
                                      rt::SizeExpr{0, {rt::SizeTerm{warps, {tiles}}}}, id);
    rt::BufferId header =
        ctx.allocate(fmt::format("n{}.page_header", last.id), 8, rt::SizeExpr::fixed(4), id, true);
    const rt::SlotId claimed = ctx.new_slot();
    {
      KernelParams p;
      join_args(p, true);
      HookArg hook = filter_hook(p, rel);
      std::string pr = p.buffer(page_rows, "int", false), pn = p.buffer(page_next, "int", false),
                  ph = p.buffer(heads, "int", false), hd = p.buffer(header, "long long", false),
                  pc = p.slot(cap);
      std::string member = emit_member(p, rel, out);
      SkeletonCall agent = join_agent();
      auto call = [&](bool global) {
        return agent.call("run_paged", join_call({"temp", "out"}, join_args(p, global), hook, emit_hook(), {}),
                          {std::to_string(R), global ? "true" : "false"});
      };
      std::vector<rt::BufferId> grow = out.columns;
      grow.push_back(page_rows);
      grow.push_back(page_next);
      join_kernel(v, ops + "_hash_paged", p, member, agent,
                  fmt::format("  const ranc::tpl::PagedOut out{{{}, {}, {}, {}, {}}};\n", pr, pn,
                              ph, hd, pc),
                  call, paged_items(), rt::Regrow{header, 0, cap, claimed, std::move(grow)});
    }
    // The paged list as a view over its page slots.
    rt::SlotId slots = ctx.new_slot();
    ctx.step(rt::SetSize{slots, rt::SizeExpr{0, {rt::SizeTerm{R, {claimed}}}}});
    RowView pv;
    pv.paged = true;
    pv.owner = last.id;
    for (rt::BufferId b : out.columns) pv.attrs.push_back(ViewAttr{b, ""});
    pv.keep_fn = fmt::format("v{}_paged", last.id);
    pv.deps.add_member(pv.keep_fn,
                       fmt::format("  __device__ __forceinline__ bool {}(long long i) const {{ "
                                   "return ranc::tpl::paged_keep<{}>({}, i); }}\n",
                                   pv.keep_fn, R, pv.deps.buffer(page_rows, "int")));
    pv.filters = true;
    return make_view(std::move(pv), out.types, slots);
  }
};

}  // namespace

void lower_hash_join(LoweringContext& ctx, const Node& n) {
  // Both inputs are streamed once by the key kernels: views over row numbers fuse.
  const DeviceRelation L = streamed(ctx, ctx.relation(n.inputs.at(0)));
  const DeviceRelation R = streamed(ctx, ctx.relation(n.inputs.at(1)));
  const int key_bits = packed_key_bits(n, R);
  internal_check(n.join_kind == JoinKind::Inner && key_bits != 0,
                 "hash join planned for a join it cannot run");
  auto hjp = std::make_shared<HashJoinCode>(HashJoinCode{ctx,
                                                         n,
                                                         Side{L, n.left_key_index, "left"},
                                                         Side{R, n.right_key_index, "right"},
                                                         key_bits == 64 ? "unsigned long long"
                                                                        : "unsigned int",
                                                         key_bits / 8});
  HashJoinCode& hj = *hjp;
  hj.build_left = ctx.physical(n.id).build_left;

  // What the output reads of each side: every left attribute, the right's non-keys.
  for (size_t c = 0; c < L.types.size(); ++c) hj.left.needed.push_back(static_cast<int32_t>(c));
  const std::vector<int32_t> right_rest = right_non_keys(n, R);
  hj.right.needed = right_rest;
  // Hashed keys of both sides, then the radix bits (or the global table) from the build rows
  // kept (on the host), then both partitions.
  hj.hash_keys(hj.left);
  hj.hash_keys(hj.right);
  hj.plan_build();
  hj.partition(hj.left);
  hj.partition(hj.right);

  // The output: a view over the matches (left position i, right position j, in partition
  // order), whose attributes read the partitioned arrays.
  RowView v;
  v.source = RowView::Source::HashJoin;
  KernelParams& d = v.deps;
  std::vector<Type> types;
  auto add_attr = [&](const Side& s, int32_t c, std::string_view pos) {
    const std::string fn = fmt::format("v{}_a{}", n.id, types.size());
    const Type t = s.rel.types[static_cast<size_t>(c)];
    d.add_member(fn, fmt::format("  __device__ __forceinline__ {} {}(long long i, long long j) "
                                 "const {{ return {}; }}\n",
                                 value_ctype(t), fn, hj.attr(d, s, c, pos)));
    v.attrs.push_back(ViewAttr{-1, fn});
    types.push_back(t);
  };
  for (int32_t c : hj.left.needed) add_attr(hj.left, c, "i");
  for (int32_t c : right_rest) add_attr(hj.right, c, "j");
  if (n.predicate.ptr()) {
    std::string pred = ctx.expr(n.predicate.ptr(), d, [&](int32_t c) {
      if (static_cast<size_t>(c) < L.types.size()) return hj.attr(d, hj.left, c, "i");
      return hj.attr(d, hj.right, right_rest.at(static_cast<size_t>(c) - L.types.size()), "j");
    });
    const std::string fn = fmt::format("v{}_keep", n.id);
    d.add_member(fn, fmt::format("  __device__ __forceinline__ bool {}(long long i, long long j) "
                                 "const {{ return {}; }}\n",
                                 fn, pred));
    v.keep_fn = fn;
    v.filters = true;
  }
  v.nodes.push_back(n.id);
  v.materialize = [hjp](LoweringContext&, const DeviceRelation& rel, bool paged) {
    return paged ? hjp->write_paged(rel) : hjp->write_dense(rel);
  };
  v.fold = [hjp](LoweringContext&, const DeviceRelation& rel, const FoldSpec& spec) {
    return hjp->fold(rel, spec);
  };
  ctx.set_relation(n.id, make_view(std::move(v), std::move(types), hj.probe().rel.size));
}

// A semi or anti join's hash set built in windows of 2^window slots (hash_join.cuh;
// CodegenOptions::hash_build_window_bits) when slot `on` is set (a set of at least
// 2^hash_build_window_min_bits slots; else `rows` = 0 and none of this runs): the right rows'
// hash_window_words (compacted when a fused select drops rows: one read-back of the rows
// kept), radix-partitioned on the bits the set's capacity 2^bits has above a window
// (SortPairs::radix_bits; none, and no copy, when the set fits one window), then inserted in
// that order, one thread a word.
void build_hash_set_in_windows(LoweringContext& ctx, const Node& n, const DeviceRelation& R,
                               const std::string& key_t, int32_t key_size, int window,
                               rt::SlotId bits, rt::SlotId on, rt::SlotId rows,
                               rt::SlotId capacity, rt::BufferId slots) {
  const rt::BufferId words = ctx.allocate(fmt::format("n{}.hash_set_words", n.id), key_size,
                                          rt::SizeExpr::slot(rows), n.id);
  rt::SlotId kept = rows;
  {
    KernelParams p;
    const bool filters = R.view && R.view->filters;
    const std::string stmts =
        fmt::format("    {}[{}] = ranc::tpl::hash_window_word<{}>(({})({}));\n",
                    p.buffer(words, key_t, false), filters ? "o" : "i", window, key_t,
                    packed_key(p, R, n.right_key_index, "i"));
    const std::string what =
        (R.view ? R.view->op_names(ctx.program()) + "_" : std::string()) + "hash_set_words";
    if (filters) {
      const std::string keep = LoweringContext::keep(p, R, "i");
      kept = ctx.select_kernel(n.id, what, rows, p, keep, stmts, {},
                               LoweringContext::fused_nodes({&R}, n.id), "Select", true, on);
    } else {
      ctx.map_kernel(n.id, what, p, rows, stmts, {}, LoweringContext::fused_nodes({&R}, n.id));
    }
  }
  const WindowSlots ws = window_slots(ctx, bits, on, window, key_size, [](rt::SizeExpr e) { return e; });
  const rt::SizeExpr count{0, {rt::SizeTerm{1, {kept, ws.sorting}}}};
  const rt::BufferId sorted =
      ctx.allocate(fmt::format("n{}.hash_set_windows", n.id), key_size, count, n.id);
  rt::SortPairs sort{words, sorted, -1, -1, key_size == 8 ? Type::I64 : Type::I32, false, count,
                     n.id, true};
  sort.radix_bits = ws.radix;
  ctx.step(sort);
  KernelParams p;
  const std::string ps = p.buffer(slots, key_t, false), pc = p.slot(capacity);
  const std::string from = fmt::format("({} ? {} : {})", p.slot(ws.sorting), p.buffer(sorted, key_t),
                                       p.buffer(words, key_t));
  ctx.map_kernel(n.id, "hash_set_window_build", p, kept,
                 fmt::format("    (void)ranc::tpl::hash_set_insert_hashed({}, {}, "
                             "ranc::tpl::window_unrotate<{}>({}[i]));\n",
                             ps, pc, window, from));
}

void lower_hash_semi_join(LoweringContext& ctx, const Node& n) {
  // The right side is streamed once by the build kernel (a fused select drops rows there);
  // the left side is the stream the stage joins.
  const DeviceRelation L = streamed(ctx, ctx.relation(n.inputs.at(0)));
  const DeviceRelation R = streamed(ctx, ctx.relation(n.inputs.at(1)));
  const int key_bits = packed_key_bits(n, R);
  internal_check((n.join_kind == JoinKind::Semi || n.join_kind == JoinKind::Anti) && key_bits != 0,
                 "hash semi join planned for a join it cannot run");
  const std::string key_t = key_bits == 64 ? "unsigned long long" : "unsigned int";
  const int32_t key_size = key_bits / 8;
  const bool residual = n.predicate.ptr() != nullptr;

  // capacity = 2^ceil_log2(2 * n_right): at most half full (n_right counts the rows a fused
  // select may drop, so it bounds the keys). Computed on the host, no read-back.
  const rt::SlotId bits = ctx.new_slot();
  {
    rt::SizeExpr b{0, {rt::SizeTerm{2, {R.size}}}};
    b.at_least = 2;
    b.fn = rt::SizeFn::CeilLog2;
    ctx.step(rt::SetSize{bits, b});
  }
  const rt::SlotId capacity = ctx.new_slot();
  {
    rt::SizeExpr q = rt::SizeExpr::slot(bits);
    q.fn = rt::SizeFn::Pow2;
    ctx.step(rt::SetSize{capacity, q});
  }
  const rt::SizeExpr table{1, {rt::SizeTerm{1, {capacity}}}};  // capacity + 1
  const rt::BufferId slots =
      ctx.allocate(fmt::format("n{}.hash_set", n.id), key_size, table, n.id, /*zero=*/true);
  rt::BufferId heads = -1, next = -1;
  if (residual) {
    heads = ctx.allocate(fmt::format("n{}.hash_heads", n.id), 8, table, n.id, /*zero=*/true);
    next = ctx.allocate(fmt::format("n{}.hash_next", n.id), 8, rt::SizeExpr::slot(R.size), n.id);
  }

  // The rows built in row order: all of them, or none when the set is built in windows.
  rt::SlotId in_rows = R.size;
  const int window = ctx.options().hash_build_window_bits;
  if (window >= 0 && !residual) {
    const rt::SlotId on = windowed_slot(ctx, bits);
    auto gated = [&](int64_t lo, int64_t hi) {
      const rt::SlotId s = ctx.new_slot();
      ctx.step(rt::SetSize{s, rt::SizeExpr::slot(R.size).gated(on, lo, hi)});
      return s;
    };
    in_rows = gated(0, 0);
    build_hash_set_in_windows(ctx, n, R, key_t, key_size, window, bits, on, gated(1, -1),
                              capacity, slots);
  }
  {  // The build: one thread per right row that takes part, in row order.
    KernelParams p;
    const std::string keep = LoweringContext::keep(p, R, "i");
    const std::string word = packed_key(p, R, n.right_key_index, "i");
    const std::string ps = p.buffer(slots, key_t, false), pc = p.slot(capacity);
    std::string body = fmt::format(
        "    if (!({})) return;\n"
        "    const long long at = ranc::tpl::hash_set_insert({}, {}, ({})({}));\n",
        keep, ps, pc, key_t, word);
    if (residual)
      body += fmt::format("    ranc::tpl::hash_chain_push({}, {}, at, i);\n",
                          p.buffer(heads, "long long", false), p.buffer(next, "long long", false));
    else
      body += "    (void)at;\n";
    const std::string what =
        (R.view ? R.view->op_names(ctx.program()) + "_" : std::string()) + "hash_set_build";
    ctx.map_kernel(n.id, what, p, in_rows, body, {}, LoweringContext::fused_nodes({&R}, n.id));
  }

  // The stage over the left rows: keep(i) = the left view keeps row i and its key is in the
  // set (with a residual: some right row of its key's chain satisfies it), negated for anti.
  RowView v = view_of(L);
  KernelParams& d = v.deps;
  const std::string pre = fmt::format("v{}_", n.id);
  const std::string ds = d.buffer(slots, key_t), dc = d.slot(capacity);
  std::string m = fmt::format(
      "  __device__ __forceinline__ long long {0}slot(long long i) const {{\n"
      "    return ranc::tpl::hash_set_find({1}, {2}, ({3})({4}));\n  }}\n",
      pre, ds, dc, key_t, packed_key(d, L, n.left_key_index, "i"));
  std::string found = fmt::format("({}slot(i) >= 0)", pre);
  if (residual) {
    // Registered in this order (the kernel's parameter order).
    const std::string r = join_residual(ctx, n, d, L, R, right_non_keys(n, R));
    const std::string dh = d.buffer(heads, "long long");
    const std::string dn = d.buffer(next, "long long");
    m += fmt::format(
        "  __device__ __forceinline__ bool {0}residual(long long i, long long j) const {{ return {1}; }}\n"
        "  __device__ __forceinline__ bool {0}exists(long long i) const {{\n"
        "    return ranc::tpl::hash_chain_any({2}, {3}, {0}slot(i), [&](long long j) {{ return "
        "{0}residual(i, j); }});\n  }}\n",
        pre, r, dh, dn);
    found = pre + "exists(i)";
  }
  // A probe is one or two random loads, not a chain of log2(n): materialised, the stage
  // takes the select's 16 rows a thread (their probes overlap), which measured 18.2 ms
  // against 19.5 ms with one row a thread (2^27 semi join, H100).
  set_semi_stage(ctx, n, L, std::move(v), std::move(m), found, /*searches=*/false);
}

}  // namespace ranc::codegen
