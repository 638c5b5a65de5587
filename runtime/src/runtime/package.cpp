// Ahead-of-time packages: plan serialization and the .rancpkg file (package.h).
//
// Body fields, in order (u8/u32/i32/i64 little-endian; str = u64 length + bytes;
// list = u64 count + items):
//   str ranc_version, str nvrtc_version, str program_name, str program_text,
//   str plan (serialize_plan), list of (i32 arch, str cubin).
// A plan: str source, list<str> nvrtc_options, list<str> kernels, i32 num_slots,
//   list<buffer>, list<relation> inputs, list<relation> outputs, list<dict param>,
//   list<step>, list<str> node_names; each step is a u8 tag (its index in Step)
//   followed by its fields.
#include "ranc/runtime/package.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <type_traits>

#include "ranc/data/error.h"
#include "ranc/runtime/executor.h"
#include "ranc/runtime/hash.h"
#include "ranc/runtime/jit.h"
#include "ranc/runtime/kernel_cache.h"

namespace ranc::rt {
namespace {

constexpr char kMagic[8] = {'R', 'A', 'N', 'C', 'P', 'K', 'G', '\0'};
constexpr size_t kHeaderBytes = 8 + 4 + 8 + 32;
#ifndef RANC_VERSION_STRING
#define RANC_VERSION_STRING "0.1.0"
#endif

[[noreturn]] void damaged(const std::string& what, const std::string& why) {
  throw UserError(Diagnostic{ErrorKind::Data, why, SourceLoc{what, 0, 0}, {}});
}

class Writer {
 public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { raw(&v, 4); }
  void i32(int32_t v) { raw(&v, 4); }
  void i64(int64_t v) { raw(&v, 8); }
  void u64(uint64_t v) { raw(&v, 8); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  void str(std::string_view s) {
    u64(s.size());
    out_.append(s.data(), s.size());
  }
  void bytes(const std::vector<char>& b) {
    u64(b.size());
    out_.append(b.data(), b.size());
  }
  template <class T, class F>
  void list(const std::vector<T>& v, F f) {
    u64(v.size());
    for (const T& x : v) f(x);
  }
  std::string take() { return std::move(out_); }

 private:
  void raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string out_;
};

class Reader {
 public:
  Reader(std::string_view b, const std::string& what) : p_(b.data()), end_(b.data() + b.size()), what_(what) {}
  uint8_t u8() { return static_cast<uint8_t>(*take(1)); }
  uint32_t u32() { return load<uint32_t>(); }
  int32_t i32() { return load<int32_t>(); }
  int64_t i64() { return load<int64_t>(); }
  uint64_t u64() { return load<uint64_t>(); }
  bool boolean() {
    uint8_t v = u8();
    if (v > 1) damaged(what_, fmt::format("a flag holds {}", v));
    return v == 1;
  }
  std::string str() {
    uint64_t n = u64();
    if (n > remaining()) truncated(n);
    const char* s = take(static_cast<size_t>(n));
    return std::string(s, static_cast<size_t>(n));
  }
  std::vector<char> bytes() {
    std::string s = str();
    return std::vector<char>(s.begin(), s.end());
  }
  // A count of items each at least `min_bytes` long: never more than the bytes left.
  size_t count(size_t min_bytes = 1) {
    uint64_t n = u64();
    if (n > remaining() / std::max<size_t>(min_bytes, 1))
      damaged(what_, fmt::format("a list of {} items does not fit in the {} bytes left", n,
                                 remaining()));
    return static_cast<size_t>(n);
  }
  template <class T, class F>
  std::vector<T> list(F f, size_t min_bytes = 1) {
    size_t n = count(min_bytes);
    std::vector<T> v;
    v.reserve(n);
    for (size_t i = 0; i < n; ++i) v.push_back(f());
    return v;
  }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  const std::string& what() const { return what_; }

