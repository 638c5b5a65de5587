// Kernels shared by their text (codegen/kernel_text.h, CodegenOptions::share_kernels): what
// counts as the same kernel, and plans that launch one kernel from several operators.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "ranc/codegen/codegen.h"
#include "ranc/codegen/kernel_text.h"
#include "ranc/dsl.h"
#include "test_programs.h"
#ifdef RANC_HAVE_RUNTIME
#include "ranc/runtime/plan_validate.h"
#endif

namespace ranc {
namespace {

using codegen::canonical_kernel_text;

const char* const kSelectBlock =
    "// n4 select n1 where (k > 3)\n"
    "struct n4_select_fn {\n"
    "  const int* __restrict__ b7;\n"
    "  long long s2;\n"
    "  __device__ bool pred(long long i) const { return b7[i] > 3; }\n"
    "};\n"
    "extern \"C\" __global__ void n4_select(const int* __restrict__ b7, long long s2) {\n"
    "  const n4_select_fn f{b7, s2};\n"
    "  ranc::tpl::run(s2, f, 0x8000000000000000ull, 2.5);\n"
    "}\n";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

TEST(KernelText, NamesAndParametersDoNotCount) {
  std::string other = replace_all(kSelectBlock, "n4_select", "n9_filter");
  other = replace_all(other, "b7", "b31");
  other = replace_all(other, "s2", "s14");
  other = replace_all(other, "// n9_filter n1 where (k > 3)", "// n9 another comment");
  EXPECT_EQ(canonical_kernel_text(kSelectBlock, "n4_select"),
            canonical_kernel_text(other, "n9_filter"));
  // The canonical text names nothing of the original.
  const std::string c = canonical_kernel_text(kSelectBlock, "n4_select");
  EXPECT_EQ(c.find("n4_"), std::string::npos) << c;
  EXPECT_EQ(c.find("b7"), std::string::npos) << c;
  EXPECT_NE(c.find("0x8000000000000000ull"), std::string::npos) << c;  // numbers stay whole
}

TEST(KernelText, ConstantsTypesAndOuterNamesCount) {
  const std::string base = canonical_kernel_text(kSelectBlock, "n4_select");
  // Another constant, another type.
  EXPECT_NE(base, canonical_kernel_text(replace_all(kSelectBlock, "> 3", "> 4"), "n4_select"));
  EXPECT_NE(base, canonical_kernel_text(replace_all(kSelectBlock, "const int*", "const long long*"),
                                        "n4_select"));
  EXPECT_NE(base, canonical_kernel_text(replace_all(kSelectBlock, "2.5", "2.25"), "n4_select"));
  // The same parameters used in another order are another kernel.
  const char* const ab =
      "extern \"C\" __global__ void n1_k(int* b1, const int* b2) { b1[0] = b2[0]; }\n";
  const char* const ba =
      "extern \"C\" __global__ void n2_k(int* b1, const int* b2) { b2[0] = b1[0]; }\n";
  EXPECT_NE(canonical_kernel_text(ab, "n1_k"), canonical_kernel_text(ba, "n2_k"));
  // A name defined outside the block (another kernel's state struct) is not renamed: two
  // fixups of different reduces stay apart even when their own text matches.
  const char* const fix5 =
      "extern \"C\" __global__ void n6_fixup(void* b1) { fix<n5_reduce_state>(b1); }\n";
  const char* const fix9 =
      "extern \"C\" __global__ void n10_fixup(void* b3) { fix<n9_reduce_state>(b3); }\n";
  EXPECT_NE(canonical_kernel_text(fix5, "n6_fixup"), canonical_kernel_text(fix9, "n10_fixup"));
  // A struct defined in the block (alignas included) is renamed.
  const char* const st5 =
      "struct alignas(8) n5_state { long long c; };\n"
      "extern \"C\" __global__ void n5_r(void* b1) { fix<n5_state>(b1); }\n";
  const char* const st9 =
      "struct alignas(8) n9_state { long long c; };\n"
      "extern \"C\" __global__ void n9_r(void* b4) { fix<n9_state>(b4); }\n";
  EXPECT_EQ(canonical_kernel_text(st5, "n5_r"), canonical_kernel_text(st9, "n9_r"));
  // String literals are copied as they are (a "b12" inside one is no parameter).
  EXPECT_NE(canonical_kernel_text("extern \"C\" __global__ void n1_k(int* b1) { f(b1, \"b1\"); }", "n1_k"),
            canonical_kernel_text("extern \"C\" __global__ void n1_k(int* b1) { f(b1, \"b2\"); }", "n1_k"));
}

using testing::kernels_named;
using testing::launches_named;

// The same filter over two inputs of the same types is one kernel launched twice; another
// constant makes another kernel; share_kernels off gives one kernel per launch.
TEST(KernelSharing, SameFilterOverTwoInputsIsOneKernel) {
  auto program = [](int second_bound) {
    ProgramBuilder b;
    auto r = b.input("r", {{"k", Type::I32}, {"v", Type::F64}});
    auto q = b.input("q", {{"qk", Type::I32}, {"qv", Type::F64}});
    b.output(r.select(col("k") > 3), "a");
    b.output(q.select(col("qk") > second_bound), "b");
    return b.check();
  };
  const rt::Plan shared = codegen::generate_plan(program(3));
  EXPECT_EQ(kernels_named(shared, "_select"), 1);
  EXPECT_EQ(launches_named(shared, "_select"), 2);
  const rt::Plan apart = codegen::generate_plan(program(4));
  EXPECT_EQ(kernels_named(apart, "_select"), 2);
  const rt::Plan off = codegen::generate_plan(program(3), {.share_kernels = false});
  EXPECT_EQ(kernels_named(off, "_select"), 2);
  EXPECT_EQ(launches_named(off, "_select"), 2);
  // The source holds exactly the kernels the plan lists.
  for (const rt::Plan* p : {&shared, &apart, &off}) {
    size_t defs = 0;
    for (size_t at = p->source.find("extern \"C\" __global__"); at != std::string::npos;
         at = p->source.find("extern \"C\" __global__", at + 1))
      ++defs;
    EXPECT_EQ(defs, p->kernels.size());
#ifdef RANC_HAVE_RUNTIME
    EXPECT_NO_THROW(rt::validate_plan(*p));
#endif
  }
}

// Two top-k sorts of the same types share their kernels, and each still launches the shared
// histogram kernel once for every later level (the launch names the kernel kept).
TEST(KernelSharing, TopKSortsOfTheSameTypes) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I64}, {"v", Type::I32}});
  auto q = b.input("q", {{"qk", Type::I64}, {"qv", Type::I32}});
  b.output(r.sort({"k"}).limit(5), "a");
  b.output(q.sort({"qk"}).limit(5), "b");
  const rt::Plan p = codegen::generate_plan(b.check());
