// The interface between code generation and the per-operator lowerings in
// ra_ops/<op>/lowering.cpp (STYLE.md habit 3: one operator, one place).
//
// A lowering turns one node into CUDA source (functor structs and extern "C" kernels,
// appended to the translation unit) and plan steps, reading its inputs' device
// relations and recording its own. It talks to the code generator only through the
// abstract LoweringContext (implemented in compiler/src/codegen/), so ra_ops does not
// link against the compiler.
//
// Generated-code conventions: kernel parameters are 8-byte values only (device
// pointers and long long); a buffer parameter is named b<id>, a slot parameter s<id>;
// user identifiers never appear in code, only in sanitised comments. Functor structs
// (`struct n4_join_fn`) hold the parameters as members and expose the hooks the
// templates take (pred, emit, cmp, ...).
//
// Fusion (passes/fuse_pipelines.h decides, the lowerings carry it out): a lowering may
// return a relation that is not materialised, a RowView: the rows of a source (a dense
// relation, a product, the matches of a join) passed through fused stages (select,
// project, semi/anti join). A view is code, not data: member functions keep(h) and
// a<k>(h) of the row handle h that every kernel reading the view includes in its functor
// (KernelParams::use). A consumer either streams the view in its own kernel (the fused
// case) or calls LoweringContext::dense(), which materialises it with one kernel.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ranc/codegen/codegen.h"
#include "ranc/codegen/skeleton_call.h"
#include "ranc/codegen/sort_layout.h"
#include "ranc/ir/program.h"
#include "ranc/passes/plan_sort_orders.h"
#include "ranc/runtime/plan.h"

namespace ranc::codegen {

// A declared input order whose verification is left to the relation's one consumer
// (a reduce that compares adjacent rows by exactly these keys anyway, a keyed set
// operation, the left input of a sort-merge inner join, a select, whose view compares
// every row it is asked about with its predecessor: they check it on the fly, instead of
// a separate pass over the key columns). The
// consumer sets `flag` (int32, zeroed) when a row orders before its predecessor and
// adds the CheckFlag step with `message`.
struct PendingOrderCheck {
  rt::BufferId flag = -1;
  std::string message;
  std::vector<int32_t> columns;  // the declared order: columns and directions
  std::vector<bool> descending;
};

struct RowView;
class LoweringContext;

// A relation on the device: one buffer per attribute and a size slot, or a view.
struct DeviceRelation {
  std::vector<rt::BufferId> columns;  // empty for a view
  std::vector<Type> types;
  // Rows (dense), or the row handles a view streams over (index sources: an upper
  // bound on its rows; join sources: unused until dense()).
  rt::SlotId size = -1;
  std::optional<PendingOrderCheck> unverified;  // set on inputs only
  std::shared_ptr<const RowView> view;          // set when not materialised
  bool is_view() const { return view != nullptr; }
};

// C++ type of a value of `t` in expressions, and of its storage in columns.
inline std::string_view value_ctype(Type t) {
  switch (t) {
    case Type::Bool:
      return "bool";
    case Type::I64:
      return "long long";
    case Type::F32:
      return "float";
    case Type::F64:
      return "double";
    default:
      return "int";  // i32, date, string codes
  }
}
inline std::string_view storage_ctype(Type t) {
  return t == Type::Bool ? "unsigned char" : value_ctype(t);
}

// The parameters of one kernel, collected while its body is generated, and the
// launch arguments that go with them (in the same order).
class KernelParams {
 public:
  // The parameter for a buffer viewed as `ctype*` (deduplicated by buffer id).
  std::string buffer(rt::BufferId b, std::string_view ctype, bool is_const = true) {
    std::string name = fmt::format("b{}", b);
    // __restrict__: distinct buffer ids are distinct allocations, and kernels write only
    // buffers allocated by the plan, so the compiler may batch loads across stores.
    add(fmt::format("{}{}* __restrict__", is_const ? "const " : "", ctype), name, rt::ArgBuffer{b});
    return name;
  }
  std::string slot(rt::SlotId s) {
    std::string name = fmt::format("s{}", s);
    add("long long", name, rt::ArgSlot{s});
    return name;
  }
  // A `const long long*` parameter through which the kernel may read slot `s`'s value from
  // device memory (rt::Launch::device_sizes): null (ArgConst 0) unless a pass points it
  // at the count. The expression to use for the count: the device value when given, else
  // the slot's.
  std::string device_size(rt::SlotId s) {
    const std::string name = fmt::format("dn{}", s);
    bool known = false;
    for (const rt::DeviceSize& d : device_sizes_) known = known || d.slot == s;
    if (!known) {
      device_sizes_.push_back(rt::DeviceSize{s, static_cast<int32_t>(params_.size())});
      add("const long long* __restrict__", name, rt::ArgConst{0});
    }
    return fmt::format("({0} != nullptr ? *{0} : {1})", name, slot(s));
  }
  const std::vector<rt::DeviceSize>& device_sizes() const { return device_sizes_; }
  // "const int* b3, long long s1"
  std::string signature() const {
    std::string s;
    for (const auto& p : params_)
      s += fmt::format("{}{} {}", s.empty() ? "" : ", ", p.type, p.name);
    return s;
  }
  // "  const int* b3;\n  long long s1;\n"
  std::string fields() const {
    std::string s;
    for (const auto& p : params_) s += fmt::format("  {} {};\n", p.type, p.name);
    return s;
  }
  // "b3, s1"
  std::string names() const {
    std::string s;
    for (const auto& p : params_) s += fmt::format("{}{}", s.empty() ? "" : ", ", p.name);
    return s;
  }
  const std::vector<rt::KernelArg>& args() const { return args_; }
  bool uses_error_flag = false;  // set by expression code that may divide by zero

