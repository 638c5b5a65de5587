// The C++ DSL's fixpoint builder: the FixpointDef and Fixpoint nodes it builds (the
// structure ir/program.h's RECURSION section specifies), the errors it raises at the
// call when a Rel crosses the boundary of a fixpoint's rules, and its source locations.
#include <gtest/gtest.h>

#include <set>

#include <fmt/format.h>

#include "ranc/dsl.h"
#include "ranc/ra_ops/ra_ops.h"

namespace ranc {
namespace {

const std::string kThisFile = SourceLoc::from(std::source_location::current()).file;

std::vector<std::string> names_of(const Program& p, const std::vector<NodeId>& ids) {
  std::vector<std::string> out;
  for (NodeId id : ids) out.push_back(p.node(id).name);
  return out;
}

// The first diagnostic f() throws, or a failure.
template <typename F>
Diagnostic error_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.first();
  }
  ADD_FAILURE() << "expected a UserError";
  return Diagnostic{ErrorKind::Syntax, "<none>", {}, {}};
}

// An error raised by the DSL call made with the location `at`.
void expect_error(const Diagnostic& d, const std::source_location& at, const std::string& message,
                  const std::string& hint_part = {}) {
  EXPECT_EQ(d.kind, ErrorKind::InvalidGraph) << d.str();
  EXPECT_EQ(d.loc, SourceLoc::from(at)) << d.str();
  EXPECT_EQ(d.message, message);
  EXPECT_NE(d.hint.find(hint_part), std::string::npos) << d.hint;
}

std::vector<Attribute> pair_attrs() {
  return {{"src", Type::I32}, {"dst", Type::I32}};
}

// path = edges; path = path |> join (edges as mid, to) on dst = mid |> project src, to as dst
Rel extend(const Rel& path, const Rel& e) {
  return path.join(e.project({as(col("src"), "mid"), as(col("dst"), "to")}), {"dst"}, {"mid"})
      .project({"src", as(col("to"), "dst")});
}

TEST(DslFixpoint, BuildsTheDefAndOneNodePerResult) {
  ProgramBuilder b;
  Rel edges = b.input("edges", pair_attrs());
  uint32_t fp_line = __LINE__ + 1;
  FixpointBuilder fp = b.fixpoint(7);
  uint32_t use_line = __LINE__ + 1;
  Rel e = fp.use(edges);
  uint32_t rel_line = __LINE__ + 1;
  Rel path = fp.relation("path");
  uint32_t base_line = __LINE__ + 1;
  fp.rule(path, e);
  uint32_t step_line = __LINE__ + 1;
  fp.rule(path, extend(path, e));
  Rel tc = fp.result(path);
  b.output(tc, "tc");

  const Program& prog = b.program();
  EXPECT_EQ(prog.size(), 3u);  // edges, the fixpoint, the output: rules stay in the def
  const Node& n = prog.node(tc.id());
  EXPECT_EQ(tc.builder(), &b);
  EXPECT_EQ(n.kind, OpKind::Fixpoint);
  EXPECT_EQ(n.name, "path");
  EXPECT_EQ(n.fixpoint_index, 0);
  EXPECT_EQ(n.inputs, std::vector<NodeId>{edges.id()});
  EXPECT_EQ(n.loc.line, base_line);  // where the relation is first defined
  ASSERT_NE(n.fixpoint, nullptr);
  const FixpointDef& def = *n.fixpoint;
  EXPECT_EQ(def.names, std::vector<std::string>{"path"});
  EXPECT_EQ(def.outer, std::vector<std::string>{"edges"});
  EXPECT_EQ(def.max_iterations, 7);
  EXPECT_EQ(def.loc, (SourceLoc{kThisFile, fp_line, 0}));
  ASSERT_NE(def.rules, nullptr);
  const Program& rules = *def.rules;
  EXPECT_EQ(names_of(rules, rules.inputs()), (std::vector<std::string>{"edges", "path"}));
  EXPECT_EQ(rules.node(rules.inputs()[0]).loc.line, use_line);
  EXPECT_EQ(rules.node(rules.inputs()[1]).loc.line, rel_line);
  for (NodeId in : rules.inputs()) EXPECT_EQ(rules.node(in).declared.size(), 0u);
  std::vector<NodeId> outs = rules.outputs();
  EXPECT_EQ(names_of(rules, outs), (std::vector<std::string>{"path", "path"}));
  EXPECT_EQ(rules.node(outs[0]).loc.line, base_line);
  EXPECT_EQ(rules.node(outs[1]).loc.line, step_line);
  EXPECT_EQ(rules.node(outs[0]).inputs, std::vector<NodeId>{e.id()});
  EXPECT_EQ(describe_node(prog, n), "fixpoint path [1 of 1: path] (n0) max 7");
}

