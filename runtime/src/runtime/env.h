// On/off switches in the environment (RANC_JIT_PCH, RANC_CACHE, RANC_SYNC_STEPS, ...).
// Internal to ranc_runtime.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>

namespace ranc::rt {

// true for 1/on/true/yes, false for 0/off/false/no (any case), nullopt when the
// variable is unset or holds anything else.
inline std::optional<bool> env_switch(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  std::string s(v);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "1" || s == "on" || s == "true" || s == "yes") return true;
  if (s == "0" || s == "off" || s == "false" || s == "no") return false;
  return std::nullopt;
}

}  // namespace ranc::rt
