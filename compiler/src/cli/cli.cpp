// The ranc command line: argument parsing, the subcommands, and turning every
// error kind into a message on stderr and an exit code (see cli.h).
#include "cli.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "ranc/codegen/codegen.h"
#include "ranc/frontend/ra_parser.h"
#include "ranc/io/columnar.h"
#include "ranc/io/csv.h"
#include "ranc/passes/pass_runner.h"
#include "ranc/runtime/plan_validate.h"
#include "ranc/ra_ops/ra_ops.h"
#include "ranc/runtime/device.h"
#include "ranc/runtime/errors.h"
#include "ranc/runtime/executor.h"
#include "ranc/runtime/jit.h"
#include "ranc/runtime/package.h"
#include "ranc/session.h"

namespace ranc::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;


struct Args {
  std::string command;
  std::string program;
  std::map<std::string, std::string> inputs;   // --input
  std::map<std::string, std::string> outputs;  // --output
  std::string data_dir;
  std::string out_file;  // emit -o, import -o
  bool cpu = false, gpu = false, time = false, dot = false, no_fusion = false, no_paged = false,
       fast_compile = false, observe_order = false, no_recorded_order = false;
  std::string after;  // explain --after=PASS
  size_t max_rows = 50;
  unsigned threads = 0;           // run/import --threads (0: hardware)
  int64_t memory_limit = 0;       // run/shell --memory-limit (0: the device's)
  std::vector<std::string> only;  // import --only
  std::vector<int> archs;         // build --arch
  codegen::JoinAlgorithm join = codegen::JoinAlgorithm::Auto;
  codegen::GroupBy group_by = codegen::GroupBy::Auto;
};

struct UsageError {
  std::string message;
};
// --help (or help for a command): the text to print on stdout.
struct HelpRequest {
  std::string text;
};

constexpr const char* kExitCodes =
    "exit codes: 0 success, 1 errors in the program, 2 bad usage, 3 bad input data,\n"
    "            4 execution failed (no GPU, JIT/CUDA error, out of memory, run-time\n"
    "            error), 70 internal error in ranc\n";

// The command line, defined once with CLI11: the parser and every --help come from
// these definitions.
class CommandLine {
 public:
  explicit CommandLine(Args& a) : a_(a), app_("ranc: a relational algebra compiler for GPUs", "ranc") {
    auto f = std::make_shared<CLI::Formatter>();
    f->label("Usage", "usage");
    f->label("OPTIONS", "options");
    f->label("SUBCOMMAND", "command");
    f->label("SUBCOMMANDS", "commands");
    f->label("POSITIONALS", "arguments");
    f->label("Positionals", "arguments");
    f->label("Options", "options");
    f->label("Subcommands", "commands");
    f->column_width(26);
    app_.formatter(f);
    app_.option_defaults()->group("options");
    app_.set_help_flag("-h,--help", "print this help and exit");
    app_.require_subcommand(1);
    app_.set_version_flag("--version", fmt::format("ranc {}", rt::ranc_version()),
                          "print the version and exit");
    app_.footer(std::string("Run 'ranc <command> --help' for a command's options.\n\n") + kExitCodes);
    app_.description("ranc: a relational algebra compiler for GPUs");

    CLI::App* check = command("check", "parse and type-check a program",
                              "Prints the outputs' schemas on success, or every error with "
                              "file:line:column and the offending line.");
    program(check);

    CLI::App* explain = command(
        "explain", "show the checked graph and the physical plan (--dot for Graphviz)",
        "Prints the checked graph (one line per operator with its schema and order), the "
        "physical plan (orders, join algorithms, which operators are fused into which kernel, "
        "which outputs are paged lists or sorted words), the kernels with the operators each contains, and the "
        "steps: kernels, built-in device steps, buffers and size slots.");
    program(explain);
    explain->add_flag("--dot", a_.dot,
                      "print the physical plan as a Graphviz digraph, one cluster per kernel; "
                      "fused edges dashed, paged and sorted-word edges bold");
    std::string names;
    for (const auto& p : passes::pipeline_passes())
      names += fmt::format("{}{}", names.empty() ? "" : ", ", p.name);
    explain
        ->add_option("--after", a_.after, "print only the plan after PASS: " + names)
        ->type_name("PASS")
        ->check(CLI::Validator(
            [names](std::string& v) -> std::string {
              for (const auto& p : passes::pipeline_passes())
                if (p.name == v) return {};
              return fmt::format("expects one of {}, got '{}'", names, v);
            },
            ""));
    plan_options(explain);
    inputs(explain);
    data_dir(explain,
             "resolve relative input paths against DIR (default: the program file's folder): "
             "an input read from a columnar file that records the order of its rows is planned "
             "as `ranc run` plans it");
    no_recorded_order(explain);

    CLI::App* emit = command("emit", "print the generated CUDA source (-o FILE to write it)",
                             "Prints the CUDA translation unit generated for PROGRAM.ra.");
    program(emit);
    emit->add_option("-o", a_.out_file, "write the source to OUT.cu instead")->type_name("OUT.cu");
    plan_options(emit);

    CLI::App* run = command(
        "run",
        "run a program on the GPU (default when one is present) or the CPU reference (--cpu) "
        "and print or write its outputs",
        "Runs PROGRAM.ra and prints each output as an aligned table. Without --cpu or --gpu, "
        "ranc uses the GPU when one is present and otherwise says so on stderr and runs on the "
        "CPU reference. The plan is compiled, and the GPU set up, while the inputs load. "
        "PROGRAM may also be a package written by `ranc build` (PROGRAM.rancpkg): it runs "
        "with the package's compiled code and no NVRTC compile.");
    program(run, "the program (.ra), or a package (.rancpkg) written by `ranc build`");
    inputs(run);
    data_dir(run,
             "resolve relative input paths against DIR (default: the program file's folder); "
             "where a `from` file is missing but the same name with .rcol exists "
             "(lineitem.tbl -> lineitem.rcol), the .rcol file is read");
    run->add_option("--output", outputs_,
                    "write output NAME to PATH (.csv or .tbl) instead of printing it")
        ->type_name("NAME=PATH")
        ->check(assignment("--output"));
    device(run);
    run->add_flag("--time", a_.time,
                  "print load, compile, upload, execution and transfer times (stderr)");
    max_rows(run);
    threads(run);
    plan_options(run);
    run->add_flag("--observe-order", a_.observe_order,
                  "plan an input whose rows arrive sorted by an integer or date attribute (2^16 rows "
                  "or more, not declared `sorted by`) as if declared `sorted by` it: sorts become "
                  "unnecessary and joins of two such inputs merge (the plan waits for the load; "
                  "the CLI compares every row, so the GPU does not check the order again)");
    no_recorded_order(run);

    CLI::App* shell = command(
        "shell",
        "an interactive session: relations stay loaded (on the GPU) across queries; reads a "
        "script from standard input when it is not a terminal",
        "Relations declared with `input NAME(a i32, ...) from \"FILE\" [format tbl];` (FILE: "
        ".csv, .tbl or a `ranc import` .rcol) stay loaded across queries; each is read when a "
        "query first uses it, and only the attributes queries use. Statements end with ';': "
        "input declarations, `NAME = ... ;` and `output NAME;`. Commands: .help, .tables, "
        ".drop NAME, .timer on|off, .memory, .read FILE (or \\i FILE), .quit (or \\q). With "
        "SCRIPT.ra, or when standard input is not a terminal, statements are read from there "
        "without prompts; the exit code is that of the first error (0 when none). Line "
        "editing and history (~/.ranc_history) use the system's readline library when it is "
        "installed.");
    shell->add_option("SCRIPT", a_.program, "read the statements from SCRIPT.ra")
        ->type_name("SCRIPT.ra");
    data_dir(shell, "resolve relative `from` paths against DIR");
    device(shell);
    shell->add_flag("--time", a_.time, "print plan, load, upload, compile and execute times");
    no_recorded_order(shell);
    max_rows(shell);
    plan_options(shell);

    CLI::App* import = command(
        "import",
        "read a program's inputs once and write them as columnar .rcol files, which later "
        "runs read at disk speed",
        "Reads every input relation PROGRAM.ra declares, with all its declared attributes, and "
        "writes each to OUTDIR/NAME.rcol, a columnar file (docs/columnar-format.md) that `ranc "
        "run`, `ranc shell` and `input ... from \"NAME.rcol\"` read without parsing: only the "
        "columns a program uses, checked against their checksums. Prints one line per "
        "relation. A file is written to a temporary name and renamed when complete. Point "
        "--data at OUTDIR afterwards: where a `from` file is missing, its .rcol is read.");
    program(import);
    import->add_option("-o", a_.out_file, "the folder to write to (created when missing)")
        ->type_name("OUTDIR")
        ->required();
    data_dir(import, "resolve relative input paths against DIR (default: the program file's "
                     "folder)");
    inputs(import);
    import->add_option("--only", a_.only, "import only these input relations")
        ->type_name("NAME,...")
        ->delimiter(',');
    threads(import);
    import->add_flag("--time", a_.time, "print the total read and write times (stderr)");

    CLI::App* build = command(
        "build", "compile a program ahead of time into a package that runs without NVRTC",
        "Makes the plan `ranc run` would make for PROGRAM.ra, compiles it to CUBIN for each "
        "architecture and writes a package holding the plan, the CUBINs and the program text. "
        "`ranc run OUT.rancpkg` (and the embedding API: rt::read_package, "
        "rt::install_package_cubin, Executor::run) runs it with no NVRTC compile; without a "
        "GPU it runs the program on the CPU reference. A package from another ranc version, "
        "without code for the GPU's architecture, or damaged is an error.");
    program(build);
    build->add_option("-o", a_.out_file, "the package to write")->type_name("OUT.rancpkg")->required();
    build->add_option("--arch", a_.archs,
                      "GPU architectures to compile for, e.g. 90,80 (default: this machine's "
                      "GPU, else RANC_CUDA_ARCH, else 90)")
        ->type_name("SM,...")
        ->delimiter(',')
        ->check(CLI::Range(50, 200));
    build->add_flag("--time", a_.time, "print the compile time (stderr)");
    plan_options(build);
  }

