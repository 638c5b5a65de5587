// Lowering of reduce.
// With group keys, the input is grouped by them (physical planning), so the single-pass
// segmented reduction of reduce.cuh applies:
//   1. init:   tile states for the decoupled look-back over group-head counts;
//   2. reduce: ReduceAgent, one block per tile: head flags, a block-wide segmented scan
//              of the aggregate states, global group numbers by look-back; groups that
//              end inside the tile are written directly, partial states of groups that
//              cross a tile boundary go to carry/tail;
//   3. fixup:  ReduceFixupAgent, one thread per tile, finishes the crossing groups.
// The output columns are sized by the upper bound (the input size) and the number of
// groups is read back, so the input is read once. A fused project (a view that keeps
// every row) is read through its member functions; a view with a filter is
// materialised first (a dropped row could leave a group empty).
// Without group keys: GlobalReduceAgent (reduce.cuh), at the end of any pipeline over
// row numbers: a fused select/project chain is evaluated row by row inside the reduce
// (rows the chain drops are not folded), each block writes a partial state, and one
// block merges them and writes the single output row, also when no row was kept (SQL:
// count 0 and NULL for the others, which lower_nulls makes from the counts); its size is
// 1 without a read-back.
// Semantics as the reference: integer sums exact in 128 bits (ranc::tpl::add128) with an
// overflow flag (sums of i32 on the sorted and global paths: 64-bit states whose merges
// flag overflow, exact for groups of up to 2^32 rows), float sums and avg in f64, min/max by
// the total order, count counts tuples; an aggregate with a filter (Aggregate::filter, from
// lower_nulls) folds only the rows it keeps.
#include "ranc/codegen/lowering.h"
#include "ranc/passes/prune_attributes.h"

#include <algorithm>

