// The CSV / .tbl reader and writer. The reader maps the file, splits the body
// into chunks at record boundaries, parses the chunks on worker threads into typed
// per-chunk columns (strings as chunk-local codes of an interning table whose keys
// point into the mapped text), then merges the chunk dictionaries into one sorted
// dictionary and concatenates. Errors carry the byte position of the bad field;
// its line and column are computed only when an error is reported.
#include "ranc/io/csv.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "io_util.h"
#include "ranc/data/error.h"

namespace ranc {

std::optional<TextFormat> format_from_path(std::string_view path) {
  auto ends_with = [&](std::string_view ext) {
    if (path.size() < ext.size()) return false;
    for (size_t i = 0; i < ext.size(); ++i) {
      char c = path[path.size() - ext.size() + i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != ext[i]) return false;
    }
    return true;
  };
  if (ends_with(".tbl")) return TextFormat::Tbl;
  if (ends_with(".csv")) return TextFormat::Csv;
  return std::nullopt;
}

namespace {

using io_detail::parallel_for;

[[noreturn]] void data_error(std::string msg, SourceLoc loc = {}, std::string hint = {}) {
  throw UserError(Diagnostic{ErrorKind::Data, std::move(msg), std::move(loc), std::move(hint)});
}

uint64_t hash_bytes(const char* p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xff51afd7ed558ccdull);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  std::memcpy(&w, p, n);
  h = (h ^ w) * 0x94d049bb133111ebull;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  return h;
}

// Assigns dense local codes to distinct strings; keys are views into text that
// outlives the table (the input buffer or the chunk's unescaped strings).
class StringInterner {
 public:
  StringInterner() : slots_(64), mask_(63) {}
  int32_t intern(std::string_view s) {
    uint64_t h = hash_bytes(s.data(), s.size());
    size_t i = h & mask_;
    for (;;) {
      Slot& slot = slots_[i];
      if (slot.code < 0) {
        slot.hash = h;
        slot.code = static_cast<int32_t>(strings.size());
        strings.push_back(s);
        if (strings.size() * 2 > slots_.size()) grow();
        return static_cast<int32_t>(strings.size() - 1);
      }
      if (slot.hash == h && strings[static_cast<size_t>(slot.code)] == s) return slot.code;
      i = (i + 1) & mask_;
    }
  }
  std::vector<std::string_view> strings;

 private:
  struct Slot {
    uint64_t hash = 0;
    int32_t code = -1;
  };
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.code < 0) continue;
      size_t i = s.hash & mask_;
      while (slots_[i].code >= 0) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  size_t mask_;
};

// What a chunk produced: typed columns (string columns hold local codes) and the
// validity bytes of nullable ones.
struct ChunkResult {
  std::vector<Column::Storage> columns;
  std::vector<StringInterner> interners;       // per attribute; used by string columns
  std::vector<std::vector<uint8_t>> validity;  // per attribute; used by nullable columns
  std::deque<std::string> owned;               // unescaped quoted strings (stable addresses)
  size_t rows = 0;
  const char* end = nullptr;  // where parsing stopped (== chunk end when all is well)
  bool failed = false;
  const char* error_pos = nullptr;
  std::string error;
  std::string error_hint;
};

Column::Storage storage_for(Type t) {
  // An empty column's storage has the right alternative for the type.
  return Column(t).storage();
}

std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string shown(std::string_view s) {
  if (s.size() > 40) return std::string(s.substr(0, 37)) + "...";
  return std::string(s);
}

// The stored value of a NULL row: the type's zero; for strings the code of "".
void push_zero(Type t, Column::Storage& col, StringInterner& strings) {
  switch (t) {
    case Type::Bool:
      std::get<std::vector<uint8_t>>(col).push_back(0);
      break;
    case Type::I32:
    case Type::Date:
      std::get<std::vector<int32_t>>(col).push_back(0);
      break;
    case Type::I64:
      std::get<std::vector<int64_t>>(col).push_back(0);
      break;
    case Type::F32:
      std::get<std::vector<float>>(col).push_back(0.0f);
      break;
    case Type::F64:
      std::get<std::vector<double>>(col).push_back(0.0);
      break;
    case Type::String:
      std::get<std::vector<int32_t>>(col).push_back(strings.intern(std::string_view("")));
      break;
  }
}

// The null_marker in effect ("" when only empty fields are NULL), checked so that a
// field can hold it unquoted and trimming cannot change it.
std::string_view null_marker(const CsvOptions& opt) {
  if (!opt.null_marker) return {};
  const std::string& m = *opt.null_marker;
  auto refuse = [&](std::string_view why) {
    throw UserError(Diagnostic{ErrorKind::InvalidArgument,
                               fmt::format("the null marker '{}' {}", shown(m), why), SourceLoc{},
                               std::string()});
  };
  if (m.find_first_of("\n\r") != std::string::npos) refuse("holds a line break");
  if (m.find(opt.delimiter) != std::string::npos)
    refuse(fmt::format("holds the delimiter '{}'", opt.delimiter));
  if (opt.quoting && !m.empty() && m[0] == '"') refuse("begins with a quote");
  if (trim_spaces(m) != m) refuse("begins or ends with a space or tab");
  return m;
}

