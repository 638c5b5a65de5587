// The plan executor.
#include "ranc/runtime/executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>

#include "builtins.h"
#include "env.h"
#include "ranc/runtime/check.h"
#include "ranc/runtime/device_relation.h"
#include "ranc/runtime/dictionary_params.h"
#include "ranc/runtime/errors.h"
#include "ranc/runtime/plan_validate.h"
#include "ranc/runtime/upload.h"

namespace ranc::rt {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;


// The transformed sort of a key type that is not a native word (Executor::native_word):
// bools and floats.
builtins::SortKey sort_key_for(Type t) {
  switch (t) {
    case Type::Bool:
      return builtins::SortKey::U8;
    case Type::F32:
      return builtins::SortKey::F32;
    case Type::F64:
      return builtins::SortKey::F64;
    default:
      break;
  }
  throw InternalError(fmt::format("sort_key_for: {} keys are sorted as native words", type_name(t)));
}

std::string attrs_str(const Schema& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += fmt::format("{} {}", s[i].name, type_name(s[i].type));
  }
  return out + ")";
}

}  // namespace

const HostRelation& RunResult::output(std::string_view name) const {
  for (const auto& [n, rel] : outputs)
    if (n == name) return rel;
  throw UserError(Diagnostic{ErrorKind::UnknownRelation,
                             fmt::format("the program has no output '{}'", name), SourceLoc{}, ""});
}

JitRequest plan_jit_request(const Plan& plan, int arch) {
  JitRequest req;
  req.source = plan.source;
  req.program_name = "ranc_program.cu";
  req.options = plan.nvrtc_options;
  req.arch = arch;
  return req;
}

CacheLookup compile_plan(const Plan& plan, int arch, KernelCache& cache) {
  return cache.get_or_compile(plan_jit_request(plan, arch));
}

namespace {
// A step's input passed a size the step cannot take (a sort of more than 2^32 rows, a
// kernel of more than 2^31 - 1 blocks). Inside a loop whose deltas split it is answered
// like running out of memory (LoopEnd::split); elsewhere it is the ExecutionError it is.
class SizeLimitError : public ExecutionError {
 public:
  using ExecutionError::ExecutionError;
};
}  // namespace

// The most read-backs one synchronisation waits for (Run::read_back).
constexpr size_t kReadbackSlots = 64;

struct Executor::Impl {
  ExecutorOptions opts;
  bool initialized = false;
  DeviceInfo info;
  cudaStream_t stream = nullptr;
  std::unique_ptr<DevicePool> pool;
  std::map<std::string, cudaLibrary_t> libraries;  // by cache key (hex)
  Uploader uploader;  // its pinned staging buffers serve every run
  // Pinned host memory the runs' read-backs (flags, sizes) are copied into (Run::read_back).
  int64_t* readback = nullptr;

  ~Impl() {
    if (readback) (void)cudaFreeHost(readback);
    pool.reset();
    for (auto& [k, lib] : libraries) (void)cudaLibraryUnload(lib);
    if (stream) (void)cudaStreamDestroy(stream);
    (void)cudaGetLastError();
  }

  void init() {
    if (initialized) return;
    auto gpu = find_gpu(opts.device);
    if (!gpu) {
      std::string reason = no_gpu_reason();
      if (reason.empty()) reason = fmt::format("GPU {} not found", opts.device);
      throw NoGpuError(reason);
    }
    info = *gpu;
    RANC_CUDA_CHECK(cudaSetDevice(opts.device));
    RANC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    pool = std::make_unique<DevicePool>(opts.device, stream);
    void* host = nullptr;
    RANC_CUDA_CHECK(cudaMallocHost(&host, kReadbackSlots * sizeof(int64_t)));
    readback = static_cast<int64_t*>(host);
    initialized = true;
  }
};

namespace {

// The state of one run: buffers, slots and kernels. Frees what it owns on exit.
class Run {
 public:
  Run(const Plan& plan, DevicePool& pool, cudaStream_t stream, bool sync_each_step, RunStats& stats,
      Uploader& uploader, int64_t* readback)
      : plan_(plan),
        pool_(pool),
        stream_(stream),
        sync_each_step_(sync_each_step),
        stats_(stats),
        uploader_(uploader),
        readback_(readback) {
    ptr_.assign(plan.buffers.size(), nullptr);
    count_.assign(plan.buffers.size(), 0);
    owned_.assign(plan.buffers.size(), false);
    slots_.assign(static_cast<size_t>(plan.num_slots), 0);
  }
  ~Run() {
    for (size_t i = 0; i < ptr_.size(); ++i)
      if (owned_[i] && ptr_[i]) pool_.free_noexcept(ptr_[i]);
  }

