// ranc::Session (see ranc/session.h).
#include "ranc/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include "ranc/frontend/ra_parser.h"
#include "ranc/io/columnar.h"
#include "ranc/passes/pass_runner.h"
#include "ranc/passes/prune_attributes.h"
#include "ranc/ra_ops/ra_ops.h"
#include "ranc/runtime/catalog.h"
#include "ranc/runtime/device.h"
#include "ranc/runtime/errors.h"

namespace ranc {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Relation {
  Schema schema;  // every attribute the relation has (declared or added)
  std::string path;
  CsvOptions options;
  std::vector<std::string> loaded;  // attribute names resident, in schema order
  int64_t rows = -1;
  HostRelation host;  // the CPU reference's copy (loaded attributes)
  // recorded_ascending() of its file (SessionOptions::recorded_order), and those of them whose
  // column the reader checked as it loaded it (CsvOptions::ascending).
  std::vector<std::string> ascending;
  std::set<std::string> confirmed;
};

// A program text's compiled form.
struct Compiled {
  std::vector<RaInputSpec> inputs;  // `from` clauses
  std::map<std::string, Schema> declared;  // input -> declared (file) schema
  Program program;                  // checked and pruned
  std::optional<rt::Plan> plan;     // GPU
  // Relation -> the attribute it is planned as sorted by, from its file's recorded order.
  std::map<std::string, std::string> recorded;
};

[[noreturn]] void unknown(const std::string& name, const std::string& hint = {}) {
  throw UserError(Diagnostic{ErrorKind::UnknownRelation,
                             fmt::format("no relation '{}' in the session", name), SourceLoc{},
                             hint});
}

}  // namespace

std::vector<std::string> recorded_ascending(const std::string& path, const Schema& schema) {
  std::vector<std::string> up;
  if (!is_columnar_file(path)) return up;
  ColumnarInfo info;
  try {
    info = read_columnar_info(path, /*dictionaries=*/false);
  } catch (const UserError&) {
    return up;  // a damaged file: its load reports it
  }
  if (info.rows < kArrivalOrderRows) return up;
  for (const Attribute& a : schema.attributes) {
    const std::optional<size_t> c = info.schema.find(a.name);
    if (c && info.sections[*c].ascending && info.schema[*c].type == a.type && !a.nullable)
      up.push_back(a.name);
  }
  return up;
}

std::map<std::string, std::string> take_orders(Program& program,
                                               const std::map<std::string, std::string>& order) {
  std::map<std::string, std::string> taken;
  for (NodeId id : program.inputs()) {
    Node& n = program.mutable_node(id);
    auto it = order.find(n.name);
    if (it == order.end() || !n.sort_keys.empty()) continue;
    n.sort_keys = {SortKey{it->second, false, n.loc}};
    n.order_trusted = true;
    taken.insert(*it);
  }
  return taken;
}

CsvOptions input_csv_options(const RaInputSpec& spec, const std::string& path) {
  std::optional<TextFormat> f = format_from_path(path);
  if (!spec.format.empty()) f = spec.format == "tbl" ? TextFormat::Tbl : TextFormat::Csv;
  CsvOptions o = options_for(f.value_or(TextFormat::Csv));
  if (spec.format == "csv") {
    o.delimiter = spec.delimiter;
    o.header = spec.header;
  }
  o.null_marker = spec.null_marker;
  return o;
}

struct Session::Impl {
  SessionOptions opts;
  bool gpu = false;
  std::unique_ptr<rt::Catalog> catalog;
  std::unique_ptr<rt::Executor> exec;
  std::map<std::string, Relation> rels;
  std::map<std::string, Compiled, std::less<>> plans;  // by program text

  Relation& find(const std::string& name) {
    auto it = rels.find(name);
    if (it == rels.end()) unknown(name);
    return it->second;
  }

  // Makes every attribute of `want` resident in relation `name`, reading the missing
  // ones from its file. Returns the seconds spent reading.
  double ensure(const std::string& name, const Schema& want, const SourceLoc& loc) {
    auto it = rels.find(name);
    if (it == rels.end())
      throw UserError(Diagnostic{ErrorKind::UnknownRelation,
                                 fmt::format("no relation '{}' in the session", name), loc,
                                 "declare it with `from \"file\"`, .load it, or add it"});
    Relation& r = it->second;
    std::vector<std::string> missing;
    for (const Attribute& a : want.attributes) {
      auto i = r.schema.find(a.name);
      if (!i || r.schema[*i].type != a.type)
        throw UserError(Diagnostic{
            ErrorKind::SchemaMismatch,
            fmt::format("the program declares {} {} but relation '{}' of the session is {}",
                        a.name, type_name(a.type), name, r.schema.str()),
            loc, "declare the attributes as the session's relation has them"});
      if (std::find(r.loaded.begin(), r.loaded.end(), a.name) == r.loaded.end())
        missing.push_back(a.name);
    }
    if (missing.empty()) return 0;
    auto t0 = Clock::now();
    CsvOptions o = r.options;
    o.ascending = [&r](const std::string& attr) { r.confirmed.insert(attr); };
    o.columns.clear();
    for (const Attribute& a : r.schema.attributes)
      if (std::find(r.loaded.begin(), r.loaded.end(), a.name) != r.loaded.end() ||
          std::find(missing.begin(), missing.end(), a.name) != missing.end())
        o.columns.push_back(a.name);
    HostRelation h = read_input(r.path, r.schema, o);
    double s = seconds_since(t0);
    r.rows = static_cast<int64_t>(h.num_rows());
    r.loaded = o.columns;
    if (gpu) {
      catalog->add(name, h);
    } else {
      r.host = std::move(h);
    }
    return s;
  }

