// Relations kept on the GPU across runs (issue 10): the catalog behind ranc::Session
// and `ranc shell`.
//
// A relation added to the catalog is uploaded once (staged, upload.h) into the
// catalog's own device pool and stays there until dropped or replaced. All resident
// relations share ONE order-preserving string dictionary: adding a relation with new
// strings merges them into it and recodes the string columns already resident on the
// device (one gather each), so a run binds every resident relation as it is, with no
// per-run merge or recode. bindings() gives the Executor::run_bound inputs.
//
// Needs a GPU (the constructor throws NoGpuError otherwise). Running out of device
// memory while adding is an OutOfMemoryError naming the relation and attribute; the
// catalog is then unchanged.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ranc/data/host_relation.h"
#include "ranc/runtime/device_relation.h"
#include "ranc/runtime/executor.h"
#include "ranc/runtime/memory.h"
#include "ranc/runtime/upload.h"

namespace ranc::rt {

class Catalog {
 public:
  explicit Catalog(int device = 0);
  ~Catalog();
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  // Uploads `rel` as `name`, replacing a relation of that name.
  void add(const std::string& name, const HostRelation& rel);
  // Frees a relation's device memory; UserError(UnknownRelation) if there is none.
  void drop(const std::string& name);
  bool contains(const std::string& name) const { return relations_.count(name) != 0; }
  std::vector<std::string> names() const;
  const Schema& schema(const std::string& name) const;
  int64_t num_rows(const std::string& name) const;
  // Device bytes of one relation's columns / of all resident relations.
  int64_t bytes(const std::string& name) const;
  int64_t bytes_in_use() const;

  // Every resident relation as a device input (no copy).
  std::map<std::string, InputBinding> bindings() const;
  // The shared dictionary (nullptr before the first string column).
  const std::shared_ptr<const Dictionary>& dictionary() const { return dict_; }

 private:
  struct Resident {
    Schema schema;
    int64_t rows = 0;
    std::vector<DeviceBuffer> columns;
    // Per column, its validity bytes (an empty buffer for a column that is not nullable).
    std::vector<DeviceBuffer> validity;
    int64_t bytes = 0;
  };
  const Resident& find(const std::string& name) const;

  int device_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<DevicePool> pool_;
  std::map<std::string, Resident> relations_;
  std::shared_ptr<const Dictionary> dict_;
  Uploader uploader_;  // its pinned buffers serve every add()
};

}  // namespace ranc::rt