  // `sms`: the device's SMs (DeviceInfo::sm_count), for whole-waves launches.
  void bind(const std::map<std::string, InputBinding>& inputs, cudaLibrary_t lib, int sms) {
    for (const auto& name : plan_.kernels) {
      cudaKernel_t k = nullptr;
      cudaError_t err = cudaLibraryGetKernel(&k, lib, name.c_str());
      if (err == cudaErrorSymbolNotFound) {
        (void)cudaGetLastError();
        throw InternalError(
            fmt::format("kernel '{}' is not in the compiled program (not extern \"C\"?)", name));
      }
      RANC_CUDA_CHECK(err);
      kernels_[name] = k;
    }
    // Each Launch step's kernel, found once (launch() runs in the thin rounds' hot path).
    step_kernel_.assign(plan_.steps.size(), nullptr);
    step_alt_kernel_.assign(plan_.steps.size(), nullptr);
    for (size_t i = 0; i < plan_.steps.size(); ++i)
      if (const auto* l = std::get_if<Launch>(&plan_.steps[i])) {
        step_kernel_[i] = kernels_.at(l->kernel);
        if (l->alt_when >= 0) step_alt_kernel_[i] = kernels_.at(l->alt_kernel);
      }
    // Kernels that take more than the default 48 KB of dynamic shared memory are allowed
    // it once per run, for their largest launch, not at every launch.
    std::map<std::string, int32_t> big_smem;
    for (const Step& st : plan_.steps) {
      if (const auto* l = std::get_if<Launch>(&st); l && l->dynamic_smem > 48 * 1024) {
        big_smem[l->kernel] = std::max(big_smem[l->kernel], l->dynamic_smem);
        if (l->alt_when >= 0)
          big_smem[l->alt_kernel] = std::max(big_smem[l->alt_kernel], l->dynamic_smem);
      }
    }
    for (const auto& [name, bytes] : big_smem) {
      RANC_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernels_.at(name)),
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    }
    // Resident rounds' kernels and their grids: all blocks resident at once (a cooperative
    // launch), RANC_RESIDENT_BLOCKS an SM (default 1) at most; grid 0 where the device cannot.
    for (const Step& st : plan_.steps) {
      const auto* e = std::get_if<LoopEnd>(&st);
      if (!e || !e->resident) continue;
      cudaKernel_t k = kernels_.at(e->resident->kernel);
      int per_sm = 0, cooperative = 0, device = 0;
      RANC_CUDA_CHECK(cudaGetDevice(&device));
      RANC_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
      RANC_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(k),
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           ResidentRounds::kLocalBytes));
      RANC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, reinterpret_cast<const void*>(k), ResidentRounds::kBlockThreads,
          ResidentRounds::kLocalBytes));
      const int64_t want = resident_blocks_per_sm();
      resident_kernels_[e->resident->kernel] = {
          k, cooperative ? std::min<int64_t>(std::min<int64_t>(per_sm, want) * sms, kResidentMaxBlocks) : 0};
    }
    if (const char* v = std::getenv("RANC_RESIDENT_ROWS"); v && *v) resident_enter_rows_ = std::atoll(v);
    if (const char* v = std::getenv("RANC_RESIDENT_MAX_ROWS"); v && *v) resident_max_rows_ = std::atoll(v);
    if (const char* v = std::getenv("RANC_RESIDENT_BLOCK_ROWS"); v && *v)
      resident_block_rows_ = std::max<int64_t>(1, std::atoll(v));
    // 0: rounds with a barrier even without a round limit (else the worklist).
    if (const char* v = std::getenv("RANC_RESIDENT_ASYNC"); v && *v) resident_async_ = std::string_view(v) != "0";
    if (const char* v = std::getenv("RANC_RESIDENT_ROOM"); v && *v)
      resident_room_ = std::clamp<int64_t>(std::atoll(v), int64_t{1} << 12, int64_t{1} << 32);
    if (const char* v = std::getenv("RANC_RESIDENT_FILL"); v && *v)
      resident_fill_ = std::clamp<int64_t>(std::atoll(v), 1, 16);
    sms_ = sms;
    // The blocks of one wave of each whole-waves launch (Launch::whole_waves).
    step_wave_blocks_.assign(plan_.steps.size(), 0);
    for (size_t i = 0; i < plan_.steps.size(); ++i) {
      const auto* l = std::get_if<Launch>(&plan_.steps[i]);
      if (!l || !(l->whole_waves || l->one_wave)) continue;
      int per_sm = 0;
      RANC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, reinterpret_cast<const void*>(step_kernel_[i]), l->block_threads,
          static_cast<size_t>(l->dynamic_smem)));
      step_wave_blocks_[i] = static_cast<int64_t>(per_sm) * sms;
    }
    // Schemas first, so a mistake is reported before anything is uploaded. A bound
    // relation may have more attributes than the plan's input (prune_attributes keeps
    // only those the program uses): they are taken by name.
    std::vector<const InputBinding*> bound;
    std::vector<std::shared_ptr<const Dictionary>> dicts;
    column_of_.assign(plan_.inputs.size(), {});
    for (size_t ri = 0; ri < plan_.inputs.size(); ++ri) {
      const PlanRelation& r = plan_.inputs[ri];
      auto it = inputs.find(r.name);
      if (it == inputs.end()) {
        throw UserError(Diagnostic{
            ErrorKind::UnknownRelation, fmt::format("no input bound for relation '{}'", r.name),
            SourceLoc{}, fmt::format("expected schema {}", attrs_str(r.schema))});
      }
      const InputBinding& b = it->second;
      const Schema* schema = nullptr;
      if (auto* h = std::get_if<const HostRelation*>(&b)) {
        internal_check(*h != nullptr, "null HostRelation bound");
        schema = &(*h)->schema();
      } else {
        const auto& d = std::get<DeviceInput>(b);
        schema = &d.schema;
        if (d.columns.size() != d.schema.size()) {
          throw UserError(
              Diagnostic{ErrorKind::SchemaMismatch,
                         fmt::format("device input '{}' has {} columns for {} attributes", r.name,
                                     d.columns.size(), d.schema.size()),
                         SourceLoc{}, ""});
        }
      }
      std::vector<size_t>& cols = column_of_[ri];
      for (const Attribute& a : r.schema.attributes) {
        std::optional<size_t> c = schema->find(a.name);
        if (c && !a.nullable && (*schema)[*c].nullable) {
          // A nullable column bound to an attribute the program declares not nullable:
          // fine without NULLs (host columns are checked; device ones cannot be cheaply).
          bool has_null = true;
          if (auto* h = std::get_if<const HostRelation*>(&b)) {
            const auto& v = (*h)->column(*c).validity();
            has_null = std::find(v.begin(), v.end(), 0) != v.end();
          }
          if (has_null)
            throw UserError(Diagnostic{
                ErrorKind::SchemaMismatch,
                fmt::format("input '{}' may hold NULLs in attribute '{}', which the program "
                            "declares not nullable",
                            r.name, a.name),
                SourceLoc{},
                fmt::format("declare it '{} {} null'", a.name, type_name(a.type))});
        }
        if (!c || (*schema)[*c].type != a.type) {
          throw UserError(Diagnostic{
              ErrorKind::SchemaMismatch,
              fmt::format("input '{}' has schema {} but the program expects {}{}", r.name,
                          attrs_str(*schema), attrs_str(r.schema),
                          !c ? fmt::format(" (no attribute '{}')", a.name)
                             : fmt::format(" ('{}' is {}, not {})", a.name,
                                           type_name((*schema)[*c].type), type_name(a.type))),
              SourceLoc{}, ""});
        }
        cols.push_back(*c);
        if (a.type != Type::String) continue;
        if (auto* h = std::get_if<const HostRelation*>(&b))
          dicts.push_back((*h)->column(*c).dictionary());
        else if (std::find(dicts.begin(), dicts.end(), std::get<DeviceInput>(b).dictionary) ==
                 dicts.end())
          dicts.push_back(std::get<DeviceInput>(b).dictionary);
      }
      bound.push_back(&b);
    }
    auto t0 = Clock::now();
    dict_ = extend_dictionary(merge_dictionaries(dicts), plan_.dict_params);
    if (!dict_) dict_ = std::make_shared<const Dictionary>();
    stats_.bind_seconds += seconds_since(t0);

    t0 = Clock::now();
    for (size_t ri = 0; ri < plan_.inputs.size(); ++ri) {
      const PlanRelation& r = plan_.inputs[ri];
      if (auto* h = std::get_if<const HostRelation*>(bound[ri])) {
        bind_host(r, **h, column_of_[ri]);
      } else {
        bind_device(r, std::get<DeviceInput>(*bound[ri]), column_of_[ri]);
      }
    }
    uploader_.run(stream_);
    RANC_CUDA_CHECK(cudaStreamSynchronize(stream_));
    stats_.upload_seconds += seconds_since(t0);

    t0 = Clock::now();
    for (const auto& p : plan_.dict_params) {
      if (p.kind == DictParam::Kind::LikeMask) {
        std::vector<uint8_t> mask = like_mask(*dict_, p.text);
        allocate(p.mask, static_cast<int64_t>(mask.size()), "LIKE '" + p.text + "' mask");
        RANC_CUDA_CHECK(cudaMemcpyAsync(ptr_[p.mask], mask.data(), mask.size(),
                                        cudaMemcpyHostToDevice, stream_));
        // The host vector dies here: wait for the copy.
        RANC_CUDA_CHECK(cudaStreamSynchronize(stream_));
      } else if (p.kind == DictParam::Kind::SubstringMap) {
        std::vector<int32_t> map = substring_map(*dict_, p.from, p.length);
        allocate(p.mask, static_cast<int64_t>(map.size()),
                 fmt::format("substring({}, {}) map", p.from, p.length));
        RANC_CUDA_CHECK(cudaMemcpyAsync(ptr_[p.mask], map.data(), map.size() * 4,
                                        cudaMemcpyHostToDevice, stream_));
        RANC_CUDA_CHECK(cudaStreamSynchronize(stream_));
      } else {
        slots_[static_cast<size_t>(p.slot)] = eval_dict_slot(p, *dict_);
      }
    }
    stats_.bind_seconds += seconds_since(t0);
  }

  void execute() {
    auto t0 = Clock::now();
    // RANC_PROFILE_STEPS=1: synchronise after every step and print each step's wall
    // time to stderr (where the time of a plan goes; the total is then slower).
    static const bool profile = env_switch("RANC_PROFILE_STEPS").value_or(false);
    // RANC_PROFILE_EVENTS=1: an event before and after every step, no synchronisation; after
    // the run, each step's time on the GPU and the idle gap before it (where the stream
    // waited for the host) to stderr, then the run's GPU span: what the kernels take against
    // what the plan around them adds, without profile's waits.
    static const bool events = env_switch("RANC_PROFILE_EVENTS").value_or(false);
    // RANC_PROFILE_HOST=1: the host's time in each kind of step (a clock read before and after
    // each, nothing on the stream), and how much of it waited for the GPU; after the run, to
    // stderr. Where a plan is bound by the host (short kernels), this says which steps cost it.
    static const bool host_profile = env_switch("RANC_PROFILE_HOST").value_or(false);
    std::map<std::string, HostStepTime> host_times;
    std::vector<StepMark> marks;
    // Created before the run (a loop's further steps take new ones), so that the gaps measure
    // the plan, not the events' creation.
    std::vector<cudaEvent_t> spare;
    auto event = [&spare] {
      cudaEvent_t e;
      if (!spare.empty()) {
        e = spare.back();
        spare.pop_back();
      } else {
        RANC_CUDA_CHECK(cudaEventCreate(&e));
      }
      return e;
    };
    if (events) {
      spare.resize(2 * plan_.steps.size());
      for (cudaEvent_t& e : spare) RANC_CUDA_CHECK(cudaEventCreate(&e));
    }
    for (next_step_ = 0; next_step_ < plan_.steps.size();) {
      const size_t i = next_step_++;
      step_index_ = i;
      const Step& s = plan_.steps[i];
      // Read-backs batched by read_back() live across a run of such steps only (a loop
      // comes back to them with new values).
      if (!std::holds_alternative<Free>(s) && !std::holds_alternative<CheckFlag>(s) &&
          !std::holds_alternative<ReadSize>(s))
        batch_slot_.clear();
      try {
        auto ts = Clock::now();
        if (events) {
          const auto* l = std::get_if<Launch>(&s);
          marks.push_back({where(s) + (l ? " " + l->kernel : std::string()), event(), event()});
          RANC_CUDA_CHECK(cudaEventRecord(marks.back().before, stream_));
        }
        const double waited_before = stats_.wait_seconds;
        std::visit([&](const auto& x) { exec(x); }, s);
        if (host_profile) {
          const double took = seconds_since(ts);  // before the map's lookup and the name
          // Zeroed allocations apart: their memset is a driver call of its own.
          const auto* alloc = std::get_if<Alloc>(&s);
          HostStepTime& h = host_times[alloc && alloc->zero ? "Alloc zeroed" : step_name(s)];
          ++h.steps;
          h.seconds += took;
          h.waited += stats_.wait_seconds - waited_before;
        }
        if (events) RANC_CUDA_CHECK(cudaEventRecord(marks.back().after, stream_));
        if (sync_each_step_ || profile) RANC_CUDA_CHECK(cudaStreamSynchronize(stream_));
        if (profile) {
          const auto* l = std::get_if<Launch>(&s);
          std::fprintf(stderr, "ranc profile: %9.3f ms  %s%s%s\n", seconds_since(ts) * 1e3,
                       where(s).c_str(), l ? " " : "", l ? l->kernel.c_str() : "");
        }
      } catch (const CudaError& e) {
        throw CudaError(
            e.code(), e.code_name(), e.expression(), e.file(), e.line(),
            fmt::format("{} in {}", cudaGetErrorString(cudaError_t(e.code())), where(s)));
      } catch (const OutOfMemoryError&) {
        if (!split_iteration()) throw;
      } catch (const SizeLimitError&) {
        if (!split_iteration()) throw;
      }
    }
    const auto t_end = Clock::now();
    wait();
    stats_.execute_seconds += seconds_since(t0);
    if (host_profile) {
      double total = 0;
      for (const auto& [kind, h] : host_times) total += h.seconds;
      for (const auto& [kind, h] : host_times) {
        std::fprintf(stderr, "ranc host: %-14s %5lld steps %9.3f ms (%.3f ms of it waiting)\n",
                     kind.c_str(), static_cast<long long>(h.steps), h.seconds * 1e3, h.waited * 1e3);
      }
      std::fprintf(stderr,
                   "ranc host: run %.3f ms: steps %.3f ms, between them %.3f ms, final wait %.3f ms\n",
                   seconds_since(t0) * 1e3, total * 1e3,
                   (std::chrono::duration<double>(t_end - t0).count() - total) * 1e3,
                   std::chrono::duration<double>(Clock::now() - t_end).count() * 1e3);
    }
    if (events) {
      for (cudaEvent_t e : spare) (void)cudaEventDestroy(e);
      print_step_events(marks, seconds_since(t0));
    }
  }
  // RANC_PROFILE_HOST's totals of one kind of step (execute()).
  struct HostStepTime {
    int64_t steps = 0;
    double seconds = 0, waited = 0;
  };
  // RANC_PROFILE_EVENTS' record of one step run (execute()).
  struct StepMark {
    std::string what;  // where(step) when it ran, and a launch's kernel
    cudaEvent_t before, after;
  };
  // RANC_PROFILE_EVENTS' report (execute()): the events are destroyed here.
  void print_step_events(const std::vector<StepMark>& marks, double host_seconds) {
    // A step that threw (an out-of-memory split the run recovered from) recorded no `after`:
    // its times read as 0, never as an error of the run.
    auto elapsed = [](cudaEvent_t a, cudaEvent_t b) {
      float ms = 0;
      if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0.0f;
      }
      return ms;
    };
    float span = 0, busy = 0;
    for (size_t m = 0; m < marks.size(); ++m) {
      const float ms = elapsed(marks[m].before, marks[m].after);
      const float gap = m > 0 ? elapsed(marks[m - 1].after, marks[m].before) : 0.0f;
      busy += ms;
      std::fprintf(stderr, "ranc events: %9.3f ms gpu %8.3f ms gap before  %s\n", ms, gap,
                   marks[m].what.c_str());
    }
    if (!marks.empty()) span = elapsed(marks.front().before, marks.back().after);
    std::fprintf(stderr, "ranc events: run %.3f ms on the GPU (steps %.3f, gaps %.3f), %.3f ms on the host\n",
                 span, busy, span - busy, host_seconds * 1e3);
    for (const StepMark& m : marks) {
      (void)cudaEventDestroy(m.before);
      (void)cudaEventDestroy(m.after);
    }
  }

  std::vector<std::pair<std::string, HostRelation>> download_outputs() {
    auto t0 = Clock::now();
    std::vector<std::pair<std::string, HostRelation>> out;
    for (const auto& r : plan_.outputs) {
      int64_t rows = slots_[static_cast<size_t>(r.size)];
      std::vector<const void*> cols, valid;
      for (BufferId b : r.columns) {
        internal_check(rows <= count_[b], "output size exceeds its buffer");
        cols.push_back(ptr_[b]);
        stats_.bytes_downloaded += rows * plan_.buffers[b].elem_size;
      }
      for (size_t i = 0; i < r.columns.size(); ++i) {
        BufferId b = r.validity_of(i);
        valid.push_back(b >= 0 ? ptr_[b] : nullptr);
        if (b < 0) continue;
        internal_check(rows <= count_[b], "output size exceeds its validity buffer");
        stats_.bytes_downloaded += rows;
      }
      out.emplace_back(r.name, download(r.schema, cols, rows, dict_, stream_, valid));
    }
    stats_.download_seconds += seconds_since(t0);
    return out;
  }

 private:
  std::string where(const Step& s) const {
    std::string w = fmt::format("step {} ({})", step_index_, step_name(s));
    if (int32_t n = step_node(s); n >= 0) w += " of " + node_name(plan_, n);
    return w + iteration_text();
  }
  // ", iteration N" inside a loop body (1-based), else "".
  std::string iteration_text() const {
    return loop_ ? fmt::format(", iteration {}", loop_->iteration + 1) : std::string();
  }
  std::string node_of(int32_t node) const {
    std::string n = node_name(plan_, node);
    return n.empty() ? "the program" : n;
  }

  int64_t eval(const SizeExpr& e, int32_t node) const {
    if (e.gate >= 0) {
      const int64_t g = slots_[static_cast<size_t>(e.gate)];
      if (g < e.gate_min || (e.gate_max >= 0 && g > e.gate_max)) return 0;
    }
    int64_t total = e.constant;
    for (const auto& t : e.terms) {
      int64_t prod = t.factor;
      for (SlotId s : t.slots) {
        int64_t v = slots_[static_cast<size_t>(s)];
        if (__builtin_mul_overflow(prod, v, &prod)) overflow(node);
      }
      if (__builtin_add_overflow(total, prod, &total)) overflow(node);
    }
    if (total < 0) {
      if (!e.saturate)
        throw ExecutionError(fmt::format("a size evaluated to {} (negative)", total),
                             node_of(node));
      total = 0;
    }
    if (e.divisor > 1) total = total / e.divisor + (total % e.divisor != 0);
    if (e.fn == SizeFn::CeilLog2) {
      total = total <= 1 ? 0 : 64 - __builtin_clzll(static_cast<unsigned long long>(total - 1));
    } else if (e.fn == SizeFn::Pow2) {
      if (total >= 63) overflow(node);
      total = int64_t{1} << total;
    }
    total = std::max(total, e.at_least);
    return e.at_most >= 0 ? std::min(total, e.at_most) : total;
  }
  [[noreturn]] void overflow(int32_t node) const {
    throw ExecutionError("a size computation overflowed 64 bits", node_of(node));
  }

  void allocate(BufferId b, int64_t count, const std::string& what) {
    const BufferDecl& d = plan_.buffers[static_cast<size_t>(b)];
    int64_t bytes = 0;
    if (__builtin_mul_overflow(count, int64_t{d.elem_size}, &bytes)) {
      throw OutOfMemoryError(what, INT64_MAX, pool_.stats().bytes_in_use, pool_.stats().peak_bytes,
                             "size overflows 64 bits");
    }
    ptr_[b] = pool_.allocate(bytes, what);
    count_[b] = count;
    owned_[b] = true;
  }
  // allocate() for a plan buffer, named (alloc_label) only when it fails: formatting the
  // label at every allocation cost the thin rounds of a recursion measurable host time.
  void allocate(BufferId b, int64_t count) {
    try {
      allocate(b, count, std::string());
    } catch (const OutOfMemoryError& e) {
      throw e.relabeled(alloc_label(b));
    }
  }
  // Scratch memory of a step of plan node `node` ("sort scratch"), named only when it fails.
  DeviceBuffer scratch(int64_t bytes, int32_t node, const char* kind) {
    try {
      return DeviceBuffer(pool_, bytes, {});
    } catch (const OutOfMemoryError& e) {
      throw e.relabeled(fmt::format("{} ({})", node_of(node), kind));
    }
  }
  std::string alloc_label(BufferId b) const {
    const BufferDecl& d = plan_.buffers[static_cast<size_t>(b)];
    return fmt::format("{} (buffer '{}'{})", node_of(d.node), d.name, iteration_text());
  }
  void need(BufferId b, int64_t elems) const {
    if (elems > count_[b]) {
      throw InternalError(fmt::format("{}: {} elements of buffer '{}' used, it has {}",
                                      where(plan_.steps[step_index_]), elems, plan_.buffers[b].name,
                                      count_[b]));
    }
  }

  void bind_host(const PlanRelation& r, const HostRelation& rel, const std::vector<size_t>& cols) {
    int64_t rows = static_cast<int64_t>(rel.num_rows());
    slots_[static_cast<size_t>(r.size)] = rows;
    for (size_t i = 0; i < r.columns.size(); ++i) {
      BufferId b = r.columns[i];
      const Column& c = rel.column(cols[i]);
      allocate(b, rows, fmt::format("input '{}'.{}", r.name, r.schema[i].name));
      stats_.bytes_uploaded += static_cast<int64_t>(c.bytes());
      // Staged copies, all columns in flight together (upload.h); string codes are
      // recoded into the run's dictionary on the way.
      uploader_.add_column(ptr_[b], c, dict_.get());
      const BufferId vb = r.validity_of(i);
      if (vb < 0) continue;
      allocate(vb, rows, fmt::format("input '{}'.{} validity", r.name, r.schema[i].name));
      if (c.nullable()) {
        uploader_.add(ptr_[vb], c.validity().data(), static_cast<size_t>(rows));
        stats_.bytes_uploaded += rows;
      } else if (rows > 0) {
        RANC_CUDA_CHECK(cudaMemsetAsync(ptr_[vb], 1, static_cast<size_t>(rows), stream_));
      }
    }
  }

  void bind_device(const PlanRelation& r, const DeviceInput& in, const std::vector<size_t>& cols) {
    slots_[static_cast<size_t>(r.size)] = in.num_rows;
    for (size_t i = 0; i < r.columns.size(); ++i) {
      if (const BufferId vb = r.validity_of(i); vb >= 0) {
        const void* src = cols[i] < in.validity.size() ? in.validity[cols[i]] : nullptr;
        if (src) {
          ptr_[vb] = const_cast<void*>(src);
          count_[vb] = in.num_rows;
          owned_[vb] = false;
        } else {
          allocate(vb, in.num_rows,
                   fmt::format("input '{}'.{} validity", r.name, r.schema[i].name));
          if (in.num_rows > 0)
            RANC_CUDA_CHECK(
                cudaMemsetAsync(ptr_[vb], 1, static_cast<size_t>(in.num_rows), stream_));
        }
      }
      BufferId b = r.columns[i];
      bool recode = r.schema[i].type == Type::String && in.dictionary &&
                    in.dictionary->size() != dict_->size();
      if (!recode) {
        ptr_[b] = const_cast<void*>(in.columns[cols[i]]);
        count_[b] = in.num_rows;
        owned_[b] = false;
        continue;
      }
      // new code = map[old code], as a gather on the device.
      std::vector<int32_t> map = recode_map(*in.dictionary, *dict_);
      DeviceBuffer dmap(pool_, static_cast<int64_t>(map.size()) * 4, "string recode map");
      if (!map.empty()) {
        RANC_CUDA_CHECK(cudaMemcpyAsync(dmap.get(), map.data(), map.size() * 4,
                                        cudaMemcpyHostToDevice, stream_));
      }
      allocate(b, in.num_rows, fmt::format("input '{}'.{} (recoded)", r.name, r.schema[i].name));
      RANC_CUDA_CHECK(builtins::gather(dmap.get(), static_cast<const uint32_t*>(in.columns[cols[i]]),
                                       ptr_[b], 4, in.num_rows, stream_));
      ++stats_.kernel_launches;
      RANC_CUDA_CHECK(cudaStreamSynchronize(stream_));  // `map` dies here
    }
  }

  void exec(const Alloc& a) {
    const BufferDecl& d = plan_.buffers[static_cast<size_t>(a.buffer)];
    int64_t n = eval(d.count, d.node);
    allocate(a.buffer, n);
    if (a.zero && n > 0) {
      RANC_CUDA_CHECK(
          cudaMemsetAsync(ptr_[a.buffer], 0, static_cast<size_t>(n) * d.elem_size, stream_));
    }
  }
  void exec(const Free& f) {
    if (owned_[f.buffer]) pool_.free(ptr_[f.buffer]);
    ptr_[f.buffer] = nullptr;
    count_[f.buffer] = 0;
    owned_[f.buffer] = false;
  }
  void exec(const SetSize& s) { slots_[static_cast<size_t>(s.slot)] = eval(s.value, -1); }
  void exec(const ReadSize& r) {
    if (r.when >= 0 && slots_[static_cast<size_t>(r.when)] == 0) {
      slots_[static_cast<size_t>(r.slot)] = 0;
      return;
    }
    int64_t index = r.index;
    if (r.index_slot >= 0 &&
        __builtin_add_overflow(index, slots_[static_cast<size_t>(r.index_slot)], &index))
      overflow(step_node(plan_.steps[step_index_]));
    slots_[static_cast<size_t>(r.slot)] = read_back(index);
  }
  void exec(const Launch& l) {
    launch(l);
    if (!l.regrow) return;
    const Regrow& g = *l.regrow;
    int64_t& capacity = slots_[static_cast<size_t>(g.capacity)];
    const int64_t needed = read_int64(g.header, g.index);
    slots_[static_cast<size_t>(g.needed)] = needed;
    if (needed <= capacity) return;
    // The estimate was short: grow to exactly what the first run claimed and run again.
    ++stats_.regrows;
    capacity = needed;
    for (BufferId b : g.grow) {
      const BufferDecl& d = plan_.buffers[static_cast<size_t>(b)];
      int64_t n = eval(d.count, d.node);
      exec(Free{b});
      allocate(b, n);
    }
    RANC_CUDA_CHECK(cudaMemsetAsync(ptr_[g.header], 0,
                                    static_cast<size_t>(count_[g.header]) * 8, stream_));
    launch(l);
    const int64_t again = read_int64(g.header, g.index);
    if (again > capacity) {
      throw InternalError(fmt::format("{}: a paged output needed {} pages after growing to {}",
                                      where(plan_.steps[step_index_]), again, capacity));
    }
    // What the second run used (a producer may ask for a safe bound the first time, as the
    // hash reduce's records do, and use less).
    slots_[static_cast<size_t>(g.needed)] = again;
  }
  int64_t read_int64(BufferId b, int64_t index) {
    need(b, index + 1);
    ++stats_.readbacks;
    return copy_back(static_cast<const int64_t*>(ptr_[b]) + index);
  }
  // Waits for the stream (RunStats::wait_seconds).
  void wait() {
    const auto t0 = Clock::now();
    RANC_CUDA_CHECK(cudaStreamSynchronize(stream_));
    stats_.wait_seconds += seconds_since(t0);
  }
  // The 8 bytes at device address src, through the pinned read-back buffer (its slot 0: no
  // batch of read_back() is live outside a run of CheckFlag / ReadSize steps).
  int64_t copy_back(const void* src) {
    batch_slot_.clear();
    RANC_CUDA_CHECK(cudaMemcpyAsync(readback_, src, sizeof(int64_t), cudaMemcpyDeviceToHost, stream_));
    wait();
    return readback_[0];
  }
  std::pair<int64_t, int64_t> copy_back_pair(const void* src) {
    batch_slot_.clear();
    RANC_CUDA_CHECK(cudaMemcpyAsync(readback_, src, 2 * sizeof(int64_t), cudaMemcpyDeviceToHost, stream_));
    wait();
    return {readback_[0], readback_[1]};
  }
  // A kernel's arguments as cudaLaunchKernel takes them: the values of `list` (buffers'
  // pointers, slots, constants) as they are now, in storage reused across launches.
  void** marshal(const std::vector<KernelArg>& list) {
    launch_values_.resize(list.size());
    launch_args_.resize(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      launch_values_[i] = std::visit(
          Overloaded{[&](const ArgBuffer& b) { return reinterpret_cast<int64_t>(ptr_[b.buffer]); },
                     [&](const ArgSlot& s) { return slots_[static_cast<size_t>(s.slot)]; },
                     [](const ArgConst& c) { return c.value; }},
          list[i]);
      launch_args_[i] = &launch_values_[i];
    }
    return launch_args_.data();
  }
  void launch(const Launch& l) {
    int64_t items = eval(l.items, l.node);
    if (items == 0 && l.skip_if_empty) return;
    int64_t grid = items / l.items_per_block + (items % l.items_per_block != 0);
    if (grid < 1) grid = 1;
    if (const int64_t wave = step_wave_blocks_.at(step_index_); wave > 0 && grid > wave)
      grid = l.one_wave
                 ? wave
                 : (grid + wave / 2) / wave * wave;  // (else the nearest whole number of waves)
    if (grid > INT32_MAX) {
      throw SizeLimitError(
          fmt::format("kernel {} needs {} blocks (more than 2^31-1)", l.kernel, grid),
          node_of(l.node));
    }
    void** args = marshal(l.args);
    const bool alt = l.alt_when >= 0 && slots_[static_cast<size_t>(l.alt_when)] != 0;
    const void* func =
        reinterpret_cast<const void*>((alt ? step_alt_kernel_ : step_kernel_).at(step_index_));
    RANC_CUDA_CHECK(cudaLaunchKernel(func, dim3(static_cast<unsigned>(grid)),
                                     dim3(static_cast<unsigned>(l.block_threads)), args,
                                     static_cast<size_t>(l.dynamic_smem), stream_));
    ++stats_.kernel_launches;
  }
  void exec(const SortPairs& s) {
    int64_t n = eval(s.count, s.node);
    for (BufferId b : {s.keys_in, s.keys_out, s.values_in, s.values_out})
      if (b >= 0) need(b, n);
    for (const auto& [in, out] : s.more_values) {
      need(in, n);
      need(out, n);
    }
    if (n == 0) return;
    if (n > int64_t{UINT32_MAX}) {
      throw SizeLimitError(fmt::format("sort of {} rows exceeds the 2^32 row ids", n),
                           node_of(s.node));
    }
    if (s.radix_bits >= 0) {
      partition_words(s, n);
      return;
    }
    if (std::optional<builtins::Word> word = native_word(s)) {
      sort_words(s, *word, n);
      return;
    }
    internal_check(s.value_bytes == 4, "8-byte sort values with a transformed key");
    builtins::SortKey key = sort_key_for(s.key_type);
    DeviceBuffer key_scratch = scratch(n * builtins::sort_key_bytes(key), s.node, "sort scratch");
    size_t temp_bytes = builtins::sort_pairs_temp_bytes(key, s.descending, n);
    DeviceBuffer temp = scratch(static_cast<int64_t>(temp_bytes), s.node, "sort scratch");
    const auto* values_in = static_cast<const uint32_t*>(ptr_[s.values_in]);
    DeviceBuffer values_copy;
    if (s.values_in == s.values_out) {
      values_copy = scratch(n * 4, s.node, "sort scratch");
      RANC_CUDA_CHECK(cudaMemcpyAsync(values_copy.get(), values_in, static_cast<size_t>(n) * 4,
                                      cudaMemcpyDeviceToDevice, stream_));
      values_in = static_cast<const uint32_t*>(values_copy.get());
    }
    RANC_CUDA_CHECK(builtins::sort_pairs(key, s.descending, ptr_[s.keys_in], ptr_[s.keys_out],
                                         values_in, static_cast<uint32_t*>(ptr_[s.values_out]), n,
                                         key_scratch.get(), temp.get(), temp_bytes, stream_));
    stats_.kernel_launches += 3;
  }
  // The words CUB sorts without a transform: packed order words, or a signed integer
  // key column itself (dates and string codes are i32). Bools and floats go through
  // builtins::sort_pairs' order-preserving transform.
  static std::optional<builtins::Word> native_word(const SortPairs& s) {
    if (s.encoded) return type_size(s.key_type) == 8 ? builtins::Word::U64 : builtins::Word::U32;
    switch (s.key_type) {
      case Type::I32:
      case Type::Date:
      case Type::String:
        return builtins::Word::I32;
      case Type::I64:
        return builtins::Word::I64;
      default:
        return std::nullopt;
    }
  }
  // A radix partition (SortPairs::radix_bits): a stable sort of encoded words on their low
  // bits only, as CUB's onesweep passes of 8 bits; 0 bits is a copy.
  void partition_words(const SortPairs& s, int64_t n) {
    const builtins::Word word = type_size(s.key_type) == 8 ? builtins::Word::U64 : builtins::Word::U32;
    const int64_t key_bytes = builtins::word_bits(word) / 8;
    const int64_t bits = slots_[static_cast<size_t>(s.radix_bits)];
    const bool pairs = s.values_in >= 0;
    if (!s.encoded || s.descending || bits < 0 || bits > builtins::word_bits(word) ||
        s.keys_in == s.keys_out || (pairs && s.values_in == s.values_out)) {
      throw InternalError(fmt::format("{}: a radix partition step that is not a partition of "
                                      "encoded words into new buffers",
                                      where(plan_.steps[step_index_])));
    }
    const auto* values_in = pairs ? static_cast<const uint32_t*>(ptr_[s.values_in]) : nullptr;
    auto* values_out = pairs ? static_cast<uint32_t*>(ptr_[s.values_out]) : nullptr;
    if (bits == 0) {
      RANC_CUDA_CHECK(cudaMemcpyAsync(ptr_[s.keys_out], ptr_[s.keys_in],
                                      static_cast<size_t>(n * key_bytes), cudaMemcpyDeviceToDevice,
                                      stream_));
      if (pairs) {
        RANC_CUDA_CHECK(cudaMemcpyAsync(values_out, values_in, static_cast<size_t>(n) * 4,
                                        cudaMemcpyDeviceToDevice, stream_));
      }
      for (const auto& [in, out] : s.more_values)
        RANC_CUDA_CHECK(cudaMemcpyAsync(ptr_[out], ptr_[in], static_cast<size_t>(n) * 4,
                                        cudaMemcpyDeviceToDevice, stream_));
      return;
    }
    if (!s.more_values.empty() && partition_columns_on()) {
      // Keys and every value array in one pass per 8 bits, at most kPartitionMaxValues
      // arrays a call (a further call partitions the keys again, alike, with the next ones).
      std::vector<const uint32_t*> vin{values_in};
      std::vector<uint32_t*> vout{values_out};
      for (const auto& [in, out] : s.more_values) {
        vin.push_back(static_cast<const uint32_t*>(ptr_[in]));
        vout.push_back(static_cast<uint32_t*>(ptr_[out]));
      }
      for (size_t v0 = 0; v0 < vin.size(); v0 += builtins::kPartitionMaxValues) {
        const int nv = static_cast<int>(
            std::min<size_t>(builtins::kPartitionMaxValues, vin.size() - v0));
        const size_t temp_bytes = builtins::partition_columns_temp_bytes(word, static_cast<int>(bits), nv, n);
        DeviceBuffer temp = scratch(static_cast<int64_t>(temp_bytes), s.node, "partition scratch");
        RANC_CUDA_CHECK(builtins::partition_columns(word, static_cast<int>(bits), ptr_[s.keys_in],
                                                    ptr_[s.keys_out], vin.data() + v0, vout.data() + v0,
                                                    nv, n, temp.get(), temp_bytes, stream_));
        stats_.kernel_launches += 3 * ((bits + 7) / 8);
      }
      return;
    }
    const int end_bit = static_cast<int>(bits);
    const size_t temp_bytes = builtins::sort_words_temp_bytes(word, false, pairs, 0, end_bit, n);
    DeviceBuffer temp = scratch(static_cast<int64_t>(temp_bytes), s.node, "sort scratch");
    RANC_CUDA_CHECK(builtins::sort_words(word, false, 0, end_bit, ptr_[s.keys_in], ptr_[s.keys_out],
                                         values_in, values_out, n, temp.get(), temp_bytes, stream_));
    ++stats_.kernel_launches;
    // The further value arrays by a CUB sort each (the keys sorted again into a scratch
    // buffer): the default (see partition_columns_on).
    if (!s.more_values.empty()) {
      DeviceBuffer keys_again = scratch(n * key_bytes, s.node, "sort scratch");
      for (const auto& [in, out] : s.more_values) {
        RANC_CUDA_CHECK(builtins::sort_words(word, false, 0, end_bit, ptr_[s.keys_in], keys_again.get(),
                                             static_cast<const uint32_t*>(ptr_[in]),
                                             static_cast<uint32_t*>(ptr_[out]), n, temp.get(),
                                             temp_bytes, stream_));
        ++stats_.kernel_launches;
      }
    }
  }
  // RANC_PARTITION_COLUMNS=1: several value arrays of a radix partition move in one pass per
  // 8 bits (builtins::partition_columns). Off by default: moving a third of the bytes, its
  // first version still took longer than a CUB onesweep sort per array (the wide hash join at
  // 2^27 rows, three carried columns a side: 24.1 against 21.0 ms on the H100,
  // bench/RESULTS.md, session 27).
  static bool partition_columns_on() {
    static const bool on = env_switch("RANC_PARTITION_COLUMNS").value_or(false);
    return on;
  }
  // Sorts only the bits in which the keys differ (one pass over the keys and a read-back
  // find them): a key column of small range, or packed keys whose leading fields vary
  // little, take fewer radix passes. Equal keys need no sort at all. Below
  // kNarrowSortRows keys the read-back's wait costs more than the passes it could save,
  // and RANC_SORT_NARROW=0 turns the narrowing off (to measure it). A sample of
  // kNarrowSamples keys goes first: the bits in which the sample differs are a subset of
  // the keys', so when they already span more than the last radix pass's worth (keys of
  // full entropy, e.g. hashes or random ids), no narrowing can save a pass and the full
  // pass over the keys (5% of a 2^28 pair sort) is skipped; all bits are sorted. Keys already
  // in the order asked need no sort either (a stable sort of them changes nothing: keys and
  // values are copied): data often arrives sorted by its key (TPC-H's lineitem by l_orderkey,
  // time series by time), so a sample in order brings the pass over all keys, which also
  // checks every key's order (RunStats::sorts_skipped counts the sorts it saved;
  // RANC_SORT_PRESORTED=0 sorts them anyway, to measure it).
  static constexpr int64_t kNarrowSortRows = int64_t{1} << 17;
  static constexpr int64_t kNarrowSamples = int64_t{1} << 14;
  static constexpr int kRadixBits = 8;  // bits a onesweep pass sorts (CUB's default for 4/8-byte keys)
  void sort_words(const SortPairs& s, builtins::Word word, int64_t n) {
    static const bool narrow_on = env_switch("RANC_SORT_NARROW").value_or(true);
    static const bool presorted_on = env_switch("RANC_SORT_PRESORTED").value_or(true);
    const int64_t key_bytes = builtins::word_bits(word) / 8;
    const bool pairs = s.values_in >= 0;
    const void* keys_in = ptr_[s.keys_in];
    const int vb = s.value_bytes;
    const void* values_in = pairs ? ptr_[s.values_in] : nullptr;
    unsigned long long x = ~0ull >> (64 - builtins::word_bits(word));  // every bit
    bool in_order = false;
    if (narrow_on && n >= kNarrowSortRows) {
      DeviceBuffer diff = scratch(16, s.node, "sort scratch");
      auto* diff_dev = static_cast<unsigned long long*>(diff.get());
      auto differing = [&](int64_t samples) {
        RANC_CUDA_CHECK(builtins::differing_bits(word, keys_in, n, diff_dev, stream_, samples,
                                                 s.descending));
        ++stats_.kernel_launches;
        const std::pair<int64_t, int64_t> back = copy_back_pair(diff_dev);
        x = static_cast<unsigned long long>(back.first);
        in_order = back.second == 0 && presorted_on;
      };
      const int width = builtins::word_bits(word);
      differing(kNarrowSamples);
      const int span = x == 0 ? 0 : 64 - __builtin_clzll(x) - __builtin_ctzll(x);
      // A sample in order may be keys in order (data that arrives sorted by the key, as
      // TPC-H's lineitem by l_orderkey): the pass over all keys tells.
      if (span <= width - kRadixBits || in_order)
        differing(0);
      else
        x = ~0ull >> (64 - width);
    }
    if (x == 0 || in_order) {  // all keys equal, or already in order: a stable sort changes nothing
      ++stats_.sorts_skipped;
      if (ptr_[s.keys_out] != keys_in) {
        RANC_CUDA_CHECK(cudaMemcpyAsync(ptr_[s.keys_out], keys_in,
                                        static_cast<size_t>(n * key_bytes),
                                        cudaMemcpyDeviceToDevice, stream_));
      }
      if (pairs && ptr_[s.values_out] != values_in) {
        RANC_CUDA_CHECK(cudaMemcpyAsync(ptr_[s.values_out], values_in, static_cast<size_t>(n * vb),
                                        cudaMemcpyDeviceToDevice, stream_));
      }
      return;
    }
    // A sort in place reads copies (CUB's onesweep writes its output while reading its input),
    // made only now that the sort is known to be needed.
    DeviceBuffer keys_copy, values_copy;
    if (s.keys_in == s.keys_out) {
      keys_copy = scratch(n * key_bytes, s.node, "sort scratch");
      RANC_CUDA_CHECK(cudaMemcpyAsync(keys_copy.get(), keys_in, static_cast<size_t>(n * key_bytes),
                                      cudaMemcpyDeviceToDevice, stream_));
      keys_in = keys_copy.get();
    }
    if (pairs && s.values_in == s.values_out) {
      values_copy = scratch(n * vb, s.node, "sort scratch");
      RANC_CUDA_CHECK(cudaMemcpyAsync(values_copy.get(), values_in, static_cast<size_t>(n * vb),
                                      cudaMemcpyDeviceToDevice, stream_));
      values_in = values_copy.get();
    }
    const int begin_bit = __builtin_ctzll(x);
    const int end_bit = 64 - __builtin_clzll(x);
    const size_t temp_bytes =
        builtins::sort_words_temp_bytes(word, s.descending, pairs, begin_bit, end_bit, n, vb);
    DeviceBuffer temp = scratch(static_cast<int64_t>(temp_bytes), s.node, "sort scratch");
    RANC_CUDA_CHECK(builtins::sort_words(
        word, s.descending, begin_bit, end_bit, keys_in, ptr_[s.keys_out], values_in,
        pairs ? ptr_[s.values_out] : nullptr, n, temp.get(), temp_bytes, stream_, vb));
    ++stats_.kernel_launches;
  }
  void exec(const ScanInt64& s) {
    int64_t n = eval(s.count, s.node);
    need(s.in, n);
    need(s.out, n + 1);
    size_t temp_bytes = builtins::scan_int64_temp_bytes(n);
    DeviceBuffer temp = scratch(static_cast<int64_t>(temp_bytes), s.node, "scan scratch");
    RANC_CUDA_CHECK(builtins::scan_int64(static_cast<const int64_t*>(ptr_[s.in]),
                                         static_cast<int64_t*>(ptr_[s.out]), n, temp.get(),
                                         temp_bytes, stream_));
    ++stats_.kernel_launches;
  }
  void exec(const Gather& g) {
    int64_t n = eval(g.count, g.node);
    need(g.index, n);
    need(g.dst, n);
    RANC_CUDA_CHECK(builtins::gather(ptr_[g.src], static_cast<const uint32_t*>(ptr_[g.index]),
                                     ptr_[g.dst], g.elem_size, n, stream_));
    if (n > 0) ++stats_.kernel_launches;
  }
  void exec(const Iota& i) {
    int64_t n = eval(i.count, -1);
    need(i.buffer, n);
    RANC_CUDA_CHECK(builtins::iota(static_cast<uint32_t*>(ptr_[i.buffer]), n, stream_));
    if (n > 0) ++stats_.kernel_launches;
  }
  void exec(const CheckFlag& c) {
    need(c.buffer, 1);
    if (read_back(0) != 0) throw ExecutionError(c.message, node_of(c.node));
  }

  // The value the current step (a CheckFlag, or a ReadSize of element `index`) reads back.
  // The first read-back of a run of CheckFlag and ReadSize steps (Frees between them) copies
  // what all of them read into pinned memory and waits once: a reduce's order check, overflow
  // check and group count cost one synchronisation, not three. A later ReadSize whose index
  // depends on a slot ends the run (the slot may be one the run itself reads).
  int64_t read_back(int64_t index) {
    const size_t k = step_index_;
    if (k >= batch_begin_ && k - batch_begin_ < batch_slot_.size()) {
      const int slot = batch_slot_[k - batch_begin_];
      internal_check(slot >= 0, "read-back of a step that reads nothing");
      return readback_[slot];
    }
    batch_begin_ = k;
    batch_slot_.clear();
    int used = 0;
    for (size_t j = k; j < plan_.steps.size() && used < static_cast<int>(kReadbackSlots); ++j) {
      const Step& s = plan_.steps[j];
      if (std::holds_alternative<Free>(s)) {
        batch_slot_.push_back(-1);
        continue;
      }
      const void* src = nullptr;
      size_t bytes = 0;
      if (const auto* c = std::get_if<CheckFlag>(&s)) {
        if (count_[c->buffer] < 1) break;  // (its own step reports it)
        src = ptr_[c->buffer];
        bytes = 4;
      } else if (const auto* r = std::get_if<ReadSize>(&s)) {
        int64_t at = index;
        if (j != k) {
          if (r->index_slot >= 0) break;
          at = r->index;
        }
        if (at < 0 || at + 1 > count_[r->buffer]) {
          if (j == k) need(r->buffer, at + 1);
          break;
        }
        src = static_cast<const int64_t*>(ptr_[r->buffer]) + at;
        bytes = 8;
      } else {
        break;
      }
      readback_[used] = 0;  // a 4-byte flag fills the low half (little-endian)
      RANC_CUDA_CHECK(cudaMemcpyAsync(&readback_[used], src, bytes, cudaMemcpyDeviceToHost, stream_));
      batch_slot_.push_back(used++);
    }
    while (!batch_slot_.empty() && batch_slot_.back() < 0) batch_slot_.pop_back();
    internal_check(!batch_slot_.empty() && batch_slot_[0] >= 0, "read-back without a source");
    wait();
    ++stats_.readbacks;
    return readback_[batch_slot_[0]];
  }

  void exec(const CopyBuffer& c) {
    const int64_t n = eval(c.count, c.node);
    need(c.src, n);
    need(c.dst, n);
    const int64_t es = plan_.buffers[static_cast<size_t>(c.dst)].elem_size;
    if (n > 0) {
      RANC_CUDA_CHECK(cudaMemcpyAsync(ptr_[c.dst], ptr_[c.src], static_cast<size_t>(n * es),
                                      cudaMemcpyDeviceToDevice, stream_));
    }
  }
  void exec(const LoopBegin& b) {
    if (!loop_ || loop_->id != b.loop) {
      size_t end = next_step_;
      while (end < plan_.steps.size() &&
             !(std::holds_alternative<LoopEnd>(plan_.steps[end]) &&
               std::get<LoopEnd>(plan_.steps[end]).loop == b.loop))
        ++end;
      internal_check(end < plan_.steps.size(), "LoopBegin without its LoopEnd");
      internal_check(b.prologue >= 0 && next_step_ + static_cast<size_t>(b.prologue) <= end,
                     "a loop's prologue is longer than its body");
      loop_ = ActiveLoop{b.loop, next_step_, next_step_ + static_cast<size_t>(b.prologue), end, 0};
    }
  }
  void exec(const LoopEnd& e) {
    internal_check(loop_ && loop_->id == e.loop, "LoopEnd without its LoopBegin");
    // Carries: dst gives its memory back and takes src's; src is left unallocated.
    for (auto [dst, src] : e.carry_buffers) {
      if (owned_[dst] && ptr_[dst]) pool_.free(ptr_[dst]);
      ptr_[dst] = ptr_[src];
      count_[dst] = count_[src];
      owned_[dst] = owned_[src];
      ptr_[src] = nullptr;
      count_[src] = 0;
      owned_[src] = false;
    }
    for (auto [dst, src] : e.carry_slots) slots_[static_cast<size_t>(dst)] = slots_[static_cast<size_t>(src)];
    shrink_deltas(e);
    const int64_t done = ++loop_->iteration;
    ++stats_.loop_iterations;
    if (e.iterations >= 0) slots_[static_cast<size_t>(e.iterations)] = done;
    if (current_) {
      // The iteration ran on a piece of split deltas: its new tuples join the queue, and
      // the loop goes on while a piece waits.
      current_.reset();
      bool any = false;
      for (const SplitDelta& d : e.split) any = any || slots_[static_cast<size_t>(d.size)] > 0;
      if (any) pending_.push_back(own_deltas(e));
      if (pending_.empty()) {
        loop_.reset();
        return;
      }
      install(e, std::move(pending_.front()));
      pending_.pop_front();
      restart_iteration();
      return;
    }
    auto finished = [&] {
      bool empty = true;
      for (SlotId s : e.until_zero) empty = empty && slots_[static_cast<size_t>(s)] == 0;
      return empty || (e.max_iterations > 0 && loop_->iteration >= e.max_iterations);
    };
    if (finished()) {
      loop_.reset();
      return;
    }
    if (e.resident && pending_.empty() && run_resident(e)) {
      // The rounds changed the deltas: what the prologue derived from the last ones goes.
      if (finished()) {
        loop_.reset();
        return;
      }
      restart_iteration();
      return;
    }
    next_step_ = loop_->body;
  }

  // ---- Resident rounds (plan.h ResidentRounds) ----
  // builtins.h (compiled by nvcc as C++17) has its own copy of the plan's packing enum.
  static_assert(static_cast<int>(builtins::Packing::I32) == static_cast<int>(Packing::I32) &&
                static_cast<int>(builtins::Packing::I32x2) == static_cast<int>(Packing::I32x2) &&
                static_cast<int>(builtins::Packing::I64) == static_cast<int>(Packing::I64));
  // Runs the loop's next rounds in the resident kernel when the delta is thin. True: rounds
  // ran, and the full relation, the delta and the iteration count are theirs.
  bool run_resident(const LoopEnd& e) {
    const ResidentRounds& r = *e.resident;
    const int64_t rows = slots_[static_cast<size_t>(r.delta_size)];
    if (rows <= 0 || rows > resident_enter_rows_) return false;
    const auto [kernel, grid] = resident_kernels_.at(r.kernel);
    if (grid <= 0) return false;
    // After launches that ran no round, wait for the delta to halve before another.
    if (resident_refused_rows_ > 0 && rows * 2 > resident_refused_rows_) return false;
    const int64_t full_rows = slots_[static_cast<size_t>(r.full_size)];
    const auto packing = static_cast<builtins::Packing>(r.packing);
    const int columns = builtins::packing_columns(packing);
    const int32_t elem = r.packing == Packing::I64 ? 8 : 4;
    // Room for the words of tuples found: at least resident_room_ (times its growth in this
    // run), half the full relation's rows; the table (the full relation's words and the
    // room's) has a power of two slots, at least resident_fill_ (4) times what it holds (an
    // insert's collisions delay its tuple's successors). Less room when memory is short.
    // A large full relation is binary-searched instead (its words would fill the table).
    const bool search_full = full_rows > kResidentSetFullRows;
    int64_t room = std::max<int64_t>(resident_room_ * resident_room_growth_, full_rows / 2);
    room = std::min<int64_t>(room, int64_t{1} << 32);
    // The rounds' grid: a block for about RANC_RESIDENT_BLOCK_ROWS of the delta's rows.
    // Without a round limit the blocks run a worklist (resident.cuh), and the words have room
    // past `room` for what the blocks append once it is passed and for their pending tuples
    // (resident.cuh's async_slack).
    const bool worklist = e.max_iterations <= 0 && resident_async_;
    const int64_t block_rows = resident_block_rows_ > 0 ? resident_block_rows_
                               : worklist              ? ResidentRounds::kWorklistBlockRows
                                                       : ResidentRounds::kDefaultBlockRows;
    const int64_t blocks = std::clamp<int64_t>((rows + block_rows - 1) / block_rows, 1, grid);
    const int64_t slack = worklist ? ResidentRounds::kAsyncSlackBuffers * blocks * ResidentRounds::kLocalRows : 0;
    std::optional<DeviceBuffer> words, table, control;
    int64_t slots = 0;
    while (!table) {
      const int64_t held = (search_full ? 0 : full_rows) + room;
      slots = int64_t{1} << (64 - __builtin_clzll(static_cast<uint64_t>(resident_fill_ * held - 1)));
      try {
        control.emplace(pool_, int64_t{8} * r.control_words, std::string_view{});
        words.emplace(pool_, 8 * (room + slack), std::string_view{});
        table.emplace(pool_, 8 * slots, std::string_view{});
      } catch (const OutOfMemoryError&) {
        words.reset();
        control.reset();
        room /= 2;
        if (room < (int64_t{1} << 12) || room < 4 * rows) return false;
      }
    }
    RANC_CUDA_CHECK(cudaMemsetAsync(control->get(), 0, static_cast<size_t>(8 * r.control_words), stream_));
    RANC_CUDA_CHECK(cudaMemsetAsync(table->get(), 0xff, static_cast<size_t>(8 * slots), stream_));
    ptr_[r.words] = words->get();
    ptr_[r.table] = table->get();
    ptr_[r.control] = control->get();
    slots_[static_cast<size_t>(r.room)] = room;
    slots_[static_cast<size_t>(r.mask)] = slots - 1;
    slots_[static_cast<size_t>(r.search_full)] = search_full ? 1 : 0;
    // (a limit of exactly kWorklist runs the worklist; resident.cuh)
    slots_[static_cast<size_t>(r.rounds)] = e.max_iterations > 0 ? e.max_iterations - loop_->iteration
                                            : worklist              ? ResidentRounds::kWorklist
                                                                    : ResidentRounds::kWorklist - 1;
    slots_[static_cast<size_t>(r.max_rows)] = resident_max_rows_;
    // The prologue (the set takes the full relation's words; the invariants' key runs, over
    // inputs of any size, whatever the full relation's) on four blocks an SM, then the
    // rounds on a grid for the delta: a block takes about RANC_RESIDENT_BLOCK_ROWS of its
    // rows, and a round waits for fewer blocks.
    slots_[static_cast<size_t>(r.prologue)] = 1;
    RANC_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel),
                                     dim3(static_cast<unsigned>(4 * sms_)),
                                     dim3(static_cast<unsigned>(ResidentRounds::kBlockThreads)),
                                     marshal(r.args), 0, stream_));
    slots_[static_cast<size_t>(r.prologue)] = 0;
    RANC_CUDA_CHECK(cudaLaunchCooperativeKernel(
        reinterpret_cast<const void*>(kernel), dim3(static_cast<unsigned>(blocks)),
        dim3(static_cast<unsigned>(ResidentRounds::kBlockThreads)), marshal(r.args),
        static_cast<size_t>(ResidentRounds::kLocalBytes), stream_));
    stats_.kernel_launches += 2;
    ptr_[r.words] = ptr_[r.table] = ptr_[r.control] = nullptr;
    batch_slot_.clear();
    RANC_CUDA_CHECK(cudaMemcpyAsync(readback_, control->get(), 8 * sizeof(int64_t),
                                    cudaMemcpyDeviceToHost, stream_));
    wait();
    ++stats_.readbacks;
    // words[0, found): the tuples found; words[begin, total): the delta (within them, or a copy
    // after them from a worklist).
    const int64_t total = readback_[0], begin = readback_[1], rounds = readback_[2], found = readback_[7];
    if (readback_[4] != 0)
      throw InternalError(fmt::format("{}: resident rounds found more tuples than their bound",
                                      node_of(e.node)));
    if (rounds == 0) {
      resident_refused_rows_ = rows;
      return false;
    }
    resident_refused_rows_ = 0;
    // A launch that passed its room hands back, and the host sorts and merges: the next
    // launches of this run take twice the room, up to kResidentRoomGrowth times
    // RANC_RESIDENT_ROOM (a recursion that outgrows one room mostly outgrows several).
    if (found >= room) resident_room_growth_ = std::min<int64_t>(2 * resident_room_growth_, kResidentRoomGrowth);
    // The tuples found, sorted, merged into the full relation; the last round's, sorted, the
    // delta. Without the memory for it the rounds are dropped (the loop's state is still
    // the one they started from) and the body goes on.
    const int64_t delta_rows = total - begin;
    try {
      DeviceBuffer sorted(pool_, 8 * std::max<int64_t>(total, 1), {});
      const size_t sort_bytes = std::max(
          builtins::sort_words_temp_bytes(builtins::Word::U64, false, false, 0, 64, found),
          builtins::sort_words_temp_bytes(builtins::Word::U64, false, false, 0, 64, delta_rows));
      const size_t merge_bytes = builtins::merge_packed_temp_bytes(full_rows, found);
      DeviceBuffer temp(pool_, static_cast<int64_t>(std::max(sort_bytes, merge_bytes)), {});
      std::vector<void*> delta_cols(2, nullptr), full_cols(2, nullptr), old_full(2, nullptr);
      std::vector<DeviceBuffer> made;
      made.reserve(4);
      for (int c = 0; c < columns; ++c) {
        made.emplace_back(pool_, elem * std::max<int64_t>(delta_rows, 1), std::string_view{});
        delta_cols[c] = made.back().get();
        made.emplace_back(pool_, elem * (full_rows + found), std::string_view{});
        full_cols[c] = made.back().get();
        old_full[c] = ptr_[r.full[c]];
      }
      const auto* w = static_cast<const uint64_t*>(words->get());
      if (delta_rows > 0) {
        RANC_CUDA_CHECK(builtins::sort_words(builtins::Word::U64, false, 0, 64, w + begin, sorted.get(),
                                             nullptr, nullptr, delta_rows, temp.get(), sort_bytes, stream_));
        RANC_CUDA_CHECK(builtins::unpack(packing, static_cast<const uint64_t*>(sorted.get()), delta_rows,
                                         delta_cols.data(), stream_));
      }
      RANC_CUDA_CHECK(builtins::sort_words(builtins::Word::U64, false, 0, 64, w, sorted.get(), nullptr,
                                           nullptr, found, temp.get(), sort_bytes, stream_));
      RANC_CUDA_CHECK(builtins::merge_packed(packing, old_full.data(), full_rows,
                                             static_cast<const uint64_t*>(sorted.get()), found,
                                             full_cols.data(), temp.get(), static_cast<size_t>(temp.bytes()), stream_));
      stats_.kernel_launches += 6;
      // The new buffers replace the carried ones.
      for (int c = 0; c < columns; ++c) {
        for (auto [b, p, n] : {std::tuple{r.delta[c], delta_cols[c], delta_rows},
                               std::tuple{r.full[c], full_cols[c], full_rows + found}}) {
          if (owned_[b] && ptr_[b]) pool_.free(ptr_[b]);
          ptr_[b] = p;
          count_[b] = n;
          owned_[b] = true;
        }
      }
      for (DeviceBuffer& m : made) m.release();
    } catch (const OutOfMemoryError&) {
      resident_enter_rows_ = 0;  // not again in this run
      return false;
    }
    slots_[static_cast<size_t>(r.full_size)] = full_rows + found;
    slots_[static_cast<size_t>(r.delta_size)] = delta_rows;
    // The sizes the loop's end tests (until_zero) are the body's, carried into these.
    for (auto [dst, src] : e.carry_slots)
      if (dst == r.full_size || dst == r.delta_size) slots_[static_cast<size_t>(src)] = slots_[static_cast<size_t>(dst)];
    loop_->iteration += rounds;
    stats_.loop_iterations += rounds;
    stats_.resident_rounds += rounds;
    if (e.iterations >= 0) slots_[static_cast<size_t>(e.iterations)] = loop_->iteration;
    return true;
  }

  struct ActiveLoop {
    int32_t id;
    size_t start;  // index of the body's first step (its prologue's, LoopBegin::prologue)
    size_t body;   // index of the first step after the prologue
    size_t end;    // index of its LoopEnd
    int64_t iteration;
  };
  // Frees what steps [from, to) allocated and still hold.
  void free_allocated(size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      const auto* a = std::get_if<Alloc>(&plan_.steps[i]);
      if (!a) continue;
      const BufferId b = a->buffer;
      if (owned_[b] && ptr_[b]) pool_.free_noexcept(ptr_[b]);
      ptr_[b] = nullptr;
      count_[b] = 0;
      owned_[b] = false;
    }
  }
  // The next iteration reads other rows than the last one's new tuples (a piece of split
  // deltas was installed): what the prologue derived from the deltas (carried from the last
  // iteration) is dropped and the prologue runs again.
  void restart_iteration() {
    free_allocated(loop_->start, loop_->body);
    batch_slot_.clear();
    next_step_ = loop_->start;
  }

  // ---- Iterations that split their deltas (plan.h LoopEnd::split) ----
  // The memory of one column of a delta, shared by the pieces that are rows of it.
  struct Block {
    DevicePool* pool;
    void* ptr;
    Block(DevicePool* p, void* q) : pool(p), ptr(q) {}
    Block(const Block&) = delete;
    Block& operator=(const Block&) = delete;
    ~Block() { pool->free_noexcept(ptr); }
  };
  // Rows [begin[t], begin[t] + rows[t]) of every delta t.
  struct Piece {
    std::vector<std::vector<std::shared_ptr<Block>>> mem;  // per delta, per column
    std::vector<int64_t> begin, rows;                        // per delta
  };
  // The deltas as the body left them (owned buffers), as a piece that owns their memory.
  Piece own_deltas(const LoopEnd& e) {
    Piece p;
    for (const SplitDelta& d : e.split) {
      p.mem.emplace_back();
      for (BufferId b : d.columns) {
        internal_check(owned_[b] || !ptr_[b], "a split delta's column is not owned");
        p.mem.back().push_back(std::make_shared<Block>(&pool_, ptr_[b]));
        owned_[b] = false;
      }
      p.begin.push_back(0);
      p.rows.push_back(slots_[static_cast<size_t>(d.size)]);
    }
    return p;
  }
  // A delta's buffers are sized for the round's candidates, which may be many times its
  // rows (duplicates, known tuples): where that wastes more than the rows use (and over
  // 2^16 elements, so that the copy costs little next to sorting that many candidates), the
  // rows move to buffers of their size, so the next round (and a queued piece) holds only
  // what it needs. Without the memory for the copy the buffers stay.
  void shrink_deltas(const LoopEnd& e) {
    for (const SplitDelta& d : e.split) {
      const int64_t rows = slots_[static_cast<size_t>(d.size)];
      for (BufferId b : d.columns) {
        if (!owned_[b] || !ptr_[b] || count_[b] - rows <= std::max<int64_t>(rows, int64_t{1} << 16))
          continue;
        const int64_t es = plan_.buffers[static_cast<size_t>(b)].elem_size;
        void* p = nullptr;
        try {
          p = pool_.allocate(rows * es, {});
        } catch (const OutOfMemoryError&) {
          continue;
        }
        if (rows > 0) {
          RANC_CUDA_CHECK(cudaMemcpyAsync(p, ptr_[b], static_cast<size_t>(rows * es),
                                          cudaMemcpyDeviceToDevice, stream_));
        }
        pool_.free(ptr_[b]);
        ptr_[b] = p;
        count_[b] = rows;
      }
    }
  }
  // The body's delta buffers and sizes become views of the piece's rows (what they held
  // themselves, an empty delta's buffers, is freed).
  void install(const LoopEnd& e, Piece p) {
    for (size_t t = 0; t < e.split.size(); ++t) {
      const SplitDelta& d = e.split[t];
      for (size_t c = 0; c < d.columns.size(); ++c) {
        const BufferId b = d.columns[c];
        if (owned_[b] && ptr_[b]) pool_.free(ptr_[b]);
        const int64_t es = plan_.buffers[static_cast<size_t>(b)].elem_size;
        char* base = static_cast<char*>(p.mem[t][c]->ptr);
        ptr_[b] = base ? base + p.begin[t] * es : nullptr;
        count_[b] = p.rows[t];
        owned_[b] = false;
      }
      slots_[static_cast<size_t>(d.size)] = p.rows[t];
    }
    current_ = std::move(p);
  }
  // The running loop iteration ran out of memory (or past a step's size limit): when its
  // loop splits and its deltas hold two rows or more, undo the iteration (free what the
  // body allocated; the stream runs in order, so kernels still queued finish before the
  // memory is reused), queue the second half of the rows and run the body again on the
  // first. False: the error stands.
  bool split_iteration() {
    if (!loop_) return false;
    const LoopEnd& e = std::get<LoopEnd>(plan_.steps[loop_->end]);
    if (e.split.empty()) return false;
    int64_t total = 0;
    for (const SplitDelta& d : e.split) total += slots_[static_cast<size_t>(d.size)];
    if (total < 2) return false;
    free_allocated(loop_->body, loop_->end);
    Piece whole = current_ ? std::move(*current_) : own_deltas(e);
    current_.reset();
    Piece first = whole, second = whole;
    int64_t half = total / 2;
    for (size_t t = 0; t < whole.rows.size(); ++t) {
      const int64_t a = std::min(whole.rows[t], half);
      half -= a;
      first.rows[t] = a;
      second.begin[t] = whole.begin[t] + a;
      second.rows[t] = whole.rows[t] - a;
    }
    pending_.push_front(std::move(second));
    install(e, std::move(first));
    restart_iteration();
    ++stats_.split_iterations;
    return true;
  }

  const Plan& plan_;
  DevicePool& pool_;
  cudaStream_t stream_;
  bool sync_each_step_;
  RunStats& stats_;
  std::vector<void*> ptr_;
  std::vector<int64_t> count_;
  std::vector<bool> owned_;
  std::vector<int64_t> slots_;
  Uploader& uploader_;
  std::vector<std::vector<size_t>> column_of_;  // per plan input: bound column of each attribute
  std::map<std::string, cudaKernel_t> kernels_;
  std::shared_ptr<const Dictionary> dict_;
  size_t step_index_ = 0;
  size_t next_step_ = 0;
  std::optional<ActiveLoop> loop_;
  std::vector<cudaKernel_t> step_kernel_;      // per step: a Launch's kernel
  std::vector<cudaKernel_t> step_alt_kernel_;  // and its alt_kernel (nullptr: none)
  std::vector<int64_t> step_wave_blocks_;      // per step: a whole-waves Launch's wave (0: none)
  std::vector<int64_t> launch_values_;     // launch()'s kernel arguments
  std::vector<void*> launch_args_;
  std::map<std::string, std::pair<cudaKernel_t, int64_t>> resident_kernels_;  // kernel, grid
  // Resident rounds start on deltas of at most this many rows (RANC_RESIDENT_ROWS; 0: never)
  // and stop before a round of more than resident_max_rows_ (RANC_RESIDENT_MAX_ROWS).
  int64_t resident_enter_rows_ = ResidentRounds::kDefaultEnterRows;
  int64_t resident_max_rows_ = 4 * ResidentRounds::kDefaultEnterRows;
  // The delta rows a block of a resident launch takes (RANC_RESIDENT_BLOCK_ROWS).
  int64_t resident_block_rows_ = 0;  // 0: by the way the rounds run (plan.h ResidentRounds)
  // A resident launch's room for the tuples it finds, at least (RANC_RESIDENT_ROOM): a launch
  // ends when its next round could pass it, and the host sorts and merges what it found.
  // 2^22 words: a 60x60 grid's closure in one launch, 2.5x faster than at 2^20, for 1.7x the
  // 2000-node chain's peak memory (355 against 211 MiB; H200, bench/RESULTS.md, session 40).
  int64_t resident_room_ = int64_t{1} << 22;
  int64_t resident_room_growth_ = 1;
  static constexpr int64_t kResidentRoomGrowth = 4;
  // The hash set's slots: a power of two, at least this many times what it holds
  // (RANC_RESIDENT_FILL, 1-16): a collision delays its tuple's successors (and, with the
  // barrier, the round), so few of them.
  int64_t resident_fill_ = 4;
  // Loops without a round limit run a worklist instead of rounds (resident.cuh;
  // RANC_RESIDENT_ASYNC=0: rounds with a barrier between them, as with a limit).
  bool resident_async_ = true;
  int64_t sms_ = 1;  // the device's multiprocessors
  int64_t resident_refused_rows_ = 0;  // the delta of the last launch that ran no round
  // A full relation of more rows is binary-searched by the resident kernel, not put in its set.
  static constexpr int64_t kResidentSetFullRows = int64_t{1} << 22;
  // The most blocks of a resident launch (templates/resident.cuh: the barrier counts heavy
  // blocks in a field of 10 bits).
  static constexpr int64_t kResidentMaxBlocks = 1023;
  static int64_t resident_blocks_per_sm() {
    const char* v = std::getenv("RANC_RESIDENT_BLOCKS");
    const int64_t n = v && *v ? std::atoll(v) : 1;
    return std::max<int64_t>(n, 1);
  }
  std::deque<Piece> pending_;     // pieces of split deltas still to run, in order
  std::optional<Piece> current_;  // the piece the running iteration reads (its views' memory)
  // The read-backs in flight or done: steps [batch_begin_, batch_begin_ + batch_slot_.size())
  // of the plan, step k's value in readback_[batch_slot_[k - batch_begin_]] (-1: a Free).
  int64_t* readback_;
  size_t batch_begin_ = 0;
  std::vector<int> batch_slot_;
};