namespace ranc::codegen {
namespace {

// The aggregate state struct, its hooks and the statements writing output row g
// (aggregates only; `first` is the group's first row, for the key columns). `wp` holds the
// parameters of the kernels that write (the same as `p` but for the hash reduce's merge).
// The row count `rows` is a field only where it is needed (add_row_count).
struct AggCode {
  std::string fields, init, acc, merge, write;
  int64_t state_words = 0;  // upper bound on sizeof(State) / 8
  std::vector<size_t> columns;  // the input columns the aggregates read (by row), in order of reading
  // Set when an integer sum may leave the i64 range: the flag the write sets, and the
  // CheckFlag step's message.
  rt::BufferId overflow = -1;
  std::string overflow_message;
};

// `stmts` run only for rows the aggregate's filter keeps (Aggregate::filter), given its
// C++ text (empty: every row).
std::string filtered(const std::string& filter, const std::string& stmts) {
  if (filter.empty()) return stmts;
  return fmt::format("    if ({}) {{\n{}    }}\n", filter, stmts);
}

// The flag an integer sum's write sets when the exact sum is not an i64.
std::string overflow_flag(LoweringContext& ctx, const Node& n, rt::BufferId& flag,
                          std::string& message, KernelParams& wp, const Aggregate& ag) {
  if (flag < 0) {
    flag = ctx.allocate(fmt::format("n{}.overflow", n.id), 4, rt::SizeExpr::fixed(1), n.id, true);
    message = fmt::format("integer overflow: a sum leaves the i64 range in {} (sum '{}'); cast "
                          "the argument to f64 to sum it approximately",
                          describe_node(ctx.program(), n), ag.name);
  }
  return wp.buffer(flag, "int", false);
}

// The rows aggregate k folds, as C++ text: s.rows, or, when its filter can make them differ
// and the aggregate needs them (count, avg), a count field n<k> of type `ctype` added to
// the state code `a` (AggCode or HashAggCode, whose merge_atomic gets the atomic form).
template <class Code>
std::string folded_rows(Code& a, size_t k, const Aggregate& ag, const std::string& filter,
                        std::string_view ctype) {
  if (filter.empty() || (ag.func != AggFunc::Count && ag.func != AggFunc::Avg)) return "s.rows";
  a.fields += fmt::format("  {} n{};\n", ctype, k);
  a.init += fmt::format("    s.n{} = 0;\n", k);
  a.acc += filtered(filter, fmt::format("      ++s.n{};\n", k));
  if constexpr (requires { a.merge_atomic; }) {
    a.merge_atomic += fmt::format("    ranc::tpl::atomic_add_count(&a.n{0}, b.n{0}, {1});\n", k, a.counts_fit);
    a.global_merge(fmt::format("atomicAdd(&a.n{0}, b.n{0})", k), "0ull");
  }
  a.merge += fmt::format("    a.n{0} += b.n{0};\n", k);
  ++a.state_words;
  return fmt::format("s.n{}", k);
}

// Does aggregate `ag` read the state's row count? (`rows` as folded_rows returned it.)
bool reads_row_count(const Aggregate& ag, const std::string& rows) {
  return (ag.func == AggFunc::Count || ag.func == AggFunc::Avg) && rows == "s.rows";
}
// Puts the row count `rows` (of type `ctype`) at the front of the state code `a` (AggCode,
// or HashAggCode with its atomic merge). Only where an aggregate reads it or the state
// would be empty: every field costs scan shuffles (sorted reduce) or a shared-memory atomic
// (hash reduce).
template <class Code>
void add_row_count(Code& a, std::string_view ctype) {
  a.fields = fmt::format("  {} rows;\n", ctype) + a.fields;
  a.init = "    s.rows = 0;\n" + a.init;
  a.acc = "    ++s.rows;\n" + a.acc;
  a.merge = "    a.rows += b.rows;\n" + a.merge;
  if constexpr (requires { a.merge_atomic; }) {
    const std::string count =
        fmt::format("    ranc::tpl::atomic_add_count(&a.rows, b.rows, {});\n", a.counts_fit);
    a.merge_atomic = count + a.merge_atomic;
    a.global_merge("atomicAdd(&a.rows, b.rows)", "0ull", true);
  }
  ++a.state_words;
}

// sum or avg of aggregate k (C++ text `v`, filter `filter`, folded rows `rows`) into the
// state code `a` (AggCode, or HashAggCode with its atomic merge), written to `dst` by the
// kernels of `wp`: floats and avg add in double; integer sums are exact and set the overflow
// flag when the result is not an i64 (program.h).
template <class Code>
void sum_code(LoweringContext& ctx, const Node& n, Code& a, size_t k, const std::string& filter,
              const std::string& v, const std::string& rows, const std::string& dst,
              KernelParams& wp) {
  const Aggregate& ag = n.aggregates[k];
  const Type at = *ag.arg->type, ot = n.schema[n.group_key_index.size() + k].type;
  const std::string f = fmt::format("a{}", k);
  constexpr bool atomic = requires { a.merge_atomic; };
  if (is_floating(at) || ag.func == AggFunc::Avg) {
    a.fields += fmt::format("  double {};\n", f);
    a.init += fmt::format("    s.{} = 0;\n", f);
    a.acc += filtered(filter, fmt::format("      s.{} += (double)({});\n", f, v));
    if constexpr (atomic) {
      a.merge_atomic += fmt::format("    atomicAdd(&a.{0}, b.{0});\n", f);
      a.global_merge(fmt::format("atomicAdd(&a.{0}, b.{0})", f), "0.0");
    }
    a.merge += fmt::format("    a.{0} += b.{0};\n", f);
    ++a.state_words;
    if (ag.func == AggFunc::Avg)
      a.write += fmt::format("    {}[g] = {} > 0 ? s.{} / (double){} : 0.0;\n", dst, rows, f, rows);
    else
      a.write += fmt::format("    {}[g] = ({})s.{};\n", dst, value_ctype(ot), f);
    return;
  }
  if (type_size(at) <= 4) {
    // An integer of at most 32 bits has a 64-bit sum: a partial sum over at most 2^32 rows is
    // an i64, so only a sum over more rows can leave the range, and the merges that could
    // form one check (add_overflows) and set the flag. Half the state of the 128-bit sum.
    // Sorted path: a state folds at most one tile's rows with accumulate (reduce.cuh), so the
    // merges check. Hash path: a state folds one row with accumulate; its merges check only
    // when the input has more than 2^32 rows (a uniform branch), and its atomic merge is two
    // 32-bit adds (atomic_add_words) unless then.
    std::string flag = overflow_flag(ctx, n, a.overflow, a.overflow_message, wp, ag);
    a.fields += fmt::format("  long long {};\n", f);
    a.init += fmt::format("    s.{} = 0;\n", f);
    a.acc += filtered(filter, fmt::format("      s.{} += (long long)({});\n", f, v));
    const std::string checked =
        fmt::format("if (ranc::tpl::add_overflows(a.{0}, b.{0})) {1}[0] = 1;", f, flag);
    if constexpr (atomic) {
      a.merge += fmt::format("    if ({0}) {{ {1} }} else a.{2} += b.{2};\n", a.many_rows, checked, f);
      a.merge_atomic += fmt::format(
          "    if ({0}) {{\n"
          "      long long old = (long long)atomicAdd((unsigned long long*)&a.{1}, (unsigned long long)b.{1});\n"
          "      if (ranc::tpl::add_overflows(old, b.{1})) {2}[0] = 1;\n"
          "    }} else ranc::tpl::atomic_add_words<1>((unsigned long long*)&a.{1}, {{(unsigned long long)b.{1}}});\n",
          a.many_rows, f, flag);
      // In device memory a 64-bit add is one atomic (in shared memory a compare-and-swap loop);
      // its old value is needed only to check (more than 2^32 rows) and to tell the first merge.
      a.global_merge(
          fmt::format("atomicAdd((unsigned long long*)&a.{}, (unsigned long long)b.{})", f, f),
          "0ull", false, a.many_rows,
          fmt::format(
              "long long o = (long long)old; if (ranc::tpl::add_overflows(o, b.{})) {}[0] = 1;", f,
              flag));
    } else {
      a.merge += "    " + checked + "\n";
    }
    ++a.state_words;
    a.write += fmt::format("    {}[g] = s.{};\n", dst, f);
    return;
  }
  a.fields += fmt::format("  unsigned long long {0};\n  unsigned long long {0}h;\n", f);
  a.init += fmt::format("    s.{0} = 0;\n    s.{0}h = 0;\n", f);
  a.acc += filtered(
      filter, fmt::format("      ranc::tpl::add128(s.{0}, s.{0}h, (long long)({1}));\n", f, v));
  if constexpr (atomic) {  // (the fields lo, hi are adjacent: one accumulator of two words)
    a.merge_atomic += fmt::format("    ranc::tpl::atomic_add_words<2>(&a.{0}, {{b.{0}, b.{0}h}});\n", f);
    a.global_merge(fmt::format("ranc::tpl::atomic_add_128(&a.{0}, b.{0}, b.{0}h)", f), "0ull");
  }
  a.merge += fmt::format("    ranc::tpl::merge128(a.{0}, a.{0}h, b.{0}, b.{0}h);\n", f);
  a.state_words += 2;
  std::string flag = overflow_flag(ctx, n, a.overflow, a.overflow_message, wp, ag);
  a.write += fmt::format(
      "    if (!ranc::tpl::fits_i64(s.{0}, s.{0}h)) {1}[0] = 1;\n    {2}[g] = (long long)s.{0};\n",
      f, flag, dst);
}

AggCode aggregate_code(LoweringContext& ctx, const Node& n, const DeviceRelation& in,
                       const DeviceRelation& out, KernelParams& p, std::string_view row = "r") {
  AggCode a;
  bool need_rows = false;
  const size_t nk = n.group_key_index.size();
  auto attr = [&](int32_t c) {
    a.columns.push_back(static_cast<size_t>(c));
    return LoweringContext::load(p, in, static_cast<size_t>(c), row);
  };
  for (size_t k = 0; k < n.aggregates.size(); ++k) {
    const Aggregate& ag = n.aggregates[k];
    const Type ot = n.schema[nk + k].type;
    std::string dst = p.buffer(out.columns[nk + k], storage_ctype(ot), false);
    const std::string filter = ag.filter.valid() ? ctx.expr(ag.filter.ptr(), p, attr) : "";
    const std::string rows = folded_rows(a, k, ag, filter, "long long");
    need_rows = need_rows || reads_row_count(ag, rows);
    if (ag.func == AggFunc::Count) {
      a.write += fmt::format("    {}[g] = {};\n", dst, rows);
      continue;
    }
    const Type at = *ag.arg->type;
    std::string v = ctx.expr(ag.arg.ptr(), p, attr);
    std::string f = fmt::format("a{}", k), h = fmt::format("h{}", k);
    switch (ag.func) {
      case AggFunc::Sum:
      case AggFunc::Avg:
        sum_code(ctx, n, a, k, filter, v, rows, dst, p);
        break;
      case AggFunc::Min:
      case AggFunc::Max: {
        // Every group has a row, so the state of a finished group has a value unless the
        // filter kept none (then it writes the zero s.f starts with); `has` marks states of
        // empty stretches (identity).
        const char* better = ag.func == AggFunc::Min ? "<" : ">";
        auto ct = value_ctype(at);
        a.fields += fmt::format("  {} {};\n  bool {};\n", ct, f, h);
        a.init += fmt::format("    s.{} = ({})0;\n    s.{} = false;\n", f, ct, h);
        a.acc += filtered(
            filter,
            fmt::format("      {{ const {0} v = {1}; if (!s.{3} || ranc::tpl::cmp3(v, s.{2}) {4} 0) {{ "
                        "s.{2} = v; s.{3} = true; }} }}\n",
                        ct, v, f, h, better));
        a.merge += fmt::format(
            "    if (b.{1} && (!a.{1} || ranc::tpl::cmp3(b.{0}, a.{0}) {2} 0)) {{ a.{0} = b.{0}; "
            "a.{1} = true; }}\n",
            f, h, better);
        a.state_words += 2;
        a.write += fmt::format("    {}[g] = ({})s.{};\n", dst, storage_ctype(ot), f);
        break;
      }
      case AggFunc::Count:
        break;
    }
  }
  if (need_rows || a.state_words == 0) add_row_count(a, "long long");
  return a;
}

// The member functions of an Agg hook, each forwarding to the functor's member of the same
// name: reduce.cuh's ReduceHooks::Agg, and hash_reduce.cuh's HashGroupAgent::Hooks::Agg.
struct AggMethod {
  const char* name;
  registry::Signature sig;
  const char* call;
};
using AggMethods = std::vector<AggMethod>;
const AggMethods& agg_methods() {
  static const AggMethods m = {
      {"init", {"State", {}}, "return f->init();"},
      {"accumulate", {"void", {{"State&", "s"}, {"long long", "r"}}}, "f->accumulate(s, r);"},
      {"merge", {"void", {{"State&", "a"}, {"const State&", "b"}}}, "f->merge(a, b);"}};
  return m;
}
// Only what a merge of states needs (GlobalReduceFinish's MergeHooks::Agg).
const AggMethods& merge_agg_methods() {
  static const AggMethods m = {{"init", {"State", {}}, "return f->init();"},
                               {"merge",
                                {"void", {{"State&", "a"}, {"const State&", "b"}}},
                                "f->merge(a, b);"}};
  return m;
}
// agg_methods() and one merge more, of the same signature as merge but returning `ret`.
AggMethods agg_methods_and(const char* name, const char* ret, const char* call) {
  AggMethods m = agg_methods();
  m.push_back({name, {ret, {{"State&", "a"}, {"const State&", "b"}}}, call});
  return m;
}
// Phase 1's (HashGroupAgent::Hooks::Agg): merges into its shared-memory table by atomics.
const AggMethods& hash_agg_methods() {
  static const AggMethods m = agg_methods_and("merge_atomic", "void", "f->merge_atomic(a, b);");
  return m;
}
// The dense way's (DenseGroupAgent::Hooks::Agg): phase 1's, and merges into device memory by
// atomics.
const AggMethods& dense_agg_methods() {
  static const AggMethods m = [] {
    AggMethods d = hash_agg_methods();
    d.push_back({"merge_global",
                 {"bool", {{"State&", "a"}, {"const State&", "b"}}},
                 "return f->merge_global(a, b);"});
    return d;
  }();
  return m;
}

// The Agg hook struct over the functor `fn`'s members, defined as `agg` in a kernel body.
std::string agg_hooks(const std::string& fn, const std::string& st,
                      const AggMethods& methods = agg_methods()) {
  std::string s = "  struct Agg {\n    const " + fn + "* f;\n    using State = " + st + ";\n";
  for (const AggMethod& m : methods) {
    std::string ps;
    for (const auto& p : m.sig.params)
      ps += fmt::format("{}{} {}", ps.empty() ? "" : ", ", p.type, p.name);
    s += fmt::format("    __device__ __forceinline__ {} {}({}) const {{ {} }}\n", m.sig.ret, m.name,
                     ps, m.call);
  }
  return s + "  } agg{&f};\n";
}
// The same object as a hook argument (SkeletonCall checks it against the registry).
HookArg agg_object(const std::string& st, const AggMethods& m = agg_methods()) {
  std::vector<std::pair<std::string, registry::Signature>> methods;
  for (const AggMethod& x : m) methods.emplace_back(x.name, x.sig);
  return HookArg::object("agg", {{"State", st}}, std::move(methods));
}

// The two kernels of reduce.cuh's segmented reduction: ReduceAgent (kernel `name`) and
// ReduceFixupAgent (kernel n<id>_<fixup>), over the functor made by `make` (members same,
// write and those agg_hooks forwards to) with aggregate state `st`. The arguments are
// kernel parameters of `p`: rows, tile state, carry, tail, meta, the group count, tiles.
struct SegmentedReduceArgs {
  std::string rows, tile_state, carry, tail, meta, count, tiles;
};
// A column the reduce kernel's hooks read by row only: the functor's member and its element
// type, which the stage hook points at the tile's copy in shared memory. A column accumulate
// does not read (a key) may be released: the release hook points the functor back at the
// column in global memory and gives its copy to the agent, which stages a tile's finished
// groups there when they are many (reduce.cuh).
struct StagedColumn {
  std::string member, ctype;
  int64_t size = 0;  // bytes an element
  bool releasable = false;
};
void segmented_reduce_kernels(LoweringContext& ctx, NodeId id, const std::string& name,
                              std::string_view fixup, KernelParams& p, const std::string& make,
                              const std::string& st, const SegmentedReduceArgs& a, rt::SlotId tiles,
                              std::vector<NodeId> nodes,
                              const std::vector<StagedColumn>& staged = {},
                              bool narrow = false) {
  const std::string hooks = agg_hooks(name + "_fn", st);
  const HookArg emit = HookArg::lambda(
      "void", {{"long long", "g"}, {"long long", "first"}, {fmt::format("const {} &", st), "s"}},
      " f.write(g, first, s); ");
  {
    SkeletonCall agent(ctx.templates(), "ReduceAgent", {ctx.tile_policy("Reduce")}, "Agent");
    agent.bind("State", st);
    // Staging moves the functor's column pointers onto the copies: the functor is mutable.
    std::string functor = make, arrays, stage = " return false; ", release = " return 0; ";
    bool releases = false;  // the release hook hands a copy back (the agent may defer emits)
    if (!staged.empty()) {
      functor = LoweringContext::mutable_functor(functor);
      stage = " ";
      int64_t released = -1;  // the largest releasable copy
      for (size_t k = 0; k < staged.size(); ++k) {
        arrays += fmt::format(
            "  __shared__ __align__(16) {0} stage{1}[ranc::tpl::stage_elems<{0}>(Agent::max_stage_rows)];\n",
            staged[k].ctype, k);
        // (stage_rows waits for each column's copies: issuing every column's before one wait,
        // stage_rows_async, measured slower on an H200, 1.394 against 1.326 ms at 2^28 rows,
        // bench/RESULTS.md session 52)
        stage += fmt::format("f.{0} = ranc::tpl::stage_rows<Agent::kThreads>(stage{1}, f.{0}, lo, hi); ",
                             staged[k].member, k);
        if (staged[k].releasable &&
            (released < 0 || staged[k].size > staged[static_cast<size_t>(released)].size))
          released = static_cast<int64_t>(k);
      }
      stage += "return true; ";
      if (released >= 0 && ctx.options().defer_reduce_emits) {
        const StagedColumn& c = staged[static_cast<size_t>(released)];
        arrays += fmt::format("  const auto global{0} = f.{1};\n", released, c.member);
        release = fmt::format(" f.{0} = global{1}; mem = stage{1}; return (int)sizeof(stage{1}); ",
                              c.member, released);
        releases = true;
      }
    }
    std::string body =
        functor + hooks + agent.declare() + agent.temp_storage() + arrays +
        agent.call("run", {"temp", a.rows,
                           HookArg::lambda("bool", {{"long long", "i"}, {"long long", "j"}},
                                           " return f.same(i, j); "),
                           agg_object(st), emit, a.tile_state, a.carry, a.tail, a.meta, a.count,
                           HookArg::lambda("bool", {{"long long", "lo"}, {"long long", "hi"}}, stage),
                           HookArg::lambda("int", {{"void*&", "mem"}}, release)});
    LaunchShape shape{rt::SizeExpr::slot(tiles), 1, ctx.policy_threads("Reduce"), false,
                      std::move(nodes)};
    // The deferred emits' code (a second fold, the windows) raises the registers ptxas takes
    // for the whole kernel (reduce.cuh; sums of i32 at 256 x 15: 56, four blocks an SM, where
    // the direct path alone takes 44): capped at 48 a thread (five blocks of 256 threads).
    // A `narrow` reduce (one group key, a state of one word) is capped at 40 (six blocks, which
    // its stages leave room for: sorted_reduce; ptxas spills about 88 bytes, in the deferred
    // path): H200, session 46, a sum of i32 by an i32 key at 2^28 rows, kernel
    // ms with six / five blocks: 1.19 / 1.26 at 64 rows a group, 1.24 / 1.32 at 16, 1.47 / 1.48
    // at 8, 1.57 / 1.55 at 4, 2.56 / 2.44 at 1 (bench/RESULTS.md). Wider ones spill more at 40
    // (TPC-H Q10's five keys: 684 bytes of spill loads), so they keep 48.
    if (releases) {
      const int32_t mb = ctx.options().reduce_min_blocks;
      shape.min_blocks = mb >= 0 ? mb : std::max(1, 65536 / (shape.block_threads * (narrow ? 40 : 48)));
    }
    ctx.kernel(id, name, p, body, shape, agent);
  }
  SkeletonCall fixup_agent(ctx.templates(), "ReduceFixupAgent", {});
  fixup_agent.bind("State", st);
  std::string body =
      make + hooks +
      fixup_agent.call("run", {a.tiles, agg_object(st), emit, a.carry, a.tail, a.meta});
  ctx.kernel(id, ctx.kernel_name(id, fixup), p, body,
             LaunchShape{rt::SizeExpr::slot(tiles), 256, 256, false}, fixup_agent);
}

// The functor members of aggregate state `st` (AggCode or HashAggCode `a`).
template <class Code>
std::string state_members(const std::string& st, const Code& a) {
  return fmt::format(
      "  using State = {0};\n"
      "  __device__ __forceinline__ State init() const {{\n    State s;\n{1}    return s;\n  }}\n"
      "  __device__ __forceinline__ void accumulate(State& s, long long r) const {{\n{2}  }}\n"
      "  __device__ __forceinline__ void merge(State& a, const State& b) const {{\n{3}  }}\n",
      st, a.init, a.acc, a.merge);
}

// The global reduce's state struct `st` (a.fields), in 8-byte partial slots.
void emit_partial_state(LoweringContext& ctx, const std::string& st, const AggCode& a) {
  ctx.emit(fmt::format("struct alignas(8) {} {{\n{}}};\n", st, a.fields));
  ctx.emit(fmt::format("static_assert(sizeof({}) <= {} * 8, \"reduce state larger than its "
                       "partial slot\");\n",
                       st, a.state_words));
}

// The end of a global reduce `n`: GlobalReduceFinish merges the `count` partial states of
// `partials` (kernel parameter texts of `p`) and writes the one tuple `out` (also over no
// rows: count 0 and the other aggregates' zeros, which lower_nulls turns into NULLs from their
// counts), then the overflow check. `make` builds the functor `f` (with write(s)) and an Agg
// hook struct `agg` over it.
void finish_global_reduce(LoweringContext& ctx, const Node& n, KernelParams& p, const std::string& make,
                          const std::string& st, const std::string& count, const std::string& partials,
                          const AggCode& a, DeviceRelation out) {
  SkeletonCall finish(ctx.templates(), "GlobalReduceFinish", {"256"}, "Finish");
  finish.bind("State", st);
  ctx.kernel(n.id, ctx.kernel_name(n.id, "reduce_finish"), p,
             make + finish.declare() + finish.temp_storage() +
                 finish.call("run", {"temp", count, agg_object(st, merge_agg_methods()), partials,
                                     HookArg::lambda("void", {{fmt::format("const {}&", st), "s"}},
                                                     " f.write(s); ")}),
             LaunchShape{rt::SizeExpr::fixed(1), 1, 256, false}, finish);
  if (a.overflow >= 0) ctx.step(rt::CheckFlag{a.overflow, a.overflow_message, n.id});
  out.size = ctx.new_slot();
  ctx.step(rt::SetSize{out.size, rt::SizeExpr::fixed(1)});
  ctx.set_relation(n.id, out);
}

// The global reduce folded into the write stage of the join whose matches `in` enumerates
// (RowView::fold, join lowering's fold_merge): the join's kernels fold every match the view
// keeps into per-block partial states, and GlobalReduceFinish merges them. The matches are
// never written.
void fold_global_reduce(LoweringContext& ctx, const Node& n, const DeviceRelation& in) {
  DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::fixed(1), -1);
  const std::string what = in.view->op_names(ctx.program()) + "_reduce";
  KernelParams p;
  AggCode a = aggregate_code(ctx, n, in, out, p, "i, j");
  FoldSpec spec;
  spec.reduce = n.id;
  spec.params = &p;
  spec.name = ctx.kernel_name(n.id, what);
  spec.what = what;
  spec.state = spec.name + "_state";
  spec.state_words = a.state_words;
  emit_partial_state(ctx, spec.state, a);
  const std::string keep = LoweringContext::keep(p, in, "i, j");
  spec.members = fmt::format(
      "  using State = {0};\n"
      "  __device__ __forceinline__ State init() const {{\n    State s;\n{1}    return s;\n  }}\n"
      "  __device__ __forceinline__ void fold(State& s, long long i, long long j) const {{\n"
      "    if (!{2}) return;\n{3}  }}\n"
      "  __device__ __forceinline__ void merge(State& a, const State& b) const {{\n{4}  }}\n"
      "  __device__ __forceinline__ void write(const State& s) const {{\n"
      "    const long long g = 0;\n{5}  }}\n",
      spec.state, a.init, keep, a.acc, a.merge, a.write);
  const FoldPartials parts = in.view->fold(ctx, in, spec);
  const std::string fn = spec.name + "_finish_fn";
  finish_global_reduce(ctx, n, p,
                       ctx.functor(fn, p, spec.members) + agg_hooks(fn, spec.state, merge_agg_methods()),
                       spec.state, p.slot(parts.count), p.buffer(parts.partials, "void", false), a, out);
}

void lower_global_reduce(LoweringContext& ctx, const Node& n, const DeviceRelation& in) {
  if (in.view && in.view->fold) {
    fold_global_reduce(ctx, n, in);
    return;
  }
  DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::fixed(1), -1);
  const std::vector<NodeId> nodes = LoweringContext::fused_nodes({&in}, n.id);
  const std::string what = in.view ? in.view->op_names(ctx.program()) + "_reduce" : "reduce";
  const int64_t tile = static_cast<int64_t>(ctx.policy_threads("Map")) * ctx.policy_items("Map");
  rt::SlotId tiles = ctx.num_tiles(n.id, in.size, -1, tile);
  KernelParams p;
  AggCode a = aggregate_code(ctx, n, in, out, p);
  rt::BufferId partials = ctx.allocate(fmt::format("n{}.partials", n.id), 8,
                                       rt::SizeExpr{0, {rt::SizeTerm{a.state_words, {tiles}}}},
                                       n.id);
  const std::string keep = LoweringContext::keep(p, in, "i");
  const std::string name = ctx.kernel_name(n.id, what);
  const std::string st = name + "_state";
  emit_partial_state(ctx, st, a);
  std::string ns = p.slot(in.size), nt = p.slot(tiles), pp = p.buffer(partials, "void", false);
  std::string members =
      state_members(st, a) +
      fmt::format("  __device__ __forceinline__ bool keep(long long i) const {{ return {}; }}\n"
                  "  __device__ __forceinline__ void write(const State& s) const {{\n"
                  "    const long long g = 0;\n{}  }}\n",
                  keep, a.write);
  std::string make = ctx.functor(name + "_fn", p, members);
  const std::string hooks = agg_hooks(name + "_fn", st);
  SkeletonCall agent(ctx.templates(), "GlobalReduceAgent", {ctx.tile_policy("Map")}, "Agent");
  agent.bind("State", st);
  ctx.kernel(
      n.id, name, p,
      make + hooks + agent.declare() + agent.temp_storage() +
          agent.call("run", {"temp", ns,
                             HookArg::lambda("bool", {{"long long", "i"}}, " return f.keep(i); "),
                             agg_object(st), pp}),
      LaunchShape{rt::SizeExpr::slot(tiles), 1, ctx.policy_threads("Map"), false, nodes}, agent);
  finish_global_reduce(ctx, n, p, make + hooks, st, nt, pp, a, out);
}

