// prune_attributes (no GPU): which input attributes each operator keeps alive, the
// key and declared order of a narrowed input, and the oracle check that the pruned
// program gives the unpruned program's results on the CPU reference executor, both
// from relations narrowed to the kept attributes and from the full relations.
#include "ranc/passes/prune_attributes.h"

#include <gtest/gtest.h>

#include "ranc/dsl.h"
#include "ranc/io/csv.h"
#include "ranc/passes/pass_runner.h"
#include "ranc/ra_ops/ra_ops.h"

namespace ranc {
namespace {

using passes::InputPruning;

// Deterministic data: small value ranges so that joins match and groups repeat.
HostRelation data(const Schema& s, size_t rows, uint32_t seed) {
  HostRelation r(s);
  uint32_t x = seed * 2654435761u + 1;
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  };
  for (size_t i = 0; i < rows; ++i)
    for (size_t c = 0; c < s.size(); ++c) {
      int32_t v = static_cast<int32_t>(next() % 7);
      switch (s[c].type) {
        case Type::I32:
          r.column(c).append(Value::i32(v));
          break;
        case Type::I64:
          r.column(c).append(Value::i64(v));
          break;
        case Type::F64:
          r.column(c).append(Value::f64(v * 0.5));
          break;
        case Type::String:
          r.column(c).append(Value::string(std::string(1, static_cast<char>('a' + v))));
          break;
        default:
          ADD_FAILURE() << "type not used here";
      }
    }
  return r;
}

HostRelation narrow(const HostRelation& full, const Schema& kept) {
  HostRelation r(kept);
  for (size_t i = 0; i < kept.size(); ++i)
    r.column(i) = full.column(*full.schema().find(kept[i].name));
  return r;
}

std::string kept_names(const std::vector<InputPruning>& rep, const std::string& rel) {
  for (const auto& r : rep)
    if (r.relation == rel) {
      std::string s;
      for (const auto& a : r.kept.attributes) s += (s.empty() ? "" : ",") + a.name;
      return s;
    }
  return "<no input " + rel + ">";
}

// Prunes, then runs both programs on the reference: results must be equal. Returns
// the report.
std::vector<InputPruning> prune_and_compare(const Program& checked) {
  std::vector<InputPruning> rep;
  Program pruned = passes::prune_attributes(checked, &rep);
  EXPECT_TRUE(pruned.checked());
  std::vector<std::pair<std::string, HostRelation>> full, narrowed;
  uint32_t seed = 1;
  for (const auto& r : rep) {
    full.emplace_back(r.relation, data(r.declared, 40, seed++));
    narrowed.emplace_back(r.relation, narrow(full.back().second, r.kept));
  }
  auto want = execute_reference(checked, full);
  auto got = execute_reference(pruned, narrowed);
  auto got_full = execute_reference(pruned, full);  // a wider bound relation is fine
  EXPECT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    EXPECT_EQ(want[i].schema(), got[i].schema());
    EXPECT_EQ(to_csv_string(want[i]), to_csv_string(got[i]));
    EXPECT_EQ(to_csv_string(want[i]), to_csv_string(got_full[i]));
  }
  return rep;
}

const std::vector<Attribute> kWide = {
    {"a", Type::I32}, {"b", Type::I64}, {"c", Type::F64}, {"d", Type::String}, {"e", Type::I32}};

// select keeps its predicate's attributes; project keeps what its expressions read.
TEST(PruneAttributes, SelectProjectKeepWhatTheyRead) {
  ProgramBuilder b;
  auto r = b.input("r", kWide);
  b.output(r.select(col("b") > 2).project({as(col("a") + col("e"), "s")}), "o");
  auto rep = prune_and_compare(b.check());
  EXPECT_EQ(kept_names(rep, "r"), "a,b,e");
  EXPECT_EQ(passes::print_pruning(rep), "r: 3 of 5 attributes (a, b, e)\n");
}

// An output keeps every attribute of what it outputs, through selects and limits.
TEST(PruneAttributes, OutputKeepsEverything) {
  ProgramBuilder b;
  auto r = b.input("r", kWide);
  b.output(r.select(col("b") > 2).limit(5), "o");
  EXPECT_EQ(kept_names(prune_and_compare(b.check()), "r"), "a,b,c,d,e");
}

// Sort breaks ties by every attribute, and that decides what a limit keeps: all stay.
TEST(PruneAttributes, SortKeepsEveryAttribute) {
  ProgramBuilder b;
  auto r = b.input("r", kWide);
  b.output(r.sort({"a"}).limit(3).project({"c"}), "o");
  EXPECT_EQ(kept_names(prune_and_compare(b.check()), "r"), "a,b,c,d,e");
}

// Set operations and distinct compare whole tuples.
TEST(PruneAttributes, SetOperationsAndDistinctKeepEverything) {
  ProgramBuilder b;
  auto r = b.input("r", {{"a", Type::I32}, {"b", Type::I32}});
  auto s = b.input("s", {{"a", Type::I32}, {"b", Type::I32}});
  b.output(r.union_with(s).project({"a"}), "u");
  auto t = b.input("t", {{"x", Type::I32}, {"y", Type::I32}});
  b.output(t.distinct().project({"x"}), "d");
  auto rep = prune_and_compare(b.check());
  EXPECT_EQ(kept_names(rep, "r"), "a,b");
  EXPECT_EQ(kept_names(rep, "s"), "a,b");
  EXPECT_EQ(kept_names(rep, "t"), "x,y");
}