// A byte size from environment variable `name` into `field` when it is set; an
// ExecutionError when it is not a size.
void size_from_env(const char* name, int64_t& field) {
  const char* v = std::getenv(name);
  if (!v || !*v) return;
  const std::optional<int64_t> bytes = parse_byte_size(v);
  if (!bytes) {
    throw ExecutionError(
        fmt::format("{}={} is not a size (bytes, or a number with K, M, G or T, e.g. 8G)", name, v),
        "the environment");
  }
  field = *bytes;
}
}  // namespace

Executor::Executor(ExecutorOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->opts = options;
  if (env_switch("RANC_SYNC_STEPS").value_or(false)) impl_->opts.sync_each_step = true;
  size_from_env("RANC_MEMORY_LIMIT", impl_->opts.memory_limit);
  size_from_env("RANC_RESERVE", impl_->opts.reserve_bytes);
}

Executor::~Executor() = default;

const DeviceInfo& Executor::device() {
  impl_->init();
  return impl_->info;
}

MemoryStats Executor::memory_stats() const {
  return impl_->pool ? impl_->pool->stats() : MemoryStats{};
}

RunResult Executor::run(const Plan& plan,
                        const std::map<std::string, const HostRelation*>& inputs) {
  std::map<std::string, InputBinding> bindings;
  for (const auto& [name, rel] : inputs) bindings.emplace(name, InputBinding(rel));
  return run_bound(plan, bindings);
}

