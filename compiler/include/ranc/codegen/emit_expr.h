// C++ code for resolved IR expressions, following the evaluation rules of
// ranc/ir/program.h (and the open decisions taken by the reference in
// ra_ops/expr/eval.cpp): wrapping integer arithmetic, division by zero through the
// error flag, saturating float->int casts, IEEE comparisons, short-circuit case (and
// and/or where their right side can fail; elsewhere both sides are evaluated: the same
// value without a branch), string predicates through dictionary parameters, string values
// (literals, substring) as codes of the run's dictionary. After lower_nulls nothing can be
// NULL: is null is false and coalesce its first argument.
#pragma once

#include <functional>
#include <string>

#include "ranc/codegen/lowering.h"

namespace ranc::codegen {

struct ExprHooks {
  // The slot of a dictionary parameter (EqCode, LowerBound, UpperBound, PrefixEnd).
  std::function<rt::SlotId(rt::DictParam::Kind, const std::string&)> dict_slot;
  // The uint8 mask buffer of a LIKE pattern.
  std::function<rt::BufferId(const std::string&)> like_mask;
  // The int32 code map of substring(s, from, length) (DictParam::SubstringMap).
  std::function<rt::BufferId(int64_t from, int64_t length)> substring_map;
  // The int32 error flag buffer.
  std::function<rt::BufferId()> error_flag;
};

std::string emit_expression(const ExprPtr& e, KernelParams& params, const AttrAccess& attr,
                            const ExprHooks& hooks);

// A C++ literal of a numeric, bool or date value (exact; non-finite floats by bits).
std::string cpp_literal(const Value& v);

}  // namespace ranc::codegen