  // Parses argv (without the program name) into the Args. Throws HelpRequest or
  // UsageError.
  void parse(const std::vector<std::string>& argv) {
    if (!argv.empty() && !argv[0].empty() && argv[0][0] != '-') {
      bool known = false;
      for (const CLI::App* c : app_.get_subcommands({})) known = known || c->get_name() == argv[0];
      if (!known)
        throw UsageError{fmt::format(
            "unknown command '{}' (commands: check, explain, emit, run, shell, import, build)",
            argv[0])};
    }
    std::vector<std::string> rev(argv.rbegin(), argv.rend());
    try {
      app_.parse(rev);
    } catch (const CLI::CallForHelp&) {
      throw HelpRequest{help_text()};
    } catch (const CLI::CallForAllHelp&) {
      throw HelpRequest{help_text()};
    } catch (const CLI::CallForVersion&) {
      throw HelpRequest{fmt::format("ranc {}\n", rt::ranc_version())};
    } catch (const CLI::ParseError& e) {
      throw UsageError{e.what()};
    }
    for (CLI::App* sub : app_.get_subcommands()) {
      a_.command = sub->get_name();
      // Arguments no definition took (subcommands allow extras so that ranc, not a
      // parser message, says which kind each is).
      for (const std::string& arg : sub->remaining())
        throw UsageError{!arg.empty() && arg[0] == '-'
                             ? fmt::format("unknown option '{}'", arg)
                             : fmt::format("unexpected argument '{}' (one program at a time)", arg)};
    }
    for (const auto& [list, dst, flag] :
         {std::tuple{&inputs_, &a_.inputs, "--input"}, std::tuple{&outputs_, &a_.outputs, "--output"}})
      for (const std::string& v : *list) {
        const size_t eq = v.find('=');
        if (!dst->emplace(v.substr(0, eq), v.substr(eq + 1)).second)
          throw UsageError{fmt::format("{} {} given twice", flag, v.substr(0, eq))};
      }
  }

  // The help of the command given (or of ranc when none).
  std::string help_text() const {
    for (const CLI::App* sub : app_.get_subcommands()) return sub->help("ranc");
    return app_.help();
  }

