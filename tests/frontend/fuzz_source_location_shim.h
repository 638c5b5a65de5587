// Force-included by run_fuzzer.sh when the compiler is clang < 15, whose
// libstdc++ <source_location> is empty (it needs __builtin_source_location). Only
// for building the fuzzer: enough of std::source_location for ranc's headers.
#pragma once
#if defined(__clang__) && !__has_builtin(__builtin_source_location)
#include <cstdint>
namespace std {
struct source_location {
  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           const char* fn = __builtin_FUNCTION(),
                                           uint_least32_t line = __builtin_LINE(),
                                           uint_least32_t col = __builtin_COLUMN()) noexcept {
    source_location l;
    l.file_ = file;
    l.fn_ = fn;
    l.line_ = line;
    l.col_ = col;
    return l;
  }
  constexpr source_location() noexcept = default;
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return fn_; }
  constexpr uint_least32_t line() const noexcept { return line_; }
  constexpr uint_least32_t column() const noexcept { return col_; }

 private:
  const char* file_ = "";
  const char* fn_ = "";
  uint_least32_t line_ = 0, col_ = 0;
};
}  // namespace std
#endif