  void declare(const std::string& name, const std::string& path, const Schema& schema,
               CsvOptions options) {
    // The same file with the same attributes again: keep what is loaded.
    if (auto it = rels.find(name); it != rels.end() && it->second.path == path &&
                                   it->second.schema.attributes == schema.attributes &&
                                   it->second.options.delimiter == options.delimiter &&
                                   it->second.options.header == options.header &&
                                   it->second.options.null_marker == options.null_marker)
      return;
    if (gpu && catalog->contains(name)) catalog->drop(name);
    Relation r;
    r.schema = schema;
    r.path = path;
    r.options = std::move(options);
    if (opts.recorded_order) r.ascending = recorded_ascending(path, schema);
    rels[name] = std::move(r);
  }

  // The `from` clauses of a program declare relations the session does not know yet.
  void declare_from(const Compiled& c) {
    for (const RaInputSpec& s : c.inputs) {
      if (s.path.empty() || rels.count(s.relation)) continue;
      std::string path = resolve(s.path);
      declare(s.relation, path, c.declared.at(s.relation), input_csv_options(s, path));
    }
  }

  // Whether a compiled program's recorded orders are still the relations' (a relation
  // declared again from another file may record another order, or none).
  bool current(const Compiled& c) const {
    for (const auto& [name, attr] : c.recorded) {
      auto it = rels.find(name);
      if (it == rels.end() || std::find(it->second.ascending.begin(), it->second.ascending.end(),
                                        attr) == it->second.ascending.end())
        return false;
    }
    return true;
  }

  // A checked program's pruned form and plan; `inputs` are its `from` clauses.
  // An input of a relation whose file records the order of its rows (Relation::ascending),
  // not declared `sorted by`, is planned as sorted by the first such attribute the program
  // uses (as `ranc run` plans it); the reader checks that order as it loads the column.
  Compiled compile(const Program& checked, std::vector<RaInputSpec> inputs = {}) {
    Compiled c;
    c.inputs = std::move(inputs);
    for (NodeId id : checked.inputs()) c.declared[checked.node(id).name] = checked.node(id).declared;
    auto prune = [&](const Program& p) {
      return passes::pass_enabled("prune_attributes", opts.codegen) ? passes::prune_attributes(p)
                                                                    : p;
    };
    c.program = prune(checked);
    declare_from(c);
    std::map<std::string, std::string> order;  // the reader checks it; run() confirms it did
    for (NodeId id : c.program.inputs()) {
      const Node& kept = c.program.node(id);
      auto rel = rels.find(kept.name);
      if (rel == rels.end()) continue;
      const auto& up = rel->second.ascending;
      for (const Attribute& a : kept.declared.attributes)
        if (!a.nullable && std::find(up.begin(), up.end(), a.name) != up.end()) {
          order[kept.name] = a.name;
          break;
        }
    }
    Program ordered = checked;
    c.recorded = take_orders(ordered, order);
    if (!c.recorded.empty()) c.program = prune(check(ordered));
    if (gpu) c.plan = codegen::generate_plan(c.program, opts.codegen);
    return c;
  }

  // Against data_dir; a missing file's .rcol (lineitem.tbl -> lineitem.rcol) when
  // that exists.
  std::string resolve(const std::string& path) const {
    std::filesystem::path p(path);
    if (p.is_absolute() || opts.data_dir.empty()) return prefer_columnar(p.string());
    return prefer_columnar((std::filesystem::path(opts.data_dir) / p).string());
  }