 private:
  template <class T>
  T load() {
    T v;
    std::memcpy(&v, take(sizeof(T)), sizeof(T));
    return v;
  }
  const char* take(size_t n) {
    if (n > remaining()) truncated(n);
    const char* s = p_;
    p_ += n;
    return s;
  }
  [[noreturn]] void truncated(uint64_t n) {
    damaged(what_, fmt::format("truncated: {} more bytes needed, {} left", n, remaining()));
  }
  const char* p_;
  const char* end_;
  std::string what_;
};

// ---- plan fields

void put(Writer& w, const SizeExpr& e) {
  w.i64(e.constant);
  w.list(e.terms, [&](const SizeTerm& t) {
    w.i64(t.factor);
    w.list(t.slots, [&](SlotId s) { w.i32(s); });
  });
  w.i64(e.divisor);
  w.i64(e.at_least);
  w.i64(e.at_most);
  w.boolean(e.saturate);
}
SizeExpr get_size(Reader& r) {
  SizeExpr e;
  e.constant = r.i64();
  e.terms = r.list<SizeTerm>([&] {
    SizeTerm t;
    t.factor = r.i64();
    t.slots = r.list<SlotId>([&] { return r.i32(); }, 4);
    return t;
  }, 16);
  e.divisor = r.i64();
  if (e.divisor < 1) damaged(r.what(), fmt::format("a size divisor is {}", e.divisor));
  e.at_least = r.i64();
  e.at_most = r.i64();
  e.saturate = r.boolean();
  return e;
}

void put(Writer& w, const Schema& s) {
  w.list(s.attributes, [&](const Attribute& a) {
    w.str(a.name);
    w.u8(static_cast<uint8_t>(a.type));
  });
  w.u64(s.key_size);
}
Schema get_schema(Reader& r) {
  Schema s;
  s.attributes = r.list<Attribute>([&] {
    Attribute a;
    a.name = r.str();
    uint8_t t = r.u8();
    if (t > static_cast<uint8_t>(Type::String)) damaged(r.what(), fmt::format("type code {}", t));
    a.type = static_cast<Type>(t);
    return a;
  }, 9);
  uint64_t k = r.u64();
  if (k > s.attributes.size()) damaged(r.what(), "a key longer than its schema");
  s.key_size = static_cast<size_t>(k);
  return s;
}

void put(Writer& w, const PlanRelation& rel) {
  w.str(rel.name);
  put(w, rel.schema);
  w.list(rel.columns, [&](BufferId b) { w.i32(b); });
  w.i32(rel.size);
}
PlanRelation get_relation(Reader& r) {
  PlanRelation rel;
  rel.name = r.str();
  rel.schema = get_schema(r);
  rel.columns = r.list<BufferId>([&] { return r.i32(); }, 4);
  rel.size = r.i32();
  return rel;
}

void put(Writer& w, const KernelArg& a) {
  w.u8(static_cast<uint8_t>(a.index()));
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, ArgBuffer>) w.i32(x.buffer);
        if constexpr (std::is_same_v<T, ArgSlot>) w.i32(x.slot);
        if constexpr (std::is_same_v<T, ArgConst>) w.i64(x.value);
      },
      a);
}
KernelArg get_arg(Reader& r) {
  switch (r.u8()) {
    case 0: return ArgBuffer{r.i32()};
    case 1: return ArgSlot{r.i32()};
    case 2: return ArgConst{r.i64()};
    default: damaged(r.what(), "an unknown kernel argument kind");
  }
}