// The segmented reduction of reduce `n` over `in`, whose rows are grouped by `keys` (its
// order starts with them), into the columns of `out` (room for in's rows): the reduce and
// fixup kernels (reduce.cuh), which write the number of groups to count[count_index].
void sorted_reduce(LoweringContext& ctx, const Node& n, const DeviceRelation& in,
                   const passes::Order& keys, const DeviceRelation& out, rt::BufferId count,
                   int count_index) {
  const size_t nk = n.group_key_index.size();
  const std::vector<NodeId> nodes = LoweringContext::fused_nodes({&in}, n.id);
  const std::string what = in.view ? in.view->op_names(ctx.program()) + "_reduce" : "reduce";
  const int64_t tile =
      static_cast<int64_t>(ctx.policy_threads("Reduce")) * ctx.policy_items("Reduce");
  rt::SlotId tiles = ctx.num_tiles(n.id, in.size, -1, tile);
  rt::BufferId state = ctx.tile_state(n.id, "tile_state", tiles);
  rt::BufferId meta = ctx.allocate(fmt::format("n{}.meta", n.id), 8,
                                   rt::SizeExpr{0, {rt::SizeTerm{3, {tiles}}}}, n.id);

  KernelParams p;
  AggCode a = aggregate_code(ctx, n, in, out, p);
  // A view's checks (a fused project's divisions) run for every row it folds.
  const std::string keep = LoweringContext::keep(p, in, "r");
  if (keep != "true") a.acc = fmt::format("    (void){};\n", keep) + a.acc;
  std::string write;
  for (size_t k = 0; k < nk; ++k) {
    size_t c = static_cast<size_t>(n.group_key_index[k]);
    auto ct = storage_ctype(in.types[c]);
    write += fmt::format("    {}[g] = ({}){};\n", p.buffer(out.columns[k], ct, false), ct,
                         LoweringContext::raw(p, in, c, "first"));
  }
  write += a.write;
  std::string same = "    return true;\n";
  if (in.unverified) {
    // The input's declared order is checked here (lower_input left it to this reduce):
    // row j = i - 1 must not order after row i.
    std::vector<int32_t> cols;
    std::vector<bool> desc;
    for (const auto& k : keys) {
      cols.push_back(k.index);
      desc.push_back(k.descending);
    }
    same = fmt::format(
        "    const int c = [&](long long i, long long j) {{\n{}    }}(j, i);\n"
        "    if (c > 0) {}[0] = 1;\n    return c == 0;\n",
        LoweringContext::compare_body(p, in, "i", cols, in, "j", cols, desc),
        p.buffer(in.unverified->flag, "int", false));
  } else if (!keys.empty()) {
    same.clear();
    for (const auto& k : keys) {
      size_t c = static_cast<size_t>(k.index);
      auto ct = storage_ctype(in.types[c]);
      same += fmt::format("    if (!ranc::tpl::total_equal(({0}){1}, ({0}){2})) return false;\n", ct,
                          LoweringContext::raw(p, in, c, "i"), LoweringContext::raw(p, in, c, "j"));
    }
    same += "    return true;\n";
  }
  // Columns the hooks read by row, staged in shared memory tile by tile while they fit in
  // kStageBytes (the compared keys first: each row's are read twice). Only for a dense
  // input (a view's members may read other buffers), and only with an odd number of rows a
  // thread (an even one makes the threads' reads of a staged column collide in banks).
  // H200, 2^28 rows, 16 a group, sum of i32: 1.09 ms staged, 1.16 ms in place (256 x 15).
  std::vector<StagedColumn> staged;
  if (!in.view && ctx.options().stage_reduce_inputs && ctx.policy_items("Reduce") % 2 == 1) {
    constexpr int64_t kStageBytes = 32 * 1024;
    // Six blocks of stages, each with the agent's temp storage (about 200 bytes) and the 1 KB an
    // sm_90 SM reserves a block, fit the SM's 228 KB: segmented_reduce_kernels' six-block cap.
    static_assert(6 * (kStageBytes + 1536) <= 228 * 1024);
    std::vector<size_t> cols;
    for (const auto& k : keys) cols.push_back(static_cast<size_t>(k.index));
    cols.insert(cols.end(), a.columns.begin(), a.columns.end());
    int64_t bytes = 0;
    std::vector<rt::BufferId> done;  // by buffer: two attributes may share one column
    for (size_t c : cols) {
      if (std::find(done.begin(), done.end(), in.columns[c]) != done.end()) continue;
      done.push_back(in.columns[c]);
      const int64_t size = type_size(in.types[c]);
      const int64_t need = (tile + 2 + 16 / size) * size;  // stage_elems(max_stage_rows) bytes
      if (bytes + need > kStageBytes) continue;
      bytes += need;
      const auto ct = storage_ctype(in.types[c]);
      // Accumulate reads a.columns; same() and emit the keys.
      bool releasable = true;
      for (size_t v : a.columns) releasable = releasable && in.columns[v] != in.columns[c];
      staged.push_back({p.buffer(in.columns[c], ct), std::string(ct), size, releasable});
    }
  }
  const std::string name = ctx.kernel_name(n.id, what);
  const std::string st = name + "_state";
  ctx.emit(fmt::format("struct alignas(8) {} {{\n{}}};\n", st, a.fields));
  std::string members =
      state_members(st, a) +
      fmt::format(
          "  __device__ __forceinline__ bool same(long long i, long long j) const {{\n{0}  }}\n"
          "  __device__ __forceinline__ void write(long long g, long long first, const State& s) "
          "const {{\n{1}  }}\n",
          same, write);
  // Kernel parameters shared by the reduce and fixup kernels (the functor's fields).
  std::string ns = p.slot(in.size), ts = p.buffer(state, "void", false),
              mt = p.buffer(meta, "long long", false), nt = p.slot(tiles),
              cnt = count_index == 0 ? p.buffer(count, "long long", false)
                                     : fmt::format("({} + {})", p.buffer(count, "long long", false),
                                                   count_index);
  // carry and tail: tiles * sizeof(State) bytes each, sized in 8-byte elements by the
  // state's field count (every field takes at most 8 bytes).
  rt::BufferId carry = ctx.allocate(fmt::format("n{}.carry", n.id), 8,
                                    rt::SizeExpr{0, {rt::SizeTerm{a.state_words, {tiles}}}}, n.id);
  rt::BufferId tail = ctx.allocate(fmt::format("n{}.tail", n.id), 8,
                                   rt::SizeExpr{0, {rt::SizeTerm{a.state_words, {tiles}}}}, n.id);
  std::string pc = p.buffer(carry, "void", false), pt = p.buffer(tail, "void", false);
  std::string make = ctx.functor(name + "_fn", p, members);
  ctx.emit(
      fmt::format("static_assert(sizeof({}) <= {} * 8, \"reduce state larger than its "
                  "carry/tail slots\");\n",
                  st, a.state_words));
  segmented_reduce_kernels(ctx, n.id, name, "reduce_fixup", p, make, st,
                           {ns, ts, pc, pt, mt, cnt, nt}, tiles, nodes, staged,
                           nk == 1 && keys.size() <= 1 && a.state_words == 1);
  if (in.unverified) ctx.step(rt::CheckFlag{in.unverified->flag, in.unverified->message, n.id});
  if (a.overflow >= 0) ctx.step(rt::CheckFlag{a.overflow, a.overflow_message, n.id});
}

// ---- Hash aggregation (hash_reduce.cuh), for input not ordered by the group keys ----
// The state of a group for the hash path: 8-byte fields whose merge has an atomic form
// (shared-memory atomics in phase 1): counts as unsigned 64-bit adds, integer sums as
// 128-bit adds (two words), float sums and avg as double adds, min/max as atomicMin/
// atomicMax of an order-preserving unsigned word (total order for floats), so the identity
// of min/max is a word no value beats and needs no "has a value" flag.
// The row count `rows` is a field only where it is needed (add_row_count).
struct HashAggCode {
  // merge_atomic: by shared-memory atomics (phase 1's block tables); merge_global: by atomics
  // in device memory (the dense way's table), where 64-bit adds are native.
  std::string fields, init, acc, merge, merge_atomic, write;
  int64_t state_words = 0;
  // The dense way's merge, field by field: an atomic (C++ expression, whose value is the
  // field's old value), the field's identity, and a check that reads the old value `old` when
  // `when` holds (an i32 sum over more than 2^32 rows).
  struct GlobalMerge {
    std::string atomic, identity, when, check;
  };
  std::vector<GlobalMerge> global_merges;
  void global_merge(std::string atomic, std::string identity, bool front = false,
                    std::string when = {}, std::string check = {}) {
    GlobalMerge m{std::move(atomic), std::move(identity), std::move(when), std::move(check)};
    global_merges.insert(front ? global_merges.begin() : global_merges.end(), std::move(m));
  }
  // The body of merge_global(a, b): every field's atomic, returning whether the first field was
  // at its identity before (so the slot may have had no row: the dense way then flags it; the
  // merge that first finds the slot empty always sees it so, since a field changes only by
  // merges). One field's old value is needed; the other atomics return nothing (reductions).
  std::string merge_global() const {
    std::string s = "    bool first = false;\n";
    for (size_t i = 0; i < global_merges.size(); ++i) {
      const GlobalMerge& m = global_merges[i];
      const std::string check =
          m.check.empty() ? "" : fmt::format("      if ({}) {{ {} }}\n", m.when, m.check);
      if (i == 0)
        s += fmt::format("    {{\n      const auto old = {};\n      first = old == {};\n{}    }}\n",
                         m.atomic, m.identity, check);
      else if (!m.check.empty())
        s += fmt::format(
            "    if ({}) {{\n      const auto old = {};\n      {}\n    }} else {{\n      {};\n    "
            "}}\n",
            m.when, m.atomic, m.check, m.atomic);
      else
        s += fmt::format("    {};\n", m.atomic);
    }
    return s + "    return first;\n";
  }
  rt::BufferId overflow = -1;  // as AggCode's
  // C++ text, in the kernels of both phases: the input has more than 2^32 rows (a sum of i32
  // may then leave the i64 range), and fewer than 2^32 (so has any count).
  std::string many_rows, counts_fit;
  std::string overflow_message;
};

