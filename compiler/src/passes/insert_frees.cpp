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
  std::vector<int64_t> loop_end(plan.steps.size(), -1);  // per step: its loop's LoopEnd
  std::vector<int64_t> alloc_at(plan.buffers.size(), -1);
  {
    int64_t begin = -1;
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      if (std::holds_alternative<rt::LoopBegin>(plan.steps[i])) begin = static_cast<int64_t>(i);
      if (auto* e = std::get_if<rt::LoopEnd>(&plan.steps[i])) {
        for (int64_t j = begin; j >= 0 && j <= static_cast<int64_t>(i); ++j)
          loop_end[static_cast<size_t>(j)] = static_cast<int64_t>(i);
        for (auto [dst, src] : e->carry_buffers) keep.insert(src);
        begin = -1;
      }
      if (auto* a = std::get_if<rt::Alloc>(&plan.steps[i]); a && alloc_at[a->buffer] < 0)
        alloc_at[static_cast<size_t>(a->buffer)] = static_cast<int64_t>(i);
    }
  }
  std::vector<int64_t> last(plan.buffers.size(), -1);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (std::holds_alternative<rt::Free>(plan.steps[i])) continue;
    for (rt::BufferId b : step_buffers(plan.steps[i])) {
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
  std::vector<std::vector<rt::BufferId>> frees_after(plan.steps.size());
  for (size_t b = 0; b < last.size(); ++b)
    if (last[b] >= 0 && !keep.count(static_cast<rt::BufferId>(b)))
      frees_after[static_cast<size_t>(last[b])].push_back(static_cast<rt::BufferId>(b));
  std::vector<rt::Step> steps;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (std::holds_alternative<rt::Free>(plan.steps[i])) continue;  // recomputed here
    steps.push_back(std::move(plan.steps[i]));
    for (rt::BufferId b : frees_after[i]) steps.push_back(rt::Free{b});
  }
  plan.steps = std::move(steps);
}

}  // namespace ranc::passes
