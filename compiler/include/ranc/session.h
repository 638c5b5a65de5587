// A session: relations loaded once and kept resident on the GPU, and any number of
// programs run against them, with compiled programs cached (issue 10). The embedding
// API behind `ranc shell`.
//
//   ranc::Session s;                                   // the GPU when there is one
//   s.declare("lineitem", "data/lineitem.tbl", ranc::tpch::schema("lineitem"));
//   auto r = s.run("input lineitem(l_quantity f64, l_shipdate date);\n"
//                  "q = lineitem |> select l_shipdate < date '1995-01-01'\n"
//                  "  |> reduce n = count();\noutput q;");
//   r.outputs[0].second ...; s.device_bytes_in_use(); s.drop("lineitem");
//
// Relations come in two ways. add() binds a host relation: it is uploaded at once,
// every attribute. declare() (and an `input ... from "file"` declaration in a program
// run by the session) registers a file: its attributes are loaded when a program
// first uses them, and only those (prune_attributes), and kept; a later program that
// uses more attributes loads the missing ones. A program's input declarations name
// relations of the session; their declared attributes must be among the relation's
// (by name and type), which may have more. An input that is neither added nor
// declared, and has no `from`, is UserError(UnknownRelation).
//
// Compiled programs: the plan of a program text is kept (no parse, check or code
// generation the second time) and its CUBIN comes from the kernel cache.
//
// Without a GPU (or with SessionOptions::gpu = false) the same API runs the CPU
// reference executor on host-resident relations.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ranc/codegen/codegen.h"
#include "ranc/data/host_relation.h"
#include "ranc/frontend/ra_parser.h"
#include "ranc/io/csv.h"
#include "ranc/ir/program.h"
#include "ranc/runtime/executor.h"

namespace ranc {

struct SessionOptions {
  // nullopt: the GPU when one is available, else the CPU reference; true: the GPU or
  // NoGpuError; false: the CPU reference.
  std::optional<bool> gpu;
  int device = 0;
  int64_t memory_limit = 0;  // device bytes a run may hold (rt::ExecutorOptions::memory_limit)
  codegen::CodegenOptions codegen;
  // Relative `from` paths are resolved against this folder (default: the current one).
  std::string data_dir;
  // A relation declared from a columnar file that records the attributes its rows ascend by
  // (`ranc import`, 2^16 rows or more) is planned as sorted by the first of them a program
  // uses, as `ranc run` plans it (`ranc shell --no-recorded-order`: false).
  bool recorded_order = true;
};

struct SessionResult {
  std::vector<std::pair<std::string, HostRelation>> outputs;  // in program order
  rt::RunStats stats;         // GPU runs (compile, upload of new columns, execute, ...)
  double load_seconds = 0;    // reading files for this run's missing attributes
  double plan_seconds = 0;    // parse, check and code generation (0 when cached)
  double execute_seconds = 0; // CPU reference runs; GPU runs: stats.execute_seconds
  bool plan_cached = false;
  // The orders the plan took from the relations' files: "lineitem by l_orderkey, ...".
  std::string recorded_orders;
};

// One relation of the session, as `.tables` shows it.
struct SessionRelation {
  std::string name;
  Schema schema;             // the declared (or added) attributes
  std::string path;          // the file of a declared relation ("" for added ones)
  std::vector<std::string> loaded;  // attributes resident now
  int64_t rows = -1;         // -1 until loaded
  int64_t device_bytes = 0;  // 0 on the CPU
  // The attributes by which its file records its rows ascending (SessionOptions::recorded_order).
  std::vector<std::string> ascending;
};

// The reader options of an `input ... from "path"` declaration: its `format` (with
// its csv delimiter and header), else the path's extension (CSV when unknown).
CsvOptions input_csv_options(const RaInputSpec& spec, const std::string& path);

// Inputs that arrive sorted are planned as `sorted by` the attribute, from this many rows
// (below it a sort costs little): a columnar file's recorded order, `ranc run --observe-order`.
inline constexpr uint64_t kArrivalOrderRows = uint64_t{1} << 16;

// The attributes of `schema` (in its order; with the file's type, not nullable) by which the
// columnar file at `path` records its rows ascending (ColumnarInfo::Section::ascending). None
// for a file that is not columnar, has fewer than kArrivalOrderRows rows, or is damaged (its
// load reports that).
std::vector<std::string> recorded_ascending(const std::string& path, const Schema& schema);

// Declares `order` (input name -> attribute) on the input nodes of `program` (parsed or
// checked) that declare no order, as orders checked elsewhere (Node::order_trusted: by the
// columnar reader, or on the host); returns those taken. The caller checks the program again.
std::map<std::string, std::string> take_orders(Program& program,
                                               const std::map<std::string, std::string>& order);

class Session {
 public:
  explicit Session(SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool on_gpu() const;
  // The GPU's name, or "CPU reference".
  std::string device_name();

  // Uploads (GPU) or keeps (CPU) `rel` as `name`, replacing a relation of that name.
  void add(const std::string& name, HostRelation rel);
  // Registers a CSV/.tbl file, or a columnar .rcol file (ranc/io/columnar.h, known by
  // its first bytes), as `name` with its full schema (nothing is read yet). A relative
  // path is resolved against data_dir; a missing file's .rcol is used when it exists.
  // Replaces a relation of that name, except that declaring the same file with the
  // same attributes again keeps what is already loaded. The text format comes from the
  // extension unless `options` is given.
  void declare(const std::string& name, const std::string& path, const Schema& schema,
               std::optional<CsvOptions> options = std::nullopt);
  // Forgets a relation and frees its memory; UserError(UnknownRelation) if absent.
  void drop(const std::string& name);
  std::vector<SessionRelation> relations() const;
  // Device memory held: resident relations plus the executor's pool now.
  int64_t device_bytes_in_use() const;

  // Runs a program in .ra text; `file_name` is used in error locations. Its input
  // declarations with `from` declare those relations first (when not yet known).
  SessionResult run(std::string_view ra_text, const std::string& file_name = "<session>");
  // Runs a checked program (the C++ DSL).
  SessionResult run(const Program& checked);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ranc
