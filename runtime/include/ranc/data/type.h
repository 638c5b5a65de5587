// Scalar types of ranc's data model (DESIGN.md section 2) and their properties.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ranc {

// The scalar types. On the device and in host columns:
//   bool   -> uint8_t (0 or 1)
//   i32    -> int32_t
//   i64    -> int64_t
//   f32    -> float
//   f64    -> double
//   date   -> int32_t, days since 1970-01-01 (proleptic Gregorian)
//   string -> int32_t code into the column's order-preserving dictionary
enum class Type : uint8_t { Bool, I32, I64, F32, F64, Date, String };

inline constexpr Type kAllTypes[] = {Type::Bool, Type::I32,  Type::I64,   Type::F32,
                                     Type::F64,  Type::Date, Type::String};

// The name used in messages, the printer and the .ra language ("i32", "date", ...).
std::string_view type_name(Type t);
// Parses a type name as written by type_name (also accepts "int"/"bigint"/"double"...).
std::optional<Type> parse_type_name(std::string_view name);

inline bool is_integer(Type t) {
  return t == Type::I32 || t == Type::I64;
}
inline bool is_floating(Type t) {
  return t == Type::F32 || t == Type::F64;
}
inline bool is_numeric(Type t) {
  return is_integer(t) || is_floating(t);
}
// Bytes per value in a column (host and device).
int type_size(Type t);

// Days since 1970-01-01 for a civil date; valid for years -32767..32767.
int32_t days_from_civil(int64_t y, unsigned m, unsigned d);
struct CivilDate {
  int64_t year;
  unsigned month;
  unsigned day;
};
CivilDate civil_from_days(int32_t days);
// Parses "YYYY-MM-DD" strictly (checks month and day ranges); nullopt when malformed.
std::optional<int32_t> parse_date(std::string_view text);
std::string format_date(int32_t days);

}  // namespace ranc
