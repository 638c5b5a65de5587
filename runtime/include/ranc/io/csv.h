// Readers and writers for delimited text: CSV (header, quoting) and TPC-H .tbl
// ('|'-separated, no header, a trailing '|' per line). Types come from the declared
// schema; a malformed value is a UserError(ErrorKind::Data) naming file:line:column,
// the attribute and the expected type. Large inputs are memory-mapped and parsed
// in parallel chunks split at line boundaries.
//
// NULL (nullable attributes only, Attribute::nullable): an UNQUOTED field that is
// empty, or that equals CsvOptions::null_marker, is NULL. "The field" is the text its
// value is read from: without surrounding spaces and tabs for non-string attributes
// (whose values are read trimmed), exactly as written for strings (where spaces are
// data: "  " is a string of two spaces). A quoted field is never NULL: in CSV `""`
// is the empty string and `"NA"` the string NA, as in PostgreSQL's CSV format. In
// an attribute that is not nullable nothing is NULL: an empty field or the marker is
// a string's text, and for other types an error whose hint says to declare the
// attribute nullable (`name type null`). .tbl has no quoting, so in a nullable string
// attribute the empty string reads as NULL (the writer refuses to write one).
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ranc/data/host_relation.h"

namespace ranc {

// Called with (bytes parsed so far, total bytes); from the calling thread only,
// a few times per second at most plus once at the end.
using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

struct CsvOptions {
  char delimiter = ',';
  // The first line names the attributes; the reader checks them against the
  // schema (same names, same order), the writer writes them.
  bool header = true;
  // "..." fields with "" for a quote; quoted fields may hold the delimiter and
  // newlines. Off for .tbl: every character is data.
  bool quoting = true;
  // Reader: accept one extra delimiter at the end of a line. Writer: write one.
  bool trailing_delimiter = false;
  // Reader: the attributes to keep, by name (empty: all). The file still has every
  // attribute of the schema; the others are skipped without conversion. The result's
  // schema is the kept attributes in schema order, its key the longest kept prefix
  // of the schema's key.
  std::vector<std::string> columns;
  // The text of a NULL besides the empty field (the file header comment says where
  // it applies); nullopt or "" when only empty fields are NULL. Compared with the
  // field's text trimmed for non-string attributes and exactly for strings, so it
  // must not begin or end with a space or tab, nor hold the delimiter, a line break
  // or (with quoting) begin with a quote: such a marker is a
  // UserError(InvalidArgument). Writer: NULL is written as the marker (as an empty
  // field without one).
  std::optional<std::string> null_marker;
  // Reader threads; 0 = std::thread::hardware_concurrency(). Small inputs use one.
  unsigned num_threads = 0;
  ProgressFn progress;
  // Columnar reader: called, on the calling thread after the columns are read, with each
  // attribute read whose file flags it ascending (ColumnarInfo::Section::ascending) and
  // whose rows were checked to ascend. `ranc run` confirms by it that the file it planned
  // by is the file it read.
  std::function<void(const std::string& attribute)> ascending;

  // RFC 4180 style CSV with a header line.
  static CsvOptions csv() { return CsvOptions{}; }
  // TPC-H .tbl as written by dbgen and tpchgen-cli: '|', no header, no quoting,
  // trailing '|' (accepted with or without on read, written on write).
  static CsvOptions tbl() {
    CsvOptions o;
    o.delimiter = '|';
    o.header = false;
    o.quoting = false;
    o.trailing_delimiter = true;
    return o;
  }
};

enum class TextFormat { Csv, Tbl };
// Csv for *.csv, Tbl for *.tbl (case-insensitive), nullopt otherwise.
std::optional<TextFormat> format_from_path(std::string_view path);
inline CsvOptions options_for(TextFormat f) {
  return f == TextFormat::Tbl ? CsvOptions::tbl() : CsvOptions::csv();
}

// Reads a file. Errors (unreadable file, bad rows, header mismatch) are
// UserError(Data) located at path:line:column.
HostRelation read_csv(const std::string& path, const Schema& schema,
                      const CsvOptions& options = CsvOptions::csv());
// Parses text held in memory; `name` is the file name used in error locations.
HostRelation parse_csv(std::string_view text, const Schema& schema,
                       const CsvOptions& options = CsvOptions::csv(),
                       std::string_view name = "<string>");
HostRelation read_csv(std::istream& in, const Schema& schema,
                      const CsvOptions& options = CsvOptions::csv(),
                      std::string_view name = "<stream>");
inline HostRelation read_tbl(const std::string& path, const Schema& schema) {
  return read_csv(path, schema, CsvOptions::tbl());
}
// Picks CSV or .tbl options from the file's extension (CSV when unknown).
HostRelation read_relation_file(const std::string& path, const Schema& schema,
                                ProgressFn progress = {});

// Writes values as the reader reads them back: bools true/false, floats in the
// shortest form that round-trips, dates YYYY-MM-DD, strings quoted only where
// needed, NULL as options.null_marker or an empty field. In a nullable attribute a
// value that would read back as NULL (the empty string, the marker's text) is quoted.
// Without quoting, a value that cannot be told apart from the delimiter, a line
// break or NULL cannot be written and is a UserError(Data) naming the row and
// attribute; so is a NULL in the only attribute written as an empty line (no
// marker, no trailing delimiter), which would read back as a blank line.
void write_csv(const HostRelation& rel, std::ostream& out,
               const CsvOptions& options = CsvOptions::csv());
void write_csv(const HostRelation& rel, const std::string& path,
               const CsvOptions& options = CsvOptions::csv());
std::string to_csv_string(const HostRelation& rel, const CsvOptions& options = CsvOptions::csv());
inline void write_tbl(const HostRelation& rel, const std::string& path) {
  write_csv(rel, path, CsvOptions::tbl());
}

}  // namespace ranc
