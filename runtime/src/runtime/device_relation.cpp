// Upload and download of columnar relations.
#include "ranc/runtime/device_relation.h"

#include <fmt/format.h>

#include <algorithm>

#include "ranc/runtime/check.h"
#include "ranc/runtime/errors.h"

namespace ranc::rt {

DeviceRelation::DeviceRelation(Schema schema, int64_t num_rows, std::vector<DeviceBuffer> columns,
                               std::shared_ptr<const Dictionary> dictionary)
    : schema_(std::move(schema)),
      num_rows_(num_rows),
      columns_(std::move(columns)),
      dictionary_(std::move(dictionary)) {}

void upload_column(const Column& col, void* dst, cudaStream_t stream) {
  const void* src = col.raw();  // finishes pending strings first
  size_t bytes = col.bytes();
  if (bytes == 0) return;
  RANC_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
}

DeviceRelation upload(const HostRelation& rel, DevicePool& pool, std::string_view what) {
  std::shared_ptr<const Dictionary> dict;
  std::vector<DeviceBuffer> cols;
  for (size_t i = 0; i < rel.num_columns(); ++i) {
    const Column& c = rel.column(i);
    const std::string& name = rel.schema()[i].name;
    if (c.type() == Type::String) {
      const auto& d = c.dictionary();
      if (dict && d && d != dict && d->strings() != dict->strings()) {
        throw UserError(Diagnostic{
            ErrorKind::InvalidArgument,
            fmt::format("string columns of '{}' use different dictionaries", what), SourceLoc{},
            "bind host relations through the executor, which merges dictionaries"});
      }
      if (!dict) dict = d;
    }
    cols.emplace_back(pool, static_cast<int64_t>(c.bytes()), fmt::format("{}.{}", what, name));
    upload_column(c, cols.back().get(), pool.stream());
  }
  RANC_CUDA_CHECK(cudaStreamSynchronize(pool.stream()));
  return DeviceRelation(rel.schema(), static_cast<int64_t>(rel.num_rows()), std::move(cols),
                        std::move(dict));
}

HostRelation download(const Schema& schema, const std::vector<const void*>& columns,
                      int64_t num_rows, const std::shared_ptr<const Dictionary>& dictionary,
                      cudaStream_t stream, const std::vector<const void*>& validity) {
  internal_check(columns.size() == schema.size(), "download: column count differs from schema");
  internal_check(num_rows >= 0, "download: negative row count");
  HostRelation out(schema);
  std::vector<std::vector<int32_t>> codes(schema.size());
  for (size_t i = 0; i < schema.size(); ++i) {
    Type t = schema[i].type;
    size_t bytes = static_cast<size_t>(num_rows) * static_cast<size_t>(type_size(t));
    void* dst = nullptr;
    if (t == Type::String) {
      codes[i].resize(static_cast<size_t>(num_rows));
      dst = codes[i].data();
    } else {
      std::visit([&](auto& v) { v.resize(static_cast<size_t>(num_rows)); },
                 out.column(i).storage());
      dst = out.column(i).raw();
    }
    if (bytes > 0) {
      RANC_CUDA_CHECK(cudaMemcpyAsync(dst, columns[i], bytes, cudaMemcpyDeviceToHost, stream));
    }
    if (schema[i].nullable) {
      auto& valid = out.column(i).validity();
      const void* src = i < validity.size() ? validity[i] : nullptr;
      valid.assign(static_cast<size_t>(num_rows), 1);
      if (src && num_rows > 0)
        RANC_CUDA_CHECK(cudaMemcpyAsync(valid.data(), src, static_cast<size_t>(num_rows),
                                        cudaMemcpyDeviceToHost, stream));
    }
  }
  RANC_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (size_t i = 0; i < schema.size(); ++i) {
    Column& col = out.column(i);
    const bool any_null =
        schema[i].nullable && std::find(col.validity().begin(), col.validity().end(), 0) !=
                                  col.validity().end();
    if (schema[i].type != Type::String) {
      // A NULL stores the type's zero (host_relation.h), whatever the device left there.
      if (any_null)
        std::visit(
            [&](auto& v) {
              for (size_t r = 0; r < v.size(); ++r)
                if (!col.validity()[r]) v[r] = {};
            },
            col.storage());
      continue;
    }
    auto dict = dictionary ? dictionary : std::make_shared<const Dictionary>();
    if (any_null) {
      // NULL strings hold the code of '' (added to the dictionary when it lacks it).
      if (!dict->find("")) {
        std::vector<std::string> all = dict->strings();
        all.insert(all.begin(), std::string());
        dict = Dictionary::from_strings(std::move(all));
        for (int32_t& c : codes[i]) ++c;  // '' is code 0, before every other string
      }
      const int32_t empty = *dict->find("");
      for (size_t r = 0; r < codes[i].size(); ++r)
        if (!col.validity()[r]) codes[i][r] = empty;
    }
    col.set_codes(std::move(codes[i]), dict);
  }
  return out;
}

HostRelation download(const DeviceRelation& rel, cudaStream_t stream) {
  std::vector<const void*> cols;
  for (size_t i = 0; i < rel.num_columns(); ++i) cols.push_back(rel.column(i));
  return download(rel.schema(), cols, rel.num_rows(), rel.dictionary(), stream);
}

}  // namespace ranc::rt
