// The ranc columnar file (docs/columnar-format.md). The reader maps the file,
// validates the header and table (every offset, length and count against the file's
// size, overflow-safe, before anything is used), then verifies and copies the
// requested columns (with their validity) on worker threads. It reads versions 1
// and 2; version 2 added nullable columns and grew the table entry to 96 bytes. The
// writer computes every checksum from the relation in memory, writes a temporary
// file and renames it into place.
#include "ranc/io/columnar.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "io_util.h"
#include "ranc/data/atomic_file.h"
#include "ranc/data/error.h"

// Header-only: XXH3 is compiled into ranc_io, no libxxhash at run time.
#define XXH_INLINE_ALL
#include <xxhash.h>

static_assert(std::endian::native == std::endian::little,
              "the columnar format stores columns little-endian and reads them in place");

namespace ranc {

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'R', 'A', 'N', 'C', 'C', 'O', 'L', '\0'};
constexpr uint64_t kHeaderBytes = 64;
constexpr uint64_t kAlign = 64;
constexpr uint64_t kTablePrefixBytes = 16;
constexpr uint64_t kEntryBytes = 96;    // version 2
constexpr uint64_t kEntryBytesV1 = 64;  // version 1: no validity fields
constexpr uint8_t kFlagNullable = 1;    // entry byte 13
constexpr uint8_t kFlagAscending = 2;   // entry byte 13, since 2.1: rows ascend by the attribute
constexpr uint64_t kDictPrefixBytes = 8;

// Whether an attribute of type t may carry kFlagAscending (not nullable besides).
bool ascending_type(Type t) {
  return t == Type::I32 || t == Type::I64 || t == Type::Date;
}

// The first row r > 0 with v[r] < v[r - 1], or n when there is none.
template <typename T>
size_t first_descent(const T* v, size_t n) {
  for (size_t r = 1; r < n; ++r)
    if (v[r] < v[r - 1]) return r;
  return n;
}
// Whether v's n rows ascend as kFlagAscending says: never decreasing, the first less than the last.
template <typename T>
bool ascends(const T* v, size_t n) {
  return n >= 2 && v[0] < v[n - 1] && first_descent(v, n) == n;
}

using io_detail::file_error;

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// n rounded up to the alignment; callers keep n far below 2^64.
uint64_t padded(uint64_t n) {
  return (n + kAlign - 1) & ~(kAlign - 1);
}

uint64_t checksum(const void* p, size_t n) {
  return XXH3_64bits(p, n);
}

// The format's type codes, fixed independently of the Type enum.
uint8_t type_code(Type t) {
  switch (t) {
    case Type::Bool:
      return 0;
    case Type::I32:
      return 1;
    case Type::I64:
      return 2;
    case Type::F32:
      return 3;
    case Type::F64:
      return 4;
    case Type::Date:
      return 5;
    case Type::String:
      return 6;
  }
  throw InternalError("unknown type");
}
std::optional<Type> type_from_code(uint8_t c) {
  static constexpr Type kByCode[] = {Type::Bool, Type::I32,  Type::I64,   Type::F32,
                                     Type::F64,  Type::Date, Type::String};
  if (c >= std::size(kByCode)) return std::nullopt;
  return kByCode[c];
}

// "1 and 2": the major versions this ranc reads.
std::string readable_versions() {
  std::string s;
  for (uint32_t v = kColumnarOldestMajorVersion; v <= kColumnarMajorVersion; ++v)
    s += fmt::format("{}{}",
                     v == kColumnarOldestMajorVersion ? ""
                     : v == kColumnarMajorVersion     ? " and "
                                                      : ", ",
                     v);
  return s;
}

// One attribute's table entry, validated.
struct Entry {
  std::string name;
  Type type = Type::I32;
  bool nullable = false;
  bool ascending = false;  // kFlagAscending
  uint64_t data_offset = 0, data_bytes = 0, data_checksum = 0;
  uint64_t dict_offset = 0, dict_bytes = 0, dict_checksum = 0;
  uint64_t valid_offset = 0, valid_bytes = 0, valid_checksum = 0;
  // The bytes of all its sections (data, dictionary, validity: contiguous).
  uint64_t section_bytes() const {
    return padded(data_bytes) + padded(dict_bytes) + padded(valid_bytes);
  }
};