// The order-preserving unsigned word of a value of type t (C++ text v).
std::string order_word(Type t, const std::string& v) {
  if (t == Type::F64) return fmt::format("ranc::tpl::total_order_key((double)({}))", v);
  if (t == Type::F32)
    return fmt::format("(unsigned long long)ranc::tpl::total_order_key((float)({}))", v);
  return fmt::format("((unsigned long long)(long long)({}) ^ 0x8000000000000000ull)", v);
}
// The value of type t (its value C++ type) whose order word is w.
std::string from_order_word(Type t, const std::string& w) {
  if (t == Type::F64) return fmt::format("ranc::tpl::from_total_order_key((unsigned long long)({}))", w);
  if (t == Type::F32) return fmt::format("ranc::tpl::from_total_order_key((unsigned int)({}))", w);
  return fmt::format("({})(long long)(({}) ^ 0x8000000000000000ull)", value_ctype(t), w);
}

// Expressions read through `p` (phase 1's kernel), output columns through `wp` (phase 2's).
HashAggCode hash_aggregate_code(LoweringContext& ctx, const Node& n, const DeviceRelation& in,
                                const DeviceRelation& out, KernelParams& p, KernelParams& wp) {
  HashAggCode a;
  bool need_rows = false;
  const size_t nk = n.group_key_index.size();
  auto attr = [&](int32_t c) { return LoweringContext::load(p, in, static_cast<size_t>(c), "r"); };
  // The input's row count in both phases' kernels (the slot's name is the same in each).
  const std::string rows_in = p.slot(in.size);
  wp.slot(in.size);
  a.many_rows = fmt::format("({} > 4294967296ll)", rows_in);
  a.counts_fit = fmt::format("({} < 4294967296ll)", rows_in);
  for (size_t k = 0; k < n.aggregates.size(); ++k) {
    const Aggregate& ag = n.aggregates[k];
    const Type ot = n.schema[nk + k].type;
    std::string dst = wp.buffer(out.columns[nk + k], storage_ctype(ot), false);
    const std::string filter = ag.filter.valid() ? ctx.expr(ag.filter.ptr(), p, attr) : "";
    const std::string rows = folded_rows(a, k, ag, filter, "unsigned long long");
    need_rows = need_rows || reads_row_count(ag, rows);
    if (ag.func == AggFunc::Count) {
      a.write += fmt::format("    {}[g] = (long long){};\n", dst, rows);
      continue;
    }
    const Type at = *ag.arg->type;
    std::string v = ctx.expr(ag.arg.ptr(), p, attr);
    std::string f = fmt::format("a{}", k);
    switch (ag.func) {
      case AggFunc::Sum:
      case AggFunc::Avg:
        sum_code(ctx, n, a, k, filter, v, rows, dst, wp);
        break;
      case AggFunc::Min:
      case AggFunc::Max: {
        const bool min = ag.func == AggFunc::Min;
        a.fields += fmt::format("  unsigned long long {};\n", f);
        a.init += fmt::format("    s.{} = {};\n", f, min ? "~0ull" : "0ull");
        std::string w = order_word(at, v);
        a.acc += filtered(
            filter, fmt::format("      {{ const unsigned long long w = {}; if (w {} s.{}) s.{} = w; }}\n",
                                w, min ? "<" : ">", f, f));
        a.merge_atomic += fmt::format("    {}(&a.{}, b.{});\n", min ? "atomicMin" : "atomicMax", f, f);
        a.global_merge(fmt::format("{}(&a.{}, b.{})", min ? "atomicMin" : "atomicMax", f, f),
                       min ? "~0ull" : "0ull");
        a.merge += fmt::format("    if (b.{0} {1} a.{0}) a.{0} = b.{0};\n", f, min ? "<" : ">");
        ++a.state_words;
        a.write += fmt::format("    {}[g] = ({}){};\n", dst, storage_ctype(ot),
                               from_order_word(at, "s." + f));
        break;
      }
      case AggFunc::Count:
        break;
    }
  }
  if (need_rows || a.state_words == 0) add_row_count(a, "unsigned long long");
  // The flag (when a sum has one) is set by merges in phase 1 too.
  if (a.overflow >= 0) p.buffer(a.overflow, "int", false);
  return a;
}

