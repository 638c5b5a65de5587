// Plan validation: a well-formed plan passes; each broken invariant is reported
// with the step and node.
#include "ranc/runtime/plan_validate.h"

#include <gtest/gtest.h>

#include "ranc/data/error.h"

namespace ranc::rt {
namespace {

// in(x i32) -> out(y i32) = x * 2, through one kernel.
Plan scale_plan() {
  Plan p;
  p.source = "extern \"C\" __global__ void k1_scale(const int*, int*, long long) {}";
  p.kernels = {"k1_scale"};
  p.num_slots = 1;
  p.buffers = {BufferDecl{"in.x", 4, SizeExpr::slot(0), 0},
               BufferDecl{"k1.out.y", 4, SizeExpr::slot(0), 1}};
  Schema in{{Attribute{"x", Type::I32}}, 0};
  Schema out{{Attribute{"y", Type::I32}}, 0};
  p.inputs = {PlanRelation{"in", in, {0}, 0}};
  p.outputs = {PlanRelation{"out", out, {1}, 0}};
  p.steps = {Alloc{1},
             Launch{"k1_scale",
                    SizeExpr::slot(0),
                    256,
                    256,
                    0,
                    true,
                    {ArgBuffer{0}, ArgBuffer{1}, ArgSlot{0}},
                    1},
             Free{0}};
  p.node_names = {"n0 input", "n1 project"};
  return p;
}

void expect_invalid(const Plan& p, const std::string& fragment) {
  try {
    validate_plan(p);
    FAIL() << "expected InternalError containing: " << fragment;
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(PlanValidate, WellFormedPlanPasses) {
  EXPECT_NO_THROW(validate_plan(scale_plan()));
}

TEST(PlanValidate, UseBeforeAlloc) {
  Plan p = scale_plan();
  p.steps.erase(p.steps.begin());
  expect_invalid(p,
                 "step 0 (Launch k1_scale) of n1 project: buffer 1 (k1.out.y) used before Alloc");
}

TEST(PlanValidate, UseAfterFree) {
  Plan p = scale_plan();
  p.steps.insert(p.steps.begin() + 1, Free{0});
  expect_invalid(p, "used after Free");
}

TEST(PlanValidate, OutputFreed) {
  Plan p = scale_plan();
  p.steps.push_back(Free{1});
  expect_invalid(p, "output 'out'");
}

// A radix partition's further value arrays (SortPairs::more_values): 4-byte buffers, live,
// distinct from their outputs, and only on a radix partition that moves values.
Plan partition_plan() {
  Plan p = scale_plan();
  p.num_slots = 2;
  for (const char* name : {"h", "h.part", "v0", "v0.part", "v1", "v1.part"})
    p.buffers.push_back(BufferDecl{name, 4, SizeExpr::slot(0), 1});
  p.steps = {SetSize{1, SizeExpr::fixed(12)}};
  for (BufferId b = 2; b < 8; ++b) p.steps.push_back(Alloc{b});
  SortPairs s{2, 3, 4, 5, Type::I32, false, SizeExpr::slot(0), 1, true, 1};
  s.more_values = {{6, 7}};
  p.steps.push_back(s);
  p.steps.push_back(Alloc{1});
  for (BufferId b = 2; b < 8; ++b) p.steps.push_back(Free{b});
  return p;
}

TEST(PlanValidate, PartitionMovingSeveralValueArrays) {
  EXPECT_NO_THROW(validate_plan(partition_plan()));
  Plan p = partition_plan();
  std::get<SortPairs>(p.steps[7]).more_values = {{6, 6}};
  expect_invalid(p, "moves values into new buffers");
  p = partition_plan();
  std::get<SortPairs>(p.steps[7]).radix_bits = -1;
  expect_invalid(p, "more_values is for radix partitions");
  p = partition_plan();
  p.buffers[6].elem_size = 8;
  expect_invalid(p, "v1");
}

// 8-byte sort values (SortPairs::value_bytes): value buffers of 8 bytes, integer or encoded
// keys only, no radix partition; any other width is rejected.
TEST(PlanValidate, EightByteSortValues) {
  Plan p = scale_plan();
  p.num_slots = 1;
  p.buffers.push_back(BufferDecl{"k", 4, SizeExpr::slot(0), 1});
  p.buffers.push_back(BufferDecl{"k.sorted", 4, SizeExpr::slot(0), 1});
  p.buffers.push_back(BufferDecl{"x", 8, SizeExpr::slot(0), 1});
  p.buffers.push_back(BufferDecl{"x.sorted", 8, SizeExpr::slot(0), 1});
  auto plan = [&](Type key, int32_t bytes, bool encoded) {
    Plan q = p;
    q.steps = {};
    for (BufferId b = 2; b < 6; ++b) q.steps.push_back(Alloc{b});
    SortPairs s{2, 3, 4, 5, key, false, SizeExpr::slot(0), 1, encoded};
    s.value_bytes = bytes;
    q.steps.push_back(s);
    q.steps.push_back(Alloc{1});
    for (BufferId b = 2; b < 6; ++b) q.steps.push_back(Free{b});
    return q;
  };
  EXPECT_NO_THROW(validate_plan(plan(Type::I32, 8, false)));
  EXPECT_NO_THROW(validate_plan(plan(Type::Date, 8, false)));
  EXPECT_NO_THROW(validate_plan(plan(Type::I32, 8, true)));
  expect_invalid(plan(Type::I32, 4, false), "x");  // 8-byte buffers for 4-byte values
  expect_invalid(plan(Type::I32, 2, false), "values of 2 bytes");
  expect_invalid(plan(Type::F32, 8, false), "integer or encoded keys");
  Plan r = plan(Type::I32, 8, true);
  std::get<SortPairs>(r.steps[4]).radix_bits = 0;
  expect_invalid(r, "no radix partition");
}

TEST(PlanValidate, UnknownKernel) {
  Plan p = scale_plan();
  p.kernels.clear();
  expect_invalid(p, "kernel 'k1_scale' is not in plan.kernels");
}

TEST(PlanValidate, SlotReadBeforeSet) {
  Plan p = scale_plan();
  p.num_slots = 2;
  p.steps.insert(p.steps.begin(), SetSize{0, SizeExpr::slot(1)});
  expect_invalid(p, "slot 1 read before it is set");
}

// A gated expression reads its gate slot too.
TEST(PlanValidate, GateSlotReadBeforeSet) {
  Plan p = scale_plan();
  p.num_slots = 3;
  SizeExpr e = SizeExpr::slot(0);
  e.gate = 2;
  e.gate_min = 10;
  p.steps.insert(p.steps.begin(), SetSize{1, e});
  expect_invalid(p, "slot 2 read before it is set");
  p.steps.insert(p.steps.begin(), SetSize{2, SizeExpr::fixed(3)});
  EXPECT_NO_THROW(validate_plan(p));
}

TEST(PlanValidate, ReadSizeIndexSlot) {
  Plan p = scale_plan();
  p.num_slots = 3;
  p.buffers[1].elem_size = 8;
  p.outputs.clear();
  ReadSize r{2, 1, 0, 1};  // element s1 of buffer 1: slot 1 is never set
  p.steps.insert(p.steps.begin() + 1, r);
  expect_invalid(p, "slot 1 read before it is set");
}

// A ReadSize's `when` slot must be set before it.
TEST(PlanValidate, ReadSizeWhenSlot) {
  Plan p = scale_plan();
  p.num_slots = 3;
  p.buffers[1].elem_size = 8;
  p.outputs.clear();
  p.steps.insert(p.steps.begin() + 1, ReadSize{2, 1, 0, -1, 1});
  expect_invalid(p, "slot 1 read before it is set");
  p.steps.insert(p.steps.begin() + 1, SetSize{1, SizeExpr::fixed(0)});
  EXPECT_NO_THROW(validate_plan(p));
}

TEST(PlanValidate, ElementSizes) {
  Plan p = scale_plan();
  p.steps.insert(p.steps.begin() + 1, ReadSize{0, 1, 0});
  expect_invalid(p, "elem_size 4, expected 8");
  p = scale_plan();
  p.buffers[1].elem_size = 8;
  expect_invalid(p, "output 'out': buffer 1 (k1.out.y) has elem_size 8, expected 4");
  p = scale_plan();
  p.steps.insert(p.steps.begin() + 1, Gather{0, 0, 1, 2, SizeExpr::slot(0), 1});
  expect_invalid(p, "Gather elem_size 2");
}

TEST(PlanValidate, IdsInRange) {
  Plan p = scale_plan();
  p.steps.push_back(Iota{7, SizeExpr::fixed(1)});
  expect_invalid(p, "buffer id 7 out of range");
  p = scale_plan();
  p.dict_params = {DictParam{DictParam::Kind::EqCode, "x", 3, -1}};
  expect_invalid(p, "slot id 3 out of range");
}

TEST(PlanValidate, NodeNames) {
  Plan p = scale_plan();
  EXPECT_EQ(node_name(p, 1), "n1 project");
  EXPECT_EQ(node_name(p, 5), "node 5");
  EXPECT_EQ(node_name(p, -1), "");
}

// A loop: acc (before the loop) is carried from next (allocated in the body) until the
// slot `left` (carried from s2 = left - 1) is 0; a scratch buffer lives in the body only.
Plan loop_plan() {
  Plan p;
  p.source = "extern \"C\" __global__ void k(const int*, int*) {}";
  p.kernels = {"k"};
  p.num_slots = 3;
  p.buffers = {BufferDecl{"acc", 4, SizeExpr::fixed(8), 0},
               BufferDecl{"next", 4, SizeExpr::fixed(8), 0},
               BufferDecl{"scratch", 4, SizeExpr::fixed(8), 0}};
  Schema out{{Attribute{"y", Type::I32}}, 0};
  p.outputs = {PlanRelation{"out", out, {0}, 0}};
  SizeExpr minus_one{-1, {SizeTerm{1, {1}}}};
  minus_one.saturate = true;
  LoopEnd end;
  end.loop = 7;
  end.carry_buffers = {{0, 1}};
  end.carry_slots = {{1, 2}};
  end.until_zero = {2};
  p.steps = {SetSize{0, SizeExpr::fixed(8)},
             SetSize{1, SizeExpr::fixed(3)},
             Alloc{0, true},
             LoopBegin{7, 0},
             Alloc{1},
             Alloc{2},
             CopyBuffer{0, 2, SizeExpr::slot(0), 0},
             Launch{"k", SizeExpr::slot(0), 256, 256, 0, true, {ArgBuffer{2}, ArgBuffer{1}}, 0},
             Free{2},
             SetSize{2, minus_one},
             end};
  p.node_names = {"n0 fixpoint"};
  return p;
}

TEST(PlanValidateLoop, WellFormedLoopPasses) {
  EXPECT_NO_THROW(validate_plan(loop_plan()));
}

TEST(PlanValidateLoop, BodyBufferNeitherFreedNorCarried) {
  Plan p = loop_plan();
  p.steps.erase(p.steps.begin() + 8);  // Free{2}
  expect_invalid(p, "buffer 2 (scratch) is allocated in the loop body and neither freed nor carried");
}

TEST(PlanValidateLoop, OuterBufferFreedInTheBody) {
  Plan p = loop_plan();
  p.buffers.push_back(BufferDecl{"outer", 4, SizeExpr::fixed(1), 0});
  p.steps.insert(p.steps.begin() + 3, Alloc{3});
  p.steps.insert(p.steps.begin() + 9, Free{3});
  expect_invalid(p, "buffer 3 (outer) is freed inside a loop body but was allocated before it");
}

TEST(PlanValidateLoop, UnmatchedAndNestedLoops) {
  Plan p = loop_plan();
  p.steps.pop_back();
  expect_invalid(p, "loop 7 has no LoopEnd");
  Plan q = loop_plan();
  q.steps.insert(q.steps.begin() + 4, LoopBegin{8, 0});
  expect_invalid(q, "loop 8 begins inside loop 7");
  Plan r = loop_plan();
  r.steps.erase(r.steps.begin() + 3);
  expect_invalid(r, "LoopEnd of loop 7 without its LoopBegin");
}

// LoopBegin::prologue: the body's first steps; a buffer they allocate may be carried into,
// also after a Free in the body, and holds the carried memory after the loop (a Free there is
// valid); the prologue stays inside the body.
TEST(PlanValidateLoop, PrologueBuffersAreCarriedInto) {
  Plan p = loop_plan();
  p.buffers.push_back(BufferDecl{"counts", 8, SizeExpr::fixed(4), 0});       // 3
  p.buffers.push_back(BufferDecl{"counts.next", 8, SizeExpr::fixed(4), 0});  // 4
  std::get<LoopBegin>(p.steps[3]).prologue = 1;
  p.steps.insert(p.steps.begin() + 4, Alloc{3});
  // After the body's launch: the next counts, the prologue's freed.
  p.steps.insert(p.steps.begin() + 9, Alloc{4});
  p.steps.insert(p.steps.begin() + 10, Free{3});
  std::get<LoopEnd>(p.steps.back()).carry_buffers.emplace_back(3, 4);
  p.steps.push_back(Free{3});
  EXPECT_NO_THROW(validate_plan(p));
  Plan beyond = p;
  std::get<LoopBegin>(beyond.steps[3]).prologue = 20;
  expect_invalid(beyond, "the loop's prologue reaches past its body");
  // Not allocated in the prologue: a body buffer freed in the body is not carried into.
  Plan body = p;
  std::get<LoopBegin>(body.steps[3]).prologue = 0;
  expect_invalid(body, "buffer 3 (counts) used after Free");
}

// A launch's device size argument is one of its pointer arguments.
TEST(PlanValidateLoop, DeviceSizeArgument) {
  Plan p = loop_plan();
  auto& l = std::get<Launch>(p.steps[7]);
  l.device_sizes = {DeviceSize{0, 1}};
  EXPECT_NO_THROW(validate_plan(p));
  l.device_sizes = {DeviceSize{0, 1}, DeviceSize{1, 2}};
  expect_invalid(p, "a device size's argument is not a pointer argument of the launch");
}

// LoopEnd::resident: its relations are carry destinations of the packing's width, its scratch
// buffers are never allocated by a step, and its kernel's other arguments are live and set.
TEST(PlanValidateLoop, ResidentRounds) {
  Plan p = loop_plan();
  p.kernels.push_back("r");
  p.buffers.push_back(BufferDecl{"words", 8, SizeExpr::fixed(0), 0});    // 3
  p.buffers.push_back(BufferDecl{"table", 8, SizeExpr::fixed(0), 0});    // 4
  p.buffers.push_back(BufferDecl{"control", 8, SizeExpr::fixed(0), 0});  // 5
  p.num_slots = 9;
  ResidentRounds r;
  r.kernel = "r";
  r.packing = Packing::I32;
  r.full = {0};
  r.delta = {0};
  r.full_size = 0;
  r.delta_size = 1;
  r.words = 3;
  r.table = 4;
  r.control = 5;
  r.room = 3;
  r.mask = 4;
  r.rounds = 5;
  r.max_rows = 6;
  r.search_full = 7;
  r.prologue = 8;
  r.args = {ArgBuffer{3}, ArgBuffer{4}, ArgBuffer{5}, ArgSlot{3}, ArgSlot{7}, ArgBuffer{0}, ArgSlot{0}};
  std::get<LoopEnd>(p.steps.back()).resident = r;
  EXPECT_NO_THROW(validate_plan(p));
  Plan unknown = p;
  std::get<LoopEnd>(unknown.steps.back()).resident->kernel = "nope";
  expect_invalid(unknown, "kernel 'nope' is not in plan.kernels");
  Plan wide = p;
  std::get<LoopEnd>(wide.steps.back()).resident->packing = Packing::I32x2;
  expect_invalid(wide, "resident rounds' relations do not have the packing's columns");
  p.buffers.push_back(BufferDecl{"other", 4, SizeExpr::fixed(1), 0});
  Plan not_carried = p;
  not_carried.steps.insert(not_carried.steps.begin() + 2, Alloc{6});
  std::get<LoopEnd>(not_carried.steps.back()).resident->full = {6};
  expect_invalid(not_carried, "buffer 6 (other) is a resident relation's column but no carry's destination");
  Plan allocated = p;
  allocated.steps.insert(allocated.steps.begin() + 2, Alloc{3});
  expect_invalid(allocated, "buffer 3 (words) is resident scratch but allocated by a step");
  Plan unset = p;
  std::get<LoopEnd>(unset.steps.back()).resident->args.push_back(ArgSlot{2});
  EXPECT_NO_THROW(validate_plan(unset));  // carried: set by the LoopEnd
  std::get<LoopEnd>(unset.steps.back()).resident->full_size = 8;
  expect_invalid(unset, "slot 8 read before it is set");
}

TEST(PlanValidateLoop, CarryFromABufferOfBeforeTheLoop) {
  Plan p = loop_plan();
  std::get<LoopEnd>(p.steps.back()).carry_buffers = {{1, 0}};
  expect_invalid(p, "is carried into but allocated in the body");
}

// LoopEnd::split names carried deltas: their columns carry destinations, their size a
// carried slot, and only in a loop without an iteration limit.
TEST(PlanValidateLoop, SplitDeltas) {
  auto with_split = [](SplitDelta d, int64_t max_iterations = 0) {
    Plan p = loop_plan();
    auto& e = std::get<LoopEnd>(p.steps.back());
    e.split = {std::move(d)};
    e.max_iterations = max_iterations;
    return p;
  };
  EXPECT_NO_THROW(validate_plan(with_split(SplitDelta{{0}, 1})));
  expect_invalid(with_split(SplitDelta{{0}, 1}, 5), "a loop with max_iterations splits its deltas");
  expect_invalid(with_split(SplitDelta{{0}, 2}), "slot s2 is a split delta's size but no carried slot");
  Plan p = loop_plan();
  p.buffers.push_back(BufferDecl{"other", 4, SizeExpr::fixed(1), 0});
  p.steps.insert(p.steps.begin() + 3, Alloc{3});
  auto& e = std::get<LoopEnd>(p.steps.back());
  e.split = {SplitDelta{{3}, 1}};
  expect_invalid(p, "buffer 3 (other) is a split delta's column but no carry's destination");
}

TEST(PlanValidateLoop, CopyBufferElementSizes) {
  Plan p = loop_plan();
  p.buffers[2].elem_size = 8;
  expect_invalid(p, "CopyBuffer between buffers of different element sizes");
}

}  // namespace
}  // namespace ranc::rt