 private:
  CLI::App* command(const char* name, const std::string& summary, const std::string& details) {
    CLI::App* c = app_.add_subcommand(name, summary);
    c->group("commands");
    if (CLI::Option* h = c->get_help_ptr()) h->group("options");
    c->footer(wrap(details));
    c->fallthrough(false);
    c->allow_extras();
    return c;
  }
  void program(CLI::App* c, const char* what = "the program (.ra)") {
    c->add_option("PROGRAM", a_.program, what)->type_name("PROGRAM.ra")->required();
  }
  void data_dir(CLI::App* c, const std::string& what) {
    c->add_option("--data", a_.data_dir, what)->type_name("DIR");
  }
  void no_recorded_order(CLI::App* c) {
    c->add_flag("--no-recorded-order", a_.no_recorded_order,
                "ignore the order a columnar input file records (`ranc import` marks each "
                "integer or date attribute by which the rows ascend; by default an input of "
                "2^16 rows or more is planned as `sorted by` the first such attribute it uses, "
                "and the reader checks it)");
  }
  void inputs(CLI::App* c) {
    c->add_option("--input", inputs_,
                  "read input relation NAME from PATH (.csv with a header line, TPC-H .tbl, or "
                  "a columnar .rcol file written by `ranc import`, recognised by its first "
                  "bytes); overrides the program's `from \"...\"`")
        ->type_name("NAME=PATH")
        ->check(assignment("--input"));
  }
  void device(CLI::App* c) {
    CLI::Option* cpu = c->add_flag("--cpu", a_.cpu, "run on the CPU reference executor");
    CLI::Option* gpu = c->add_flag("--gpu", a_.gpu, "run on the GPU (an error when none is present)");
    cpu->excludes(gpu);
    c->add_option_function<std::string>(
         "--memory-limit",
         [this](const std::string& v) { a_.memory_limit = rt::parse_byte_size(v).value_or(0); },
         "device memory a GPU run may hold at once, e.g. 8G (default: the device's; also "
         "RANC_MEMORY_LIMIT). A recursion's round that would pass it runs in pieces")
        ->type_name("SIZE")
        ->check(CLI::Validator(
            [](std::string& v) -> std::string {
              std::optional<int64_t> b = rt::parse_byte_size(v);
              if (b && *b > 0) return {};
              return fmt::format("expects a size such as 512M or 8G, got '{}'", v);
            },
            ""));
  }
  void max_rows(CLI::App* c) {
    c->add_option_function<long long>(
         "--max-rows",
         [this](const long long& n) { a_.max_rows = n == 0 ? SIZE_MAX : static_cast<size_t>(n); },
         "print at most N rows per output (default 50; 0 = all)")
        ->type_name("N")
        ->check(CLI::Validator(
            [](std::string& v) -> std::string {
              size_t pos = 0;
              try {
                if (std::stoll(v, &pos) >= 0 && pos == v.size()) return {};
              } catch (const std::exception&) {
              }
              return fmt::format("expects a non-negative integer, got '{}'", v);
            },
            ""));
  }
  void threads(CLI::App* c) {
    c->add_option("--threads", a_.threads,
                  "threads reading the inputs (default: all hardware threads)")
        ->type_name("N")
        ->check(CLI::Range(1, 4096));
  }
  void plan_options(CLI::App* c) {
    c->add_option_function<std::string>(
         "--join",
         [this](const std::string& v) {
           a_.join = v == "hash"    ? codegen::JoinAlgorithm::Hash
                     : v == "merge" ? codegen::JoinAlgorithm::SortMerge
                                    : codegen::JoinAlgorithm::Auto;
         },
         "join algorithm on the GPU: hash (inner joins: partitioned hash join; semi/anti "
         "joins: a probe of a hash set of the right keys), merge (sort the right input and "
         "search it) or auto (the default: hash where neither input is ordered by the "
         "keys, merge where the right input is or an anti join shares its sort; semi/anti "
         "joins hash unless the right input is already sorted by the keys)")
        ->type_name("ALGO")
        ->check(CLI::IsMember({"auto", "merge", "hash"}));
    c->add_option_function<std::string>(
         "--group-by",
         [this](const std::string& v) {
           a_.group_by = v == "sort" ? codegen::GroupBy::Sort : codegen::GroupBy::Auto;
         },
         "how a reduce groups input not ordered by its group keys on the GPU: auto (hash "
         "aggregation when the keys pack into 63 bits, else sort; the default) or sort (also "
         "RANC_GROUP_BY=sort)")
        ->type_name("ALGO")
        ->check(CLI::IsMember({"auto", "sort"}));
    c->add_flag("--no-fusion", a_.no_fusion,
                "one kernel per operator, every intermediate in device memory; the same "
                "results, for comparison (also RANC_NO_FUSION=1)");
    c->add_flag("--no-paged", a_.no_paged,
                "every materialised output dense (no paged lists; also RANC_NO_PAGED=1)");
    c->add_flag("--fast-compile", a_.fast_compile,
                "compile the kernels 2-4x faster and run them slower (NVRTC "
                "--Ofast-compile=mid): for one-off programs on small inputs; the same results "
                "(also RANC_FAST_COMPILE=1)");
  }
  static CLI::Validator assignment(const std::string& flag) {
    return CLI::Validator(
        [flag](std::string& v) -> std::string {
          const size_t eq = v.find('=');
          if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
            return fmt::format("expects NAME=PATH, got '{}'", v);
          return {};
        },
        "");
  }
  // Breaks a paragraph into lines of at most `width` characters.
  static std::string wrap(const std::string& text, size_t width = 88) {
    std::string out, line, word;
    std::istringstream in(text);
    while (in >> word) {
      if (!line.empty() && line.size() + 1 + word.size() > width) {
        out += line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
    }
    return out + line + "\n";
  }

  Args& a_;
  CLI::App app_;
  std::vector<std::string> inputs_, outputs_;
};

Args parse_args(const std::vector<std::string>& argv) {
  Args a;
  CommandLine cl(a);
  cl.parse(argv);
  return a;
}

// A progress line on a terminal, nothing otherwise.
class Progress {
 public:
  explicit Progress(std::ostream& err)
      : err_(err), tty_(isatty(STDERR_FILENO) == 1 && &err == &std::cerr) {}
  void update(const std::string& what, uint64_t done, uint64_t total) {
    if (!tty_ || total == 0) return;
    int pct = static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total));
    err_ << fmt::format("\r{} {:3d}%", what, pct) << std::flush;
    shown_ = true;
  }
  void message(const std::string& what) {
    if (!tty_) return;
    err_ << "\r" << what << std::flush;
    shown_ = true;
  }
  void clear() {
    if (shown_) err_ << "\r\033[K" << std::flush;
    shown_ = false;
  }
  ~Progress() { clear(); }

 private:
  std::ostream& err_;
  bool tty_;
  bool shown_ = false;
};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Loaded {
  ParsedProgram parsed;
  Program checked;
  std::optional<rt::Package> package;  // PROGRAM was a `ranc build` package
};

