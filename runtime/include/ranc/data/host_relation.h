// Schemas and columnar relations on the host: what inputs are bound from and what
// outputs are read into, and what the CPU reference executor works on.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ranc/data/type.h"
#include "ranc/data/value.h"

namespace ranc {

// An attribute may be NULL only when it is nullable (the schema says so; program.h has
// the NULL semantics). Non-nullable attributes carry no validity anywhere.
struct Attribute {
  std::string name;
  Type type;
  bool nullable = false;
  bool operator==(const Attribute&) const = default;
};

// Named, typed attributes and a key: the first key_size attributes.
struct Schema {
  std::vector<Attribute> attributes;
  size_t key_size = 0;

  size_t size() const { return attributes.size(); }
  const Attribute& operator[](size_t i) const { return attributes[i]; }
  std::optional<size_t> find(std::string_view name) const;
  // "(a i32, b f64 null | key a)" style text used by the printer.
  std::string str() const;
  bool operator==(const Schema&) const = default;
};

// An order-preserving string dictionary: sorted, unique strings; code i is the
// i-th string, so comparing codes compares the strings (byte order).
class Dictionary {
 public:
  Dictionary() = default;
  // Builds a dictionary from any strings (sorted and de-duplicated here).
  static std::shared_ptr<const Dictionary> from_strings(std::vector<std::string> strings);
  size_t size() const { return strings_.size(); }
  const std::string& at(int32_t code) const { return strings_.at(static_cast<size_t>(code)); }
  // The code of s, or nullopt when s is not in the dictionary.
  std::optional<int32_t> find(std::string_view s) const;
  // The first code whose string is >= s (size() if none).
  int32_t lower_bound(std::string_view s) const;
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::vector<std::string> strings_;
};

// One column: a contiguous array of the type's storage (see type.h) and, for
// strings, the dictionary its codes refer to. A nullable column also has a validity
// byte per row (1: a value, 0: NULL); a NULL row's storage holds the type's zero (the
// string '', which is then in the dictionary), so equal NULLs have equal bits.
class Column {
 public:
  using Storage = std::variant<std::vector<uint8_t>, std::vector<int32_t>, std::vector<int64_t>,
                               std::vector<float>, std::vector<double>>;

  explicit Column(Type t, bool nullable = false);
  Type type() const { return type_; }
  bool nullable() const { return nullable_; }
  size_t size() const;
  void reserve(size_t n);

  // Appends a value of this column's type (strings go through the builder state:
  // call finish() before reading codes). A NULL into a column that is not nullable is
  // a UserError(Data).
  void append(const Value& v);
  // The value at row i (strings decoded through the dictionary; NULL rows as NULL).
  Value get(size_t i) const;
  bool is_null(size_t i) const { return nullable_ && valid_[i] == 0; }
  // Validity bytes, one per row (empty for a column that is not nullable). Whoever fills
  // storage() directly fills these too, and puts the type's zero in NULL rows.
  const std::vector<uint8_t>& validity() const { return valid_; }
  std::vector<uint8_t>& validity() { return valid_; }
  // Makes the column nullable (every row valid) or not (every row must be valid;
  // InternalError otherwise).
  void set_nullable(bool nullable);

  template <typename T>
  std::vector<T>& data() {
    return std::get<std::vector<T>>(storage_);
  }
  template <typename T>
  const std::vector<T>& data() const {
    return std::get<std::vector<T>>(storage_);
  }
  const Storage& storage() const { return storage_; }
  Storage& storage() { return storage_; }
  // Pointer and byte size of the raw storage (codes for strings).
  const void* raw() const;
  void* raw();
  size_t bytes() const { return size() * static_cast<size_t>(type_size(type_)); }

  const std::shared_ptr<const Dictionary>& dictionary() const;
  // Sets codes and dictionary of a string column directly.
  void set_codes(std::vector<int32_t> codes, std::shared_ptr<const Dictionary> dict);

 private:
  void finish_strings() const;
  Type type_;
  bool nullable_ = false;
  std::vector<uint8_t> valid_;
  mutable Storage storage_;
  mutable std::shared_ptr<const Dictionary> dict_;
  // Strings appended since the last finish (codes are assigned lazily so that the
  // dictionary stays sorted).
  mutable std::vector<std::string> pending_;
};

// A relation on the host: a schema and one column per attribute.
class HostRelation {
 public:
  HostRelation() = default;
  explicit HostRelation(Schema schema);
  const Schema& schema() const { return schema_; }
  size_t num_rows() const;
  size_t num_columns() const { return columns_.size(); }
  Column& column(size_t i) { return columns_.at(i); }
  const Column& column(size_t i) const { return columns_.at(i); }
  Value get(size_t row, size_t col) const { return columns_.at(col).get(row); }
  std::vector<Value> row(size_t r) const;
  // Appends one row; throws UserError(Data) when the arity or a type is wrong.
  void append_row(const std::vector<Value>& row);

  // Builds a relation from rows; convenient in tests and examples.
  static HostRelation from_rows(Schema schema, const std::vector<std::vector<Value>>& rows);
  // Rows sorted by the total order, for order-insensitive comparison.
  std::vector<std::vector<Value>> sorted_rows() const;
  // The row ids in sorted_rows()' order (rows that compare equal in row-id order),
  // compared on the columns themselves, with no Value per cell: for comparing large
  // relations (a test's 16M-row output sorts in about a second instead of half a minute).
  std::vector<size_t> sorted_row_ids() const;
  // compare_rows(row(i), row(j)), on the columns.
  std::strong_ordering compare_row_ids(size_t i, size_t j) const;
  // An aligned text table with a header line (what `ranc run` prints).
  std::string to_table(size_t max_rows = SIZE_MAX) const;

 private:
  Schema schema_;
  std::vector<Column> columns_;
};

// Compares two rows by the total order of Value, attribute by attribute.
std::strong_ordering compare_rows(const std::vector<Value>& a, const std::vector<Value>& b);

}  // namespace ranc