#ifdef RANC_HAVE_RUNTIME
  EXPECT_NO_THROW(rt::validate_plan(p));
#endif
  EXPECT_EQ(kernels_named(p, "_topk_histogram"), 1);
  EXPECT_EQ(launches_named(p, "_topk_histogram"), 2 * 5);  // 64-bit first words: 5 levels
  EXPECT_EQ(kernels_named(p, "ranc_topk_pick"), 1);
  EXPECT_EQ(launches_named(p, "ranc_topk_pick"), 2 * 6);
}

// Reduces with different aggregates keep kernels of their own; the same reduce over two
// inputs of the same types shares them.
TEST(KernelSharing, ReducesShareOnlyWhenTheyAggregateAlike) {
  auto program = [](bool same) {
    ProgramBuilder b;
    auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}});
    auto q = b.input("q", {{"qk", Type::I32}, {"qv", Type::I64}});
    b.output(r.reduce({"k"}, {ranc::sum(col("v"), "s")}), "a");
    b.output(q.reduce({"qk"}, {same ? ranc::sum(col("qv"), "s") : ranc::max(col("qv"), "s")}), "b");
    return b.check();
  };
  const rt::Plan same = codegen::generate_plan(program(true), {.group_by = codegen::GroupBy::Sort});
  const rt::Plan other = codegen::generate_plan(program(false), {.group_by = codegen::GroupBy::Sort});
  const rt::Plan off = codegen::generate_plan(program(false), {.group_by = codegen::GroupBy::Sort,
                                                               .share_kernels = false});
  EXPECT_LT(same.kernels.size(), off.kernels.size());
  EXPECT_EQ(other.kernels.size() - kernels_named(other, "sort") ,
            off.kernels.size() - kernels_named(off, "sort"));
#ifdef RANC_HAVE_RUNTIME
  EXPECT_NO_THROW(rt::validate_plan(same));
  EXPECT_NO_THROW(rt::validate_plan(other));
#endif
}

}  // namespace
}  // namespace ranc

namespace ranc {
namespace {

// CodegenOptions::fast_compile asks NVRTC for --Ofast-compile=mid; the default asks for
// nothing of the kind (and RANC_FAST_COMPILE is unset in the tests).
TEST(FastCompile, IsAnNvrtcOptionOfThePlan) {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}});
  b.output(r.select(col("k") > 3), "a");
  const Program p = b.check();
  const rt::Plan fast = codegen::generate_plan(p, {.fast_compile = true});
  const rt::Plan plain = codegen::generate_plan(p);
  auto has = [](const rt::Plan& plan) {
    for (const auto& o : plan.nvrtc_options)
      if (o == "--Ofast-compile=mid") return true;
    return false;
  };
  EXPECT_TRUE(has(fast));
  EXPECT_FALSE(has(plain));
  EXPECT_EQ(fast.source, plain.source);
}

}  // namespace
}  // namespace ranc
