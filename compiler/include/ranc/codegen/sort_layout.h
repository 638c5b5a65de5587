// Packed sort keys (codegen's sort). Each key attribute maps to an unsigned field whose
// unsigned order is the attribute's order under the semantics' total order (signed
// integers with the sign bit flipped, floats by IEEE totalOrder, descending keys
// inverted). The fields, most significant first, form one bit string K of total_bits
// bits, cut into words of 64 bits from the top; the last word holds the rest (a 32-bit
// word when it has 32 bits or fewer). Sorting K is then an LSD radix sort of the words,
// the last word first, each pass stable; CUB sorts only a word's used bits. A field may
// straddle two words. Bit widths come from the types: bool 1, 4-byte types 32, 8-byte 64.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ranc/data/type.h"
#include "ranc/passes/plan_sort_orders.h"

namespace ranc::codegen {

struct SortField {
  int32_t column = 0;  // the attribute's index in the relation
  Type type = Type::I32;
  bool descending = false;
  int bits = 0;  // width of the field
  int lsb = 0;   // position of its least significant bit in K
};
struct SortWord {
  int lo = 0;    // K bits [lo, lo + bits)
  int bits = 0;  // 1..64
  bool wide() const { return bits > 32; }
};
struct SortLayout {
  std::vector<SortField> fields;  // in key order, most significant first
  std::vector<SortWord> words;    // words[0] is the most significant
  int total_bits = 0;
  // Does field f lie entirely inside word w (so the sorted word gives its value back)?
  bool inside(const SortField& f, size_t w) const {
    return f.lsb >= words[w].lo && f.lsb + f.bits <= words[w].lo + words[w].bits;
  }
  bool overlaps(const SortField& f, size_t w) const {
    return f.lsb < words[w].lo + words[w].bits && f.lsb + f.bits > words[w].lo;
  }
};

// Bits of a sort field of type t.
int sort_field_bits(Type t);
// The layout for sorting a relation with attribute types `types` by `keys`.
SortLayout sort_layout(const std::vector<Type>& types, const passes::Order& keys);

// Do tuples of these types, ordered by `keys`, pack into one order word? Then a set
// operation merges the words (SetOpKeysAgent, set_ops.cuh) and checks its inputs' declared
// orders itself (ra_ops/set_ops, ra_ops/input).
inline bool fits_one_order_word(const std::vector<Type>& types, const passes::Order& keys) {
  return sort_layout(types, keys).words.size() == 1;
}

// Does a sort of tuples of these types by `keys` pack whole tuples into one order word:
// every attribute a key, one word, and not a single integer key (CUB sorts such a column
// as it is)? Such a sort (codegen's sort) writes its words from its input chain fused into
// the kernel that packs them (a join's write stage, a select's compaction), sorts them
// keys-only, and can hand them on still packed: its consumer decodes the attributes as it
// loads a row (passes/fuse_pipelines.h).
bool sort_packs_whole_rows(const std::vector<Type>& types, const passes::Order& keys);

// Device C++ text. `value` is an expression of the attribute's storage type; the
// encoded field is an unsigned long long below 2^bits.
std::string sort_field_encode(const SortField& f, std::string_view value);
// Word w of K from the fields' values (values[i] is the value text of fields[i], used
// only for the fields that overlap w); an unsigned long long expression.
std::string sort_word_expr(const SortLayout& layout, size_t w,
                           const std::vector<std::string>& values);
// The attribute's value (its storage type) of field f, which lies inside word w, from
// that word's text.
std::string sort_field_decode(const SortLayout& layout, const SortField& f, size_t w,
                              std::string_view word);

}  // namespace ranc::codegen