// A .ra file, or a package (by its first bytes), whose program text is parsed again
// (no NVRTC: the plan and CUBINs come from the package).
Loaded load_program(const Args& a) {
  if (a.program.empty()) throw UsageError{"missing PROGRAM.ra"};
  if (rt::is_package_file(a.program)) {
    rt::Package pkg = rt::read_package(a.program);
    ParsedProgram parsed = parse_ra(pkg.program_text, pkg.program_name);
    Program checked = check(parsed.program);
    return {std::move(parsed), std::move(checked), std::move(pkg)};
  }
  ParsedProgram parsed = parse_ra_file(a.program);
  Program checked = check(parsed.program);
  return {std::move(parsed), std::move(checked), std::nullopt};
}

std::string dot_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n')
      o += "\\n";
    else
      o += c;
  }
  return o;
}

// The physical plan as a Graphviz digraph: one cluster per kernel group (the operators
// fuse_pipelines puts in one kernel); fused edges, which never touch device memory,
// dashed.
std::string to_dot(const passes::PhysicalPlan& pp) {
  const Program& p = pp.program;
  std::string s = "digraph ranc {\n  rankdir=BT;\n  node [shape=box, fontname=\"monospace\"];\n";
  std::map<NodeId, std::vector<NodeId>> groups;
  for (const Node& n : p.nodes()) groups[pp.nodes[static_cast<size_t>(n.id)].kernel].push_back(n.id);
  for (const auto& [k, members] : groups) {
    const bool cluster = members.size() > 1;
    if (cluster)
      s += fmt::format("  subgraph cluster_k{} {{\n    label=\"kernel of n{}\";\n    style=rounded;\n",
                       k, k);
    for (NodeId id : members) {
      const Node& n = p.node(id);
      s += fmt::format("  {}n{} [label=\"n{} {}\\n{}\"];\n", cluster ? "  " : "", n.id, n.id,
                       dot_escape(describe_node(p, n)), dot_escape(n.schema.str()));
    }
    if (cluster) s += "  }\n";
  }
  for (const Node& n : p.nodes())
    for (NodeId in : n.inputs)
      s += fmt::format("  n{} -> n{}{};\n", in, n.id,
                       pp.nodes[static_cast<size_t>(in)].fused   ? " [style=dashed]"
                       : pp.nodes[static_cast<size_t>(in)].paged ? " [style=bold, label=\"paged\"]"
                       : pp.nodes[static_cast<size_t>(in)].keeps_words
                           ? " [style=bold, label=\"sorted words\"]"
                           : "");
  return s + "}\n";
}

// One line per kernel of the plan with the operators fused into it.
std::string kernels_text(const rt::Plan& plan) {
  std::string out;
  for (const auto& step : plan.steps) {
    const auto* l = std::get_if<rt::Launch>(&step);
    if (!l) continue;
    std::string ops;
    std::vector<int32_t> nodes = l->nodes;
    if (nodes.empty() && l->node >= 0) nodes.push_back(l->node);
    for (int32_t n : nodes)
      ops += fmt::format("{}{}", ops.empty() ? "" : ", ", rt::node_name(plan, n));
    const std::string name =
        l->alt_when >= 0 ? fmt::format("{} (or {}, by size)", l->kernel, l->alt_kernel) : l->kernel;
    out += fmt::format("{}: {}\n", name, ops.empty() ? "(prelude)" : ops);
  }
  return out;
}

codegen::CodegenOptions codegen_options(const Args& a) {
  codegen::CodegenOptions o;
  o.join = a.join;
  o.group_by = a.group_by;
  o.fusion = !a.no_fusion;
  o.paged = !a.no_paged;
  o.fast_compile = a.fast_compile;
  return o;
}

int cmd_check(const Args& a, std::ostream& out) {
  Loaded l = load_program(a);
  for (NodeId id : l.checked.outputs()) {
    const Node& n = l.checked.node(id);
    out << fmt::format("output {} {}\n", n.name, n.schema.str());
  }
  out << fmt::format("{}: ok ({} operators)\n", a.program, l.checked.size());
  return kOk;
}

// The checked program with only the attributes it uses (prune_attributes, unless disabled).
Program pruned(const Program& checked, const codegen::CodegenOptions& options) {
  return passes::pass_enabled("prune_attributes", options) ? passes::prune_attributes(checked)
                                                           : checked;
}

// Plans the inputs of l's program by `order` (take_orders: input -> an attribute whose order
// was checked elsewhere), then checks it again into l.checked and `program` (pruned); returns
// the orders taken.
std::map<std::string, std::string> take_orders(Loaded& l, const codegen::CodegenOptions& options,
                                               Program& program,
                                               const std::map<std::string, std::string>& order) {
  std::map<std::string, std::string> taken = take_orders(l.parsed.program, order);
  if (!taken.empty()) {
    l.checked = check(l.parsed.program);
    program = pruned(l.checked, options);
  }
  return taken;
}

std::map<std::string, std::string> apply_recorded_orders(const Args& a, Loaded& l,
                                                         const codegen::CodegenOptions& options,
                                                         Program& program);
std::string recorded_text(const std::map<std::string, std::string>& recorded);
void check_input_names(const Args& a, const Loaded& l);