  // The parameters and member functions of a view, for a kernel that reads it.
  inline void use(const RowView& v);
  // Another parameter list's parameters and view members (deduplicated) and error-flag use.
  void merge(const KernelParams& o) {
    for (size_t i = 0; i < o.params_.size(); ++i)
      add(o.params_[i].type, o.params_[i].name, o.args_[i]);
    for (const auto& m : o.members_) add_member(m.first, m.second);
    uses_error_flag = uses_error_flag || o.uses_error_flag;
  }
  // Member function definitions of the views in use (in the order they were added).
  std::string view_members() const {
    std::string s;
    for (const auto& [name, text] : members_) s += text;
    return s;
  }
  void add_member(const std::string& name, const std::string& text) {
    for (const auto& m : members_)
      if (m.first == name) return;
    members_.emplace_back(name, text);
  }

 private:
  struct Param {
    std::string type, name;
  };
  void add(std::string type, const std::string& name, rt::KernelArg arg) {
    for (const auto& p : params_)
      if (p.name == name) return;
    params_.push_back({std::move(type), name});
    args_.push_back(arg);
  }
  std::vector<Param> params_;
  std::vector<rt::KernelArg> args_;
  std::vector<std::pair<std::string, std::string>> members_;
  std::vector<rt::DeviceSize> device_sizes_;
};

// An attribute of a view: a column of its dense base read at the row index, or a
// member function of the row handle.
struct ViewAttr {
  rt::BufferId column = -1;
  std::string fn;
};

// A global reduce (no group keys) folded into the write stage of the join whose matches a
// view enumerates (RowView::fold): the reduce's part of the join's kernels.
struct FoldSpec {
  NodeId reduce = -1;
  // The reduce's kernel parameters; the join adds its own, and every kernel of the fold
  // (the join's and the reduce's finish) takes them all.
  KernelParams* params = nullptr;
  std::string state;        // the aggregate state's type
  int64_t state_words = 0;  // 8-byte words of one partial state
  // Functor members over `params`: `using State`, init(), merge(a, b) and fold(s, i, j),
  // which folds the match (i, j) in when the view keeps it.
  std::string members;
  // The name of the kernel that folds the matches (also the functor's base name), registered
  // by the reduce (LoweringContext::kernel_name), and what it is named after
  // ("join_select_reduce", for the join's other kernels, such as the merge's heavy tiles').
  std::string name, what;
};
// What the join's fold kernels leave for the reduce's finish: partial states (`state_words`
// words each) and a slot holding their number. Both are parameters of FoldSpec::params.
struct FoldPartials {
  rt::BufferId partials = -1;
  rt::SlotId count = -1;
};

// A relation that is not materialised (see the file comment). Built by the lowerings
// of select, project, product and join; extended by select, project and semi/anti
// joins; consumed by kernels that stream it or materialised by LoweringContext::dense.
struct RowView {
  // Index: handles are row numbers 0..size-1 of a dense relation or of a product
  // (handle params "long long i"). Join sources: handles are (left row, right row) of
  // the join's matches ("long long i, long long j"), streamed only by the join's own
  // write stage, which materialises the view.
  enum class Source : uint8_t { Index, MergeJoin, HashJoin };
  Source source = Source::Index;
  std::vector<NodeId> nodes;  // the fused operators, in order (for kernel names)
  std::vector<ViewAttr> attrs;
  std::string keep_fn;   // bool member of the handle; empty when it is always true
  bool filters = false;  // keep_fn may return false (a select or semi/anti join stage)
  // keep_fn binary-searches another relation (a semi/anti join stage): its dependent loads
  // bound a kernel that materialises the view, which then takes one row per thread.
  bool searches = false;
  KernelParams deps;     // the parameters and members the view's code uses
  // Join sources: emits the join's write stage over `view` and returns the relation:
  // dense, or with `paged` (and a join that can) a paged list.
  std::function<DeviceRelation(LoweringContext&, const DeviceRelation& view, bool paged)>
      materialize;
  // Join sources whose matches are merged tile by tile (a left input sorted by the keys):
  // emits the join's kernels with every match folded into a global reduce instead of
  // written (reduce lowering). Empty where the join cannot.
  std::function<FoldPartials(LoweringContext&, const DeviceRelation& view, const FoldSpec&)> fold;
  // A paged list (templates/paged.cuh) written by `owner`'s kernels: handles are slots of
  // its pages, the attributes its page columns, keep_fn drops the unused slots. It holds
  // no fused stage (nodes is empty): it is materialised, only not dense.
  bool paged = false;
  NodeId owner = -1;
  // A sort's sorted words (PhysicalNode::keeps_words): handles are rows of the word
  // buffer, the attributes decode their fields. Materialised like a paged list, only not
  // dense; consumers that need dense columns unpack it (LoweringContext::dense).
  bool packed = false;

