// The .ra parser: recursive descent over the tokens of ra_lexer, building an
// unchecked Program. Relation names are resolved after the whole file is read, so
// definitions may come in any order. A syntax error abandons the statement (the
// parser skips to the next ';' or statement keyword) and parsing goes on; all
// diagnostics are thrown together at the end. A fixpoint block's rules are built into
// a program of their own (FixpointDef::rules), whose names are resolved at the '}'.
#include "ranc/frontend/ra_parser.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ranc/frontend/identifiers.h"
#include "ranc/frontend/ra_lexer.h"

namespace ranc {

namespace {

// Thrown after a diagnostic has been recorded; the statement loop catches it.
struct ParseAbort {};

// Words that can never be names: they end or join expressions, or start statements.
constexpr std::array<std::string_view, 19> kReserved = {
    "and",  "or",   "not", "between", "in",    "like",   "true", "false", "case",  "when",
    "then", "else", "end", "as",      "input", "output", "null", "is",    "exists"};

constexpr std::array<std::string_view, 17> kOperators = {
    "select",  "project", "join",      "semijoin", "antijoin",   "left",   "right",
    "full",    "product", "union",     "intersect", "except",    "difference",
    "reduce",  "sort",    "limit",     "distinct"};

constexpr std::array<std::string_view, 5> kAggregates = {"sum", "count", "min", "max", "avg"};
constexpr std::array<std::string_view, 7> kFunctions = {
    "year", "extract", "cast", "starts_with", "coalesce", "substring", "scalar"};
constexpr std::array<std::string_view, 6> kInputOptions = {"from",   "format", "delimiter",
                                                           "header", "sorted", "null"};
constexpr std::array<std::string_view, 7> kTypeNames = {"bool", "i32",  "i64",   "f32",
                                                        "f64",  "date", "string"};

bool is_reserved(std::string_view w) {
  return std::find(kReserved.begin(), kReserved.end(), w) != kReserved.end();
}

template <size_t N>
bool one_of(std::string_view w, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), w) != set.end();
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Optimal string alignment distance (Levenshtein plus adjacent transpositions).
// `budget` bounds the total work of all suggestions in one parse.
size_t edit_distance(std::string_view a, std::string_view b, size_t& budget) {
  size_t n = a.size(), m = b.size();
  budget -= std::min(budget, (n + 1) * (m + 1));
  std::vector<size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

struct Suggester {
  size_t budget = 20'000'000;
  // The closest candidate within a third of its length, or "".
  template <typename Range>
  std::string closest(std::string_view word, const Range& candidates) {
    std::string w = lower(word);
    std::string best;
    size_t best_d = SIZE_MAX;
    for (const auto& c : candidates) {
      std::string_view cand(c);
      if (budget == 0) break;
      if (cand == word) continue;
      if (cand.size() < 3) continue;  // one- and two-letter suggestions are noise
      size_t limit = std::max<size_t>(1, (cand.size() + 1) / 3);
      size_t diff = cand.size() > w.size() ? cand.size() - w.size() : w.size() - cand.size();
      if (diff > limit) continue;
      size_t d = edit_distance(w, lower(cand), budget);
      if (d <= limit && d < best_d) {
        best_d = d;
        best = std::string(cand);
      }
    }
    return best;
  }
  template <typename Range>
  std::string hint(std::string_view word, const Range& candidates) {
    std::string c = closest(word, candidates);
    return c.empty() ? std::string() : fmt::format("did you mean '{}'?", c);
  }
};

// A relation operand while parsing: a node built here or a name resolved later.
struct RelRef {
  NodeId id = -1;
  std::string name;  // set when a name reference
  SourceLoc loc;
};

// An expression with its tree height (bounded, so later recursive passes are safe).
struct PExpr {
  Expr e;
  int h = 1;
};

struct Definition {
  RelRef target;
  SourceLoc loc;
};

struct PendingInput {
  NodeId node;
  size_t slot;
  std::string name;
  SourceLoc loc;
};

bool before(const SourceLoc& a, const SourceLoc& b) {
  return std::pair(a.line, a.column) < std::pair(b.line, b.column);
}

// A `fixpoint { ... }` block while its rules are parsed.
struct FixpointGroup {
  SourceLoc loc;  // the `fixpoint` keyword
  int64_t max_iterations = 0;
  Program rules;
  std::vector<PendingInput> pending;  // names read by the rules, resolved at the '}'
  std::vector<std::string> names;     // the recursive relations, in order of first definition
  std::vector<SourceLoc> first_def;   // per name
};

class Parser {
 public:
  Parser(std::string_view text, std::string file) : file_(std::move(file)) {
    out_.source.assign(text);
    out_.file = file_;
  }

  ParsedProgram run() {
    toks_ = lex_ra(out_.source, file_, diags_, kMaxDiagnostics);
    while (cur().kind != TokKind::End && diags_.size() < kMaxDiagnostics) {
      size_t start = p_;
      try {
        parse_statement();
      } catch (const ParseAbort&) {
        synchronize(start);
      }
    }
    resolve_names();
    if (!diags_.empty()) {
      std::stable_sort(diags_.begin(), diags_.end(), [](const Diagnostic& a, const Diagnostic& b) {
        return std::pair(a.loc.line, a.loc.column) < std::pair(b.loc.line, b.loc.column);
      });
      if (diags_.size() > kMaxDiagnostics) diags_.resize(kMaxDiagnostics);
      if (diags_.size() == kMaxDiagnostics)
        diags_.push_back(Diagnostic{
            ErrorKind::Syntax, "too many errors; stopped here", SourceLoc{file_, 0, 0}, {}});
      throw UserError(std::move(diags_));
    }
    return std::move(out_);
  }

 private:
  // ---------------------------------------------------------------- tokens
  const Token& cur() const { return toks_[p_]; }
  const Token& peek(size_t k) const { return toks_[std::min(p_ + k, toks_.size() - 1)]; }
  const Token& prev() const { return toks_[p_ == 0 ? 0 : p_ - 1]; }
  const Token& advance() {
    const Token& t = toks_[p_];
    if (p_ + 1 < toks_.size()) ++p_;
    return t;
  }
  static bool is_word(const Token& t, std::string_view w) {
    return t.kind == TokKind::Ident && t.text == w;
  }
  SourceLoc loc(const Token& t) const { return SourceLoc{file_, t.line, t.column}; }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case TokKind::Ident:
        return fmt::format("'{}'", t.text);
      case TokKind::Int:
      case TokKind::Float:
        return t.text.size() <= 40 ? fmt::format("'{}'", t.text) : std::string("a number");
      case TokKind::String:
        return "a string";
      default:
        return std::string(tok_kind_name(t.kind));
    }
  }

  // ----------------------------------------------------------- diagnostics
  void report(ErrorKind kind, SourceLoc at, std::string msg, std::string hint = {}) {
    if (diags_.size() > kMaxDiagnostics) return;
    diags_.push_back(Diagnostic{kind, std::move(msg), std::move(at), std::move(hint)});
  }
  [[noreturn]] void fail(const Token& t, std::string msg, std::string hint = {}) {
    // An Error token was reported by the lexer already.
    if (t.kind != TokKind::Error)
      report(ErrorKind::Syntax, loc(t), std::move(msg), std::move(hint));
    throw ParseAbort{};
  }
  [[noreturn]] void fail_expected(std::string_view what, std::string hint = {}) {
    fail(cur(), fmt::format("expected {}, found {}", what, describe(cur())), std::move(hint));
  }
  const Token& expect(TokKind k, std::string_view what, std::string hint = {}) {
    if (cur().kind != k) fail_expected(what, std::move(hint));
    return advance();
  }
  void expect_word(std::string_view w, std::string hint = {}) {
    if (!is_word(cur(), w)) fail_expected(fmt::format("'{}'", w), std::move(hint));
    advance();
  }
  // A user-chosen name (relation, attribute, output): an identifier, not reserved.
  const Token& expect_name(std::string_view what) {
    const Token& t = cur();
    if (t.kind == TokKind::Ident && is_reserved(t.text)) {
      fail(t, fmt::format("'{}' is a reserved word and cannot be used as {}", t.text, what),
           "choose another name");
    }
    if (t.kind != TokKind::Ident) fail_expected(what);
    return advance();
  }

