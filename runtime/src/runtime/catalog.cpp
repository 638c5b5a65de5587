// The catalog of resident relations (see ranc/runtime/catalog.h).
#include "ranc/runtime/catalog.h"

#include <fmt/format.h>

#include <algorithm>

#include "builtins.h"
#include "ranc/runtime/check.h"
#include "ranc/runtime/device.h"
#include "ranc/runtime/dictionary_params.h"
#include "ranc/runtime/errors.h"
#include "ranc/runtime/upload.h"

namespace ranc::rt {

Catalog::Catalog(int device) : device_(device) {
  auto gpu = find_gpu(device);
  if (!gpu) {
    std::string reason = no_gpu_reason();
    throw NoGpuError(reason.empty() ? fmt::format("GPU {} not found", device) : reason);
  }
  RANC_CUDA_CHECK(cudaSetDevice(device));
  RANC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  pool_ = std::make_unique<DevicePool>(device, stream_);
}

Catalog::~Catalog() {
  relations_.clear();  // frees into the pool before the pool goes
  pool_.reset();
  if (stream_) (void)cudaStreamDestroy(stream_);
  (void)cudaGetLastError();
}

const Catalog::Resident& Catalog::find(const std::string& name) const {
  auto it = relations_.find(name);
  if (it == relations_.end())
    throw UserError(Diagnostic{ErrorKind::UnknownRelation,
                               fmt::format("no resident relation '{}'", name), SourceLoc{}, ""});
  return it->second;
}

void Catalog::add(const std::string& name, const HostRelation& rel) {
  RANC_CUDA_CHECK(cudaSetDevice(device_));
  // The shared dictionary with this relation's strings.
  std::vector<std::shared_ptr<const Dictionary>> dicts{dict_};
  for (size_t i = 0; i < rel.num_columns(); ++i)
    if (rel.column(i).type() == Type::String) {
      (void)rel.column(i).raw();  // finishes pending strings, so the dictionary is final
      dicts.push_back(rel.column(i).dictionary());
    }
  std::shared_ptr<const Dictionary> merged = merge_dictionaries(dicts);
  const bool grew = dict_ && merged && merged->size() != dict_->size();

  // Everything that can fail on memory first: the new columns and the recode map.
  Resident r;
  r.schema = rel.schema();
  r.rows = static_cast<int64_t>(rel.num_rows());
  for (size_t i = 0; i < rel.num_columns(); ++i) {
    const Column& c = rel.column(i);
    r.columns.emplace_back(*pool_, static_cast<int64_t>(c.bytes()),
                           fmt::format("resident '{}'.{}", name, rel.schema()[i].name));
    r.bytes += static_cast<int64_t>(c.bytes());
    if (c.nullable()) {
      r.validity.emplace_back(*pool_, std::max<int64_t>(r.rows, 1),
                              fmt::format("resident '{}'.{} validity", name, rel.schema()[i].name));
      r.bytes += r.rows;
    } else {
      r.validity.emplace_back();
    }
  }
  std::vector<int32_t> old_to_new;
  std::unique_ptr<DeviceBuffer> dmap;
  if (grew) {
    old_to_new = recode_map(*dict_, *merged);
    dmap = std::make_unique<DeviceBuffer>(*pool_, static_cast<int64_t>(old_to_new.size()) * 4,
                                          "resident string recode map");
  }

  for (size_t i = 0; i < rel.num_columns(); ++i) {
    uploader_.add_column(r.columns[i].get(), rel.column(i), merged.get());
    if (rel.column(i).nullable() && r.rows > 0)
      uploader_.add(r.validity[i].get(), rel.column(i).validity().data(),
                    static_cast<size_t>(r.rows));
  }
  uploader_.run(stream_);

  // Recode the string columns already resident into the grown dictionary, in place.
  if (grew) {
    RANC_CUDA_CHECK(cudaMemcpyAsync(dmap->get(), old_to_new.data(), old_to_new.size() * 4,
                                    cudaMemcpyHostToDevice, stream_));
    for (auto& [n, res] : relations_)
      for (size_t i = 0; i < res.schema.size(); ++i)
        if (res.schema[i].type == Type::String && res.rows > 0)
          RANC_CUDA_CHECK(builtins::gather(dmap->get(),
                                           static_cast<const uint32_t*>(res.columns[i].get()),
                                           res.columns[i].get(), 4, res.rows, stream_));
    RANC_CUDA_CHECK(cudaStreamSynchronize(stream_));  // old_to_new dies here
  }
  if (merged) dict_ = merged;
  relations_[name] = std::move(r);
}

void Catalog::drop(const std::string& name) {
  (void)find(name);
  relations_.erase(name);
  RANC_CUDA_CHECK(cudaStreamSynchronize(stream_));
  pool_->trim();
}

std::vector<std::string> Catalog::names() const {
  std::vector<std::string> out;
  for (const auto& [n, r] : relations_) out.push_back(n);
  return out;
}

const Schema& Catalog::schema(const std::string& name) const {
  return find(name).schema;
}
int64_t Catalog::num_rows(const std::string& name) const {
  return find(name).rows;
}
int64_t Catalog::bytes(const std::string& name) const {
  return find(name).bytes;
}
int64_t Catalog::bytes_in_use() const {
  return pool_->stats().bytes_in_use;
}

std::map<std::string, InputBinding> Catalog::bindings() const {
  std::map<std::string, InputBinding> out;
  for (const auto& [n, r] : relations_) {
    DeviceInput d;
    d.schema = r.schema;
    d.num_rows = r.rows;
    d.dictionary = dict_;
    for (const auto& c : r.columns) d.columns.push_back(c.get());
    for (size_t i = 0; i < r.columns.size(); ++i)
      d.validity.push_back(r.schema[i].nullable ? r.validity[i].get() : nullptr);
    out.emplace(n, std::move(d));
  }
  return out;
}

}  // namespace ranc::rt
