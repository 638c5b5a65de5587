// `ranc shell`: statements and dot-commands against one ranc::Session.
//
// The shell keeps the text of every `input` declaration and every definition
// (`name = ...;`, or a `fixpoint { ... }` block, which defines the names it assigns)
// entered, and runs `output NAME;` as the program made of them: the checker keeps only
// what NAME depends on, so unused relations are never loaded. A definition is checked
// when entered (and kept only when it checks); defining a name again replaces the
// definition that had it. Line editing and history come from the system's readline (or
// editline) library, loaded at run time so that ranc starts without it.
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "ranc/frontend/ra_lexer.h"
#include "ranc/frontend/ra_parser.h"
#include "ranc/runtime/errors.h"
#include "ranc/session.h"

namespace ranc::cli {

namespace {

// readline through dlopen: none of its symbols are linked.
class LineEditor {
 public:
  LineEditor() {
    for (const char* lib : {"libreadline.so.8", "libreadline.so", "libedit.so.2"}) {
      handle_ = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
      if (handle_) break;
    }
    if (!handle_) return;
    readline_ = reinterpret_cast<char* (*)(const char*)>(dlsym(handle_, "readline"));
    add_history_ = reinterpret_cast<void (*)(const char*)>(dlsym(handle_, "add_history"));
    read_history_ = reinterpret_cast<int (*)(const char*)>(dlsym(handle_, "read_history"));
    write_history_ = reinterpret_cast<int (*)(const char*)>(dlsym(handle_, "write_history"));
    if (!readline_) return;
    if (const char* home = std::getenv("HOME")) history_ = std::string(home) + "/.ranc_history";
    if (read_history_ && !history_.empty()) read_history_(history_.c_str());
  }
  ~LineEditor() {
    if (write_history_ && !history_.empty()) write_history_(history_.c_str());
    // The library stays loaded: unloading readline at exit is not worth the risk.
  }
  // One line without its newline; nullopt at the end of input.
  std::optional<std::string> read(const std::string& prompt, std::istream& in, std::ostream& out,
                                  bool interactive) {
    if (interactive && readline_) {
      char* line = readline_(prompt.c_str());
      if (!line) return std::nullopt;
      std::string s(line);
      std::free(line);
      if (add_history_ && !s.empty()) add_history_(s.c_str());
      return s;
    }
    if (interactive) out << prompt << std::flush;
    std::string s;
    if (!std::getline(in, s)) return std::nullopt;
    return s;
  }

 private:
  void* handle_ = nullptr;
  char* (*readline_)(const char*) = nullptr;
  void (*add_history_)(const char*) = nullptr;
  int (*read_history_)(const char*) = nullptr;
  int (*write_history_)(const char*) = nullptr;
  std::string history_;
};

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

// The first identifier of a statement, and the one after it.
std::pair<std::string, std::string> first_words(const std::string& s) {
  std::istringstream ss(s);
  std::string a, b;
  auto word = [&](std::string& w) {
    char c;
    while (ss.get(c) && std::isspace(static_cast<unsigned char>(c))) {
    }
    if (!ss) return;
    do {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) {
        if (w.empty()) w = c;
        return;
      }
      w += c;
    } while (ss.get(c));
  };
  word(a);
  word(b);
  return {a, b};
}

// Whether the text so far ends a statement: a ';' outside strings, comments and
// braces, or the '}' that closes a fixpoint block.
bool statement_complete(const std::string& text) {
  bool in_str = false, done = false;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_str) {
      if (c == '"' || c == '\'') in_str = false;
      continue;
    }
    if (c == '-' && i + 1 < text.size() && text[i + 1] == '-') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == '"' || c == '\'') in_str = true;
    if (c == '{') ++depth;
    if (c == '}') --depth;
    if (c == ';' || c == '}') done = depth <= 0;
    else if (!std::isspace(static_cast<unsigned char>(c))) done = false;
  }
  return done;
}

// The names a fixpoint block defines: those assigned at the start of its rules.
std::vector<std::string> block_names(const std::string& text) {
  std::vector<Diagnostic> ignored;
  std::vector<Token> t = lex_ra(text, "<shell>", ignored);
  std::vector<std::string> names;
  int depth = 0;
  for (size_t i = 1; i + 1 < t.size(); ++i) {
    if (t[i].kind == TokKind::LBrace) ++depth;
    if (t[i].kind == TokKind::RBrace) --depth;
    bool rule_start = t[i - 1].kind == TokKind::LBrace || t[i - 1].kind == TokKind::Semi;
    if (depth > 0 && rule_start && t[i].kind == TokKind::Ident && t[i + 1].kind == TokKind::Eq &&
        std::find(names.begin(), names.end(), t[i].text) == names.end())
      names.push_back(t[i].text);
  }
  return names;
}

std::string bytes_text(int64_t b) {
  if (b >= (int64_t{1} << 30)) return fmt::format("{:.2f} GiB", b / 1073741824.0);
  if (b >= (int64_t{1} << 20)) return fmt::format("{:.1f} MiB", b / 1048576.0);
  return fmt::format("{} B", b);
}