  std::string handle_params() const {
    return source == Source::Index ? "long long i" : "long long i, long long j";
  }
  std::string handle_args() const { return source == Source::Index ? "i" : "i, j"; }
  // "select_project" from the fused operators, for kernel names.
  std::string op_names(const Program& prog) const {
    std::string s;
    for (NodeId n : nodes) {
      std::string_view k = op_kind_name(prog.node(n).kind);
      if (prog.node(n).kind == OpKind::Join && prog.node(n).join_kind != JoinKind::Inner)
        k = prog.node(n).join_kind == JoinKind::Semi ? "semijoin" : "antijoin";
      s += fmt::format("{}{}", s.empty() ? "" : "_", k);
    }
    return s;
  }
};

inline void KernelParams::use(const RowView& v) {
  merge(v.deps);
}

// The view a fused stage extends: `in`'s own, or the identity view of a dense relation
// (its attributes are its columns, read at the row index).
inline RowView view_of(const DeviceRelation& in) {
  if (in.view) {
    RowView v = *in.view;
    v.paged = false;  // a stage over a paged list's slots (or packed words) is an ordinary view
    v.packed = false;
    v.owner = -1;
    return v;
  }
  RowView v;
  for (rt::BufferId b : in.columns) v.attrs.push_back(ViewAttr{b, ""});
  return v;
}
// A relation that is the view `v` with attribute types `types` over `size` handles.
inline DeviceRelation make_view(RowView v, std::vector<Type> types, rt::SlotId size) {
  DeviceRelation r;
  r.types = std::move(types);
  r.size = size;
  r.view = std::make_shared<const RowView>(std::move(v));
  return r;
}

// C++ text of attribute `index` of the row being evaluated (a value of its type).
using AttrAccess = std::function<std::string(int32_t index)>;

// Launch geometry in "items": grid = max(1, ceil(items / items_per_block)).
struct LaunchShape {
  rt::SizeExpr items;
  int64_t items_per_block = 1;
  int32_t block_threads = 256;
  bool skip_if_empty = true;
  std::vector<NodeId> nodes = {};  // the operators fused into the kernel (rt::Launch::nodes)
  std::optional<rt::Regrow> regrow = std::nullopt;  // a paged-list producer (rt::Launch::regrow)
  int32_t dynamic_smem = 0;  // bytes of dynamic shared memory (SkeletonCall::dynamic_temp_storage)
  // __launch_bounds__'s minimum blocks an SM (0: none), which caps the registers a thread.
  int32_t min_blocks = 0;
  // A kernel emitted beside it (emit_kernel) that runs instead when slot alt_when holds a
  // nonzero value (rt::Launch::alt_kernel).
  std::string alt_kernel = {};
  rt::SlotId alt_when = -1;
  // Row counts the kernel can read from device memory (rt::Launch::device_sizes); kernel()
  // takes them from its KernelParams.
  std::vector<rt::DeviceSize> device_sizes = {};
  bool whole_waves = false;  // rt::Launch::whole_waves
  bool one_wave = false;     // rt::Launch::one_wave
};

class LoweringContext {
 public:
  virtual ~LoweringContext() = default;

  virtual const Program& program() const = 0;
  virtual const passes::PhysicalNode& physical(NodeId id) const = 0;
  virtual const CodegenOptions& options() const = 0;
  virtual const DeviceRelation& relation(NodeId id) const = 0;
  virtual void set_relation(NodeId id, DeviceRelation rel) = 0;
  // Plan inputs and outputs.
  virtual void add_input(const Node& n, const DeviceRelation& rel) = 0;
  virtual void add_output(const Node& n, const DeviceRelation& rel) = 0;

  // Plan building.
  virtual rt::SlotId new_slot() = 0;
  // Declares a buffer (not allocated).
  virtual rt::BufferId declare(std::string name, int32_t elem_size, rt::SizeExpr count,
                               NodeId node) = 0;
  // Declares and allocates a buffer.
  virtual rt::BufferId allocate(std::string name, int32_t elem_size, rt::SizeExpr count,
                                NodeId node, bool zero = false) = 0;
  virtual void step(rt::Step s) = 0;
  // A CheckFlag placed when the plan is finished: right after the last Launch that takes
  // its flag buffer (at the end of the plan when none does). For a flag set by a view's
  // code (a select checking its input's declared order): the view is read by whichever
  // kernels stream or materialise it, emitted after the view's own lowering.
  virtual void check_after_last_use(rt::CheckFlag c) = 0;