struct Layout {
  uint32_t major = 0, minor = 0;
  uint64_t rows = 0;
  uint64_t file_bytes = 0;
  Schema schema;
  std::vector<Entry> entries;
  std::unordered_map<std::string, size_t> index;  // attribute name -> entry
};

// Validates the header, the table and the placement of every section; reads no
// column. Sections must tile the file after the table in entry order (data, then a
// string column's dictionary, then a nullable column's validity), so every byte of
// the file is under some checksum.
Layout parse_layout(const std::string& path, const uint8_t* p, uint64_t size) {
  if (size < sizeof kMagic || std::memcmp(p, kMagic, sizeof kMagic) != 0)
    file_error(path,
               "not a ranc columnar file: it does not start with the magic bytes \"RANCCOL\\0\"");
  if (size < kHeaderBytes)
    file_error(path, fmt::format("truncated: the file has {} bytes, less than the {}-byte header",
                                 size, kHeaderBytes));
  Layout l;
  l.major = load<uint32_t>(p + 8);
  l.minor = load<uint32_t>(p + 12);
  const bool header_ok = checksum(p, 56) == load<uint64_t>(p + 56);
  if (l.major < kColumnarOldestMajorVersion || l.major > kColumnarMajorVersion)
    file_error(
        path,
        fmt::format("written by format version {}.{}, this ranc reads versions {}{}", l.major,
                    l.minor, readable_versions(),
                    header_ok ? "" : " (or the header is corrupt: its checksum does not match)"));
  if (!header_ok) file_error(path, "checksum mismatch in the header (bytes 0..64)");
  if (load<uint32_t>(p + 16) != kHeaderBytes)
    file_error(path, fmt::format("the header records a header size of {} bytes; version {} has {}",
                                 load<uint32_t>(p + 16), l.major, kHeaderBytes));
  const uint64_t entry_bytes = l.major == 1 ? kEntryBytesV1 : kEntryBytes;
  l.rows = load<uint64_t>(p + 24);
  l.file_bytes = load<uint64_t>(p + 32);
  const uint64_t table_bytes = load<uint64_t>(p + 40);
  const uint64_t table_checksum = load<uint64_t>(p + 48);
  // Bounding the recorded size keeps every offset sum below 2^64.
  if (l.file_bytes < kHeaderBytes || l.file_bytes > (uint64_t{1} << 62) ||
      table_bytes > l.file_bytes - kHeaderBytes || table_bytes < kTablePrefixBytes ||
      table_bytes % kAlign != 0)
    file_error(path, fmt::format("corrupt header: a schema table of {} bytes in a file of {} bytes",
                                 table_bytes, l.file_bytes));
  const uint64_t table_end = kHeaderBytes + table_bytes;
  if (size < table_end)
    file_error(path, fmt::format("truncated: the schema table needs bytes {}..{}, the file has {}",
                                 kHeaderBytes, table_end, size));
  const uint8_t* t = p + kHeaderBytes;
  if (checksum(t, table_bytes) != table_checksum)
    file_error(path, fmt::format("checksum mismatch in the schema table (bytes {}..{})",
                                 kHeaderBytes, table_end));

  const uint64_t n = load<uint32_t>(t);
  const uint64_t key = load<uint32_t>(t + 4);
  const uint64_t names_start = kTablePrefixBytes + n * entry_bytes;
  if (names_start > table_bytes)
    file_error(path, fmt::format("corrupt schema table: {} attributes do not fit in {} bytes", n,
                                 table_bytes));
  if (key > n)
    file_error(path, fmt::format("corrupt schema table: a key of {} attributes out of {}", key, n));
  l.schema.key_size = static_cast<size_t>(key);
  uint64_t next = table_end;  // where the next section must start
  // A section at [off, off + bytes), padded to the alignment, for what `what` names.
  auto place = [&](const std::string& what, uint64_t off, uint64_t bytes) {
    if (off != next)
      file_error(path, fmt::format("corrupt schema table: {} starts at byte {}, expected {}", what,
                                   off, next));
    if (bytes > l.file_bytes - off)
      file_error(path,
                 fmt::format("corrupt schema table: {} of {} bytes at byte {} runs past the end "
                             "of the file ({} bytes)",
                             what, bytes, off, l.file_bytes));
    const uint64_t end = off + padded(bytes);
    if (end > size)
      file_error(path, fmt::format("truncated: {} needs bytes {}..{}, the file has {}", what, off,
                                   end, size));
    if (end > l.file_bytes)
      file_error(path, fmt::format("corrupt schema table: {} ends at byte {}, after the end of the "
                                   "file ({} bytes)",
                                   what, end, l.file_bytes));
    next = end;
  };
  for (uint64_t i = 0; i < n; ++i) {
    const uint8_t* e = t + kTablePrefixBytes + i * entry_bytes;
    Entry en;
    const uint64_t name_off = load<uint64_t>(e);
    const uint64_t name_len = load<uint32_t>(e + 8);
    if (name_off < names_start || name_off > table_bytes || name_len > table_bytes - name_off ||
        name_len == 0)
      file_error(path,
                 fmt::format("corrupt schema table: attribute {}'s name is at bytes {}..{} of a "
                             "{}-byte table",
                             i + 1, name_off, name_off + name_len, table_bytes));
    en.name.assign(reinterpret_cast<const char*>(t + name_off), static_cast<size_t>(name_len));
    auto type = type_from_code(e[12]);
    if (!type)
      file_error(path,
                 fmt::format("corrupt schema table: attribute {} has the unknown type code {}",
                             en.name, e[12]));
    en.type = *type;
    if (!l.index.emplace(en.name, l.entries.size()).second)
      file_error(path, fmt::format("corrupt schema table: attribute {} appears twice", en.name));
    en.data_offset = load<uint64_t>(e + 16);
    en.data_bytes = load<uint64_t>(e + 24);
    en.data_checksum = load<uint64_t>(e + 32);
    en.dict_offset = load<uint64_t>(e + 40);
    en.dict_bytes = load<uint64_t>(e + 48);
    en.dict_checksum = load<uint64_t>(e + 56);
    const uint64_t width = static_cast<uint64_t>(type_size(en.type));
    if (en.data_bytes % width != 0 || en.data_bytes / width != l.rows)
      file_error(path,
                 fmt::format("corrupt schema table: column {} has {} bytes, but {} rows of {} "
                             "need {}",
                             en.name, en.data_bytes, l.rows, type_name(en.type),
                             l.rows <= UINT64_MAX / width ? fmt::format("{}", l.rows * width)
                                                          : std::string("more than 2^64")));
    place("column " + en.name, en.data_offset, en.data_bytes);
    if (en.type == Type::String) {
      if (en.dict_bytes < kDictPrefixBytes + 8)
        file_error(path,
                   fmt::format("corrupt schema table: the dictionary of column {} has {} bytes",
                               en.name, en.dict_bytes));
      place("the dictionary of column " + en.name, en.dict_offset, en.dict_bytes);
    } else if (en.dict_offset != 0 || en.dict_bytes != 0 || en.dict_checksum != 0) {
      file_error(path, fmt::format("corrupt schema table: column {} of type {} has a dictionary",
                                   en.name, type_name(en.type)));
    }
    if (l.major >= 2) {
      en.nullable = (e[13] & kFlagNullable) != 0;  // bits 2..7 are reserved
      en.ascending = (e[13] & kFlagAscending) != 0;
      if (en.ascending && (en.nullable || !ascending_type(en.type)))
        file_error(path, fmt::format("corrupt schema table: column {} of type {}{} is flagged "
                                     "ascending (only i32, i64 and date columns without NULLs are)",
                                     en.name, type_name(en.type), en.nullable ? " null" : ""));
      en.valid_offset = load<uint64_t>(e + 64);
      en.valid_bytes = load<uint64_t>(e + 72);
      en.valid_checksum = load<uint64_t>(e + 80);
    }
    if (en.nullable) {
      if (en.valid_bytes != l.rows)
        file_error(path,
                   fmt::format("corrupt schema table: the validity of column {} has {} bytes, "
                               "but {} rows need {}",
                               en.name, en.valid_bytes, l.rows, l.rows));
      place("the validity of column " + en.name, en.valid_offset, en.valid_bytes);
    } else if (en.valid_offset != 0 || en.valid_bytes != 0 || en.valid_checksum != 0) {
      file_error(path, fmt::format("corrupt schema table: column {} is not nullable but has a "
                                   "validity section",
                                   en.name));
    }
    l.schema.attributes.push_back({en.name, en.type, en.nullable});
    l.entries.push_back(std::move(en));
  }
  if (next != l.file_bytes)
    file_error(path,
               fmt::format("corrupt schema table: the sections end at byte {}, the header records "
                           "{} bytes",
                           next, l.file_bytes));
  if (size != l.file_bytes)
    file_error(path, fmt::format("the file has {} bytes, {} more than its header records", size,
                                 size - l.file_bytes));
  return l;
}

