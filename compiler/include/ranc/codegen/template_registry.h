// The registry of the CUDA template skeletons: what tools/template_indexer reads from the
// headers under templates/include/ranc/templates (contract.cuh says how a header states it) and
// the code generator checks every instantiation it emits against (skeleton_call.h).
//
// The indexer writes the registry as text (one record per line, fields separated by tabs, the
// format below) into the build tree and into a C++ source compiled into ranc_compiler, so the
// registry is regenerated whenever a header changes and nothing reads the source tree at run time.
// The text form is also what tests load from an indexer run on a modified copy of the headers.
//
//   skeleton  NAME  HEADER                       a skeleton; the records below belong to it
//   tparam    NAME  KIND  [VALUE_TYPE]  [default] a template parameter (policy, type, value)
//   temp      NAME  [PARAM...]                    its shared-memory type (TempStorage or
//   TempStorageT) typevar   NAME                                a type the generator chooses
//   (Hooks' `struct X;`) hook      NAME  RET  [TYPE|NAME...]           a callable hook's signature
//   object    NAME                                an object hook (reduce's agg) ...
//   otype     NAME  MEMBER  TYPE                  ... its member types
//   omethod   NAME  METHOD  RET  [TYPE|NAME...]   ... and member functions
//   entry     NAME  GRID  ITEMS  THREADS          an entry point and its launch rule
//   etparam   ENTRY  NAME  KIND  [VALUE_TYPE]  [default]   its template parameters
//   eparam    ENTRY  NAME  TYPE  FLAGS            its parameters (FLAGS: hook, default, -)
//   functor   NAME  RET  [TYPE|NAME...]           a stock hook in ranc::tpl (NoResidual, ...)
// Types are in canonical_type() form: typedefs resolved (i64 is `long long`), type variables and
// template parameters by name.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ranc::codegen {

// `t` with single spaces between words, a space before `&`, `&&` and `*`, none around `<`, `>`,
// `::` and before `,`: "const State&" and "const  State &" are both "const State &".
inline std::string canonical_type(std::string_view t) {
  std::vector<std::string> toks;
  for (size_t i = 0; i < t.size();) {
    const unsigned char c = static_cast<unsigned char>(t[i]);
    if (std::isspace(c)) {
      ++i;
    } else if (std::isalnum(c) || c == '_') {
      size_t j = i;
      while (j < t.size() && (std::isalnum(static_cast<unsigned char>(t[j])) || t[j] == '_')) ++j;
      toks.emplace_back(t.substr(i, j - i));
      i = j;
    } else if (t.compare(i, 2, "&&") == 0 || t.compare(i, 2, "::") == 0) {
      toks.emplace_back(t.substr(i, 2));
      i += 2;
    } else {
      toks.emplace_back(1, t[i]);
      ++i;
    }
  }
  auto word = [](const std::string& s) {
    return std::isalnum(static_cast<unsigned char>(s[0])) || s[0] == '_';
  };
  std::string out;
  for (size_t k = 0; k < toks.size(); ++k) {
    const std::string& cur = toks[k];
    if (k > 0) {
      const std::string& prev = toks[k - 1];
      const bool ref = cur == "&" || cur == "&&" || cur == "*";
      const bool after_ref = prev == "&" || prev == "&&" || prev == "*";
      if ((word(prev) && word(cur)) || ref || prev == "," || (after_ref && word(cur))) out += ' ';
    }
    out += cur;
  }
  return out;
}

namespace registry {

// A parameter of a hook or member function: canonical type and name (may be empty).
struct Param {
  std::string type, name;
};
struct Signature {
  std::string ret;
  std::vector<Param> params;
};

// A hook of a skeleton's Hooks: callable (call) or an object with member types and functions.
struct Hook {
  std::string name;
  bool object = false;
  Signature call;
  std::vector<std::pair<std::string, std::string>> types;  // object: member type -> type
  std::vector<std::pair<std::string, Signature>> methods;  // object: member functions
  const Signature* method(std::string_view m) const {
    for (const auto& [n, s] : methods)
      if (n == m) return &s;
    return nullptr;
  }
};

enum class ParamKind { Policy, Type, Value, Hook };
inline std::string_view param_kind_name(ParamKind k) {
  switch (k) {
    case ParamKind::Policy:
      return "policy";
    case ParamKind::Type:
      return "type";
    case ParamKind::Value:
      return "value";
    case ParamKind::Hook:
      return "hook";
  }
  return "?";
}

struct TemplateParam {
  std::string name;
  ParamKind kind = ParamKind::Type;
  std::string value_type;  // Value: its C++ type
  bool has_default = false;
};

struct EntryParam {
  std::string name, type;  // for a hook, type is the template parameter's name
  bool hook = false;
  bool has_default = false;
};

// LaunchRule of contract.cuh: the grid kind (Grid's enumerator), the parameters counting the
// items, the block size (a number, 0 = any, "Policy::block_threads" or a value parameter).
struct Launch {
  std::string grid, items, block_threads;
};

struct Entry {
  std::string name;
  std::vector<TemplateParam> tparams;
  std::vector<EntryParam> params;
  Launch launch;
};

struct Skeleton {
  std::string name, header;
  std::vector<TemplateParam> tparams;
  std::string temp_storage;                      // empty: none
  std::vector<std::string> temp_storage_params;  // TempStorageT's template parameters
  std::vector<std::string> type_vars;
  std::vector<Hook> hooks;
  std::vector<Entry> entries;

  const Hook* hook(std::string_view n) const {
    for (const Hook& h : hooks)
      if (h.name == n) return &h;
    return nullptr;
  }
  const Entry* entry(std::string_view n) const {
    for (const Entry& e : entries)
      if (e.name == n) return &e;
    return nullptr;
  }
};

// A stock hook of ranc::tpl (a struct with one call operator: AlwaysTrue, NoResidual, ...).
struct Functor {
  std::string name;
  Signature call;
};

}  // namespace registry

class TemplateRegistry {
 public:
  // Throws InternalError on malformed text (it is generated, so that is a bug).
  static TemplateRegistry parse(std::string_view text);
  // The registry generated at build time from the embedded templates.
  static const TemplateRegistry& built_in();

  const registry::Skeleton* skeleton(std::string_view name) const {
    for (const auto& s : skeletons_)
      if (s.name == name) return &s;
    return nullptr;
  }
  const registry::Functor* functor(std::string_view name) const {
    for (const auto& f : functors_)
      if (f.name == name) return &f;
    return nullptr;
  }
  const std::vector<registry::Skeleton>& skeletons() const { return skeletons_; }
  const std::vector<registry::Functor>& functors() const { return functors_; }

 private:
  std::vector<registry::Skeleton> skeletons_;
  std::vector<registry::Functor> functors_;
};

// The registry text generated at build time (template_registry.gen.cpp in the build tree).
std::string_view builtin_template_registry_text();

}  // namespace ranc::codegen
