// The fixpoint group in the IR (ir/program.h, RECURSION): checking (schemas inferred from
// the base rules, monotonicity, mismatched rules) and the CPU reference's naive evaluation,
// against hand-computed closures. Programs are built as IR here, independent of the front
// ends (their own tests cover the `.ra` syntax and the DSL).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "ranc/ir/program.h"
#include "ranc/ra_ops/ra_ops.h"

namespace ranc {
namespace {

using Pairs = std::set<std::pair<int32_t, int32_t>>;

Schema pair_schema(std::string a = "src", std::string b = "dst") {
  return Schema{{{std::move(a), Type::I32}, {std::move(b), Type::I32}}, 0};
}

NodeId add(Program& p, OpKind kind, std::vector<NodeId> inputs, std::string name = {}) {
  Node n;
  n.kind = kind;
  n.inputs = std::move(inputs);
  n.name = std::move(name);
  return p.add(std::move(n));
}
NodeId input(Program& p, std::string name, Schema s = {}) {
  Node n;
  n.kind = OpKind::Input;
  n.name = std::move(name);
  n.declared = std::move(s);
  return p.add(std::move(n));
}
NodeId project(Program& p, NodeId in, std::vector<std::pair<std::string, std::string>> as) {
  Node n;
  n.kind = OpKind::Project;
  n.inputs = {in};
  for (auto& [from, to] : as) n.exprs.push_back(NamedExpr{to, col(from), {}});
  return p.add(std::move(n));
}
NodeId join(Program& p, NodeId l, NodeId r, std::string lk, std::string rk,
            JoinKind kind = JoinKind::Inner) {
  Node n;
  n.kind = OpKind::Join;
  n.inputs = {l, r};
  n.left_keys = {std::move(lk)};
  n.right_keys = {std::move(rk)};
  n.join_kind = kind;
  return p.add(std::move(n));
}

// tc = edges; tc = tc |> join (edges renamed mid, to) on dst = mid |> project src, to as dst.
std::shared_ptr<FixpointDef> transitive_closure(int64_t max_iterations = 0) {
  auto rules = std::make_shared<Program>();
  NodeId e = input(*rules, "edges");
  NodeId tc = input(*rules, "tc");
  add(*rules, OpKind::Output, {e}, "tc");
  NodeId step = join(*rules, tc, project(*rules, e, {{"src", "mid"}, {"dst", "to"}}), "dst", "mid");
  add(*rules, OpKind::Output, {project(*rules, step, {{"src", "src"}, {"to", "dst"}})}, "tc");
  auto def = std::make_shared<FixpointDef>();
  def->names = {"tc"};
  def->rules = rules;
  def->outer = {"edges"};
  def->max_iterations = max_iterations;
  return def;
}

Program with_fixpoint(std::shared_ptr<const FixpointDef> def, const Schema& edges_schema,
                      std::vector<std::string> outputs) {
  Program p;
  std::vector<NodeId> outer;
  for (const std::string& name : def->outer) outer.push_back(input(p, name, edges_schema));
  for (size_t i = 0; i < def->names.size(); ++i) {
    Node n;
    n.kind = OpKind::Fixpoint;
    n.name = def->names[i];
    n.fixpoint = def;
    n.fixpoint_index = static_cast<int32_t>(i);
    n.inputs = outer;
    NodeId f = p.add(std::move(n));
    if (std::find(outputs.begin(), outputs.end(), def->names[i]) != outputs.end())
      add(p, OpKind::Output, {f}, def->names[i]);
  }
  return p;
}

HostRelation edges_of(const Pairs& pairs) {
  HostRelation r(pair_schema());
  for (auto [a, b] : pairs) r.append_row({Value::i32(a), Value::i32(b)});
  return r;
}

Pairs pairs_of(const HostRelation& r) {
  Pairs out;
  for (size_t i = 0; i < r.num_rows(); ++i)
    out.insert({r.column(0).get(i).as_i32(), r.column(1).get(i).as_i32()});
  EXPECT_EQ(out.size(), r.num_rows()) << "a fixpoint relation has duplicate tuples";
  return out;
}

// The closure by repeated squaring-free iteration, written independently of ranc.
Pairs closure(const Pairs& edges, int64_t max_iterations = 0) {
  Pairs tc = edges;
  for (int64_t k = 0; max_iterations == 0 || k < max_iterations; ++k) {
    Pairs next = edges;
    for (auto [a, b] : tc)
      for (auto [c, d] : edges)
        if (b == c) next.insert({a, d});
    for (auto pr : tc) next.insert(pr);
    if (next == tc) break;
    tc = next;
  }
  return tc;
}

Pairs run_tc(const Pairs& edges, int64_t max_iterations = 0) {
  Program checked = check(with_fixpoint(transitive_closure(max_iterations), pair_schema(), {"tc"}));
  auto out = execute_reference(checked, {{"edges", edges_of(edges)}});
  return pairs_of(out.at(0));
}

TEST(Fixpoint, TransitiveClosureOfSmallGraphs) {
  const std::vector<Pairs> graphs = {
      {},                                        // no edges
      {{1, 2}, {2, 3}, {3, 4}, {4, 5}},          // a chain
      {{1, 2}, {2, 3}, {3, 1}},                  // a cycle
      {{7, 7}},                                  // a self loop
      {{1, 2}, {2, 1}, {5, 6}, {6, 7}, {9, 9}},  // disconnected parts
      {{1, 2}, {1, 2}, {2, 3}},                  // a duplicate edge (bags in, set out)
  };
  for (const Pairs& g : graphs) EXPECT_EQ(run_tc(g), closure(g));
  // Hand-computed: the chain's closure has 4 + 3 + 2 + 1 pairs.
  EXPECT_EQ(run_tc({{1, 2}, {2, 3}, {3, 4}, {4, 5}}).size(), 10u);
  EXPECT_EQ(run_tc({{1, 2}, {2, 3}, {3, 1}}),
            (Pairs{{1, 1}, {1, 2}, {1, 3}, {2, 1}, {2, 2}, {2, 3}, {3, 1}, {3, 2}, {3, 3}}));
}

TEST(Fixpoint, IterationLimitStopsAtRk) {
  const Pairs chain = {{1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}};
  // R^0 = edges (paths of length 1); R^k holds the paths of length <= k + 1.
  EXPECT_EQ(run_tc(chain, 1).size(), 5u + 4u);
  EXPECT_EQ(run_tc(chain, 2).size(), 5u + 4u + 3u);
  EXPECT_EQ(run_tc(chain, 100), closure(chain));
}

TEST(Fixpoint, CheckInfersSchemasAndSharesTheGroup) {
  Program checked = check(with_fixpoint(transitive_closure(), pair_schema(), {"tc"}));
  const Node* fp = nullptr;
  for (const Node& n : checked.nodes())
    if (n.kind == OpKind::Fixpoint) fp = &n;
  ASSERT_NE(fp, nullptr);
  EXPECT_EQ(fp->schema.str(), pair_schema().str());
  ASSERT_NE(fp->fixpoint->checked_rules, nullptr);
  EXPECT_EQ(fp->fixpoint->rule_target, (std::vector<int32_t>{0, 0}));
}

// Mutual recursion: even/odd path lengths from node 1 over a chain.
TEST(Fixpoint, MutualRecursion) {
  auto rules = std::make_shared<Program>();
  NodeId e = input(*rules, "edges");
  NodeId even = input(*rules, "even");
  NodeId odd = input(*rules, "odd");
  Node start;
  start.kind = OpKind::Select;
  start.inputs = {e};
  start.predicate = make_binary(BinaryOp::Eq, col("src"), lit(Value::i32(1)));
  NodeId s = rules->add(std::move(start));
  add(*rules, OpKind::Output, {s}, "odd");  // one step from 1
  NodeId ren = project(*rules, e, {{"src", "mid"}, {"dst", "to"}});
  add(*rules, OpKind::Output,
      {project(*rules, join(*rules, odd, ren, "dst", "mid"), {{"src", "src"}, {"to", "dst"}})},
      "even");
  add(*rules, OpKind::Output,
      {project(*rules, join(*rules, even, ren, "dst", "mid"), {{"src", "src"}, {"to", "dst"}})},
      "odd");
  (void)even;
  auto def = std::make_shared<FixpointDef>();
  def->names = {"even", "odd"};  // even's schema comes from odd's base rule
  def->rules = rules;
  def->outer = {"edges"};
  Program checked = check(with_fixpoint(def, pair_schema(), {"even", "odd"}));
  auto out = execute_reference(checked, {{"edges", edges_of({{1, 2}, {2, 3}, {3, 4}, {4, 5}})}});
  EXPECT_EQ(pairs_of(out.at(0)), (Pairs{{1, 3}, {1, 5}}));
  EXPECT_EQ(pairs_of(out.at(1)), (Pairs{{1, 2}, {1, 4}}));
}

std::string check_error(const Program& p) {
  try {
    check(p);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(Fixpoint, ErrorsAreLocatedAndExplained) {
  // No base case: the only rule reads the relation itself.
  {
    auto rules = std::make_shared<Program>();
    NodeId r = input(*rules, "r");
    add(*rules, OpKind::Output, {add(*rules, OpKind::Distinct, {r})}, "r");
    auto def = std::make_shared<FixpointDef>();
    def->names = {"r"};
    def->rules = rules;
    EXPECT_NE(check_error(with_fixpoint(def, pair_schema(), {"r"})).find("no base case"),
              std::string::npos);
  }
  // A reduce on the recursive path.
  {
    auto def = transitive_closure();
    auto rules = std::make_shared<Program>(*def->rules);
    NodeId tc = 1;
    Node red;
    red.kind = OpKind::Reduce;
    red.inputs = {tc};
    red.group_keys = {"src", "dst"};
    add(*rules, OpKind::Output, {rules->add(std::move(red))}, "tc");
    def->rules = rules;
    std::string err = check_error(with_fixpoint(def, pair_schema(), {"tc"}));
    EXPECT_NE(err.find("a reduce is on a recursive path"), std::string::npos) << err;
  }
  // The right input of an anti join on the recursive path; the left is fine.
  {
    auto def = transitive_closure();
    auto rules = std::make_shared<Program>(*def->rules);
    add(*rules, OpKind::Output, {join(*rules, 0, 1, "src", "src", JoinKind::Anti)}, "tc");
    def->rules = rules;
    std::string err = check_error(with_fixpoint(def, pair_schema(), {"tc"}));
    EXPECT_NE(err.find("right input of an anti join"), std::string::npos) << err;
    auto ok = transitive_closure();
    auto rules2 = std::make_shared<Program>(*ok->rules);
    add(*rules2, OpKind::Output, {join(*rules2, 1, 0, "src", "src", JoinKind::Anti)}, "tc");
    ok->rules = rules2;
    EXPECT_EQ(check_error(with_fixpoint(ok, pair_schema(), {"tc"})), "");
  }
  // Rules of one relation with different types.
  {
    auto def = transitive_closure();
    auto rules = std::make_shared<Program>(*def->rules);
    Node wide;
    wide.kind = OpKind::Project;
    wide.inputs = {0};
    wide.exprs = {NamedExpr{"src", col("src"), {}},
                  NamedExpr{"dst", cast(col("dst"), Type::I64), {}}};
    add(*rules, OpKind::Output, {rules->add(std::move(wide))}, "tc");
    def->rules = rules;
    std::string err = check_error(with_fixpoint(def, pair_schema(), {"tc"}));
    EXPECT_NE(err.find("this rule of 'tc' gives (src i32, dst i64)"), std::string::npos) << err;
  }
  // A rule reading a relation that is neither recursive nor outer.
  {
    auto def = transitive_closure();
    auto rules = std::make_shared<Program>(*def->rules);
    add(*rules, OpKind::Output, {input(*rules, "nowhere")}, "tc");
    def->rules = rules;
    std::string err = check_error(with_fixpoint(def, pair_schema(), {"tc"}));
    EXPECT_NE(err.find("'nowhere'"), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace ranc