class Parser {
 public:
  // slot[c]: where attribute c of the file goes in the result, -1 when skipped.
  Parser(std::string_view text, const Schema& schema, const CsvOptions& opt,
         std::vector<int32_t> slot, size_t kept)
      : begin_(text.data()),
        end_(text.data() + text.size()),
        schema_(schema),
        opt_(opt),
        slot_(std::move(slot)),
        kept_(kept),
        marker_(null_marker(opt)) {
    for (size_t c = 0; c < schema_.size(); ++c)
      any_nullable_ = any_nullable_ || (slot_[c] >= 0 && schema_[c].nullable);
  }

  // Parses the records in [b, e); b is at a record start.
  void parse_chunk(const char* b, const char* e, ChunkResult& out,
                   std::atomic<uint64_t>* progress) const;

  // The fields of the header record starting at p; returns the position after it.
  const char* parse_header(const char* p, std::vector<std::string>& names,
                           std::vector<const char*>& starts) const;

  const char* begin() const { return begin_; }
  const char* end() const { return end_; }

 private:
  struct Field {
    std::string_view text;
    bool quoted = false;         // "...": never NULL
    bool quoted_escape = false;  // text must be unescaped ("" -> ")
    const char* start;
  };
  template <bool Nulls>
  void parse_rows(const char* b, const char* e, ChunkResult& out,
                  std::atomic<uint64_t>* progress) const;
  template <bool Nulls>
  bool convert(const Field& f, const Attribute& attr, size_t slot, ChunkResult& out,
               std::string& scratch) const;
  // Whether an unquoted field of a nullable attribute is NULL (csv.h says which).
  bool null_text(Type t, std::string_view text) const {
    if (t != Type::String) text = trim_spaces(text);
    return text.empty() || text == marker_;
  }
  // The hint of a bad value whose (trimmed) text would be NULL elsewhere, or "".
  std::string null_hint(const Attribute& attr, const Field& f, std::string_view trimmed) const;
  std::string missing_field_message(size_t c) const;
  // Scans one field at p. Returns the position of its terminator (delimiter,
  // '\n', '\r' before '\n', or end). Sets err on malformed quoting.
  const char* scan_field(const char* p, Field& f, const char*& err_pos, const char*& err) const;
  bool at_line_end(const char* p) const {
    return p == end_ || *p == '\n' || (*p == '\r' && (p + 1 == end_ || p[1] == '\n'));
  }
  const char* begin_;
  const char* end_;
  const Schema& schema_;
  const CsvOptions& opt_;
  std::vector<int32_t> slot_;
  size_t kept_;
  std::string_view marker_;
  bool any_nullable_ = false;
};

const char* Parser::scan_field(const char* p, Field& f, const char*& err_pos,
                               const char*& err) const {
  f.start = p;
  f.quoted = false;
  f.quoted_escape = false;
  const char delim = opt_.delimiter;
  if (opt_.quoting && p < end_ && *p == '"') {
    const char* q = p + 1;
    for (;;) {
      const void* hit = std::memchr(q, '"', static_cast<size_t>(end_ - q));
      if (!hit) {
        err_pos = p;
        err = "unterminated quoted field";
        return end_;
      }
      const char* h = static_cast<const char*>(hit);
      if (h + 1 < end_ && h[1] == '"') {
        f.quoted_escape = true;
        q = h + 2;
        continue;
      }
      f.text = std::string_view(p + 1, static_cast<size_t>(h - p - 1));
      f.quoted = true;
      const char* after = h + 1;
      if (after < end_ && *after != delim && !at_line_end(after)) {
        err_pos = after;
        err =
            "unexpected character after a closing quote (a quote inside a quoted field is "
            "written \"\")";
      }
      return after;
    }
  }
  const char* q = p;
  while (q < end_ && *q != delim && *q != '\n') ++q;
  const char* stop = q;
  if (q > p && (q == end_ || *q == '\n') && q[-1] == '\r') --q;
  f.text = std::string_view(p, static_cast<size_t>(q - p));
  return (stop < end_ && *stop == '\n' && q < stop) ? q : stop;
}

const char* Parser::parse_header(const char* p, std::vector<std::string>& names,
                                 std::vector<const char*>& starts) const {
  for (;;) {
    Field f{};
    const char* err_pos = nullptr;
    const char* err = nullptr;
    p = scan_field(p, f, err_pos, err);
    if (err) throw std::pair<const char*, std::string>(err_pos, err);
    std::string name(f.text);
    if (f.quoted_escape) {
      std::string u;
      for (size_t i = 0; i < name.size(); ++i) {
        u += name[i];
        if (name[i] == '"') ++i;
      }
      name = std::move(u);
    }
    names.push_back(trim_spaces(name) == name ? name : std::string(trim_spaces(name)));
    starts.push_back(f.start);
    if (p < end_ && *p == opt_.delimiter) {
      ++p;
      if (opt_.trailing_delimiter && at_line_end(p) && names.size() == schema_.size()) break;
      continue;
    }
    break;
  }
  if (p < end_ && *p == '\r') ++p;
  if (p < end_ && *p == '\n') ++p;
  return p;
}

void Parser::parse_chunk(const char* b, const char* e, ChunkResult& out,
                         std::atomic<uint64_t>* progress) const {
  // Attributes that are not nullable pay nothing for NULLs: the NULL tests are
  // compiled in only when some kept attribute is nullable.
  if (any_nullable_)
    parse_rows<true>(b, e, out, progress);
  else
    parse_rows<false>(b, e, out, progress);
}

