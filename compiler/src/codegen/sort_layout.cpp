// Packed sort keys: see ranc/codegen/sort_layout.h.
#include "ranc/codegen/sort_layout.h"

#include <fmt/format.h>

#include "ranc/data/error.h"

namespace ranc::codegen {
namespace {

std::string mask_text(int bits) {
  return bits >= 64 ? "0xffffffffffffffffull" : fmt::format("0x{:x}ull", (uint64_t{1} << bits) - 1);
}

}  // namespace

int sort_field_bits(Type t) {
  switch (t) {
    case Type::Bool:
      return 1;
    case Type::I32:
    case Type::Date:
    case Type::String:
    case Type::F32:
      return 32;
    case Type::I64:
    case Type::F64:
      return 64;
  }
  throw InternalError("sort_field_bits: unknown type");
}

SortLayout sort_layout(const std::vector<Type>& types, const passes::Order& keys) {
  SortLayout l;
  for (const auto& k : keys) {
    SortField f;
    f.column = k.index;
    f.type = types.at(static_cast<size_t>(k.index));
    f.descending = k.descending;
    f.bits = sort_field_bits(f.type);
    l.total_bits += f.bits;
    l.fields.push_back(f);
  }
  int top = l.total_bits;
  for (auto& f : l.fields) {
    top -= f.bits;
    f.lsb = top;
  }
  for (int hi = l.total_bits; hi > 0; hi -= 64) {
    SortWord w;
    w.lo = hi > 64 ? hi - 64 : 0;
    w.bits = hi - w.lo;
    l.words.push_back(w);
  }
  return l;
}

bool sort_packs_whole_rows(const std::vector<Type>& types, const passes::Order& keys) {
  if (keys.empty()) return false;
  const SortLayout l = sort_layout(types, keys);
  if (l.words.size() != 1) return false;
  std::vector<bool> key(types.size(), false);
  for (const SortField& f : l.fields) key.at(static_cast<size_t>(f.column)) = true;
  for (bool k : key)
    if (!k) return false;
  const Type t = l.fields[0].type;
  const bool native =
      l.fields.size() == 1 && (is_integer(t) || t == Type::Date || t == Type::String);
  return !native;
}

std::string sort_field_encode(const SortField& f, std::string_view v) {
  std::string e;
  switch (f.type) {
    case Type::Bool:
      e = fmt::format("({} ? 1ull : 0ull)", v);
      break;
    case Type::I32:
    case Type::Date:
    case Type::String:
      e = fmt::format("(unsigned long long)((unsigned int)({}) ^ 0x80000000u)", v);
      break;
    case Type::I64:
      e = fmt::format("((unsigned long long)({}) ^ 0x8000000000000000ull)", v);
      break;
    case Type::F32:
      e = fmt::format("(unsigned long long)ranc::tpl::total_order_key({})", v);
      break;
    case Type::F64:
      e = fmt::format("ranc::tpl::total_order_key({})", v);
      break;
  }
  if (f.descending) e = fmt::format("(~{} & {})", e, mask_text(f.bits));
  return e;
}

std::string sort_word_expr(const SortLayout& l, size_t w, const std::vector<std::string>& values) {
  const SortWord& word = l.words.at(w);
  std::string s;
  for (size_t i = 0; i < l.fields.size(); ++i) {
    const SortField& f = l.fields[i];
    if (!l.overlaps(f, w)) continue;
    std::string e = sort_field_encode(f, values.at(i));
    const int shift = f.lsb - word.lo;  // |shift| < 64 for an overlapping field
    std::string part = shift > 0   ? fmt::format("({} << {})", e, shift)
                       : shift < 0 ? fmt::format("({} >> {})", e, -shift)
                                   : e;
    s += fmt::format("{}{}", s.empty() ? "" : " | ", part);
  }
  internal_check(!s.empty(), "sort_word_expr: a word without fields");
  // Bits of a field that continue above the word are shifted out of a 64-bit word but
  // must be cut from a narrower one.
  if (word.bits < 64) s = fmt::format("(({}) & {})", s, mask_text(word.bits));
  return s;
}

std::string sort_field_decode(const SortLayout& l, const SortField& f, size_t w,
                              std::string_view word) {
  internal_check(l.inside(f, w), "sort_field_decode: the field is not inside the word");
  const int shift = f.lsb - l.words[w].lo;
  std::string b = fmt::format("((unsigned long long)({}) >> {} & {})", word, shift,
                              mask_text(f.bits));
  if (f.descending) b = fmt::format("(~{} & {})", b, mask_text(f.bits));
  switch (f.type) {
    case Type::Bool:
      return fmt::format("(unsigned char){}", b);
    case Type::I32:
    case Type::Date:
    case Type::String:
      return fmt::format("(int)((unsigned int){} ^ 0x80000000u)", b);
    case Type::I64:
      return fmt::format("(long long)({} ^ 0x8000000000000000ull)", b);
    case Type::F32:
      return fmt::format("ranc::tpl::from_total_order_key((unsigned int){})", b);
    case Type::F64:
      return fmt::format("ranc::tpl::from_total_order_key((unsigned long long){})", b);
  }
  throw InternalError("sort_field_decode: unknown type");
}

}  // namespace ranc::codegen