// A column flagged ascending must ascend (non-decreasing, its first row less than its last):
// what a checksum cannot catch, a writer that flagged it wrongly.
template <typename T>
void check_ascending(const std::string& path, const std::string& name, const T* v, uint64_t rows) {
  const size_t n = static_cast<size_t>(rows);
  const size_t r = first_descent(v, n);
  if (r < n)
    file_error(path, fmt::format("corrupt column {}: flagged ascending, but row {} holds {}, less "
                                 "than row {}'s {}",
                                 name, r, v[r], r - 1, v[r - 1]));
  if (n < 2 || !(v[0] < v[n - 1]))
    file_error(path, fmt::format("corrupt column {}: flagged ascending, but its {} rows hold no "
                                 "two distinct values",
                                 name, n));
}

void verify(const std::string& path, const uint8_t* base, uint64_t off, uint64_t bytes,
            uint64_t expected, const std::string& what) {
  if (checksum(base + off, static_cast<size_t>(padded(bytes))) != expected)
    file_error(path, fmt::format("checksum mismatch in {} (bytes {}..{})", what, off,
                                 off + padded(bytes)));
}

template <typename T>
std::vector<T> copy_column(const uint8_t* p, uint64_t rows) {
  const T* b = reinterpret_cast<const T*>(p);
  return std::vector<T>(b, b + rows);
}

