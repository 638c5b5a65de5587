// A fixpoint's resident rounds (resident.h, rt::ResidentRounds, templates/resident.cuh).
//
// A thin recursion (a chain's transitive closure: thousands of rounds of a few thousand
// tuples) spends its time issuing a round's steps and waiting for them, not computing: about
// 85 us a round on the H100 (bench/RESULTS.md, session 32). The resident kernel runs rounds
// of such a loop without the host: each block takes delta tuples (held in its shared
// memory), its threads evaluate every recursive rule on them (the joins as binary searches
// of the invariants, which the loop's base case sorted by their join keys, read from shared
// memory where they fit), and the block keeps each candidate that a hash set takes (the set
// holds the full relation's words, or a large full relation is binary-searched) as its
// next round's delta; a round ends with one atomic a block, which also places the block's
// tuples in the global words the host merges. The kernel is generated here from the
// checked rules, as a chain of nested loops and conditions per rule. On the H100 a chain's
// round takes about 5.5 us this way (bench/RESULTS.md, session 38). Without a round limit the
// blocks need no rounds: each block's warps take its tuples from a queue in shared memory and
// push the new ones back (the worklist, resident.cuh), so a tuple's successors wait only for
// its own inserts: the 2000-node chain in 7.8-8.0 ms on the H200, against 11.3 with
// asynchronous rounds (session 39's, now gone) and 13.4 with the barrier (session 40).
#include "resident.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace ranc::codegen {
namespace {

struct NotResident {};  // thrown by the emitter: the group does not qualify

bool integer_like(Type t) { return t == Type::I32 || t == Type::I64 || t == Type::Date; }

bool nullable(const Schema& s) {
  for (const Attribute& a : s.attributes)
    if (a.nullable) return true;
  return false;
}

class RuleEmitter {
 public:
  RuleEmitter(LoweringContext& ctx, const FixpointDef& def, KernelParams& params,
              const std::vector<ResidentInvariant>& invariants)
      : ctx_(ctx),
        def_(def),
        rules_(*def.checked_rules),
        params_(params),
        invariants_(invariants),
        recursive_(*def.checked_rules, def.names) {
    const std::vector<NodeId> outs = rules_.outputs();
    const std::vector<NodeId> def_outs = def.rules->outputs();
    for (size_t r = 0; r < outs.size(); ++r) map(outs[r], def_outs.at(r));
  }

  bool recursive(NodeId id) { return recursive_(id); }

  // The code of one rule over the delta tuple `delta_vars`: nested loops and conditions
  // around a call of `add(vars)` with the rule's output attributes. `joins` receives the
  // indices of the rule's inner joins (whose longest key runs bound its candidates).
  std::string rule(NodeId out, const std::vector<std::string>& delta_vars,
                   const std::function<std::string(const std::vector<std::string>&)>& add,
                   std::vector<int>& joins) {
    std::string code;
    int open = 0;
    const std::vector<std::string> vars = emit(rules_.node(out).inputs.at(0), delta_vars, code, open, joins);
    code += add(vars);
    for (int i = 0; i < open; ++i) code += "}\n";
    return code;
  }
  const std::string& runs_code() const { return runs_; }
  // Copies of the invariants' columns the rules read into shared memory where they fit
  // (templates/resident.cuh stage()): the pointers the rules use.
  const std::string& staging_code() const { return staging_; }
  int joins() const { return joins_; }

 private:
  void map(NodeId checked, NodeId original) {
    to_def_[checked] = original;
    const Node& c = rules_.node(checked);
    const Node& o = def_.rules->node(original);
    internal_check(c.inputs.size() == o.inputs.size(), "resident: rules and checked rules differ");
    for (size_t k = 0; k < c.inputs.size(); ++k) map(c.inputs[k], o.inputs[k]);
  }

  std::string fresh(std::string_view ctype, const std::string& value, std::string& code) {
    std::string v = fmt::format("v{}", vars_++);
    code += fmt::format("const {} {} = ({})({});\n", ctype, v, ctype, value);
    return v;
  }

  // The pointer the rules read column `b` (of `rows` elements) through.
  std::string staged(rt::BufferId b, std::string_view ctype, const std::string& rows) {
    const std::string local = fmt::format("t{}", b);
    if (staged_.insert(b).second) {
      staging_ += fmt::format("  const {0}* {1} = R::stage({2}, {3}, stage_area, sizeof(stage_area), &stage_used);\n",
                              ctype, local, params_.buffer(b, ctype), rows);
    }
    return local;
  }