  // Skips the rest of a broken statement: up to and including the next ';', or up
  // to a token that surely starts a statement. Always makes progress.
  void synchronize(size_t statement_start) {
    if (p_ == statement_start) advance();
    while (cur().kind != TokKind::End) {
      if (cur().kind == TokKind::Semi) {
        advance();
        return;
      }
      if (is_word(cur(), "input") || is_word(cur(), "output")) return;
      if (cur().first_on_line && cur().kind == TokKind::Ident && peek(1).kind == TokKind::Eq &&
          !is_reserved(cur().text))
        return;
      if (at_fixpoint_keyword() && cur().first_on_line) return;
      if (group_ && cur().kind == TokKind::RBrace) return;  // the block's end
      advance();
    }
  }

  // `fixpoint` starting a block: a keyword only there (`fixpoint = r;` defines a name).
  bool at_fixpoint_keyword() const {
    return is_word(cur(), "fixpoint") &&
           (peek(1).kind == TokKind::LBrace || is_word(peek(1), "max"));
  }

  bool at_statement_start() const {
    if (is_word(cur(), "input") || is_word(cur(), "output")) return true;
    if (at_fixpoint_keyword() && cur().first_on_line) return true;
    if (group_ && cur().kind == TokKind::RBrace) return true;
    return cur().first_on_line && cur().kind == TokKind::Ident && !is_reserved(cur().text) &&
           peek(1).kind == TokKind::Eq;
  }

  // Requires the ';' that ends a statement. When it is missing but the next token
  // clearly starts a new statement, the error is reported and parsing goes on there.
  template <size_t N = 0>
  void end_statement(const std::array<std::string_view, N>* options = nullptr) {
    if (cur().kind == TokKind::Semi) {
      advance();
      return;
    }
    if (cur().kind == TokKind::Error) throw ParseAbort{};
    const Token& p = prev();
    std::string hint;
    if (cur().kind == TokKind::Ident && one_of(cur().text, kOperators)) {
      hint = fmt::format("did you forget '|>' before '{}'?", cur().text);
    } else if (cur().kind == TokKind::Ident && options != nullptr) {
      std::string s = suggest_.closest(cur().text, *options);
      if (!s.empty()) hint = fmt::format("did you mean '{}'?", s);
    }
    if (hint.empty()) hint = "every statement ends with ';'";
    if (cur().first_on_line || cur().kind == TokKind::End) {
      // Point just after the last token of the statement, like a C compiler.
      report(ErrorKind::Syntax, SourceLoc{file_, p.line, p.column + p.length},
             "expected ';' after statement", hint);
    } else {
      report(ErrorKind::Syntax, loc(cur()),
             fmt::format("expected ';' after statement, found {}", describe(cur())), hint);
    }
    if (at_statement_start()) return;
    throw ParseAbort{};
  }

  // ------------------------------------------------------------ statements
  void parse_statement() {
    const Token& t = cur();
    if (t.kind == TokKind::Semi) {
      advance();
      return;
    }
    if (is_word(t, "input")) return parse_input();
    if (is_word(t, "output")) return parse_output();
    if (t.kind == TokKind::Ident && peek(1).kind == TokKind::Eq) return parse_assignment();
    if (is_word(t, "fixpoint")) return parse_fixpoint();
    std::string hint;
    if (t.kind == TokKind::RBrace) hint = "this '}' closes no fixpoint block";
    if (t.kind == TokKind::Ident) {
      std::array<std::string_view, 3> kw = {"input", "output", "fixpoint"};
      hint = suggest_.hint(t.text, kw);
      if (hint.empty() && peek(1).kind == TokKind::Pipe)
        hint = "name the pipeline ('q = rel |> ...;') or output it ('output rel |> ... as q;')";
    }
    if (hint.empty())
      hint = "statements are 'input ...;', 'name = ...;', 'output ...;' and 'fixpoint { ... }'";
    // "inptu r(...)" most likely declares r: do not also report r as unknown.
    if (t.kind == TokKind::Ident && peek(1).kind == TokKind::Ident) broken_.insert(peek(1).text);
    fail(t, fmt::format("expected a statement, found {}", describe(t)), hint);
  }

  void define(const Token& name_tok, RelRef target) {
    define(name_tok.text, loc(name_tok), std::move(target));
  }
  void define(const std::string& name, const SourceLoc& at, RelRef target) {
    auto it = defs_.find(name);
    if (it != defs_.end()) {
      report(ErrorKind::DuplicateName, at, fmt::format("relation '{}' is already defined", name),
             fmt::format("the first definition is at line {}, column {}", it->second.loc.line,
                         it->second.loc.column));
      return;
    }
    defs_.emplace(name, Definition{std::move(target), at});
    names_.push_back(name);
  }

