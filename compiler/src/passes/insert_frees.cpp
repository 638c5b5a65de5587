// insert_frees: frees each intermediate buffer right after the step that uses it last,
// so peak device memory follows the live intermediates only.
#include "ranc/passes/insert_frees.h"

#include "ranc/data/error.h"
#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace ranc::passes {

std::vector<rt::BufferId> step_buffers(const rt::Step& s) {
  std::vector<rt::BufferId> out;
  rt::for_each_buffer_and_slot(s, [&](rt::BufferId b) { out.push_back(b); }, [](rt::SlotId) {});
  return out;
}

void insert_frees(rt::Plan& plan) {
  std::set<rt::BufferId> keep;
  for (const auto* rels : {&plan.inputs, &plan.outputs})
    for (const auto& r : *rels) {
      keep.insert(r.columns.begin(), r.columns.end());
      keep.insert(r.validity.begin(), r.validity.end());
    }
  // Loops (fixpoints): a buffer carried out of a body (a LoopEnd's src) is handed over to
  // its dst and never freed; a buffer that exists before a loop and is used in its body
  // lives until the loop ends (the next iteration reads it again).
  // A buffer allocated in a loop's prologue (rt::LoopBegin::prologue) and carried into is
  // freed after its last use in the body (the carry gives it memory again) and once more
  // after the loop (the last carry's memory).
  std::vector<int64_t> loop_end(plan.steps.size(), -1);  // per step: its loop's LoopEnd
  std::vector<int64_t> alloc_at(plan.buffers.size(), -1);
  std::set<rt::BufferId> prologue_carried;
  std::vector<std::vector<rt::BufferId>> frees_after(plan.steps.size());
  {
    int64_t begin = -1, prologue_end = -1;
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      if (auto* b = std::get_if<rt::LoopBegin>(&plan.steps[i])) {
        begin = static_cast<int64_t>(i);
        prologue_end = begin + b->prologue;
      }
      if (auto* a = std::get_if<rt::Alloc>(&plan.steps[i]); a && alloc_at[a->buffer] < 0)
        alloc_at[static_cast<size_t>(a->buffer)] = static_cast<int64_t>(i);
      if (auto* e = std::get_if<rt::LoopEnd>(&plan.steps[i])) {
        // The resident rounds' scratch is the executor's to allocate and free.
        if (e->resident) keep.insert({e->resident->words, e->resident->table, e->resident->control});
        for (int64_t j = begin; j >= 0 && j <= static_cast<int64_t>(i); ++j)
          loop_end[static_cast<size_t>(j)] = static_cast<int64_t>(i);
        for (auto [dst, src] : e->carry_buffers) {
          keep.insert(src);
          const int64_t born = alloc_at[static_cast<size_t>(dst)];
          if (born > begin && born <= prologue_end && !keep.count(dst)) {
            prologue_carried.insert(dst);
            frees_after[i].push_back(dst);
          }
        }
        begin = prologue_end = -1;
      }
    }
  }
  std::vector<int64_t> last(plan.buffers.size(), -1);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (std::holds_alternative<rt::Free>(plan.steps[i])) continue;
    const bool carries = std::holds_alternative<rt::LoopEnd>(plan.steps[i]);
    for (rt::BufferId b : step_buffers(plan.steps[i])) {
      if (carries && prologue_carried.count(b)) continue;  // freed before its carry
      internal_check(b >= 0 && static_cast<size_t>(b) < last.size(),
                     fmt::format("insert_frees: step {} uses buffer {} of {}", i, b, last.size()));
      int64_t use = static_cast<int64_t>(i);
      const int64_t end = loop_end[i];
      const int64_t born = alloc_at[static_cast<size_t>(b)];
      // Used in a loop it was not allocated in: live until the loop's end.
      if (end >= 0 && (born < 0 || loop_end[static_cast<size_t>(born)] != end)) use = end;
      last[static_cast<size_t>(b)] = std::max(last[static_cast<size_t>(b)], use);
    }
  }
  for (size_t b = 0; b < last.size(); ++b)
    if (last[b] >= 0 && !keep.count(static_cast<rt::BufferId>(b)))
      frees_after[static_cast<size_t>(last[b])].push_back(static_cast<rt::BufferId>(b));
  // A loop's prologue ends at the same step as before (the Frees after that step run in the
  // body, where they find nothing to free when the prologue did not run).
  std::vector<rt::Step> steps;
  size_t old_begin = 0, begin = 0, prologue_end = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (auto* b = std::get_if<rt::LoopBegin>(&plan.steps[i])) {
      old_begin = i;
      begin = steps.size();
      prologue_end = i + static_cast<size_t>(b->prologue);
    }
    if (std::holds_alternative<rt::Free>(plan.steps[i])) continue;  // recomputed here
    steps.push_back(std::move(plan.steps[i]));
    if (i > old_begin && i <= prologue_end)
      std::get<rt::LoopBegin>(steps[begin]).prologue = static_cast<int32_t>(steps.size() - 1 - begin);
    for (rt::BufferId b : frees_after[i]) steps.push_back(rt::Free{b});
  }
  plan.steps = std::move(steps);
}

}  // namespace ranc::passes