void put(Writer& w, const Step& step) {
  w.u8(static_cast<uint8_t>(step.index()));
  std::visit(
      [&](const auto& s) {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, Alloc>) {
          w.i32(s.buffer);
          w.boolean(s.zero);
        } else if constexpr (std::is_same_v<T, Free>) {
          w.i32(s.buffer);
        } else if constexpr (std::is_same_v<T, SetSize>) {
          w.i32(s.slot);
          put(w, s.value);
        } else if constexpr (std::is_same_v<T, ReadSize>) {
          w.i32(s.slot);
          w.i32(s.buffer);
          w.i64(s.index);
        } else if constexpr (std::is_same_v<T, Launch>) {
          w.str(s.kernel);
          put(w, s.items);
          w.i64(s.items_per_block);
          w.i32(s.block_threads);
          w.i32(s.dynamic_smem);
          w.boolean(s.skip_if_empty);
          w.list(s.args, [&](const KernelArg& a) { put(w, a); });
          w.i32(s.node);
          w.list(s.nodes, [&](int32_t n) { w.i32(n); });
          w.boolean(s.regrow.has_value());
          if (s.regrow) {
            w.i32(s.regrow->header);
            w.i64(s.regrow->index);
            w.i32(s.regrow->capacity);
            w.i32(s.regrow->needed);
            w.list(s.regrow->grow, [&](BufferId b) { w.i32(b); });
          }
        } else if constexpr (std::is_same_v<T, SortPairs>) {
          w.i32(s.keys_in);
          w.i32(s.keys_out);
          w.i32(s.values_in);
          w.i32(s.values_out);
          w.u8(static_cast<uint8_t>(s.key_type));
          w.boolean(s.descending);
          put(w, s.count);
          w.i32(s.node);
        } else if constexpr (std::is_same_v<T, ScanInt64>) {
          w.i32(s.in);
          w.i32(s.out);
          put(w, s.count);
          w.i32(s.node);
        } else if constexpr (std::is_same_v<T, Gather>) {
          w.i32(s.src);
          w.i32(s.index);
          w.i32(s.dst);
          w.i32(s.elem_size);
          put(w, s.count);
          w.i32(s.node);
        } else if constexpr (std::is_same_v<T, Iota>) {
          w.i32(s.buffer);
          put(w, s.count);
        } else if constexpr (std::is_same_v<T, CheckFlag>) {
          w.i32(s.buffer);
          w.str(s.message);
          w.i32(s.node);
        }
      },
      step);
}
Step get_step(Reader& r) {
  const uint8_t tag = r.u8();
  switch (tag) {
    case 0: {
      Alloc s;
      s.buffer = r.i32();
      s.zero = r.boolean();
      return s;
    }
    case 1: return Free{r.i32()};
    case 2: {
      SetSize s;
      s.slot = r.i32();
      s.value = get_size(r);
      return s;
    }
    case 3: {
      ReadSize s;
      s.slot = r.i32();
      s.buffer = r.i32();
      s.index = r.i64();
      return s;
    }
    case 4: {
      Launch s;
      s.kernel = r.str();
      s.items = get_size(r);
      s.items_per_block = r.i64();
      s.block_threads = r.i32();
      s.dynamic_smem = r.i32();
      s.skip_if_empty = r.boolean();
      s.args = r.list<KernelArg>([&] { return get_arg(r); }, 5);
      s.node = r.i32();
      s.nodes = r.list<int32_t>([&] { return r.i32(); }, 4);
      if (r.boolean()) {
        Regrow g;
        g.header = r.i32();
        g.index = r.i64();
        g.capacity = r.i32();
        g.needed = r.i32();
        g.grow = r.list<BufferId>([&] { return r.i32(); }, 4);
        s.regrow = g;
      }
      return s;
    }
    case 5: {
      SortPairs s;
      s.keys_in = r.i32();
      s.keys_out = r.i32();
      s.values_in = r.i32();
      s.values_out = r.i32();
      uint8_t t = r.u8();
      if (t > static_cast<uint8_t>(Type::String)) damaged(r.what(), fmt::format("type code {}", t));
      s.key_type = static_cast<Type>(t);
      s.descending = r.boolean();
      s.count = get_size(r);
      s.node = r.i32();
      return s;
    }
    case 6: {
      ScanInt64 s;
      s.in = r.i32();
      s.out = r.i32();
      s.count = get_size(r);
      s.node = r.i32();
      return s;
    }
    case 7: {
      Gather s;
      s.src = r.i32();
      s.index = r.i32();
      s.dst = r.i32();
      s.elem_size = r.i32();
      s.count = get_size(r);
      s.node = r.i32();
      return s;
    }
    case 8: {
      Iota s;
      s.buffer = r.i32();
      s.count = get_size(r);
      return s;
    }
    case 9: {
      CheckFlag s;
      s.buffer = r.i32();
      s.message = r.str();
      s.node = r.i32();
      return s;
    }
    default: damaged(r.what(), fmt::format("an unknown step kind {}", tag));
  }
}
static_assert(std::variant_size_v<Step> == 10, "serialize every kind of step");
static_assert(std::variant_size_v<KernelArg> == 3, "serialize every kind of argument");

}  // namespace