  // Source.
  virtual void emit(std::string_view code) = 0;
  // A sanitised one-line comment quoting user text ("// n3 select: a < 5").
  virtual void comment(std::string_view text) = 0;
  // A fresh kernel name "n<id>_<what>", registered in plan.kernels.
  virtual std::string kernel_name(NodeId id, std::string_view what) = 0;
  // Emits `extern "C" __global__ void name(params) { body }` and a Launch step (plus a
  // CheckFlag when the body may set the error flag). Returns the name of the kernel launched:
  // `name`, or the kernel of the unit it shares (CodegenOptions::share_kernels); launch it
  // again by that name.
  virtual std::string kernel(NodeId id, const std::string& name, KernelParams& params,
                             std::string_view body, const LaunchShape& shape) = 0;
  // kernel()'s source only, without a Launch step: a specialisation that another kernel's
  // launch runs instead by size (LaunchShape::alt_kernel). Returns its name, as kernel().
  virtual std::string emit_kernel(const std::string& name, KernelParams& params,
                                  std::string_view body, const LaunchShape& shape) = 0;
  // A Launch step of kernel `name` (emitted already) with `args` (plus a CheckFlag when
  // `error_flag`): kernel() emits and then launches through it; a kernel launched several
  // times (the levels of a top-k select) is emitted once and launched again through it.
  virtual void launch(NodeId id, const std::string& name, std::vector<rt::KernelArg> args,
                      const LaunchShape& shape, bool error_flag = false) = 0;
  // A kernel whose source is the same wherever the unit launches it (it takes everything
  // from its arguments): `source(name)` is emitted the first time it is asked for, named
  // <kernel prefix>ranc_<what>; later calls return the name only.
  virtual std::string shared_kernel(std::string_view what,
                                    const std::function<std::string(const std::string&)>& source) = 0;
  // The same for a body that calls a skeleton's entry point: the launch is first checked
  // against the entry's launch rule (SkeletonCall::check_launch).
  std::string kernel(NodeId id, const std::string& name, KernelParams& params,
                     std::string_view body, const LaunchShape& shape,
                     const SkeletonCall& skeleton) {
    skeleton.check_launch(shape.block_threads, shape.items_per_block, shape.skip_if_empty);
    return kernel(id, name, params, body, shape);
  }
  // The tuning-table policy type for a family ("Select", "Merge", ...) and its values.
  virtual std::string policy(std::string_view family) const = 0;
  virtual int32_t policy_threads(std::string_view family) const = 0;
  virtual int32_t policy_items(std::string_view family) const = 0;
  TilePolicy tile_policy(std::string_view family) const {
    return TilePolicy{policy(family), policy_threads(family), policy_items(family)};
  }
  // The registry every skeleton instantiation is checked against (CodegenOptions::templates).
  virtual const TemplateRegistry& templates() const = 0;

  // C++ text of a resolved expression (predicates use IEEE comparisons).
  virtual std::string expr(const ExprPtr& e, KernelParams& params, const AttrAccess& attr) = 0;

  // Common steps.
  // A slot holding max(1, ceil((a + b) / tile_items)) for slots a and b (b may be -1).
  virtual rt::SlotId num_tiles(NodeId id, rt::SlotId a, rt::SlotId b, int64_t tile_items) = 0;
  // A slot holding the int64 at element `index_slot` of `buffer` (read back).
  virtual rt::SlotId read_element(NodeId id, rt::BufferId buffer, rt::SlotId index_slot) = 0;
  // `rel` sorted by `keys`: the keys packed into order words (sort_layout.h), a CUB radix
  // sort per word, and one kernel that unpacks the keys and gathers the other attributes.
  // With `keep_words` (PhysicalNode::keeps_words), a sort that packs whole tuples into
  // one word returns its sorted words as a packed view (RowView::packed) instead. `rel`
  // may be a view only for such a sort (its input chain is fused into the kernel that
  // writes the words); any other sort needs a dense `rel`. A non-key attribute whose
  // buffer is -1 in `rel` is left out (not gathered; -1 in the result as well).
  virtual DeviceRelation sort(NodeId id, const DeviceRelation& rel, const passes::Order& keys,
                              bool keep_words = false) = 0;
  // `rel` itself when it is dense; a view materialised by one kernel (once per view:
  // later calls return the same relation).
  virtual DeviceRelation dense(const DeviceRelation& rel) = 0;
  // A join view materialised as a paged list when its join can write one (else dense);
  // any other relation as dense() makes it. Once per view, like dense().
  virtual DeviceRelation paged(const DeviceRelation& rel) = 0;
  // Compiles `program` (unchecked; checked here) into this plan, for fixpoints
  // (ra_ops/fixpoint/lowering.cpp): its code joins the unit in a namespace of its own,
  // its steps follow the steps so far (their node references become `id`), its Input
  // nodes read `bindings` (by relation name; dense relations in the order of the Input's
  // declared schema) and its outputs come back in Program::outputs() order, dense and
  // in buffers of their own (never a binding's, never shared between two outputs).
  // `schemas`, when given, receives the outputs' schemas. `loop_body`: the program is a
  // loop's body, whose joins count their matches before they write (no one-pass merge join,
  // whose output grows by a read-back after the kernel): the count of a join of the delta
  // is what rotate_loop_reads moves to the end of the previous iteration.
  virtual std::vector<DeviceRelation> inline_program(
      NodeId id, const Program& program,
      const std::vector<std::pair<std::string, DeviceRelation>>& bindings,
      std::vector<Schema>* schemas = nullptr, bool loop_body = false) = 0;
  // Does node `id` hand its output to its consumer as a view (passes/fuse_pipelines.h)?
  bool fused(NodeId id) const { return physical(id).fused; }

