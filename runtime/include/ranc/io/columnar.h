// The ranc columnar file (.rcol): a loaded relation written column by column so
// that a later run maps it and copies the columns it needs instead of parsing text.
// docs/columnar-format.md describes the layout byte by byte: a 64-byte header, a
// table with the schema (nullability included) and one entry per column, then the
// column sections (each string column's dictionary and each nullable column's
// validity after its data), every one 64-byte aligned and checksummed with XXH3-64.
// A truncated, corrupt or newer-version file is a UserError(Data) naming the file
// and what is wrong.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ranc/data/host_relation.h"
#include "ranc/io/csv.h"

namespace ranc {

// The major format version this ranc writes; it reads major versions
// kColumnarOldestMajorVersion to kColumnarMajorVersion (1.x: no nullable columns) and
// refuses others. Minor versions only add what older readers may ignore.
inline constexpr uint32_t kColumnarMajorVersion = 2;
inline constexpr uint32_t kColumnarMinorVersion = 1;
inline constexpr uint32_t kColumnarOldestMajorVersion = 1;

// What a columnar file holds, from its header and table (checked, no column read).
struct ColumnarInfo {
  uint32_t major_version = 0;
  uint32_t minor_version = 0;
  uint64_t rows = 0;
  uint64_t file_bytes = 0;
  Schema schema;  // the attributes as written, with the key and nullability
  struct Section {
    uint64_t data_bytes = 0;        // rows * the type's size
    uint64_t dictionary_bytes = 0;  // string columns: the dictionary section
    uint64_t dictionary_size = 0;   // string columns: number of strings
    uint64_t validity_bytes = 0;    // nullable columns: rows (a byte per row)
    // Since 2.1: the rows ascend by this attribute (non-decreasing, the first less than the
    // last; i32, i64 and date columns without NULLs). The writer sets it from the data, and a
    // read of the column checks it. `ranc run` plans such an input as `sorted by` it.
    bool ascending = false;
  };
  std::vector<Section> sections;  // per attribute
};

// Writes rel to path (the current version): to a temporary file in the same folder,
// synced, then renamed over path, so a crash never leaves a partial file under that
// name. A column is written nullable, with its validity, when rel's column is
// nullable. Errors (unwritable folder, duplicate attribute names) are
// UserError(Data); a NULL row whose storage is not the type's zero (host_relation.h)
// is an InternalError. An i32, i64 or date column without NULLs whose rows ascend is
// flagged so (ColumnarInfo::Section::ascending; one pass over it).
void write_columnar(const std::string& path, const HostRelation& rel);

// Whether path starts with the columnar magic bytes (false when unreadable).
bool is_columnar_file(const std::string& path);

// Checks the header and table of a columnar file and describes it; with `dictionaries`,
// also each string column's dictionary section (its checksum, for Section::dictionary_size,
// which stays 0 without).
ColumnarInfo read_columnar_info(const std::string& path, bool dictionaries = true);

// Reads the attributes options.columns names (empty: every attribute of schema)
// with CsvOptions::columns' semantics: the result's schema is the kept attributes
// in schema order, its key the longest kept prefix of schema's key. Each must be in
// the file with the same type; the file may have other attributes. Nullability is
// the schema's: a column the file has as not nullable reads into a nullable
// attribute (every row valid), and a nullable one into an attribute that is not
// nullable when it holds no NULL (a NULL is a UserError(Data) naming the file, the
// attribute and the row). The checksums of what is read are verified, on
// options.num_threads threads (0: hardware). options' text settings (delimiter,
// header, null_marker, ...) do not apply.
HostRelation read_columnar(const std::string& path, const Schema& schema,
                           const CsvOptions& options = {});
// Reads every attribute with the file's own schema.
HostRelation read_columnar(const std::string& path);

// read_columnar when path is a columnar file (by its magic bytes), else read_csv.
HostRelation read_input(const std::string& path, const Schema& schema,
                        const CsvOptions& options = CsvOptions::csv());

// path, or, when path does not exist but the same path with the extension .rcol
// does (lineitem.tbl -> lineitem.rcol), that one.
std::string prefer_columnar(const std::string& path);

}  // namespace ranc
