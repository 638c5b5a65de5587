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
#include <utility>
#include <variant>

#include "ranc/data/atomic_file.h"
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
#error "RANC_VERSION_STRING: the build defines it from the project version"
#endif

[[noreturn]] void damaged(const std::string& what, const std::string& why) {
  throw UserError(Diagnostic{ErrorKind::Data, why, SourceLoc{what, 0, 0}, {}});
}

// Archives: Writer and Reader offer the same calls, so each structure's fields are
// listed once (fields() below) and serve both directions. The Reader checks every
// length against the bytes left and every code against its range.
class Writer {
 public:
  static constexpr bool kReading = false;
  void u8(uint8_t& v) { out_.push_back(static_cast<char>(v)); }
  void operator()(int32_t& v) { raw(&v, 4); }
  void operator()(int64_t& v) { raw(&v, 8); }
  void operator()(bool& v) { out_.push_back(v ? 1 : 0); }
  void operator()(std::string& s) {
    count(s.size());
    out_.append(s);
  }
  void operator()(std::vector<char>& b) {
    count(b.size());
    out_.append(b.data(), b.size());
  }
  template <class T, class F>
  void list(std::vector<T>& v, F f, size_t /*min_bytes*/ = 1) {
    count(v.size());
    for (T& x : v) f(x);
  }
  void count(uint64_t n) { raw(&n, 8); }
  template <class F>
  void check(bool, F) {}  // what a Reader validates
  std::string take() { return std::move(out_); }

 private:
  void raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string out_;
};

class Reader {
 public:
  static constexpr bool kReading = true;
  Reader(std::string_view b, const std::string& what)
      : p_(b.data()), end_(b.data() + b.size()), what_(what) {}
  void u8(uint8_t& v) { v = static_cast<uint8_t>(*take(1)); }
  void operator()(int32_t& v) { load(v); }
  void operator()(int64_t& v) { load(v); }
  void operator()(bool& v) {
    uint8_t b;
    u8(b);
    if (b > 1) damaged(what_, fmt::format("a flag holds {}", b));
    v = b == 1;
  }
  void operator()(std::string& s) {
    const size_t n = count(1);
    s.assign(take(n), n);
  }
  void operator()(std::vector<char>& b) {
    const size_t n = count(1);
    const char* p = take(n);
    b.assign(p, p + n);
  }
  // A list of items each at least `min_bytes` long: never more than the bytes left.
  template <class T, class F>
  void list(std::vector<T>& v, F f, size_t min_bytes = 1) {
    v.resize(count(min_bytes));
    for (T& x : v) f(x);
  }
  size_t count(size_t min_bytes) {
    uint64_t n;
    load(n);
    if (n > remaining() / std::max<size_t>(min_bytes, 1))
      damaged(what_, fmt::format("a list of {} items does not fit in the {} bytes left", n,
                                 remaining()));
    return static_cast<size_t>(n);
  }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  const std::string& what() const { return what_; }
  // A read value must satisfy `ok`; `message()` says what is wrong otherwise.
  template <class F>
  void check(bool ok, F message) {
    if (!ok) damaged(what_, message());
  }

 private:
  template <class T>
  void load(T& v) {
    std::memcpy(&v, take(sizeof(T)), sizeof(T));
  }
  const char* take(size_t n) {
    if (n > remaining())
      damaged(what_, fmt::format("truncated: {} more bytes needed, {} left", n, remaining()));
    const char* s = p_;
    p_ += n;
    return s;
  }
  const char* p_;
  const char* end_;
  std::string what_;
};

// An enum stored as one byte, read back only when it is at most `last`.
template <class A, class E>
void enum_field(A& a, E& e, E last, const char* what) {
  uint8_t v = static_cast<uint8_t>(e);
  a.u8(v);
  if constexpr (A::kReading) {
    if (v > static_cast<uint8_t>(last)) damaged(a.what(), fmt::format("unknown {} code {}", what, v));
    e = static_cast<E>(v);
  }
}

// The alternative `index` of a variant, default-constructed.
template <class V, size_t... I>
V variant_at(size_t index, std::index_sequence<I...>) {
  V v;
  ((index == I ? (void)v.template emplace<I>() : void()), ...);
  return v;
}

// A variant as its index and the alternative's fields (defined after every fields()).
template <class A, class V>
void variant_field(A& a, V& v, const char* what);

// ---- the fields of each plan structure, in file order

