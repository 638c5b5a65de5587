// SHA-256 against the FIPS 180-4 test vectors.
#include "ranc/runtime/hash.h"

#include <gtest/gtest.h>

#include <string>

namespace ranc::rt {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(to_hex(sha256("", 0)),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256("abc", 3)),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::string m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(to_hex(sha256(m.data(), m.size())),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  std::string s(1000, 'x');
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>('a' + i % 26);
  Sha256 h;
  for (size_t i = 0; i < s.size(); i += 17)
    h.update(s.data() + i, std::min<size_t>(17, s.size() - i));
  EXPECT_EQ(h.finish(), sha256(s.data(), s.size()));
}

TEST(Sha256, FieldsAreLengthPrefixed) {
  EXPECT_NE(Sha256().update_field("ab").update_field("c").finish(),
            Sha256().update_field("a").update_field("bc").finish());
}

}  // namespace
}  // namespace ranc::rt