std::string Parser::null_hint(const Attribute& attr, const Field& f,
                              std::string_view trimmed) const {
  if (!trimmed.empty() && trimmed != marker_) return {};
  const std::string what =
      trimmed.empty() ? std::string("an empty field") : fmt::format("'{}'", marker_);
  if (!attr.nullable && !f.quoted)
    return fmt::format("to read {} as NULL, declare the attribute nullable: '{} {} null'", what,
                       attr.name, type_name(attr.type));
  if (attr.nullable && f.quoted)
    return fmt::format("a quoted field is never NULL: write {} without quotes for NULL", what);
  return {};
}

// Converts field f of attribute attr into column `slot` of out; false (with out's
// error set) when the text is not a value of the attribute's type.
template <bool Nulls>
bool Parser::convert(const Field& f, const Attribute& attr, size_t slot, ChunkResult& out,
                     std::string& scratch) const {
  auto fail = [&](const char* pos, std::string msg, std::string hint) {
    out.failed = true;
    out.error_pos = pos;
    out.error = std::move(msg);
    out.error_hint = std::move(hint);
    out.end = pos;
    return false;
  };
  auto& col = out.columns[slot];
  if constexpr (Nulls) {
    if (attr.nullable) {
      const bool null = !f.quoted && null_text(attr.type, f.text);
      out.validity[slot].push_back(null ? 0 : 1);
      if (null) {
        push_zero(attr.type, col, out.interners[slot]);
        return true;
      }
    }
  }
  std::string_view text = f.text;
  if (f.quoted_escape) {
    scratch.clear();
    for (size_t i = 0; i < text.size(); ++i) {
      scratch += text[i];
      if (text[i] == '"') ++i;
    }
    text = scratch;
  }
  auto bad = [&](std::string_view why) {
    std::string_view t = trim_spaces(text);
    std::string hint = null_hint(attr, f, t);
    if (t.empty())
      return fail(f.start,
                  fmt::format("empty field is not a valid {} for attribute {}",
                              type_name(attr.type), attr.name),
                  std::move(hint));
    return fail(f.start, fmt::format("'{}' {} for attribute {}", shown(t), why, attr.name),
                std::move(hint));
  };
  switch (attr.type) {
    case Type::Bool: {
      std::string_view t = trim_spaces(text);
      auto eq = [&](std::string_view w) {
        if (t.size() != w.size()) return false;
        for (size_t i = 0; i < t.size(); ++i)
          if ((t[i] | 0x20) != w[i]) return false;
        return true;
      };
      uint8_t v;
      if (t == "1" || eq("true") || eq("t"))
        v = 1;
      else if (t == "0" || eq("false") || eq("f"))
        v = 0;
      else
        return bad("is not a valid bool (true/false/t/f/1/0)");
      std::get<std::vector<uint8_t>>(col).push_back(v);
      break;
    }
    case Type::I32:
    case Type::I64: {
      std::string_view t = trim_spaces(text);
      if (!t.empty() && t[0] == '+' && t.size() > 1 && t[1] != '-') t.remove_prefix(1);
      int64_t v = 0;
      auto r = std::from_chars(t.data(), t.data() + t.size(), v);
      if (r.ec == std::errc::result_out_of_range ||
          (r.ec == std::errc() && r.ptr == t.data() + t.size() && attr.type == Type::I32 &&
           (v < INT32_MIN || v > INT32_MAX)))
        return bad(fmt::format("is out of range for {}", type_name(attr.type)));
      if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size())
        return bad(fmt::format("is not a valid {}", type_name(attr.type)));
      if (attr.type == Type::I32)
        std::get<std::vector<int32_t>>(col).push_back(static_cast<int32_t>(v));
      else
        std::get<std::vector<int64_t>>(col).push_back(v);
      break;
    }
    case Type::F32:
    case Type::F64: {
      std::string_view t = trim_spaces(text);
      if (!t.empty() && t[0] == '+' && t.size() > 1 && t[1] != '-') t.remove_prefix(1);
      if (attr.type == Type::F64) {
        double v = 0;
        auto r = std::from_chars(t.data(), t.data() + t.size(), v);
        if (t.empty() || r.ptr != t.data() + t.size() ||
            (r.ec != std::errc() && r.ec != std::errc::result_out_of_range))
          return bad("is not a valid f64");
        if (r.ec == std::errc::result_out_of_range) return bad("is out of range for f64");
        std::get<std::vector<double>>(col).push_back(v);
      } else {
        float v = 0;
        auto r = std::from_chars(t.data(), t.data() + t.size(), v);
        if (t.empty() || r.ptr != t.data() + t.size() ||
            (r.ec != std::errc() && r.ec != std::errc::result_out_of_range))
          return bad("is not a valid f32");
        if (r.ec == std::errc::result_out_of_range) return bad("is out of range for f32");
        std::get<std::vector<float>>(col).push_back(v);
      }
      break;
    }
    case Type::Date: {
      std::string_view t = trim_spaces(text);
      auto d = parse_date(t);
      if (!d) return bad("is not a valid date (YYYY-MM-DD)");
      std::get<std::vector<int32_t>>(col).push_back(*d);
      break;
    }
    case Type::String: {
      std::string_view s = text;
      if (f.quoted_escape) s = out.owned.emplace_back(scratch);
      std::get<std::vector<int32_t>>(col).push_back(out.interners[slot].intern(s));
      break;
    }
  }
  return true;
}