template <class A>
void fields(A& a, SizeExpr& e) {
  a(e.constant);
  a.list(e.terms, [&](SizeTerm& t) {
    a(t.factor);
    a.list(t.slots, [&](SlotId& s) { a(s); }, 4);
  }, 16);
  a(e.divisor);
  a.check(e.divisor >= 1, [&] { return fmt::format("a size divisor is {}", e.divisor); });
  a(e.at_least);
  a(e.at_most);
  a(e.saturate);
  enum_field(a, e.fn, SizeFn::Pow2, "size function");
  a(e.gate);
  a(e.gate_min);
  a(e.gate_max);
}
template <class A>
void fields(A& a, Schema& s) {
  a.list(s.attributes, [&](Attribute& at) {
    a(at.name);
    enum_field(a, at.type, Type::String, "type");
    a(at.nullable);
  }, 9);
  int64_t key = static_cast<int64_t>(s.key_size);
  a(key);
  a.check(key >= 0 && static_cast<uint64_t>(key) <= s.attributes.size(),
          [] { return std::string("a key longer than its schema"); });
  s.key_size = static_cast<size_t>(key);
}
template <class A>
void fields(A& a, PlanRelation& r) {
  a(r.name);
  fields(a, r.schema);
  a.list(r.columns, [&](BufferId& b) { a(b); }, 4);
  a(r.size);
  a.list(r.validity, [&](BufferId& b) { a(b); }, 4);
}
template <class A>
void fields(A& a, BufferDecl& b) {
  a(b.name);
  a(b.elem_size);
  fields(a, b.count);
  a(b.node);
}
template <class A>
void fields(A& a, DictParam& d) {
  enum_field(a, d.kind, DictParam::Kind::SubstringMap, "dictionary parameter");
  a(d.text);
  a(d.slot);
  a(d.mask);
  a(d.from);
  a(d.length);
}
template <class A> void fields(A& a, ArgBuffer& x) { a(x.buffer); }
template <class A> void fields(A& a, ArgSlot& x) { a(x.slot); }
template <class A> void fields(A& a, ArgConst& x) { a(x.value); }
template <class A>
void fields(A& a, Alloc& s) {
  a(s.buffer);
  a(s.zero);
}
template <class A> void fields(A& a, Free& s) { a(s.buffer); }
template <class A>
void fields(A& a, SetSize& s) {
  a(s.slot);
  fields(a, s.value);
}
template <class A>
void fields(A& a, ReadSize& s) {
  a(s.slot);
  a(s.buffer);
  a(s.index);
  a(s.index_slot);
  a(s.when);
}
template <class A>
void fields(A& a, Launch& s) {
  a(s.kernel);
  fields(a, s.items);
  a(s.items_per_block);
  a(s.block_threads);
  a(s.dynamic_smem);
  a(s.skip_if_empty);
  a.list(s.args, [&](KernelArg& arg) { variant_field(a, arg, "kernel argument"); }, 5);
  a(s.node);
  a.list(s.nodes, [&](int32_t& n) { a(n); }, 4);
  bool regrow = s.regrow.has_value();
  a(regrow);
  if (regrow) {
    if (!s.regrow) s.regrow.emplace();
    a(s.regrow->header);
    a(s.regrow->index);
    a(s.regrow->capacity);
    a(s.regrow->needed);
    a.list(s.regrow->grow, [&](BufferId& b) { a(b); }, 4);
  }
  a(s.alt_kernel);
  a(s.alt_when);
  a.list(s.device_sizes, [&](DeviceSize& d) {
    a(d.slot);
    a(d.arg);
  }, 4);
  a(s.whole_waves);
  a(s.one_wave);
}
template <class A>
void fields(A& a, SortPairs& s) {
  a(s.keys_in);
  a(s.keys_out);
  a(s.values_in);
  a(s.values_out);
  enum_field(a, s.key_type, Type::String, "type");
  a(s.descending);
  fields(a, s.count);
  a(s.node);
  a(s.value_bytes);
  a(s.encoded);
  a(s.radix_bits);
  a.list(s.more_values, [&](std::pair<BufferId, BufferId>& v) {
    a(v.first);
    a(v.second);
  }, 8);
}
template <class A>
void fields(A& a, ScanInt64& s) {
  a(s.in);
  a(s.out);
  fields(a, s.count);
  a(s.node);
}
template <class A>
void fields(A& a, Gather& s) {
  a(s.src);
  a(s.index);
  a(s.dst);
  a(s.elem_size);
  fields(a, s.count);
  a(s.node);
}
template <class A>
void fields(A& a, Iota& s) {
  a(s.buffer);
  fields(a, s.count);
}
template <class A>
void fields(A& a, CheckFlag& s) {
  a(s.buffer);
  a(s.message);
  a(s.node);
}
template <class A>
void fields(A& a, CopyBuffer& s) {
  a(s.src);
  a(s.dst);
  fields(a, s.count);
  a(s.node);
}
template <class A>
void fields(A& a, LoopBegin& s) {
  a(s.loop);
  a(s.node);
  a(s.prologue);
}
template <class A>
void fields(A& a, LoopEnd& s) {
  a(s.loop);
  a.list(s.carry_buffers, [&](std::pair<BufferId, BufferId>& c) {
    a(c.first);
    a(c.second);
  }, 8);
  a.list(s.carry_slots, [&](std::pair<SlotId, SlotId>& c) {
    a(c.first);
    a(c.second);
  }, 8);
  a.list(s.until_zero, [&](SlotId& x) { a(x); }, 4);
  a(s.max_iterations);
  a(s.iterations);
  a(s.node);
  a.list(s.split, [&](SplitDelta& d) {
    a.list(d.columns, [&](BufferId& b) { a(b); }, 4);
    a(d.size);
  }, 12);
  bool resident = s.resident.has_value();
  a(resident);
  if (resident) {
    if (!s.resident) s.resident.emplace();
    ResidentRounds& r = *s.resident;
    a(r.kernel);
    a.list(r.args, [&](KernelArg& arg) { variant_field(a, arg, "kernel argument"); }, 5);
    enum_field(a, r.packing, Packing::I64, "tuple packing");
    a.list(r.full, [&](BufferId& b) { a(b); }, 4);
    a.list(r.delta, [&](BufferId& b) { a(b); }, 4);
    a(r.full_size);
    a(r.delta_size);
    a(r.words);
    a(r.table);
    a(r.control);
    a(r.room);
    a(r.mask);
    a(r.rounds);
    a(r.max_rows);
    a(r.search_full);
    a(r.prologue);
    a(r.control_words);
  }
}
template <class A>
void fields(A& a, Plan& p) {
  a(p.source);
  a.list(p.nvrtc_options, [&](std::string& s) { a(s); }, 8);
  a.list(p.kernels, [&](std::string& s) { a(s); }, 8);
  a(p.num_slots);
  a.check(p.num_slots >= 0, [] { return std::string("a negative number of size slots"); });
  a.list(p.buffers, [&](BufferDecl& b) { fields(a, b); }, 16);
  a.list(p.inputs, [&](PlanRelation& r) { fields(a, r); }, 20);
  a.list(p.outputs, [&](PlanRelation& r) { fields(a, r); }, 20);
  a.list(p.dict_params, [&](DictParam& d) { fields(a, d); }, 17);
  a.list(p.steps, [&](Step& s) { variant_field(a, s, "step"); }, 5);
  a.list(p.node_names, [&](std::string& s) { a(s); }, 8);
}

