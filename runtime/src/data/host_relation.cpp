// Schemas, dictionaries, columns and host relations.
#include "ranc/data/host_relation.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <numeric>

#include "ranc/data/error.h"

namespace ranc {

std::optional<size_t> Schema::find(std::string_view name) const {
  for (size_t i = 0; i < attributes.size(); ++i)
    if (attributes[i].name == name) return i;
  return std::nullopt;
}

std::string Schema::str() const {
  std::string s = "(";
  for (size_t i = 0; i < attributes.size(); ++i) {
    if (i) s += ", ";
    s += fmt::format("{} {}{}", attributes[i].name, type_name(attributes[i].type),
                     attributes[i].nullable ? " null" : "");
  }
  if (key_size > 0) {
    s += " | key ";
    for (size_t i = 0; i < key_size; ++i) {
      if (i) s += ", ";
      s += attributes[i].name;
    }
  }
  return s + ")";
}

std::shared_ptr<const Dictionary> Dictionary::from_strings(std::vector<std::string> strings) {
  // Loaders and merges mostly pass sorted, unique strings: one check instead of a sort.
  if (std::adjacent_find(strings.begin(), strings.end(), std::greater_equal<>()) !=
      strings.end()) {
    std::sort(strings.begin(), strings.end());
    strings.erase(std::unique(strings.begin(), strings.end()), strings.end());
  }
  auto d = std::make_shared<Dictionary>();
  d->strings_ = std::move(strings);
  return d;
}

std::optional<int32_t> Dictionary::find(std::string_view s) const {
  auto it = std::lower_bound(strings_.begin(), strings_.end(), s);
  if (it == strings_.end() || *it != s) return std::nullopt;
  return static_cast<int32_t>(it - strings_.begin());
}

int32_t Dictionary::lower_bound(std::string_view s) const {
  return static_cast<int32_t>(std::lower_bound(strings_.begin(), strings_.end(), s) -
                              strings_.begin());
}

static Column::Storage storage_for(Type t) {
  switch (t) {
    case Type::Bool:
      return std::vector<uint8_t>{};
    case Type::I32:
    case Type::Date:
    case Type::String:
      return std::vector<int32_t>{};
    case Type::I64:
      return std::vector<int64_t>{};
    case Type::F32:
      return std::vector<float>{};
    case Type::F64:
      return std::vector<double>{};
  }
  return std::vector<int32_t>{};
}

Column::Column(Type t, bool nullable) : type_(t), nullable_(nullable), storage_(storage_for(t)) {
  if (t == Type::String) dict_ = std::make_shared<Dictionary>();
}

void Column::set_nullable(bool nullable) {
  if (nullable == nullable_) return;
  if (nullable) {
    valid_.assign(size(), 1);
  } else {
    internal_check(std::find(valid_.begin(), valid_.end(), 0) == valid_.end(),
                   "set_nullable(false) on a column holding NULLs");
    valid_.clear();
    valid_.shrink_to_fit();
  }
  nullable_ = nullable;
}

size_t Column::size() const {
  return std::visit([](const auto& v) { return v.size(); }, storage_) + pending_.size();
}

void Column::reserve(size_t n) {
  std::visit([n](auto& v) { v.reserve(n); }, storage_);
  if (nullable_) valid_.reserve(n);
}

void Column::append(const Value& v) {
  if (v.type() != type_)
    throw UserError(Diagnostic{ErrorKind::Data,
                               fmt::format("value {} of type {} appended to a column of type {}",
                                           v.literal_str(), type_name(v.type()), type_name(type_)),
                               {},
                               {}});
  if (v.is_null() && !nullable_)
    throw UserError(Diagnostic{ErrorKind::Data,
                               fmt::format("NULL appended to a column of type {} that is not nullable",
                                           type_name(type_)),
                               {},
                               "declare the attribute nullable: 'name type null'"});
  if (nullable_) valid_.push_back(v.is_null() ? 0 : 1);
  switch (type_) {
    case Type::Bool:
      data<uint8_t>().push_back(v.as_bool() ? 1 : 0);
      break;
    case Type::I32:
    case Type::Date:
      data<int32_t>().push_back(v.as_i32());
      break;
    case Type::I64:
      data<int64_t>().push_back(v.as_i64());
      break;
    case Type::F32:
      data<float>().push_back(v.as_f32());
      break;
    case Type::F64:
      data<double>().push_back(v.as_f64());
      break;
    case Type::String:
      pending_.push_back(v.as_string());
      break;
  }
}

void Column::finish_strings() const {
  if (pending_.empty()) return;
  auto& codes = std::get<std::vector<int32_t>>(storage_);
  std::vector<std::string> all;
  all.reserve(codes.size() + pending_.size());
  for (int32_t c : codes) all.push_back(dict_->at(c));
  for (auto& s : pending_) all.push_back(std::move(s));
  pending_.clear();
  auto dict = Dictionary::from_strings(all);
  codes.resize(all.size());
  for (size_t i = 0; i < all.size(); ++i) codes[i] = *dict->find(all[i]);
  dict_ = std::move(dict);
}

Value Column::get(size_t i) const {
  if (nullable_ && valid_.at(i) == 0) return Value::null(type_);
  switch (type_) {
    case Type::Bool:
      return Value::boolean(data<uint8_t>().at(i) != 0);
    case Type::I32:
      return Value::i32(data<int32_t>().at(i));
    case Type::Date:
      return Value::date(data<int32_t>().at(i));
    case Type::I64:
      return Value::i64(data<int64_t>().at(i));
    case Type::F32:
      return Value::f32(data<float>().at(i));
    case Type::F64:
      return Value::f64(data<double>().at(i));
    case Type::String:
      finish_strings();
      return Value::string(dict_->at(data<int32_t>().at(i)));
  }
  return {};
}

const void* Column::raw() const {
  finish_strings();
  return std::visit([](const auto& v) -> const void* { return v.data(); }, storage_);
}

void* Column::raw() {
  finish_strings();
  return std::visit([](auto& v) -> void* { return v.data(); }, storage_);
}

void Column::set_codes(std::vector<int32_t> codes, std::shared_ptr<const Dictionary> dict) {
  internal_check(type_ == Type::String, "set_codes on a non-string column");
  for (int32_t c : codes)
    internal_check(c >= 0 && static_cast<size_t>(c) < dict->size(), "string code out of range");
  pending_.clear();
  storage_ = std::move(codes);
  dict_ = std::move(dict);
}

const std::shared_ptr<const Dictionary>& Column::dictionary() const {
  finish_strings();
  return dict_;
}

HostRelation::HostRelation(Schema schema) : schema_(std::move(schema)) {
  for (const auto& a : schema_.attributes) columns_.emplace_back(a.type, a.nullable);
}

size_t HostRelation::num_rows() const {
  return columns_.empty() ? 0 : columns_[0].size();
}

std::vector<Value> HostRelation::row(size_t r) const {
  std::vector<Value> out;
  out.reserve(columns_.size());
  for (const auto& c : columns_) out.push_back(c.get(r));
  return out;
}

void HostRelation::append_row(const std::vector<Value>& row) {
  if (row.size() != columns_.size())
    throw UserError(Diagnostic{ErrorKind::Data,
                               fmt::format("row has {} values but the schema {} has {} attributes",
                                           row.size(), schema_.str(), columns_.size()),
                               {},
                               {}});
  for (size_t i = 0; i < row.size(); ++i) {
    if (row[i].is_null() && !columns_[i].nullable())
      throw UserError(Diagnostic{
          ErrorKind::Data,
          fmt::format("NULL for attribute '{}', which is not nullable", schema_[i].name),
          {},
          {}});
    if (row[i].type() != columns_[i].type())
      throw UserError(Diagnostic{
          ErrorKind::Data,
          fmt::format("value {} for attribute '{}' has type {}, expected {}", row[i].literal_str(),
                      schema_[i].name, type_name(row[i].type()), type_name(columns_[i].type())),
          {},
          {}});
  }
  for (size_t i = 0; i < row.size(); ++i) columns_[i].append(row[i]);
}

HostRelation HostRelation::from_rows(Schema schema, const std::vector<std::vector<Value>>& rows) {
  HostRelation r(std::move(schema));
  for (auto& c : r.columns_) c.reserve(rows.size());
  for (const auto& row : rows) r.append_row(row);
  return r;
}

std::strong_ordering compare_rows(const std::vector<Value>& a, const std::vector<Value>& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    auto c = total_compare(a[i], b[i]);
    if (c != 0) return c;
  }
  return a.size() <=> b.size();
}

