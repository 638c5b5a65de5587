// NVRTC compilation to CUBIN, include directory discovery and the embedded
// template headers.
#include "ranc/runtime/jit.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <nvrtc.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string_view>
#include <type_traits>

#include "env.h"
#include "ranc/runtime/check.h"
#include "ranc/runtime/errors.h"
#include "ranc/runtime/hash.h"
#include "ranc/runtime/kernel_cache.h"

#ifdef RANC_HAVE_TEMPLATES
#include "ranc/templates/embedded.h"
#endif

namespace fs = std::filesystem;

namespace ranc::rt {
namespace {

// NVRTC's --split-compile thread count: RANC_JIT_THREADS when it is a number >= 0
// (0 = every hardware thread), else 0.
int split_compile_threads() {
  const char* v = std::getenv("RANC_JIT_THREADS");
  if (v && *v) {
    char* end = nullptr;
    long n = std::strtol(v, &end, 10);
    if (end && *end == '\0' && n >= 0 && n <= 4096) return static_cast<int>(n);
  }
  return 0;
}

bool has_cub(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / "cub" / "cub.cuh", ec);
}

// Adds `base` (and base/cccl when that holds CUB) to dirs; true when CUB is reachable.
bool add_include_base(const fs::path& base, std::vector<std::string>& dirs) {
  std::error_code ec;
  if (!fs::is_directory(base, ec)) return false;
  bool cub = false;
  if (has_cub(base / "cccl")) {
    dirs.push_back((base / "cccl").string());
    cub = true;
  }
  dirs.push_back(base.string());
  return cub || has_cub(base);
}

std::vector<std::string> discover_include_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("RANC_CUDA_INCLUDE"); env && *env) {
    std::string_view s(env);
    while (!s.empty()) {
      size_t colon = s.find(':');
      std::string_view part = s.substr(0, colon);
      if (!part.empty()) add_include_base(fs::path(part), dirs);
      if (colon == std::string_view::npos) break;
      s.remove_prefix(colon + 1);
    }
    return dirs;
  }
  std::vector<fs::path> bases;
  // The toolkit NVRTC was loaded from: <root>/lib64/libnvrtc.so or
  // <root>/targets/<arch>/lib/libnvrtc.so; headers are in <that>/../include.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) != 0 && info.dli_fname) {
    std::error_code ec;
    fs::path lib = fs::weakly_canonical(fs::path(info.dli_fname), ec);
    if (!ec) bases.push_back(lib.parent_path().parent_path() / "include");
  }
  if (const char* cp = std::getenv("CUDA_PATH"); cp && *cp)
    bases.push_back(fs::path(cp) / "include");
  if (const char* ch = std::getenv("CUDA_HOME"); ch && *ch)
    bases.push_back(fs::path(ch) / "include");
  bases.push_back("/usr/local/cuda/include");
  for (const fs::path& b : bases) {
    std::vector<std::string> d;
    if (add_include_base(b, d)) return d;
  }
  return dirs;
}

template <typename T>
std::string to_std_string(const T& v) {
  if constexpr (std::is_integral_v<T>) {
    return fmt::format("{:016x}", static_cast<uint64_t>(v));
  } else {
    return std::string(std::string_view(v));
  }
}

std::vector<JitHeader> load_embedded_headers() {
  std::vector<JitHeader> out;
#ifdef RANC_HAVE_TEMPLATES
  for (const auto& h : ranc::templates::embedded_headers()) {
    out.push_back(JitHeader{std::string(std::string_view(h.name)),
                            std::string(std::string_view(h.contents))});
  }
#endif
  return out;
}

std::string sanitize(std::string_view name) {
  std::string s;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    s += ok ? c : '_';
  }
  if (s.empty()) s = "program";
  return s;
}

// Writes the failing source; "" when it cannot be written.
std::string dump_source(const JitRequest& req, const std::vector<std::string>& options) {
  try {
    fs::path dir = jit_dump_dir();
    fs::create_directories(dir);
    std::string stem = sanitize(req.program_name);
    if (stem.size() > 3 && stem.ends_with(".cu")) stem.resize(stem.size() - 3);
    Digest d = Sha256().update_field(req.source).finish();
    fs::path path = dir / fmt::format("{}-{}.cu", stem, to_hex(d).substr(0, 12));
    {
      std::ofstream f(path, std::ios::binary | std::ios::trunc);
      f << req.source;
      if (!f) return "";
    }
    std::ofstream o(path.string() + ".options", std::ios::trunc);
    for (const auto& opt : options) o << opt << '\n';
    return path.string();
  } catch (const std::exception&) {
    return "";
  }
}

// Automatic PCH uses one heap per process; compiles that use it run one at a time.
std::mutex& pch_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  RANC_NVRTC_CHECK(nvrtcVersion(&major, &minor));
  return fmt::format("{}.{}", major, minor);
}