// A variant as its index and the alternative's fields.
template <class A, class V>
void variant_field(A& a, V& v, const char* what) {
  uint8_t tag = static_cast<uint8_t>(v.index());
  a.u8(tag);
  if constexpr (A::kReading) {
    if (tag >= std::variant_size_v<V>) damaged(a.what(), fmt::format("unknown {} kind {}", what, tag));
    v = variant_at<V>(tag, std::make_index_sequence<std::variant_size_v<V>>{});
  }
  std::visit([&](auto& x) { fields(a, x); }, v);
}

// The package body; the plan travels as its serialized bytes.
template <class A>
void fields(A& a, Package& p, std::string& plan_bytes) {
  a(p.ranc_version);
  a.check(p.ranc_version == RANC_VERSION_STRING, [&] {
    return fmt::format("built by ranc {}, this is ranc {}; rebuild it with `ranc build`",
                       p.ranc_version, RANC_VERSION_STRING);
  });
  a(p.nvrtc_version);
  a(p.program_name);
  a(p.program_text);
  a(plan_bytes);
  a.list(p.cubins, [&](std::pair<int32_t, std::vector<char>>& c) {
    a(c.first);
    a(c.second);
  }, 12);
}

}  // namespace

std::string_view ranc_version() { return RANC_VERSION_STRING; }

std::string serialize_plan(const Plan& plan) {
  Writer w;
  fields(w, const_cast<Plan&>(plan));  // a Writer only reads the fields
  return w.take();
}

Plan deserialize_plan(std::string_view bytes, const std::string& what) {
  Reader r(bytes, what);
  Plan p;
  fields(r, p);
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
  std::string plan_bytes = serialize_plan(pkg.plan);
  fields(body, const_cast<Package&>(pkg), plan_bytes);  // a Writer only reads the fields
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
  std::string plan_bytes;
  fields(r, pkg, plan_bytes);
  pkg.plan = deserialize_plan(plan_bytes, what);
  if (r.remaining() != 0) damaged(what, "unexpected bytes at the end");
  return pkg;
}

void write_package(const std::string& path, const Package& pkg) {
  const std::string bytes = encode_package(pkg);
  AtomicFile f(path);
  if (!f.write(bytes.data(), bytes.size()) || !f.commit())
    damaged(path, "cannot write the package: " + f.error());
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