// A join keeps both keys, the residual's attributes and what its consumers read, on
// the side each comes from.
TEST(PruneAttributes, JoinKeepsKeysResidualAndUsedSides) {
  ProgramBuilder b;
  auto l = b.input("l", {{"k", Type::I32}, {"x", Type::I32}, {"y", Type::F64}, {"z", Type::String}});
  auto r = b.input("r", {{"k2", Type::I32}, {"p", Type::I32}, {"q", Type::I64}, {"w", Type::I32}});
  b.output(l.join(r, {"k"}, {"k2"}, JoinKind::Inner, col("x") < col("p")).project({"y", "q"}), "o");
  auto rep = prune_and_compare(b.check());
  EXPECT_EQ(kept_names(rep, "l"), "k,x,y");
  EXPECT_EQ(kept_names(rep, "r"), "k2,p,q");
}

// A semi join outputs the left side only: the right keeps its key and the residual's.
TEST(PruneAttributes, SemiJoinRightKeepsKeyAndResidual) {
  ProgramBuilder b;
  auto l = b.input("l", {{"k", Type::I32}, {"x", Type::I32}, {"y", Type::F64}});
  auto r = b.input("r", {{"k2", Type::I32}, {"p", Type::I32}, {"q", Type::I64}});
  b.output(l.semi_join(r, {"k"}, {"k2"}, col("q") > int64_t{3}).project({"y"}), "o");
  auto rep = prune_and_compare(b.check());
  EXPECT_EQ(kept_names(rep, "l"), "k,y");
  EXPECT_EQ(kept_names(rep, "r"), "k2,q");
}

// A product splits what its consumers read between its sides.
TEST(PruneAttributes, ProductSplitsLiveAttributes) {
  ProgramBuilder b;
  auto l = b.input("l", {{"a", Type::I32}, {"b", Type::I32}});
  auto r = b.input("r", {{"c", Type::I32}, {"d", Type::F64}});
  b.output(l.product(r).project({as(col("a") * col("d"), "ad")}), "o");
  auto rep = prune_and_compare(b.check());
  EXPECT_EQ(kept_names(rep, "l"), "a");
  EXPECT_EQ(kept_names(rep, "r"), "d");
}

// reduce keeps its group keys and aggregate arguments; count() reads nothing, so a
// relation only counted keeps its cheapest attribute (not a string).
TEST(PruneAttributes, ReduceAndCountOnly) {
  ProgramBuilder b;
  auto r = b.input("r", kWide);
  b.output(r.reduce({"d"}, {sum(col("c"), "s"), count("n")}), "g");
  auto t = b.input("t", {{"s", Type::String}, {"f", Type::F64}, {"i", Type::I32}});
  b.output(t.reduce({}, {count("n")}), "n");
  auto rep = prune_and_compare(b.check());
  EXPECT_EQ(kept_names(rep, "r"), "c,d");
  EXPECT_EQ(kept_names(rep, "t"), "i");
}

// The key is the longest kept prefix of the declared key; the declared order is cut
// before its first attribute that is not kept.
TEST(PruneAttributes, KeyAndDeclaredOrderAreCut) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k1", Type::I32}, {"k2", Type::I32}, {"v", Type::I64}}, 2,
                   {"k1", "k2", "v"});
  b.output(r.reduce({"k1"}, {sum(col("v"), "s")}), "o");
  Program checked = b.check();
  std::vector<InputPruning> rep;
  Program pruned = passes::prune_attributes(checked, &rep);
  ASSERT_EQ(rep.size(), 1u);
  EXPECT_EQ(rep[0].kept.str(), Schema({{{"k1", Type::I32}, {"v", Type::I64}}, 1}).str());
  const Node& in = pruned.node(pruned.inputs()[0]);
  ASSERT_EQ(in.sort_keys.size(), 1u);
  EXPECT_EQ(in.sort_keys[0].attr, "k1");
}

// Nothing to prune: the same program comes back, and the pass can be switched off.
TEST(PruneAttributes, NothingToPruneAndSwitch) {
  ProgramBuilder b;
  auto r = b.input("r", {{"a", Type::I32}, {"b", Type::I32}});
  b.output(r.select(col("a") > 1).project({"a"}), "o");
  Program checked = b.check();
  auto on = passes::run_pipeline(checked, {});
  ASSERT_EQ(on.plan.inputs.size(), 1u);
  EXPECT_EQ(on.plan.inputs[0].schema.size(), 1u);
  EXPECT_EQ(kept_names(on.inputs, "r"), "a");
  auto off = passes::run_pipeline(checked, {.disabled_passes = {"prune_attributes"}});
  EXPECT_TRUE(off.inputs.empty());
  EXPECT_EQ(off.plan.inputs[0].schema.size(), 2u);
  EXPECT_FALSE(passes::pass_enabled("prune_attributes", {.disabled_passes = {"prune_attributes"}}));
  EXPECT_TRUE(passes::pass_enabled("prune_attributes", {}));
}

// A bound relation missing a declared attribute is still a schema mismatch.
TEST(PruneAttributes, MissingAttributeIsStillAnError) {
  ProgramBuilder b;
  auto r = b.input("r", {{"a", Type::I32}, {"b", Type::I32}});
  b.output(r.project({"a"}), "o");
  Program pruned = passes::prune_attributes(b.check());
  HostRelation wrong = data(Schema{{{"b", Type::I32}}, 0}, 3, 1);
  try {
    execute_reference(pruned, {{"r", wrong}});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::SchemaMismatch);
  }
}

}  // namespace
}  // namespace ranc
