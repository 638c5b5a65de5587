// The C++ DSL: each call appends a node carrying the caller's source location. A
// fixpoint's rules are built by a ProgramBuilder of their own, owned by the main one.
#include "ranc/dsl.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ranc {

namespace dsl_detail {
// One fixpoint group while it is built, and its definition once closed.
struct FixpointState {
  ProgramBuilder* main = nullptr;
  ProgramBuilder rules;
  SourceLoc loc;
  int64_t max_iterations = 0;
  std::vector<std::string> names;     // recursive relations with a rule, in order
  std::vector<SourceLoc> first_rule;  // per name
  struct Read {
    std::string name;
    NodeId node;  // the Input node in the rules
    SourceLoc loc;
  };
  std::vector<Read> recursive;             // relation() calls
  std::vector<Read> outer;                 // use() calls, in order
  std::vector<NodeId> outer_main;          // per outer: its node in the main program
  std::shared_ptr<const FixpointDef> def;  // set by the first result()
  SourceLoc closed_at;
  std::map<std::string, NodeId> results;  // Fixpoint nodes of the main program
};
}  // namespace dsl_detail

namespace {
// Marks an input that belongs to another ProgramBuilder; check() reports it.
constexpr NodeId kForeignNode = -2;

[[noreturn]] void fail(const SourceLoc& at, std::string message, std::string hint) {
  throw UserError(Diagnostic{ErrorKind::InvalidGraph, std::move(message), at, std::move(hint)});
}

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
Aggregate count(Expr arg, std::string name) {
  return agg(AggFunc::Count, std::move(arg), std::move(name));
}
Aggregate distinct(Aggregate a) {
  a.distinct = true;
  return a;
}

Expr scalar(const Rel& r) {
  ExprNode n;
  n.kind = ExprKind::Scalar;
  n.subquery_node = r.id();
  return Expr(make_expr(std::move(n)));
}

namespace {
// Scalar subqueries of the DSL name their relation's node: each becomes an input of `n`
// (after its own inputs) and the expression refers to that input.
ExprPtr attach(const ExprPtr& e, Node& n) {
  return rewrite_expr(e, [&](const ExprNode& x) -> ExprPtr {
    if (x.kind != ExprKind::Scalar || x.subquery_node < 0) return nullptr;
    ExprNode s = x;
    s.subquery = static_cast<int32_t>(n.inputs.size());
    n.inputs.push_back(x.subquery_node);
    s.subquery_node = -1;
    return make_expr(std::move(s));
  });
}
void attach_subqueries(Node& n) {
  auto fix = [&](Expr& e) {
    if (e.valid()) e = Expr(attach(e.ptr(), n));
  };
  fix(n.predicate);
  for (auto& ne : n.exprs) fix(ne.expr);
  for (auto& a : n.aggregates) fix(a.arg);
}
}  // namespace

Rel ProgramBuilder::add(Node n) {
  return Rel(this, program_.add(std::move(n)));
}

Rel ProgramBuilder::input(std::string name, std::vector<Attribute> attributes, size_t key_size,
                          std::vector<SortSpec> sorted_by, std::source_location loc) {
  Node n = make_node(OpKind::Input, loc);
  if (main_ != nullptr)
    fail(n.loc, "input declared inside a fixpoint's rules",
         "declare it in the main program and bring it in with FixpointBuilder::use()");
  n.name = std::move(name);
  n.declared = Schema{std::move(attributes), key_size};
  for (auto& k : sorted_by)
    n.sort_keys.push_back(SortKey{std::move(k.attr), k.descending, n.loc, -1});
  return add(std::move(n));
}

void ProgramBuilder::output(const Rel& rel, std::string name, std::source_location loc) {
  Node n = make_node(OpKind::Output, loc);
  if (main_ != nullptr)
    fail(n.loc, "output inside a fixpoint's rules",
         "take the relation with FixpointBuilder::result() and output that");
  n.name = std::move(name);
  n.inputs = {input_id(rel, n.loc)};
  add(std::move(n));
}

NodeId ProgramBuilder::input_id(const Rel& rel, const SourceLoc& loc) const {
  const ProgramBuilder* other = rel.builder();
  if (other == this) return rel.id();
  if (other == nullptr) return kForeignNode;
  if (main_ != nullptr && other == main_)
    fail(loc, "a relation of the main program is used in a fixpoint rule",
         "bring it into the rules with FixpointBuilder::use()");
  if (main_ == nullptr && other->main_ == this)
    fail(loc, "a relation of a fixpoint's rules is used in the main program",
         "use FixpointBuilder::result() for the recursive relation in the main program");
  if (main_ != nullptr && other->main_ != nullptr)
    fail(loc, "a relation of another fixpoint's rules is used in this fixpoint's rules",
         "take the other fixpoint's result() in the main program and use() it here");
  return kForeignNode;
}

// Appends a node whose inputs are this relation and optionally `right`.
static Rel chain(const Rel& self, Node n, const Rel* right = nullptr) {
  ProgramBuilder* b = self.builder();
  n.inputs = {self.id()};
  if (right) n.inputs.push_back(b->input_id(*right, n.loc));
  attach_subqueries(n);
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
Rel Rel::union_all(const Rel& r, std::source_location loc) const {
  return binary(*this, OpKind::UnionAll, r, loc);
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

// ------------------------------------------------------------------ fixpoint

FixpointBuilder ProgramBuilder::fixpoint(int64_t max_iterations, std::source_location loc) {
  SourceLoc at = SourceLoc::from(loc);
  if (main_ != nullptr)
    fail(at, "fixpoints do not nest",
         "define the inner fixpoint in the main program and use() its result() here");
  auto state = std::make_shared<dsl_detail::FixpointState>();
  state->main = this;
  state->rules.main_ = this;
  state->loc = at;
  state->max_iterations = max_iterations;
  fixpoints_.push_back(state);
  return FixpointBuilder(std::move(state));
}

namespace {
void require_open(const dsl_detail::FixpointState& s, const SourceLoc& at, std::string_view what) {
  if (s.def)
    fail(at, fmt::format("{} after the fixpoint was closed", what),
         fmt::format("the first result() (at {}) closes the fixpoint: add its rules before",
                     s.closed_at.str()));
}

bool is_read_name(const dsl_detail::FixpointState& s, const std::string& name) {
  auto named = [&](const dsl_detail::FixpointState::Read& r) { return r.name == name; };
  return std::any_of(s.recursive.begin(), s.recursive.end(), named) ||
         std::any_of(s.outer.begin(), s.outer.end(), named);
}
}  // namespace

Rel FixpointBuilder::use(const Rel& outer, std::string name, std::source_location loc) {
  dsl_detail::FixpointState& s = *state_;
  SourceLoc at = SourceLoc::from(loc);
  require_open(s, at, "use()");
  if (outer.builder() != s.main)
    fail(at, "use() takes a relation of the main program",
         outer.builder() == &s.rules ? "this relation is already in the fixpoint's rules"
                                     : "pass a Rel made by the ProgramBuilder that started the "
                                       "fixpoint");
  for (size_t i = 0; i < s.outer.size(); ++i)
    if (s.outer_main[i] == outer.id()) return Rel(&s.rules, s.outer[i].node);
  if (name.empty()) {
    const Node& n = s.main->program().node(outer.id());
    name = n.kind == OpKind::Input ? n.name : fmt::format("outer{}", s.outer.size());
  }
  if (is_read_name(s, name))
    fail(at, fmt::format("'{}' already names a relation read by this fixpoint", name),
         "give this outer relation another name: use(rel, \"name\")");
  Node in = make_node(OpKind::Input, loc);
  in.name = name;
  NodeId id = s.rules.program().add(std::move(in));
  s.outer.push_back({std::move(name), id, at});
  s.outer_main.push_back(outer.id());
  return Rel(&s.rules, id);
}

Rel FixpointBuilder::relation(const std::string& name, std::source_location loc) {
  dsl_detail::FixpointState& s = *state_;
  SourceLoc at = SourceLoc::from(loc);
  require_open(s, at, "relation()");
  for (const auto& r : s.recursive)
    if (r.name == name) return Rel(&s.rules, r.node);
  if (is_read_name(s, name))
    fail(at, fmt::format("'{}' already names an outer relation of this fixpoint", name),
         "give the recursive relation another name");
  Node in = make_node(OpKind::Input, loc);
  in.name = name;
  NodeId id = s.rules.program().add(std::move(in));
  s.recursive.push_back({name, id, at});
  return Rel(&s.rules, id);
}

namespace {
// The name of the recursive relation `r` stands for (a Rel from relation()).
const std::string& recursive_name(const dsl_detail::FixpointState& s, const Rel& r,
                                  const SourceLoc& at, std::string_view call) {
  if (r.builder() == &s.rules)
    for (const auto& rec : s.recursive)
      if (rec.node == r.id()) return rec.name;
  fail(at, fmt::format("{} takes a recursive relation of this fixpoint", call),
       "pass the Rel returned by FixpointBuilder::relation()");
}
}  // namespace

void FixpointBuilder::rule(const Rel& relation, const Rel& body, std::source_location loc) {
  dsl_detail::FixpointState& s = *state_;
  SourceLoc at = SourceLoc::from(loc);
  require_open(s, at, "rule()");
  const std::string& name = recursive_name(s, relation, at, "rule()");
  if (body.builder() != &s.rules) {
    if (body.builder() == s.main)
      fail(at, "the body of a fixpoint rule is a relation of the main program",
           "build it from relations in the rules: FixpointBuilder::use() brings one in");
    fail(at, "the body of a fixpoint rule is not a relation of its rules",
         "build it from FixpointBuilder::relation() and use() Rels");
  }
  if (std::find(s.names.begin(), s.names.end(), name) == s.names.end()) {
    s.names.push_back(name);
    s.first_rule.push_back(at);
  }
  Node out = make_node(OpKind::Output, loc);
  out.name = name;
  out.inputs = {body.id()};
  s.rules.program().add(std::move(out));
}

Rel FixpointBuilder::result(const Rel& relation, std::source_location loc) {
  return result(recursive_name(*state_, relation, SourceLoc::from(loc), "result()"), loc);
}

Rel FixpointBuilder::result(const std::string& name, std::source_location loc) {
  dsl_detail::FixpointState& s = *state_;
  SourceLoc at = SourceLoc::from(loc);
  if (!s.def) {
    if (s.names.empty())
      fail(at, "result() of a fixpoint without rules",
           "add its rules with FixpointBuilder::rule() first");
    for (const auto& r : s.recursive)
      if (std::find(s.names.begin(), s.names.end(), r.name) == s.names.end())
        fail(r.loc, fmt::format("recursive relation '{}' has no rule", r.name),
             "add one with FixpointBuilder::rule() before result()");
    auto def = std::make_shared<FixpointDef>();
    def->names = s.names;
    def->rules = std::make_shared<const Program>(s.rules.program());
    for (const auto& o : s.outer) def->outer.push_back(o.name);
    def->max_iterations = s.max_iterations;
    def->loc = s.loc;
    s.def = std::move(def);
    s.closed_at = at;
  }
  auto it = std::find(s.names.begin(), s.names.end(), name);
  if (it == s.names.end())
    fail(at, fmt::format("'{}' is not a recursive relation of this fixpoint", name),
         fmt::format("its relations are: {}", fmt::join(s.names, ", ")));
  if (auto r = s.results.find(name); r != s.results.end()) return Rel(s.main, r->second);
  size_t index = static_cast<size_t>(it - s.names.begin());
  Node n;
  n.kind = OpKind::Fixpoint;
  n.loc = s.first_rule[index];
  n.name = name;
  n.fixpoint = s.def;
  n.fixpoint_index = static_cast<int32_t>(index);
  n.inputs = s.outer_main;
  Rel rel = s.main->add(std::move(n));
  s.results.emplace(name, rel.id());
  return rel;
}

}  // namespace ranc