class Shell {
 public:
  Shell(const ShellOptions& o, std::ostream& out, std::ostream& err)
      : o_(o), out_(out), err_(err), timer_(o.timer) {
    SessionOptions so;
    so.gpu = o.gpu;
    so.memory_limit = o.memory_limit;
    so.codegen = o.codegen;
    so.data_dir = o.data_dir;
    so.recorded_order = o.recorded_order;
    session_ = std::make_unique<Session>(so);
  }

  // Processes a stream of lines; returns the exit code (first error's).
  int feed(std::istream& in, bool interactive, LineEditor* editor) {
    auto next_line = [&](const std::string& prompt) -> std::optional<std::string> {
      if (editor) return editor->read(prompt, in, out_, interactive);
      std::string s;
      if (!std::getline(in, s)) return std::nullopt;
      return s;
    };
    std::string pending;
    for (;;) {
      std::optional<std::string> line = next_line(pending.empty() ? "ranc> " : "  ...> ");
      if (!line) break;
      std::string t = trim(*line);
      if (pending.empty() && (t.empty() || t.rfind("--", 0) == 0)) continue;
      if (pending.empty() && (t[0] == '.' || t[0] == '\\')) {
        if (!command(t)) return first_error_;
        continue;
      }
      pending += *line + "\n";
      if (!statement_complete(pending)) continue;
      statement(trim(pending));
      pending.clear();
    }
    if (!trim(pending).empty()) {
      err_ << "ranc: the input ends inside a statement (a ';' is missing)\n";
      note_error(kProgramError);
    }
    return first_error_;
  }

 private:
  void note_error(int code) {
    if (first_error_ == kOk) first_error_ = code;
  }

  // A definition entered: `name = ...;` or a fixpoint block.
  struct Definition {
    std::vector<std::string> names;
    std::string text;
    bool defines_any(const std::vector<std::string>& ns) const {
      for (const std::string& n : ns)
        if (std::find(names.begin(), names.end(), n) != names.end()) return true;
      return false;
    }
  };

  // The program text of the declarations, the definitions (but those of `skip`) and
  // `tail`.
  std::string program(const std::string& tail, const std::vector<std::string>& skip = {}) const {
    std::string p;
    for (const auto& [name, text] : inputs_) p += text + "\n";
    for (const Definition& d : defs_)
      if (!d.defines_any(skip)) p += d.text + "\n";
    return p + tail + "\n";
  }

  // Checks a definition of `names` with a temporary output of each, and keeps it (in
  // place of the definitions it replaces) when it checks.
  void define(const std::vector<std::string>& names, const std::string& text) {
    std::string outputs;
    for (const std::string& n : names) outputs += "\noutput " + n + ";";
    std::string prog = program(text + outputs, names);
    bool ok = guarded(prog, [&] { (void)check(parse_ra(prog, "<shell>").program); });
    if (!ok) return;
    std::erase_if(defs_, [&](const Definition& d) { return d.defines_any(names); });
    defs_.push_back({names, text});
  }

  // Runs `f`, printing an error (located in `text` for diagnostics) instead of
  // throwing. Returns whether it succeeded.
  template <typename F>
  bool guarded(const std::string& text, F&& f) {
    try {
      f();
      return true;
    } catch (...) {
      note_error(report_exception(err_, "<shell>", text));
      return false;
    }
  }

  void statement(const std::string& text) {
    auto [w1, w2] = first_words(text);
    if (w1 == "input") {
      guarded(text, [&] {
        ParsedProgram p = parse_ra(text, "<shell>");
        for (const RaInputSpec& s : p.input_files) {
          const Node* decl = nullptr;
          for (const Node& n : p.program.nodes())
            if (n.kind == OpKind::Input && n.name == s.relation) decl = &n;
          if (s.path.empty())
            throw UserError(Diagnostic{ErrorKind::InvalidArgument,
                                       fmt::format("input '{}' needs `from \"FILE\"` in the shell",
                                                   s.relation),
                                       s.loc, "the file is read when a query first uses it"});
          session_->declare(s.relation, s.path, decl->declared, input_csv_options(s, s.path));
        }
        // One declaration per statement is what the shell keeps: store the text by
        // the first relation's name (a statement may declare several).
        if (!p.input_files.empty()) inputs_[p.input_files.front().relation] = text;
      });
      return;
    }
    if (w1 == "output") {
      std::string prog = program(text);
      guarded(prog, [&] { run(prog); });
      return;
    }
    if (w2 == "=") {
      define({w1}, text);
      return;
    }
    if (w1 == "fixpoint") {
      std::vector<std::string> names = block_names(text);
      // With no rule, the parser says what is wrong.
      if (names.empty()) guarded(text, [&] { (void)parse_ra(text, "<shell>"); });
      if (!names.empty()) define(names, text);
      return;
    }
    err_ << fmt::format(
        "ranc: a statement is `input ...;`, `NAME = ...;`, `fixpoint {{ ... }}` or "
        "`output NAME;` (got '{}')\n",
        text.substr(0, 40));
    note_error(kProgramError);
  }

