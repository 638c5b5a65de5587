// Relations on the device: one pool buffer per attribute (dense columnar form),
// uploaded from and downloaded to HostRelation. String columns hold int32 codes;
// their dictionary stays on the host.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "ranc/data/host_relation.h"
#include "ranc/runtime/memory.h"

namespace ranc::rt {

class DeviceRelation {
 public:
  DeviceRelation() = default;
  DeviceRelation(Schema schema, int64_t num_rows, std::vector<DeviceBuffer> columns,
                 std::shared_ptr<const Dictionary> dictionary);
  const Schema& schema() const { return schema_; }
  int64_t num_rows() const { return num_rows_; }
  size_t num_columns() const { return columns_.size(); }
  void* column(size_t i) const { return columns_.at(i).get(); }
  // The dictionary of every string column (nullptr when there is none).
  const std::shared_ptr<const Dictionary>& dictionary() const { return dictionary_; }

 private:
  Schema schema_;
  int64_t num_rows_ = 0;
  std::vector<DeviceBuffer> columns_;
  std::shared_ptr<const Dictionary> dictionary_;
};

// Copies one host column (codes for strings) into `dst` (at least col.bytes()).
void upload_column(const Column& col, void* dst, cudaStream_t stream);
// Uploads every column into new pool buffers named "<what>.<attribute>". String
// columns must all use one dictionary (throws UserError otherwise); it becomes the
// relation's dictionary. Returns after the copies complete.
DeviceRelation upload(const HostRelation& rel, DevicePool& pool, std::string_view what);

// Copies `num_rows` values of each device column into a new HostRelation of
// `schema`; string columns get `dictionary` (required when the schema has strings).
// A nullable attribute takes its validity bytes from `validity[i]` (all valid when it
// is null or absent); NULL rows get the type's zero whatever the device held.
// Synchronizes `stream`.
HostRelation download(const Schema& schema, const std::vector<const void*>& columns,
                      int64_t num_rows, const std::shared_ptr<const Dictionary>& dictionary,
                      cudaStream_t stream, const std::vector<const void*>& validity = {});
HostRelation download(const DeviceRelation& rel, cudaStream_t stream);

}  // namespace ranc::rt
