// SkeletonCall: the one way generated code instantiates a template skeleton. It writes the
// skeleton's type, its shared-memory declaration and the calls of its entry points, and checks
// each against the template registry (template_registry.h, generated at build time from the
// headers' contracts, templates/include/ranc/templates/contract.cuh): the skeleton and the entry
// exist, every argument sits at a parameter of its kind, every hook the generator writes has the
// parameter types and return type its Hooks declaration has, and the kernel's launch keeps the
// entry's launch rule. A mismatch is an InternalError naming the skeleton, its header and the hook,
// raised while the source is generated, before NVRTC sees it.
//
//   SkeletonCall agent(ctx.templates(), "SelectAgent", {ctx.tile_policy("Select")}, "Agent");
//   std::string body = agent.declare() + agent.temp_storage() +
//       agent.call("run", {"temp", n,
//                          HookArg::lambda("bool", {{"long long", "i"}}, " return f.pred(i); "),
//                          HookArg::lambda("void", {{"long long", "i"}, {"long long", "o"}},
//                                          " f.emit(i, o); "),
//                          tile_state, count});
//   ctx.kernel(id, name, params, body, shape, agent);   // checks the launch rule of run
#pragma once

#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ranc/codegen/template_registry.h"
#include "ranc/data/error.h"

namespace ranc::codegen {

// A tuning-table policy (LoweringContext::tile_policy): its C++ type and shape.
struct TilePolicy {
  std::string type;  // "P::Select"
  int32_t threads = 0, items = 0;
};

// A hook argument as the generator writes it.
struct HookArg {
  enum class Kind { Lambda, Stock, Object };
  Kind kind = Kind::Lambda;
  std::string text;         // Stock: the functor's name; Object: the expression (a variable)
  registry::Signature sig;  // Lambda
  std::vector<std::pair<std::string, std::string>> types;            // Object: member types
  std::vector<std::pair<std::string, registry::Signature>> methods;  // Object: member functions

  // `[&](TYPE NAME, ...) {BODY}`, whose body returns `ret`.
  static HookArg lambda(std::string ret, std::vector<registry::Param> params, std::string body);
  // A stock hook of ranc::tpl, written `ranc::tpl::NAME{}`.
  static HookArg stock(std::string name);
  // An object the kernel body defines (e.g. reduce's `agg`), with its member types and functions.
  static HookArg object(std::string expr, std::vector<std::pair<std::string, std::string>> types,
                        std::vector<std::pair<std::string, registry::Signature>> methods);
  std::string render() const;
  std::string body;  // Lambda
};

// One argument of an entry point call: C++ text, or a hook.
struct CallArg {
  CallArg(std::string t) : text(std::move(t)) {}
  CallArg(const char* t) : text(t) {}
  CallArg(HookArg h) : hook(std::move(h)) {}
  std::string text;
  std::optional<HookArg> hook;
};

class SkeletonCall {
 public:
  // A template argument of the skeleton: a tuning policy or C++ text (a type or a value).
  using TemplateArg = std::variant<TilePolicy, std::string>;

  // With an `alias`, declare() names the skeleton type and later text uses the alias.
  SkeletonCall(const TemplateRegistry& registry, std::string_view skeleton,
               std::vector<TemplateArg> args, std::string alias = {});

  // Binds a type the Hooks leave to the generator (`struct State;`) to C++ text.
  SkeletonCall& bind(std::string_view type_var, std::string type);

  // "ranc::tpl::SelectAgent<P::Select>".
  std::string type() const;
  // "  using Agent = <type>;\n" (for the alias given to the constructor).
  std::string declare() const;
  // "  __shared__ typename Agent::TempStorage temp;\n" (or TempStorageT<bound types>).
  std::string temp_storage(std::string_view var = "temp") const;
  // The same TempStorage as a reference `var` into the kernel's dynamic shared memory, for
  // storage over the 48 KB of static shared memory: the launch must give at least `bytes`
  // (LaunchShape::dynamic_smem), which a static_assert in the kernel checks.
  std::string dynamic_temp_storage(int64_t bytes, std::string_view var = "temp") const;
  // "  Agent::ENTRY<TARGS>(ARGS);\n", checked against the entry's parameters and hooks.
  std::string call(std::string_view entry, const std::vector<CallArg>& args,
                   const std::vector<std::string>& entry_template_args = {});
  // The launch of the kernel that holds the last call() keeps its entry's launch rule
  // (LaunchShape's fields; LoweringContext::kernel passes them).
  void check_launch(int32_t block_threads, int64_t items_per_block, bool skip_if_empty) const;