// The dictionary section: count, count + 1 offsets, the bytes; strictly increasing.
std::shared_ptr<const Dictionary> read_dictionary(const std::string& path, const uint8_t* d,
                                                  uint64_t bytes, const std::string& column) {
  const std::string what = "the dictionary of column " + column;
  const uint64_t count = load<uint64_t>(d);
  if (count > (bytes - kDictPrefixBytes) / 8 - 1 || count > uint64_t{INT32_MAX})
    file_error(path,
               fmt::format("corrupt {}: {} strings do not fit in {} bytes", what, count, bytes));
  const uint8_t* offsets = d + kDictPrefixBytes;
  const uint64_t text_start = kDictPrefixBytes + (count + 1) * 8;
  const uint64_t text_bytes = bytes - text_start;
  const char* text = reinterpret_cast<const char*>(d + text_start);
  if (load<uint64_t>(offsets) != 0 || load<uint64_t>(offsets + count * 8) != text_bytes)
    file_error(path, fmt::format("corrupt {}: its offsets do not span its {} bytes of text", what,
                                 text_bytes));
  std::vector<std::string> strings;
  strings.reserve(static_cast<size_t>(count));
  uint64_t prev = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t end = load<uint64_t>(offsets + (i + 1) * 8);
    if (end < prev || end > text_bytes)
      file_error(path,
                 fmt::format("corrupt {}: string {} ends at byte {} (previous end {}, text of {} "
                             "bytes)",
                             what, i, end, prev, text_bytes));
    std::string_view s(text + prev, static_cast<size_t>(end - prev));
    // Codes compare as their strings do: the strings must be sorted and unique.
    if (i > 0 && !(std::string_view(strings.back()) < s))
      file_error(path,
                 fmt::format("corrupt {}: string {} is not greater than the one before", what, i));
    strings.emplace_back(s);
    prev = end;
  }
  return Dictionary::from_strings(std::move(strings));
}

