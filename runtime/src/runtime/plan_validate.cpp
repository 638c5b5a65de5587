// Plan validation.
#include "ranc/runtime/plan_validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "ranc/data/error.h"

namespace ranc::rt {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

enum class BufState : uint8_t { Unallocated, Live, Freed };

class Validator {
 public:
  explicit Validator(const Plan& plan) : plan_(plan) {
    bufs_.assign(plan.buffers.size(), BufState::Unallocated);
    slots_.assign(static_cast<size_t>(std::max(plan.num_slots, 0)), false);
    kernels_.insert(plan.kernels.begin(), plan.kernels.end());
  }

  void run() {
    where_ = "plan";
    if (plan_.num_slots < 0) fail("negative num_slots");
    for (size_t i = 0; i < plan_.buffers.size(); ++i) {
      const auto& b = plan_.buffers[i];
      if (b.elem_size <= 0)
        fail(fmt::format("buffer {} ({}) has elem_size {}", i, b.name, b.elem_size));
    }
    for (const auto& r : plan_.inputs) {
      where_ = fmt::format("input '{}'", r.name);
      check_relation(r);
      for (BufferId b : r.columns) bufs_[static_cast<size_t>(b)] = BufState::Live;
      for (BufferId b : r.validity)
        if (b >= 0) bufs_[static_cast<size_t>(b)] = BufState::Live;
      slots_[static_cast<size_t>(r.size)] = true;
    }
    for (size_t i = 0; i < plan_.dict_params.size(); ++i) {
      const auto& p = plan_.dict_params[i];
      where_ = fmt::format("dict_params[{}] ('{}')", i, p.text);
      if (p.kind == DictParam::Kind::LikeMask || p.kind == DictParam::Kind::SubstringMap) {
        check_buffer_id(p.mask);
        expect_elem(p.mask, p.kind == DictParam::Kind::LikeMask ? 1 : 4);
        if (bufs_[static_cast<size_t>(p.mask)] == BufState::Live)
          fail("a dictionary parameter's buffer is also an input buffer");
        bufs_[static_cast<size_t>(p.mask)] = BufState::Live;  // allocated by the runtime
      } else {
        check_slot_id(p.slot);
        slots_[static_cast<size_t>(p.slot)] = true;
      }
    }
    for (size_t i = 0; i < plan_.steps.size(); ++i) {
      const Step& s = plan_.steps[i];
      where_ = fmt::format("step {} ({})", i, step_name(s));
      if (int32_t n = step_node(s); n >= 0) where_ += fmt::format(" of {}", node_name(plan_, n));
      step_ = i;
      std::visit([&](const auto& x) { check(x); }, s);
    }
    where_ = "end of plan";
    if (loop_) fail(fmt::format("loop {} has no LoopEnd", loop_->id));
    for (const auto& r : plan_.outputs) {
      where_ = fmt::format("output '{}'", r.name);
      check_relation(r);
      for (BufferId b : r.columns) live(b);
      for (BufferId b : r.validity)
        if (b >= 0) live(b);
      set(r.size);
    }
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw InternalError(fmt::format("invalid plan: {}: {}", where_, msg));
  }
  std::string buf_label(BufferId b) const {
    return fmt::format("buffer {} ({})", b, plan_.buffers[static_cast<size_t>(b)].name);
  }
  void check_buffer_id(BufferId b) const {
    if (b < 0 || static_cast<size_t>(b) >= plan_.buffers.size())
      fail(fmt::format("buffer id {} out of range (plan has {})", b, plan_.buffers.size()));
  }
  void check_slot_id(SlotId s) const {
    if (s < 0 || s >= plan_.num_slots)
      fail(fmt::format("slot id {} out of range (plan has {})", s, plan_.num_slots));
  }
  void live(BufferId b) const {
    check_buffer_id(b);
    switch (bufs_[static_cast<size_t>(b)]) {
      case BufState::Live:
        return;
      case BufState::Unallocated:
        fail(buf_label(b) + " used before Alloc");
      case BufState::Freed:
        fail(buf_label(b) + " used after Free");
    }
  }
  void set(SlotId s) const {
    check_slot_id(s);
    if (!slots_[static_cast<size_t>(s)]) fail(fmt::format("slot {} read before it is set", s));
  }
  void expr(const SizeExpr& e) const {
    if (e.divisor < 1) fail(fmt::format("size divisor {} is not positive", e.divisor));
    for (const auto& t : e.terms)
      for (SlotId s : t.slots) set(s);
    if (e.gate >= 0) set(e.gate);
  }
  void expect_elem(BufferId b, int32_t size) const {
    int32_t have = plan_.buffers[static_cast<size_t>(b)].elem_size;
    if (have != size)
      fail(fmt::format("{} has elem_size {}, expected {}", buf_label(b), have, size));
  }
  void check_relation(const PlanRelation& r) const {
    if (r.columns.size() != r.schema.size())
      fail(fmt::format("{} columns for {} attributes", r.columns.size(), r.schema.size()));
    check_slot_id(r.size);
    for (size_t i = 0; i < r.columns.size(); ++i) {
      check_buffer_id(r.columns[i]);
      expect_elem(r.columns[i], type_size(r.schema[i].type));
    }
    if (!r.validity.empty() && r.validity.size() != r.schema.size())
      fail(fmt::format("{} validity entries for {} attributes", r.validity.size(), r.schema.size()));
    for (size_t i = 0; i < r.schema.size(); ++i) {
      const BufferId v = r.validity_of(i);
      if (r.schema[i].nullable != (v >= 0))
        fail(fmt::format("attribute '{}' is {}nullable but has {} validity buffer", r.schema[i].name,
                         r.schema[i].nullable ? "" : "not ", v >= 0 ? "a" : "no"));
      if (v < 0) continue;
      check_buffer_id(v);
      expect_elem(v, 1);
    }
  }