int cmd_explain(const Args& a, std::ostream& out) {
  Loaded l = load_program(a);
  check_input_names(a, l);
  codegen::CodegenOptions options = codegen_options(a);
  options.dump_after = a.after;
  // The plan `ranc run` makes with the same data: the orders columnar inputs record included.
  std::string recorded;
  if (!a.no_recorded_order) {
    Program program = pruned(l.checked, options);
    recorded = recorded_text(apply_recorded_orders(a, l, options, program));
  }
  passes::PipelineResult r = passes::run_pipeline(l.checked, options);
  if (a.dot) {
    out << to_dot(r.physical);
    return kOk;
  }
  if (!a.after.empty()) {
    out << fmt::format("== plan after {} ==\n", a.after) << r.dump;
    return kOk;
  }
  out << "== checked graph ==\n" << print_program(l.checked);
  if (!recorded.empty())
    out << "\n== inputs in order (planned as sorted by) ==\n" << recorded << "\n";
  out << "\n== inputs (attributes loaded) ==\n"
      << (r.inputs.empty() ? std::string("all declared attributes (prune_attributes is off)\n")
                           : passes::print_pruning(r.inputs));
  out << "\n== physical plan ==\n" << passes::print_physical_plan(r.physical);
  if (const std::string joins = passes::print_join_choices(r.physical); !joins.empty())
    out << "\n== joins ==\n" << joins;
  if (const std::string groups = passes::print_group_by_choices(r.physical); !groups.empty())
    out << "\n== group-bys ==\n" << groups;
  out << "\n== kernels ==\n" << kernels_text(r.plan);
  out << "\n== steps ==\n" << codegen::describe_plan(r.plan);
  return kOk;
}

int cmd_emit(const Args& a, std::ostream& out) {
  Loaded l = load_program(a);
  std::string src = codegen::emit_cuda(l.checked, codegen_options(a));
  if (a.out_file.empty()) {
    out << src;
  } else {
    std::ofstream f(a.out_file, std::ios::binary);
    if (!f || !(f << src) || !f.flush())
      throw UserError(Diagnostic{
          ErrorKind::InvalidArgument, fmt::format("cannot write '{}'", a.out_file), {}, {}});
  }
  return kOk;
}

// Resolves where input `spec` is read from: --input, else `from` relative to --data
// or the program's folder (its .rcol when the file named is missing).
std::string input_path(const Args& a, const RaInputSpec& spec) {
  if (auto it = a.inputs.find(spec.relation); it != a.inputs.end()) return it->second;
  if (spec.path.empty()) return "";
  fs::path p(spec.path);
  if (p.is_absolute()) return prefer_columnar(p.string());
  fs::path base = a.data_dir.empty() ? fs::path(a.program).parent_path() : fs::path(a.data_dir);
  return prefer_columnar((base / p).string());
}

void check_input_names(const Args& a, const Loaded& l) {
  for (const auto& [name, path] : a.inputs) {
    bool found = false;
    for (const auto& s : l.parsed.input_files) found |= s.relation == name;
    if (!found)
      throw UsageError{fmt::format("--input {}: the program has no input named '{}'", name, name)};
  }
}

// Where declared input `n` is read from and how (all its attributes).
std::pair<std::string, CsvOptions> input_source(const Args& a, const Loaded& l, const Node& n) {
  const RaInputSpec* spec = nullptr;
  for (const auto& s : l.parsed.input_files)
    if (s.relation == n.name) spec = &s;
  RaInputSpec none{n.name, "", "", ',', true, std::nullopt, n.loc};
  if (!spec) spec = &none;
  std::string path = input_path(a, *spec);
  if (path.empty())
    throw UserError(Diagnostic{ErrorKind::InvalidArgument,
                               fmt::format("no data for input '{}'", n.name), spec->loc,
                               fmt::format("add `from \"file.csv\"` to its declaration or pass "
                                           "--input {}=PATH",
                                           n.name)});
  // --input NAME=PATH: the format comes from PATH alone (a columnar file from its bytes).
  CsvOptions o = a.inputs.count(n.name)
                     ? options_for(format_from_path(path).value_or(TextFormat::Csv))
                     : input_csv_options(*spec, path);
  o.null_marker = spec->null_marker;  // a property of the declaration, whatever the file
  o.num_threads = a.threads;
  return {std::move(path), std::move(o)};
}

// The first attribute of `rel` (in its order) by which its rows are sorted, ascending, and
// not all equal: integers and dates, not nullable. Inputs of fewer than kArrivalOrderRows rows
// are not looked at (their sorts cost little). A column that is out of order stops at its
// first descent, so the look is one pass over the sorted column at most.
std::optional<std::string> first_sorted_attribute(const HostRelation& rel) {
  if (rel.num_rows() < kArrivalOrderRows) return std::nullopt;
  auto sorted = [](const auto& v) { return v.front() != v.back() && std::is_sorted(v.begin(), v.end()); };
  for (size_t c = 0; c < rel.num_columns(); ++c) {
    const Column& col = rel.column(c);
    if (col.nullable()) continue;
    bool yes = false;
    switch (col.type()) {
      case Type::I32:
      case Type::Date:
        yes = sorted(col.data<int32_t>());
        break;
      case Type::I64:
        yes = sorted(col.data<int64_t>());
        break;
      default:
        break;
    }
    if (yes) return rel.schema().attributes.at(c).name;
  }
  return std::nullopt;
}

// A columnar file records the attributes by which its rows ascend (recorded_ascending, set by
// `ranc import`): an input not declared `sorted by` is planned as sorted by the first of them
// the program uses, as --observe-order would after the load, but before it, so `ranc run`
// still compiles the plan during the load. The reader checks the order as it reads the
// column (and cmd_run that it did), so the GPU does not check it again. Updates l (parsed and
// checked) and `program` (pruned); returns the orders taken (input -> attribute). Inputs
// without a file, or whose file is missing or not columnar, are left as they are (`ranc
// explain` runs without the data).
std::map<std::string, std::string> apply_recorded_orders(const Args& a, Loaded& l,
                                                         const codegen::CodegenOptions& options,
                                                         Program& program) {
  std::map<std::string, std::string> order;  // input -> attribute
  std::map<std::string, const Node*> declared;
  for (NodeId id : l.checked.inputs()) declared[l.checked.node(id).name] = &l.checked.node(id);
  for (NodeId id : program.inputs()) {
    const Node& kept = program.node(id);
    const Node& n = *declared.at(kept.name);
    if (!n.sort_keys.empty()) continue;
    std::string path;
    try {
      path = input_source(a, l, n).first;
    } catch (const UserError&) {
      continue;  // no data named: reported where the data is read
    }
    const std::vector<std::string> up = recorded_ascending(path, kept.declared);
    if (!up.empty()) order[kept.name] = up.front();
  }
  return take_orders(l, options, program, order);
}

