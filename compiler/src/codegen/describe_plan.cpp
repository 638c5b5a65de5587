// describe_plan: the plan as text for `ranc explain` and for plan tests.
#include <fmt/format.h>

#include "ranc/codegen/codegen.h"

namespace ranc::codegen {
namespace {

std::string size_text(const rt::SizeExpr& e) {
  std::string s;
  for (const auto& t : e.terms) {
    std::string prod;
    for (rt::SlotId id : t.slots) prod += fmt::format("{}s{}", prod.empty() ? "" : "*", id);
    if (t.factor != 1) prod = fmt::format("{}*{}", t.factor, prod);
    s += fmt::format("{}{}", s.empty() ? "" : " + ", prod);
  }
  if (e.constant != 0 || s.empty()) s += fmt::format("{}{}", s.empty() ? "" : " + ", e.constant);
  if (e.divisor > 1) s = fmt::format("ceil(({}) / {})", s, e.divisor);
  if (e.fn == rt::SizeFn::CeilLog2) s = fmt::format("ceil_log2({})", s);
  if (e.fn == rt::SizeFn::Pow2) s = fmt::format("2^({})", s);
  if (e.saturate) s = fmt::format("max(0, {})", s);
  if (e.at_least > 0) s = fmt::format("max({}, {})", e.at_least, s);
  if (e.at_most >= 0) s = fmt::format("min({}, {})", e.at_most, s);
  if (e.gate >= 0)
    s = e.gate_max >= 0 ? fmt::format("(s{} in [{}, {}] ? {} : 0)", e.gate, e.gate_min, e.gate_max, s)
                        : fmt::format("(s{} >= {} ? {} : 0)", e.gate, e.gate_min, s);
  return s;
}

std::string buf(const rt::Plan& p, rt::BufferId b) {
  return fmt::format("b{}", b);
}

std::string step_text(const rt::Plan& p, const rt::Step& s) {
  if (auto* a = std::get_if<rt::Alloc>(&s))
    return fmt::format("alloc {} [{} x {}B]{} ({})", buf(p, a->buffer),
                       size_text(p.buffers[a->buffer].count), p.buffers[a->buffer].elem_size,
                       a->zero ? " zeroed" : "", p.buffers[a->buffer].name);
  if (auto* f = std::get_if<rt::Free>(&s)) return fmt::format("free {}", buf(p, f->buffer));
  if (auto* z = std::get_if<rt::SetSize>(&s))
    return fmt::format("s{} = {}", z->slot, size_text(z->value));
  if (auto* r = std::get_if<rt::ReadSize>(&s))
    return fmt::format("s{} = read {}[{}]{}", r->slot, buf(p, r->buffer),
                       r->index_slot < 0 ? std::to_string(r->index)
                       : r->index == 0   ? fmt::format("s{}", r->index_slot)
                                         : fmt::format("s{} + {}", r->index_slot, r->index),
                       r->when < 0 ? std::string() : fmt::format(" when s{} != 0", r->when));
  if (auto* l = std::get_if<rt::Launch>(&s)) {
    std::string args;
    for (const auto& a : l->args) {
      if (!args.empty()) args += ", ";
      if (auto* b = std::get_if<rt::ArgBuffer>(&a))
        args += buf(p, b->buffer);
      else if (auto* sl = std::get_if<rt::ArgSlot>(&a))
        args += fmt::format("s{}", sl->slot);
      else
        args += fmt::format("{}", std::get<rt::ArgConst>(a).value);
    }
    std::string regrow;
    if (l->regrow) {
      std::string grow;
      for (rt::BufferId b : l->regrow->grow) grow += fmt::format("{}{}", grow.empty() ? "" : ", ", buf(p, b));
      regrow = fmt::format("; then s{} = {}[{}], and when it is > s{} (the capacity) grow {} and run again",
                           l->regrow->needed, buf(p, l->regrow->header), l->regrow->index,
                           l->regrow->capacity, grow);
    }
    const std::string alt =
        l->alt_when >= 0 ? fmt::format(" (or {} when s{} != 0)", l->alt_kernel, l->alt_when) : "";
    return fmt::format("launch {}{}({}) items {} / {} per block, {} threads{}{}", l->kernel, alt,
                       args, size_text(l->items), l->items_per_block, l->block_threads,
                       l->one_wave      ? ", in one wave"
                       : l->whole_waves ? ", in whole waves"
                                        : "",
                       regrow);
  }
  if (auto* o = std::get_if<rt::SortPairs>(&s))
  {
    const std::string keys = o->encoded ? fmt::format("{}-bit words", 8 * type_size(o->key_type))
                                        : std::string(type_name(o->key_type));
    if (o->values_in < 0 && o->radix_bits >= 0)
      return fmt::format("radix_partition {} -> {} [{}, bits s{}] count {}", buf(p, o->keys_in),
                         buf(p, o->keys_out), keys, o->radix_bits, size_text(o->count));
    if (o->values_in < 0)
      return fmt::format("sort_keys {} -> {} [{}] count {}", buf(p, o->keys_in),
                         buf(p, o->keys_out), keys, size_text(o->count));
    if (o->radix_bits >= 0) {
      std::string more;
      for (const auto& [in, out] : o->more_values)
        more += fmt::format(", {} -> {}", buf(p, in), buf(p, out));
      return fmt::format("radix_partition {} -> {}, {} -> {}{} [{}, bits s{}] count {}",
                         buf(p, o->keys_in), buf(p, o->keys_out), buf(p, o->values_in),
                         buf(p, o->values_out), more, keys, o->radix_bits, size_text(o->count));
    }
    return fmt::format("sort_pairs {} -> {}, {} -> {} [{}{}{}] count {}", buf(p, o->keys_in),
                       buf(p, o->keys_out), buf(p, o->values_in), buf(p, o->values_out), keys,
                       o->descending ? " desc" : "", o->value_bytes == 8 ? ", 8-byte values" : "",
                       size_text(o->count));
  }
  if (auto* c = std::get_if<rt::ScanInt64>(&s))
    return fmt::format("scan {} -> {} count {}", buf(p, c->in), buf(p, c->out),
                       size_text(c->count));
  if (auto* g = std::get_if<rt::Gather>(&s))
    return fmt::format("gather {} = {}[{}] count {}", buf(p, g->dst), buf(p, g->src),
                       buf(p, g->index), size_text(g->count));
  if (auto* i = std::get_if<rt::Iota>(&s))
    return fmt::format("iota {} count {}", buf(p, i->buffer), size_text(i->count));
  if (auto* k = std::get_if<rt::CheckFlag>(&s))
    return fmt::format("check {} ({})", buf(p, k->buffer), k->message);
  if (auto* c = std::get_if<rt::CopyBuffer>(&s))
    return fmt::format("copy {} = {} count {}", buf(p, c->dst), buf(p, c->src),
                       size_text(c->count));
  if (auto* b = std::get_if<rt::LoopBegin>(&s))
    return b->prologue > 0 ? fmt::format("loop {} {{  (the first {} steps: the first round's and a "
                                         "split piece's only; later rounds' come from the last)",
                                         b->loop, b->prologue)
                           : fmt::format("loop {} {{", b->loop);
  if (auto* e = std::get_if<rt::LoopEnd>(&s)) {
    std::string carry, until;
    for (auto [dst, src] : e->carry_buffers)
      carry += fmt::format("{}{} <- {}", carry.empty() ? "" : ", ", buf(p, dst), buf(p, src));
    for (auto [dst, src] : e->carry_slots)
      carry += fmt::format("{}s{} <- s{}", carry.empty() ? "" : ", ", dst, src);
    for (rt::SlotId z : e->until_zero) until += fmt::format("{}s{}", until.empty() ? "" : ", ", z);
    std::string split;
    for (const rt::SplitDelta& d : e->split) {
      std::string cols;
      for (rt::BufferId b : d.columns) cols += fmt::format("{}{}", cols.empty() ? "" : ", ", buf(p, b));
      split += fmt::format("{}[{}] s{}", split.empty() ? "" : ", ", cols, d.size);
    }
    return fmt::format("}} loop {}: carry {}; again unless all of [{}] are 0{}{}{}", e->loop, carry,
                       until,
                       e->max_iterations > 0 ? fmt::format(" or after {} iterations", e->max_iterations)
                                             : std::string(),
                       split.empty() ? std::string()
                                     : fmt::format("; out of memory: split the deltas {}", split),
                       e->resident ? fmt::format("; deltas of at most {} rows: resident rounds in {}",
                                                 rt::ResidentRounds::kDefaultEnterRows, e->resident->kernel)
                                   : std::string());
  }
  return "?";
}

}  // namespace

// "[b1, b2]" and, for nullable attributes, " validity [b3 for a]".
static std::string columns_text(const rt::PlanRelation& r) {
  std::string cols, valid;
  for (auto b : r.columns) cols += fmt::format("{}b{}", cols.empty() ? "" : ", ", b);
  for (size_t i = 0; i < r.schema.size(); ++i)
    if (r.validity_of(i) >= 0)
      valid += fmt::format("{}b{} for {}", valid.empty() ? "" : ", ", r.validity_of(i),
                           r.schema[i].name);
  return valid.empty() ? fmt::format("[{}]", cols) : fmt::format("[{}] validity [{}]", cols, valid);
}

std::string describe_plan(const rt::Plan& p) {
  std::string out;
  for (const auto& r : p.inputs)
    out += fmt::format("input {} size s{} columns {}\n", r.name, r.size, columns_text(r));
  for (const auto& d : p.dict_params) {
    static constexpr const char* kinds[] = {"eq_code",   "lower_bound", "upper_bound",
                                            "prefix_end", "like_mask",  "value_code",
                                            "substring_map"};
    const char* kind = kinds[static_cast<int>(d.kind)];
    if (d.kind == rt::DictParam::Kind::LikeMask)
      out += fmt::format("dict b{} = {}('{}')\n", d.mask, kind, d.text);
    else if (d.kind == rt::DictParam::Kind::SubstringMap)
      out += fmt::format("dict b{} = {}({}, {})\n", d.mask, kind, d.from, d.length);
    else
      out += fmt::format("dict s{} = {}('{}')\n", d.slot, kind, d.text);
  }
  int depth = 0;  // loop bodies are indented
  for (const auto& s : p.steps) {
    if (std::holds_alternative<rt::LoopEnd>(s)) depth = 0;
    out += std::string(static_cast<size_t>(depth) * 2, ' ') + step_text(p, s) + "\n";
    if (std::holds_alternative<rt::LoopBegin>(s)) depth = 1;
  }
  for (const auto& r : p.outputs)
    out += fmt::format("output {} size s{} columns {}\n", r.name, r.size, columns_text(r));
  return out;
}

}  // namespace ranc::codegen