  std::string expr(const Expr& e, const std::vector<std::string>& vars) {
    if (!e.ptr()->type || e.ptr()->nullable) throw NotResident{};
    KernelParams scratch;
    std::string text = ctx_.expr(e.ptr(), scratch, [&](int32_t i) {
      return vars.at(static_cast<size_t>(i));
    });
    if (scratch.uses_error_flag) throw NotResident{};
    params_.merge(scratch);
    return text;
  }

  std::vector<std::string> emit(NodeId id, const std::vector<std::string>& delta_vars,
                                std::string& code, int& open, std::vector<int>& joins) {
    const Node& n = rules_.node(id);
    if (!recursive(id)) throw NotResident{};
    if (nullable(n.schema)) throw NotResident{};
    switch (n.kind) {
      case OpKind::Input:
        return delta_vars;
      case OpKind::Sort:
      case OpKind::Distinct:  // a set either way: the rounds keep new tuples once
        return emit(n.inputs.at(0), delta_vars, code, open, joins);
      case OpKind::Select: {
        std::vector<std::string> vars = emit(n.inputs.at(0), delta_vars, code, open, joins);
        code += fmt::format("if ({}) {{\n", expr(n.predicate, vars));
        ++open;
        return vars;
      }
      case OpKind::Project: {
        const std::vector<std::string> in = emit(n.inputs.at(0), delta_vars, code, open, joins);
        std::vector<std::string> vars;
        for (size_t j = 0; j < n.exprs.size(); ++j)
          vars.push_back(fresh(value_ctype(n.schema[j].type), expr(n.exprs[j].expr, in), code));
        return vars;
      }
      case OpKind::Join:
        return join(n, delta_vars, code, open, joins);
      default:
        throw NotResident{};
    }
  }

  std::vector<std::string> join(const Node& n, const std::vector<std::string>& delta_vars,
                                std::string& code, int& open, std::vector<int>& joins) {
    if (n.null_safe_keys || n.left_keys.empty() || recursive(n.inputs.at(1)) ||
        !recursive(n.inputs.at(0)))
      throw NotResident{};
    const bool inner = n.join_kind == JoinKind::Inner;
    if (!inner && n.join_kind != JoinKind::Semi && n.join_kind != JoinKind::Anti) throw NotResident{};
    if (!inner && n.predicate.valid()) throw NotResident{};
    const NodeId right_def = to_def_.at(n.inputs.at(1));
    const ResidentInvariant* inv = nullptr;
    for (const ResidentInvariant& i : invariants_)
      if (i.rules_id == right_def && i.order == n.right_keys) inv = &i;
    if (!inv) throw NotResident{};
    const Schema& left = rules_.node(n.inputs.at(0)).schema;
    const Schema& right = rules_.node(n.inputs.at(1)).schema;
    if (inv->rel.columns.size() != right.size()) throw NotResident{};
    for (size_t k = 0; k < n.left_keys.size(); ++k) {
      const Type lt = left[static_cast<size_t>(n.left_key_index.at(k))].type;
      const Type rt = right[static_cast<size_t>(n.right_key_index.at(k))].type;
      if (!integer_like(lt) || lt != rt) throw NotResident{};
    }
    std::vector<std::string> vars = emit(n.inputs.at(0), delta_vars, code, open, joins);

    const int j = joins_++;
    const std::string rows = params_.slot(inv->rel.size);
    auto key_col = [&](size_t k) {
      const size_t c = static_cast<size_t>(n.right_key_index.at(k));
      return staged(inv->rel.columns.at(c), storage_ctype(right[c].type), rows);
    };
    auto global_key_col = [&](size_t k) {
      const size_t c = static_cast<size_t>(n.right_key_index.at(k));
      return params_.buffer(inv->rel.columns.at(c), storage_ctype(right[c].type));
    };
    // Row `r`'s keys against the left tuple's: less and equal.
    std::string less = "false", eq = "true";
    for (size_t k = n.left_keys.size(); k-- > 0;) {
      const std::string col = key_col(k);
      const std::string& v = vars.at(static_cast<size_t>(n.left_key_index.at(k)));
      less = fmt::format("({0}[r] < {1} || ({0}[r] == {1} && {2}))", col, v, less);
      eq = fmt::format("{}[r] == {} && {}", col, v, eq);
    }
    code += fmt::format(
        "long long lo{0} = 0;\n"
        "{{\n"
        "  long long hi = {1};\n"
        "  while (lo{0} < hi) {{\n"
        "    const long long r = lo{0} + ((hi - lo{0}) >> 1);\n"
        "    if ({2}) lo{0} = r + 1; else hi = r;\n"
        "  }}\n"
        "}}\n"
        "auto same{0} = [&](long long r) {{ return {3}; }};\n",
        j, rows, less, eq);
    if (!inner) {
      code += fmt::format("if ({}(lo{} < {} && same{}(lo{}))) {{\n",
                          n.join_kind == JoinKind::Anti ? "!" : "", j, rows, j, j);
      ++open;
      return vars;
    }
    joins.push_back(j);
    code += fmt::format("for (long long j{0} = lo{0}; j{0} < {1} && same{0}(j{0}); ++j{0}) {{\n", j, rows);
    ++open;
    for (size_t c = 0; c < right.size(); ++c) {
      if (std::find(n.right_key_index.begin(), n.right_key_index.end(), static_cast<int32_t>(c)) !=
          n.right_key_index.end())
        continue;
      const std::string col = staged(inv->rel.columns[c], storage_ctype(right[c].type), rows);
      vars.push_back(fresh(value_ctype(right[c].type), fmt::format("{}[j{}]", col, j), code));
    }
    if (n.predicate.valid()) {
      code += fmt::format("if ({}) {{\n", expr(n.predicate, vars));
      ++open;
    }
    // The longest run of equal keys in the sorted invariant bounds the matches of a row.
    std::string row_eq = "true";
    for (size_t k = 0; k < n.right_keys.size(); ++k)
      row_eq = fmt::format("{0}[a] == {0}[b] && {1}", global_key_col(k), row_eq);
    runs_ += fmt::format(
        "{{\n"
        "  auto same = [&](long long a, long long b) {{ return {0}; }};\n"
        "  for (long long i = tid; i < {1}; i += stride)\n"
        "    if (i == 0 || !same(i - 1, i)) {{\n"
        "      const long long len = R::run_length(i, {1}, [&](long long k) {{ return same(k, i); }});\n"
        "      atomicMax(reinterpret_cast<unsigned long long*>(ctl + R::kRuns + {2}), (unsigned long long)len);\n"
        "    }}\n"
        "}}\n",
        row_eq, rows, j);
    return vars;
  }