template <bool Nulls>
void Parser::parse_rows(const char* b, const char* e, ChunkResult& out,
                        std::atomic<uint64_t>* progress) const {
  const size_t ncols = schema_.size();
  out.columns.clear();
  out.interners.assign(kept_, StringInterner{});
  out.validity.assign(kept_, {});
  for (size_t c = 0; c < ncols; ++c)
    if (slot_[c] >= 0) out.columns.push_back(storage_for(schema_[c].type));
  // Reserve from the row count estimated from the first 64 KiB, with 10% slack.
  const char* sample_end = b + std::min<ptrdiff_t>(e - b, 1 << 16);
  size_t sample_lines = static_cast<size_t>(std::count(b, sample_end, '\n'));
  size_t guess = static_cast<size_t>(e - b) / (16 + 8 * ncols) + 16;
  if (sample_lines > 0)
    guess =
        static_cast<size_t>(static_cast<double>(e - b) * 1.1 * static_cast<double>(sample_lines) /
                            static_cast<double>(sample_end - b)) +
        16;
  for (auto& col : out.columns) std::visit([guess](auto& v) { v.reserve(guess); }, col);
  if constexpr (Nulls)
    for (size_t c = 0; c < ncols; ++c)
      if (slot_[c] >= 0 && schema_[c].nullable)
        out.validity[static_cast<size_t>(slot_[c])].reserve(guess);

  const char delim = opt_.delimiter;
  std::string scratch;
  const char* p = b;
  const char* last_report = b;
  auto fail = [&](const char* pos, std::string msg, std::string hint = {}) {
    out.failed = true;
    out.error_pos = pos;
    out.error = std::move(msg);
    out.error_hint = std::move(hint);
    out.end = pos;
  };

  while (p < e) {
    if (progress && p - last_report > (4 << 20)) {
      progress->fetch_add(static_cast<uint64_t>(p - last_report), std::memory_order_relaxed);
      last_report = p;
    }
    if (*p == '\n' || (*p == '\r' && p + 1 < end_ && p[1] == '\n')) {
      // Blank lines are fine only at the end of the input.
      const char* q = p;
      while (q < end_ && (*q == '\n' || *q == '\r' || *q == ' ' || *q == '\t')) ++q;
      if (q == end_) {
        p = e;
        break;
      }
      return fail(p, fmt::format("empty line; expected {} fields", ncols),
                  ncols == 1 && schema_[0].nullable
                      ? "a NULL in the only attribute is not an empty line: write it as the "
                        "null marker (CsvOptions::null_marker)"
                      : "");
    }
    for (size_t c = 0; c < ncols; ++c) {
      Field f{};
      const char* err_pos = nullptr;
      const char* err = nullptr;
      p = scan_field(p, f, err_pos, err);
      if (err) return fail(err_pos, err);
      // A skipped attribute is scanned, never converted.
      const int32_t slot = slot_[c];
      if (slot >= 0 && !convert<Nulls>(f, schema_[c], static_cast<size_t>(slot), out, scratch))
        return;
      if (c + 1 < ncols) {
        if (p < end_ && *p == delim) {
          ++p;
        } else {
          return fail(p, missing_field_message(c));
        }
      }
    }
    if (opt_.trailing_delimiter && p < end_ && *p == delim && at_line_end(p + 1)) ++p;
    if (p < end_ && *p == '\r' && (p + 1 == end_ || p[1] == '\n')) ++p;
    if (p < end_ && *p != '\n') {
      // Count the fields of this line for the message (ignoring quoting).
      size_t extra = 0;
      const char* q = p;
      while (q < end_ && *q != '\n') {
        if (*q == delim) ++extra;
        ++q;
      }
      return fail(p, fmt::format("line has more than {} fields (about {}); expected {}", ncols,
                                 ncols + std::max<size_t>(extra, 1), ncols));
    }
    if (p < end_) ++p;
    ++out.rows;
  }
  if (progress) progress->fetch_add(static_cast<uint64_t>(p - last_report));
  out.end = p;
}

std::string Parser::missing_field_message(size_t c) const {
  return fmt::format("line has {} field{} but {} are expected (attribute {} is missing)", c + 1,
                     c == 0 ? "" : "s", schema_.size(), schema_[c + 1].name);
}

SourceLoc locate(std::string_view text, const char* pos, std::string_view name) {
  size_t off = static_cast<size_t>(pos - text.data());
  uint32_t line = 1 + static_cast<uint32_t>(std::count(text.begin(), text.begin() + off, '\n'));
  size_t nl = text.rfind('\n', off == 0 ? 0 : off - 1);
  size_t line_start = (nl == std::string_view::npos || nl >= off) ? 0 : nl + 1;
  return SourceLoc{std::string(name), line, static_cast<uint32_t>(off - line_start + 1)};
}

// Sorting distinct strings: an MSD sort on 16-byte windows. Each entry's key is
// the window at the current depth as two big-endian words (zero-padded) and how
// many bytes of the string remain (17 = more than the window); comparing keys
// compares the strings' bytes in that window as memcmp does, shorter first. Runs
// that tie on a full window are sorted again on the next window. Most strings are
// never touched after their keys are built, which keeps the cache happy.
struct SortEntry {
  uint64_t hi, lo;
  int32_t code;
  uint16_t chunk;
  uint8_t rem;
};