  void check(const Alloc& a) {
    check_buffer_id(a.buffer);
    if (bufs_[static_cast<size_t>(a.buffer)] == BufState::Live)
      fail(buf_label(a.buffer) + " allocated while live");
    expr(plan_.buffers[static_cast<size_t>(a.buffer)].count);
    bufs_[static_cast<size_t>(a.buffer)] = BufState::Live;
    if (loop_) loop_->allocated.insert(a.buffer);
    if (loop_ && step_ <= loop_->prologue_end) loop_->prologue_allocated.insert(a.buffer);
  }
  void check(const Free& f) {
    live(f.buffer);
    // A buffer from before a loop is needed again by the next iteration.
    if (loop_ && !loop_->allocated.count(f.buffer))
      fail(buf_label(f.buffer) + " is freed inside a loop body but was allocated before it");
    bufs_[static_cast<size_t>(f.buffer)] = BufState::Freed;
  }
  void check(const CopyBuffer& c) {
    live(c.src);
    live(c.dst);
    if (plan_.buffers[static_cast<size_t>(c.src)].elem_size !=
        plan_.buffers[static_cast<size_t>(c.dst)].elem_size)
      fail("CopyBuffer between buffers of different element sizes");
    if (c.src == c.dst) fail("CopyBuffer src and dst are the same buffer");
    expr(c.count);
  }
  void check(const LoopBegin& b) {
    if (loop_) fail(fmt::format("loop {} begins inside loop {} (loops do not nest)", b.loop, loop_->id));
    if (!loop_ids_.insert(b.loop).second) fail(fmt::format("loop id {} used twice", b.loop));
    if (b.prologue < 0) fail("negative prologue");
    loop_ = OpenLoop{b.loop, {}, {}, step_ + static_cast<size_t>(b.prologue)};
    for (size_t i = step_ + 1; i <= loop_->prologue_end; ++i) {
      if (i >= plan_.steps.size() || std::holds_alternative<LoopEnd>(plan_.steps[i]))
        fail("the loop's prologue reaches past its body");
    }
  }
  void check(const LoopEnd& e) {
    if (!loop_ || loop_->id != e.loop) fail(fmt::format("LoopEnd of loop {} without its LoopBegin", e.loop));
    if (e.max_iterations < 0) fail("negative max_iterations");
    std::set<BufferId> sources, prologue_dsts;
    for (auto [dst, src] : e.carry_buffers) {
      // A buffer of the prologue may have been freed after its last use in the body.
      if (loop_->prologue_allocated.count(dst)) {
        check_buffer_id(dst);
        if (bufs_[static_cast<size_t>(dst)] == BufState::Unallocated) live(dst);
        prologue_dsts.insert(dst);
      } else {
        live(dst);
      }
      live(src);
      if (loop_->allocated.count(dst) && !prologue_dsts.count(dst))
        fail(buf_label(dst) + " is carried into but allocated in the body");
      if (!loop_->allocated.count(src)) fail(buf_label(src) + " is carried from but not allocated in the body");
      if (plan_.buffers[static_cast<size_t>(dst)].elem_size !=
          plan_.buffers[static_cast<size_t>(src)].elem_size)
        fail("a carry between buffers of different element sizes");
      sources.insert(src);
    }
    for (auto [dst, src] : e.carry_slots) {
      set(src);
      check_slot_id(dst);
      slots_[static_cast<size_t>(dst)] = true;
    }
    for (SlotId s : e.until_zero) set(s);
    if (!e.split.empty() && e.max_iterations > 0)
      fail("a loop with max_iterations splits its deltas (pieces are not rounds)");
    for (const SplitDelta& d : e.split) {
      for (BufferId b : d.columns) {
        live(b);
        bool carried = false;
        for (auto [dst, src] : e.carry_buffers) carried = carried || dst == b;
        if (!carried) fail(buf_label(b) + " is a split delta's column but no carry's destination");
      }
      bool carried = false;
      for (auto [dst, src] : e.carry_slots) carried = carried || dst == d.size;
      if (!carried) fail(fmt::format("slot s{} is a split delta's size but no carried slot", d.size));
    }
    if (e.iterations >= 0) {
      check_slot_id(e.iterations);
      slots_[static_cast<size_t>(e.iterations)] = true;
    }
    if (e.resident) check_resident(e, *e.resident);
    // The next iteration starts as this one did: the body's buffers are gone again.
    for (BufferId b : loop_->allocated) {
      const BufState st = bufs_[static_cast<size_t>(b)];
      if (st == BufState::Live && !sources.count(b) && !prologue_dsts.count(b))
        fail(buf_label(b) + " is allocated in the loop body and neither freed nor carried");
      // A prologue's buffer carried into holds the carried memory (also after the loop).
      bufs_[static_cast<size_t>(b)] = prologue_dsts.count(b) ? BufState::Live : BufState::Unallocated;
    }
    loop_.reset();
  }
  // After the carries: the carried relations and the kernel's other arguments are live and
  // set; the scratch buffers are declared (8-byte elements, never allocated by a step) and
  // the executor sets the scratch slots.
  void check_resident(const LoopEnd& e, const ResidentRounds& r) {
    if (!kernels_.count(r.kernel)) fail(fmt::format("kernel '{}' is not in plan.kernels", r.kernel));
    const size_t columns = r.packing == Packing::I32x2 ? 2 : 1;
    if (r.full.size() != columns || r.delta.size() != columns)
      fail("resident rounds' relations do not have the packing's columns");
    for (const std::vector<BufferId>* rel : {&r.full, &r.delta})
      for (BufferId b : *rel) {
        bool carried = false;
        for (auto [dst, src] : e.carry_buffers) carried = carried || dst == b;
        if (!carried) fail(buf_label(b) + " is a resident relation's column but no carry's destination");
        expect_elem(b, r.packing == Packing::I64 ? 8 : 4);
      }
    set(r.full_size);
    set(r.delta_size);
    if (r.control_words < ResidentRounds::kControlHeader)
      fail(fmt::format("a resident control block of fewer than {} words", ResidentRounds::kControlHeader));
    const std::set<BufferId> scratch{r.words, r.table, r.control};
    for (BufferId b : scratch) {
      check_buffer_id(b);
      expect_elem(b, 8);
      if (bufs_[static_cast<size_t>(b)] != BufState::Unallocated)
        fail(buf_label(b) + " is resident scratch but allocated by a step");
    }
    const std::set<SlotId> scratch_slots{r.room, r.mask, r.rounds, r.max_rows, r.search_full,
                                              r.prologue};
    for (SlotId s : scratch_slots) check_slot_id(s);
    for (const auto& arg : r.args) {
      std::visit(Overloaded{[&](const ArgBuffer& b) {
                              if (!scratch.count(b.buffer)) live(b.buffer);
                            },
                            [&](const ArgSlot& s) {
                              if (!scratch_slots.count(s.slot)) set(s.slot);
                            },
                            [](const ArgConst&) {}},
                 arg);
    }
  }
  void check(const SetSize& s) {
    expr(s.value);
    check_slot_id(s.slot);
    slots_[static_cast<size_t>(s.slot)] = true;
  }
  void check(const ReadSize& r) {
    live(r.buffer);
    expect_elem(r.buffer, 8);
    if (r.index < 0) fail("negative index");
    if (r.index_slot >= 0) set(r.index_slot);
    if (r.when >= 0) set(r.when);
    check_slot_id(r.slot);
    slots_[static_cast<size_t>(r.slot)] = true;
  }
  void check(const Launch& l) {
    if (!kernels_.count(l.kernel))
      fail(fmt::format("kernel '{}' is not in plan.kernels", l.kernel));
    if (l.alt_when >= 0) {
      set(l.alt_when);
      if (!kernels_.count(l.alt_kernel))
        fail(fmt::format("kernel '{}' is not in plan.kernels", l.alt_kernel));
    }
    expr(l.items);
    for (const DeviceSize& d : l.device_sizes) {
      set(d.slot);
      if (d.arg < 0 || static_cast<size_t>(d.arg) >= l.args.size() ||
          std::holds_alternative<ArgSlot>(l.args[static_cast<size_t>(d.arg)]))
        fail("a device size's argument is not a pointer argument of the launch");
    }
    if (l.items_per_block <= 0) fail("items_per_block must be positive");
    if (l.block_threads <= 0 || l.block_threads > 1024) fail("block_threads must be in 1..1024");
    if (l.dynamic_smem < 0) fail("negative dynamic_smem");
    for (const auto& arg : l.args) {
      std::visit(Overloaded{[&](const ArgBuffer& b) { live(b.buffer); },
                            [&](const ArgSlot& s) { set(s.slot); }, [](const ArgConst&) {}},
                 arg);
    }
    if (l.regrow) {
      const Regrow& g = *l.regrow;
      live(g.header);
      expect_elem(g.header, 8);
      if (g.index < 0) fail("negative regrow index");
      set(g.capacity);
      check_slot_id(g.needed);
      slots_[static_cast<size_t>(g.needed)] = true;
      auto is_arg = [&](BufferId b) {
        for (const auto& arg : l.args)
          if (auto* a = std::get_if<ArgBuffer>(&arg); a && a->buffer == b) return true;
        return false;
      };
      if (!is_arg(g.header)) fail("the regrow header is not an argument of the launch");
      for (BufferId b : g.grow) {
        live(b);
        if (!is_arg(b)) fail("a regrow buffer is not an argument of the launch");
      }
    }
  }
  void check(const SortPairs& s) {
    for (BufferId b : {s.keys_in, s.keys_out}) live(b);
    expect_elem(s.keys_in, type_size(s.key_type));
    expect_elem(s.keys_out, type_size(s.key_type));
    if ((s.values_in < 0) != (s.values_out < 0))
      fail("SortPairs has values_in or values_out but not both");
    if (s.value_bytes != 4 && s.value_bytes != 8)
      fail(fmt::format("SortPairs has values of {} bytes (4 or 8)", s.value_bytes));
    if (s.value_bytes == 8 &&
        (s.radix_bits >= 0 ||
         (!s.encoded && s.key_type != Type::I32 && s.key_type != Type::I64 &&
          s.key_type != Type::Date && s.key_type != Type::String)))
      fail("8-byte SortPairs values need integer or encoded keys, and no radix partition");
    if (s.values_in >= 0) {
      for (BufferId b : {s.values_in, s.values_out}) live(b);
      expect_elem(s.values_in, s.value_bytes);
      expect_elem(s.values_out, s.value_bytes);
    }
    if (s.encoded) {
      if (s.keys_in == s.keys_out) fail("an encoded SortPairs has keys_in equal to keys_out");
      if (s.key_type != Type::I32 && s.key_type != Type::I64)
        fail("an encoded SortPairs has 32- or 64-bit words (key type i32 or i64)");
      if (s.descending) fail("an encoded SortPairs is ascending (descending keys are inverted)");
    }
    if (s.radix_bits >= 0) {
      if (!s.encoded || (s.values_in >= 0 && s.values_in == s.values_out))
        fail("a radix partition (SortPairs::radix_bits) moves encoded words (and values) into "
             "new buffers");
      set(s.radix_bits);
    }
    if (!s.more_values.empty() && (s.radix_bits < 0 || s.values_in < 0))
      fail("SortPairs::more_values is for radix partitions that move values");
    for (const auto& [in, out] : s.more_values) {
      live(in);
      live(out);
      expect_elem(in, 4);
      expect_elem(out, 4);
      if (in == out) fail("a radix partition moves values into new buffers");
    }
    expr(s.count);
  }
  void check(const ScanInt64& s) {
    live(s.in);
    live(s.out);
    expect_elem(s.in, 8);
    expect_elem(s.out, 8);
    if (s.in == s.out) fail("ScanInt64 in and out are the same buffer");
    expr(s.count);
  }
  void check(const Gather& g) {
    if (g.elem_size != 1 && g.elem_size != 4 && g.elem_size != 8)
      fail(fmt::format("Gather elem_size {} (1, 4 or 8)", g.elem_size));
    live(g.src);
    live(g.index);
    live(g.dst);
    expect_elem(g.src, g.elem_size);
    expect_elem(g.dst, g.elem_size);
    expect_elem(g.index, 4);
    if (g.src == g.dst) fail("Gather src and dst are the same buffer");
    expr(g.count);
  }
  void check(const Iota& i) {
    live(i.buffer);
    expect_elem(i.buffer, 4);
    expr(i.count);
  }
  void check(const CheckFlag& c) {
    live(c.buffer);
    if (plan_.buffers[static_cast<size_t>(c.buffer)].elem_size < 4)
      fail(buf_label(c.buffer) + " is too narrow for an int32 flag");
  }

