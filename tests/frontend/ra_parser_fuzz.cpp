// libFuzzer harness for the .ra front end: any bytes must parse or fail with a
// UserError (whose rendering must not fail either); never crash, hang or throw
// anything else. Build and run with tests/frontend/run_fuzzer.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ranc/frontend/ra_parser.h"
#ifdef RANC_FUZZ_PLAN
#include "ranc/codegen/codegen.h"
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    ranc::ParsedProgram p = ranc::parse_ra(text, "fuzz.ra");
    for (const ranc::Node& n : p.program.nodes())
      if (n.predicate.valid()) (void)ranc::to_string(n.predicate);
#ifdef RANC_FUZZ_CHECK
    try {
      const ranc::Program checked = ranc::check(p.program);
#ifdef RANC_FUZZ_PLAN
      // Every checked program must plan and generate its CUDA source, fused and unfused:
      // an InternalError (a planner or generator bug) escapes and is a crash.
      (void)ranc::codegen::generate_plan(checked);
      ranc::codegen::CodegenOptions unfused;
      unfused.fusion = false;
      (void)ranc::codegen::generate_plan(checked, unfused);
#else
      (void)checked;
#endif
    } catch (const ranc::UserError&) {
    }
#endif
  } catch (const ranc::UserError& e) {
    (void)ranc::render_diagnostics(e, text);
  }
  return 0;
}
