// Error kinds and their messages.
#include "ranc/data/error.h"

#include <fmt/format.h>

namespace ranc {

SourceLoc SourceLoc::from(const std::source_location& loc) {
  return SourceLoc{loc.file_name(), static_cast<uint32_t>(loc.line()), 0};
}

std::string SourceLoc::str() const {
  if (!known()) return file.empty() ? "<unknown location>" : file;
  if (column == 0) return fmt::format("{}:{}", file, line);
  return fmt::format("{}:{}:{}", file, line, column);
}

std::string_view error_kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::Syntax:
      return "syntax error";
    case ErrorKind::UnknownAttribute:
      return "unknown attribute";
    case ErrorKind::UnknownRelation:
      return "unknown relation";
    case ErrorKind::DuplicateName:
      return "duplicate name";
    case ErrorKind::TypeMismatch:
      return "type error";
    case ErrorKind::SchemaMismatch:
      return "schema mismatch";
    case ErrorKind::InvalidArgument:
      return "invalid argument";
    case ErrorKind::Cycle:
      return "cycle";
    case ErrorKind::NoOutput:
      return "no output";
    case ErrorKind::InvalidGraph:
      return "invalid graph";
    case ErrorKind::Data:
      return "data error";
    case ErrorKind::Execution:
      return "execution error";
  }
  return "error";
}

std::string Diagnostic::str() const {
  std::string s = fmt::format("{}: error: {}", loc.str(), message);
  if (!hint.empty()) s += fmt::format(" (hint: {})", hint);
  return s;
}

static std::string join_diagnostics(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (size_t i = 0; i < ds.size(); ++i) {
    if (i) s += '\n';
    s += ds[i].str();
  }
  return s;
}

UserError::UserError(Diagnostic d) : UserError(std::vector<Diagnostic>{std::move(d)}) {}

UserError::UserError(std::vector<Diagnostic> ds)
    : std::runtime_error(join_diagnostics(ds)), diagnostics_(std::move(ds)) {
  if (diagnostics_.empty())
    diagnostics_.push_back({ErrorKind::InvalidGraph, "unknown error", {}, {}});
}

InternalError::InternalError(const std::string& what, std::source_location loc)
    : std::logic_error(fmt::format("internal error in ranc (please report): {} at {}:{} in {}",
                                   what, loc.file_name(), loc.line(), loc.function_name())) {}

}  // namespace ranc