inline uint64_t load_be(const char* p, size_t n) {
  unsigned char b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::memcpy(b, p, std::min<size_t>(n, 8));
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | b[i];
  return v;
}

inline void set_key(SortEntry& e, std::string_view s, size_t depth) {
  size_t off = depth * 16;
  size_t n = s.size() > off ? s.size() - off : 0;
  const char* p = s.data() + std::min(off, s.size());
  e.hi = n ? load_be(p, n) : 0;
  e.lo = n > 8 ? load_be(p + 8, n - 8) : 0;
  e.rem = static_cast<uint8_t>(std::min<size_t>(n, 17));
}

template <typename StringOf>
void msd_sort(SortEntry* b, SortEntry* e, size_t depth, const StringOf& str) {
  if (e - b < 2) return;
  if (depth > 0)
    for (SortEntry* x = b; x != e; ++x) set_key(*x, str(*x), depth);
  std::sort(b, e, [](const SortEntry& x, const SortEntry& y) {
    if (x.hi != y.hi) return x.hi < y.hi;
    if (x.lo != y.lo) return x.lo < y.lo;
    return x.rem < y.rem;
  });
  for (SortEntry* r = b; r != e;) {
    SortEntry* q = r + 1;
    while (q != e && q->hi == r->hi && q->lo == r->lo && q->rem == r->rem) ++q;
    if (r->rem == 17 && q - r > 1) msd_sort(r, q, depth + 1, str);
    r = q;
  }
}

// Merges the chunk-local dictionaries of string column c into one sorted
// dictionary; remap[k][local] is the global code of chunk k's local code. The
// entries are split by their first two bytes into buckets (equal strings share one),
// which are sorted, deduplicated and written out on `threads` threads.
std::shared_ptr<const Dictionary> merge_strings(std::vector<ChunkResult>& chunks, size_t c,
                                                std::vector<std::vector<int32_t>>& remap,
                                                unsigned threads) {
  const size_t k = chunks.size();
  auto str = [&](const SortEntry& x) {
    return chunks[x.chunk].interners[c].strings[static_cast<size_t>(x.code)];
  };
  std::vector<size_t> first(k + 1, 0);
  for (size_t i = 0; i < k; ++i) first[i + 1] = first[i] + chunks[i].interners[c].strings.size();
  const size_t total = first[k];
  std::vector<SortEntry> entries(total);
  remap.assign(k, {});
  parallel_for(k, threads, [&](size_t i) {
    const auto& v = chunks[i].interners[c].strings;
    remap[i].resize(v.size());
    for (size_t j = 0; j < v.size(); ++j) {
      SortEntry& x = entries[first[i] + j];
      x = SortEntry{0, 0, static_cast<int32_t>(j), static_cast<uint16_t>(i), 0};
      set_key(x, v[j], 0);
    }
  });
  // Buckets by the first two bytes (the top 16 bits of the first key word).
  constexpr size_t kBuckets = size_t{1} << 16;
  std::vector<size_t> start(kBuckets + 1, 0);
  for (const SortEntry& x : entries) ++start[(x.hi >> 48) + 1];
  for (size_t b = 0; b < kBuckets; ++b) start[b + 1] += start[b];
  std::vector<SortEntry> sorted(total);
  {
    std::vector<size_t> pos(start.begin(), start.end() - 1);
    for (const SortEntry& x : entries) sorted[pos[x.hi >> 48]++] = x;
  }
  std::vector<SortEntry>().swap(entries);
  std::vector<size_t> used;
  for (size_t b = 0; b < kBuckets; ++b)
    if (start[b + 1] > start[b]) used.push_back(b);
  // Sort each bucket and count its distinct strings.
  std::vector<size_t> distinct(used.size() + 1, 0);
  parallel_for(used.size(), threads, [&](size_t u) {
    SortEntry* b = sorted.data() + start[used[u]];
    SortEntry* e = sorted.data() + start[used[u] + 1];
    msd_sort(b, e, 0, str);
    size_t n = 0;
    std::string_view last;
    for (SortEntry* x = b; x != e; ++x) {
      std::string_view s = str(*x);
      if (x == b || s != last) ++n;
      last = s;
    }
    distinct[u + 1] = n;
  });
  for (size_t u = 0; u < used.size(); ++u) distinct[u + 1] += distinct[u];
  std::vector<std::string> merged(distinct.back());
  parallel_for(used.size(), threads, [&](size_t u) {
    const SortEntry* b = sorted.data() + start[used[u]];
    const SortEntry* e = sorted.data() + start[used[u] + 1];
    size_t out = distinct[u];
    std::string_view last;
    for (const SortEntry* x = b; x != e; ++x) {
      std::string_view s = str(*x);
      if (x != b && s == last) {
        remap[x->chunk][static_cast<size_t>(x->code)] = static_cast<int32_t>(out - 1);
        continue;
      }
      merged[out].assign(s);
      remap[x->chunk][static_cast<size_t>(x->code)] = static_cast<int32_t>(out);
      ++out;
      last = s;
    }
  });
  return Dictionary::from_strings(std::move(merged));
}

unsigned thread_count(const CsvOptions& o) {
  unsigned t = o.num_threads ? o.num_threads : std::thread::hardware_concurrency();
  return std::max(1u, t);
}