  LoweringContext& ctx_;
  const FixpointDef& def_;
  const Program& rules_;
  KernelParams& params_;
  const std::vector<ResidentInvariant>& invariants_;
  ReadsRecursive recursive_;
  std::map<NodeId, NodeId> to_def_;
  int vars_ = 0;
  int joins_ = 0;
  std::string runs_;
  std::string staging_;
  std::set<rt::BufferId> staged_;
};

}  // namespace

std::optional<rt::ResidentRounds> resident_rounds(LoweringContext& ctx, const Node& n,
                                                  const FixpointDef& def,
                                                  const std::vector<ResidentInvariant>& invariants,
                                                  const DeviceRelation& full,
                                                  const DeviceRelation& delta) {
  if (!ctx.options().resident_rounds || def.names.size() != 1 || def.checked_rules == nullptr)
    return std::nullopt;
  const Schema& schema = def.schemas.at(0);
  if (nullable(schema) || full.is_view() || delta.is_view()) return std::nullopt;
  auto word32 = [&](size_t c) { return schema[c].type == Type::I32 || schema[c].type == Type::Date; };
  rt::Packing packing;
  if (schema.size() == 1 && word32(0))
    packing = rt::Packing::I32;
  else if (schema.size() == 1 && schema[0].type == Type::I64)
    packing = rt::Packing::I64;
  else if (schema.size() == 2 && word32(0) && word32(1))
    packing = rt::Packing::I32x2;
  else
    return std::nullopt;

  rt::ResidentRounds rr;
  rr.packing = packing;
  rr.full = full.columns;
  rr.delta = delta.columns;
  rr.full_size = full.size;
  rr.delta_size = delta.size;
  const rt::SizeExpr none = rt::SizeExpr::fixed(0);
  rr.words = ctx.declare(fmt::format("n{}.resident.words", n.id), 8, none, n.id);
  rr.table = ctx.declare(fmt::format("n{}.resident.table", n.id), 8, none, n.id);
  rr.control = ctx.declare(fmt::format("n{}.resident.control", n.id), 8, none, n.id);
  rr.room = ctx.new_slot();
  rr.mask = ctx.new_slot();
  rr.rounds = ctx.new_slot();
  rr.max_rows = ctx.new_slot();
  rr.search_full = ctx.new_slot();
  rr.prologue = ctx.new_slot();

  KernelParams params;
  const std::string ctl = params.buffer(rr.control, "long long", false);
  const std::string words = params.buffer(rr.words, "unsigned long long", false);
  const std::string table = params.buffer(rr.table, "unsigned long long", false);
  const std::string room = params.slot(rr.room), mask = params.slot(rr.mask);
  const std::string max_rounds = params.slot(rr.rounds), max_rows = params.slot(rr.max_rows);
  const std::string full_rows = params.slot(full.size), entry_rows = params.slot(delta.size);
  const std::string search_full = params.slot(rr.search_full);
  const std::string prologue = params.slot(rr.prologue);
  std::vector<std::string> full_cols, delta_cols;
  for (size_t c = 0; c < schema.size(); ++c) {
    full_cols.push_back(params.buffer(full.columns.at(c), storage_ctype(schema[c].type)));
    delta_cols.push_back(params.buffer(delta.columns.at(c), storage_ctype(schema[c].type)));
  }
  auto pack = [&](const std::vector<std::string>& v) {
    switch (packing) {
      case rt::Packing::I32:
        return fmt::format("R::pack_i32((int)({}))", v.at(0));
      case rt::Packing::I32x2:
        return fmt::format("R::pack_i32x2((int)({}), (int)({}))", v.at(0), v.at(1));
      default:
        return fmt::format("R::pack_i64((long long)({}))", v.at(0));
    }
  };

  // The rules: each reads the delta once (a linear rule) through the supported operators.
  std::string rules_code;
  std::vector<std::vector<int>> rule_joins;
  std::string runs, staging;
  int joins = 0;
  try {
    RuleEmitter emitter(ctx, def, params, invariants);
    const std::vector<NodeId> outs = def.checked_rules->outputs();
    std::vector<std::string> d;
    for (size_t c = 0; c < schema.size(); ++c) d.push_back(fmt::format("d{}", c));
    for (NodeId out : outs) {
      const NodeId root = def.checked_rules->node(out).inputs.at(0);
      if (!emitter.recursive(root)) continue;  // a base rule: nothing new after round 0
      rule_joins.emplace_back();
      const std::string body = emitter.rule(out, d, [&](const std::vector<std::string>& v) {
        if (v.size() != schema.size()) throw NotResident{};
        return fmt::format(
            "{{\n  const unsigned long long w = {};\n"
            "  if ({} == 0 || !R::contains(full, {}, w)) R::push(batch, w, {}, {}, {}, out);\n}}\n",
            pack(v), search_full, full_rows, table, mask, ctl);
      }, rule_joins.back());
      rules_code += fmt::format("{{\n{}}}\n", body);
    }
    runs = emitter.runs_code();
    staging = emitter.staging_code();
    joins = emitter.joins();
  } catch (const NotResident&) {
    return std::nullopt;
  }
  if (rule_joins.empty()) return std::nullopt;
  rr.control_words = rt::ResidentRounds::kControlHeader + joins;

  const std::string name = ctx.kernel_name(n.id, "resident");
  std::string bound = "0";
  for (const std::vector<int>& js : rule_joins) {
    std::string product = "1";
    for (int j : js)
      product = fmt::format("R::mul_sat({}, *reinterpret_cast<volatile long long*>(ctl + R::kRuns + {}))",
                            product, j);
    bound = fmt::format("R::add_sat({}, {})", bound, product);
  }
  // The word of row i of `cols` (`ns`: where pack_* is).
  auto word_of = [&](const std::vector<std::string>& cols, const std::string& ns) {
    switch (packing) {
      case rt::Packing::I32x2:
        return fmt::format("{}pack_i32x2({}[i], {}[i])", ns, cols[0], cols[1]);
      case rt::Packing::I32:
        return fmt::format("{}pack_i32({}[i])", ns, cols[0]);
      default:
        return fmt::format("{}pack_i64({}[i])", ns, cols[0]);
    }
  };
  std::string unpack;
  switch (packing) {
    case rt::Packing::I32:
      unpack = "d0 = R::unpack_i32(tuple);\n";
      break;
    case rt::Packing::I32x2:
      unpack = "d0 = R::unpack_i32_hi(tuple); d1 = R::unpack_i32(tuple);\n";
      break;
    default:
      unpack = "d0 = R::unpack_i64(tuple);\n";
      break;
  }
  std::string decls;
  for (size_t c = 0; c < schema.size(); ++c)
    decls += fmt::format("{} d{};\n", value_ctype(schema[c].type), c);
  // The full relation's tuples as words, for the binary search of a candidate.
  const std::string word = word_of(full_cols, "ranc::tpl::resident::");

  ctx.comment(fmt::format("n{} fixpoint: resident rounds", n.id));
  const std::string fn = name + "_fn";
  // `full` is a functor over the kernel's parameters (so the kernel's parameter list is its own).
  const std::string make_full = ctx.functor(fn, params,
      fmt::format("  __device__ __forceinline__ unsigned long long word(long long i) const {{ return {}; }}\n",
                  word));
  // The rules on one tuple, its candidates pushed to `out` (the block's next round's tuples,
  // or its queue); the same code for the worklist and for the rounds.
  const std::string rules = fmt::format(
      "  auto rules = [&](const unsigned long long tuple, R::Batch& batch, R::Out& out) {{\n"
      "{decls}"
      "{unpack}"
      "{rules}"
      "  }};\n",
      fmt::arg("decls", decls), fmt::arg("unpack", unpack), fmt::arg("rules", rules_code));
  // One round of the block (with the barrier): every rule on each of its `rows` tuples in
  // `cur`, the new ones appended to `nxt`.
  const std::string round = fmt::format(
      "    {{\n"
      "      R::Out out = R::Out::rounds(nxt, &local_count);\n"
      "      for (long long r0 = 0; r0 < rows; r0 += blockDim.x) {{\n"
      "        R::Batch batch;\n"
      "        const long long i = r0 + threadIdx.x;\n"
      "        if (i < rows) rules(cur[i], batch, out);\n"
      "        R::flush(batch, {table}, {mask}, ctl, out);\n"
      "      }}\n"
      "    }}\n",
      fmt::arg("table", table), fmt::arg("mask", mask));
  std::string body = fmt::format(
      "  namespace R = ranc::tpl::resident;\n"
      "{make_full}"
      "  const auto& full = f;\n"
      "  long long* ctl = {ctl};\n"
      "  if ({prologue}) {{\n"
      "    // A launch of its own (any grid): the full relation's words into the set, so that a\n"
      "    // candidate is new when the set takes it; the invariants' longest key runs.\n"
      "    const long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
      "    const long long stride = (long long)gridDim.x * blockDim.x;\n"
      "    if ({search_full} == 0)\n"
      "      for (long long i = tid; i < {full_rows}; i += stride) R::insert({table}, {mask}, full.word(i), ctl);\n"
      "{runs}"
      "    return;\n"
      "  }}\n"
      "  // The invariants' columns in shared memory where they fit.\n"
      "  __shared__ alignas(16) unsigned char stage_area[R::kStageBytes];\n"
      "  long long stage_used = 0;\n"
      "{staging}"
      "  // The block's tuples: this round's (cur) and the next's (nxt), R::kLocalRows each.\n"
      "  extern __shared__ unsigned long long local[];\n"
      "  unsigned long long* cur = local;\n"
      "  unsigned long long* nxt = local + R::kLocalRows;\n"
      "  __shared__ int local_count;\n"
      "  if (threadIdx.x == 0) local_count = 0;\n"
      "  // Candidates a delta row can make (the product of its joins' longest key runs).\n"
      "  const long long bound = {bound};\n"
      "  // Round 0: the block's share of the delta.\n"
      "  const long long entry = {entry_rows};\n"
      "  const long long share = (entry + gridDim.x - 1) / gridDim.x;\n"
      "  const long long first = blockIdx.x * share < entry ? blockIdx.x * share : entry;\n"
      "  long long rows = (first + share < entry ? first + share : entry) - first;\n"
      "  bool heavy = share > R::kLocalRows || (bound > 0 && share > R::kLocalRows / bound);\n"
      "  if (!heavy)\n"
      "    for (long long k = threadIdx.x; k < rows; k += blockDim.x) {{ const long long i = first + k; cur[k] = {entry_word}; }}\n"
      "  __syncthreads();\n"
      "{rules}"
      "  if ({max_rounds} == R::kWorklist) {{\n"
      "    // The worklist (resident.cuh): the block's warps take its tuples from a queue in shared\n"
      "    // memory and push the new ones back, each at its own pace; the block stops when nothing\n"
      "    // is queued or being evaluated, or hands back (the room passed, a block asked, or its\n"
      "    // queue cannot hold one more tuple's candidates). Its pending tuples are then the delta.\n"
      "    __shared__ R::Queue queue;\n"
      "    __shared__ int deepest;\n"
      "    unsigned long long* tags = local + 2 * R::kLocalRows;\n"
      "    long long pending = 0;\n"
      "    unsigned first_pending = 0;\n"
      "    if (threadIdx.x == 0) deepest = -1;\n"
      "    if (heavy) {{  // (the same for every block: nothing runs, the host takes over)\n"
      "      if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch((unsigned long long*)(ctl + R::kAsyncStop), 1ull);\n"
      "      __syncthreads();\n"
      "    }} else {{\n"
      "      pending = R::worklist(rules, {table}, {mask}, ctl, {words}, {room}, {max_rows}, bound, rows, local, tags,\n"
      "                            &queue, &first_pending, &deepest);\n"
      "    }}\n"
      "    __syncthreads();\n"
      "    R::finish_worklist(ctl, {words}, {room}, local, tags, pending, first_pending, deepest);\n"
      "    return;\n"
      "  }}\n"
      "  long long barrier = 0, begin = 0, base = 0, round = 0, added = entry;\n"
      "  int status;\n"
      "  while (true) {{\n"
      "    if (round >= {max_rounds}) {{ status = R::kRoundLimit; break; }}\n"
      "    if (heavy || added > {max_rows} || (bound > 0 && added > ({room} - base) / bound) ||\n"
      "        (barrier + 1) * gridDim.x >= R::kMaxArrivals) {{ status = R::kHandBack; break; }}\n"
      "{round}"
      "    __syncthreads();\n"
      "    const int count = local_count;\n"
      "    const bool mine = bound > 0 && count > R::kLocalRows / bound;  // too many for a next round\n"
      "    const unsigned long long release = R::block_barrier(ctl, ++barrier, count, mine, &local_count,\n"
      "        [&](long long offset) {{\n"
      "          for (int k = threadIdx.x; k < count; k += blockDim.x) {{\n"
      "            if (offset + k < {room}) {words}[offset + k] = nxt[k];\n"
      "            else ctl[R::kOverflow] = 1;\n"
      "          }}\n"
      "        }});\n"
      "    const long long total = (long long)(release & R::kWordMask);\n"
      "    heavy = (release >> R::kWordBits) & 1;\n"
      "    added = total - base;\n"
      "    ++round;\n"
      "    begin = base;\n"
      "    base = total;\n"
      "    unsigned long long* t = cur; cur = nxt; nxt = t;\n"
      "    rows = count;\n"
      "    if (added == 0) {{ status = R::kFixpoint; break; }}\n"
      "  }}\n"
      "  if (blockIdx.x == 0 && threadIdx.x == 0) {{\n"
      "    ctl[R::kWords] = base;\n"
      "    ctl[R::kFound] = base;\n"
      "    ctl[R::kDeltaBegin] = begin;\n"
      "    ctl[R::kRounds] = round;\n"
      "    ctl[R::kStatus] = status;\n"
      "  }}\n",
      fmt::arg("make_full", make_full), fmt::arg("ctl", ctl), fmt::arg("runs", runs),
      fmt::arg("staging", staging), fmt::arg("full_rows", full_rows), fmt::arg("table", table),
      fmt::arg("mask", mask), fmt::arg("search_full", search_full), fmt::arg("prologue", prologue),
      fmt::arg("words", words), fmt::arg("entry_word", word_of(delta_cols, "R::")),
      fmt::arg("bound", bound), fmt::arg("entry_rows", entry_rows),
      fmt::arg("max_rounds", max_rounds), fmt::arg("max_rows", max_rows), fmt::arg("room", room),
      fmt::arg("round", round), fmt::arg("rules", rules));
  LaunchShape shape;
  shape.block_threads = rt::ResidentRounds::kBlockThreads;
  rr.kernel = ctx.emit_kernel(name, params, body, shape);
  rr.args = params.args();
  return rr;
}

}  // namespace ranc::codegen