  SessionResult run(const Compiled& c) {
    SessionResult res;
    declare_from(c);
    for (NodeId id : c.program.inputs()) {
      const Node& n = c.program.node(id);
      res.load_seconds += ensure(n.name, n.declared, n.loc);
    }
    // The plan trusts the recorded orders: the reader must have checked each such column (a
    // file replaced after its declaration may no longer record it).
    for (const auto& [name, attr] : c.recorded) {
      const Relation& r = rels.at(name);
      if (!r.confirmed.count(attr))
        throw UserError(Diagnostic{
            ErrorKind::Data,
            fmt::format("the file changed while the session used it: it recorded its rows "
                        "ascending by {} when the program was planned, and no longer does",
                        attr),
            SourceLoc{r.path, 0, 0}, "declare the relation again"});
      res.recorded_orders += fmt::format("{}{} by {}", res.recorded_orders.empty() ? "" : ", ",
                                         name, attr);
    }
    if (gpu) {
      rt::RunResult r = exec->run_bound(*c.plan, catalog->bindings());
      res.outputs = std::move(r.outputs);
      res.stats = r.stats;
      res.execute_seconds = r.stats.execute_seconds;
      return res;
    }
    std::vector<std::pair<std::string, HostRelation>> inputs;
    for (NodeId id : c.program.inputs()) {
      const Node& n = c.program.node(id);
      inputs.emplace_back(n.name, rels.at(n.name).host);
    }
    auto t0 = Clock::now();
    auto outs = execute_reference(c.program, inputs);
    res.execute_seconds = seconds_since(t0);
    auto names = c.program.outputs();
    for (size_t i = 0; i < outs.size(); ++i)
      res.outputs.emplace_back(c.program.node(names[i]).name, std::move(outs[i]));
    return res;
  }
};

Session::Session(SessionOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.opts = std::move(options);
  s.gpu = s.opts.gpu.value_or(rt::gpu_available());
  if (s.gpu) {
    if (!rt::gpu_available())
      throw rt::NoGpuError(fmt::format("no GPU for the session: {}", rt::no_gpu_reason()));
    s.catalog = std::make_unique<rt::Catalog>(s.opts.device);
    rt::ExecutorOptions eo;
    eo.device = s.opts.device;
    eo.memory_limit = s.opts.memory_limit;
    s.exec = std::make_unique<rt::Executor>(eo);
  }
}

Session::~Session() = default;

bool Session::on_gpu() const {
  return impl_->gpu;
}

std::string Session::device_name() {
  return impl_->gpu ? impl_->exec->device().name : "CPU reference";
}

void Session::add(const std::string& name, HostRelation rel) {
  Impl& s = *impl_;
  Relation r;
  r.schema = rel.schema();
  for (const auto& a : r.schema.attributes) r.loaded.push_back(a.name);
  r.rows = static_cast<int64_t>(rel.num_rows());
  if (s.gpu)
    s.catalog->add(name, rel);
  else
    r.host = std::move(rel);
  s.rels[name] = std::move(r);
}

void Session::declare(const std::string& name, const std::string& path, const Schema& schema,
                      std::optional<CsvOptions> options) {
  std::string p = impl_->resolve(path);
  impl_->declare(name, p,
                 schema, options ? *options : options_for(format_from_path(p).value_or(TextFormat::Csv)));
}

void Session::drop(const std::string& name) {
  Impl& s = *impl_;
  s.find(name);
  if (s.gpu && s.catalog->contains(name)) s.catalog->drop(name);
  s.rels.erase(name);
}

std::vector<SessionRelation> Session::relations() const {
  const Impl& s = *impl_;
  std::vector<SessionRelation> out;
  for (const auto& [n, r] : s.rels) {
    SessionRelation x{n, r.schema, r.path, r.loaded, r.rows, 0, r.ascending};
    if (s.gpu && s.catalog->contains(n)) x.device_bytes = s.catalog->bytes(n);
    out.push_back(std::move(x));
  }
  return out;
}

int64_t Session::device_bytes_in_use() const {
  const Impl& s = *impl_;
  if (!s.gpu) return 0;
  return s.catalog->bytes_in_use() + s.exec->memory_stats().bytes_in_use;
}

SessionResult Session::run(std::string_view ra_text, const std::string& file_name) {
  Impl& s = *impl_;
  auto it = s.plans.find(ra_text);
  if (it != s.plans.end() && !s.current(it->second)) {
    s.plans.erase(it);  // planned by an order a relation's file no longer records
    it = s.plans.end();
  }
  bool cached = it != s.plans.end();
  double plan_s = 0;
  if (!cached) {
    auto t0 = Clock::now();
    ParsedProgram parsed = parse_ra(ra_text, file_name);
    Compiled c = s.compile(check(parsed.program), std::move(parsed.input_files));
    plan_s = seconds_since(t0);
    it = s.plans.emplace(std::string(ra_text), std::move(c)).first;
  }
  SessionResult r = s.run(it->second);
  r.plan_cached = cached;
  r.plan_seconds = plan_s;
  return r;
}

SessionResult Session::run(const Program& checked) {
  Impl& s = *impl_;
  auto t0 = Clock::now();
  Compiled c = s.compile(checked);
  double plan_s = seconds_since(t0);
  SessionResult r = s.run(c);
  r.plan_seconds = plan_s;
  return r;
}

}  // namespace ranc