HostRelation parse_text(std::string_view text, const Schema& schema, const CsvOptions& opt,
                        std::string_view name) {
  if (schema.size() == 0)
    data_error("cannot read a relation without attributes", {std::string(name)});
  // The attributes kept, in schema order.
  std::vector<int32_t> slot(schema.size(), opt.columns.empty() ? 0 : -1);
  for (const auto& c : opt.columns) {
    auto i = schema.find(c);
    if (!i)
      data_error(fmt::format("cannot keep attribute '{}': the schema of '{}' has no such attribute",
                             c, name),
                 {std::string(name)});
    slot[*i] = 0;
  }
  Schema kept;
  for (size_t c = 0; c < schema.size(); ++c)
    if (slot[c] >= 0) {
      slot[c] = static_cast<int32_t>(kept.size());
      kept.attributes.push_back(schema[c]);
    }
  while (kept.key_size < schema.key_size && slot[kept.key_size] >= 0) ++kept.key_size;
  if (kept.size() == 0)
    data_error(fmt::format("no attribute of '{}' is kept", name), {std::string(name)});
  Parser parser(text, schema, opt, slot, kept.size());
  const char* p = text.data();
  const char* end = p + text.size();
  const uint64_t total = text.size();
  if (text.size() >= 3 && std::memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;  // UTF-8 BOM
  auto error_at = [&](const char* pos, std::string msg, std::string hint = {}) {
    throw UserError(
        Diagnostic{ErrorKind::Data, std::move(msg), locate(text, pos, name), std::move(hint)});
  };

  if (opt.header) {
    if (p == end)
      data_error("empty input; expected a header line naming the attributes", {std::string(name)});
    std::vector<std::string> names;
    std::vector<const char*> starts;
    try {
      p = parser.parse_header(p, names, starts);
    } catch (const std::pair<const char*, std::string>& e) {
      error_at(e.first, "in the header: " + e.second);
    }
    std::string expected;
    for (size_t i = 0; i < schema.size(); ++i) expected += (i ? ", " : "") + schema[i].name;
    for (size_t i = 0; i < std::min(names.size(), schema.size()); ++i)
      if (names[i] != schema[i].name)
        error_at(starts[i], fmt::format("header column {} is '{}' but attribute {} of the schema "
                                        "is '{}' (expected header: {})",
                                        i + 1, shown(names[i]), i + 1, schema[i].name, expected));
    if (names.size() != schema.size())
      error_at(
          starts[std::min(names.size(), schema.size()) - (names.size() > schema.size() ? 0 : 1)],
          fmt::format("header has {} columns but the schema has {} attributes (expected "
                      "header: {})",
                      names.size(), schema.size(), expected));
  }

  // Split the body into chunks at record boundaries.
  const unsigned threads = thread_count(opt);
  const size_t body = static_cast<size_t>(end - p);
  size_t nchunks = body < (1u << 20) ? 1 : std::min<size_t>({threads * 4, body >> 18, 4096});
  std::vector<const char*> bounds{p};
  if (nchunks > 1) {
    std::vector<int> parity(nchunks, 0);
    bool quotes = opt.quoting && std::memchr(p, '"', body) != nullptr;
    if (quotes) {
      std::vector<size_t> counts(nchunks, 0);
      parallel_for(nchunks, threads, [&](size_t i) {
        counts[i] = static_cast<size_t>(
            std::count(p + body * i / nchunks, p + body * (i + 1) / nchunks, '"'));
      });
      size_t acc = 0;
      for (size_t i = 0; i < nchunks; ++i) {
        parity[i] = static_cast<int>(acc & 1);
        acc += counts[i];
      }
    }
    for (size_t i = 1; i < nchunks; ++i) {
      const char* q = std::max(p + body * i / nchunks, bounds.back());
      int par = parity[i];
      while (q < end) {
        if (quotes && *q == '"')
          par ^= 1;
        else if (*q == '\n' && par == 0) {
          ++q;
          break;
        }
        ++q;
      }
      if (q > bounds.back() && q < end) bounds.push_back(q);
    }
  }
  bounds.push_back(end);
  nchunks = bounds.size() - 1;

  std::vector<ChunkResult> chunks(nchunks);
  std::atomic<uint64_t> done{static_cast<uint64_t>(p - text.data())};
  std::function<void()> report;
  if (opt.progress) report = [&] { opt.progress(std::min(done.load(), total), total); };
  parallel_for(
      nchunks, threads,
      [&](size_t i) {
        parser.parse_chunk(bounds[i], bounds[i + 1], chunks[i], opt.progress ? &done : nullptr);
      },
      report);

  // Validate in file order; a chunk that ran past its end means the split point
  // was not a record boundary (malformed quoting): re-parse serially from there.
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (chunks[i].failed)
      error_at(chunks[i].error_pos, std::move(chunks[i].error), std::move(chunks[i].error_hint));
    if (chunks[i].end != bounds[i + 1]) {
      chunks.resize(i + 1);
      chunks[i] = ChunkResult{};
      parser.parse_chunk(bounds[i], end, chunks[i], nullptr);
      if (chunks[i].failed)
        error_at(chunks[i].error_pos, std::move(chunks[i].error), std::move(chunks[i].error_hint));
      break;
    }
  }

  // Concatenate, merging string dictionaries.
  HostRelation rel(kept);
  std::vector<size_t> offset(chunks.size() + 1, 0);
  for (size_t i = 0; i < chunks.size(); ++i) offset[i + 1] = offset[i] + chunks[i].rows;
  const size_t rows = offset.back();
  const size_t ncols = kept.size();
  std::vector<std::vector<std::vector<int32_t>>> remaps(ncols);
  std::vector<std::shared_ptr<const Dictionary>> dicts(ncols);
  std::vector<size_t> string_cols;
  for (size_t c = 0; c < ncols; ++c)
    if (kept[c].type == Type::String) string_cols.push_back(c);
  parallel_for(string_cols.size(), threads, [&](size_t i) {
    size_t c = string_cols[i];
    dicts[c] = merge_strings(chunks, c, remaps[c], threads);
  });
  std::vector<Column::Storage> out(ncols);
  std::vector<std::vector<uint8_t>> valid(ncols);  // nullable columns only
  const bool single = chunks.size() == 1;
  // Sizing the columns zero-fills them: one column per thread.
  parallel_for(ncols, threads, [&](size_t c) {
    if (single && kept[c].nullable)
      valid[c] = std::move(chunks[0].validity[c]);
    else if (kept[c].nullable)
      valid[c].resize(rows);
    if (single && kept[c].type != Type::String) {
      out[c] = std::move(chunks[0].columns[c]);
      return;
    }
    out[c] = storage_for(kept[c].type);
    std::visit([rows](auto& v) { v.resize(rows); }, out[c]);
  });
  parallel_for(chunks.size(), threads, [&](size_t i) {
    if (single) {
      for (size_t c : string_cols) {
        auto& codes = std::get<std::vector<int32_t>>(chunks[0].columns[c]);
        auto& dst = std::get<std::vector<int32_t>>(out[c]);
        const auto& map = remaps[c][0];
        for (size_t r = 0; r < codes.size(); ++r) dst[r] = map[static_cast<size_t>(codes[r])];
      }
      return;
    }
    for (size_t c = 0; c < ncols; ++c) {
      if (kept[c].type == Type::String) {
        auto& src = std::get<std::vector<int32_t>>(chunks[i].columns[c]);
        auto& dst = std::get<std::vector<int32_t>>(out[c]);
        const auto& map = remaps[c][i];
        for (size_t r = 0; r < src.size(); ++r)
          dst[offset[i] + r] = map[static_cast<size_t>(src[r])];
      } else {
        std::visit(
            [&](auto& dst) {
              using V = std::decay_t<decltype(dst)>;
              auto& src = std::get<V>(chunks[i].columns[c]);
              std::copy(src.begin(), src.end(), dst.begin() + static_cast<ptrdiff_t>(offset[i]));
            },
            out[c]);
      }
      Column::Storage().swap(chunks[i].columns[c]);
      if (kept[c].nullable) {
        auto& src = chunks[i].validity[c];
        std::copy(src.begin(), src.end(), valid[c].begin() + static_cast<ptrdiff_t>(offset[i]));
        std::vector<uint8_t>().swap(src);
      }
    }
  });
  for (size_t c = 0; c < ncols; ++c) {
    if (kept[c].type == Type::String)
      rel.column(c).set_codes(std::move(std::get<std::vector<int32_t>>(out[c])), dicts[c]);
    else
      rel.column(c).storage() = std::move(out[c]);
    if (kept[c].nullable) rel.column(c).validity() = std::move(valid[c]);
  }
  if (opt.progress) opt.progress(total, total);
  return rel;
}