  void parse_input() {
    advance();  // input
    const Token& name = expect_name("a relation name");
    broken_.insert(name.text);
    expect(TokKind::LParen, "'(' and the attributes",
           "declare inputs as: input name(attr type [key], ...);");
    Schema schema;
    std::string first_nonkey;
    std::unordered_set<std::string> seen;
    for (;;) {
      const Token& attr = expect_name("an attribute name");
      std::string type_hint = fmt::format("types are {}", fmt::join(kTypeNames, ", "));
      if (cur().kind != TokKind::Ident) fail_expected("a type", type_hint);
      const Token& type_tok = advance();
      auto type = parse_type_name(type_tok.text);
      if (!type) {
        std::string h = suggest_.hint(type_tok.text, kTypeNames);
        fail(type_tok, fmt::format("unknown type '{}'", type_tok.text), h.empty() ? type_hint : h);
      }
      bool is_key = false, nullable = false;
      if (is_word(cur(), "null")) {
        advance();
        nullable = true;
      }
      if (is_word(cur(), "key")) {
        if (nullable)
          report(ErrorKind::InvalidArgument, loc(cur()),
                 fmt::format("key attribute '{}' cannot be nullable", attr.text),
                 "a key identifies a tuple, so it cannot be NULL");
        advance();
        is_key = true;
      }
      if (is_word(cur(), "null")) {
        report(ErrorKind::InvalidArgument, loc(cur()),
               fmt::format("key attribute '{}' cannot be nullable", attr.text),
               "a key identifies a tuple, so it cannot be NULL");
        advance();
      }
      if (is_key && !first_nonkey.empty()) {
        report(ErrorKind::InvalidArgument, loc(attr),
               fmt::format("key attribute '{}' follows non-key attribute '{}'", attr.text,
                           first_nonkey),
               "the key is a prefix: declare key attributes first");
      }
      if (!is_key && first_nonkey.empty()) first_nonkey = attr.text;
      if (is_key && first_nonkey.empty()) ++schema.key_size;
      if (!seen.insert(attr.text).second) {
        report(ErrorKind::DuplicateName, loc(attr),
               fmt::format("attribute '{}' is declared twice in '{}'", attr.text, name.text));
      }
      schema.attributes.push_back(Attribute{attr.text, *type, nullable});
      if (cur().kind == TokKind::Comma) {
        advance();
        continue;
      }
      if (cur().kind == TokKind::RParen) {
        advance();
        break;
      }
      fail_expected("',' or ')'");
    }

    RaInputSpec spec;
    spec.relation = name.text;
    spec.loc = loc(name);
    std::string format;
    std::optional<char> delimiter;
    std::optional<bool> header;
    std::unordered_set<std::string> given;
    std::vector<SortKey> sorted_by;
    while (cur().kind == TokKind::Ident && one_of(cur().text, kInputOptions)) {
      const Token& opt = advance();
      if (!given.insert(opt.text).second)
        report(ErrorKind::Syntax, loc(opt), fmt::format("option '{}' is given twice", opt.text));
      if (opt.text == "from") {
        const Token& path =
            expect(TokKind::String, "a file name in quotes", "from \"lineitem.tbl\"");
        if (path.text.empty()) report(ErrorKind::InvalidArgument, loc(path), "empty file name");
        spec.path = path.text;
      } else if (opt.text == "format") {
        if (cur().kind != TokKind::Ident) fail_expected("a format name", "formats are csv and tbl");
        const Token& f = advance();
        if (f.text != "csv" && f.text != "tbl") {
          std::array<std::string_view, 2> formats = {"csv", "tbl"};
          std::string h = suggest_.hint(f.text, formats);
          report(ErrorKind::InvalidArgument, loc(f), fmt::format("unknown format '{}'", f.text),
                 h.empty() ? "formats are csv and tbl" : h);
        }
        format = f.text;
      } else if (opt.text == "delimiter") {
        const Token& d = expect(TokKind::String, "a delimiter in quotes", "delimiter ';'");
        if (d.text == "\\t") {
          delimiter = '\t';
        } else if (d.text.size() != 1 || d.text[0] == '\n' || d.text[0] == '\r' ||
                   d.text[0] == '"') {
          report(ErrorKind::InvalidArgument, loc(d), "a delimiter is one character",
                 "write delimiter ';' (or '\\t' for a tab); '\"' cannot be a delimiter");
        } else {
          delimiter = d.text[0];
        }
      } else if (opt.text == "null") {
        const Token& m = expect(TokKind::String, "the text that stands for NULL, in quotes",
                                "null 'NA' reads fields 'NA' of nullable attributes as NULL");
        spec.null_marker = m.text;
      } else if (opt.text == "sorted") {
        if (!is_word(cur(), "by")) fail_expected("'by'", "sorted by a, b desc");
        advance();
        for (;;) {
          const Token& a = expect_name("an attribute the data is sorted by");
          SortKey k;
          k.attr = a.text;
          k.loc = loc(a);
          if (is_word(cur(), "asc")) {
            advance();
          } else if (is_word(cur(), "desc")) {
            advance();
            k.descending = true;
          }
          sorted_by.push_back(std::move(k));
          if (cur().kind != TokKind::Comma) break;
          advance();
        }
      } else {  // header
        if (is_word(cur(), "true") || is_word(cur(), "false")) {
          header = advance().text == "true";
        } else {
          fail_expected("true or false", "header true: the first line names the columns");
        }
      }
    }
    if (format.empty()) {
      const std::string& p = spec.path;
      format = p.size() >= 4 && lower(p.substr(p.size() - 4)) == ".tbl" ? "tbl" : "csv";
    }
    spec.format = format;
    spec.delimiter = delimiter.value_or(format == "tbl" ? '|' : ',');
    spec.header = header.value_or(format != "tbl");
    end_statement(&kInputOptions);

    Node n;
    n.kind = OpKind::Input;
    n.loc = loc(name);
    n.name = name.text;
    n.declared = std::move(schema);
    n.sort_keys = std::move(sorted_by);
    NodeId id = out_.program.add(std::move(n));
    broken_.erase(name.text);
    define(name, RelRef{id, {}, loc(name)});
    out_.input_files.push_back(std::move(spec));
  }

  void parse_assignment() {
    const Token& name = cur();
    if (is_reserved(name.text)) expect_name("a relation name");
    advance();
    broken_.insert(name.text);
    advance();  // =
    RelRef r = parse_rel_expr();
    end_statement();
    broken_.erase(name.text);
    define(name, std::move(r));
  }

  void parse_output() {
    advance();  // output
    const Token& first = cur();
    RelRef r = parse_rel_expr();
    std::string out_name;
    SourceLoc at;
    if (is_word(cur(), "as")) {
      advance();
      const Token& n = expect_name("an output name");
      out_name = n.text;
      at = loc(n);
    } else if (r.id < 0) {
      out_name = r.name;
      at = loc(first);
    } else {
      fail(cur(),
           fmt::format("expected 'as' and a name for this output, found {}", describe(cur())),
           "write 'output <pipeline> as <name>;'");
    }
    end_statement();
    Node n;
    n.kind = OpKind::Output;
    n.loc = at;
    n.name = std::move(out_name);
    add_node(std::move(n), {std::move(r)});
  }

  // --------------------------------------------------------------- fixpoint
  // fixpoint [max N] { name = relation; ... }: the names assigned in the block are its
  // recursive relations; every other name read there is an outer relation. At the '}'
  // the rules become a FixpointDef and each recursive relation a Fixpoint node of the
  // file's program, defined like any other name.
  void parse_fixpoint() {
    const Token& kw = advance();  // fixpoint
    FixpointGroup g;
    g.loc = loc(kw);
    try {
      if (is_word(cur(), "max")) {
        advance();
        g.max_iterations = parse_max_iterations();
      }
      if (cur().kind != TokKind::LBrace)
        fail_expected("'{' to open the fixpoint block",
                      "write 'fixpoint [max N] { name = relation; ... }'");
    } catch (const ParseAbort&) {
      // Go on at the block's '{' when there is one, so its rules still define their names.
      if (!skip_to_open_brace()) throw;
    }
    const Token& open = advance();  // {
    struct GroupScope {
      Parser& p;
      ~GroupScope() { p.group_ = nullptr; }
    } scope{*this};
    group_ = &g;
    bool any_rule = parse_fixpoint_body(kw, open);
    group_ = nullptr;
    if (!any_rule)
      report(ErrorKind::Syntax, loc(open), "a fixpoint block needs at least one rule",
             "write 'fixpoint { name = relation; ... }'");
    finish_fixpoint(std::move(g));
  }

  // After a broken fixpoint header: moves to the block's '{' if it comes before the
  // statement ends.
  bool skip_to_open_brace() {
    for (size_t q = p_; q < toks_.size(); ++q) {
      TokKind k = toks_[q].kind;
      if (k == TokKind::LBrace) {
        p_ = q;
        return true;
      }
      if (k == TokKind::Semi || k == TokKind::RBrace || k == TokKind::End) return false;
    }
    return false;
  }

  int64_t parse_max_iterations() {
    std::string hint = "leave 'max' out to iterate until no relation changes";
    if (cur().kind == TokKind::Minus && peek(1).kind == TokKind::Int) {
      report(ErrorKind::Syntax, loc(cur()), "fixpoint 'max' must be at least 1", hint);
      advance();
      advance();
      return 0;
    }
    const Token& t = expect(TokKind::Int, "the maximum number of iterations after 'max'",
                            "write 'fixpoint max 10 { ... }'");
    if (t.suffix != 0 && t.suffix != 'L') fail_expected("an integer after 'max'");
    if (t.int_value == 0) {
      report(ErrorKind::Syntax, loc(t), "fixpoint 'max' must be at least 1", hint);
      return 0;
    }
    if (t.int_value > static_cast<uint64_t>(kMaxFixpointIterations)) {
      report(ErrorKind::Syntax, loc(t),
             fmt::format("fixpoint 'max' is too large (at most {})", kMaxFixpointIterations), hint);
      return 0;
    }
    return static_cast<int64_t>(t.int_value);
  }