TEST(DslFixpoint, MutualRecursionSharesOneDef) {
  ProgramBuilder b;
  Rel zero = b.input("zero", {{"n", Type::I32}});
  Rel succ = b.input("succ", {{"a", Type::I32}, {"b", Type::I32}});
  FixpointBuilder fp = b.fixpoint();
  Rel z = fp.use(zero), s = fp.use(succ);
  Rel even = fp.relation("even"), odd = fp.relation("odd");
  auto next = [&](const Rel& r) { return r.join(s, {"n"}, {"a"}).project({as(col("b"), "n")}); };
  fp.rule(even, z);
  fp.rule(odd, next(even));
  fp.rule(even, next(odd));
  Rel e = fp.result("even");
  Rel o = fp.result(odd);
  EXPECT_EQ(fp.result(even).id(), e.id());  // one node per relation
  EXPECT_EQ(fp.result("odd").id(), o.id());
  const Node& en = b.program().node(e.id());
  const Node& on = b.program().node(o.id());
  EXPECT_EQ(en.fixpoint, on.fixpoint);
  EXPECT_EQ(en.fixpoint_index, 0);
  EXPECT_EQ(on.fixpoint_index, 1);
  EXPECT_EQ(on.inputs, (std::vector<NodeId>{zero.id(), succ.id()}));
  EXPECT_EQ(en.fixpoint->names, (std::vector<std::string>{"even", "odd"}));
  EXPECT_EQ(en.fixpoint->outer, (std::vector<std::string>{"zero", "succ"}));
  EXPECT_EQ(names_of(*en.fixpoint->rules, en.fixpoint->rules->outputs()),
            (std::vector<std::string>{"even", "odd", "even"}));
}

TEST(DslFixpoint, UseNamesOuterRelations) {
  ProgramBuilder b;
  Rel edges = b.input("edges", pair_attrs());
  Rel big = edges.select(col("src") > 10);
  FixpointBuilder fp = b.fixpoint();
  Rel e1 = fp.use(edges);
  EXPECT_EQ(fp.use(edges).id(), e1.id());  // one Input per outer relation
  Rel g = fp.use(big);
  Rel h = fp.use(edges.distinct(), "uniq");
  Rel path = fp.relation("path");
  EXPECT_EQ(fp.relation("path").id(), path.id());
  fp.rule(path, e1);
  fp.rule(path, g);
  fp.rule(path, h);
  Rel r = fp.result("path");
  const FixpointDef& def = *b.program().node(r.id()).fixpoint;
  EXPECT_EQ(def.outer, (std::vector<std::string>{"edges", "outer1", "uniq"}));
  EXPECT_EQ(b.program().node(r.id()).inputs.size(), 3u);
  EXPECT_EQ(b.program().node(r.id()).inputs[1], big.id());
}

// ------------------------------------------------- checked and run on the CPU reference

using Pairs = std::set<std::pair<int32_t, int32_t>>;

HostRelation pair_relation(const Pairs& pairs) {
  HostRelation r(Schema{pair_attrs(), 0});
  for (auto [a, b] : pairs) r.append_row({Value::i32(a), Value::i32(b)});
  return r;
}

