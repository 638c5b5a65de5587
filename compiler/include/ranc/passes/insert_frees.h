// insert_frees: a Free step after the last use of every buffer the plan allocates
// (plan inputs and outputs are never freed).
#pragma once

#include "ranc/runtime/plan.h"

namespace ranc::passes {

void insert_frees(rt::Plan& plan);

// The buffers a step reads or writes.
std::vector<rt::BufferId> step_buffers(const rt::Step& s);

}  // namespace ranc::passes