// The validity of column e for the declared attribute a (called when either is
// nullable): the file's bytes, checked (each 0 or 1, NULL rows holding the type's
// zero and, for strings, the code of ""); all ones when the file's column is not
// nullable; empty when a is not nullable, which a NULL makes an error.
std::vector<uint8_t> read_validity(const std::string& path, const uint8_t* base, const Entry& e,
                                   uint64_t rows, const Dictionary* dict, const Attribute& a) {
  if (!e.nullable) return std::vector<uint8_t>(static_cast<size_t>(rows), 1);
  const std::string what = "the validity of column " + e.name;
  verify(path, base, e.valid_offset, e.valid_bytes, e.valid_checksum, what);
  const uint8_t* v = base + e.valid_offset;
  uint8_t high = 0, all_valid = 1;
  for (uint64_t r = 0; r < rows; ++r) {
    high |= v[r] & 0xFE;
    all_valid &= v[r];
  }
  if (high)
    for (uint64_t r = 0; r < rows; ++r)
      if (v[r] > 1)
        file_error(path, fmt::format("corrupt {}: row {} holds {}, not 0 or 1", what, r, v[r]));
  if (!all_valid) {
    const uint64_t width = static_cast<uint64_t>(type_size(e.type));
    const uint8_t* data = base + e.data_offset;
    uint64_t first_null = rows;
    for (uint64_t r = 0; r < rows; ++r) {
      if (v[r]) continue;
      if (first_null == rows) first_null = r;
      for (uint64_t k = 0; k < width; ++k)
        if (data[r * width + k] != 0)
          file_error(path, fmt::format("corrupt column {}: row {} is NULL but its value is not the "
                                       "type's zero",
                                       e.name, r));
    }
    if (e.type == Type::String && (dict->size() == 0 || !dict->at(0).empty()))
      file_error(path, fmt::format("corrupt the dictionary of column {}: the column has NULL rows, "
                                   "which hold the code of the empty string, but the dictionary "
                                   "has no empty string",
                                   e.name));
    if (!a.nullable)
      file_error(path,
                 fmt::format("attribute {} holds NULL in row {} (counting from 0), but the "
                             "program declares it not nullable",
                             a.name, first_null),
                 fmt::format("declare it nullable: '{} {} null'", a.name, type_name(a.type)));
  }
  if (!a.nullable) return {};
  return std::vector<uint8_t>(v, v + rows);
}

