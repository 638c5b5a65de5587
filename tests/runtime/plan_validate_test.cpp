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

}  // namespace
}  // namespace ranc::rt