// Buffered writer of one relation.
class Writer {
 public:
  Writer(const HostRelation& rel, std::ostream& out, const CsvOptions& opt)
      : rel_(rel), out_(out), opt_(opt), marker_(null_marker(opt)) {}

  void run() {
    const size_t ncols = rel_.num_columns();
    const Schema& schema = rel_.schema();
    if (opt_.header) {
      for (size_t c = 0; c < ncols; ++c) {
        if (c) buf_ += opt_.delimiter;
        put_string(schema[c].name, ncols, c, SIZE_MAX, false);
      }
      end_line();
    }
    std::vector<const Dictionary*> dicts(ncols, nullptr);
    std::vector<const uint8_t*> valid(ncols, nullptr);  // nullable columns only
    for (size_t c = 0; c < ncols; ++c) {
      const Column& col = rel_.column(c);
      if (col.type() == Type::String) dicts[c] = col.dictionary().get();
      if (col.nullable()) valid[c] = col.validity().data();
    }
    const size_t rows = rel_.num_rows();
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < ncols; ++c) {
        if (c) buf_ += opt_.delimiter;
        const Column& col = rel_.column(c);
        const bool nullable = valid[c] != nullptr;
        if (nullable && valid[c][r] == 0) {
          put_null(ncols, c, r);
          continue;
        }
        const size_t start = buf_.size();
        switch (col.type()) {
          case Type::Bool:
            buf_ += col.data<uint8_t>()[r] ? "true" : "false";
            break;
          case Type::I32:
            put_number(col.data<int32_t>()[r]);
            break;
          case Type::I64:
            put_number(col.data<int64_t>()[r]);
            break;
          case Type::F32:
            put_number(col.data<float>()[r]);
            break;
          case Type::F64:
            put_number(col.data<double>()[r]);
            break;
          case Type::Date:
            buf_ += format_date(col.data<int32_t>()[r]);
            break;
          case Type::String:
            put_string(dicts[c]->at(col.data<int32_t>()[r]), ncols, c, r, nullable);
            break;
        }
        // A value spelled like the marker would read back as NULL unless quoted.
        if (nullable && !marker_.empty() && col.type() != Type::String &&
            std::string_view(buf_).substr(start) == marker_)
          quote_value(start, c, r);
      }
      end_line();
    }
    flush();
    if (!out_) data_error("writing failed (disk full or stream closed?)");
  }

 private:
  template <typename T>
  void put_number(T v) {
    char tmp[64];
    auto res = std::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, res.ptr);
  }
  std::string where(size_t c, size_t row) const {
    return row == SIZE_MAX ? fmt::format("the name of attribute {}", rel_.schema()[c].name)
                           : fmt::format("row {} of attribute {}", row + 1, rel_.schema()[c].name);
  }
  void put_null(size_t ncols, size_t c, size_t row) {
    if (marker_.empty() && ncols == 1 && !opt_.trailing_delimiter)
      data_error(fmt::format("{} is NULL, which would be written as an empty line and read back "
                             "as a blank line",
                             where(c, row)),
                 {}, "set a null marker (CsvOptions::null_marker) or a trailing delimiter");
    buf_ += marker_;
  }
  // Wraps the value written from `start` (a number, date or bool: no quotes inside) in
  // quotes, so that it does not read back as NULL.
  void quote_value(size_t start, size_t c, size_t row) {
    if (!opt_.quoting)
      data_error(
          fmt::format("{} ('{}') cannot be written without quoting: it is the null "
                      "marker's text and would read back as NULL",
                      where(c, row), shown(marker_)));
    buf_.insert(start, 1, '"');
    buf_ += '"';
  }
  // `nullable`: s is a value of a nullable attribute, where an unquoted empty field or
  // the marker would read back as NULL.
  void put_string(std::string_view s, size_t ncols, size_t c, size_t row, bool nullable) {
    const char d = opt_.delimiter;
    bool special = false;
    for (char ch : s)
      if (ch == d || ch == '\n' || ch == '\r' || ch == '"') {
        special = true;
        break;
      }
    bool lone_empty = s.empty() && ncols == 1 && !opt_.trailing_delimiter;
    bool reads_as_null = nullable && (s.empty() || s == marker_);
    if (opt_.quoting) {
      if (!special && !lone_empty && !reads_as_null && !(s.size() && s[0] == '"')) {
        buf_ += s;
        return;
      }
      buf_ += '"';
      for (char ch : s) {
        if (ch == '"') buf_ += '"';
        buf_ += ch;
      }
      buf_ += '"';
      return;
    }
    for (char ch : s)
      if (ch == d || ch == '\n' || ch == '\r')
        data_error(
            fmt::format("{} ('{}') cannot be written without quoting: it holds the "
                        "delimiter or a line break",
                        where(c, row), shown(s)));
    if (reads_as_null)
      data_error(fmt::format("{} ('{}') cannot be written without quoting: the attribute is "
                             "nullable and the value would read back as NULL",
                             where(c, row), shown(s)),
                 {},
                 s.empty() ? "without quoting, an empty string can only be written in an "
                             "attribute that is not nullable"
                           : "choose a null marker that is not a value of the attribute");
    if (lone_empty)
      data_error(
          fmt::format("an empty string in the only attribute {} cannot be written "
                      "without quoting",
                      rel_.schema()[c].name));
    buf_ += s;
  }
  void end_line() {
    if (opt_.trailing_delimiter) buf_ += opt_.delimiter;
    buf_ += '\n';
    if (buf_.size() > (1 << 20)) flush();
  }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }
  const HostRelation& rel_;
  std::ostream& out_;
  const CsvOptions& opt_;
  std::string_view marker_;
  std::string buf_;
};

}  // namespace