void Executor::prepare() {
  impl_->init();
  impl_->uploader.prepare();
  if (impl_->opts.reserve_bytes > 0) impl_->pool->reserve(impl_->opts.reserve_bytes);
}

RunResult Executor::run_bound(const Plan& plan, const std::map<std::string, InputBinding>& inputs) {
  auto t_total = Clock::now();
  Impl& ex = *impl_;
  ex.init();
  if (ex.opts.validate) validate_plan(plan);

  RunResult result;
  RunStats& st = result.stats;
  KernelCache& cache = ex.opts.cache ? *ex.opts.cache : KernelCache::global();
  CacheLookup compiled = compile_plan(plan, ex.opts.arch.value_or(ex.info.arch()), cache);
  st.compile_source = compiled.source;
  st.compile_seconds = compiled.seconds;

  auto t0 = Clock::now();
  std::string key = to_hex(compiled.key);
  auto lib_it = ex.libraries.find(key);
  if (lib_it == ex.libraries.end()) {
    cudaLibrary_t lib = nullptr;
    RANC_CUDA_CHECK(cudaLibraryLoadData(&lib, compiled.cubin->data(), nullptr, nullptr, 0, nullptr,
                                        nullptr, 0));
    lib_it = ex.libraries.emplace(key, lib).first;
    st.load_seconds = seconds_since(t0);
  }

  DevicePool& pool = *ex.pool;
  pool.set_limit(ex.opts.memory_limit);
  pool.reset_peak();
  int64_t allocs_before = pool.stats().allocations;
  {
    Run run(plan, pool, ex.stream, ex.opts.sync_each_step, st, ex.uploader, ex.readback);
    run.bind(inputs, lib_it->second, ex.info.sm_count);
    run.execute();
    result.outputs = run.download_outputs();
  }
  RANC_CUDA_CHECK(cudaStreamSynchronize(ex.stream));
  st.peak_device_bytes = pool.stats().peak_bytes;
  st.device_allocations = pool.stats().allocations - allocs_before;
  st.total_seconds = seconds_since(t_total);
  return result;
}

}  // namespace ranc::rt