std::vector<std::string> cuda_include_dirs() {
  // Computed per call only when the environment asks for a specific folder, so
  // tests can change RANC_CUDA_INCLUDE; otherwise once.
  if (std::getenv("RANC_CUDA_INCLUDE")) return discover_include_dirs();
  static const std::vector<std::string> dirs = discover_include_dirs();
  return dirs;
}

const std::vector<JitHeader>& embedded_headers() {
  static const std::vector<JitHeader> headers = load_embedded_headers();
  return headers;
}

std::string template_bundle_hash() {
#ifdef RANC_HAVE_TEMPLATES
  return to_std_string(ranc::templates::bundle_hash());
#else
  // No bundle: hash the (empty) header list so the key still has a stable value.
  return "no-templates";
#endif
}

fs::path jit_dump_dir() {
  if (auto dir = KernelCache::default_dir()) return *dir / "failed";
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return tmp / fmt::format("ranc-jit-{}", static_cast<long>(getuid()));
}

std::vector<std::string> jit_options(const JitRequest& req, bool with_pch) {
  std::vector<std::string> opts;
  bool has_std = false, has_arch = false, has_split = false;
  for (const auto& o : req.options) {
    if (o.starts_with("-std=") || o.starts_with("--std=")) has_std = true;
    if (o.starts_with("--gpu-architecture") || o.starts_with("-arch")) has_arch = true;
    if (o.starts_with("--split-compile") || o.starts_with("-split-compile")) has_split = true;
  }
  if (!has_std) opts.push_back("-std=c++20");
  if (!has_arch) opts.push_back(fmt::format("--gpu-architecture=sm_{}", req.arch));
  for (const auto& d : cuda_include_dirs()) opts.push_back("-I" + d);
  if (!has_split) {
    const int threads = split_compile_threads();
    if (threads != 1) opts.push_back(fmt::format("--split-compile={}", threads));
  }
  const bool pch = env_switch("RANC_JIT_PCH").value_or(req.use_pch);
  if (with_pch && pch) opts.push_back("--pch");
  opts.insert(opts.end(), req.options.begin(), req.options.end());
  return opts;
}

JitResult compile_to_cubin(const JitRequest& req) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> options = jit_options(req, /*with_pch=*/true);
  bool pch = false;
  for (const auto& o : options) pch = pch || o == "--pch";

  const auto& headers = embedded_headers();
  std::vector<const char*> header_texts, header_names;
  for (const auto& h : headers) {
    header_texts.push_back(h.contents.c_str());
    header_names.push_back(h.name.c_str());
  }
  std::vector<const char*> opt_ptrs;
  for (const auto& o : options) opt_ptrs.push_back(o.c_str());

  std::unique_lock<std::mutex> lock(pch_mutex(), std::defer_lock);
  if (pch) lock.lock();

  nvrtcProgram prog = nullptr;
  RANC_NVRTC_CHECK(nvrtcCreateProgram(&prog, req.source.c_str(), req.program_name.c_str(),
                                      static_cast<int>(headers.size()), header_texts.data(),
                                      header_names.data()));
  struct Destroy {
    nvrtcProgram* p;
    ~Destroy() { (void)nvrtcDestroyProgram(p); }
  } destroy{&prog};

  nvrtcResult res = nvrtcCompileProgram(prog, static_cast<int>(opt_ptrs.size()), opt_ptrs.data());
  size_t log_size = 0;
  RANC_NVRTC_CHECK(nvrtcGetProgramLogSize(prog, &log_size));
  std::string log(log_size, '\0');
  if (log_size > 0) RANC_NVRTC_CHECK(nvrtcGetProgramLog(prog, log.data()));
  while (!log.empty() && log.back() == '\0') log.pop_back();

  if (res == NVRTC_ERROR_COMPILATION) {
    throw JitError(req.program_name, log, options, dump_source(req, options));
  }
  RANC_NVRTC_CHECK(res);

  if (pch && nvrtcGetPCHCreateStatus(prog) == NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED) {
    // Grow the heap so the next compile of these headers can create the PCH.
    size_t need = 0;
    if (nvrtcGetPCHHeapSizeRequired(prog, &need) == NVRTC_SUCCESS && need > 0) {
      (void)nvrtcSetPCHHeapSize(need);
    }
  }

  JitResult out;
  size_t cubin_size = 0;
  RANC_NVRTC_CHECK(nvrtcGetCUBINSize(prog, &cubin_size));
  out.cubin.resize(cubin_size);
  if (cubin_size > 0) RANC_NVRTC_CHECK(nvrtcGetCUBIN(prog, out.cubin.data()));
  out.log = std::move(log);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

std::vector<char> compile_to_cubin(const std::string& source, const std::string& program_name,
                                   const std::vector<std::string>& options, int arch) {
  JitRequest req;
  req.source = source;
  req.program_name = program_name;
  req.options = options;
  req.arch = arch;
  return compile_to_cubin(req).cubin;
}

}  // namespace ranc::rt