  // C++ statement text copying every attribute of `src` at row (handle) `from` to
  // `dst` row `to`.
  std::string copy_row(KernelParams& params, const DeviceRelation& src, std::string_view from,
                       const DeviceRelation& dst, std::string_view to, size_t dst_first = 0) {
    std::string s;
    for (size_t c = 0; c < src.types.size(); ++c) {
      auto ct = storage_ctype(src.types[c]);
      s += fmt::format("    {}[{}] = ({}){};\n", params.buffer(dst.columns[dst_first + c], ct, false),
                       to, ct, raw(params, src, c, from));
    }
    return s;
  }
  // Emits `struct name { <params as members> <view members> members };` and returns
  // the statement that builds it in a kernel body from the kernel's parameters. Call
  // it after every parameter of the kernel has been registered.
  std::string functor(const std::string& name, const KernelParams& params,
                      std::string_view members) {
    emit(fmt::format("struct {} {{\n{}{}{}}};\n", name, params.fields(), params.view_members(),
                     members));
    return fmt::format("  const {} f{{{}}};\n", name, params.names());
  }
  // functor()'s declaration without its const, for kernels whose stage hook points the
  // functor's column members at shared-memory copies (stage_rows).
  static std::string mutable_functor(const std::string& declaration) {
    internal_check(declaration.rfind("  const ", 0) == 0, "mutable_functor: not a functor() declaration");
    return "  " + declaration.substr(8);
  }
  // The operators a kernel of node `id` contains: those fused into the views it reads,
  // then `id` itself (rt::Launch::nodes).
  static std::vector<NodeId> fused_nodes(std::initializer_list<const DeviceRelation*> inputs,
                                         NodeId id) {
    std::vector<NodeId> nodes;
    for (const DeviceRelation* r : inputs)
      if (r->view) nodes.insert(nodes.end(), r->view->nodes.begin(), r->view->nodes.end());
    if (nodes.empty()) return {};
    nodes.push_back(id);
    return nodes;
  }
  // Bool text: does the view keep the row `handle` (true for a dense relation)? It also
  // evaluates what the fused stages must evaluate for every row (error checks).
  static std::string keep(KernelParams& params, const DeviceRelation& rel,
                          std::string_view handle) {
    if (!rel.view || rel.view->keep_fn.empty()) return "true";
    params.use(*rel.view);
    return fmt::format("{}({})", rel.view->keep_fn, handle);
  }
  // Attribute `c` of `rel` at `row` in its storage representation (bool as 0/1 byte
  // for dense columns, the value type for view members).
  static std::string raw(KernelParams& params, const DeviceRelation& rel, size_t c,
                         std::string_view row) {
    if (rel.view) {
      params.use(*rel.view);
      const ViewAttr& a = rel.view->attrs.at(c);
      if (a.column >= 0)
        return fmt::format("{}[{}]", params.buffer(a.column, storage_ctype(rel.types[c])), row);
      return fmt::format("{}({})", a.fn, row);
    }
    return fmt::format("{}[{}]", params.buffer(rel.columns[c], storage_ctype(rel.types[c])), row);
  }
  // Order word w of `layout` (sort_layout.h) for row (handle) `row` of `rel`: the packed
  // keys as an unsigned long long expression (below 2^32 for a 32-bit word).
  static std::string order_word(KernelParams& params, const DeviceRelation& rel,
                                const SortLayout& layout, size_t w, std::string_view row) {
    std::vector<std::string> values;
    for (const SortField& f : layout.fields)
      values.push_back(layout.overlaps(f, w)
                           ? raw(params, rel, static_cast<size_t>(f.column), row)
                           : std::string());
    return sort_word_expr(layout, w, values);
  }
  // A select (SelectAgent, one pass with decoupled look-back) over `n` rows of node
  // `id`: `pred` is a bool expression of row i, `emit_stmts` copy row i to output row o.
  // `params` must already hold what pred, emit_stmts and extra_members (more struct
  // members) use. Returns the slot of the number of rows kept (read back), or -1 with
  // `read_back` false (the caller knows the number). With `read_when`, the select of a path
  // taken only when that slot is non-zero: else the rows kept are 0, read back from nothing.
  rt::SlotId select_kernel(NodeId id, std::string_view what, rt::SlotId n, KernelParams& params,
                           std::string_view pred, std::string_view emit_stmts,
                           std::string_view extra_members = {}, std::vector<NodeId> nodes = {},
                           std::string_view family = "Select", bool read_back = true,
                           rt::SlotId read_when = -1) {
    return select_pass(id, what, n, params, family, std::move(nodes), read_back, read_when, [&](const SelectText& t) {
      std::string make = functor(
          t.name + "_fn", params,
          fmt::format(
              "  __device__ __forceinline__ bool pred(long long i) const {{ return {}; }}\n"
              "  __device__ __forceinline__ void emit(long long i, long long o) const {{\n{}  }}\n{}",
              pred, emit_stmts, extra_members));
      SkeletonCall agent(templates(), "SelectAgent", {tile_policy(family)}, "Agent");
      std::string body =
          make + agent.declare() + agent.temp_storage() +
          agent.call(
              "run",
              {"temp", t.n, HookArg::lambda("bool", {{"long long", "i"}}, " return f.pred(i); "),
               HookArg::lambda("void", {{"long long", "i"}, {"long long", "o"}}, " f.emit(i, o); "),
               t.state, t.count});
      return std::pair{std::move(body), std::move(agent)};
    });
  }
  // The same select staging its output rows' values (SelectValuesAgent): `fields` are the
  // output row's attributes (type, the expression of row i in its storage representation),
  // written to `dst` row o, in P::Select's tiles; only for rows select_stages_values takes.
  rt::SlotId select_values_kernel(NodeId id, std::string_view what, rt::SlotId n,
                                  KernelParams& params, std::string_view pred,
                                  const std::vector<std::pair<Type, std::string>>& fields,
                                  const DeviceRelation& dst, std::vector<NodeId> nodes = {}) {
    internal_check(select_stages_values(fields), "select_values_kernel: a row over 8 bytes or a stage over 40 KB");
    const std::string_view family = "Select";
    return select_pass(id, what, n, params, family, std::move(nodes), true, -1, [&](const SelectText& t) {
      std::string row = "  struct Row {", value, store;
      for (size_t c = 0; c < fields.size(); ++c) {
        const std::string_view ct = storage_ctype(fields[c].first);
        row += fmt::format(" {} c{};", ct, c);
        value += fmt::format("{}({}){}", c ? ", " : "", ct, fields[c].second);
        store += fmt::format("    {}[o] = r.c{};\n", params.buffer(dst.columns[c], ct, false), c);
      }
      row += " };\n";
      std::string make = functor(
          t.name + "_fn", params,
          fmt::format(
              "{}"
              "  __device__ __forceinline__ bool pred(long long i) const {{ return {}; }}\n"
              "  __device__ __forceinline__ Row value(long long i) const {{ return Row{{{}}}; }}\n"
              "  __device__ __forceinline__ void store(long long o, const Row& r) const {{\n{}  }}\n",
              row, pred, value, store));
      const std::string row_type = t.name + "_fn::Row";
      SkeletonCall agent(templates(), "SelectValuesAgent", {tile_policy(family)}, "Agent");
      agent.bind("Row", row_type);
      std::string body =
          make + agent.declare() + agent.temp_storage() +
          agent.call("run",
                     {"temp", t.n, HookArg::lambda("bool", {{"long long", "i"}}, " return f.pred(i); "),
                      HookArg::lambda(row_type, {{"long long", "i"}}, " return f.value(i); "),
                      HookArg::lambda("void", {{"long long", "o"}, {"const " + row_type + " &", "r"}},
                                      " f.store(o, r); "),
                      t.state, t.count});
      return std::pair{std::move(body), std::move(agent)};
    });
  }
  // The kernel text a select pass's body builds on: the kernel's name and the parameter
  // names of its row count, look-back state and output count.
  struct SelectText {
    std::string name, n, state, count;
  };
  // What select_kernel and select_values_kernel share: the tiles, look-back state and count
  // of a one-pass select over `n` rows in `family`'s tiles, the kernel whose body and skeleton
  // call `body(SelectText)` returns, and the count's read-back (or -1 without `read_back`).
  template <class Body>
  rt::SlotId select_pass(NodeId id, std::string_view what, rt::SlotId n, KernelParams& params,
                         std::string_view family, std::vector<NodeId> nodes, bool read_back,
                         rt::SlotId read_when, Body body) {
    const int64_t tile = static_cast<int64_t>(policy_threads(family)) * policy_items(family);
    rt::SlotId tiles = num_tiles(id, n, -1, tile);
    if (read_when >= 0) {  // no tiles, and so no launch, when the path is not taken
      const rt::SlotId gated = new_slot();
      step(rt::SetSize{gated, rt::SizeExpr::slot(tiles).gated(read_when, 1)});
      tiles = gated;
    }
    // The look-back state is gated too: a path not taken allocates and zeroes nothing.
    rt::BufferId state = tile_state(id, "tile_state", tiles, 1, read_when);
    rt::BufferId count = allocate(fmt::format("n{}.count", id), 8, rt::SizeExpr::fixed(1), id);
    SelectText t;
    t.state = params.buffer(state, "void", false);
    t.count = params.buffer(count, "long long", false);
    t.n = params.slot(n);
    t.name = kernel_name(id, what);
    auto [text, agent] = body(t);
    // The select's grid runs also over no rows (Grid::tiles_exact: it writes the count). With
    // read_when its tiles are 0 only when the path is not taken (else at least 1), and then
    // the launch is skipped: a plan whose sets are small launches (and so loads) no kernel
    // for the windows it does not build.
    agent.check_launch(policy_threads(family), 1, false);
    kernel(id, t.name, params, text,
           LaunchShape{rt::SizeExpr::slot(tiles), 1, policy_threads(family), read_when >= 0,
                       std::move(nodes)});
    if (!read_back) return -1;
    rt::SlotId out = new_slot();
    step(rt::ReadSize{out, count, 0, -1, read_when});
    return out;
  }
  // Whether select_values_kernel stages rows of `fields`: at most 8 bytes (rows of 9 to 16 bytes
  // staged in tiles half as long measured slower than their row numbers: select -> project of
  // 12-byte rows at 2^28, 2.147 against 1.986 ms, H100, session 26, bench/RESULTS.md), and a
  // tile of them in at most 40 KB (a RANC_TUNE shape may make it larger).
  bool select_stages_values(const std::vector<std::pair<Type, std::string>>& fields) {
    const int64_t bytes = row_bytes(fields);
    return bytes <= 8 && bytes * policy_threads("Select") * policy_items("Select") <= 40 * 1024;
  }
  // The bytes of a struct of `fields` (storage types of 1, 2, 4 or 8 bytes, each aligned
  // to its size).
  static int64_t row_bytes(const std::vector<std::pair<Type, std::string>>& fields) {
    int64_t at = 0, align = 1;
    for (const auto& f : fields) {
      const int64_t b = type_size(f.first);
      at = (at + b - 1) / b * b + b;
      align = std::max(align, b);
    }
    return (at + align - 1) / align * align;
  }
  // The decoupled look-back state of `tiles` tiles (buffer n<id>.<buffer>), as every
  // single-pass template needs; `count` such states one after another for a template with
  // several outputs (SharedSelectAgent). Its initial state (every tile's status kInvalid,
  // templates/block.cuh TileState) is all zero bytes: the allocation is zeroed, no init
  // kernel.
  // With `gate` >= 0 the state is 0 words unless slot `gate` is at least 1 (a path taken
  // only at some sizes).
  rt::BufferId tile_state(NodeId id, std::string_view buffer, rt::SlotId tiles,
                          int64_t count = 1, rt::SlotId gate = -1) {
    const rt::SizeExpr words{64 * count, {rt::SizeTerm{2 * count, {tiles}}}};
    return allocate(fmt::format("n{}.{}", id, buffer), 8, gate >= 0 ? words.gated(gate, 1) : words,
                    id, /*zero=*/true);
  }
  // A MapAgent<P::Map> kernel n<id>_<what> over `size` rows whose functor has `members`
  // and operator()(i) running `stmts`. `params` must hold what they use.
  void map_kernel(NodeId id, std::string_view what, KernelParams& params, rt::SlotId size,
                  std::string_view stmts, std::string_view members = {},
                  std::vector<NodeId> nodes = {}, std::string_view family = "Map") {
    std::string ns = params.slot(size);
    std::string name = kernel_name(id, what);
    std::string make = functor(
        name + "_fn", params,
        fmt::format(
            "{}  __device__ __forceinline__ void operator()(long long i) const {{\n{}  }}\n",
            members, stmts));
    SkeletonCall agent(templates(), "MapAgent", {tile_policy(family)});
    std::string body =
        make + agent.call("run", {ns, HookArg::lambda("void", {{"long long", "i"}}, " f(i); ")});
    LaunchShape shape = map_launch(rt::SizeExpr::slot(size), family);
    shape.nodes = std::move(nodes);
    kernel(id, name, params, body, shape, agent);
  }
  // Launch shape of a MapAgent<P::Map> kernel over `items`.
  LaunchShape map_launch(rt::SizeExpr items, std::string_view family = "Map") {
    return LaunchShape{std::move(items),
                       static_cast<int64_t>(policy_threads(family)) * policy_items(family),
                       policy_threads(family), true};
  }
  // Output columns for `schema`, allocated with `count` rows.
  DeviceRelation allocate_relation(const Node& n, rt::SizeExpr count, rt::SlotId size) {
    std::vector<Type> types;
    for (size_t c = 0; c < n.schema.size(); ++c) types.push_back(n.schema[c].type);
    return allocate_relation(n, types, std::move(count), size);
  }
  // Buffers of node n for attributes of these types (a view's, which may differ from
  // n's schema: the packed words a sort's input chain writes).
  DeviceRelation allocate_relation(const Node& n, const std::vector<Type>& types,
                                   rt::SizeExpr count, rt::SlotId size) {
    DeviceRelation r;
    r.size = size;
    for (size_t c = 0; c < types.size(); ++c) {
      r.types.push_back(types[c]);
      r.columns.push_back(allocate(fmt::format("n{}.c{}", n.id, c), type_size(types[c]), count, n.id));
    }
    return r;
  }
  // A value-typed load of attribute `c` of `rel` at row (handle) `row` (bool storage
  // becomes bool).
  static std::string load(KernelParams& params, const DeviceRelation& rel, size_t c,
                          std::string_view row) {
    std::string v = raw(params, rel, c, row);
    if (rel.types[c] == Type::Bool) return fmt::format("({} != 0)", v);
    return v;
  }
  // A functor member `bool name(long long i)`: row i - 1 of the dense `rel` orders after row i
  // by the declared order `u` (the consumers that check an input's order on the fly).
  static std::string out_of_order_member(KernelParams& params, const DeviceRelation& rel,
                                         const PendingOrderCheck& u, std::string_view name) {
    return fmt::format(
        "  __device__ __forceinline__ bool {}(long long i) const {{\n"
        "    return [&](long long i, long long j) {{\n{}    }}(i - 1, i) > 0;\n  }}\n",
        name, compare_body(params, rel, "i", u.columns, rel, "j", u.columns, u.descending));
  }
  // Three-way total-order comparison code of column pairs (a: rows `ra` of `A`, b:
  // rows `rb` of `B`) as a sequence of early returns inside a function body.
  static std::string compare_body(KernelParams& params, const DeviceRelation& A,
                                  std::string_view ra, const std::vector<int32_t>& acols,
                                  const DeviceRelation& B, std::string_view rb,
                                  const std::vector<int32_t>& bcols,
                                  const std::vector<bool>& descending) {
    std::string s;
    for (size_t k = 0; k < acols.size(); ++k) {
      auto ct = storage_ctype(A.types[static_cast<size_t>(acols[k])]);
      std::string a =
          fmt::format("({}){}", ct, raw(params, A, static_cast<size_t>(acols[k]), ra));
      std::string b =
          fmt::format("({}){}", ct, raw(params, B, static_cast<size_t>(bcols[k]), rb));
      s += fmt::format("    {{ int c = ranc::tpl::cmp3({}, {}); if (c != 0) return {}c; }}\n", a, b,
                       descending[k] ? "-" : "");
    }
    s += "    return 0;\n";
    return s;
  }
};

// The attributes of a join's output view (handle: left row i, right row j): the left
// input's, then the right input's `right_rest` columns, as members v<id>_a<k>(i, j).
inline void add_join_attrs(RowView& v, std::vector<Type>& types, NodeId id,
                           const DeviceRelation& L, const DeviceRelation& R,
                           const std::vector<int32_t>& right_rest) {
  auto attr = [&](const DeviceRelation& X, size_t c, std::string_view row) {
    const std::string fn = fmt::format("v{}_a{}", id, types.size());
    v.deps.add_member(fn, fmt::format("  __device__ __forceinline__ {} {}(long long i, long long j) "
                                      "const {{ return {}; }}\n",
                                      value_ctype(X.types[c]), fn,
                                      LoweringContext::load(v.deps, X, c, row)));
    v.attrs.push_back(ViewAttr{-1, fn});
    types.push_back(X.types[c]);
  };
  for (size_t c = 0; c < L.types.size(); ++c) attr(L, c, "i");
  for (int32_t c : right_rest) attr(R, static_cast<size_t>(c), "j");
}

// One lowering per operator (ra_ops/<op>/lowering.cpp).
void lower_input(LoweringContext& ctx, const Node& n);
void lower_output(LoweringContext& ctx, const Node& n);
void lower_select(LoweringContext& ctx, const Node& n);
void lower_project(LoweringContext& ctx, const Node& n);
void lower_product(LoweringContext& ctx, const Node& n);
void lower_set_op(LoweringContext& ctx, const Node& n);
void lower_join(LoweringContext& ctx, const Node& n);
void lower_reduce(LoweringContext& ctx, const Node& n);
void lower_sort(LoweringContext& ctx, const Node& n);
void lower_limit(LoweringContext& ctx, const Node& n);
void lower_distinct(LoweringContext& ctx, const Node& n);
void lower_fixpoint(LoweringContext& ctx, const Node& n);
void lower_union_all(LoweringContext& ctx, const Node& n);
void lower_scalar(LoweringContext& ctx, const Node& n);

}  // namespace ranc::codegen