Pairs pairs_of(const HostRelation& r) {
  Pairs out;
  for (size_t i = 0; i < r.num_rows(); ++i)
    out.insert({r.get(i, 0).as_i32(), r.get(i, 1).as_i32()});
  EXPECT_EQ(out.size(), r.num_rows()) << "duplicate tuples";
  return out;
}

TEST(DslFixpoint, TransitiveClosureOnTheCpuReference) {
  for (int64_t max : {0, 1}) {
    ProgramBuilder b;
    Rel edges = b.input("edges", pair_attrs());
    FixpointBuilder fp = b.fixpoint(max);
    Rel e = fp.use(edges);
    Rel path = fp.relation("path");
    fp.rule(path, e);
    fp.rule(path, extend(path, e));
    b.output(fp.result(path), "tc");
    auto out =
        execute_reference(b.check(), {{"edges", pair_relation({{1, 2}, {2, 3}, {3, 4}, {5, 5}})}});
    ASSERT_EQ(out.size(), 1u);
    if (max == 0)
      EXPECT_EQ(pairs_of(out[0]), (Pairs{{1, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4}, {5, 5}}));
    else  // the edges and one more round: paths of at most 2 edges
      EXPECT_EQ(pairs_of(out[0]), (Pairs{{1, 2}, {1, 3}, {2, 3}, {2, 4}, {3, 4}, {5, 5}}));
  }
}