  void run(const std::string& prog) {
    SessionResult r = session_->run(prog, "<shell>");
    bool first = true;
    for (auto& [name, rel] : r.outputs) {
      if (!first) out_ << "\n";
      first = false;
      out_ << name << ":\n" << rel.to_table(o_.max_rows);
    }
    if (timer_) {
      const auto& s = r.stats;
      if (!r.recorded_orders.empty())
        out_ << "inputs in order (planned as sorted by): " << r.recorded_orders << " (recorded)\n";
      if (session_->on_gpu())
        out_ << fmt::format(
            "time: plan {:.1f} ms{}, load {:.3f} s, upload {:.4f} s, compile {:.4f} s ({}), "
            "execute {:.3f} ms, download {:.4f} s\n",
            r.plan_seconds * 1e3, r.plan_cached ? " (cached)" : "", r.load_seconds,
            s.upload_seconds, s.compile_seconds,
            s.compile_source == rt::CacheSource::Compiled ? "cold" : "cached",
            s.execute_seconds * 1e3, s.download_seconds);
      else
        out_ << fmt::format("time: plan {:.1f} ms{}, load {:.3f} s, execute (CPU reference) "
                            "{:.3f} ms\n",
                            r.plan_seconds * 1e3, r.plan_cached ? " (cached)" : "",
                            r.load_seconds, r.execute_seconds * 1e3);
    }
  }

  // A dot-command; false ends the shell.
  bool command(const std::string& line) {
    std::istringstream ss(line);
    std::string cmd, arg;
    ss >> cmd;
    std::getline(ss, arg);
    arg = trim(arg);
    if (cmd == ".quit" || cmd == ".exit" || cmd == "\\q") return false;
    if (cmd == ".help" || cmd == "\\?") {
      out_ << "statements: input NAME(...) from \"FILE\"; | NAME = ...; | fixpoint { NAME = ...; } "
              "| output NAME;\n"
              "commands: .tables, .drop NAME, .timer on|off, .memory, .read FILE (\\i FILE), "
              ".quit (\\q)\n";
    } else if (cmd == ".tables") {
      for (const auto& r : session_->relations()) {
        std::string loaded;
        for (const auto& a : r.loaded) loaded += (loaded.empty() ? "" : ", ") + a;
        std::string up;
        for (const auto& a : r.ascending) up += (up.empty() ? "; the file records rows ascending by " : ", ") + a;
        out_ << fmt::format("{} {}{}{}\n  {}\n", r.name, r.schema.str(),
                            r.path.empty() ? "" : " from " + r.path, up,
                            r.rows < 0 ? std::string("not loaded yet")
                                       : fmt::format("{} rows; loaded: {}{}", r.rows, loaded,
                                                     r.device_bytes
                                                         ? "; " + bytes_text(r.device_bytes) +
                                                               " on the device"
                                                         : ""));
      }
    } else if (cmd == ".drop") {
      // The declaration stays: a later query that uses the relation reads it again.
      guarded("", [&] { session_->drop(arg); });
    } else if (cmd == ".timer") {
      if (arg == "on" || arg == "off")
        timer_ = arg == "on";
      else {
        err_ << "ranc: .timer on|off\n";
        note_error(kUsageError);
      }
    } else if (cmd == ".memory") {
      out_ << fmt::format("{}: {} of device memory in use\n", session_->device_name(),
                          bytes_text(session_->device_bytes_in_use()));
    } else if (cmd == ".read" || cmd == "\\i") {
      std::ifstream f(arg);
      if (!f) {
        err_ << fmt::format("ranc: cannot read '{}'\n", arg);
        note_error(kDataError);
      } else {
        feed(f, false, nullptr);  // records its errors in first_error_
      }
    } else {
      err_ << fmt::format("ranc: unknown command '{}' (.help lists them)\n", cmd);
      note_error(kUsageError);
    }
    return true;
  }

  const ShellOptions& o_;
  std::ostream& out_;
  std::ostream& err_;
  bool timer_;
  std::unique_ptr<Session> session_;
  std::map<std::string, std::string> inputs_;  // relation -> declaration
  std::vector<Definition> defs_;               // in the order entered
  int first_error_ = kOk;
};

}  // namespace

int run_shell(const ShellOptions& options, std::istream& in, std::ostream& out, std::ostream& err,
              bool interactive) {
  try {
    Shell shell(options, out, err);
    if (!options.script.empty()) {
      std::ifstream f(options.script);
      if (!f) {
        err << fmt::format("ranc: cannot read '{}'\n", options.script);
        return kDataError;
      }
      return shell.feed(f, false, nullptr);
    }
    if (interactive) {
      LineEditor editor;
      out << "ranc shell: statements end with ';', .help for commands, .quit to leave\n";
      return shell.feed(in, true, &editor);
    }
    return shell.feed(in, false, nullptr);
  } catch (...) {
    return report_exception(err, "", "");
  }
}

}  // namespace ranc::cli
