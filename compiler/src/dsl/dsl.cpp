// The C++ DSL: each call appends a node carrying the caller's source location.
#include "ranc/dsl.h"

namespace ranc {

namespace {
// Marks an input that belongs to another ProgramBuilder; check() reports it.
constexpr NodeId kForeignNode = -2;

Node make_node(OpKind kind, std::source_location loc) {
  Node n;
  n.kind = kind;
  n.loc = SourceLoc::from(loc);
  return n;
}
}  // namespace

static Aggregate agg(AggFunc f, Expr arg, std::string name) {
  return Aggregate{std::move(name), f, std::move(arg), {}};
}
Aggregate sum(Expr arg, std::string name) {
  return agg(AggFunc::Sum, std::move(arg), std::move(name));
}
Aggregate min(Expr arg, std::string name) {
  return agg(AggFunc::Min, std::move(arg), std::move(name));
}
Aggregate max(Expr arg, std::string name) {
  return agg(AggFunc::Max, std::move(arg), std::move(name));
}
Aggregate avg(Expr arg, std::string name) {
  return agg(AggFunc::Avg, std::move(arg), std::move(name));
}
Aggregate count(std::string name) {
  return agg(AggFunc::Count, Expr(), std::move(name));
}

Rel ProgramBuilder::add(Node n) {
  return Rel(this, program_.add(std::move(n)));
}

Rel ProgramBuilder::input(std::string name, std::vector<Attribute> attributes, size_t key_size,
                          std::vector<SortSpec> sorted_by, std::source_location loc) {
  Node n = make_node(OpKind::Input, loc);
  n.name = std::move(name);
  n.declared = Schema{std::move(attributes), key_size};
  for (auto& k : sorted_by)
    n.sort_keys.push_back(SortKey{std::move(k.attr), k.descending, n.loc, -1});
  return add(std::move(n));
}

void ProgramBuilder::output(const Rel& rel, std::string name, std::source_location loc) {
  Node n = make_node(OpKind::Output, loc);
  n.name = std::move(name);
  n.inputs = {rel.builder() == this ? rel.id() : kForeignNode};
  add(std::move(n));
}

// Appends a node whose inputs are this relation and optionally `right`.
static Rel chain(const Rel& self, Node n, const Rel* right = nullptr) {
  ProgramBuilder* b = self.builder();
  n.inputs = {self.id()};
  if (right) n.inputs.push_back(right->builder() == b ? right->id() : kForeignNode);
  return b->add(std::move(n));
}

Rel Rel::select(Expr predicate, std::source_location loc) const {
  Node n = make_node(OpKind::Select, loc);
  n.predicate = std::move(predicate);
  return chain(*this, std::move(n));
}

Rel Rel::project(std::vector<Projection> attrs, std::source_location loc) const {
  Node n = make_node(OpKind::Project, loc);
  for (auto& p : attrs) n.exprs.push_back(NamedExpr{std::move(p.name), std::move(p.expr), n.loc});
  return chain(*this, std::move(n));
}

static Rel binary(const Rel& self, OpKind k, const Rel& right, std::source_location loc) {
  return chain(self, make_node(k, loc), &right);
}
Rel Rel::product(const Rel& r, std::source_location loc) const {
  return binary(*this, OpKind::Product, r, loc);
}
Rel Rel::union_with(const Rel& r, std::source_location loc) const {
  return binary(*this, OpKind::Union, r, loc);
}
Rel Rel::intersect(const Rel& r, std::source_location loc) const {
  return binary(*this, OpKind::Intersect, r, loc);
}
Rel Rel::difference(const Rel& r, std::source_location loc) const {
  return binary(*this, OpKind::Difference, r, loc);
}

Rel Rel::join(const Rel& right, std::vector<std::string> left_keys,
              std::vector<std::string> right_keys, JoinKind kind, Expr residual,
              std::source_location loc) const {
  Node n = make_node(OpKind::Join, loc);
  n.join_kind = kind;
  n.left_keys = std::move(left_keys);
  n.right_keys = std::move(right_keys);
  n.predicate = std::move(residual);
  return chain(*this, std::move(n), &right);
}
Rel Rel::semi_join(const Rel& right, std::vector<std::string> lk, std::vector<std::string> rk,
                   Expr residual, std::source_location loc) const {
  return join(right, std::move(lk), std::move(rk), JoinKind::Semi, std::move(residual), loc);
}
Rel Rel::anti_join(const Rel& right, std::vector<std::string> lk, std::vector<std::string> rk,
                   Expr residual, std::source_location loc) const {
  return join(right, std::move(lk), std::move(rk), JoinKind::Anti, std::move(residual), loc);
}

Rel Rel::reduce(std::vector<std::string> group_keys, std::vector<Aggregate> aggregates,
                std::source_location loc) const {
  Node n = make_node(OpKind::Reduce, loc);
  n.group_keys = std::move(group_keys);
  for (auto& a : aggregates)
    if (!a.loc.known()) a.loc = n.loc;
  n.aggregates = std::move(aggregates);
  return chain(*this, std::move(n));
}

Rel Rel::sort(std::vector<SortSpec> keys, std::source_location loc) const {
  Node n = make_node(OpKind::Sort, loc);
  for (auto& k : keys) n.sort_keys.push_back(SortKey{std::move(k.attr), k.descending, n.loc, -1});
  return chain(*this, std::move(n));
}

Rel Rel::limit(int64_t count, int64_t offset, std::source_location loc) const {
  Node n = make_node(OpKind::Limit, loc);
  n.limit = count;
  n.offset = offset;
  return chain(*this, std::move(n));
}

Rel Rel::distinct(std::source_location loc) const {
  return chain(*this, make_node(OpKind::Distinct, loc));
}

}  // namespace ranc