std::string serialize_plan(const Plan& plan) {
  Writer w;
  w.str(plan.source);
  w.list(plan.nvrtc_options, [&](const std::string& s) { w.str(s); });
  w.list(plan.kernels, [&](const std::string& s) { w.str(s); });
  w.i32(plan.num_slots);
  w.list(plan.buffers, [&](const BufferDecl& b) {
    w.str(b.name);
    w.i32(b.elem_size);
    put(w, b.count);
    w.i32(b.node);
  });
  w.list(plan.inputs, [&](const PlanRelation& r) { put(w, r); });
  w.list(plan.outputs, [&](const PlanRelation& r) { put(w, r); });
  w.list(plan.dict_params, [&](const DictParam& d) {
    w.u8(static_cast<uint8_t>(d.kind));
    w.str(d.text);
    w.i32(d.slot);
    w.i32(d.mask);
  });
  w.list(plan.steps, [&](const Step& s) { put(w, s); });
  w.list(plan.node_names, [&](const std::string& s) { w.str(s); });
  return w.take();
}

Plan deserialize_plan(std::string_view bytes, const std::string& what) {
  Reader r(bytes, what);
  Plan p;
  p.source = r.str();
  p.nvrtc_options = r.list<std::string>([&] { return r.str(); }, 8);
  p.kernels = r.list<std::string>([&] { return r.str(); }, 8);
  p.num_slots = r.i32();
  if (p.num_slots < 0) damaged(what, "a negative number of size slots");
  p.buffers = r.list<BufferDecl>([&] {
    BufferDecl b;
    b.name = r.str();
    b.elem_size = r.i32();
    b.count = get_size(r);
    b.node = r.i32();
    return b;
  }, 16);
  p.inputs = r.list<PlanRelation>([&] { return get_relation(r); }, 20);
  p.outputs = r.list<PlanRelation>([&] { return get_relation(r); }, 20);
  p.dict_params = r.list<DictParam>([&] {
    DictParam d;
    uint8_t k = r.u8();
    if (k > static_cast<uint8_t>(DictParam::Kind::LikeMask))
      damaged(what, fmt::format("an unknown dictionary parameter kind {}", k));
    d.kind = static_cast<DictParam::Kind>(k);
    d.text = r.str();
    d.slot = r.i32();
    d.mask = r.i32();
    return d;
  }, 17);
  p.steps = r.list<Step>([&] { return get_step(r); }, 5);
  p.node_names = r.list<std::string>([&] { return r.str(); }, 8);
  if (r.remaining() != 0) damaged(what, fmt::format("{} unexpected bytes after the plan", r.remaining()));
  return p;
}

const std::vector<char>* Package::cubin_for(int arch) const {
  for (const auto& [a, c] : cubins)
    if (a == arch) return &c;
  return nullptr;
}

std::string Package::arch_list() const {
  std::string s;
  for (const auto& [a, c] : cubins) s += fmt::format("{}sm_{}", s.empty() ? "" : ", ", a);
  return s.empty() ? "none" : s;
}

