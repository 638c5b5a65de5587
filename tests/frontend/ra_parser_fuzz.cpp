// libFuzzer harness for the .ra front end: any bytes must parse or fail with a
// UserError (whose rendering must not fail either); never crash, hang or throw
// anything else. Build and run with tests/frontend/run_fuzzer.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ranc/frontend/ra_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    ranc::ParsedProgram p = ranc::parse_ra(text, "fuzz.ra");
    for (const ranc::Node& n : p.program.nodes())
      if (n.predicate.valid()) (void)ranc::to_string(n.predicate);
#ifdef RANC_FUZZ_CHECK
    try {
      (void)ranc::check(p.program);
    } catch (const ranc::UserError&) {
    }
#endif
  } catch (const ranc::UserError& e) {
    (void)ranc::render_diagnostics(e, text);
  }
  return 0;
}