  // The rules up to the '}' that closes the block opened by `open`. Returns whether
  // there was any rule (even a broken one).
  bool parse_fixpoint_body(const Token& kw, const Token& open) {
    bool any_rule = false;
    int nested = 0;  // blocks of misplaced inner fixpoints still open (reported)
    while (diags_.size() < kMaxDiagnostics) {
      const Token& t = cur();
      if (t.kind == TokKind::RBrace) {
        advance();
        if (nested == 0) return any_rule;
        --nested;
        continue;
      }
      if (t.kind == TokKind::End) {
        const Token& p = prev();
        report(ErrorKind::Syntax, SourceLoc{file_, p.line, p.column + p.length},
               "expected '}' at the end of the fixpoint block",
               fmt::format("the block opened at line {}, column {} is not closed", open.line,
                           open.column));
        return true;  // do not also report an empty block
      }
      size_t start = p_;
      try {
        if (t.kind == TokKind::Semi) {
          advance();
        } else if (is_word(t, "fixpoint") && peek(1).kind != TokKind::Eq) {
          // Reported, then its rules are read as rules of this group (no cascade).
          report(ErrorKind::Syntax, loc(t), "fixpoints do not nest",
                 fmt::format("put mutually recursive relations in one block, or define the inner "
                             "fixpoint outside the one at line {}, column {}",
                             kw.line, kw.column));
          advance();
          if (is_word(cur(), "max")) {
            advance();
            if (cur().kind == TokKind::Minus) advance();
            if (cur().kind == TokKind::Int) advance();
          }
          expect(TokKind::LBrace, "'{'");
          ++nested;
        } else if (is_word(t, "input") || is_word(t, "output")) {
          any_rule = true;
          fail(t, fmt::format("'{}' cannot appear inside a fixpoint block", t.text),
               t.text == "output"
                   ? fmt::format("close the block (opened at line {}, column {}) with '}}' and "
                                 "write outputs after it",
                                 open.line, open.column)
                   : std::string("declare inputs outside the block; its rules can read them"));
        } else if (t.kind == TokKind::Ident && peek(1).kind == TokKind::Eq) {
          any_rule = true;
          parse_rule();
        } else {
          any_rule = true;
          std::string hint = "a fixpoint block holds rules 'name = relation;'";
          if (t.kind == TokKind::Ident && peek(1).kind == TokKind::Pipe)
            hint = "a rule names the relation it defines: 'name = rel |> ...;'";
          fail(t, fmt::format("expected a rule, found {}", describe(t)), hint);
        }
      } catch (const ParseAbort&) {
        synchronize(start);
      }
    }
    return true;
  }

  // name = relation; inside a fixpoint block: one rule of the recursive relation `name`.
  void parse_rule() {
    const Token& name = cur();
    if (is_reserved(name.text)) expect_name("a relation name");
    advance();
    advance();  // =
    FixpointGroup& g = *group_;
    if (std::find(g.names.begin(), g.names.end(), name.text) == g.names.end()) {
      g.names.push_back(name.text);
      g.first_def.push_back(loc(name));
    }
    RelRef r = parse_rel_expr();
    end_statement();
    Node n;
    n.kind = OpKind::Output;
    n.loc = loc(name);
    n.name = name.text;
    add_node(std::move(n), {std::move(r)});
  }

  // Resolves the names the rules read (the group's own relations or outer ones, one
  // Input node each) and adds the group's Fixpoint nodes to the file's program.
  void finish_fixpoint(FixpointGroup g) {
    std::vector<std::string> read;  // in order of first use in the text
    std::unordered_map<std::string, SourceLoc> first_use;
    for (const PendingInput& p : g.pending) {
      auto [it, added] = first_use.emplace(p.name, p.loc);
      if (added)
        read.push_back(p.name);
      else if (before(p.loc, it->second))
        it->second = p.loc;
    }
    std::stable_sort(read.begin(), read.end(), [&](const std::string& a, const std::string& b) {
      return before(first_use.at(a), first_use.at(b));
    });
    auto def = std::make_shared<FixpointDef>();
    def->names = g.names;
    def->max_iterations = g.max_iterations;
    def->loc = g.loc;
    // The rules' program: their Input nodes first (in order of first use), then the
    // nodes of the rules as parsed, renumbered after them.
    Program rules;
    std::unordered_map<std::string, NodeId> input_of;
    for (const std::string& name : read) {
      Node in;
      in.kind = OpKind::Input;
      in.loc = first_use.at(name);
      in.name = name;
      input_of[name] = rules.add(std::move(in));
      if (std::find(g.names.begin(), g.names.end(), name) == g.names.end())
        def->outer.push_back(name);
    }
    const NodeId shift = static_cast<NodeId>(read.size());
    for (Node n : g.rules.nodes()) {
      for (NodeId& in : n.inputs)
        if (in >= 0) in += shift;
      rules.add(std::move(n));
    }
    for (const PendingInput& p : g.pending)
      rules.mutable_node(p.node + shift).inputs[p.slot] = input_of.at(p.name);
    def->rules = std::make_shared<const Program>(std::move(rules));

    std::vector<RelRef> outer;
    for (const std::string& name : def->outer)
      outer.push_back(RelRef{-1, name, first_use.at(name)});
    std::shared_ptr<const FixpointDef> shared = std::move(def);
    for (size_t i = 0; i < g.names.size(); ++i) {
      Node n;
      n.kind = OpKind::Fixpoint;
      n.loc = g.first_def[i];
      n.name = g.names[i];
      n.fixpoint = shared;
      n.fixpoint_index = static_cast<int32_t>(i);
      NodeId id = add_node(std::move(n), outer);
      define(g.names[i], g.first_def[i], RelRef{id, {}, g.first_def[i]});
    }
  }

  // ------------------------------------------------------------- relations
  // Adds a node to the program being built: the file's, or a fixpoint block's rules.
  NodeId add_node(Node n, std::vector<RelRef> ins) {
    Program& prog = group_ ? group_->rules : out_.program;
    std::vector<PendingInput>& pending = group_ ? group_->pending : pending_;
    n.inputs.assign(ins.size(), -1);
    for (size_t i = 0; i < ins.size(); ++i)
      if (ins[i].id >= 0) n.inputs[i] = ins[i].id;
    NodeId id = prog.add(std::move(n));
    for (size_t i = 0; i < ins.size(); ++i)
      if (ins[i].id < 0) pending.push_back(PendingInput{id, i, ins[i].name, ins[i].loc});
    return id;
  }
  RelRef node_ref(Node n, std::vector<RelRef> ins) {
    SourceLoc l = n.loc;
    return RelRef{add_node(std::move(n), std::move(ins)), {}, std::move(l)};
  }