HostRelation read_impl(const std::string& path, const Schema* declared, const CsvOptions& opt) {
  io_detail::FileBytes file(path);
  const uint8_t* base = file.data();
  Layout l = parse_layout(path, base, file.size());
  const Schema& schema = declared ? *declared : l.schema;
  if (schema.size() == 0) file_error(path, "cannot read a relation without attributes");

  // The attributes kept, in schema order (CsvOptions::columns).
  std::vector<bool> keep(schema.size(), opt.columns.empty());
  for (const auto& c : opt.columns) {
    auto i = schema.find(c);
    if (!i)
      file_error(path,
                 fmt::format("cannot keep attribute '{}': the schema of '{}' has no such attribute",
                             c, path));
    keep[*i] = true;
  }
  Schema kept;
  std::vector<const Entry*> entries;
  for (size_t c = 0; c < schema.size(); ++c) {
    if (!keep[c]) continue;
    const Attribute& a = schema[c];
    auto it = l.index.find(a.name);
    if (it == l.index.end()) {
      std::string has;
      for (size_t k = 0; k < l.schema.size() && k < 32; ++k)
        has += (has.empty() ? "" : ", ") + l.schema[k].name;
      if (l.schema.size() > 32) has += fmt::format(", ... ({} in all)", l.schema.size());
      file_error(path, fmt::format("attribute {} is not in the file (it has {})", a.name,
                                   has.empty() ? "no attributes" : has));
    }
    const Entry& e = l.entries[it->second];
    if (e.type != a.type)
      file_error(path, fmt::format("attribute {} has type {} in the file, the program declares {}",
                                   a.name, type_name(e.type), type_name(a.type)));
    kept.attributes.push_back(a);
    entries.push_back(&e);
  }
  while (kept.key_size < schema.key_size && keep[kept.key_size]) ++kept.key_size;

  uint64_t total = 0;
  for (const Entry* e : entries) {
    total += e->section_bytes();
    file.will_need(e->data_offset, e->section_bytes());
  }
  const uint64_t rows = l.rows;
  std::vector<Column::Storage> storage(entries.size());
  std::vector<std::shared_ptr<const Dictionary>> dicts(entries.size());
  std::vector<std::vector<uint8_t>> validity(entries.size());
  std::atomic<uint64_t> done{0};
  auto read_column = [&](size_t c) {
    const Entry& e = *entries[c];
    const std::string what = "column " + e.name;
    verify(path, base, e.data_offset, e.data_bytes, e.data_checksum, what);
    const uint8_t* p = base + e.data_offset;
    switch (e.type) {
      case Type::Bool: {
        auto v = copy_column<uint8_t>(p, rows);
        for (uint64_t r = 0; r < rows; ++r)
          if (v[r] > 1)
            file_error(path, fmt::format("corrupt {}: row {} holds {}, not 0 or 1", what, r, v[r]));
        storage[c] = std::move(v);
        break;
      }
      case Type::I32:
      case Type::Date: {
        auto v = copy_column<int32_t>(p, rows);
        if (e.ascending) check_ascending(path, e.name, v.data(), rows);
        storage[c] = std::move(v);
        break;
      }
      case Type::I64: {
        auto v = copy_column<int64_t>(p, rows);
        if (e.ascending) check_ascending(path, e.name, v.data(), rows);
        storage[c] = std::move(v);
        break;
      }
      case Type::F32:
        storage[c] = copy_column<float>(p, rows);
        break;
      case Type::F64:
        storage[c] = copy_column<double>(p, rows);
        break;
      case Type::String: {
        verify(path, base, e.dict_offset, e.dict_bytes, e.dict_checksum,
               "the dictionary of column " + e.name);
        dicts[c] = read_dictionary(path, base + e.dict_offset, e.dict_bytes, e.name);
        auto v = copy_column<int32_t>(p, rows);
        // One unsigned comparison per code: negative codes wrap above the size.
        const uint32_t n = static_cast<uint32_t>(dicts[c]->size());
        uint32_t bad = 0;
        for (uint64_t r = 0; r < rows; ++r) bad |= static_cast<uint32_t>(v[r]) >= n;
        if (bad)
          for (uint64_t r = 0; r < rows; ++r)
            if (static_cast<uint32_t>(v[r]) >= n)
              file_error(path,
                         fmt::format("corrupt {}: row {} has the string code {}, the dictionary "
                                     "has {} strings",
                                     what, r, v[r], n));
        storage[c] = std::move(v);
        break;
      }
    }
    if (e.nullable || kept[c].nullable)
      validity[c] = read_validity(path, base, e, rows, dicts[c].get(), kept[c]);
    done += e.section_bytes();
  };
  std::function<void()> report;
  if (opt.progress) report = [&] { opt.progress(done.load(), total); };
  // By default one thread for small reads, where threads cost more than they save.
  unsigned threads = opt.num_threads               ? opt.num_threads
                     : total < (uint64_t{1} << 20) ? 1u
                                                   : std::thread::hardware_concurrency();
  io_detail::parallel_for(entries.size(), threads, read_column, report);

  if (opt.ascending)
    for (const Entry* e : entries)
      if (e->ascending) opt.ascending(e->name);
  HostRelation rel(kept);
  for (size_t c = 0; c < entries.size(); ++c) {
    if (kept[c].type == Type::String)
      rel.column(c).set_codes(std::move(std::get<std::vector<int32_t>>(storage[c])), dicts[c]);
    else
      rel.column(c).storage() = std::move(storage[c]);
    if (kept[c].nullable) rel.column(c).validity() = std::move(validity[c]);
  }
  if (opt.progress) opt.progress(total, total);
  return rel;
}

// A dictionary section with its zero padding; `bytes` is its length without it.
std::vector<uint8_t> dictionary_section(const Dictionary& dict, uint64_t& bytes) {
  const auto& strings = dict.strings();
  uint64_t text = 0;
  for (const auto& s : strings) text += s.size();
  const uint64_t count = strings.size();
  bytes = kDictPrefixBytes + (count + 1) * 8 + text;
  std::vector<uint8_t> d(static_cast<size_t>(padded(bytes)), 0);
  store<uint64_t>(d.data(), count);
  const uint64_t at = kDictPrefixBytes + (count + 1) * 8;
  uint64_t end = 0;
  for (uint64_t k = 0; k < count; ++k) {
    const std::string& s = strings[static_cast<size_t>(k)];
    std::memcpy(d.data() + at + end, s.data(), s.size());
    end += s.size();
    store<uint64_t>(d.data() + kDictPrefixBytes + (k + 1) * 8, end);
  }
  return d;
}

