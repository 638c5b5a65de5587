// The .ra language front end: parses program text into an unchecked ranc::Program
// (see docs/ra-language.md for the grammar and ranc/ir/program.h for the
// semantics). Every node and expression carries the SourceLoc it was written at.
//
//   ranc::ParsedProgram p = ranc::parse_ra_file("q6.ra");
//   ranc::Program checked = ranc::check(p.program);
//
// Errors are thrown as one UserError holding every diagnostic found (the parser
// recovers at ';' and goes on); render_diagnostics() formats them like a compiler.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ranc/data/error.h"
#include "ranc/ir/program.h"

namespace ranc {

// Where an input relation's data comes from, as declared by
//   input name(...) from "path" format csv delimiter ';' header false;
struct RaInputSpec {
  std::string relation;
  std::string path;      // as written; empty when the declaration has no `from`
  std::string format;    // "csv" or "tbl"
  char delimiter = ',';  // csv: ',' by default; tbl: '|'
  bool header = true;    // csv: true by default; tbl: false
  // `null 'NA'`: fields with this text are NULL in nullable attributes (so are empty
  // unquoted fields, always).
  std::optional<std::string> null_marker;
  SourceLoc loc;  // the relation name in the declaration
};

struct ParsedProgram {
  Program program;                       // unchecked; run ranc::check on it
  std::vector<RaInputSpec> input_files;  // one per `input` declaration, in order
  std::string source;                    // the text parsed
  std::string file;                      // the file name used in locations
};

// Limits that keep the parser and everything after it safe on any input.
inline constexpr int kMaxNestingDepth = 200;       // parentheses, case, sub-pipelines
inline constexpr int kMaxExpressionHeight = 1000;  // e.g. a + a + ... + a
inline constexpr size_t kMaxDiagnostics = 50;
// The largest `fixpoint max N`.
inline constexpr int64_t kMaxFixpointIterations = 1'000'000'000;

// Parses .ra text; throws UserError with all diagnostics (ErrorKind::Syntax for
// malformed text, UnknownRelation, DuplicateName, Cycle for relations defined in
// terms of themselves, InvalidArgument for bad declarations).
ParsedProgram parse_ra(std::string_view text, std::string file_name);
// Reads and parses a file; UserError (InvalidArgument) when it cannot be read.
ParsedProgram parse_ra_file(const std::string& path);

// Renders diagnostics like a compiler, one block per diagnostic:
//   file:line:col: error: message
//     <the source line>
//     ^~~~
//     hint: ...
// The source line is shown when the location has a line inside `source`.
std::string render_diagnostics(const UserError& e, std::string_view source);
std::string render_diagnostic(const Diagnostic& d, std::string_view source);

}  // namespace ranc
