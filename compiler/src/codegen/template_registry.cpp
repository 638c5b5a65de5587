// Reading the template registry text that tools/template_indexer writes (format in
// ranc/codegen/template_registry.h).
#include "ranc/codegen/template_registry.h"

#include <fmt/format.h>

#include "ranc/data/error.h"

namespace ranc::codegen {
namespace {

using namespace registry;

std::vector<std::string> split_tabs(std::string_view line) {
  std::vector<std::string> f;
  size_t start = 0;
  for (;;) {
    size_t tab = line.find('\t', start);
    f.emplace_back(line.substr(start, tab == std::string_view::npos ? line.npos : tab - start));
    if (tab == std::string_view::npos) return f;
    start = tab + 1;
  }
}

struct Parser {
  size_t line_no = 0;
  std::string line;

  [[noreturn]] void fail(const std::string& why) const {
    throw InternalError(fmt::format("template registry, line {}: {} ('{}')", line_no, why, line));
  }
  void need(const std::vector<std::string>& f, size_t n) const {
    if (f.size() < n) fail(fmt::format("expected at least {} fields", n));
  }
  // RET [TYPE|NAME...] from field `first` on.
  Signature signature(const std::vector<std::string>& f, size_t first) const {
    need(f, first + 1);
    Signature s;
    s.ret = f[first];
    for (size_t k = first + 1; k < f.size(); ++k) {
      size_t bar = f[k].rfind('|');
      if (bar == std::string::npos) fail("a parameter is TYPE|NAME");
      s.params.push_back(Param{f[k].substr(0, bar), f[k].substr(bar + 1)});
    }
    return s;
  }
  TemplateParam tparam(const std::vector<std::string>& f, size_t first) const {
    need(f, first + 2);
    TemplateParam p;
    p.name = f[first];
    const std::string& k = f[first + 1];
    p.kind = k == "policy"  ? ParamKind::Policy
             : k == "type"  ? ParamKind::Type
             : k == "value" ? ParamKind::Value
             : k == "hook"  ? ParamKind::Hook
                            : (fail("unknown template parameter kind " + k), ParamKind::Type);
    if (f.size() > first + 2) p.value_type = f[first + 2];
    p.has_default = f.size() > first + 3 && f[first + 3] == "default";
    return p;
  }
};

}  // namespace

TemplateRegistry TemplateRegistry::parse(std::string_view text) {
  TemplateRegistry r;
  Parser ps;
  Skeleton* sk = nullptr;
  auto skeleton = [&]() -> Skeleton& {
    if (!sk) ps.fail("a record before the first skeleton");
    return *sk;
  };
  auto object = [&](const std::string& name) -> Hook& {
    for (Hook& h : skeleton().hooks)
      if (h.name == name && h.object) return h;
    ps.fail("member of an undeclared object hook " + name);
  };
  auto entry = [&](const std::string& name) -> Entry& {
    for (Entry& e : skeleton().entries)
      if (e.name == name) return e;
    ps.fail("record of an undeclared entry " + name);
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    ps.line = std::string(text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos));
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++ps.line_no;
    if (ps.line.empty() || ps.line[0] == '#') continue;
    const std::vector<std::string> f = split_tabs(ps.line);
    const std::string& kind = f[0];
    if (kind == "skeleton") {
      ps.need(f, 3);
      r.skeletons_.push_back(Skeleton{f[1], f[2], {}, {}, {}, {}, {}, {}});
      sk = &r.skeletons_.back();
    } else if (kind == "tparam") {
      skeleton().tparams.push_back(ps.tparam(f, 1));
    } else if (kind == "temp") {
      ps.need(f, 2);
      skeleton().temp_storage = f[1];
      skeleton().temp_storage_params.assign(f.begin() + 2, f.end());
    } else if (kind == "typevar") {
      ps.need(f, 2);
      skeleton().type_vars.push_back(f[1]);
    } else if (kind == "hook") {
      ps.need(f, 3);
      Hook h;
      h.name = f[1];
      h.call = ps.signature(f, 2);
      skeleton().hooks.push_back(std::move(h));
    } else if (kind == "object") {
      ps.need(f, 2);
      Hook h;
      h.name = f[1];
      h.object = true;
      skeleton().hooks.push_back(std::move(h));
    } else if (kind == "otype") {
      ps.need(f, 4);
      object(f[1]).types.emplace_back(f[2], f[3]);
    } else if (kind == "omethod") {
      ps.need(f, 4);
      object(f[1]).methods.emplace_back(f[2], ps.signature(f, 3));
    } else if (kind == "entry") {
      ps.need(f, 5);
      Entry e;
      e.name = f[1];
      e.launch = Launch{f[2], f[3], f[4]};
      skeleton().entries.push_back(std::move(e));
    } else if (kind == "etparam") {
      ps.need(f, 2);
      entry(f[1]).tparams.push_back(ps.tparam(f, 2));
    } else if (kind == "eparam") {
      ps.need(f, 5);
      EntryParam p;
      p.name = f[2];
      p.type = f[3];
      p.hook = f[4].find("hook") != std::string::npos;
      p.has_default = f[4].find("default") != std::string::npos;
      entry(f[1]).params.push_back(std::move(p));
    } else if (kind == "functor") {
      ps.need(f, 3);
      r.functors_.push_back(Functor{f[1], ps.signature(f, 2)});
    } else {
      ps.fail("unknown record " + kind);
    }
  }
  return r;
}

const TemplateRegistry& TemplateRegistry::built_in() {
  static const TemplateRegistry r = parse(builtin_template_registry_text());
  return r;
}

}  // namespace ranc::codegen
