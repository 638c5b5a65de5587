// Checking a fixpoint group (ir/program.h, RECURSION); used by check().
#pragma once

#include <memory>
#include <vector>

#include "ranc/ir/program.h"

namespace ranc::check_detail {

// The checked definition of a fixpoint group whose outer relations have the schemas of
// `inputs` (the checked input nodes of one of its Fixpoint nodes), or null after
// appending diagnostics to `diags`.
std::shared_ptr<const FixpointDef> check_fixpoint(const FixpointDef& def,
                                                  const std::vector<const Node*>& inputs,
                                                  std::vector<Diagnostic>& diags);

}  // namespace ranc::check_detail