  struct OpenLoop {
    int32_t id;
    std::set<BufferId> allocated;           // buffers allocated in the body so far
    std::set<BufferId> prologue_allocated;  // those allocated in its prologue
    size_t prologue_end;                    // index of the prologue's last step
  };
  size_t step_ = 0;  // index of the step being checked

  const Plan& plan_;
  std::optional<OpenLoop> loop_;
  std::set<int32_t> loop_ids_;
  std::vector<BufState> bufs_;
  std::vector<bool> slots_;
  std::set<std::string> kernels_;
  std::string where_;
};

}  // namespace

void validate_plan(const Plan& plan) {
  Validator(plan).run();
}

std::string node_name(const Plan& plan, int32_t node) {
  if (node < 0) return "";
  if (static_cast<size_t>(node) < plan.node_names.size() && !plan.node_names[node].empty())
    return plan.node_names[static_cast<size_t>(node)];
  return fmt::format("node {}", node);
}

std::string step_name(const Step& step) {
  return std::visit(Overloaded{[](const Alloc&) { return std::string("Alloc"); },
                               [](const Free&) { return std::string("Free"); },
                               [](const SetSize&) { return std::string("SetSize"); },
                               [](const ReadSize&) { return std::string("ReadSize"); },
                               [](const Launch& l) { return "Launch " + l.kernel; },
                               [](const SortPairs&) { return std::string("SortPairs"); },
                               [](const ScanInt64&) { return std::string("ScanInt64"); },
                               [](const Gather&) { return std::string("Gather"); },
                               [](const Iota&) { return std::string("Iota"); },
                               [](const CheckFlag&) { return std::string("CheckFlag"); },
                               [](const CopyBuffer&) { return std::string("CopyBuffer"); },
                               [](const LoopBegin& b) { return fmt::format("LoopBegin {}", b.loop); },
                               [](const LoopEnd& e) { return fmt::format("LoopEnd {}", e.loop); }},
                    step);
}

int32_t step_node(const Step& step) {
  return std::visit(
      [](const auto& s) -> int32_t {
        if constexpr (requires { s.node; }) {
          return s.node;
        } else {
          return -1;
        }
      },
      step);
}

}  // namespace ranc::rt