// Two results of one group, an outer relation that is not an input, and the main
// program using a result after the fixpoint.
TEST(DslFixpoint, MutualRecursionOnTheCpuReference) {
  ProgramBuilder b;
  Rel edges = b.input("edges", pair_attrs());
  Rel forward = edges.select(col("src") < col("dst"));  // 1->2->3->4 of the edges below
  FixpointBuilder fp = b.fixpoint();
  Rel f = fp.use(forward);
  Rel even = fp.relation("even"), odd = fp.relation("odd");
  // even: pairs joined by an even number (> 0) of forward edges; odd: an odd number.
  fp.rule(odd, f);
  fp.rule(even, extend(odd, f));
  fp.rule(odd, extend(even, f));
  b.output(fp.result(even), "even");
  b.output(fp.result(odd).select(col("src") == 1), "odd_from_1");
  auto out = execute_reference(
      b.check(), {{"edges", pair_relation({{1, 2}, {2, 3}, {3, 4}, {4, 3}, {9, 9}})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(pairs_of(out[0]), (Pairs{{1, 3}, {2, 4}}));
  EXPECT_EQ(pairs_of(out[1]), (Pairs{{1, 2}, {1, 4}}));
}

TEST(DslFixpointErrors, MainRelationInARule) {
  ProgramBuilder b;
  Rel edges = b.input("edges", pair_attrs());
  FixpointBuilder fp = b.fixpoint();
  Rel path = fp.relation("path");
  auto here = std::source_location::current();
  expect_error(
      error_of([&] { (void)path.join(edges, {"dst"}, {"src"}, JoinKind::Inner, {}, here); }), here,
      "a relation of the main program is used in a fixpoint rule", "use()");
  expect_error(error_of([&] { fp.rule(path, edges, here); }), here,
               "the body of a fixpoint rule is a relation of the main program", "use()");
}

TEST(DslFixpointErrors, RulesRelationInTheMainProgram) {
  ProgramBuilder b;
  Rel edges = b.input("edges", pair_attrs());
  FixpointBuilder fp = b.fixpoint();
  Rel path = fp.relation("path");
  ProgramBuilder& rules = *path.builder();
  auto here = std::source_location::current();
  expect_error(error_of([&] { (void)edges.union_with(path, here); }), here,
               "a relation of a fixpoint's rules is used in the main program", "result()");
  expect_error(error_of([&] { b.output(path, "p", here); }), here,
               "a relation of a fixpoint's rules is used in the main program", "result()");
  expect_error(error_of([&] { rules.output(path, "p", here); }), here,
               "output inside a fixpoint's rules", "result()");
  expect_error(error_of([&] { (void)rules.input("x", pair_attrs(), 0, {}, here); }), here,
               "input declared inside a fixpoint's rules", "use()");
  expect_error(error_of([&] { (void)rules.fixpoint(0, here); }), here, "fixpoints do not nest");
  expect_error(error_of([&] { (void)fp.use(path, {}, here); }), here,
               "use() takes a relation of the main program", "already in the fixpoint's rules");
}

TEST(DslFixpointErrors, RelationsOfTwoFixpoints) {
  ProgramBuilder b;
  Rel edges = b.input("edges", pair_attrs());
  FixpointBuilder f1 = b.fixpoint(), f2 = b.fixpoint();
  Rel p1 = f1.relation("p"), p2 = f2.relation("p");
  auto here = std::source_location::current();
  expect_error(error_of([&] { (void)p1.product(p2, here); }), here,
               "a relation of another fixpoint's rules is used in this fixpoint's rules");
  expect_error(error_of([&] { f1.rule(p1, p2, here); }), here,
               "the body of a fixpoint rule is not a relation of its rules");
  Rel e1 = f1.use(edges);
  expect_error(error_of([&] { f1.rule(p2, e1, here); }), here,
               "rule() takes a recursive relation of this fixpoint", "relation()");
  expect_error(error_of([&] { f1.rule(e1, e1, here); }), here,
               "rule() takes a recursive relation of this fixpoint", "relation()");
}

TEST(DslFixpointErrors, ClosedByResult) {
  ProgramBuilder b;
  Rel edges = b.input("edges", pair_attrs());
  FixpointBuilder fp = b.fixpoint();
  Rel e = fp.use(edges);
  Rel path = fp.relation("path");
  fp.rule(path, e);
  uint32_t closed = __LINE__ + 1;
  (void)fp.result(path);
  auto here = std::source_location::current();
  Rel step = extend(path, e);  // building on the rules' Rels is still fine
  expect_error(error_of([&] { fp.rule(path, step, here); }), here,
               "rule() after the fixpoint was closed", fmt::format("{}:{}", kThisFile, closed));
  expect_error(error_of([&] { (void)fp.relation("q", here); }), here,
               "relation() after the fixpoint was closed");
  expect_error(error_of([&] { (void)fp.use(edges.distinct(), {}, here); }), here,
               "use() after the fixpoint was closed");
  expect_error(error_of([&] { (void)fp.result("nope", here); }), here,
               "'nope' is not a recursive relation of this fixpoint", "path");
}

TEST(DslFixpointErrors, IncompleteOrClashingDefinitions) {
  ProgramBuilder b;
  Rel edges = b.input("edges", pair_attrs());
  auto here = std::source_location::current();
  {
    FixpointBuilder fp = b.fixpoint();
    expect_error(error_of([&] { (void)fp.result("path", here); }), here,
                 "result() of a fixpoint without rules", "rule()");
  }
  {
    FixpointBuilder fp = b.fixpoint();
    Rel e = fp.use(edges);
    fp.rule(fp.relation("path"), e);
    (void)fp.relation("other", here);
    expect_error(error_of([&] { (void)fp.result("path"); }), here,
                 "recursive relation 'other' has no rule", "rule()");
  }
  {
    FixpointBuilder fp = b.fixpoint();
    (void)fp.use(edges);
    expect_error(error_of([&] { (void)fp.relation("edges", here); }), here,
                 "'edges' already names an outer relation of this fixpoint");
    (void)fp.relation("p");
    expect_error(error_of([&] { (void)fp.use(edges.distinct(), "p", here); }), here,
                 "'p' already names a relation read by this fixpoint");
  }
}

}  // namespace
}  // namespace ranc