  // Collects the relations of scalar(...) subqueries in the expressions of one step: each
  // becomes an input of the step's node after its `first` own inputs.
  struct SubqueryScope {
    Parser& p;
    SubqueryScope* saved;
    int32_t first;
    std::vector<RelRef> rels;
    SubqueryScope(Parser& parser, int32_t own_inputs)
        : p(parser), saved(parser.subqueries_), first(own_inputs) {
      p.subqueries_ = this;
    }
    ~SubqueryScope() { p.subqueries_ = saved; }
    SubqueryScope(const SubqueryScope&) = delete;
    SubqueryScope& operator=(const SubqueryScope&) = delete;
    int32_t add(RelRef r) {
      rels.push_back(std::move(r));
      return first + static_cast<int32_t>(rels.size()) - 1;
    }
    std::vector<RelRef> inputs(RelRef in) {
      std::vector<RelRef> v;
      v.push_back(std::move(in));
      return append(std::move(v));
    }
    std::vector<RelRef> append(std::vector<RelRef> v) {
      for (auto& r : rels) v.push_back(std::move(r));
      rels.clear();
      return v;
    }
  };

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxNestingDepth) {
        --p.depth_;
        p.fail(p.cur(), fmt::format("nested too deeply (more than {} levels)", kMaxNestingDepth),
               "split the expression or pipeline into named parts");
      }
    }
    ~DepthGuard() { --p.depth_; }
  };

  RelRef parse_rel_expr() {
    DepthGuard g(*this);
    RelRef r = parse_rel_primary();
    while (cur().kind == TokKind::Pipe) {
      advance();
      r = parse_step(std::move(r));
    }
    return r;
  }

  RelRef parse_rel_primary() {
    const Token& t = cur();
    if (t.kind == TokKind::LParen) {
      advance();
      RelRef r = parse_rel_expr();
      expect(TokKind::RParen, "')'",
             fmt::format("to close the '(' at line {}, column {}", t.line, t.column));
      return r;
    }
    if (t.kind == TokKind::Ident && peek(1).kind == TokKind::LParen) {
      if (t.text == "union" || t.text == "intersect" || t.text == "product" || t.text == "except" ||
          t.text == "difference" || t.text == "distinct")
        return parse_rel_function();
      std::array<std::string_view, 6> fns = {"union",  "intersect",  "product",
                                             "except", "difference", "distinct"};
      std::string h = suggest_.hint(t.text, fns);
      fail(t, fmt::format("'{}' is not a relation function", t.text),
           h.empty() ? "relation functions are union, intersect, except, product and distinct" : h);
    }
    if (t.kind == TokKind::Ident && !is_reserved(t.text)) {
      advance();
      return RelRef{-1, t.text, loc(t)};
    }
    if (t.kind == TokKind::Ident && is_reserved(t.text))
      fail(t, fmt::format("expected a relation, found the reserved word '{}'", t.text));
    fail_expected("a relation name");
  }

  // union(a, b, ...), intersect(a, b, ...), product(a, b, ...), except(a, b), distinct(a)
  RelRef parse_rel_function() {
    const Token& fn = advance();
    advance();  // (
    std::vector<RelRef> args;
    for (;;) {
      args.push_back(parse_rel_expr());
      if (cur().kind == TokKind::Comma) {
        advance();
        continue;
      }
      expect(TokKind::RParen, "',' or ')'");
      break;
    }
    const std::string& f = fn.text;
    if (f == "distinct") {
      if (args.size() != 1) fail(fn, "distinct(...) takes one relation");
      Node n;
      n.kind = OpKind::Distinct;
      n.loc = loc(fn);
      return node_ref(std::move(n), {std::move(args[0])});
    }
    bool binary_only = f == "except" || f == "difference";
    if (args.size() < 2 || (binary_only && args.size() != 2)) {
      fail(fn, fmt::format("{}(...) takes {} relations", f, binary_only ? "two" : "two or more"));
    }
    OpKind k = f == "union"       ? OpKind::Union
               : f == "product"   ? OpKind::Product
               : f == "intersect" ? OpKind::Intersect
                                  : OpKind::Difference;
    RelRef acc = std::move(args[0]);
    for (size_t i = 1; i < args.size(); ++i) {
      Node n;
      n.kind = k;
      n.loc = loc(fn);
      acc = node_ref(std::move(n), {std::move(acc), std::move(args[i])});
    }
    return acc;
  }

  RelRef parse_step(RelRef in) {
    const Token& op = cur();
    if (op.kind != TokKind::Ident) {
      fail_expected("an operator after '|>'",
                    fmt::format("operators are {}", fmt::join(kOperators, ", ")));
    }
    const std::string& w = op.text;
    Node n;
    n.loc = loc(op);
    if (w == "select") {
      advance();
      n.kind = OpKind::Select;
      SubqueryScope scope(*this, 1);
      n.predicate = parse_expr().e;
      return node_ref(std::move(n), scope.inputs(std::move(in)));
    }
    if (w == "project") {
      advance();
      n.kind = OpKind::Project;
      SubqueryScope scope(*this, 1);
      for (;;) {
        const Token& start = cur();
        PExpr e = parse_expr();
        NamedExpr ne;
        ne.loc = loc(start);
        if (is_word(cur(), "as")) {
          advance();
          const Token& nm = expect_name("an attribute name");
          ne.name = nm.text;
        } else if (e.e->kind == ExprKind::Attr) {
          ne.name = e.e->text;
        } else {
          fail(start, "a computed attribute needs a name", "add 'as <name>' after the expression");
        }
        ne.expr = std::move(e.e);
        n.exprs.push_back(std::move(ne));
        if (cur().kind != TokKind::Comma) break;
        advance();
      }
      return node_ref(std::move(n), scope.inputs(std::move(in)));
    }
    const bool outer = (w == "left" || w == "right" || w == "full") &&
                       (is_word(peek(1), "join") ||
                        (is_word(peek(1), "outer") && is_word(peek(2), "join")));
    if (w == "join" || w == "semijoin" || w == "antijoin" || outer) {
      advance();
      if (outer) {
        if (is_word(cur(), "outer")) advance();
        advance();  // join
      }
      n.kind = OpKind::Join;
      n.join_kind = w == "join"       ? JoinKind::Inner
                    : w == "semijoin" ? JoinKind::Semi
                    : w == "antijoin" ? JoinKind::Anti
                    : w == "left"     ? JoinKind::Left
                    : w == "right"    ? JoinKind::Right
                                      : JoinKind::Full;
      RelRef right = parse_rel_primary();
      expect_word("on", fmt::format("write '{} <relation> on left_attr = right_attr'", w));
      for (;;) {
        const Token& l = expect_name("a key attribute of the left relation");
        std::string r = l.text;
        if (cur().kind == TokKind::Eq) {
          advance();
          r = expect_name("a key attribute of the right relation").text;
        }
        if (cur().kind == TokKind::Lt || cur().kind == TokKind::Le || cur().kind == TokKind::Gt ||
            cur().kind == TokKind::Ge || cur().kind == TokKind::Ne || (cur().kind == TokKind::Eq)) {
          fail(cur(), "join keys are equalities of attributes",
               "put other conditions after 'where'");
        }
        n.left_keys.push_back(l.text);
        n.right_keys.push_back(std::move(r));
        if (is_word(cur(), "and") || cur().kind == TokKind::Comma) {
          advance();
          continue;
        }
        break;
      }
      SubqueryScope scope(*this, 2);
      if (is_word(cur(), "where")) {
        advance();
        n.predicate = parse_expr().e;
      }
      std::vector<RelRef> ins;
      ins.push_back(std::move(in));
      ins.push_back(std::move(right));
      return node_ref(std::move(n), scope.append(std::move(ins)));
    }
    if (w == "product" || w == "union" || w == "intersect" || w == "except" || w == "difference") {
      advance();
      n.kind = w == "product"     ? OpKind::Product
               : w == "union"     ? OpKind::Union
               : w == "intersect" ? OpKind::Intersect
                                  : OpKind::Difference;
      if (w == "union" && is_word(cur(), "all")) {
        advance();
        n.kind = OpKind::UnionAll;
      }
      RelRef right = parse_rel_primary();
      return node_ref(std::move(n), {std::move(in), std::move(right)});
    }
    if (w == "reduce") {
      advance();
      n.kind = OpKind::Reduce;
      SubqueryScope scope(*this, 1);
      parse_reduce(n);
      return node_ref(std::move(n), scope.inputs(std::move(in)));
    }
    if (w == "sort") {
      advance();
      n.kind = OpKind::Sort;
      for (;;) {
        const Token& a = expect_name("an attribute to sort by");
        SortKey k;
        k.attr = a.text;
        k.loc = loc(a);
        if (is_word(cur(), "asc")) {
          advance();
        } else if (is_word(cur(), "desc")) {
          advance();
          k.descending = true;
        }
        n.sort_keys.push_back(std::move(k));
        if (cur().kind != TokKind::Comma) break;
        advance();
      }
      return node_ref(std::move(n), {std::move(in)});
    }
    if (w == "limit") {
      advance();
      n.kind = OpKind::Limit;
      n.limit = parse_count("limit");
      if (is_word(cur(), "offset")) {
        advance();
        n.offset = parse_count("offset");
      }
      return node_ref(std::move(n), {std::move(in)});
    }
    if (w == "distinct") {
      advance();
      n.kind = OpKind::Distinct;
      return node_ref(std::move(n), {std::move(in)});
    }
    std::string h = suggest_.hint(w, kOperators);
    if (h.empty() && (w == "filter" || w == "where")) h = "did you mean 'select'?";
    if (h.empty() && (w == "group" || w == "aggregate" || w == "groupby"))
      h = "did you mean 'reduce'?";
    if (h.empty() && (w == "order" || w == "orderby")) h = "did you mean 'sort'?";
    if (h.empty() && w == "minus") h = "did you mean 'except'?";
    if (h.empty() && (w == "left" || w == "right" || w == "full"))
      h = fmt::format("an outer join is written '{} join <relation> on ...'", w);
    if (h.empty()) h = fmt::format("operators are {}", fmt::join(kOperators, ", "));
    fail(op, fmt::format("unknown operator '{}'", w), h);
  }

  int64_t parse_count(std::string_view what) {
    if (cur().kind == TokKind::Minus)
      fail(cur(), fmt::format("{} needs a non-negative integer", what));
    const Token& t = expect(TokKind::Int, fmt::format("an integer after '{}'", what));
    if (t.int_value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(t, fmt::format("{} is out of range", what));
    return static_cast<int64_t>(t.int_value);
  }

  bool at_aggregate_start() const {
    return cur().kind == TokKind::Ident &&
           (peek(1).kind == TokKind::Eq || peek(1).kind == TokKind::LParen);
  }

  void parse_reduce(Node& n) {
    const Token& kw = prev();
    if (is_word(cur(), "by") && peek(1).kind != TokKind::Eq && peek(1).kind != TokKind::LParen) {
      advance();
      for (;;) {
        const Token& k = expect_name("a group key attribute");
        n.group_keys.push_back(k.text);
        if (cur().kind == TokKind::Comma) {
          advance();
          if (at_aggregate_start()) break;
          continue;
        }
        break;
      }
    }
    if (at_aggregate_start()) {
      for (;;) {
        n.aggregates.push_back(parse_aggregate());
        if (cur().kind != TokKind::Comma) break;
        advance();
      }
    } else if (n.group_keys.empty()) {
      fail(cur().kind == TokKind::End ? kw : cur(),
           fmt::format("expected 'by' or an aggregate after 'reduce', found {}", describe(cur())),
           "write 'reduce by k1, k2 total = sum(x), n = count()'");
    }
  }

  Aggregate parse_aggregate() {
    Aggregate a;
    const Token& first = cur();
    a.loc = loc(first);
    const Token* name_tok = nullptr;
    if (peek(1).kind == TokKind::Eq) {
      name_tok = &expect_name("an aggregate name");
      advance();  // =
    }
    const Token& fn = cur();
    if (fn.kind != TokKind::Ident || peek(1).kind != TokKind::LParen) {
      fail_expected("an aggregate such as sum(x) or count()");
    }
    if (!one_of(fn.text, kAggregates)) {
      std::string h = suggest_.hint(fn.text, kAggregates);
      fail(fn, fmt::format("unknown aggregate '{}'", fn.text),
           h.empty() ? "aggregates are sum, count, min, max and avg" : h);
    }
    advance();
    advance();  // (
    if (is_word(cur(), "distinct")) {
      advance();
      a.distinct = true;
    }
    if (fn.text == "count") {
      a.func = AggFunc::Count;
      if (cur().kind == TokKind::Star && !a.distinct) {
        advance();
      } else if (cur().kind != TokKind::RParen) {
        a.arg = parse_expr().e;  // count(x): the tuples where x is not NULL
      } else if (a.distinct) {
        fail(cur(), "count(distinct) needs an argument", "write count(distinct x)");
      }
    } else {
      a.func = fn.text == "sum"   ? AggFunc::Sum
               : fn.text == "min" ? AggFunc::Min
               : fn.text == "max" ? AggFunc::Max
                                  : AggFunc::Avg;
      if (cur().kind == TokKind::RParen || cur().kind == TokKind::Star)
        fail(cur(), fmt::format("{} needs an argument", fn.text));
      a.arg = parse_expr().e;
    }
    expect(TokKind::RParen, "')'");
    if (name_tok == nullptr) {
      if (!is_word(cur(), "as"))
        fail_expected("'as' and a name for the aggregate",
                      fmt::format("write 'name = {}(...)' or '{}(...) as name'", fn.text, fn.text));
      advance();
      name_tok = &expect_name("an aggregate name");
    }
    a.name = name_tok->text;
    switch (cur().kind) {
      case TokKind::Plus:
      case TokKind::Minus:
      case TokKind::Star:
      case TokKind::Slash:
      case TokKind::Percent:
        fail(cur(), "an aggregate is a single call such as sum(x)",
             "compute with the aggregates in a '|> project' after the reduce");
      default:
        break;
    }
    return a;
  }

  // ----------------------------------------------------------- expressions
  PExpr make(Expr e, std::initializer_list<int> heights) {
    int h = 1;
    for (int x : heights) h = std::max(h, x + 1);
    if (h > kMaxExpressionHeight) {
      fail(cur(), fmt::format("expression is too deep (more than {} levels)", kMaxExpressionHeight),
           "split it, e.g. with an 'in (...)' list or intermediate projections");
    }
    return PExpr{std::move(e), h};
  }

  PExpr parse_expr() {
    DepthGuard g(*this);
    return parse_or();
  }

  PExpr parse_or() {
    PExpr l = parse_and();
    while (is_word(cur(), "or")) {
      SourceLoc at = loc(advance());
      PExpr r = parse_and();
      l = make(make_binary(BinaryOp::Or, l.e, r.e, at), {l.h, r.h});
    }
    return l;
  }

  PExpr parse_and() {
    PExpr l = parse_not();
    while (is_word(cur(), "and")) {
      SourceLoc at = loc(advance());
      PExpr r = parse_not();
      l = make(make_binary(BinaryOp::And, l.e, r.e, at), {l.h, r.h});
    }
    return l;
  }

  PExpr parse_not() {
    if (is_word(cur(), "not")) {
      DepthGuard g(*this);
      SourceLoc at = loc(advance());
      PExpr x = parse_not();
      return make(make_unary(UnaryOp::Not, x.e, at), {x.h});
    }
    return parse_comparison();
  }

  static std::optional<BinaryOp> comparison_op(TokKind k) {
    switch (k) {
      case TokKind::Eq:
        return BinaryOp::Eq;
      case TokKind::Ne:
        return BinaryOp::Ne;
      case TokKind::Lt:
        return BinaryOp::Lt;
      case TokKind::Le:
        return BinaryOp::Le;
      case TokKind::Gt:
        return BinaryOp::Gt;
      case TokKind::Ge:
        return BinaryOp::Ge;
      default:
        return std::nullopt;
    }
  }
  bool at_comparison() const {
    if (comparison_op(cur().kind)) return true;
    if (is_word(cur(), "is")) return true;
    if (is_word(cur(), "between") || is_word(cur(), "in") || is_word(cur(), "like")) return true;
    return is_word(cur(), "not") &&
           (is_word(peek(1), "between") || is_word(peek(1), "in") || is_word(peek(1), "like"));
  }

  PExpr parse_comparison() {
    PExpr l = parse_additive();
    if (!at_comparison()) return l;
    PExpr result;
    if (auto op = comparison_op(cur().kind)) {
      SourceLoc at = loc(advance());
      PExpr r = parse_additive();
      result = make(make_binary(*op, l.e, r.e, at), {l.h, r.h});
    } else if (is_word(cur(), "is")) {
      SourceLoc at = loc(advance());
      bool negated = false;
      if (is_word(cur(), "not")) {
        advance();
        negated = true;
      }
      if (!is_word(cur(), "null"))
        fail_expected("'null' after 'is'", "write 'x is null' or 'x is not null'");
      advance();
      result = make(negated ? is_not_null(l.e, at) : is_null(l.e, at), {l.h + 1});
    } else {
      bool negated = false;
      SourceLoc not_at;
      if (is_word(cur(), "not")) {
        negated = true;
        not_at = loc(advance());
      }
      const Token& kw = advance();
      SourceLoc at = loc(kw);
      if (kw.text == "between") {
        PExpr lo = parse_additive();
        expect_word("and", "write 'x between low and high'");
        PExpr hi = parse_additive();
        result = make(between(l.e, lo.e, hi.e, at), {l.h, lo.h, hi.h});
      } else if (kw.text == "in") {
        const Token& open =
            expect(TokKind::LParen, "'(' and a list of values", "write 'x in (1, 2, 3)'");
        int h = l.h;
        if (cur().kind == TokKind::RParen) fail(cur(), "an 'in' list needs at least one value");
        std::vector<Expr> values = parse_expr_list(
            fmt::format("to close the '(' at line {}, column {}", open.line, open.column), h);
        result = make(in_list(l.e, std::move(values), at), {h});
      } else {  // like
        if (cur().kind != TokKind::String)
          fail_expected("a pattern in quotes after 'like'",
                        "like takes a constant pattern: s like 'a%'");
        std::string pattern = advance().text;
        result = make(like(l.e, std::move(pattern), at), {l.h});
      }
      if (negated) result = make(make_unary(UnaryOp::Not, result.e, not_at), {result.h});
    }
    if (at_comparison()) {
      fail(cur(), "comparisons cannot be chained", "write 'a < b and b < c'");
    }
    return result;
  }

  // Expressions separated by ',' up to and including the closing ')'; h becomes the
  // largest of their heights and h.
  std::vector<Expr> parse_expr_list(const std::string& close_hint, int& h) {
    std::vector<Expr> values;
    for (;;) {
      PExpr v = parse_expr();
      h = std::max(h, v.h);
      values.push_back(std::move(v.e));
      if (cur().kind == TokKind::Comma) {
        advance();
        continue;
      }
      expect(TokKind::RParen, "',' or ')'", close_hint);
      return values;
    }
  }

  PExpr parse_additive() {
    PExpr l = parse_multiplicative();
    while (cur().kind == TokKind::Plus || cur().kind == TokKind::Minus) {
      BinaryOp op = cur().kind == TokKind::Plus ? BinaryOp::Add : BinaryOp::Sub;
      SourceLoc at = loc(advance());
      PExpr r = parse_multiplicative();
      l = make(make_binary(op, l.e, r.e, at), {l.h, r.h});
    }
    return l;
  }

  PExpr parse_multiplicative() {
    PExpr l = parse_unary();
    for (;;) {
      BinaryOp op;
      if (cur().kind == TokKind::Star)
        op = BinaryOp::Mul;
      else if (cur().kind == TokKind::Slash)
        op = BinaryOp::Div;
      else if (cur().kind == TokKind::Percent)
        op = BinaryOp::Mod;
      else
        break;
      SourceLoc at = loc(advance());
      PExpr r = parse_unary();
      l = make(make_binary(op, l.e, r.e, at), {l.h, r.h});
    }
    return l;
  }

  PExpr parse_unary() {
    if (cur().kind == TokKind::Minus) {
      const Token& minus = advance();
      if (cur().kind == TokKind::Int || cur().kind == TokKind::Float)
        return number_literal(advance(), true, loc(minus));
      DepthGuard g(*this);
      PExpr x = parse_unary();
      return make(make_unary(UnaryOp::Neg, x.e, loc(minus)), {x.h});
    }
    if (cur().kind == TokKind::Plus) {
      fail(cur(), "unexpected '+'", "there is no unary plus: write the value alone");
    }
    return parse_primary();
  }

  PExpr number_literal(const Token& t, bool negative, SourceLoc at) {
    if (t.kind == TokKind::Float) {
      double v = negative ? -t.float_value : t.float_value;
      Value val = t.suffix == 'f' ? Value::f32(static_cast<float>(v)) : Value::f64(v);
      return PExpr{lit(std::move(val), std::move(at)), 1};
    }
    constexpr uint64_t kMinMagnitude = uint64_t{1} << 63;
    if (!negative && t.int_value >= kMinMagnitude) {
      fail(t, fmt::format("integer '{}' is out of range for i64", t.text));
    }
    int64_t v = negative ? (t.int_value == kMinMagnitude ? std::numeric_limits<int64_t>::min()
                                                         : -static_cast<int64_t>(t.int_value))
                         : static_cast<int64_t>(t.int_value);
    Value val = t.suffix != 'L' && v >= std::numeric_limits<int32_t>::min() &&
                        v <= std::numeric_limits<int32_t>::max()
                    ? Value::i32(static_cast<int32_t>(v))
                    : Value::i64(v);
    return PExpr{lit(std::move(val), std::move(at)), 1};
  }

  PExpr parse_primary() {
    const Token& t = cur();
    switch (t.kind) {
      case TokKind::Int:
      case TokKind::Float:
        advance();
        return number_literal(t, false, loc(t));
      case TokKind::String:
        advance();
        return PExpr{lit(Value::string(t.text), loc(t)), 1};
      case TokKind::LParen: {
        advance();
        PExpr e = parse_expr();
        expect(TokKind::RParen, "')'",
               fmt::format("to close the '(' at line {}, column {}", t.line, t.column));
        return e;
      }
      case TokKind::Ident:
        break;
      default:
        fail_expected("an expression");
    }
    const std::string& w = t.text;
    if (w == "true" || w == "false") {
      advance();
      return PExpr{lit(Value::boolean(w == "true"), loc(t)), 1};
    }
    if (w == "null") {
      advance();
      return PExpr{null_value(loc(t)), 1};
    }
    if (w == "case") return parse_case();
    if (w == "date" && peek(1).kind == TokKind::String) {
      advance();
      const Token& s = advance();
      auto d = parse_date(s.text);
      if (!d) {
        fail(s, "invalid date literal",
             "dates are written date 'YYYY-MM-DD' with a real month and day");
      }
      return PExpr{lit(Value::date(*d), loc(t)), 1};
    }
    if (peek(1).kind == TokKind::LParen && !is_reserved(w)) return parse_call();
    if (is_reserved(w)) fail_expected("an expression");
    advance();
    return PExpr{col(w, loc(t)), 1};
  }

  PExpr parse_case() {
    DepthGuard g(*this);
    const Token& kw = advance();
    if (!is_word(cur(), "when"))
      fail_expected("'when'", "write 'case when cond then value ... else value end'");
    std::vector<std::pair<Expr, Expr>> branches;
    int h = 0;
    while (is_word(cur(), "when")) {
      advance();
      PExpr c = parse_expr();
      expect_word("then");
      PExpr v = parse_expr();
      h = std::max({h, c.h, v.h});
      branches.emplace_back(std::move(c.e), std::move(v.e));
    }
    if (!is_word(cur(), "else"))
      fail_expected("'when' or 'else'", "a case needs an 'else' branch (it may be 'else null')");
    advance();
    PExpr otherwise = parse_expr();
    h = std::max(h, otherwise.h);
    expect_word("end",
                fmt::format("to close the 'case' at line {}, column {}", kw.line, kw.column));
    return make(case_when(std::move(branches), std::move(otherwise.e), loc(kw)), {h});
  }

  PExpr parse_call() {
    DepthGuard g(*this);
    const Token& fn = advance();
    const Token& open = advance();  // (
    std::string close_hint =
        fmt::format("to close the '(' at line {}, column {}", open.line, open.column);
    const std::string& f = fn.text;
    if (f == "cast") {
      PExpr x = parse_expr();
      expect_word("as", "write 'cast(x as i64)'");
      if (cur().kind != TokKind::Ident) fail_expected("a type name");
      const Token& tt = advance();
      auto type = parse_type_name(tt.text);
      if (!type) {
        std::string h = suggest_.hint(tt.text, kTypeNames);
        fail(tt, fmt::format("unknown type '{}'", tt.text),
             h.empty() ? fmt::format("types are {}", fmt::join(kTypeNames, ", ")) : h);
      }
      expect(TokKind::RParen, "')'", close_hint);
      return make(cast(x.e, *type, loc(fn)), {x.h});
    }
    if (f == "extract") {
      if (!is_word(cur(), "year")) {
        fail(cur(), fmt::format("expected 'year', found {}", describe(cur())),
             "only the year can be extracted: extract(year from d)");
      }
      advance();
      expect_word("from");
      PExpr x = parse_expr();
      expect(TokKind::RParen, "')'", close_hint);
      return make(year(x.e, loc(fn)), {x.h});
    }
    if (f == "year") {
      PExpr x = parse_expr();
      expect(TokKind::RParen, "')'", close_hint);
      return make(year(x.e, loc(fn)), {x.h});
    }
    if (f == "starts_with") {
      PExpr x = parse_expr();
      expect(TokKind::Comma, "','", "write starts_with(s, 'prefix')");
      if (cur().kind != TokKind::String)
        fail_expected("a prefix in quotes",
                      "starts_with takes a constant prefix: starts_with(s, 'ab')");
      std::string prefix = advance().text;
      expect(TokKind::RParen, "')'", close_hint);
      return make(starts_with(x.e, std::move(prefix), loc(fn)), {x.h});
    }
    if (f == "coalesce") {
      int h = 0;
      std::vector<Expr> values = parse_expr_list(close_hint, h);
      return make(coalesce(std::move(values), loc(fn)), {h});
    }
    if (f == "substring") {
      // substring(s, from, length) or SQL's substring(s from a for b)
      PExpr x = parse_expr();
      bool sql = is_word(cur(), "from");
      if (sql)
        advance();
      else
        expect(TokKind::Comma, "',' or 'from'", "write substring(s, 1, 2)");
      PExpr from = parse_expr();
      if (sql)
        expect_word("for", "write substring(s from 1 for 2)");
      else
        expect(TokKind::Comma, "','", "write substring(s, 1, 2)");
      PExpr len = parse_expr();
      expect(TokKind::RParen, "')'", close_hint);
      return make(substring(x.e, from.e, len.e, loc(fn)), {x.h, from.h, len.h});
    }
    if (f == "scalar") {
      if (!subqueries_)
        fail(fn, "a scalar subquery is not allowed here",
             "scalar(...) may stand in select, project, join residuals and reduce aggregates");
      SubqueryScope* outer_scope = subqueries_;
      subqueries_ = nullptr;  // the relation's own steps collect their own
      RelRef r = parse_rel_expr();
      subqueries_ = outer_scope;
      expect(TokKind::RParen, "')'", close_hint);
      return PExpr{scalar_subquery(outer_scope->add(std::move(r)), loc(fn)), 1};
    }
    if (one_of(f, kAggregates)) {
      fail(fn, fmt::format("aggregate '{}' is only allowed in reduce", f),
           fmt::format("write '|> reduce name = {}(...)'", f));
    }
    std::string h = suggest_.hint(f, kFunctions);
    fail(fn, fmt::format("unknown function '{}'", f),
         h.empty() ? fmt::format("functions are {}", fmt::join(kFunctions, ", ")) : h);
  }

  // --------------------------------------------------------------- names
  // Resolves every relation name used as an operator input, following aliases
  // (q = r;) to the node they stand for.
  void resolve_names() {
    std::unordered_map<std::string, NodeId> memo;  // -2: failed (reported)
    for (const PendingInput& p : pending_) {
      NodeId id = resolve(p.name, p.loc, memo);
      if (id >= 0) out_.program.mutable_node(p.node).inputs[p.slot] = id;
    }
  }

  NodeId resolve(const std::string& name, const SourceLoc& use,
                 std::unordered_map<std::string, NodeId>& memo) {
    std::vector<std::string> chain;
    std::unordered_set<std::string> on_chain;
    std::string cur_name = name;
    SourceLoc cur_loc = use;
    NodeId result = -2;
    for (;;) {
      if (auto m = memo.find(cur_name); m != memo.end()) {
        result = m->second;
        break;
      }
      auto it = defs_.find(cur_name);
      if (it == defs_.end()) {
        if (!broken_.count(cur_name)) {
          std::string h = suggest_.hint(cur_name, names_);
          if (h.empty())
            h = fmt::format("declare it with 'input {}(...)' or define it with '{} = ...;'",
                            cur_name, cur_name);
          report(ErrorKind::UnknownRelation, cur_loc,
                 fmt::format("unknown relation '{}'", cur_name), h);
        }
        break;
      }
      if (!on_chain.insert(cur_name).second) {
        std::string path;
        size_t from = std::find(chain.begin(), chain.end(), cur_name) - chain.begin();
        for (size_t i = from; i < chain.size() && i < from + 10; ++i) path += chain[i] + " -> ";
        path += cur_name;
        report(ErrorKind::Cycle, defs_.at(cur_name).loc,
               fmt::format("relation '{}' is defined in terms of itself", cur_name),
               fmt::format("the definitions form a cycle: {}", path));
        break;
      }
      chain.push_back(cur_name);
      const RelRef& target = it->second.target;
      if (target.id >= 0) {
        result = target.id;
        break;
      }
      cur_name = target.name;
      cur_loc = target.loc;
    }
    for (const std::string& n : chain) memo[n] = result;
    return result;
  }

  std::string file_;
  ParsedProgram out_;
  std::vector<Token> toks_;
  size_t p_ = 0;
  std::vector<Diagnostic> diags_;
  std::unordered_map<std::string, Definition> defs_;
  std::vector<std::string> names_;          // defined relation names, in order
  std::unordered_set<std::string> broken_;  // names whose definition failed to parse
  std::vector<PendingInput> pending_;
  FixpointGroup* group_ = nullptr;  // the fixpoint block being parsed, if any
  SubqueryScope* subqueries_ = nullptr;  // the step whose expressions are being parsed
  int depth_ = 0;
  Suggester suggest_;
};

}  // namespace

ParsedProgram parse_ra(std::string_view text, std::string file_name) {
  if (text.size() > (size_t{1} << 30)) {
    throw UserError(Diagnostic{ErrorKind::InvalidArgument,
                               "program text is larger than 1 GiB",
                               SourceLoc{file_name, 0, 0},
                               {}});
  }
  return Parser(text, std::move(file_name)).run();
}

ParsedProgram parse_ra_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UserError(Diagnostic{ErrorKind::InvalidArgument, fmt::format("cannot read '{}'", path),
                               SourceLoc{path, 0, 0}, "check the file name and its permissions"});
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    throw UserError(Diagnostic{ErrorKind::InvalidArgument,
                               fmt::format("error reading '{}'", path),
                               SourceLoc{path, 0, 0},
                               {}});
  }
  return parse_ra(ss.str(), path);
}

}  // namespace ranc