HostRelation parse_csv(std::string_view text, const Schema& schema, const CsvOptions& options,
                       std::string_view name) {
  return parse_text(text, schema, options, name);
}

HostRelation read_csv(const std::string& path, const Schema& schema, const CsvOptions& options) {
  io_detail::FileBytes bytes(path, /*sequential=*/true);
  return parse_text(bytes.view(), schema, options, path);
}

HostRelation read_csv(std::istream& in, const Schema& schema, const CsvOptions& options,
                      std::string_view name) {
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) data_error("cannot read the input stream", {std::string(name)});
  return parse_text(text, schema, options, name);
}

HostRelation read_relation_file(const std::string& path, const Schema& schema,
                                ProgressFn progress) {
  CsvOptions opt = options_for(format_from_path(path).value_or(TextFormat::Csv));
  opt.progress = std::move(progress);
  return read_csv(path, schema, opt);
}

void write_csv(const HostRelation& rel, std::ostream& out, const CsvOptions& options) {
  Writer(rel, out, options).run();
}

void write_csv(const HostRelation& rel, const std::string& path, const CsvOptions& options) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    data_error(fmt::format("cannot open '{}' for writing: {}", path, std::strerror(errno)), {path});
  Writer(rel, out, options).run();
  out.close();
  if (!out) data_error(fmt::format("writing '{}' failed", path), {path});
}

std::string to_csv_string(const HostRelation& rel, const CsvOptions& options) {
  std::ostringstream s;
  write_csv(rel, s, options);
  return s.str();
}

}  // namespace ranc