// "lineitem by l_orderkey (recorded), ..."
std::string recorded_text(const std::map<std::string, std::string>& recorded) {
  std::string s;
  for (const auto& [input, attr] : recorded)
    s += fmt::format("{}{} by {} (recorded)", s.empty() ? "" : ", ", input, attr);
  return s;
}

int cmd_run(const Args& a, std::ostream& out, std::ostream& err) {
  Progress progress(err);
  Loaded l = load_program(a);
  check_input_names(a, l);
  std::vector<std::string> output_names;
  for (NodeId id : l.checked.outputs()) output_names.push_back(l.checked.node(id).name);
  for (const auto& [name, path] : a.outputs)
    if (std::find(output_names.begin(), output_names.end(), name) == output_names.end())
      throw UsageError{
          fmt::format("--output {}: the program has no output named '{}'", name, name)};

  // Load the inputs the checked program uses, only the attributes it uses
  // (prune_attributes; the file still has all of the declared ones).
  const codegen::CodegenOptions options = codegen_options(a);
  Program program = pruned(l.checked, options);
  bool use_gpu = a.gpu;
  if (!a.cpu && !a.gpu) {
    use_gpu = rt::gpu_available();
    if (!use_gpu)
      err << fmt::format("ranc: no GPU ({}); running on the CPU reference executor\n",
                         rt::no_gpu_reason());
  }
  if (a.gpu && !rt::gpu_available())
    throw rt::NoGpuError(fmt::format("--gpu: no GPU available: {}", rt::no_gpu_reason()));

  // The plan depends on the program only, so NVRTC compiles it on another thread while
  // the inputs load; the executor then finds the CUBIN in the kernel cache's memory. With
  // --observe-order an input that arrives sorted by an attribute is planned as if declared
  // `sorted by` it (both executors still verify the order), so the plan waits for the load.
  const bool observe_order = a.observe_order && !l.package;
  // The GPU is set up (context, pool, pinned staging buffers) on a thread meanwhile too.
  // A package brings its plan and CUBINs: nothing is generated or compiled.
  std::optional<rt::Plan> plan;
  double codegen_s = 0;
  std::future<rt::CacheLookup> compiling;
  std::optional<rt::Executor> ex;
  std::future<void> preparing;
  if (l.package && (a.no_fusion || a.no_paged || a.fast_compile))
    throw UsageError{
        "--no-fusion, --no-paged and --fast-compile apply when a package is built (ranc build)"};
  // Where each input the program reads comes from, and the bytes of those files.
  struct Source {
    const Node* kept;  // the input in the program (the attributes it keeps)
    const Node* file;  // its declaration (the file's schema)
    std::string path;
    CsvOptions options;
  };
  const std::map<std::string, std::string> recorded =
      l.package || a.no_recorded_order ? std::map<std::string, std::string>()
                                       : apply_recorded_orders(a, l, options, program);
  std::string observed = recorded_text(recorded);  // for --time
  std::vector<Source> sources;
  uint64_t bytes_loaded = 0;
  {
    std::map<std::string, const Node*> declared;
    for (NodeId id : l.checked.inputs()) declared[l.checked.node(id).name] = &l.checked.node(id);
    for (NodeId id : program.inputs()) {
      const Node& kept = program.node(id);
      const Node& n = *declared.at(kept.name);
      auto [path, o] = input_source(a, l, n);
      std::error_code ec;
      const uint64_t sz = fs::file_size(path, ec);
      if (!ec) bytes_loaded += sz;
      sources.push_back({&kept, &n, std::move(path), std::move(o)});
    }
  }
  if (use_gpu) {
    const int arch = rt::find_gpu()->arch();
    if (l.package) {
      rt::install_package_cubin(*l.package, arch);
      plan = l.package->plan;
    } else if (!observe_order) {
      auto t_codegen = Clock::now();
      plan = codegen::generate_plan(program, options);
      codegen_s = seconds_since(t_codegen);
      compiling = std::async(std::launch::async, [&plan, arch] {
        return rt::compile_plan(*plan, arch, rt::KernelCache::global());
      });
    }
    rt::ExecutorOptions eo;
    eo.memory_limit = a.memory_limit;
    // The pool grows ahead of the run, while the inputs load, by about their size (the files'
    // bytes, at least 256 MiB; at most half the free device memory): the run's allocations then
    // find memory already mapped instead of mapping it step by step (RANC_RESERVE overrides, 0:
    // none).
    eo.reserve_bytes = std::max<int64_t>(static_cast<int64_t>(bytes_loaded), int64_t{256} << 20);
    ex.emplace(eo);
    preparing = std::async(std::launch::async, [&ex] { ex->prepare(); });
  }

  auto t_load = Clock::now();
  std::vector<std::pair<std::string, HostRelation>> inputs;
  std::set<std::string> confirmed;  // "input.attribute" the reader found flagged and ascending
  for (Source& s : sources) {
    if (recorded.count(s.file->name))
      s.options.ascending = [&confirmed, &s](const std::string& attr) {
        confirmed.insert(s.file->name + "." + attr);
      };
    if (s.kept->declared.size() < s.file->declared.size())
      for (const auto& attr : s.kept->declared.attributes) s.options.columns.push_back(attr.name);
    std::string label = fmt::format("loading {}", fs::path(s.path).filename().string());
    s.options.progress = [&](uint64_t done, uint64_t total) { progress.update(label, done, total); };
    inputs.emplace_back(s.file->name, read_input(s.path, s.file->declared, s.options));
    progress.clear();
  }
  double load_s = seconds_since(t_load);
  // The plan trusts the recorded orders: the files read must be the files planned by (one
  // replaced in between may not ascend, and then its reader checked nothing).
  for (const Source& s : sources)
    if (auto it = recorded.find(s.file->name);
        it != recorded.end() && !confirmed.count(it->first + "." + it->second))
      throw UserError(Diagnostic{
          ErrorKind::Data,
          fmt::format("the file changed while ranc read it: it recorded its rows ascending by "
                      "{} when the program was planned, and no longer does",
                      it->second),
          SourceLoc{s.path, 0, 0}, "run again, or pass --no-recorded-order"});

  if (observe_order) {
    std::map<std::string, std::string> order;  // input -> attribute; every row compared
    for (const auto& [name, rel] : inputs)
      if (std::optional<std::string> attr = first_sorted_attribute(rel)) order[name] = *attr;
    for (const auto& [input, attr] : take_orders(l, options, program, order))
      observed += fmt::format("{}{} by {}", observed.empty() ? "" : ", ", input, attr);
    if (use_gpu) {
      auto t_codegen = Clock::now();
      plan = codegen::generate_plan(program, options);
      codegen_s = seconds_since(t_codegen);
    }
  }

  std::vector<std::pair<std::string, HostRelation>> results;
  std::string timing;
  auto t_exec = Clock::now();
  if (use_gpu) {
    // A compile that failed is reported by the executor, which compiles again.
    std::optional<rt::CacheLookup> early;
    auto t_wait = Clock::now();
    try {
      if (compiling.valid()) early = compiling.get();
    } catch (const std::exception&) {
    }
    const double wait_s = seconds_since(t_wait);
    std::map<std::string, const HostRelation*> bind;
    for (auto& [name, rel] : inputs) bind[name] = &rel;
    progress.message("compiling and running on the GPU...");
    preparing.get();
    rt::RunResult r = ex->run(*plan, bind);
    progress.clear();
    results = std::move(r.outputs);
    const auto& s = r.stats;
    const double compile_s = early ? early->seconds : s.compile_seconds;
    const rt::CacheSource source = early ? early->source : s.compile_source;
    timing = fmt::format(
        "time: load {:.3f} s ({:.1f} MB/s), codegen {:.4f} s, compile {:.4f} s ({}{}), upload "
        "{:.4f} s, "
        "execute {:.5f} s{}, download {:.4f} s; device {}, peak device memory {:.1f} MiB\n",
        load_s, load_s > 0 ? bytes_loaded / load_s / 1e6 : 0.0, codegen_s, compile_s,
        l.package ? "package" : source == rt::CacheSource::Compiled ? "cold" : "cached",
        early ? fmt::format(", during the load; {:.4f} s waited after it", wait_s)
              : (l.package ? ", no NVRTC" : ""),
        s.upload_seconds,
        s.execute_seconds,
        s.loop_iterations > 0
            ? fmt::format(" ({} loop iterations{}{}; {} waits for read-backs, {:.4f} s waited)",
                          s.loop_iterations,
                          s.resident_rounds > 0 ? fmt::format(", {} resident", s.resident_rounds) : "",
                          s.split_iterations > 0
                              ? fmt::format(", {} split for memory", s.split_iterations)
                              : "",
                          s.readbacks, s.wait_seconds)
            : "",
        s.download_seconds, ex->device().name, s.peak_device_bytes / 1048576.0);
  } else {
    auto outs = execute_reference(program, inputs);
    for (size_t i = 0; i < outs.size(); ++i)
      results.emplace_back(output_names[i], std::move(outs[i]));
    timing =
        fmt::format("time: load {:.3f} s ({:.1f} MB/s), execute (CPU reference) {:.3f} s\n", load_s,
                    load_s > 0 ? bytes_loaded / load_s / 1e6 : 0.0, seconds_since(t_exec));
  }

  if (!observed.empty()) timing += fmt::format("inputs in order (planned as sorted by): {}\n", observed);

  bool first = true;
  for (auto& [name, rel] : results) {
    if (auto it = a.outputs.find(name); it != a.outputs.end()) {
      auto f = format_from_path(it->second).value_or(TextFormat::Csv);
      write_csv(rel, it->second, options_for(f));
      continue;
    }
    if (!first) out << "\n";
    first = false;
    if (results.size() > 1 || true) out << name << ":\n";
    out << rel.to_table(a.max_rows);
  }
  if (a.time) err << timing;
  return kOk;
}

