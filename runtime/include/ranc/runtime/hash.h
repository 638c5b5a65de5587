// SHA-256 for kernel cache keys and entry checksums (no external library).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ranc::rt {

using Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  Sha256& update(const void* data, size_t size);
  Sha256& update(std::string_view s) { return update(s.data(), s.size()); }
  // Length-prefixed, so that ("ab","c") and ("a","bc") hash differently.
  Sha256& update_field(std::string_view s);
  Digest finish();

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

Digest sha256(const void* data, size_t size);
std::string to_hex(const Digest& d);

}  // namespace ranc::rt
