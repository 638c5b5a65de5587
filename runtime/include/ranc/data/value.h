// A single typed scalar (literals, host relation cells in the reference executor).
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <variant>

#include "ranc/data/type.h"

namespace ranc {

// A typed scalar value, or a typed NULL. Dates hold days since 1970-01-01; strings hold
// the text itself (dictionary codes exist only inside columns). A NULL keeps its type and
// the type's zero as its payload (false, 0, 0.0, 1970-01-01, ''), so the accessors of a
// NULL return that zero: callers that care test is_null() first.
class Value {
 public:
  Value() : type_(Type::I32), v_(int32_t{0}) {}
  static Value null(Type t);
  // The type's zero (false, 0, 0.0, 1970-01-01, ''): what a NULL stores.
  static Value zero(Type t);
  static Value boolean(bool b) { return Value(Type::Bool, b); }
  static Value i32(int32_t x) { return Value(Type::I32, x); }
  static Value i64(int64_t x) { return Value(Type::I64, x); }
  static Value f32(float x) { return Value(Type::F32, x); }
  static Value f64(double x) { return Value(Type::F64, x); }
  static Value date(int32_t days) { return Value(Type::Date, days); }
  static Value string(std::string s) { return Value(Type::String, std::move(s)); }

  Type type() const { return type_; }
  bool is_null() const { return null_; }
  bool as_bool() const { return std::get<bool>(v_); }
  int32_t as_i32() const { return std::get<int32_t>(v_); }  // i32 and date
  int64_t as_i64() const { return std::get<int64_t>(v_); }
  float as_f32() const { return std::get<float>(v_); }
  double as_f64() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }

  // Any integer-like value (bool, i32, i64, date) widened to int64.
  int64_t to_int64() const;
  // Any numeric value (or bool/date) as double.
  double to_double() const;

  // Text as the printer and the table writer show it: dates as YYYY-MM-DD,
  // floats with up to 17 significant digits (shortest round-trip), bools true/false,
  // NULL as NULL.
  std::string str() const;
  // A literal as it would be written in a program ('text', date '1994-01-01', 1.5f,
  // cast(null as i32), ...).
  std::string literal_str() const;

  // Total order used by sort, grouping, distinct and set operations (see the
  // semantics in ranc/ir/program.h): values of the same type; NULL before every other
  // value and equal to NULL; floats by IEEE totalOrder (-NaN < -inf < ... < -0.0 <
  // +0.0 < ... < +inf < +NaN); strings by bytes.
  // Comparing values of different types is an InternalError.
  friend std::strong_ordering total_compare(const Value& a, const Value& b);
  friend bool operator==(const Value& a, const Value& b) {
    return total_compare(a, b) == std::strong_ordering::equal;
  }

 private:
  template <typename T>
  Value(Type t, T x) : type_(t), v_(std::move(x)) {}
  Type type_;
  bool null_ = false;
  std::variant<bool, int32_t, int64_t, float, double, std::string> v_;
};

std::strong_ordering total_compare(const Value& a, const Value& b);
// Total order on floating values by IEEE totalOrder (bit pattern order).
std::strong_ordering total_compare_f64(double a, double b);
std::strong_ordering total_compare_f32(float a, float b);

}  // namespace ranc