  const registry::Skeleton& skeleton() const { return *skeleton_; }

 private:
  [[noreturn]] void fail(const std::string& what) const;
  std::string bound(std::string_view registry_type, std::string_view what) const;
  std::string temp_storage_type() const;
  void check_signature(const std::string& hook, const registry::Signature& want,
                       const registry::Signature& got,
                       const std::vector<std::pair<std::string, std::string>>& got_types) const;
  void check_hook(const registry::Entry& entry, const registry::EntryParam& p,
                  const HookArg& h) const;
  int64_t block_threads(const std::string& rule) const;

  const TemplateRegistry* registry_;
  const registry::Skeleton* skeleton_;
  std::vector<TemplateArg> args_;
  std::vector<std::pair<std::string, std::string>> bindings_;  // type variable -> C++ type
  std::string alias_;
  std::string last_entry_;
};

// ---- implementation ----

namespace skeleton_detail {

// `type` with every whole identifier found in `names` replaced by its text.
inline std::string substitute(std::string_view type,
                              const std::vector<std::pair<std::string, std::string>>& names) {
  std::string out;
  for (size_t i = 0; i < type.size();) {
    const auto ident = [&](size_t k) {
      return k < type.size() &&
             (std::isalnum(static_cast<unsigned char>(type[k])) || type[k] == '_');
    };
    if (!ident(i)) {
      out += type[i++];
      continue;
    }
    size_t j = i;
    while (ident(j)) ++j;
    std::string_view word = type.substr(i, j - i);
    bool replaced = false;
    for (const auto& [n, t] : names)
      if (n == word) {
        out += t;
        replaced = true;
        break;
      }
    if (!replaced) out += word;
    i = j;
  }
  return canonical_type(out);
}

// Does `type` name the identifier `name`?
inline bool mentions(std::string_view type, const std::string& name) {
  return substitute(type, {{name, "?"}}) != canonical_type(type);
}

}  // namespace skeleton_detail

inline HookArg HookArg::lambda(std::string ret, std::vector<registry::Param> params,
                               std::string body) {
  HookArg h;
  h.kind = Kind::Lambda;
  h.sig = registry::Signature{std::move(ret), std::move(params)};
  h.body = std::move(body);
  return h;
}
inline HookArg HookArg::stock(std::string name) {
  HookArg h;
  h.kind = Kind::Stock;
  h.text = std::move(name);
  return h;
}
inline HookArg HookArg::object(std::string expr,
                               std::vector<std::pair<std::string, std::string>> types,
                               std::vector<std::pair<std::string, registry::Signature>> methods) {
  HookArg h;
  h.kind = Kind::Object;
  h.text = std::move(expr);
  h.types = std::move(types);
  h.methods = std::move(methods);
  return h;
}
inline std::string HookArg::render() const {
  switch (kind) {
    case Kind::Lambda: {
      std::string ps;
      for (const registry::Param& p : sig.params)
        ps += fmt::format("{}{} {}", ps.empty() ? "" : ", ", p.type, p.name);
      return fmt::format("[&]({}) {{{}}}", ps, body);
    }
    case Kind::Stock:
      return fmt::format("ranc::tpl::{}{{}}", text);
    case Kind::Object:
      return text;
  }
  return {};
}

inline SkeletonCall::SkeletonCall(const TemplateRegistry& registry, std::string_view skeleton,
                                  std::vector<TemplateArg> args, std::string alias)
    : registry_(&registry),
      skeleton_(registry.skeleton(skeleton)),
      args_(std::move(args)),
      alias_(std::move(alias)) {
  if (!skeleton_)
    throw InternalError(fmt::format(
        "codegen: template skeleton {} is not in the template registry (no struct {} with "
        "Hooks in templates/include/ranc/templates)",
        skeleton, skeleton));
  const auto& tps = skeleton_->tparams;
  size_t required = 0;
  for (const auto& p : tps) required += p.has_default ? 0 : 1;
  if (args_.size() < required || args_.size() > tps.size())
    fail(fmt::format("takes {} template arguments{}, the generator gives {}", required,
                     required == tps.size() ? "" : fmt::format(" (up to {})", tps.size()),
                     args_.size()));
  for (size_t k = 0; k < args_.size(); ++k) {
    const bool policy = std::holds_alternative<TilePolicy>(args_[k]);
    if (policy != (tps[k].kind == registry::ParamKind::Policy))
      fail(fmt::format("template parameter {} is a {}, the generator gives {}", tps[k].name,
                       registry::param_kind_name(tps[k].kind),
                       policy ? "a tuning policy" : "'" + std::get<std::string>(args_[k]) + "'"));
    // A value type of the skeleton is bound like a type variable of its Hooks.
    if (tps[k].kind == registry::ParamKind::Type)
      bindings_.emplace_back(tps[k].name, std::get<std::string>(args_[k]));
  }
}

inline void SkeletonCall::fail(const std::string& what) const {
  throw InternalError(
      fmt::format("codegen: template {} ({}): {}", skeleton_->name, skeleton_->header, what));
}

inline SkeletonCall& SkeletonCall::bind(std::string_view type_var, std::string type) {
  bool known = false;
  for (const auto& v : skeleton_->type_vars) known = known || v == type_var;
  for (const auto& v : skeleton_->temp_storage_params) known = known || v == type_var;
  if (!known)
    fail(fmt::format("binds {}, which its Hooks do not leave to the generator", type_var));
  bindings_.emplace_back(std::string(type_var), std::move(type));
  return *this;
}

inline std::string SkeletonCall::type() const {
  std::string a;
  for (const auto& arg : args_)
    a += fmt::format("{}{}", a.empty() ? "" : ", ",
                     std::holds_alternative<TilePolicy>(arg) ? std::get<TilePolicy>(arg).type
                                                             : std::get<std::string>(arg));
  return skeleton_->tparams.empty() ? fmt::format("ranc::tpl::{}", skeleton_->name)
                                    : fmt::format("ranc::tpl::{}<{}>", skeleton_->name, a);
}

inline std::string SkeletonCall::declare() const {
  if (alias_.empty()) fail("declare() without an alias");
  return fmt::format("  using {} = {};\n", alias_, type());
}

// "typename T::TempStorage" or "typename T::template TempStorageT<...>".
inline std::string SkeletonCall::temp_storage_type() const {
  if (skeleton_->temp_storage.empty()) fail("has no TempStorage (it takes no shared memory)");
  const std::string owner = alias_.empty() ? type() : alias_;
  if (skeleton_->temp_storage_params.empty())
    return fmt::format("typename {}::{}", owner, skeleton_->temp_storage);
  std::string a;
  for (const auto& p : skeleton_->temp_storage_params)
    a += fmt::format("{}{}", a.empty() ? "" : ", ", bound(p, skeleton_->temp_storage));
  return fmt::format("typename {}::template {}<{}>", owner, skeleton_->temp_storage, a);
}

inline std::string SkeletonCall::temp_storage(std::string_view var) const {
  return fmt::format("  __shared__ {} {};\n", temp_storage_type(), var);
}

inline std::string SkeletonCall::dynamic_temp_storage(int64_t bytes, std::string_view var) const {
  const std::string type = temp_storage_type();
  return fmt::format(
      "  extern __shared__ __align__(16) unsigned char ranc_dynamic_smem[];\n"
      "  static_assert(sizeof({0}) <= {1}, \"TempStorage larger than the launch's dynamic "
      "shared memory\");\n"
      "  auto& {2} = *reinterpret_cast<{0}*>(ranc_dynamic_smem);\n",
      type, bytes, var);
}

// The registry type with the skeleton's value types and the bound type variables replaced.
inline std::string SkeletonCall::bound(std::string_view registry_type,
                                       std::string_view what) const {
  std::vector<std::string> open = skeleton_->type_vars;
  open.insert(open.end(), skeleton_->temp_storage_params.begin(),
              skeleton_->temp_storage_params.end());
  for (const auto& v : open) {
    bool is_bound = false;
    for (const auto& b : bindings_) is_bound = is_bound || b.first == v;
    if (!is_bound && skeleton_detail::mentions(registry_type, v))
      fail(fmt::format("{} uses the type {}, which the generator did not bind", what, v));
  }
  return skeleton_detail::substitute(registry_type, bindings_);
}

inline void SkeletonCall::check_signature(
    const std::string& hook, const registry::Signature& want, const registry::Signature& got,
    const std::vector<std::pair<std::string, std::string>>& got_types) const {
  std::string want_ps, got_ps;
  bool same = want.params.size() == got.params.size();
  for (size_t k = 0; k < want.params.size(); ++k)
    want_ps +=
        fmt::format("{}{}", k ? ", " : "", bound(want.params[k].type, "hook '" + hook + "'"));
  for (size_t k = 0; k < got.params.size(); ++k) {
    const std::string g = skeleton_detail::substitute(got.params[k].type, got_types);
    got_ps += fmt::format("{}{}", k ? ", " : "", g);
    if (same && g != bound(want.params[k].type, "hook '" + hook + "'")) same = false;
  }
  const std::string want_ret = bound(want.ret, "hook '" + hook + "'");
  const std::string got_ret = skeleton_detail::substitute(got.ret, got_types);
  if (!same || want_ret != got_ret)
    fail(fmt::format("hook '{}': the generator writes {}({}) but the header declares {}({})", hook,
                     got_ret, got_ps, want_ret, want_ps));
}

inline void SkeletonCall::check_hook(const registry::Entry& entry, const registry::EntryParam& p,
                                     const HookArg& h) const {
  const registry::Hook* want = skeleton_->hook(p.name);
  if (!want)
    fail(fmt::format("{} takes hook '{}', which its Hooks do not declare", entry.name, p.name));
  if (h.kind == HookArg::Kind::Object) {
    if (!want->object)
      fail(fmt::format("hook '{}': the generator passes an object, the header declares a function",
                       p.name));
    for (const auto& [tn, tt] : want->types) {
      const std::string* got = nullptr;
      for (const auto& [n, t] : h.types)
        if (n == tn) got = &t;
      if (!got)
        fail(fmt::format("hook '{}': the generator's object has no member type {}", p.name, tn));
      if (canonical_type(*got) != bound(tt, "hook '" + p.name + "'"))
        fail(fmt::format("hook '{}': member type {} is {} but the header wants {}", p.name, tn,
                         *got, bound(tt, "hook '" + p.name + "'")));
    }
    for (const auto& [mn, sig] : want->methods) {
      const registry::Signature* got = nullptr;
      for (const auto& [n, s] : h.methods)
        if (n == mn) got = &s;
      if (!got)
        fail(
            fmt::format("hook '{}': the generator's object has no member function {}", p.name, mn));
      check_signature(p.name + "." + mn, sig, *got, h.types);
    }
    return;
  }
  if (want->object)
    fail(
        fmt::format("hook '{}': the header declares an object (with member functions), the "
                    "generator passes a function",
                    p.name));
  if (h.kind == HookArg::Kind::Stock) {
    const registry::Functor* f = registry_->functor(h.text);
    if (!f)
      fail(fmt::format("hook '{}': ranc::tpl::{} is not a stock hook of the templates", p.name,
                       h.text));
    check_signature(p.name, want->call, f->call, {});
    return;
  }
  check_signature(p.name, want->call, h.sig, {});
}

inline std::string SkeletonCall::call(std::string_view entry_name, const std::vector<CallArg>& args,
                                      const std::vector<std::string>& entry_template_args) {
  const registry::Entry* entry = skeleton_->entry(entry_name);
  if (!entry) {
    std::string names;
    for (const auto& e : skeleton_->entries)
      names += fmt::format("{}{}", names.empty() ? "" : ", ", e.name);
    fail(fmt::format("has no entry point '{}' (its entry points: {})", entry_name, names));
  }
  // Explicit template arguments go to the entry's leading value parameters.
  size_t values = 0;
  while (values < entry->tparams.size() &&
         entry->tparams[values].kind == registry::ParamKind::Value)
    ++values;
  if (entry_template_args.size() > values)
    fail(fmt::format("{} takes {} explicit template arguments, the generator gives {}", entry->name,
                     values, entry_template_args.size()));
  size_t required = 0;
  for (const auto& p : entry->params) required += p.has_default ? 0 : 1;
  if (args.size() < required || args.size() > entry->params.size())
    fail(fmt::format(
        "{} takes {} arguments{}, the generator gives {}", entry->name, required,
        required == entry->params.size() ? "" : fmt::format(" (up to {})", entry->params.size()),
        args.size()));
  std::string text;
  for (size_t k = 0; k < args.size(); ++k) {
    const registry::EntryParam& p = entry->params[k];
    if (p.hook != args[k].hook.has_value())
      fail(fmt::format("{} argument {} ('{}') is {}, the generator gives {}", entry->name, k + 1,
                       p.name, p.hook ? "a hook" : "not a hook",
                       args[k].hook ? "a hook" : "'" + args[k].text + "'"));
    if (args[k].hook) check_hook(*entry, p, *args[k].hook);
    text +=
        fmt::format("{}{}", k ? ", " : "", args[k].hook ? args[k].hook->render() : args[k].text);
  }
  std::string targs;
  for (const auto& t : entry_template_args)
    targs += fmt::format("{}{}", targs.empty() ? "" : ", ", t);
  last_entry_ = entry->name;
  return fmt::format("  {}::{}{}({});\n", alias_.empty() ? type() : alias_, entry->name,
                     targs.empty() ? "" : "<" + targs + ">", text);
}

inline int64_t SkeletonCall::block_threads(const std::string& rule) const {
  if (!rule.empty() && std::isdigit(static_cast<unsigned char>(rule[0]))) return std::stoll(rule);
  const auto& tps = skeleton_->tparams;
  for (size_t k = 0; k < tps.size() && k < args_.size(); ++k) {
    if (tps[k].kind == registry::ParamKind::Policy && rule == tps[k].name + "::block_threads")
      return std::get<TilePolicy>(args_[k]).threads;
    if (tps[k].kind == registry::ParamKind::Value && rule == tps[k].name) {
      const std::string& v = std::get<std::string>(args_[k]);
      if (!v.empty() && std::isdigit(static_cast<unsigned char>(v[0]))) return std::stoll(v);
    }
  }
  fail(fmt::format("cannot evaluate the launch rule's block size '{}'", rule));
}

inline void SkeletonCall::check_launch(int32_t block_threads_, int64_t items_per_block,
                                       bool skip_if_empty) const {
  if (last_entry_.empty()) fail("check_launch before any call of an entry point");
  const registry::Launch& rule = skeleton_->entry(last_entry_)->launch;
  const int64_t threads = block_threads(rule.block_threads);
  if (threads != 0 && threads != block_threads_)
    fail(fmt::format("{} runs with {} threads per block ({}), the launch has {}", last_entry_,
                     threads, rule.block_threads, block_threads_));
  if (rule.grid == "tiles_exact" && skip_if_empty)
    fail(
        fmt::format("{} needs its grid also when {} is 0 (Grid::tiles_exact), but the launch is "
                    "skipped for no items",
                    last_entry_, rule.items));
  if ((rule.grid == "tiles" || rule.grid == "tiles_exact") && items_per_block != 1) {
    int64_t tile = 0;
    for (size_t k = 0; k < skeleton_->tparams.size() && k < args_.size(); ++k)
      if (skeleton_->tparams[k].kind == registry::ParamKind::Policy) {
        const TilePolicy& p = std::get<TilePolicy>(args_[k]);
        tile = static_cast<int64_t>(p.threads) * p.items;
      }
    if (items_per_block != tile)
      fail(fmt::format("{} takes one block per tile of {} items, the launch gives each block {}",
                       last_entry_, tile, items_per_block));
  }
  if ((rule.grid == "partitions" || rule.grid == "one_block") && items_per_block != 1)
    fail(fmt::format("{} takes one block per {} (Grid::{}), the launch gives each block {} items",
                     last_entry_, rule.grid == "one_block" ? "launch" : "partition", rule.grid,
                     items_per_block));
}

}  // namespace ranc::codegen
