// ranc/templates/embedded.h: the CUDA template headers, embedded into the binary at build time.
//
// Hand the list to NVRTC as (name, contents) header pairs; `#include <ranc/templates/select.cuh>`
// in generated code then resolves without touching the file system. bundle_hash() changes whenever
// any header name or content changes; put it into kernel cache keys.
#pragma once

#include <string>
#include <vector>

namespace ranc::templates {

struct EmbeddedHeader {
  const char* name;      // include name, e.g. "ranc/templates/select.cuh"
  const char* contents;  // NUL-terminated header text
};

/// Every header under templates/include/ranc/templates/*.cuh, sorted by name.
const std::vector<EmbeddedHeader>& embedded_headers();

/// Hex SHA-256 over all names and contents.
const std::string& bundle_hash();

}  // namespace ranc::templates