// Phase 1 (HashGroupAgent) writes (key word, state) records; phase 2 sorts them by key word
// and merges each key's states with ReduceAgent, writing the groups in key order.
void lower_hash_reduce(LoweringContext& ctx, const Node& n, const DeviceRelation& in) {
  const size_t nk = n.group_key_index.size();
  const std::vector<NodeId> nodes = LoweringContext::fused_nodes({&in}, n.id);
  const std::string what = in.view ? in.view->op_names(ctx.program()) + "_hash_reduce" : "hash_reduce";
  // The output columns hold at most one row per record, per input row when phase 1 gave up
  // (the fallback below), or per slot of the dense way's table: declared now, allocated once
  // phase 1 has run.
  const rt::SlotId records = ctx.new_slot(), fallback_rows = ctx.new_slot(),
                   dense_groups = ctx.new_slot();
  DeviceRelation out;
  for (size_t c = 0; c < n.schema.size(); ++c) {
    out.types.push_back(n.schema[c].type);
    out.columns.push_back(
        ctx.declare(fmt::format("n{}.c{}", n.id, c), type_size(n.schema[c].type),
                    rt::SizeExpr{0,
                                 {rt::SizeTerm{1, {records}}, rt::SizeTerm{1, {fallback_rows}},
                                  rt::SizeTerm{1, {dense_groups}}}},
                    n.id));
  }

  // The key word: the first group key in the highest bits, each as an order-preserving
  // unsigned field, so words order like the keys.
  std::vector<int> shift(nk);
  int used = 0;
  for (size_t k = nk; k-- > 0;) {
    shift[k] = used;
    used += passes::hash_group_key_bits(in.types[static_cast<size_t>(n.group_key_index[k])]);
  }
  internal_check(used <= 63, "hash reduce: the group keys do not pack into 63 bits");

  KernelParams p, q;
  HashAggCode a = hash_aggregate_code(ctx, n, in, out, p, q);
  const std::string keep = LoweringContext::keep(p, in, "r");
  std::string pack = "    unsigned long long w = 0;\n";
  for (size_t k = 0; k < nk; ++k) {
    const size_t c = static_cast<size_t>(n.group_key_index[k]);
    const Type t = in.types[c];
    std::string v = LoweringContext::load(p, in, c, "r");
    std::string field = t == Type::Bool     ? fmt::format("(unsigned long long)({} ? 1 : 0)", v)
                        : t == Type::String ? fmt::format("(unsigned long long)(unsigned int)({})", v)
                        : t == Type::F32
                            ? fmt::format("(unsigned long long)ranc::tpl::total_order_key((float)({}))", v)
                            : fmt::format("(unsigned long long)((unsigned int)({}) ^ 0x80000000u)", v);
    pack += fmt::format("    w |= {} << {};\n", field, shift[k]);
  }
  pack += "    return w;\n";

  // The table of a block: the most slots of (key word, state) in kTableBytes of dynamic
  // shared memory, so two blocks of 512 threads fit on an SM (H100: 228 KB each), and no
  // more than kMaxSlots (a larger table only costs its clearing and its final write). On the
  // H100, 2^26 rows into 2^10 groups (sum of i32: 32-byte slots) took 1.17 ms with 96 KB
  // and 5.2 ms with 48 KB, whose 1536 slots hold 1152 keys at most, so most rows spilled.
  // Records: room for (blocks x table slots); more means many groups (next comment).
  constexpr int64_t kTableBytes = 96 * 1024, kMaxSlots = 4096;
  const int64_t tile = static_cast<int64_t>(ctx.policy_threads("HashGroup")) * ctx.policy_items("HashGroup");
  const int64_t slot_bytes = 8 + 8 * a.state_words;
  int capacity = 64;
  while (capacity * 2 <= kMaxSlots && capacity * 2 * slot_bytes <= kTableBytes) capacity *= 2;
  // Private states per thread (registers, while a block has seen few keys): 4, as TPC-H
  // Q1's groups, for states of up to 8 words (64 registers); fewer for larger states.
  int privates = ctx.options().hash_private_states;
  if (privates < 0) privates = static_cast<int>(std::min<int64_t>(4, 32 / a.state_words));
  const int64_t smem = capacity * slot_bytes + 8 * std::max(privates, 1) + 16;
  // Blocks at most (each strides over its share of the tiles): enough to fill the GPU twice
  // over, few enough that few groups make few records (blocks x groups); 264 and 1056
  // measured within 4% of 512 on the H100.
  constexpr int64_t kMaxBlocks = 512;
  const int64_t room = ctx.options().hash_records > 0 ? ctx.options().hash_records
                                                      : kMaxBlocks * capacity;
  const std::string name = ctx.kernel_name(n.id, what);
  const std::string st = name + "_state";
  ctx.emit(fmt::format("struct alignas(8) {} {{\n{}}};\n", st, a.fields));
  ctx.emit(
      fmt::format("static_assert(sizeof({}) <= {} * 8, \"hash reduce state larger than its "
                  "record slot\");\n",
                  st, a.state_words));
  // The functors' members: the state's, the rows' (keep, key: also the dense way's bounds
  // kernel's) and an atomic merge (phase 1's or the dense way's).
  const std::string row_members = fmt::format(
      "  __device__ __forceinline__ bool keep(long long r) const {{ return {}; }}\n"
      "  __device__ __forceinline__ unsigned long long key(long long r) const {{\n{}  }}\n",
      keep, pack);
  const std::string members = state_members(st, a) + row_members +
                              fmt::format(
                                  "  __device__ __forceinline__ void merge_atomic(State& a, const "
                                  "State& b) const {{\n{}  }}\n",
                                  a.merge_atomic);
  const int32_t threads = ctx.policy_threads("HashGroup");
  const int64_t dense_limit = ctx.options().hash_dense_slots;
  constexpr int64_t kDenseSlots = int64_t{1} << 22;
  // (a slot's index is 32-bit in the kernels)
  const int64_t dense_most =
      dense_limit > 0 ? std::min(dense_limit, int64_t{1} << 31) : kDenseSlots;
  const int64_t fewest = std::max<int64_t>(1, ctx.options().hash_dense_min_slots);
  // Spans of at most shared_span_most take the shared-memory tables of shared_slots each
  // (shared_run, in ranges of keys of that many), the others from `fewest` on the device
  // table alone (run). 0: none.
  // (by default: sm_90 lets a block have 227 KB, sm_80 163 KB, sm_86/89 99 KB)
  const int arch = ctx.options().arch;
  const int64_t shared_bytes = std::min<int64_t>(ctx.options().hash_dense_shared_bytes >= 0
                                                     ? ctx.options().hash_dense_shared_bytes
                                                 : arch >= 900                ? 192 * 1024
                                                 : arch == 800 || arch == 870 ? 128 * 1024
                                                                              : 64 * 1024,
                                                 227 * 1024);
  const int64_t shared_slots =
      std::min(dense_most, shared_bytes / (8 * a.state_words + 1) / 256 * 256);
  // (the struct's size: padded to its states' alignment)
  const int64_t shared_smem = (shared_slots * (8 * a.state_words + 1) + 15) / 16 * 16;
  // Spans of up to `parts` tables' slots: as many ranges of keys (each read by its own blocks).
  const int64_t shared_span_most = std::min(
      dense_most, shared_slots * std::max<int64_t>(1, ctx.options().hash_dense_shared_parts));
  auto dense_agent = [&] {
    SkeletonCall agent(ctx.templates(), "DenseGroupAgent",
                       {ctx.tile_policy("HashGroup"), std::to_string(shared_slots)}, "Agent");
    agent.bind("State", st);
    return agent;
  };
  const HookArg keep_hook = HookArg::lambda("bool", {{"long long", "r"}}, " return f.keep(r); ");
  const HookArg key_hook =
      HookArg::lambda("unsigned long long", {{"long long", "r"}}, " return f.key(r); ");
  // A table's initial states (slots: its slots' count), with the functor `make` of `kp`.
  auto init_kernel = [&](const std::string& what, KernelParams& kp, const std::string& make,
                         rt::SlotId slots, const std::string& slots_p, const std::string& table_p) {
    SkeletonCall agent = dense_agent();
    std::string body = make + agent.declare() +
                       agent.call("init", {slots_p, agg_object(st, dense_agg_methods()), table_p});
    ctx.kernel(n.id, ctx.kernel_name(n.id, what), kp, body,
               LaunchShape{rt::SizeExpr::slot(slots), 256, 256, true}, agent);
  };
  // A run over shared-memory tables: at most one wave (one block an SM at 192 KB), since a
  // block's clearing and flush cost its span each (the rows' count only bounds the grid: a
  // few tiles a block at the least).
  auto shared_kernel = [&](const std::string& what, KernelParams& kp, const std::string& make,
                           const std::string& entry, rt::SlotId rows,
                           const std::vector<CallArg>& args) {
    SkeletonCall agent = dense_agent();
    std::string body =
        make + agent.declare() + agent.dynamic_temp_storage(shared_smem) + agent.call(entry, args);
    LaunchShape shape{rt::SizeExpr{0, {rt::SizeTerm{1, {rows}}}, 4 * tile, 0, kMaxBlocks},
                      1,
                      threads,
                      true,
                      nodes,
                      std::nullopt,
                      static_cast<int32_t>(shared_smem)};
    shape.one_wave = true;
    ctx.kernel(n.id, ctx.kernel_name(n.id, what), kp, body, shape, agent);
  };
  // The dense kernels' functor `fn` over the parameters of `kp`: phase 1's members and a merge
  // by atomics in device memory, with the agent's hooks.
  const std::string dense_members = members + fmt::format(
                                                  "  __device__ __forceinline__ bool merge_global("
                                                  "State& a, const State& b) const {{\n{}  }}\n",
                                                  a.merge_global());
  auto dense_functor = [&](const std::string& fn, KernelParams& kp) {
    return ctx.functor(fn, kp, dense_members) + agg_hooks(fn, st, dense_agg_methods());
  };
  // One zeroed buffer for the dense way (one allocation and one memset on every run, also with
  // few groups): [0, 2) the records' key bounds, [2, 4) the input's, [4] the speculative run's
  // miss, [5] the early run's, [6, 8) the early sample's bounds, [8] the early (or the
  // partitioned way's) table's (its slot 0, as a bounds word), [9] the partitioned way's miss,
  // [10] its rows, [11] the early sample's distinct keys (hashed bits set, for that way).
  const rt::BufferId words = dense_limit != 0 ? ctx.allocate(fmt::format("n{}.dense_words", n.id),
                                                             8, rt::SizeExpr::fixed(12), n.id, true)
                                              : -1;
  // A bounds kernel's answer read back (words[at], words[at + 1], when slot `when` is not 0:
  // low = kDenseTop - the smallest, high the largest) and its span s = high - (kDenseTop - low)
  // + 1, added in an order that cannot overflow; negative (no row kept, or not read) counts as 0.
  auto read_span = [&](rt::SlotId s, rt::SlotId l, rt::SlotId h, int64_t at, rt::SlotId when) {
    ctx.step(rt::ReadSize{l, words, at, -1, when});
    ctx.step(rt::ReadSize{h, words, at + 1, -1, when});
    ctx.step(rt::SetSize{
        s, rt::SizeExpr{
               2 - INT64_MAX - 1, {rt::SizeTerm{1, {h}}, rt::SizeTerm{1, {l}}}, 1, 0, -1, true}});
  };
  // A bounds kernel (DenseGroupAgent::bounds) `what` over slot `rows` rows, whose keep and key
  // are the members `fn_members` of a functor over `kp` (n_p and bounds_p: its parameters for
  // the row count and the bounds words); whole_waves: its strided grid in whole waves; reads:
  // it reads the input (the fused operators'), not phase 1's records.
  auto bounds_kernel = [&](const std::string& what, KernelParams& kp, const std::string& fn_members,
                           rt::SlotId rows, const std::string& n_p, const std::string& bounds_p,
                           bool whole_waves, bool reads) {
    const std::string kname = ctx.kernel_name(n.id, what);
    SkeletonCall agent = dense_agent();
    std::string body = ctx.functor(kname + "_fn", kp, fn_members) + agent.declare() +
                       agent.call("bounds", {n_p, keep_hook, key_hook, bounds_p});
    LaunchShape shape{rt::SizeExpr{0, {rt::SizeTerm{1, {rows}}}, tile, 0, kMaxBlocks}, 1, threads,
                      true, reads ? nodes : std::vector<NodeId>{}};
    shape.whole_waves = whole_waves;
    ctx.kernel(n.id, kname, kp, body, shape, agent);
  };
  // The early run (CodegenOptions::hash_dense_early; DenseGroupAgent::early_run), before
  // phase 1: the bounds of a sample of the rows (every (n / kEarlySamples)-th, its kept ones),
  // and when their span is at least hash_dense_early_min_span values and, widened by a 64th of
  // a table, fits the shared-memory tables, the speculative run over whole tables around it
  // (half the room left each side, none below key word 0). When no kept row missed it, its
  // table is the output's (early.kept = its slots) and phase 1 runs over no rows (phase1_rows
  // = 0), so every later way of the plan is sized 0; after a miss (a sample that missed some
  // keys' range, or an input of many keys) the plan goes on as before. Two waits before phase 1
  // (the sample's bounds, read back together, and the miss), at inputs of
  // hash_dense_early_min_rows rows or more. (H200, 2^28 rows into 2^10 keys: 0.68 ms, against
  // 1.32 by phase 1's records; session 53.)
  struct {
    rt::SlotId kept = -1;
    rt::BufferId table = -1, flags = -1;
  } early, parted;  // (parted: the partitioned way's, below)
  rt::SlotId phase1_rows = in.size;
  // (States of up to 4 words: the early run of a larger one spilled at its 64 registers, as
  // NvrtcCompile.HashGroupByDenseWayEveryState's all-aggregates state of 11 words.)
  // Not over a fused semi- or anti-join: its probe a row is a chain of dependent loads, which
  // the early run's one block an SM (16 warps) leaves waiting where phase 1 runs three (H200,
  // TPC-H SF 10 Q4, 15M orders through a select and a hash semi-join into 5 groups: the early
  // run 0.89 ms, phase 1 0.54 ms and its records' sort 0.14; session 54).
  bool probes = false;
  if (in.view)
    for (NodeId v : in.view->nodes) probes = probes || ctx.program().node(v).kind == OpKind::Join;
  if (dense_limit != 0 && shared_slots > 0 && a.state_words <= 4 && !probes &&
      ctx.options().hash_dense_early) {
    constexpr int64_t kEarlySamples = 65536;
    const int64_t min_rows = std::max<int64_t>(ctx.options().hash_dense_early_min_rows, 1);
    const int64_t min_span = std::max<int64_t>(1, ctx.options().hash_dense_early_min_span);
    // (the least room past the sample's span: keys a little outside it still fit, and a span
    // of up to a table less this takes one part, read once)
    const int64_t margin = std::max<int64_t>(shared_slots / 64, 1);
    const rt::SlotId samples = ctx.new_slot(), stride = ctx.new_slot(), e_low = ctx.new_slot(),
                     e_high = ctx.new_slot(), e_span = ctx.new_slot(), e_slots = ctx.new_slot(),
                     e_pad = ctx.new_slot(), e_cut = ctx.new_slot(), e_shift = ctx.new_slot(),
                     e_base = ctx.new_slot(), e_rows = ctx.new_slot(), e_missed = ctx.new_slot(),
                     e_parts = ctx.new_slot();
    early.kept = ctx.new_slot();
    // samples = min(n, kEarlySamples) from min_rows on; stride = floor(n / kEarlySamples), at
    // least 1 (below kEarlySamples rows every row is sampled)
    ctx.step(rt::SetSize{samples,
                         rt::SizeExpr{0, {rt::SizeTerm{1, {in.size}}}, 1, 0, kEarlySamples}.gated(
                             in.size, min_rows)});
    ctx.step(rt::SetSize{
        stride,
        rt::SizeExpr{
            -(kEarlySamples - 1), {rt::SizeTerm{1, {in.size}}}, kEarlySamples, 1, -1, true}});
    // The sampled rows' keep and key (row i of the sample: the input's row i x stride), as a
    // functor's members over `kp`.
    auto sampled_members = [&](KernelParams& kp) {
      return fmt::format(
          "  __device__ __forceinline__ bool keep(long long i) const {{\n"
          "    const long long r = i * {0};\n    return {1};\n  }}\n"
          "  __device__ __forceinline__ unsigned long long key(long long i) const {{\n"
          "    const long long r = i * {0};\n{2}  }}\n",
          kp.slot(stride), keep, pack);
    };
    {
      KernelParams sp = p;
      const std::string sn = sp.slot(samples), fn = sampled_members(sp),
                        sb = sp.buffer(words, "unsigned long long", false) + " + 6";
      bounds_kernel("dense_early_bounds", sp, fn, samples, sn, sb, false, true);
    }
    // The partitioned way (below): whether it is planned, its table's parts (`width` slots, the
    // largest power of two in a shared-memory table) and the scatter's tile (as many rows a
    // thread, at most 16, as fit beside its 2048 parts' runs, 32 KB, in the shared-memory
    // tables' bytes, a 4-byte key offset and a state a row).
    constexpr int64_t kPartsMost = 2048, kPartRuns = kPartsMost * 16;
    // (the sample's least distinct keys for it, as hashed bits of 65536 set: fewer keys, however
    // spread, fit phase 1's block tables, whose records the plan then sorts)
    constexpr int64_t kPartLeastDistinct = 2048;
    int64_t width = 256;
    while (width * 2 <= shared_slots) width *= 2;
    const int64_t scatter_items = std::min<int64_t>(
        16, std::max<int64_t>(0, shared_bytes - kPartRuns - 1024) / (4 + 8 * a.state_words) / threads);
    const int64_t parts_most =
        dense_limit > 0 ? std::min(kPartsMost, dense_limit / width) : kPartsMost;
    const bool partitioned = ctx.options().hash_partitioned && width <= shared_slots &&
                             scatter_items >= 1 && parts_most >= 1;
    // Its sample of distinct keys (PartitionGroupAgent::sample: the same rows' keys hashed into
    // 65536 bits), read back with the bounds (one wait).
    const rt::SlotId p_distinct = partitioned ? ctx.new_slot() : -1;
    auto part_agent = [&] {
      SkeletonCall agent(
          ctx.templates(), "PartitionGroupAgent",
          {ctx.tile_policy("HashGroup"), std::to_string(width), std::to_string(scatter_items)},
          "Agent");
      agent.bind("State", st);
      return agent;
    };
    if (partitioned) {
      const rt::BufferId bits = ctx.allocate(fmt::format("n{}.part_sample_bits", n.id), 8,
                                             rt::SizeExpr::fixed(1024), n.id, true);
      KernelParams dq = p;
      const std::string dn = dq.slot(samples), db = dq.buffer(bits, "unsigned long long", false),
                        dw = dq.buffer(words, "unsigned long long", false);
      const std::string kname = ctx.kernel_name(n.id, "part_sample");
      SkeletonCall agent = part_agent();
      std::string body = ctx.functor(kname + "_fn", dq, sampled_members(dq)) + agent.declare() +
                         agent.call("sample", {dn, keep_hook, key_hook, db, dw + " + 11"});
      ctx.kernel(n.id, kname, dq, body,
                 LaunchShape{rt::SizeExpr::slot(samples), 256, 256, true, nodes}, agent);
      ctx.step(rt::ReadSize{p_distinct, words, 11, -1, samples});
    }
    read_span(e_span, e_low, e_high, 6, samples);
    // parts = ceil((span + margin) / table) when min_span <= span <= the most less the margin;
    // e_slots = parts whole tables
    ctx.step(rt::SetSize{e_parts,
                         rt::SizeExpr{margin, {rt::SizeTerm{1, {e_span}}}, shared_slots}.gated(
                             e_span, min_span, std::max<int64_t>(shared_span_most - margin, 0))});
    // (at most shared_span_most, as the speculative run's: hash_dense_slots may cut the last
    // table; the span and margin still fit, by the gate above)
    ctx.step(rt::SetSize{e_slots, rt::SizeExpr{0,
                                               {rt::SizeTerm{shared_slots, {e_parts}}},
                                               1,
                                               0,
                                               std::max<int64_t>(shared_span_most, 0)}});
    // A table of `slots` slots around the sample's span: pad = ceil((slots - span) / 2) below the
    // sample's smallest word, cut to that word (key word 0 at the least): shift = pad - max(0, pad
    // - smallest), base = low + shift (kDenseTop - slot 0).
    auto centre = [&](rt::SlotId slots, rt::SlotId pad, rt::SlotId cut, rt::SlotId shift,
                      rt::SlotId base) {
      ctx.step(rt::SetSize{
          pad,
          rt::SizeExpr{0, {rt::SizeTerm{1, {slots}}, rt::SizeTerm{-1, {e_span}}}, 2, 0, -1, true}
              .gated(slots, 1)});
      ctx.step(rt::SetSize{
          cut,
          rt::SizeExpr{
              -INT64_MAX, {rt::SizeTerm{1, {pad}}, rt::SizeTerm{1, {e_low}}}, 1, 0, -1, true}});
      ctx.step(rt::SetSize{shift,
                           rt::SizeExpr{0, {rt::SizeTerm{1, {pad}}, rt::SizeTerm{-1, {cut}}}}});
      ctx.step(rt::SetSize{base,
                           rt::SizeExpr{0, {rt::SizeTerm{1, {e_low}}, rt::SizeTerm{1, {shift}}}}});
    };
    centre(e_slots, e_pad, e_cut, e_shift, e_base);
    ctx.step(rt::SetSize{e_rows, rt::SizeExpr::slot(in.size).gated(e_slots, 1)});
    early.table = ctx.declare(fmt::format("n{}.dense_early_table", n.id), 8,
                              rt::SizeExpr{0, {rt::SizeTerm{a.state_words, {e_slots}}}}, n.id);
    early.flags = ctx.declare(fmt::format("n{}.dense_early_flags", n.id), 1,
                              rt::SizeExpr::slot(e_slots), n.id);
    ctx.step(rt::Alloc{early.table});
    ctx.step(rt::Alloc{early.flags, true});
    KernelParams eq = p;
    const std::string eslots = eq.slot(e_slots), erows = eq.slot(e_rows), ebase = eq.slot(e_base),
                      eword = eq.buffer(words, "unsigned long long", false),
                      etable = eq.buffer(early.table, "void", false),
                      eflags = eq.buffer(early.flags, "unsigned char", false);
    const std::string emake = dense_functor(name + "_dense_early_fn", eq);
    init_kernel("dense_early_init", eq, emake, e_slots, eslots, etable);
    shared_kernel("dense_early_run", eq, emake, "early_run", e_rows,
                  {"temp", erows, keep_hook, key_hook, agg_object(st, dense_agg_methods()), ebase,
                   eslots, etable, eflags, eword + " + 5", eword + " + 8"});
    ctx.step(rt::ReadSize{e_missed, words, 5, -1, e_slots});
    ctx.step(rt::SetSize{early.kept, rt::SizeExpr::slot(e_slots).gated(e_missed, 0, 0)});
    // The partitioned way (CodegenOptions::hash_partitioned; PartitionGroupAgent), for sample
    // spans the early run does not take (past its tables, less the margin) of at most
    // kPartsMost tables of `width` slots (the largest power of two in a shared-memory table):
    // parts = ceil((span + width) / width), half a table's margin each side of the span. The
    // rows are counted by part and a row outside them sets words[9], read back (its slot
    // p_missed) with the rows counted (words[10], which size the parts' rows); when none is,
    // the parts' starts, the scatter into the parts and a run over the parts' rows fill a
    // device table of parts x width slots, the output's (parted.kept = its slots), and phase 1
    // runs over no rows. (hash_dense_slots, when set, bounds that table too.)
    // Only when the sample held at least kPartLeastDistinct distinct keys.
    if (partitioned) {
      const int64_t scatter_tile = threads * scatter_items;
      // (at least the agent's TempStorageT: the larger of the scatter's and the run's storage,
      // the scan's warp totals counted at 8 bytes)
      const int64_t part_smem =
          (std::max(kPartRuns + scatter_tile * (4 + 8 * a.state_words) + 8 * (threads / 32) + 16,
                    width * (8 * a.state_words + 1)) +
           15) / 16 * 16;
      const rt::SlotId p_spread = ctx.new_slot(), p_parts = ctx.new_slot(),
                       p_slots = ctx.new_slot(), p_pad = ctx.new_slot(),
                       p_cut = ctx.new_slot(), p_shift = ctx.new_slot(), p_base = ctx.new_slot(),
                       p_rows = ctx.new_slot(), p_missed = ctx.new_slot(), p_go = ctx.new_slot(),
                       p_go_rows = ctx.new_slot(), p_counted = ctx.new_slot(),
                       p_moved = ctx.new_slot();
      parted.kept = ctx.new_slot();
      ctx.step(rt::SetSize{
          p_spread, rt::SizeExpr{width, {rt::SizeTerm{1, {e_span}}}, width}.gated(
                        e_span, std::max(min_span, shared_span_most - margin + 1),
                        parts_most * width - width)});
      ctx.step(rt::SetSize{p_parts, rt::SizeExpr::slot(p_spread).gated(p_distinct,
                                                                        kPartLeastDistinct)});
      ctx.step(rt::SetSize{p_slots, rt::SizeExpr{0, {rt::SizeTerm{width, {p_parts}}}}});
      centre(p_slots, p_pad, p_cut, p_shift, p_base);
      ctx.step(rt::SetSize{p_rows, rt::SizeExpr::slot(in.size).gated(p_parts, 1)});
      const rt::BufferId counts = ctx.allocate(fmt::format("n{}.part_counts", n.id), 8,
                                               rt::SizeExpr::fixed(kPartsMost + 1), n.id, true);
      const rt::BufferId cursors = ctx.allocate(fmt::format("n{}.part_cursors", n.id), 8,
                                                rt::SizeExpr::fixed(kPartsMost + 1), n.id);
      {  // 1. the rows counted by part (a strided grid, as the bounds kernels')
        KernelParams kq = p;
        const std::string kn = kq.slot(p_rows), klow = kq.slot(p_base), kparts = kq.slot(p_parts),
                          kc = kq.buffer(counts, "unsigned long long", false),
                          kw = kq.buffer(words, "unsigned long long", false);
        const std::string kname = ctx.kernel_name(n.id, "part_count");
        SkeletonCall agent = part_agent();
        std::string body = ctx.functor(kname + "_fn", kq, row_members) + agent.declare() +
                           agent.call("count", {kn, keep_hook, key_hook, klow, kparts, kc, kw + " + 9"});
        LaunchShape shape{rt::SizeExpr{0, {rt::SizeTerm{1, {p_rows}}}, tile, 0, kMaxBlocks}, 1,
                          threads, true, nodes};
        shape.whole_waves = true;
        ctx.kernel(n.id, kname, kq, body, shape, agent);
      }
      ctx.step(rt::ReadSize{p_missed, words, 9, -1, p_parts});
      ctx.step(rt::ReadSize{p_counted, words, 10, -1, p_parts});
      ctx.step(rt::SetSize{parted.kept, rt::SizeExpr::slot(p_slots).gated(p_missed, 0, 0)});
      ctx.step(rt::SetSize{p_go, rt::SizeExpr::slot(p_parts).gated(parted.kept, 1)});
      // (the scatter reads every row; the parts hold the kept ones)
      ctx.step(rt::SetSize{p_go_rows, rt::SizeExpr::slot(in.size).gated(parted.kept, 1)});
      ctx.step(rt::SetSize{p_moved, rt::SizeExpr::slot(p_counted).gated(parted.kept, 1)});
      {  // 2. each part's first row (one block)
        KernelParams sq = p;
        const std::string sparts = sq.slot(p_go), slow = sq.slot(p_base),
                          sc = sq.buffer(counts, "unsigned long long", false),
                          scur = sq.buffer(cursors, "unsigned long long", false),
                          sw = sq.buffer(words, "unsigned long long", false);
        SkeletonCall agent = part_agent();
        std::string body = dense_functor(name + "_part_starts_fn", sq) + agent.declare() +
                           agent.call("starts", {sparts, slow, agg_object(st, dense_agg_methods()),
                                                 sc, scur, sw + " + 8"});
        ctx.kernel(n.id, ctx.kernel_name(n.id, "part_starts"), sq, body,
                   LaunchShape{rt::SizeExpr::fixed(1).gated(parted.kept, 1), 1, threads, true},
                   agent);
      }
      const rt::BufferId offsets = ctx.allocate(fmt::format("n{}.part_offsets", n.id), 4,
                                                rt::SizeExpr::slot(p_moved), n.id);
      const rt::BufferId pstates =
          ctx.allocate(fmt::format("n{}.part_states", n.id), 8,
                       rt::SizeExpr{0, {rt::SizeTerm{a.state_words, {p_moved}}}}, n.id);
      parted.table = ctx.declare(fmt::format("n{}.part_table", n.id), 8,
                                 rt::SizeExpr{0, {rt::SizeTerm{a.state_words, {parted.kept}}}}, n.id);
      parted.flags = ctx.declare(fmt::format("n{}.part_flags", n.id), 1,
                                 rt::SizeExpr::slot(parted.kept), n.id);
      ctx.step(rt::Alloc{parted.table});
      ctx.step(rt::Alloc{parted.flags, true});
      KernelParams pq = p;
      const std::string pslots = pq.slot(parted.kept), prows = pq.slot(p_go_rows),
                        pparts = pq.slot(p_go), plow = pq.slot(p_base),
                        pcur = pq.buffer(cursors, "unsigned long long", false),
                        pstarts = pq.buffer(counts, "unsigned long long", false),
                        poffs = pq.buffer(offsets, "unsigned", false),
                        pst = pq.buffer(pstates, "void", false),
                        ptable = pq.buffer(parted.table, "void", false),
                        pflags = pq.buffer(parted.flags, "unsigned char", false);
      const std::string pmake = dense_functor(name + "_part_fn", pq);
      init_kernel("part_init", pq, pmake, parted.kept, pslots, ptable);
      {  // 3. the rows into their parts, a tile a block
        SkeletonCall agent = part_agent();
        std::string body = pmake + agent.declare() + agent.dynamic_temp_storage(part_smem) +
                           agent.call("scatter", {"temp", prows, keep_hook, key_hook,
                                                  agg_object(st, dense_agg_methods()), plow, pparts,
                                                  pcur, poffs, pst});
        ctx.kernel(n.id, ctx.kernel_name(n.id, "part_scatter"), pq, body,
                   LaunchShape{rt::SizeExpr::slot(p_go_rows), scatter_tile, threads, true, nodes,
                               std::nullopt, static_cast<int32_t>(part_smem)},
                   agent);
      }
      {  // 4. the parts' rows into shared-memory tables, an even share a block: as many blocks
         // as parts, at least 256 (a few waves)
        SkeletonCall agent = part_agent();
        std::string body = pmake + agent.declare() + agent.dynamic_temp_storage(part_smem) +
                           agent.call("run", {"temp", pparts, pstarts, poffs, pst,
                                              agg_object(st, dense_agg_methods()), ptable, pflags});
        ctx.kernel(n.id, ctx.kernel_name(n.id, "part_run"), pq, body,
                   LaunchShape{rt::SizeExpr{0, {rt::SizeTerm{1, {p_go}}}, 1, 256}.gated(p_go, 1), 1,
                               threads, true, {}, std::nullopt, static_cast<int32_t>(part_smem)},
                   agent);
      }
    }
    // (phase 1 runs unless the early run's table or the partitioned way's was kept)
    rt::SlotId kept_any = early.kept;
    if (parted.kept >= 0) {
      kept_any = ctx.new_slot();
      ctx.step(rt::SetSize{
          kept_any,
          rt::SizeExpr{0, {rt::SizeTerm{1, {early.kept}}, rt::SizeTerm{1, {parted.kept}}}}});
    }
    phase1_rows = ctx.new_slot();
    ctx.step(rt::SetSize{phase1_rows, rt::SizeExpr::slot(in.size).gated(kept_any, 0, 0)});
  }
  rt::SlotId cap = ctx.new_slot();
  if (in.view && in.view->filters && ctx.options().hash_records <= 0) {
    // A select fused in front (a view that drops rows): the records can be no more than the
    // rows it keeps, and when they pass the room the sorting way evaluates the select over
    // every input row again. A room of 512 tables' slots is passed late on a selective
    // filter (TPC-H Q15 at SF 10 keeps 2.2M of 60M rows into 100K suppliers: phase 1 read
    // nearly all of lineitem before giving up, and the fused plan ran 1.99 ms against 1.31
    // unfused on the H100), so the room is a sixteenth of the input's rows when that is
    // more, at most kFilteredRoomBytes of records, and at most the rows:
    // cap = min(n, clamp(ceil(n / 16), room, max(room, bytes / record))).
    constexpr int64_t kFilteredRoomShare = 16, kFilteredRoomBytes = int64_t{128} << 20;
    const int64_t most = std::max(room, kFilteredRoomBytes / (8 + 8 * a.state_words));
    const rt::SlotId share = ctx.new_slot(), excess = ctx.new_slot();
    ctx.step(rt::SetSize{
        share, rt::SizeExpr{0, {rt::SizeTerm{1, {phase1_rows}}}, kFilteredRoomShare, room, most}});
    ctx.step(rt::SetSize{
        excess,
        rt::SizeExpr{
            0, {rt::SizeTerm{1, {phase1_rows}}, rt::SizeTerm{-1, {share}}}, 1, 0, -1, true}});
    ctx.step(rt::SetSize{
        cap, rt::SizeExpr{0, {rt::SizeTerm{1, {phase1_rows}}, rt::SizeTerm{-1, {excess}}}, 1, 1}});
  } else {
    ctx.step(rt::SetSize{cap, rt::SizeExpr{0, {rt::SizeTerm{1, {phase1_rows}}}, 1, 1, room}});
  }
  rt::BufferId rkeys = ctx.allocate(fmt::format("n{}.record_keys", n.id), 8, rt::SizeExpr::slot(cap), n.id);
  rt::BufferId rstates = ctx.allocate(fmt::format("n{}.record_states", n.id), 8,
                                      rt::SizeExpr{0, {rt::SizeTerm{a.state_words, {cap}}}}, n.id);
  rt::BufferId header = ctx.allocate(fmt::format("n{}.records", n.id), 8, rt::SizeExpr::fixed(3),
                                     n.id, true);
  std::string ns = p.slot(phase1_rows), rk = p.buffer(rkeys, "unsigned long long", false),
              rs = p.buffer(rstates, "void", false), cs = p.slot(cap),
              hd = p.buffer(header, "unsigned long long", false);
  // The dense way's kernels read the input as phase 1 does and write phase 1's record buffers:
  // the same parameters, and more (below).
  KernelParams dp = p;
  std::string make = ctx.functor(name + "_fn", p, members);
  {
    SkeletonCall agent(ctx.templates(), "HashGroupAgent",
                       {ctx.tile_policy("HashGroup"), std::to_string(capacity),
                        std::to_string(privates)},
                       "Agent");
    agent.bind("State", st);
    std::string body =
        make + agg_hooks(name + "_fn", st, hash_agg_methods()) + agent.declare() +
        agent.dynamic_temp_storage(smem) +
        agent.call(
            "run",
            {"temp", ns, HookArg::lambda("bool", {{"long long", "r"}}, " return f.keep(r); "),
             HookArg::lambda("unsigned long long", {{"long long", "r"}}, " return f.key(r); "),
             agg_object(st, hash_agg_methods()), rk, rs, cs, hd});
    // (no launch when the early run kept its table: phase1_rows 0)
    rt::SizeExpr blocks{0, {rt::SizeTerm{1, {phase1_rows}}}, tile, 0, kMaxBlocks};
    LaunchShape shape{blocks, 1, ctx.policy_threads("HashGroup"), true, nodes, std::nullopt,
                      static_cast<int32_t>(smem)};
    // In whole waves (the blocks stride over the tiles): TPC-H Q15's and Q4's filtered
    // group-bys (64 KB tables, 3 blocks an SM on the H100) ran their 512 blocks in 1.29 waves,
    // 116 blocks alone in the second (ncu, session 34).
    shape.whole_waves = true;
    ctx.kernel(n.id, name, p, body, shape, agent);
  }
  // When the records pass their room, the blocks' tables hold few of the groups: nearly
  // every row becomes a record, and sorting the records (24 bytes a row or more) costs more
  // than sorting the input. Phase 1 then stops early and says so (header[1] = n > cap); the
  // input is sorted and reduced as the sort-based plan does (H100, 2^28 rows into 2^24
  // groups: 38.3 ms through the records, 8.7 ms sorted). The runtime plan has no branches:
  // both ways are planned, each sized by a slot that is 0 on the way not taken (its sorts
  // and launches run over no rows), and both write the same output columns from row 0.
  // over = min(1, max(0, header[1] - cap)); records = header[1] x (1 - over);
  // fallback_rows = n x over.
  const rt::SlotId claimed = ctx.new_slot(), over = ctx.new_slot();
  ctx.step(rt::ReadSize{claimed, header, 1, -1, phase1_rows});
  ctx.step(rt::SetSize{over, rt::SizeExpr{0, {rt::SizeTerm{1, {claimed}}, rt::SizeTerm{-1, {cap}}},
                                          1, 0, 1, true}});
  // Between the two, the dense way (DenseGroupAgent): when the kept rows' key words span at
  // most `cap` values (the records' room) and kDenseSlots, a table indexed by the word's
  // distance from the smallest takes one atomic merge a row, and its present slots are the
  // groups in key order, written as the output (DenseWriteAgent: no records, no sort). H200,
  // 2^28 rows summed into 2^20 dense keys: one atomic a row into a key-indexed table took
  // 2.8 ms, the input's sort and reduce 7.2 (bench/groupby_partition_bench.cu, session 49).
  // Slots: span = largest - smallest + 1 (0 unless over, or when no row is kept); dense_slots
  // = span when the table takes it (below), else 0; sorting = over unless dense_slots.
  // pick: the element of `groups` (below) that holds the output's size.
  const rt::SlotId sorting = ctx.new_slot(), pick = ctx.new_slot();
  // The group counts of the three ways: [0] by the merge of the records, [1] by the fallback,
  // [2] by the dense way.
  rt::BufferId groups =
      ctx.allocate(fmt::format("n{}.count", n.id), 8, rt::SizeExpr::fixed(3), n.id);
  // Key k's output column (row g) from the key word `word` (the first key in the highest bits).
  auto key_write = [&](KernelParams& kp, size_t k, const std::string& word) {
    const Type t = in.types[static_cast<size_t>(n.group_key_index[k])];
    const int bits = passes::hash_group_key_bits(t);
    std::string field = fmt::format("(({} >> {}) & 0x{:x}ull)", word, shift[k], (1ull << bits) - 1);
    std::string value =
        t == Type::Bool     ? fmt::format("(unsigned char){}", field)
        : t == Type::String ? fmt::format("(int){}", field)
        : t == Type::F32 ? fmt::format("ranc::tpl::from_total_order_key((unsigned int){})", field)
                         : fmt::format("(int)((unsigned int){} ^ 0x80000000u)", field);
    return fmt::format("    {}[g] = {};\n", kp.buffer(out.columns[k], storage_ctype(t), false),
                       value);
  };
  // The dense way's table, when planned: its slots, its bounds (words + 2), the states and the
  // flags; its output step is planned once the output columns are allocated (below).
  // (spec: the speculative run's slots when it kept its table, else 0, and its buffers)
  struct {
    rt::SlotId slots = -1, spec = -1;
    rt::BufferId words = -1, table = -1, flags = -1, spec_table = -1, spec_flags = -1;
  } dense;
  if (dense_limit != 0) {
    const rt::SlotId scan = ctx.new_slot(), low = ctx.new_slot(), high = ctx.new_slot(),
                     span = ctx.new_slot(), fits = ctx.new_slot(), dense_slots = ctx.new_slot(),
                     dense_rows = ctx.new_slot(), shared_span = ctx.new_slot(),
                     device_span = ctx.new_slot(), shared_rows = ctx.new_slot(),
                     sampled = ctx.new_slot(), sample_low = ctx.new_slot(),
                     sample_high = ctx.new_slot(), sample_span = ctx.new_slot(),
                     sample_fits = ctx.new_slot(), spec_parts = ctx.new_slot(),
                     spec_slots = ctx.new_slot(), spec_rows = ctx.new_slot(),
                     missed = ctx.new_slot(), spec_kept = ctx.new_slot(), redo = ctx.new_slot(),
                     dense_total = ctx.new_slot();
    const KernelParams row_params = dp;  // (the bounds kernel's: the rows' only)
    // f = 1 when span s <= cap.
    auto fits_of = [&](rt::SlotId f, rt::SlotId s) {
      ctx.step(rt::SetSize{
          f, rt::SizeExpr{1, {rt::SizeTerm{1, {cap}}, rt::SizeTerm{-1, {s}}}, 1, 0, 1, true}});
    };
    // First the records phase 1 wrote before it gave up: all `cap` of them (every claim below
    // the room is written), key words of kept rows, so their span is at most the input's. Past
    // the limit, the pass over the input is skipped (H200, 2^28 rows into 2^22 keys: it cost
    // 0.44 ms for a table that was not built).
    ctx.step(rt::SetSize{sampled, rt::SizeExpr{0, {rt::SizeTerm{1, {cap, over}}}}});
    {  // (no launch when phase 1 kept its records: sampled 0)
      KernelParams sp;
      const std::string sk = sp.buffer(rkeys, "unsigned long long"), sn = sp.slot(sampled),
                        sb = sp.buffer(words, "unsigned long long", false);
      bounds_kernel(
          "dense_record_bounds", sp,
          fmt::format("  __device__ __forceinline__ bool keep(long long) const {{ return true; }}\n"
                      "  __device__ __forceinline__ unsigned long long key(long long r) const {{ "
                      "return {}[r]; }}\n",
                      sk),
          sampled, sn, sb, true, false);
    }
    read_span(sample_span, sample_low, sample_high, 0, over);
    fits_of(sample_fits, sample_span);
    // With CodegenOptions::hash_dense_speculate (on by default), the speculative run
    // (DenseGroupAgent::speculative_run), when the records' span fits the shared-memory tables:
    // that span from the records' smallest word, rounded up to whole tables (spec_slots; 0 when
    // not taken), without a pass over the input for its bounds (H200, 2^28 rows into 2^14 keys:
    // that pass took 0.34 of 1.42 ms, session 50). Its table is kept unless a kept row missed
    // it (spec_kept = spec_slots, else 0); when not kept the plan goes on as before (redo = 1):
    // the input's bounds, then the table they call for.
    const bool speculate = ctx.options().hash_dense_speculate && shared_slots > 0;
    ctx.step(rt::SetSize{spec_parts, rt::SizeExpr{0,
                                                  {rt::SizeTerm{1, {sample_span, sample_fits}}},
                                                  std::max<int64_t>(shared_slots, 1)}
                                         .gated(sample_span, 1, speculate ? shared_span_most : 0)});
    ctx.step(rt::SetSize{spec_slots, rt::SizeExpr{0,
                                                  {rt::SizeTerm{shared_slots, {spec_parts}}},
                                                  1,
                                                  0,
                                                  std::max<int64_t>(shared_span_most, 0)}});
    ctx.step(rt::SetSize{spec_rows, rt::SizeExpr::slot(in.size).gated(spec_slots, 1)});
    // The tables and their flags (sized once their spans are known), and the functors of the
    // dense kernels: the speculative run's (its table's) and the others'.
    const rt::BufferId spec_table =
        speculate ? ctx.declare(fmt::format("n{}.dense_spec_table", n.id), 8,
                                rt::SizeExpr{0, {rt::SizeTerm{a.state_words, {spec_slots}}}}, n.id)
                  : -1;
    const rt::BufferId spec_flags = speculate
                                        ? ctx.declare(fmt::format("n{}.dense_spec_flags", n.id), 1,
                                                      rt::SizeExpr::slot(spec_slots), n.id)
                                        : -1;
    rt::BufferId table =
        ctx.declare(fmt::format("n{}.dense_table", n.id), 8,
                    rt::SizeExpr{0, {rt::SizeTerm{a.state_words, {dense_slots}}}}, n.id);
    rt::BufferId flags =
        ctx.declare(fmt::format("n{}.dense_flags", n.id), 1, rt::SizeExpr::slot(dense_slots), n.id);
    const std::string dname = name + "_dense";  // (the functor of the kernels below)
    const std::string dword = dp.buffer(words, "unsigned long long", false),
                      dbounds = dword + " + 2", dslots_p = dp.slot(dense_slots),
                      drows_p = dp.slot(dense_rows), srows_p = dp.slot(shared_rows),
                      dtable = dp.buffer(table, "void", false),
                      dflags = dp.buffer(flags, "unsigned char", false);
    const std::string dmake = dense_functor(dname + "_fn", dp);
    if (speculate) {
      KernelParams sq = row_params;  // (the speculative kernels': the rows' and their table's)
      const std::string sword = sq.buffer(words, "unsigned long long", false),
                        sslots_p = sq.slot(spec_slots), sr_p = sq.slot(spec_rows),
                        stable = sq.buffer(spec_table, "void", false),
                        sflags = sq.buffer(spec_flags, "unsigned char", false);
      const std::string smake = dense_functor(dname + "_spec_fn", sq);
      ctx.step(rt::Alloc{spec_table});
      ctx.step(rt::Alloc{spec_flags, true});
      init_kernel("dense_spec_init", sq, smake, spec_slots, sslots_p, stable);
      shared_kernel("dense_spec_run", sq, smake, "speculative_run", spec_rows,
                    {"temp", sr_p, keep_hook, key_hook, agg_object(st, dense_agg_methods()), sword,
                     sslots_p, stable, sflags, sword + " + 4"});
      ctx.step(rt::ReadSize{missed, words, 4, -1, spec_slots});
    } else {
      ctx.step(rt::SetSize{missed, rt::SizeExpr::fixed(0)});
    }
    ctx.step(rt::SetSize{spec_kept, rt::SizeExpr::slot(spec_slots).gated(missed, 0, 0)});
    ctx.step(rt::SetSize{redo, rt::SizeExpr::fixed(1).gated(spec_kept, 0, 0)});
    ctx.step(
        rt::SetSize{scan, rt::SizeExpr{0, {rt::SizeTerm{1, {in.size, sample_fits, redo}}}}.gated(
                              sample_span, 1, dense_most)});
    {  // The bounds of the key words, over the rows when phase 1 gave up (else none).
      KernelParams bp = row_params;
      const std::string bb = bp.buffer(words, "unsigned long long", false) + " + 2",
                        bn = bp.slot(scan);
      bounds_kernel("dense_bounds", bp, row_members, scan, bn, bb, true, true);
    }
    read_span(span, low, high, 2, scan);
    fits_of(fits, span);
    // shared_span = span when 1 <= span <= shared_span_most; device_span = span when
    // max(fewest, shared_span_most + 1) <= span <= min(cap, dense_most); dense_slots = their sum.
    ctx.step(rt::SetSize{shared_span, rt::SizeExpr{0, {rt::SizeTerm{1, {span, fits}}}}.gated(
                                          span, 1, std::max<int64_t>(shared_span_most, 0))});
    ctx.step(
        rt::SetSize{device_span, rt::SizeExpr{0, {rt::SizeTerm{1, {span, fits}}}}.gated(
                                     span, std::max(fewest, shared_span_most + 1), dense_most)});
    ctx.step(rt::SetSize{
        dense_slots,
        rt::SizeExpr{0, {rt::SizeTerm{1, {shared_span}}, rt::SizeTerm{1, {device_span}}}}});
    ctx.step(rt::SetSize{dense_rows, rt::SizeExpr::slot(in.size).gated(device_span, 1)});
    ctx.step(rt::SetSize{shared_rows, rt::SizeExpr::slot(in.size).gated(shared_span, 1)});
    ctx.step(rt::Alloc{table});
    ctx.step(rt::Alloc{flags, true});
    init_kernel("dense_init", dp, dmake, dense_slots, dslots_p, dtable);
    {
      SkeletonCall agent = dense_agent();
      std::string body =
          dmake + agent.declare() +
          agent.call("run", {drows_p, keep_hook, key_hook, agg_object(st, dense_agg_methods()),
                             dbounds, dtable, dflags});
      ctx.kernel(n.id, ctx.kernel_name(n.id, "dense_run"), dp, body,
                 LaunchShape{rt::SizeExpr::slot(dense_rows), tile, threads, true, nodes}, agent);
    }
    if (shared_slots > 0)
      shared_kernel("dense_shared_run", dp, dmake, "shared_run", shared_rows,
                    {"temp", srows_p, keep_hook, key_hook, agg_object(st, dense_agg_methods()),
                     dbounds, dslots_p, dtable, dflags});
    // dense_total: the groups' room of the dense way's table (at most one of the three is not
    // 0: the early run's kept table leaves phase 1 no rows, so no records pass their room).
    rt::SizeExpr total{0, {rt::SizeTerm{1, {dense_slots}}, rt::SizeTerm{1, {spec_kept}}}};
    if (early.kept >= 0) total.terms.push_back(rt::SizeTerm{1, {early.kept}});
    if (parted.kept >= 0) total.terms.push_back(rt::SizeTerm{1, {parted.kept}});
    ctx.step(rt::SetSize{dense_total, total});
    ctx.step(rt::SetSize{sorting, rt::SizeExpr::slot(over).gated(dense_total, 0, 0)});
    ctx.step(rt::SetSize{dense_groups, rt::SizeExpr::slot(dense_total)});
    const rt::SlotId dense_used = ctx.new_slot();
    ctx.step(rt::SetSize{dense_used, rt::SizeExpr::fixed(1).gated(dense_total, 1)});
    ctx.step(rt::SetSize{
        pick, rt::SizeExpr{0, {rt::SizeTerm{1, {sorting}}, rt::SizeTerm{2, {dense_used}}}}});
    dense = {dense_total, spec_kept, words, table, flags, spec_table, spec_flags};
  } else {
    ctx.step(rt::SetSize{sorting, rt::SizeExpr::slot(over)});
    ctx.step(rt::SetSize{dense_groups, rt::SizeExpr::fixed(0)});
    ctx.step(rt::SetSize{pick, rt::SizeExpr::slot(sorting)});
  }
  ctx.step(rt::SetSize{
      records, rt::SizeExpr{0, {rt::SizeTerm{1, {claimed}}, rt::SizeTerm{-1, {claimed, over}}}}});
  ctx.step(rt::SetSize{fallback_rows, rt::SizeExpr{0, {rt::SizeTerm{1, {in.size, sorting}}}}});
  for (rt::BufferId b : out.columns) ctx.step(rt::Alloc{b});
  // The dense way's present slots in slot order (key order) as the output rows, from row 0: a
  // count of each tile of slots, then the writes (each tile sums the counts before it).
  if (dense.slots >= 0) {
    KernelParams wq = q;  // (the names of the output's writes)
    const rt::SlotId tiles = ctx.new_slot();
    ctx.step(rt::SetSize{tiles, rt::SizeExpr{0, {rt::SizeTerm{1, {dense.slots}}}, tile}});
    const rt::BufferId counts =
        ctx.allocate(fmt::format("n{}.dense_counts", n.id), 8, rt::SizeExpr::slot(tiles), n.id);
    // (the speculative run's table when it was kept, slot 0 at its records' bounds; else the
    // table of the input's bounds)
    const bool spec = dense.spec_table >= 0;
    const std::string wslots = wq.slot(dense.slots), wspec = spec ? wq.slot(dense.spec) : "",
                      wflags = wq.buffer(dense.flags, "unsigned char"),
                      wcounts = wq.buffer(counts, "long long", false),
                      wbounds = wq.buffer(dense.words, "unsigned long long") + " + 2",
                      wtable = wq.buffer(dense.table, "void"),
                      wgroups = wq.buffer(groups, "long long", false) + " + 2";
    // (before both, the early run's table when it was kept, or the partitioned way's: slot 0
    // at words[8])
    const std::string wearly = early.kept >= 0 ? wq.slot(early.kept) : "",
                      wparted = parted.kept >= 0 ? wq.slot(parted.kept) : "";
    auto either = [&](const std::string& plain, rt::BufferId b, rt::BufferId e, rt::BufferId pt,
                      const char* type) {
      std::string inner =
          spec ? fmt::format("({} ? {} : {})", wspec, wq.buffer(b, type), plain) : plain;
      if (early.kept >= 0) inner = fmt::format("({} ? {} : {})", wearly, wq.buffer(e, type), inner);
      if (parted.kept >= 0)
        inner = fmt::format("({} ? {} : {})", wparted, wq.buffer(pt, type), inner);
      return inner;
    };
    const std::string use_flags = either(wflags, dense.spec_flags, early.flags, parted.flags,
                                         "unsigned char"),
                      use_table =
                          either(wtable, dense.spec_table, early.table, parted.table, "void"),
                      use_bounds = fmt::format(
                          "{} + ({}{}{})", wq.buffer(dense.words, "unsigned long long"),
                          parted.kept >= 0 ? wparted + " ? 8 : " : "",
                          early.kept >= 0 ? wearly + " ? 8 : " : "",
                          spec ? fmt::format("{} ? 0 : 2", wspec) : "2");
    std::string wbody;
    for (size_t k = 0; k < nk; ++k) wbody += key_write(wq, k, "w");
    wbody += a.write;
    const std::string wname = ctx.kernel_name(n.id, "dense_write");
    const std::string wmake = ctx.functor(
        wname + "_fn", wq,
        fmt::format("  using State = {};\n"
                    "  __device__ __forceinline__ void write(long long g, unsigned long long w, "
                    "const State& s) const {{\n{}  }}\n",
                    st, wbody));
    const AggMethods wmethods = {
        {"write",
         {"void", {{"long long", "g"}, {"unsigned long long", "word"}, {"const State&", "s"}}},
         "f->write(g, word, s);"}};
    const std::string whooks = agg_hooks(wname + "_fn", st, wmethods);
    auto writer = [&] {
      SkeletonCall agent(ctx.templates(), "DenseWriteAgent", {ctx.tile_policy("HashGroup")},
                         "Agent");
      agent.bind("State", st);
      return agent;
    };
    {
      SkeletonCall agent = writer();
      std::string body =
          wmake + whooks + agent.declare() +
          agent.call("count", {wslots, agg_object(st, wmethods), use_flags, wcounts});
      ctx.kernel(n.id, ctx.kernel_name(n.id, "dense_count"), wq, body,
                 LaunchShape{rt::SizeExpr::slot(dense.slots), tile, threads, true}, agent);
    }
    {
      SkeletonCall agent = writer();
      std::string body = wmake + whooks + agent.declare() + agent.temp_storage() +
                         agent.call("write", {"temp", wslots, agg_object(st, wmethods), use_bounds,
                                              use_table, use_flags, wcounts, wgroups});
      ctx.kernel(n.id, wname, wq, body,
                 LaunchShape{rt::SizeExpr::slot(dense.slots), tile, threads, true}, agent);
    }
  }

  // Phase 2: sort the records by key word, merge each key's states.
  const rt::SizeExpr count = rt::SizeExpr::slot(records);
  rt::BufferId perm = ctx.allocate(fmt::format("n{}.record_ids", n.id), 4, count, n.id);
  ctx.step(rt::Iota{perm, count});
  rt::BufferId skeys = ctx.allocate(fmt::format("n{}.sorted_keys", n.id), 8, count, n.id);
  rt::BufferId sperm = ctx.allocate(fmt::format("n{}.sorted_ids", n.id), 4, count, n.id);
  ctx.step(rt::SortPairs{rkeys, skeys, perm, sperm, Type::I64, false, count, n.id});

  const int64_t rtile = static_cast<int64_t>(ctx.policy_threads("Reduce")) * ctx.policy_items("Reduce");
  rt::SlotId tiles = ctx.num_tiles(n.id, records, -1, rtile);
  rt::BufferId state = ctx.tile_state(n.id, "tile_state", tiles);
  rt::BufferId meta = ctx.allocate(fmt::format("n{}.meta", n.id), 8,
                                   rt::SizeExpr{0, {rt::SizeTerm{3, {tiles}}}}, n.id);
  rt::BufferId carry = ctx.allocate(fmt::format("n{}.carry", n.id), 8,
                                    rt::SizeExpr{0, {rt::SizeTerm{a.state_words, {tiles}}}}, n.id);
  rt::BufferId tail = ctx.allocate(fmt::format("n{}.tail", n.id), 8,
                                   rt::SizeExpr{0, {rt::SizeTerm{a.state_words, {tiles}}}}, n.id);
  std::string sk = q.buffer(skeys, "unsigned long long"), sp = q.buffer(sperm, "unsigned int"),
              stin = q.buffer(rstates, "void");
  std::string write;
  for (size_t k = 0; k < nk; ++k) write += key_write(q, k, sk + "[first]");
  write += a.write;
  std::string nr = q.slot(records), ts = q.buffer(state, "void", false),
              mt = q.buffer(meta, "long long", false), cnt = q.buffer(groups, "long long", false),
              nt = q.slot(tiles), pc = q.buffer(carry, "void", false), pt = q.buffer(tail, "void", false);
  const std::string mname = ctx.kernel_name(n.id, "hash_reduce_merge");
  std::string mmembers = fmt::format(
      "  using State = {0};\n"
      "  __device__ __forceinline__ State init() const {{\n    State s;\n{1}    return s;\n  }}\n"
      "  __device__ __forceinline__ void merge(State& a, const State& b) const {{\n{2}  }}\n"
      "  __device__ __forceinline__ void accumulate(State& s, long long r) const {{\n"
      "    merge(s, static_cast<const State*>({3})[{4}[r]]);\n  }}\n"
      "  __device__ __forceinline__ bool same(long long i, long long j) const {{ return {5}[i] == {5}[j]; }}\n"
      "  __device__ __forceinline__ void write(long long g, long long first, const State& s) const {{\n{6}  }}\n",
      st, a.init, a.merge, stin, sp, sk, write);
  std::string mmake = ctx.functor(mname + "_fn", q, mmembers);
  segmented_reduce_kernels(ctx, n.id, mname, "hash_reduce_fixup", q, mmake, st,
                           {nr, ts, pc, pt, mt, cnt, nt}, tiles, {});
  if (a.overflow >= 0) ctx.step(rt::CheckFlag{a.overflow, a.overflow_message, n.id});

  // The fallback: the input's first fallback_rows rows (all or none), materialised when a
  // view (a copy of it, over those rows), sorted by the group keys and reduced.
  DeviceRelation rows = in;
  rows.size = fallback_rows;
  if (rows.view) {
    rows.view = std::make_shared<RowView>(*in.view);
    rows = ctx.dense(rows);
  }
  // Only the attributes the reduce reads go through the sort: the others' gathers were the
  // largest step of TPC-H Q17 at SF 10 (lineitem by l_partkey, 60M rows: the gather of
  // l_quantity and of l_extendedprice, which only the query's join reads, 4.3 ms of 7.8).
  const std::vector<bool> reads = passes::reduce_attributes_read(n, rows.columns.size());
  for (size_t c = 0; c < rows.columns.size(); ++c)
    if (!reads[c]) rows.columns[c] = -1;
  passes::Order keys;
  for (int32_t k : n.group_key_index) keys.push_back({k, false});
  sorted_reduce(ctx, n, ctx.sort(n.id, rows, keys), keys, out, groups, 1);
  out.size = ctx.new_slot();
  ctx.step(rt::ReadSize{out.size, groups, 0, pick});
  ctx.set_relation(n.id, out);
}

}  // namespace

