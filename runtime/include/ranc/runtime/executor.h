// The plan executor: binds inputs, builds the run's string dictionary, compiles the
// plan's source through the kernel cache, loads the CUBIN (cudaLibraryLoadData, no
// driver library link), runs the steps in order on one stream and downloads the
// outputs with timings and memory statistics.
//
// Without a GPU, Executor::run throws NoGpuError (the CLI then falls back to the
// CPU reference); compile_plan() works without one.
//
// LikeMask buffers (plan.h DictParam) are allocated by the executor with
// max(1, dictionary size) one-byte elements before the steps; the plan must not
// Alloc them (it may Free them). Buffers not freed by the plan are freed at the end.
//
// Env: RANC_SYNC_STEPS=1 synchronizes after every step so an asynchronous kernel
// fault is reported with the step and plan node that caused it; RANC_PROFILE_STEPS=1
// also prints every step's wall time to stderr; RANC_PROFILE_EVENTS=1 prints every step's
// time on the GPU and the idle gap before it (events, no waits); RANC_PROFILE_HOST=1 prints
// the host's time in each kind of step and its waits (clock reads only); RANC_MEMORY_LIMIT=8G caps the device
// memory of a run (ExecutorOptions::memory_limit).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ranc/data/host_relation.h"
#include "ranc/runtime/device.h"
#include "ranc/runtime/kernel_cache.h"
#include "ranc/runtime/memory.h"
#include "ranc/runtime/plan.h"

namespace ranc::rt {

struct ExecutorOptions {
  int device = 0;
  std::optional<int> arch;       // NVRTC target; default: the GPU's
  KernelCache* cache = nullptr;  // default: KernelCache::global()
  bool sync_each_step = false;   // also on with RANC_SYNC_STEPS=1
  bool validate = true;          // validate_plan() before running
  // Device memory a run may hold at once, in bytes (0: as much as the device has); also
  // RANC_MEMORY_LIMIT (e.g. 8G), which wins. A fixpoint iteration that would pass it is
  // split (plan.h LoopEnd::split); any other allocation past it is an OutOfMemoryError.
  int64_t memory_limit = 0;
  // Device memory prepare() adds to the pool ahead of the first run (DevicePool::reserve):
  // a fresh process's allocations then come from memory already mapped. 0: none; also
  // RANC_RESERVE (e.g. 4G, 0), which wins.
  int64_t reserve_bytes = 0;
};

struct RunStats {
  CacheSource compile_source = CacheSource::Compiled;  // where the CUBIN came from
  double compile_seconds = 0;                          // cache lookup incl. NVRTC on a miss
  double load_seconds = 0;  // cudaLibraryLoadData (0 when already loaded)
  double bind_seconds = 0;  // dictionary merge, recoding, DictParams
  double upload_seconds = 0;
  double execute_seconds = 0;  // the steps
  double download_seconds = 0;
  double total_seconds = 0;
  int64_t peak_device_bytes = 0;  // pool peak during this run
  int64_t device_allocations = 0;
  int64_t kernel_launches = 0;  // generated kernels and built-ins
  int64_t regrows = 0;          // paged outputs rerun after their estimate fell short
  // Sorts of at least 2^17 keys that found them all equal or already in the order asked (a
  // pass over the keys, after a sample of them was in order): copied, not sorted.
  int64_t sorts_skipped = 0;
  int64_t loop_iterations = 0;  // iterations of plan loops (fixpoints), all loops together
  int64_t resident_rounds = 0;  // of those, run by a resident kernel (plan.h ResidentRounds)
  int64_t split_iterations = 0;  // of those, started again on halves of their deltas (out of memory)
  int64_t readbacks = 0;  // waits for read-back flags and sizes (consecutive ones share one)
  // Of execute_seconds, the time the host spent waiting for the GPU (the read-backs' waits and
  // the wait at the end); the rest went to issuing steps while the GPU ran ahead or idled.
  double wait_seconds = 0;
  int64_t bytes_uploaded = 0;
  int64_t bytes_downloaded = 0;
};

struct RunResult {
  std::vector<std::pair<std::string, HostRelation>> outputs;  // in plan order
  RunStats stats;
  // The output of that name; throws UserError(UnknownRelation) when absent.
  const HostRelation& output(std::string_view name) const;
};

// An input whose columns are already on the device (not copied, not freed; string
// columns are recoded into executor buffers when the run's dictionary differs).
struct DeviceInput {
  Schema schema;
  std::vector<const void*> columns;
  int64_t num_rows = 0;
  std::shared_ptr<const Dictionary> dictionary;  // for string columns
  // Per column, its validity bytes (1 = a value; plan.h PlanRelation), or null when the
  // column has no NULL; empty when none has.
  std::vector<const void*> validity = {};
};
using InputBinding = std::variant<const HostRelation*, DeviceInput>;

// The plan's source compiled for `arch` through `cache` (no GPU needed).
CacheLookup compile_plan(const Plan& plan, int arch, KernelCache& cache);
// The NVRTC request compile_plan makes (the kernel cache's key comes from it).
JitRequest plan_jit_request(const Plan& plan, int arch);

class Executor {
 public:
  explicit Executor(ExecutorOptions options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Inputs by plan input name. Throws UserError (UnknownRelation, SchemaMismatch)
  // for missing or mismatched inputs, NoGpuError, JitError, OutOfMemoryError,
  // ExecutionError (error flags), CudaError.
  RunResult run(const Plan& plan, const std::map<std::string, const HostRelation*>& inputs);
  // The same with host or device inputs.
  RunResult run_bound(const Plan& plan, const std::map<std::string, InputBinding>& inputs);

  // Sets up the GPU side now instead of in the first run: the CUDA context, stream,
  // memory pool and the Uploader's pinned staging buffers. `ranc run` calls it on a
  // thread while the inputs load. Throws NoGpuError / CudaError.
  void prepare();

  // The pool's statistics over the executor's life.
  MemoryStats memory_stats() const;
  // The GPU used (throws NoGpuError when there is none).
  const DeviceInfo& device();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ranc::rt