// Reads each declared input (every declared attribute) and writes OUTDIR/NAME.rcol.
// ranc build: the plan ranc run would make (attributes pruned the same way), compiled
// for each architecture, written as a package.
int cmd_build(const Args& a, std::ostream& out, std::ostream& err) {
  if (rt::is_package_file(a.program))
    throw UsageError{fmt::format("{} is already a package; build from the .ra file", a.program)};
  Loaded l = load_program(a);
  const codegen::CodegenOptions options = codegen_options(a);
  Program program = pruned(l.checked, options);
  rt::Package pkg;
  pkg.ranc_version = rt::ranc_version();
  pkg.nvrtc_version = rt::nvrtc_version();
  pkg.program_name = fs::path(a.program).filename().string();
  pkg.program_text = l.parsed.source;
  pkg.plan = codegen::generate_plan(program, options);
  std::vector<int> archs = a.archs;
  if (archs.empty()) archs.push_back(rt::default_target_arch());
  auto t0 = Clock::now();
  for (int arch : archs) {
    if (pkg.cubin_for(arch)) continue;
    rt::CacheLookup c = rt::compile_plan(pkg.plan, arch, rt::KernelCache::global());
    pkg.cubins.emplace_back(arch, *c.cubin);
  }
  const double compile_s = seconds_since(t0);
  rt::write_package(a.out_file, pkg);
  std::error_code ec;
  const auto bytes = fs::file_size(a.out_file, ec);
  out << fmt::format("{}: {} kernels for {}, {:.1f} KB\n", a.out_file, pkg.plan.kernels.size(),
                     pkg.arch_list(), ec ? 0.0 : bytes / 1024.0);
  if (a.time) err << fmt::format("time: compile {:.3f} s\n", compile_s);
  return kOk;
}