void lower_reduce(LoweringContext& ctx, const Node& n) {
  DeviceRelation in = ctx.relation(n.inputs.at(0));
  const size_t nk = n.group_key_index.size();
  // Grouped by sorting, a dropped row could leave a group empty: only views that keep
  // every row are read directly; the hash path and the global reduce evaluate the filter.
  const bool per_row = nk == 0 || ctx.physical(n.id).hash_reduce;
  // A global reduce fused after a join folds the join's matches (fold_global_reduce).
  const bool folds = nk == 0 && in.view && in.view->fold;
  if (in.view && !folds &&
      (in.view->source != RowView::Source::Index || (!per_row && in.view->filters)))
    in = ctx.dense(in);
  if (nk == 0) {
    lower_global_reduce(ctx, n, in);
    return;
  }
  if (ctx.physical(n.id).hash_reduce) {
    lower_hash_reduce(ctx, n, in);
    return;
  }
  DeviceRelation out = ctx.allocate_relation(n, rt::SizeExpr::slot(in.size), -1);
  rt::BufferId count =
      ctx.allocate(fmt::format("n{}.count", n.id), 8, rt::SizeExpr::fixed(1), n.id);
  sorted_reduce(ctx, n, in, ctx.physical(n.id).compare_keys, out, count, 0);
  out.size = ctx.new_slot();
  ctx.step(rt::ReadSize{out.size, count, 0});
  ctx.set_relation(n.id, out);
}

}  // namespace ranc::codegen