std::strong_ordering HostRelation::compare_row_ids(size_t i, size_t j) const {
  for (const Column& col : columns_) {
    if (col.nullable()) {
      const bool ni = col.is_null(i), nj = col.is_null(j);
      if (ni || nj) {
        if (ni != nj) return nj <=> ni;  // NULL first, as total_compare
        continue;                        // NULL = NULL
      }
    }
    std::strong_ordering c = std::strong_ordering::equal;
    switch (col.type()) {
      case Type::Bool:
        c = (col.data<uint8_t>()[i] != 0) <=> (col.data<uint8_t>()[j] != 0);
        break;
      case Type::I32:
      case Type::Date:
        c = col.data<int32_t>()[i] <=> col.data<int32_t>()[j];
        break;
      case Type::String:  // codes of an order-preserving dictionary order as the strings
        col.dictionary();   // assigns the codes of strings appended since the last read
        c = col.data<int32_t>()[i] <=> col.data<int32_t>()[j];
        break;
      case Type::I64:
        c = col.data<int64_t>()[i] <=> col.data<int64_t>()[j];
        break;
      case Type::F32:
        c = total_compare_f32(col.data<float>()[i], col.data<float>()[j]);
        break;
      case Type::F64:
        c = total_compare_f64(col.data<double>()[i], col.data<double>()[j]);
        break;
    }
    if (c != 0) return c;
  }
  return std::strong_ordering::equal;
}