int cmd_import(const Args& a, std::ostream& out, std::ostream& err) {
  if (a.out_file.empty()) throw UsageError{"import needs -o OUTDIR, the folder to write to"};
  Progress progress(err);
  Loaded l = load_program(a);
  check_input_names(a, l);
  std::set<std::string> names;
  for (NodeId id : l.checked.inputs()) names.insert(l.checked.node(id).name);
  for (const auto& name : a.only)
    if (!names.count(name))
      throw UsageError{fmt::format("--only {}: the program has no input named '{}'", name, name)};
  std::error_code ec;
  fs::create_directories(a.out_file, ec);
  if (ec || !fs::is_directory(a.out_file))
    throw UserError(Diagnostic{
        ErrorKind::Data,
        fmt::format("cannot create the folder '{}': {}", a.out_file,
                    ec ? ec.message() : std::string("a file of that name exists")),
        SourceLoc{a.out_file, 0, 0},
        {}});
  double read_s = 0, write_s = 0;
  uint64_t read_bytes = 0, written_bytes = 0;
  for (NodeId id : l.checked.inputs()) {
    const Node& n = l.checked.node(id);
    if (!a.only.empty() && std::find(a.only.begin(), a.only.end(), n.name) == a.only.end())
      continue;
    auto [path, o] = input_source(a, l, n);
    std::string label = fmt::format("reading {}", fs::path(path).filename().string());
    o.progress = [&](uint64_t done, uint64_t total) { progress.update(label, done, total); };
    auto t0 = Clock::now();
    HostRelation rel = read_input(path, n.declared, o);
    double r_s = seconds_since(t0);
    progress.clear();
    std::string dst = (fs::path(a.out_file) / (n.name + ".rcol")).string();
    progress.message(fmt::format("writing {}", dst));
    t0 = Clock::now();
    write_columnar(dst, rel);
    double w_s = seconds_since(t0);
    progress.clear();
    uint64_t in_bytes = fs::file_size(path, ec);
    if (ec) in_bytes = 0;
    uint64_t out_bytes = fs::file_size(dst);
    // The attributes by which the rows ascend, as the file records them (`ranc run` plans
    // the input as sorted by the first it uses).
    std::string ascending;
    const ColumnarInfo info = read_columnar_info(dst, /*dictionaries=*/false);
    for (size_t c = 0; c < info.sections.size(); ++c)
      if (info.sections[c].ascending)
        ascending += fmt::format("{}{}", ascending.empty() ? ", ascending by " : ", ",
                                 info.schema.attributes[c].name);
    out << fmt::format("{}: {} rows, {} attributes, {:.1f} MB -> {} ({:.3f} s){}\n", n.name,
                       rel.num_rows(), rel.num_columns(), out_bytes / 1e6, dst, r_s + w_s,
                       ascending);
    read_s += r_s;
    write_s += w_s;
    read_bytes += in_bytes;
    written_bytes += out_bytes;
  }
  if (a.time)
    err << fmt::format("time: read {:.3f} s ({:.1f} MB/s), write {:.3f} s ({:.1f} MB/s)\n",
                       read_s, read_s > 0 ? read_bytes / read_s / 1e6 : 0.0, write_s,
                       write_s > 0 ? written_bytes / write_s / 1e6 : 0.0);
  return kOk;
}

int dispatch(const Args& a, std::ostream& out, std::ostream& err) {
  if (a.command == "check") return cmd_check(a, out);
  if (a.command == "explain") return cmd_explain(a, out);
  if (a.command == "emit") return cmd_emit(a, out);
  if (a.command == "run") return cmd_run(a, out, err);
  if (a.command == "import") return cmd_import(a, out, err);
  if (a.command == "build") return cmd_build(a, out, err);
  throw UsageError{fmt::format("unknown command '{}'", a.command)};
}

// The source text of the program, for rendering diagnostics with the line.
std::string read_source(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

int run_cli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  Args a;
  try {
    if (!argv.empty() && argv[0] == "help") {
      std::vector<std::string> rest(argv.begin() + 1, argv.end());
      rest.push_back("--help");
      a = parse_args(rest);
    }
    a = parse_args(argv);
    if (a.command == "shell") {
      ShellOptions o;
      o.data_dir = a.data_dir;
      o.max_rows = a.max_rows;
      o.timer = a.time;
      if (a.cpu) o.gpu = false;
      if (a.gpu) o.gpu = true;
      o.memory_limit = a.memory_limit;
      o.codegen = codegen_options(a);
      o.recorded_order = !a.no_recorded_order;
      if (!a.program.empty()) o.script = a.program;
      return run_shell(o, std::cin, out, err, isatty(STDIN_FILENO) == 1 && a.program.empty());
    }
    return dispatch(a, out, err);
  } catch (const HelpRequest& h) {
    out << h.text;
    return kOk;
  } catch (const UsageError& e) {
    err << "ranc: " << e.message << "\n(run 'ranc --help' for usage)\n";
    return kUsageError;
  } catch (...) {
    return report_exception(err, a.program, a.program.empty() ? "" : read_source(a.program));
  }
}

int report_exception(std::ostream& err, const std::string& file, const std::string& source) {
  try {
    throw;
  } catch (const rt::ExecutionError& e) {
    err << "ranc: execution error: " << e.what() << "\n";
    return kExecutionError;
  } catch (const UserError& e) {
    bool data = false, exec = false;
    for (const auto& d : e.diagnostics()) {
      data |= d.kind == ErrorKind::Data;
      exec |= d.kind == ErrorKind::Execution;
    }
    // Diagnostics located in the program file are shown with the source line.
    std::string shown;
    for (const auto& d : e.diagnostics())
      shown += !file.empty() && d.loc.file == file ? render_diagnostic(d, source) : d.str() + "\n";
    err << shown;
    if (!shown.empty() && shown.back() != '\n') err << "\n";
    return exec ? kExecutionError : (data ? kDataError : kProgramError);
  } catch (const rt::NoGpuError& e) {
    err << "ranc: " << e.what() << "\n";
    return kExecutionError;
  } catch (const rt::JitError& e) {
    err << "ranc: JIT compilation failed: " << e.what() << "\n";
    return kExecutionError;
  } catch (const rt::OutOfMemoryError& e) {
    err << "ranc: " << e.what() << "\n";
    return kExecutionError;
  } catch (const rt::CudaError& e) {
    err << "ranc: CUDA error: " << e.what() << "\n";
    return kExecutionError;
  } catch (const InternalError& e) {
    err << "ranc: " << e.what() << "\n";
    return kInternalError;
  } catch (const std::exception& e) {
    err << "ranc: internal error (please report): " << e.what() << "\n";
    return kInternalError;
  }
}

}  // namespace ranc::cli
