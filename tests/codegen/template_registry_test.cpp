// The template registry indexed from the built-in templates at build time
// (tools/template_indexer), and SkeletonCall's checks against it: every expectation below was
// read off the headers by hand (select.cuh, reduce.cuh, hash_join.cuh, contract.cuh).
#include <gtest/gtest.h>

#include <string>

#include "ranc/codegen/codegen.h"
#include "ranc/codegen/lowering.h"
#include "ranc/codegen/skeleton_call.h"
#include "ranc/codegen/template_registry.h"
#include "ranc/data/error.h"
#include "ranc/dsl.h"

namespace ranc::codegen {
namespace {

using registry::ParamKind;

const TemplateRegistry& reg() {
  return TemplateRegistry::built_in();
}

std::string sig_text(const registry::Signature& s) {
  std::string t = s.ret + "(";
  for (size_t k = 0; k < s.params.size(); ++k)
    t += (k ? ", " : "") + s.params[k].type +
         (s.params[k].name.empty() ? "" : " " + s.params[k].name);
  return t + ")";
}

// The message of the InternalError `f` throws (empty when it throws none).
template <class F>
std::string internal_error(F f) {
  try {
    f();
  } catch (const InternalError& e) {
    return e.what();
  }
  return "";
}

TEST(CanonicalType, SpacingAndReferences) {
  EXPECT_EQ(canonical_type("const State&"), "const State &");
  EXPECT_EQ(canonical_type(" long   long* "), "long long *");
  EXPECT_EQ(canonical_type("TempStorageT< typename Agg :: State >&"),
            "TempStorageT<typename Agg::State> &");
  EXPECT_EQ(canonical_type("unsigned int"), "unsigned int");
}

// Every skeleton the code generator instantiates is indexed, from the header that defines it.
TEST(TemplateRegistry, IndexesEverySkeletonTheGeneratorUses) {
  const std::pair<const char*, const char*> expected[] = {
      {"SelectAgent", "ranc/templates/select.cuh"},
      {"MapAgent", "ranc/templates/select.cuh"},
      {"ProductAgent", "ranc/templates/product.cuh"},
      {"MergePathAgent", "ranc/templates/merge_path.cuh"},
      {"SetOpAgent", "ranc/templates/set_ops.cuh"},
      {"JoinCountAgent", "ranc/templates/join.cuh"},
      {"JoinExpandAgent", "ranc/templates/join.cuh"},
      {"ReduceAgent", "ranc/templates/reduce.cuh"},
      {"ReduceFixupAgent", "ranc/templates/reduce.cuh"},
      {"GlobalReduceAgent", "ranc/templates/reduce.cuh"},
      {"GlobalReduceFinish", "ranc/templates/reduce.cuh"},
      {"HashJoinAgent", "ranc/templates/hash_join.cuh"},
      {"HashGroupAgent", "ranc/templates/hash_reduce.cuh"}};
  for (const auto& [name, header] : expected) {
    const registry::Skeleton* s = reg().skeleton(name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_EQ(s->header, header) << name;
    EXPECT_FALSE(s->entries.empty()) << name;
  }
  // Building blocks without a Hooks contract are not skeletons.
  EXPECT_EQ(reg().skeleton("TilePrefix"), nullptr);
  EXPECT_EQ(reg().skeleton("MergeTile"), nullptr);
}

// SelectAgent<Policy>: TempStorage, hooks pred/emit, run<Mode> with its launch rule.
TEST(TemplateRegistry, SelectAgentContract) {
  const registry::Skeleton& s = *reg().skeleton("SelectAgent");
  ASSERT_EQ(s.tparams.size(), 1u);
  EXPECT_EQ(s.tparams[0].name, "Policy");
  EXPECT_EQ(s.tparams[0].kind, ParamKind::Policy);
  EXPECT_EQ(s.temp_storage, "TempStorage");
  EXPECT_TRUE(s.temp_storage_params.empty());
  EXPECT_TRUE(s.type_vars.empty());
  ASSERT_EQ(s.hooks.size(), 2u);
  EXPECT_EQ(sig_text(s.hook("pred")->call), "bool(long long row)");
  EXPECT_EQ(sig_text(s.hook("emit")->call), "void(long long row, long long out_row)");
  ASSERT_EQ(s.entries.size(), 1u);
  const registry::Entry& run = s.entries[0];
  EXPECT_EQ(run.name, "run");
  EXPECT_EQ(run.launch.grid, "tiles_exact");
  EXPECT_EQ(run.launch.items, "n");
  EXPECT_EQ(run.launch.block_threads, "Policy::block_threads");
  ASSERT_EQ(run.tparams.size(), 3u);
  EXPECT_EQ(run.tparams[0].name, "Mode");
  EXPECT_EQ(run.tparams[0].kind, ParamKind::Value);
  EXPECT_EQ(run.tparams[0].value_type, "SelectMode");
  EXPECT_TRUE(run.tparams[0].has_default);
  EXPECT_EQ(run.tparams[1].kind, ParamKind::Hook);
  EXPECT_EQ(run.tparams[2].kind, ParamKind::Hook);
  std::string params;
  for (const auto& p : run.params) params += p.name + ":" + p.type + (p.hook ? ":hook" : "") + " ";
  EXPECT_EQ(params,
            "temp:TempStorage & n:long long pred:Pred:hook emit:Emit:hook tile_state:void * "
            "out_count:long long * ");
}

// ReduceAgent: shared memory and the emit hook depend on the aggregate state the generator
// chooses (a type variable); agg is an object hook with member functions.
TEST(TemplateRegistry, ReduceAgentContract) {
  const registry::Skeleton& s = *reg().skeleton("ReduceAgent");
  EXPECT_EQ(s.temp_storage, "TempStorageT");
  EXPECT_EQ(s.temp_storage_params, std::vector<std::string>{"State"});
  EXPECT_EQ(s.type_vars, std::vector<std::string>{"State"});
  EXPECT_EQ(sig_text(s.hook("same")->call), "bool(long long i, long long j)");
  EXPECT_EQ(sig_text(s.hook("emit")->call),
            "void(long long group, long long first_row, const State & s)");
  EXPECT_EQ(sig_text(s.hook("stage")->call), "bool(long long lo, long long hi)");
  EXPECT_EQ(sig_text(s.hook("release")->call), "int(void * & mem)");
  const registry::Hook& agg = *s.hook("agg");
  ASSERT_TRUE(agg.object);
  ASSERT_EQ(agg.methods.size(), 3u);
  EXPECT_EQ(sig_text(*agg.method("init")), "State()");
  EXPECT_EQ(sig_text(*agg.method("accumulate")), "void(State & s, long long row)");
  EXPECT_EQ(sig_text(*agg.method("merge")), "void(State & a, const State & b)");
  ASSERT_EQ(agg.types.size(), 1u);
  EXPECT_EQ(agg.types[0], (std::pair<std::string, std::string>{"State", "State"}));
  EXPECT_EQ(s.entry("run")->launch.grid, "tiles_exact");
  // The fixup takes any block size: one thread per tile.
  const registry::Entry& fix = *reg().skeleton("ReduceFixupAgent")->entry("run");
  EXPECT_EQ(fix.launch.grid, "threads");
  EXPECT_EQ(fix.launch.block_threads, "0");
  EXPECT_EQ(reg().skeleton("GlobalReduceFinish")->entry("run")->launch.block_threads,
            "BlockThreads");
}

// HashJoinAgent<Policy, KeyT, TableSlots>: a value type, a defaulted value, two entries.
TEST(TemplateRegistry, HashJoinAgentContract) {
  const registry::Skeleton& s = *reg().skeleton("HashJoinAgent");
  ASSERT_EQ(s.tparams.size(), 3u);
  EXPECT_EQ(s.tparams[1].name, "KeyT");
  EXPECT_EQ(s.tparams[1].kind, ParamKind::Type);
  EXPECT_EQ(s.tparams[2].name, "TableSlots");
  EXPECT_EQ(s.tparams[2].kind, ParamKind::Value);
  EXPECT_EQ(s.tparams[2].value_type, "int");
  EXPECT_TRUE(s.tparams[2].has_default);
  EXPECT_EQ(sig_text(s.hook("residual")->call), "bool(long long i, long long j)");
  EXPECT_EQ(sig_text(s.hook("emit")->call), "void(long long i, long long j, long long out_row)");
  ASSERT_NE(s.entry("run"), nullptr);
  ASSERT_NE(s.entry("run_paged"), nullptr);
  // Private helpers are not entries.
  EXPECT_EQ(s.entry("drive"), nullptr);
  EXPECT_EQ(s.entry("run")->launch.grid, "tiles");
  EXPECT_EQ(s.entry("run")->launch.items, "nl");
  EXPECT_EQ(s.entry("run")->params[3].type, "const KeyT *");  // l_keys
  EXPECT_EQ(s.entry("run_paged")->tparams[0].name, "PageRows");
}

TEST(TemplateRegistry, StockHooks) {
  ASSERT_NE(reg().functor("NoResidual"), nullptr);
  EXPECT_EQ(sig_text(reg().functor("NoResidual")->call), "bool(long long, long long)");
  EXPECT_EQ(sig_text(reg().functor("NoJoinEmit")->call), "void(long long, long long, long long)");
  EXPECT_EQ(sig_text(reg().functor("AlwaysTrue")->call), "bool(long long)");
}

TEST(TemplateRegistry, ParseRejectsMalformedText) {
  EXPECT_THROW(TemplateRegistry::parse("hook\tpred\tbool\n"), InternalError);
  EXPECT_THROW(TemplateRegistry::parse("skeleton\tA\ta.cuh\nbogus\tx\n"), InternalError);
  EXPECT_THROW(TemplateRegistry::parse("skeleton\tA\ta.cuh\nhook\tpred\tbool\tlong long\n"),
               InternalError);
  EXPECT_EQ(TemplateRegistry::parse("# nothing\n").skeletons().size(), 0u);
}

// ---------------------------------------------------------------------------------
// SkeletonCall: what it writes (the text the generator emitted before the registry) and
// what it rejects.

HookArg pred_hook(const char* type = "long long") {
  return HookArg::lambda("bool", {{type, "i"}}, " return f.pred(i); ");
}
HookArg emit_hook() {
  return HookArg::lambda("void", {{"long long", "i"}, {"long long", "o"}}, " f.emit(i, o); ");
}
const TilePolicy kSelect{"P::Select", 256, 16};

TEST(SkeletonCall, WritesTheSelectKernelBody) {
  SkeletonCall agent(reg(), "SelectAgent", {kSelect}, "Agent");
  EXPECT_EQ(agent.declare() + agent.temp_storage() +
                agent.call("run", {"temp", "s0", pred_hook(), emit_hook(), "b1", "b2"}),
            "  using Agent = ranc::tpl::SelectAgent<P::Select>;\n"
            "  __shared__ typename Agent::TempStorage temp;\n"
            "  Agent::run(temp, s0, [&](long long i) { return f.pred(i); }, [&](long long i, long "
            "long o) { f.emit(i, o); }, b1, b2);\n");
  SkeletonCall map(reg(), "MapAgent", {TilePolicy{"P::Map", 256, 16}});
  EXPECT_EQ(map.call("run", {"s3", HookArg::lambda("void", {{"long long", "i"}}, " f(i); ")}),
            "  ranc::tpl::MapAgent<P::Map>::run(s3, [&](long long i) { f(i); });\n");
}

TEST(SkeletonCall, WritesTypeBoundSharedMemoryAndObjectHooks) {
  SkeletonCall agent(reg(), "ReduceAgent", {TilePolicy{"P::Reduce", 128, 8}}, "Agent");
  agent.bind("State", "n3_state");
  EXPECT_EQ(agent.temp_storage(),
            "  __shared__ typename Agent::template TempStorageT<n3_state> temp;\n");
  const HookArg agg =
      HookArg::object("agg", {{"State", "n3_state"}},
                      {{"init", {"State", {}}},
                       {"accumulate", {"void", {{"State&", "s"}, {"long long", "r"}}}},
                       {"merge", {"void", {{"State&", "a"}, {"const State&", "b"}}}}});
  const HookArg same =
      HookArg::lambda("bool", {{"long long", "i"}, {"long long", "j"}}, " return 1; ");
  const HookArg emit = HookArg::lambda(
      "void", {{"long long", "g"}, {"long long", "first"}, {"const n3_state &", "s"}}, " ");
  const HookArg stage =
      HookArg::lambda("bool", {{"long long", "lo"}, {"long long", "hi"}}, " return false; ");
  const HookArg release = HookArg::lambda("int", {{"void*&", "mem"}}, " return 0; ");
  EXPECT_NE(agent.call("run", {"temp", "n", same, agg, emit, "a", "b", "c", "d", "e", stage, release})
                .find(", agg, "),
            std::string::npos);
  // The stage hook says whether it staged (the block then synchronises): it returns bool.
  EXPECT_NE(internal_error([&] {
              agent.call("run", {"temp", "n", same, agg, emit, "a", "b", "c", "d", "e",
                                 HookArg::lambda("void", {{"long long", "lo"}, {"long long", "hi"}}, " "), release});
            }).find("hook 'stage'"),
            std::string::npos);
  // A merge that takes the state by value is not the header's merge.
  HookArg bad = agg;
  bad.methods[2].second.params[1].type = "State";
  EXPECT_NE(internal_error([&] {
              agent.call("run", {"temp", "n", same, bad, emit, "a", "b", "c", "d", "e", stage, release});
            }).find("hook 'agg.merge'"),
            std::string::npos);
  // The emit hook's state type must be the bound one.
  const HookArg wrong_state = HookArg::lambda(
      "void", {{"long long", "g"}, {"long long", "first"}, {"const n4_state &", "s"}}, " ");
  EXPECT_NE(internal_error([&] {
              agent.call("run", {"temp", "n", same, agg, wrong_state, "a", "b", "c", "d", "e", stage, release});
            }).find("hook 'emit'"),
            std::string::npos);
}

TEST(SkeletonCall, RejectsAHookWhoseParameterTypeDiffers) {
  SkeletonCall agent(reg(), "SelectAgent", {kSelect}, "Agent");
  const std::string e = internal_error([&] {
    agent.call("run", {"temp", "s0", pred_hook("int"), emit_hook(), "b1", "b2"});
  });
  EXPECT_NE(e.find("template SelectAgent (ranc/templates/select.cuh)"), std::string::npos) << e;
  EXPECT_NE(
      e.find("hook 'pred': the generator writes bool(int) but the header declares bool(long long)"),
      std::string::npos)
      << e;
}

TEST(SkeletonCall, RejectsWrongReturnArityAndPositions) {
  SkeletonCall agent(reg(), "SelectAgent", {kSelect}, "Agent");
  const HookArg int_pred = HookArg::lambda("int", {{"long long", "i"}}, " return 1; ");
  EXPECT_NE(internal_error([&] {
              agent.call("run", {"temp", "s0", int_pred, emit_hook(), "b1", "b2"});
            }).find("hook 'pred'"),
            std::string::npos);
  const HookArg emit1 = HookArg::lambda("void", {{"long long", "i"}}, " ");
  EXPECT_NE(internal_error([&] {
              agent.call("run", {"temp", "s0", pred_hook(), emit1, "b1", "b2"});
            }).find("hook 'emit'"),
            std::string::npos);
  EXPECT_NE(internal_error([&] {
              agent.call("run", {"temp", "s0", pred_hook(), emit_hook(), "b1"});
            }).find("run takes 6 arguments, the generator gives 5"),
            std::string::npos);
  EXPECT_NE(internal_error([&] {
              agent.call("run", {"temp", pred_hook(), "s0", emit_hook(), "b1", "b2"});
            }).find("argument 2 ('n') is not a hook"),
            std::string::npos);
  EXPECT_NE(internal_error([&] { agent.call("runx", {}); }).find("has no entry point 'runx'"),
            std::string::npos);
  // A stock hook must fit too: NoEmit takes two rows, JoinExpandAgent's emit three.
  SkeletonCall expand(reg(), "JoinExpandAgent", {TilePolicy{"P::JoinExpand", 256, 8}}, "Agent");
  EXPECT_NE(internal_error([&] {
              expand.call("run", {"temp", "t", "n", "lo", "o", HookArg::stock("NoEmit")});
            }).find("hook 'emit'"),
            std::string::npos);
}

TEST(SkeletonCall, RejectsUnknownSkeletonsTemplateArgumentsAndUnboundTypes) {
  EXPECT_NE(internal_error([] {
              SkeletonCall(reg(), "NoSuchAgent", {});
            }).find("NoSuchAgent is not in the template registry"),
            std::string::npos);
  EXPECT_NE(internal_error([] {
              SkeletonCall(reg(), "SelectAgent", {std::string("int")});
            }).find("template parameter Policy is a policy"),
            std::string::npos);
  EXPECT_NE(internal_error([] {
              SkeletonCall(reg(), "SelectAgent", {});
            }).find("takes 1 template arguments"),
            std::string::npos);
  SkeletonCall agent(reg(), "ReduceAgent", {TilePolicy{"P::Reduce", 128, 8}}, "Agent");
  EXPECT_NE(internal_error([&] { agent.temp_storage(); }).find("did not bind"), std::string::npos);
  EXPECT_NE(internal_error([&] { agent.bind("Key", "int"); }).find("binds Key"), std::string::npos);
}

TEST(SkeletonCall, ChecksTheLaunchRule) {
  SkeletonCall agent(reg(), "SelectAgent", {kSelect}, "Agent");
  agent.call("run", {"temp", "s0", pred_hook(), emit_hook(), "b1", "b2"});
  EXPECT_NO_THROW(agent.check_launch(256, 1, false));
  EXPECT_NE(internal_error([&] {
              agent.check_launch(128, 1, false);
            }).find("runs with 256 threads per block"),
            std::string::npos);
  // The last block writes the count, so the grid runs also for no rows.
  EXPECT_NE(internal_error([&] { agent.check_launch(256, 1, true); }).find("Grid::tiles_exact"),
            std::string::npos);
  EXPECT_NE(internal_error([&] {
              agent.check_launch(256, 1024, false);
            }).find("one block per tile of 4096"),
            std::string::npos);
  SkeletonCall finish(reg(), "GlobalReduceFinish", {"256"});
  finish.bind("State", "s");
  finish.call("run",
              {"temp", "t",
               HookArg::object("agg", {{"State", "s"}},
                               {{"init", {"State", {}}},
                                {"accumulate", {"void", {{"State &", "s"}, {"long long", "r"}}}},
                                {"merge", {"void", {{"State &", "a"}, {"const State &", "b"}}}}}),
               "p", HookArg::lambda("void", {{"const s&", "x"}}, " ")});
  EXPECT_NO_THROW(finish.check_launch(256, 1, false));
  EXPECT_NE(internal_error([&] { finish.check_launch(512, 1, false); }).find("(BlockThreads)"),
            std::string::npos);
}

// The code generator checks what it emits against the registry it is given: the same program
// generates with the built-in registry and is an internal error naming the template and hook
// with one whose SelectAgent::Hooks::pred takes an int.
TEST(SkeletonCall, TheGeneratorChecksItsInstantiations) {
  ProgramBuilder b;
  // Rows of 24 bytes: SelectAgent (SelectValuesAgent stages rows of at most 16).
  auto r = b.input("r", {{"a", Type::I32}, {"b", Type::I64}, {"c", Type::I64}});
  b.output(r.select(col("a") < 5).select(col("a") > 1), "o");
  const Program p = b.check();
  EXPECT_NO_THROW(generate_plan(p));
  std::string text(builtin_template_registry_text());
  const std::string pred = "hook\tpred\tbool\tlong long|row\n";
  ASSERT_NE(text.find(pred), std::string::npos);
  text.replace(text.find(pred), pred.size(), "hook\tpred\tbool\tint|row\n");
  const TemplateRegistry broken = TemplateRegistry::parse(text);
  const std::string e = internal_error([&] { generate_plan(p, {.templates = &broken}); });
  EXPECT_NE(e.find("template SelectAgent (ranc/templates/select.cuh): hook 'pred'"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace ranc::codegen
