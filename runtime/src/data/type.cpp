// Type names and calendar arithmetic for the date type.
#include "ranc/data/type.h"

#include <charconv>

namespace ranc {

std::string_view type_name(Type t) {
  switch (t) {
    case Type::Bool:
      return "bool";
    case Type::I32:
      return "i32";
    case Type::I64:
      return "i64";
    case Type::F32:
      return "f32";
    case Type::F64:
      return "f64";
    case Type::Date:
      return "date";
    case Type::String:
      return "string";
  }
  return "?";
}

std::optional<Type> parse_type_name(std::string_view n) {
  if (n == "bool" || n == "boolean") return Type::Bool;
  if (n == "i32" || n == "int" || n == "int32" || n == "integer") return Type::I32;
  if (n == "i64" || n == "bigint" || n == "int64" || n == "long") return Type::I64;
  if (n == "f32" || n == "float" || n == "float32" || n == "real") return Type::F32;
  if (n == "f64" || n == "double" || n == "float64") return Type::F64;
  if (n == "date") return Type::Date;
  if (n == "string" || n == "str" || n == "text" || n == "varchar") return Type::String;
  return std::nullopt;
}

int type_size(Type t) {
  switch (t) {
    case Type::Bool:
      return 1;
    case Type::I64:
    case Type::F64:
      return 8;
    default:
      return 4;
  }
}

// Howard Hinnant's civil-calendar algorithms (public domain formulas).
int32_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<int32_t>(era * 146097 + static_cast<int64_t>(doe) - 719468);
}

CivilDate civil_from_days(int32_t days) {
  int64_t z = static_cast<int64_t>(days) + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {y + (m <= 2), m, d};
}

static bool leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

std::optional<int32_t> parse_date(std::string_view s) {
  // YYYY-MM-DD, optionally with a leading '-' on the year.
  if (s.size() < 10) return std::nullopt;
  size_t dash1 = s.find('-', s[0] == '-' ? 1 : 0);
  if (dash1 == std::string_view::npos || s.size() != dash1 + 6 || s[dash1 + 3] != '-')
    return std::nullopt;
  int64_t y = 0;
  unsigned m = 0, d = 0;
  auto num = [](std::string_view t, auto& out) {
    if (t.empty()) return false;
    for (char c : t)
      if (c < '0' || c > '9') return false;
    auto r = std::from_chars(t.data(), t.data() + t.size(), out);
    return r.ec == std::errc() && r.ptr == t.data() + t.size();
  };
  bool neg = s[0] == '-';
  if (!num(s.substr(neg ? 1 : 0, dash1 - (neg ? 1 : 0)), y)) return std::nullopt;
  if (neg) y = -y;
  if (!num(s.substr(dash1 + 1, 2), m) || !num(s.substr(dash1 + 4, 2), d)) return std::nullopt;
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (y < -32767 || y > 32767 || m < 1 || m > 12 || d < 1) return std::nullopt;
  unsigned dim = kDays[m - 1] + (m == 2 && leap(y) ? 1 : 0);
  if (d > dim) return std::nullopt;
  return days_from_civil(y, m, d);
}

std::string format_date(int32_t days) {
  CivilDate c = civil_from_days(days);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u", static_cast<long long>(c.year), c.month,
                c.day);
  return buf;
}

}  // namespace ranc
