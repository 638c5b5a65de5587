// Embedding ranc in an application: build a program, compile it to a plan, bind
// host inputs, run on the GPU (or the CPU reference when there is none), read the
// outputs.
#include <cstdio>

#include "ranc/codegen/codegen.h"
#include "ranc/dsl.h"
#include "ranc/ra_ops/ra_ops.h"
#include "ranc/runtime/device.h"
#include "ranc/runtime/executor.h"

using namespace ranc;

int main() {
  ProgramBuilder b;
  Rel edges = b.input("edges", {{"src", Type::I32}, {"dst", Type::I32}});
  // Two-hop paths: join the edge relation with itself on dst = src.
  Rel second = edges.project({as(col("src"), "mid"), as(col("dst"), "end")});
  Rel paths =
      edges.join(second, {"dst"}, {"mid"}).project({"src", "end"}).distinct().sort({"src", "end"});
  b.output(paths, "two_hops");

  HostRelation e = HostRelation::from_rows(Schema{{{"src", Type::I32}, {"dst", Type::I32}}, 0},
                                           {{Value::i32(1), Value::i32(2)},
                                            {Value::i32(2), Value::i32(3)},
                                            {Value::i32(2), Value::i32(4)},
                                            {Value::i32(3), Value::i32(1)}});
  try {
    Program checked = b.check();
    if (rt::gpu_available()) {
      rt::Plan plan = codegen::generate_plan(checked);  // one CUDA unit + steps
      rt::Executor executor;                            // NVRTC JIT + kernel cache
      rt::RunResult r = executor.run(plan, {{"edges", &e}});
      std::printf("on %s:\n%s", executor.device().name.c_str(),
                  r.output("two_hops").to_table().c_str());
    } else {
      std::printf("no GPU (%s); CPU reference:\n", rt::no_gpu_reason().c_str());
      auto out = execute_reference(checked, {{"edges", e}});
      std::printf("%s", out[0].to_table().c_str());
    }
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "%s\n", ex.what());
    return 1;
  }
  return 0;
}
