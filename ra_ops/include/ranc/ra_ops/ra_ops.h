// The RA operators, one place each (STYLE.md habit 3): every operator's typing rule
// (used by the checker), its CPU reference semantics (used by the reference
// executor) and, later, its lowering live under ra_ops/<operator>/. This header is
// the table of all of them.
#pragma once

#include <vector>

#include "ranc/data/error.h"
#include "ranc/data/host_relation.h"
#include "ranc/ir/program.h"

namespace ranc::ops {

using Diagnostics = std::vector<Diagnostic>;

// ---------------------------------------------------------------------------
// Typing. type_node(n, inputs, diags) resolves node n whose inputs are already
// checked: sets n.schema, rewrites n's expressions into resolved trees, fills the
// key indices and n.order. Appends a Diagnostic (with a location: the expression's
// when known, else n.loc) per mistake and returns false when n could not be typed.
bool type_node(Node& n, const std::vector<const Node*>& inputs, Diagnostics& diags);

// The relations a node's scalar subqueries may name: the schemas of all its inputs, by
// input index; the first `first` are the operator's own inputs, not subqueries.
struct SubqueryInputs {
  std::vector<const Schema*> schemas;
  size_t first = 0;
};

// Resolves an expression against a schema: names to indices, types and nullability
// inferred, the NULL keyword typed by its context, implicit numeric promotions made
// explicit as Cast nodes, constants folded where trivially safe. Returns null (and
// appends diagnostics) on error. `where` names the context for messages ("select
// predicate", "project expression 'x'"). Without `subqueries` a scalar subquery is an
// error.
ExprPtr resolve_expr(const ExprPtr& e, const Schema& schema, const SourceLoc& fallback,
                     std::string_view where, Diagnostics& diags,
                     const SubqueryInputs* subqueries = nullptr);

// ---------------------------------------------------------------------------
// Reference semantics (the oracle). eval_node computes a checked node's output
// from its inputs' outputs, following the semantics in ranc/ir/program.h.
// Run-time errors (integer division by zero) throw UserError(ErrorKind::Execution)
// naming the node.
HostRelation eval_node(const Program& program, const Node& n,
                       const std::vector<const HostRelation*>& inputs);

// Evaluates a resolved expression on one tuple (values in schema order).
Value eval_expr(const ExprNode& e, const std::vector<Value>& row);

}  // namespace ranc::ops

namespace ranc {

// Runs a checked program on the host, operator by operator. `inputs` are matched to
// the program's input nodes by name and must have the declared schemas (UserError
// otherwise). Returns one relation per output node, in Program::outputs() order.
std::vector<HostRelation> execute_reference(
    const Program& checked, const std::vector<std::pair<std::string, HostRelation>>& inputs);

}  // namespace ranc