std::string encode_package(const Package& pkg) {
  Writer body;
  body.str(pkg.ranc_version);
  body.str(pkg.nvrtc_version);
  body.str(pkg.program_name);
  body.str(pkg.program_text);
  body.str(serialize_plan(pkg.plan));
  body.list(pkg.cubins, [&](const std::pair<int, std::vector<char>>& c) {
    body.i32(c.first);
    body.bytes(c.second);
  });
  std::string b = body.take();
  Digest d = sha256(b.data(), b.size());
  std::string out(kMagic, sizeof(kMagic));
  uint32_t version = kPackageFormatVersion;
  uint64_t size = b.size();
  out.append(reinterpret_cast<const char*>(&version), 4);
  out.append(reinterpret_cast<const char*>(&size), 8);
  out.append(reinterpret_cast<const char*>(d.data()), d.size());
  out += b;
  return out;
}

Package decode_package(std::string_view bytes, const std::string& what) {
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    damaged(what, "not a ranc package (no RANCPKG header)");
  if (bytes.size() < kHeaderBytes)
    damaged(what, fmt::format("truncated: {} bytes, the header alone has {}", bytes.size(),
                              kHeaderBytes));
  uint32_t version;
  uint64_t size;
  std::memcpy(&version, bytes.data() + 8, 4);
  std::memcpy(&size, bytes.data() + 12, 8);
  if (version != kPackageFormatVersion)
    damaged(what, fmt::format("package format version {}, this ranc reads version {}; rebuild "
                              "it with `ranc build`",
                              version, kPackageFormatVersion));
  if (size != bytes.size() - kHeaderBytes)
    damaged(what, fmt::format("truncated or extended: the header says {} bytes of contents, the "
                              "file has {}",
                              size, bytes.size() - kHeaderBytes));
  std::string_view body = bytes.substr(kHeaderBytes);
  Digest d = sha256(body.data(), body.size());
  if (std::memcmp(d.data(), bytes.data() + 20, 32) != 0)
    damaged(what, "checksum mismatch: the file is damaged");
  Reader r(body, what);
  Package pkg;
  pkg.ranc_version = r.str();
  if (pkg.ranc_version != RANC_VERSION_STRING)
    damaged(what, fmt::format("built by ranc {}, this is ranc {}; rebuild it with `ranc build`",
                              pkg.ranc_version, RANC_VERSION_STRING));
  pkg.nvrtc_version = r.str();
  pkg.program_name = r.str();
  pkg.program_text = r.str();
  pkg.plan = deserialize_plan(r.str(), what);
  pkg.cubins = r.list<std::pair<int, std::vector<char>>>([&] {
    int arch = r.i32();
    return std::pair<int, std::vector<char>>(arch, r.bytes());
  }, 12);
  if (r.remaining() != 0) damaged(what, "unexpected bytes at the end");
  return pkg;
}

void write_package(const std::string& path, const Package& pkg) {
  namespace fs = std::filesystem;
  const std::string bytes = encode_package(pkg);
  const std::string tmp = fmt::format("{}.tmp{}", path, static_cast<long>(::getpid()));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.flush();
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      damaged(path, "cannot write the package");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    damaged(path, "cannot write the package");
  }
}

Package read_package(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) damaged(path, "cannot open the package");
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return decode_package(bytes, path);
}

bool is_package_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char m[sizeof(kMagic)] = {};
  return f.read(m, sizeof(m)) && std::memcmp(m, kMagic, sizeof(kMagic)) == 0;
}

void install_package_cubin(const Package& pkg, int arch) {
  const std::vector<char>* cubin = pkg.cubin_for(arch);
  if (!cubin)
    throw UserError(Diagnostic{
        ErrorKind::Data,
        fmt::format("the package has code for {}, not for this GPU (sm_{}); rebuild it with "
                    "`ranc build --arch {}`",
                    pkg.arch_list(), arch, arch),
        SourceLoc{pkg.program_name, 0, 0}, {}});
  KernelCache::global().insert(plan_jit_request(pkg.plan, arch), *cubin);
}

}  // namespace ranc::rt