std::vector<size_t> HostRelation::sorted_row_ids() const {
  for (const Column& col : columns_)
    if (col.type() == Type::String) col.dictionary();  // codes final before the sort reads them
  std::vector<size_t> ids(num_rows());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = i;
  std::stable_sort(ids.begin(), ids.end(),
                   [this](size_t a, size_t b) { return compare_row_ids(a, b) < 0; });
  return ids;
}

std::vector<std::vector<Value>> HostRelation::sorted_rows() const {
  std::vector<std::vector<Value>> rows;
  rows.reserve(num_rows());
  for (size_t i : sorted_row_ids()) rows.push_back(row(i));
  return rows;
}

std::string HostRelation::to_table(size_t max_rows) const {
  size_t n = std::min(num_rows(), max_rows);
  std::vector<std::vector<std::string>> cells(n + 1);
  for (const auto& a : schema_.attributes) cells[0].push_back(a.name);
  for (size_t r = 0; r < n; ++r)
    for (size_t c = 0; c < columns_.size(); ++c) cells[r + 1].push_back(columns_[c].get(r).str());
  std::vector<size_t> width(columns_.size(), 0);
  for (const auto& row : cells)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  auto right = [&](size_t c) { return is_numeric(columns_[c].type()); };
  for (size_t r = 0; r < cells.size(); ++r) {
    for (size_t c = 0; c < cells[r].size(); ++c) {
      if (c) out += "  ";
      const std::string& s = cells[r][c];
      std::string pad(width[c] - s.size(), ' ');
      out += right(c) ? pad + s : (c + 1 == cells[r].size() ? s : s + pad);
    }
    out += '\n';
    if (r == 0) {
      for (size_t c = 0; c < width.size(); ++c) {
        if (c) out += "  ";
        out += std::string(width[c], '-');
      }
      out += '\n';
    }
  }
  if (n < num_rows())
    out += fmt::format("... ({} rows in all)\n", num_rows());
  else
    out += fmt::format("({} row{})\n", n, n == 1 ? "" : "s");
  return out;
}

}  // namespace ranc
