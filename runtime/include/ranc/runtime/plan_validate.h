// Consistency checks of a Plan before it runs (no GPU needed): ids in range,
// element sizes that match the steps, kernels that are declared, buffers allocated
// before use and not used after Free, slots set before they are read, outputs live
// at the end. A failure is a bug in the compiler, so it throws InternalError naming
// the step and its plan node.
#pragma once

#include <string>

#include "ranc/runtime/plan.h"

namespace ranc::rt {

void validate_plan(const Plan& plan);

// "n4 join" for a node id, "node 4" when the plan has no name for it, "" for -1.
std::string node_name(const Plan& plan, int32_t node);
// "Launch k3_select", "SortPairs", ... for messages.
std::string step_name(const Step& step);
int32_t step_node(const Step& step);

}  // namespace ranc::rt
