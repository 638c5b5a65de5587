// Internal to ra_ops: the per-operator typing rules that ops::type_node dispatches
// to (each defined in ra_ops/<operator>/typing.cpp) and the message helpers they
// share, so every rule words its diagnostics the same way.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ranc/ra_ops/ra_ops.h"

namespace ranc::ops::typing {

using Inputs = std::vector<const Node*>;

bool type_input(Node& n, const Inputs& in, Diagnostics& diags);
bool type_select(Node& n, const Inputs& in, Diagnostics& diags);
bool type_project(Node& n, const Inputs& in, Diagnostics& diags);
bool type_product(Node& n, const Inputs& in, Diagnostics& diags);
bool type_set_op(Node& n, const Inputs& in, Diagnostics& diags);  // union/intersect/difference
bool type_join(Node& n, const Inputs& in, Diagnostics& diags);
bool type_reduce(Node& n, const Inputs& in, Diagnostics& diags);
bool type_sort(Node& n, const Inputs& in, Diagnostics& diags);
bool type_limit(Node& n, const Inputs& in, Diagnostics& diags);
bool type_distinct(Node& n, const Inputs& in, Diagnostics& diags);
bool type_output(Node& n, const Inputs& in, Diagnostics& diags);
bool type_scalar(Node& n, const Inputs& in, Diagnostics& diags);

// `a` when it is known, else `fallback`.
const SourceLoc& loc_or(const SourceLoc& a, const SourceLoc& fallback);

void report(Diagnostics& diags, ErrorKind kind, std::string message, const SourceLoc& loc,
            std::string hint = {});

// "a, b, c" (shortened after many names, so huge schemas keep messages readable).
std::string list_names(const Schema& schema);

// "did you mean 'x'?" for the closest name of the schema by edit distance, or "".
std::string did_you_mean(std::string_view name, const Schema& schema);

// Looks `name` up in `schema`; reports UnknownAttribute ("unknown attribute 'x' in
// <where>; <side> has: ...", with a suggestion) when it is not there.
std::optional<int32_t> find_attribute(std::string_view name, const Schema& schema,
                                      std::string_view where, std::string_view side,
                                      const SourceLoc& loc, Diagnostics& diags);

// Resolves a predicate and requires it to be bool; null (after a diagnostic) otherwise.
ExprPtr resolve_predicate(const Expr& e, const Schema& schema, const SourceLoc& fallback,
                          std::string_view where, Diagnostics& diags,
                          const SubqueryInputs* subqueries = nullptr);

// The subqueries node n's expressions may name: its inputs after the operator's own.
SubqueryInputs subquery_inputs(const Node& n, const Inputs& in);

}  // namespace ranc::ops::typing
