// Typed scalar values: text forms and the total order.
#include "ranc/data/value.h"

#include <fmt/format.h>

#include <bit>
#include <charconv>
#include <cmath>

#include "ranc/data/error.h"

namespace ranc {

Value Value::null(Type t) {
  Value v = zero(t);
  v.null_ = true;
  return v;
}

Value Value::zero(Type t) {
  Value v;
  switch (t) {
    case Type::Bool:
      v = boolean(false);
      break;
    case Type::I32:
      v = i32(0);
      break;
    case Type::I64:
      v = i64(0);
      break;
    case Type::F32:
      v = f32(0);
      break;
    case Type::F64:
      v = f64(0);
      break;
    case Type::Date:
      v = date(0);
      break;
    case Type::String:
      v = string("");
      break;
  }
  return v;
}

int64_t Value::to_int64() const {
  switch (type_) {
    case Type::Bool:
      return as_bool() ? 1 : 0;
    case Type::I32:
    case Type::Date:
      return as_i32();
    case Type::I64:
      return as_i64();
    default:
      throw InternalError("to_int64 on a non-integer value");
  }
}

double Value::to_double() const {
  switch (type_) {
    case Type::F32:
      return as_f32();
    case Type::F64:
      return as_f64();
    case Type::String:
      throw InternalError("to_double on a string value");
    default:
      return static_cast<double>(to_int64());
  }
}

template <typename F>
static std::string shortest(F x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

std::string Value::str() const {
  if (null_) return "NULL";
  switch (type_) {
    case Type::Bool:
      return as_bool() ? "true" : "false";
    case Type::I32:
      return std::to_string(as_i32());
    case Type::I64:
      return std::to_string(as_i64());
    case Type::F32:
      return shortest(as_f32());
    case Type::F64:
      return shortest(as_f64());
    case Type::Date:
      return format_date(as_i32());
    case Type::String:
      return as_string();
  }
  return "?";
}

std::string Value::literal_str() const {
  if (null_) return fmt::format("cast(null as {})", type_name(type_));
  switch (type_) {
    case Type::String: {
      std::string s = "'";
      for (char c : as_string()) {
        if (c == '\'')
          s += "''";
        else
          s += c;
      }
      return s + "'";
    }
    case Type::Date:
      return fmt::format("date '{}'", format_date(as_i32()));
    case Type::I64:
      return fmt::format("{}L", as_i64());
    case Type::F32: {
      std::string t = shortest(as_f32());
      return t + "f";
    }
    case Type::F64: {
      std::string t = shortest(as_f64());
      if (t.find_first_of(".eninf") == std::string::npos) t += ".0";
      return t;
    }
    default:
      return str();
  }
}

static uint64_t order_bits(double x) {
  uint64_t b = std::bit_cast<uint64_t>(x);
  return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
}
static uint32_t order_bits(float x) {
  uint32_t b = std::bit_cast<uint32_t>(x);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

std::strong_ordering total_compare_f64(double a, double b) {
  return order_bits(a) <=> order_bits(b);
}
std::strong_ordering total_compare_f32(float a, float b) {
  return order_bits(a) <=> order_bits(b);
}

std::strong_ordering total_compare(const Value& a, const Value& b) {
  if (a.type_ != b.type_)
    throw InternalError(
        fmt::format("comparing values of types {} and {}", type_name(a.type_), type_name(b.type_)));
  if (a.null_ || b.null_) return b.null_ <=> a.null_;  // NULL first; NULL = NULL
  switch (a.type_) {
    case Type::Bool:
      return a.as_bool() <=> b.as_bool();
    case Type::I32:
    case Type::Date:
      return a.as_i32() <=> b.as_i32();
    case Type::I64:
      return a.as_i64() <=> b.as_i64();
    case Type::F32:
      return total_compare_f32(a.as_f32(), b.as_f32());
    case Type::F64:
      return total_compare_f64(a.as_f64(), b.as_f64());
    case Type::String: {
      int c = a.as_string().compare(b.as_string());
      return c < 0 ? std::strong_ordering::less
                   : (c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal);
    }
  }
  return std::strong_ordering::equal;
}

}  // namespace ranc