// The writer's side of the reader's check: a NULL row holds the type's zero (for
// strings the code of "", which is code 0), as host_relation.h requires.
void check_null_rows(const Column& col, const std::string& name) {
  const auto& valid = col.validity();
  const uint64_t width = static_cast<uint64_t>(type_size(col.type()));
  const auto* data = static_cast<const uint8_t*>(col.raw());
  for (uint64_t r = 0; r < valid.size(); ++r) {
    if (valid[r]) continue;
    bool zero = true;
    for (uint64_t k = 0; k < width; ++k) zero = zero && data[r * width + k] == 0;
    if (col.type() == Type::String)
      zero = zero && col.dictionary()->size() > 0 && col.dictionary()->at(0).empty();
    if (!zero)
      throw InternalError(
          fmt::format("column {}: row {} is NULL but its storage is not the "
                      "type's zero (host_relation.h)",
                      name, r));
  }
}

}  // namespace

void write_columnar(const std::string& path, const HostRelation& rel) {
  const Schema& schema = rel.schema();
  const uint64_t rows = rel.num_rows();
  const uint64_t n = schema.size();
  internal_check(n <= UINT32_MAX, "too many attributes for a columnar file");
  std::unordered_set<std::string_view> names;
  for (size_t i = 0; i < n; ++i) {
    if (schema[i].name.empty() || schema[i].name.size() > UINT32_MAX)
      file_error(path,
                 fmt::format("cannot write '{}': attribute {} has no name or a name of {} bytes",
                             path, i + 1, schema[i].name.size()));
    if (!names.insert(schema[i].name).second)
      file_error(
          path, fmt::format("cannot write '{}': attribute {} appears twice", path, schema[i].name));
    internal_check(rel.column(i).size() == rows, "columns of different lengths");
    internal_check(!rel.column(i).nullable() || rel.column(i).validity().size() == rows,
                   "a validity of another length than its column");
  }

  // The table: prefix, entries, names, padding.
  uint64_t names_bytes = 0;
  for (const auto& a : schema.attributes) names_bytes += a.name.size();
  const uint64_t names_start = kTablePrefixBytes + n * kEntryBytes;
  std::vector<uint8_t> table(static_cast<size_t>(padded(names_start + names_bytes)), 0);
  store<uint32_t>(table.data(), static_cast<uint32_t>(n));
  store<uint32_t>(table.data() + 4, static_cast<uint32_t>(schema.key_size));

  // Sections: a column's bytes or validity in place, or a serialized dictionary.
  struct Section {
    const void* data;
    uint64_t bytes;
    std::vector<uint8_t> owned;
  };
  std::vector<Section> sections;
  static const uint8_t kZeros[kAlign] = {};
  auto section_checksum = [](const void* p, uint64_t bytes) {
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, p, static_cast<size_t>(bytes));
    XXH3_64bits_update(&st, kZeros, static_cast<size_t>(padded(bytes) - bytes));
    return XXH3_64bits_digest(&st);
  };
  uint64_t offset = kHeaderBytes + table.size();
  uint64_t name_at = names_start;
  for (size_t i = 0; i < n; ++i) {
    const Column& col = rel.column(i);
    uint8_t* e = table.data() + kTablePrefixBytes + i * kEntryBytes;
    const std::string& name = schema[i].name;
    store<uint64_t>(e, name_at);
    store<uint32_t>(e + 8, static_cast<uint32_t>(name.size()));
    e[12] = type_code(col.type());
    std::memcpy(table.data() + name_at, name.data(), name.size());
    name_at += name.size();
    const void* data = col.raw();  // finishes pending strings
    const uint64_t bytes = col.bytes();
    if (!col.nullable() && ascending_type(col.type()) &&
        (col.type() == Type::I64 ? ascends(static_cast<const int64_t*>(data), rows)
                                 : ascends(static_cast<const int32_t*>(data), rows)))
      e[13] |= kFlagAscending;
    store<uint64_t>(e + 16, offset);
    store<uint64_t>(e + 24, bytes);
    store<uint64_t>(e + 32, section_checksum(data, bytes));
    sections.push_back({data, bytes, {}});
    offset += padded(bytes);
    if (col.type() == Type::String) {
      uint64_t dict_bytes = 0;
      std::vector<uint8_t> d = dictionary_section(*col.dictionary(), dict_bytes);
      store<uint64_t>(e + 40, offset);
      store<uint64_t>(e + 48, dict_bytes);
      store<uint64_t>(e + 56, checksum(d.data(), d.size()));
      offset += d.size();
      sections.push_back({nullptr, dict_bytes, std::move(d)});
    }
    if (col.nullable()) {
      check_null_rows(col, name);
      e[13] |= kFlagNullable;
      store<uint64_t>(e + 64, offset);
      store<uint64_t>(e + 72, rows);
      store<uint64_t>(e + 80, section_checksum(col.validity().data(), rows));
      sections.push_back({col.validity().data(), rows, {}});
      offset += padded(rows);
    }
  }

  uint8_t header[kHeaderBytes] = {};
  std::memcpy(header, kMagic, sizeof kMagic);
  store<uint32_t>(header + 8, kColumnarMajorVersion);
  store<uint32_t>(header + 12, kColumnarMinorVersion);
  store<uint32_t>(header + 16, static_cast<uint32_t>(kHeaderBytes));
  store<uint64_t>(header + 24, rows);
  store<uint64_t>(header + 32, offset);
  store<uint64_t>(header + 40, table.size());
  store<uint64_t>(header + 48, checksum(table.data(), table.size()));
  store<uint64_t>(header + 56, checksum(header, 56));

  // A temporary file beside the target, renamed over it once complete.
  AtomicFile f(path);
  bool ok = f.write(header, sizeof header) && f.write(table.data(), table.size());
  for (size_t i = 0; ok && i < sections.size(); ++i) {
    const Section& s = sections[i];
    if (s.data) {
      ok = f.write(s.data, static_cast<size_t>(s.bytes)) &&
           f.write(kZeros, static_cast<size_t>(padded(s.bytes) - s.bytes));
    } else {
      ok = f.write(s.owned.data(), s.owned.size());
    }
  }
  if (!ok || !f.commit()) file_error(path, fmt::format("cannot write '{}': {}", path, f.error()));
}

