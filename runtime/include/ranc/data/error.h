// The error kinds of ranc (STYLE.md habit 14): the user's mistake, an internal bug,
// a JIT/CUDA failure, and a failure while executing a program. Library code throws
// these; the CLI and the embedding application decide what to show.
#pragma once

#include <cstdint>
#include <source_location>
#include <stdexcept>
#include <string>
#include <vector>

namespace ranc {

// Where something was written: a C++ DSL call (file:line from std::source_location)
// or a position in a .ra file (file:line:column). line 0 means unknown.
struct SourceLoc {
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;

  static SourceLoc from(const std::source_location& loc);
  bool known() const { return line != 0; }
  // "file:line:column", "file:line" or "<unknown location>".
  std::string str() const;
  bool operator==(const SourceLoc&) const = default;
};

// What kind of user mistake an error reports. Tests assert on these.
enum class ErrorKind : uint8_t {
  Syntax,            // .ra text that does not parse
  UnknownAttribute,  // a name that is not an attribute of the input
  UnknownRelation,   // a relation name that is not defined
  DuplicateName,     // an attribute, relation or output name defined twice
  TypeMismatch,      // operands or operator arguments of the wrong type
  SchemaMismatch,    // set operation inputs that are not union-compatible, ...
  InvalidArgument,   // a bad parameter: negative limit, empty key list, ...
  Cycle,             // a relation that depends on itself
  NoOutput,          // a program without outputs
  InvalidGraph,      // dangling input reference, wrong arity, foreign node, ...
  Data,              // a bad CSV/.tbl row, a value that does not fit its type
  Execution,         // run-time failure of a program (division by zero, ...)
};
std::string_view error_kind_name(ErrorKind k);

// One diagnostic about the user's program or data.
struct Diagnostic {
  ErrorKind kind;
  std::string message;
  SourceLoc loc;
  std::string hint;  // optional, may be empty
  // "file:line:col: error: message [hint: ...]"
  std::string str() const;
};

// A mistake of the user (program or data). Holds one or more diagnostics; what()
// is all of them, one per line.
class UserError : public std::runtime_error {
 public:
  explicit UserError(Diagnostic d);
  explicit UserError(std::vector<Diagnostic> ds);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  const Diagnostic& first() const { return diagnostics_.front(); }
  ErrorKind kind() const { return diagnostics_.front().kind; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

// A bug in ranc: a broken invariant. Carries where it was detected.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what,
                         std::source_location loc = std::source_location::current());
};

// Throws InternalError when cond is false; for invariants, never for user input.
inline void internal_check(bool cond, const char* what,
                           std::source_location loc = std::source_location::current()) {
  if (!cond) throw InternalError(what, loc);
}
inline void internal_check(bool cond, const std::string& what,
                           std::source_location loc = std::source_location::current()) {
  if (!cond) throw InternalError(what, loc);
}

}  // namespace ranc
