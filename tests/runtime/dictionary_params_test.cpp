// The run's string dictionary: merge, recode, LIKE and the DictParam kinds.
#include "ranc/runtime/dictionary_params.h"

#include <gtest/gtest.h>

#include "ranc/data/error.h"

namespace ranc::rt {
namespace {

TEST(LikeMatch, Wildcards) {
  EXPECT_TRUE(like_match("", ""));
  EXPECT_TRUE(like_match("", "%"));
  EXPECT_FALSE(like_match("", "_"));
  EXPECT_TRUE(like_match("abc", "abc"));
  EXPECT_FALSE(like_match("abc", "ab"));
  EXPECT_TRUE(like_match("abc", "a%"));
  EXPECT_TRUE(like_match("abc", "%c"));
  EXPECT_TRUE(like_match("abc", "%b%"));
  EXPECT_TRUE(like_match("abc", "a_c"));
  EXPECT_FALSE(like_match("abbc", "a_c"));
  EXPECT_TRUE(like_match("PROMO BRUSHED", "PROMO%"));
  EXPECT_TRUE(like_match("special requests", "%special%requests%"));
  EXPECT_FALSE(like_match("special reqs", "%special%requests%"));
  EXPECT_TRUE(like_match("aaa", "%a%a%a%"));
  EXPECT_FALSE(like_match("aa", "%a%a%a%"));
  EXPECT_TRUE(like_match("mississippi", "%iss%pi"));
  EXPECT_TRUE(like_match("x\\y", "x\\y"));              // no escape character
  EXPECT_TRUE(like_match("\xC3\xA9t\xC3\xA9", "_t_"));  // "été": '_' is one code point
}

TEST(Dictionary, MergeAndRecode) {
  auto a = Dictionary::from_strings({"pear", "apple"});
  auto b = Dictionary::from_strings({"fig", "pear", "zucchini"});
  auto m = merge_dictionaries({a, b, nullptr});
  ASSERT_EQ(m->strings(), (std::vector<std::string>{"apple", "fig", "pear", "zucchini"}));
  EXPECT_EQ(recode_map(*a, *m), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(recode_map(*b, *m), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(merge_dictionaries({})->size(), 0u);
}

TEST(DictParams, SlotKinds) {
  auto d = Dictionary::from_strings({"AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"});
  auto eval = [&](DictParam::Kind k, std::string text) {
    return eval_dict_slot(DictParam{k, std::move(text), 0, -1}, *d);
  };
  using K = DictParam::Kind;
  EXPECT_EQ(eval(K::EqCode, "MAIL"), 2);
  EXPECT_EQ(eval(K::EqCode, "BOAT"), -1);
  EXPECT_EQ(eval(K::LowerBound, "MAIL"), 2);
  EXPECT_EQ(eval(K::LowerBound, "B"), 1);
  EXPECT_EQ(eval(K::UpperBound, "MAIL"), 3);
  EXPECT_EQ(eval(K::UpperBound, "ZZZ"), 7);
  // Strings starting with "R" are codes [3, 5).
  EXPECT_EQ(eval(K::LowerBound, "R"), 3);
  EXPECT_EQ(eval(K::PrefixEnd, "R"), 5);
  EXPECT_EQ(eval(K::PrefixEnd, "RE"), 5);
  EXPECT_EQ(eval(K::PrefixEnd, "Q"), 3);  // empty range
  EXPECT_EQ(eval(K::PrefixEnd, ""), 7);
  EXPECT_THROW(eval(K::LikeMask, "%"), InternalError);
}

TEST(DictParams, LikeMask) {
  auto d = Dictionary::from_strings({"AIR", "REG AIR", "RAIL"});
  EXPECT_EQ(like_mask(*d, "%AIR"), (std::vector<uint8_t>{1, 0, 1}));   // AIR, RAIL, REG AIR
  EXPECT_EQ(like_mask(Dictionary(), "%"), (std::vector<uint8_t>{0}));  // at least one byte
}

}  // namespace
}  // namespace ranc::rt