bool is_columnar_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[sizeof kMagic];
  size_t got = 0;
  while (got < sizeof buf) {
    ssize_t r = ::read(fd, buf + got, sizeof buf - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  return got == sizeof buf && std::memcmp(buf, kMagic, sizeof kMagic) == 0;
}

ColumnarInfo read_columnar_info(const std::string& path, bool dictionaries) {
  io_detail::FileBytes file(path);
  Layout l = parse_layout(path, file.data(), file.size());
  ColumnarInfo info;
  info.major_version = l.major;
  info.minor_version = l.minor;
  info.rows = l.rows;
  info.file_bytes = l.file_bytes;
  info.schema = l.schema;
  for (const Entry& e : l.entries) {
    ColumnarInfo::Section s;
    s.data_bytes = e.data_bytes;
    s.dictionary_bytes = e.dict_bytes;
    s.validity_bytes = e.valid_bytes;
    s.ascending = e.ascending;
    if (e.type == Type::String && dictionaries) {
      verify(path, file.data(), e.dict_offset, e.dict_bytes, e.dict_checksum,
             "the dictionary of column " + e.name);
      s.dictionary_size = load<uint64_t>(file.data() + e.dict_offset);
    }
    info.sections.push_back(s);
  }
  return info;
}

HostRelation read_columnar(const std::string& path, const Schema& schema,
                           const CsvOptions& options) {
  return read_impl(path, &schema, options);
}

HostRelation read_columnar(const std::string& path) {
  return read_impl(path, nullptr, CsvOptions{});
}

HostRelation read_input(const std::string& path, const Schema& schema, const CsvOptions& options) {
  if (is_columnar_file(path)) return read_columnar(path, schema, options);
  return read_csv(path, schema, options);
}

std::string prefer_columnar(const std::string& path) {
  std::error_code ec;
  if (fs::exists(path, ec)) return path;
  fs::path alt(path);
  alt.replace_extension(".rcol");
  if (alt.string() != path && fs::is_regular_file(alt, ec)) return alt.string();
  return path;
}

}  // namespace ranc
