// rotate_loop_reads: the next round's delta count at the end of the round, so that a
// fixpoint round waits for one read-back (rules in rotate_loop_reads.h).
#include "ranc/passes/rotate_loop_reads.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "ranc/data/error.h"

namespace ranc::passes {
namespace {

constexpr size_t kNone = static_cast<size_t>(-1);

// The slots a step of a loop body sets.
std::vector<rt::SlotId> slots_set(const rt::Step& s) {
  if (const auto* x = std::get_if<rt::SetSize>(&s)) return {x->slot};
  if (const auto* x = std::get_if<rt::ReadSize>(&s)) return {x->slot};
  if (const auto* l = std::get_if<rt::Launch>(&s); l && l->regrow)
    return {l->regrow->capacity, l->regrow->needed};
  return {};
}

// The slots a step reads (every slot it names but the one a SetSize or ReadSize sets).
std::vector<rt::SlotId> slots_read(const rt::Step& s) {
  std::vector<rt::SlotId> out;
  rt::for_each_buffer_and_slot(s, [](rt::BufferId) {}, [&](rt::SlotId x) { out.push_back(x); });
  if (const auto* x = std::get_if<rt::SetSize>(&s)) std::erase(out, x->slot);
  if (const auto* x = std::get_if<rt::ReadSize>(&s)) std::erase(out, x->slot);
  return out;
}

std::vector<rt::BufferId> buffers_of(const rt::Step& s) {
  std::vector<rt::BufferId> out;
  rt::for_each_buffer_and_slot(s, [&](rt::BufferId b) { out.push_back(b); }, [](rt::SlotId) {});
  return out;
}

struct DeltaSize {
  rt::SlotId source = -1;       // the slot carried into the delta size (the new delta's size)
  size_t read_at = kNone;       // the ReadSize that sets it
  rt::BufferId device = -1;     // where that ReadSize reads it (element 0)
  rt::BufferId column = -1;     // the new delta's first column
  rt::SizeExpr capacity;        // its allocation
};

bool rotate(rt::Plan& plan, size_t begin, size_t end) {
  auto& lb = std::get<rt::LoopBegin>(plan.steps[begin]);
  if (lb.prologue != 0) return false;
  const rt::LoopEnd& le = std::get<rt::LoopEnd>(plan.steps[end]);
  if (le.split.empty()) return false;

  // The head: through the body's first ReadSize.
  size_t head_end = kNone;
  for (size_t i = begin + 1; i < end && head_end == kNone; ++i) {
    const rt::Step& s = plan.steps[i];
    if (std::holds_alternative<rt::ReadSize>(s)) head_end = i;
    else if (!std::holds_alternative<rt::Alloc>(s) && !std::holds_alternative<rt::SetSize>(s) &&
             !std::holds_alternative<rt::Launch>(s) && !std::holds_alternative<rt::Free>(s))
      return false;
    if (const auto* l = std::get_if<rt::Launch>(&s); l && l->regrow) return false;
  }
  if (head_end == kNone) return false;

  std::map<rt::BufferId, rt::BufferId> carried_buffer;  // dst -> src
  for (auto [dst, src] : le.carry_buffers) carried_buffer[dst] = src;
  std::map<rt::SlotId, rt::SlotId> carried_slot;
  for (auto [dst, src] : le.carry_slots) carried_slot[dst] = src;
  std::set<rt::SlotId> split_sizes;
  for (const rt::SplitDelta& d : le.split) split_sizes.insert(d.size);

  std::set<rt::SlotId> head_set, body_set;
  std::set<rt::BufferId> head_alloc;
  std::map<rt::BufferId, size_t> body_alloc;  // buffer -> its Alloc after the head
  for (size_t i = begin + 1; i < end; ++i) {
    const rt::Step& s = plan.steps[i];
    for (rt::SlotId x : slots_set(s)) (i <= head_end ? head_set : body_set).insert(x);
    if (const auto* a = std::get_if<rt::Alloc>(&s))
      (i <= head_end ? static_cast<void>(head_alloc.insert(a->buffer))
                     : static_cast<void>(body_alloc.emplace(a->buffer, i)));
  }
  for (rt::SlotId x : head_set)
    if (body_set.count(x) || carried_slot.count(x)) return false;

  // What the head reads from outside it.
  std::map<rt::SlotId, DeltaSize> deltas;
  std::set<rt::BufferId> carried_used;
  for (size_t i = begin + 1; i <= head_end; ++i) {
    const rt::Step& s = plan.steps[i];
    if (std::holds_alternative<rt::Free>(s)) continue;
    for (rt::BufferId b : buffers_of(s)) {
      if (head_alloc.count(b)) continue;
      if (auto it = carried_buffer.find(b); it != carried_buffer.end()) {
        if (!body_alloc.count(it->second)) return false;
        carried_used.insert(b);
        continue;
      }
      if (body_alloc.count(b)) return false;
    }
    for (rt::SlotId x : slots_read(s)) {
      if (head_set.count(x)) continue;
      if (auto it = carried_slot.find(x); it != carried_slot.end()) {
        if (!split_sizes.count(x)) return false;
        deltas[x].source = it->second;
        continue;
      }
      if (body_set.count(x)) return false;
    }
    // A kernel that takes a delta size as an argument must be able to read it from device
    // memory instead (its grid and buffers may be sized by the capacity).
    if (const auto* l = std::get_if<rt::Launch>(&s))
      for (const rt::KernelArg& a : l->args)
        if (const auto* sa = std::get_if<rt::ArgSlot>(&a); sa && deltas.count(sa->slot) &&
            std::none_of(l->device_sizes.begin(), l->device_sizes.end(),
                         [&](const rt::DeviceSize& d) { return d.slot == sa->slot; }))
          return false;
  }
  if (deltas.empty()) return false;

  // Each delta size: the ReadSize of its new value, and its columns' capacity.
  size_t at = kNone;
  for (auto& [d, info] : deltas) {
    for (size_t i = head_end + 1; i < end; ++i)
      if (const auto* r = std::get_if<rt::ReadSize>(&plan.steps[i]); r && r->slot == info.source) {
        if (r->index != 0 || r->index_slot >= 0 || r->when >= 0) return false;
        info.read_at = i;
        info.device = r->buffer;
        break;
      }
    if (info.read_at == kNone) return false;
    at = std::min(at, info.read_at);
    const rt::SplitDelta* split = nullptr;
    for (const rt::SplitDelta& sd : le.split)
      if (sd.size == d) split = &sd;
    if (!split || split->columns.empty() || !carried_buffer.count(split->columns[0])) return false;
    info.column = carried_buffer.at(split->columns[0]);
    if (!body_alloc.count(info.column)) return false;
    info.capacity = plan.buffers[static_cast<size_t>(info.column)].count;
  }
  // Every new delta the copy reads is complete at its place: allocated before it, and no
  // step between it and the delta's read-back touches its first column or its count.
  for (auto& [d, info] : deltas) {
    if (body_alloc.at(info.column) >= at) return false;
    for (size_t i = at; i < info.read_at; ++i)
      for (rt::BufferId b : buffers_of(plan.steps[i]))
        if (b == info.column || b == info.device) return false;
  }
  for (rt::BufferId b : carried_used)
    if (body_alloc.at(carried_buffer.at(b)) >= at) return false;

  // The copy for the next round, inserted before the first of those ReadSizes.
  std::map<rt::SlotId, rt::SlotId> slot_map;
  std::vector<rt::Step> copy;
  for (auto& [d, info] : deltas) {
    const rt::SlotId cap = plan.num_slots++;
    slot_map[d] = cap;
    copy.push_back(rt::SetSize{cap, info.capacity});
  }
  for (rt::SlotId x : head_set) slot_map[x] = plan.num_slots++;
  auto S = [&](rt::SlotId x) {
    auto it = slot_map.find(x);
    return it == slot_map.end() ? x : it->second;
  };
  std::map<rt::BufferId, rt::BufferId> buffer_map;
  for (rt::BufferId b : carried_used) buffer_map[b] = carried_buffer.at(b);
  for (rt::BufferId b : head_alloc) {
    rt::BufferDecl decl = plan.buffers[static_cast<size_t>(b)];
    decl.name += ".next";
    for (auto& t : decl.count.terms)
      for (auto& x : t.slots) x = S(x);
    decl.count.gate = decl.count.gate < 0 ? -1 : S(decl.count.gate);
    buffer_map[b] = static_cast<rt::BufferId>(plan.buffers.size());
    plan.buffers.push_back(std::move(decl));
  }
  auto B = [&](rt::BufferId b) {
    auto it = buffer_map.find(b);
    return it == buffer_map.end() ? b : it->second;
  };
  for (size_t i = begin + 1; i <= head_end; ++i) {
    if (std::holds_alternative<rt::Free>(plan.steps[i])) continue;
    rt::Step s = plan.steps[i];
    const rt::Launch* original = std::get_if<rt::Launch>(&plan.steps[i]);
    rt::for_each_buffer_and_slot(s, [&](rt::BufferId& b) { b = B(b); }, [&](rt::SlotId& x) { x = S(x); });
    if (auto* l = std::get_if<rt::Launch>(&s))
      for (const rt::DeviceSize& d : original->device_sizes)
        if (auto it = deltas.find(d.slot); it != deltas.end())
          l->args.at(static_cast<size_t>(d.arg)) = rt::ArgBuffer{it->second.device};
    copy.push_back(std::move(s));
  }

  // What the body reads of the head after it is carried from the copy.
  std::set<rt::BufferId> used_after;
  std::set<rt::SlotId> read_after;
  for (size_t i = head_end + 1; i < end; ++i) {
    if (std::holds_alternative<rt::Free>(plan.steps[i])) continue;
    for (rt::BufferId b : buffers_of(plan.steps[i])) used_after.insert(b);
    for (rt::SlotId x : slots_read(plan.steps[i])) read_after.insert(x);
  }
  rt::LoopEnd& e = std::get<rt::LoopEnd>(plan.steps[end]);
  for (rt::BufferId b : head_alloc)
    if (used_after.count(b)) e.carry_buffers.emplace_back(b, buffer_map.at(b));
  for (rt::SlotId x : head_set)
    if (read_after.count(x)) e.carry_slots.emplace_back(x, slot_map.at(x));
  lb.prologue = static_cast<int32_t>(head_end - begin);
  plan.steps.insert(plan.steps.begin() + static_cast<std::ptrdiff_t>(at), copy.begin(), copy.end());
  return true;
}

}  // namespace

int rotate_loop_reads(rt::Plan& plan) {
  int rotated = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (!std::holds_alternative<rt::LoopBegin>(plan.steps[i])) continue;
    size_t end = i + 1;
    while (end < plan.steps.size() && !std::holds_alternative<rt::LoopEnd>(plan.steps[end])) ++end;
    internal_check(end < plan.steps.size(), "rotate_loop_reads: a LoopBegin without its LoopEnd");
    if (rotate(plan, i, end)) ++rotated;
  }
  return rotated;
}

}  // namespace ranc::passes
