// Tests of the ranc command line (compiler/src/cli): subcommands, exit codes, error
// rendering, input and output files. GPU runs are covered by the GPU suites; here
// `run` uses --cpu.
#include "cli.h"
#include "cli_fixture.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ranc::cli {
namespace {

namespace fs = std::filesystem;

using CliTest = CliFixture;

constexpr const char* kSales = R"(-- sales per region
input sales(region string, amount f64, day date) from "sales.csv";
big = sales |> select amount > 10.0;
per_region = big |> reduce by region total = sum(amount), n = count() |> sort region;
output per_region;
)";

constexpr const char* kSalesCsv =
    "region,amount,day\n"
    "east,12.5,2024-01-01\n"
    "west,3.0,2024-01-02\n"
    "east,20.0,2024-01-03\n"
    "west,11.0,2024-01-04\n";

TEST_F(CliTest, HelpForEveryCommandExitsZero) {
  EXPECT_EQ(run({"--help"}), kOk);
  EXPECT_NE(out_.find("commands:"), std::string::npos);
  for (const char* cmd : {"check", "explain", "emit", "run", "shell", "import", "build"}) {
    EXPECT_EQ(run({cmd, "--help"}), kOk) << cmd;
    EXPECT_NE(out_.find(std::string("usage: ranc ") + cmd), std::string::npos) << out_;
  }
}

TEST_F(CliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(run({}), kUsageError);
  EXPECT_EQ(run({"frobnicate", "x.ra"}), kUsageError);
  EXPECT_NE(err_.find("unknown command 'frobnicate'"), std::string::npos);
  EXPECT_EQ(run({"check", "--bogus", "x.ra"}), kUsageError);
  EXPECT_NE(err_.find("unknown option '--bogus'"), std::string::npos);
  EXPECT_EQ(run({"run", "--cpu", "--gpu", "x.ra"}), kUsageError);
  EXPECT_EQ(run({"run", "--input", "nonsense", "x.ra"}), kUsageError);
  EXPECT_NE(err_.find("NAME=PATH"), std::string::npos);
}

// The parser (CLI11) refuses what the definitions do not allow, each with exit code 2
// and a message naming the option; --help of every command comes from the same
// definitions and lists each option.
TEST_F(CliTest, OptionErrorsAndGeneratedHelp) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const Case cases[] = {
      {{"run", "x.ra", "y.ra"}, "unexpected argument 'y.ra'"},
      {{"run", "x.ra", "--data"}, "--data"},                          // a value is missing
      {{"run", "x.ra", "--max-rows", "-1"}, "expects a non-negative integer, got '-1'"},
      {{"run", "x.ra", "--max-rows", "ten"}, "got 'ten'"},
      {{"run", "x.ra", "--threads", "0"}, "--threads"},
      {{"run", "x.ra", "--join", "nested"}, "--join"},
      {{"run", "x.ra", "--memory-limit", "8X"}, "expects a size such as 512M or 8G, got '8X'"},
      {{"shell", "--memory-limit", "0"}, "expects a size such as 512M or 8G, got '0'"},
      {{"run", "x.ra", "--output", "=x.csv"}, "expects NAME=PATH, got '=x.csv'"},
      {{"run", "x.ra", "--input", "a=1.csv", "--input", "a=2.csv"}, "--input a given twice"},
      {{"run", "--gpu", "--cpu", "x.ra"}, "excludes"},
      {{"check"}, "PROGRAM is required"},
      {{"check", "x.ra", "--time"}, "unknown option '--time'"},  // run's option, not check's
      {{"emit", "x.ra", "--dot"}, "unknown option '--dot'"},
      {{"import", "x.ra"}, "-o is required"},
      {{"explain", "x.ra", "--after"}, "--after"},
      {{"shell", "a.ra", "b.ra"}, "unexpected argument 'b.ra'"},
  };
  for (const Case& c : cases) {
    std::string shown;
    for (const auto& a : c.args) shown += a + " ";
    EXPECT_EQ(run(c.args), kUsageError) << shown;
    EXPECT_NE(err_.find(c.message), std::string::npos) << shown << "\n" << err_;
    EXPECT_NE(err_.find("run 'ranc --help'"), std::string::npos) << shown;
  }
  // Every option of a command is in its help, with its description.
  EXPECT_EQ(run({"run", "--help"}), kOk);
  for (const char* opt : {"--input", "--data", "--output", "--cpu", "--gpu", "--time", "--max-rows",
                          "--threads", "--join", "--no-fusion", "--no-paged", "--memory-limit"})
    EXPECT_NE(out_.find(opt), std::string::npos) << opt << "\n" << out_;
  EXPECT_NE(out_.find("partitioned hash join"), std::string::npos) << out_;
  EXPECT_EQ(run({"help", "explain"}), kOk);
  EXPECT_NE(out_.find("usage: ranc explain"), std::string::npos) << out_;
  EXPECT_NE(out_.find("--after"), std::string::npos) << out_;
  EXPECT_EQ(run({"--version"}), kOk);
  EXPECT_NE(out_.find("ranc 0.1.0"), std::string::npos) << out_;
  EXPECT_EQ(run({"shell", "--help"}), kOk);
  EXPECT_NE(out_.find(".tables"), std::string::npos) << out_;
}

TEST_F(CliTest, CheckPrintsOutputSchemas) {
  std::string prog = write("sales.ra", kSales);
  ASSERT_EQ(run({"check", prog}), kOk) << err_;
  EXPECT_NE(out_.find("output per_region (region string, total f64, n i64"), std::string::npos)
      << out_;
}

TEST_F(CliTest, CheckReportsErrorWithLineColumnAndCaret) {
  std::string prog = write("bad.ra",
                           "input r(a i32, b f64);\n"
                           "x = r |> select c > 1;\n"
                           "output x;\n");
  ASSERT_EQ(run({"check", prog}), kProgramError);
  EXPECT_NE(err_.find(prog + ":2:17: error: unknown attribute 'c'"), std::string::npos) << err_;
  EXPECT_NE(err_.find("x = r |> select c > 1;"), std::string::npos) << err_;
  EXPECT_NE(err_.find("^"), std::string::npos) << err_;
}

TEST_F(CliTest, CheckReportsSyntaxErrors) {
  std::string prog = write("syntax.ra", "input r(a i32);\nx = r |> select a >;\noutput x;\n");
  ASSERT_EQ(run({"check", prog}), kProgramError);
  EXPECT_NE(err_.find(prog + ":2:"), std::string::npos) << err_;
}

TEST_F(CliTest, MissingProgramFileIsAnError) {
  EXPECT_EQ(run({"check", (dir_ / "nope.ra").string()}), kProgramError);
  EXPECT_NE(err_.find("nope.ra"), std::string::npos) << err_;
}

TEST_F(CliTest, RunOnCpuPrintsTable) {
  std::string prog = write("sales.ra", kSales);
  write("sales.csv", kSalesCsv);
  ASSERT_EQ(run({"run", "--cpu", prog}), kOk) << err_;
  // east: 12.5 + 20 = 32.5 (2 rows); west: 11 (1 row); 3.0 is filtered out.
  EXPECT_NE(out_.find("per_region:"), std::string::npos) << out_;
  EXPECT_NE(out_.find("east     32.5  2"), std::string::npos) << out_;
  EXPECT_NE(out_.find("west       11  1"), std::string::npos) << out_;
  EXPECT_NE(out_.find("(2 rows)"), std::string::npos) << out_;
}

TEST_F(CliTest, RunWithInputOverrideAndOutputFile) {
  std::string prog = write("sales.ra", kSales);
  std::string other = write("other.tbl", "north|50.0|2024-02-01|\nnorth|1.0|2024-02-02|\n");
  std::string out_csv = (dir_ / "result.csv").string();
  ASSERT_EQ(run({"run", "--cpu", "--time", "--input", "sales=" + other, "--output",
                 "per_region=" + out_csv, prog}),
            kOk)
      << err_;
  std::ifstream f(out_csv);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(ss.str(), "region,total,n\nnorth,50,1\n");
  EXPECT_NE(err_.find("time: load"), std::string::npos) << err_;
}

// `ranc run --observe-order` plans an input that arrives sorted by an attribute as if it were
// declared `sorted by` it (the first such attribute, integers and dates, 2^16 rows or more),
// and says so with --time; the executors still verify the order. Outputs are the same without
// the option, inputs out of order (one swapped pair) or too small are planned as declared, and
// an input already declared `sorted by` keeps its declaration.
// CSV rows (x, k, v) of the tests of inputs in order: k ascends (k = i / 3 - 5000), but for
// rows 40000 and 40001 swapped when `swapped`; x and v do not.
std::string key_rows_csv(int n, bool swapped = false) {
  std::string csv = "x,k,v\n";
  for (int i = 0; i < n; ++i) {
    const int x = (i * 7919) % 1000, k = i / 3 - 5000, v = i % 97;
    const int key = !swapped ? k : i == 40000 ? k + 1 : i == 40001 ? k - 1 : k;
    csv += std::to_string(x) + "," + std::to_string(key) + "," + std::to_string(v) + "\n";
  }
  return csv;
}

TEST_F(CliTest, RunPlansInputsInOrderAsSorted) {
  write("sorted.csv", key_rows_csv(70000));
  write("swapped.csv", key_rows_csv(70000, true));
  write("small.csv", key_rows_csv(1000));
  const std::string body =
      "q = r |> join (r |> project k as j, v as w) on k = j |> reduce by k s = sum(w), n = count()\n"
      "  |> select n > 8 |> sort k;\n"
      "output q;\n";
  std::string prog = write("q.ra", "input r(x i32, k i32, v i64) from \"sorted.csv\";\n" + body);
  std::string declared =
      write("d.ra", "input r(x i32, k i32, v i64) from \"sorted.csv\" sorted by k;\n" + body);
  ASSERT_EQ(run({"run", "--cpu", "--time", "--observe-order", prog}), kOk) << err_;
  EXPECT_NE(err_.find("inputs in order (planned as sorted by): r by k"), std::string::npos) << err_;
  const std::string observed = out_;
  EXPECT_NE(observed.find("(23333 rows in all)"), std::string::npos) << observed;  // the last key has one row
  ASSERT_EQ(run({"run", "--cpu", "--time", prog}), kOk) << err_;
  EXPECT_EQ(err_.find("inputs in order"), std::string::npos) << err_;
  EXPECT_EQ(out_, observed);
  ASSERT_EQ(run({"run", "--cpu", "--time", "--observe-order", declared}), kOk) << err_;
  EXPECT_EQ(err_.find("inputs in order"), std::string::npos) << err_;
  EXPECT_EQ(out_, observed);
  for (const char* other : {"swapped.csv", "small.csv"}) {
    ASSERT_EQ(run({"run", "--cpu", "--time", "--observe-order", "--input",
                   std::string("r=") + (dir_ / other).string(), prog}),
              kOk)
        << err_;
    EXPECT_EQ(err_.find("inputs in order"), std::string::npos) << other << "\n" << err_;
  }
}

// `ranc import` records the attributes by which a file's rows ascend, and `ranc run` plans an
// input read from such a file (2^16 rows or more) as sorted by the first one it uses, before
// the load (--no-recorded-order ignores it): the same output as without.
TEST_F(CliTest, RunPlansRecordedOrdersAsSorted) {
  write("sorted.csv", key_rows_csv(70000));
  write("swapped.csv", key_rows_csv(70000, true));
  // x is not used: k is the first ascending attribute the program reads.
  std::string prog = write(
      "q.ra",
      "input r(x i32, k i32, v i64) from \"sorted.csv\";\n"
      "q = r |> join (r |> project k as j, v as w) on k = j |> reduce by k s = sum(w), n = count()\n"
      "  |> select n > 8 |> sort k;\n"
      "output q;\n");
  const std::string rcol = (dir_ / "rcol").string();
  ASSERT_EQ(run({"run", "--cpu", prog}), kOk) << err_;
  const std::string expected = out_;
  for (const char* csv : {"sorted.csv", "swapped.csv"}) {
    const std::string file = (dir_ / "rcol" / (std::string(csv) + ".rcol")).string();
    fs::create_directories(rcol);
    ASSERT_EQ(run({"import", prog, "-o", rcol, "--input", std::string("r=") + (dir_ / csv).string()}),
              kOk)
        << err_;
    fs::rename(dir_ / "rcol" / "r.rcol", file);
    const bool ascends = std::string(csv) == "sorted.csv";
    EXPECT_EQ(out_.find("rows, 3 attributes") != std::string::npos, true) << out_;
    EXPECT_EQ(out_.find(", ascending by k\n") != std::string::npos, ascends) << out_;
    ASSERT_EQ(run({"run", "--cpu", "--time", "--input", "r=" + file, prog}), kOk) << err_;
    EXPECT_EQ(err_.find("inputs in order (planned as sorted by): r by k (recorded)") !=
                  std::string::npos,
              ascends)
        << csv << "\n" << err_;
    if (ascends) {
      EXPECT_EQ(out_, expected);
    }
    ASSERT_EQ(run({"run", "--cpu", "--time", "--no-recorded-order", "--input", "r=" + file, prog}),
              kOk)
        << err_;
    EXPECT_EQ(err_.find("inputs in order"), std::string::npos) << err_;
    // explain plans what run plans: with the order, a merge join and a segmented reduce.
    ASSERT_EQ(run({"explain", "--input", "r=" + file, prog}), kOk) << err_;
    const std::string with = out_;
    EXPECT_EQ(with.find("== inputs in order (planned as sorted by) ==\nr by k (recorded)\n") !=
                  std::string::npos,
              ascends)
        << with;
    ASSERT_EQ(run({"explain", "--no-recorded-order", "--input", "r=" + file, prog}), kOk) << err_;
    EXPECT_EQ(out_.find("inputs in order"), std::string::npos) << out_;
    EXPECT_EQ(out_ == with, !ascends);
    EXPECT_EQ(out_.find("n3 reduce: hash aggregation") != std::string::npos, true) << out_;
    EXPECT_EQ(with.find("n3 reduce: segmented reduce") != std::string::npos, ascends) << with;
    EXPECT_EQ(with.find("merged tile by tile") != std::string::npos, ascends) << with;
  }
  // Without the data (a file that is not there) explain plans without the order.
  ASSERT_EQ(run({"explain", "--data", (dir_ / "nowhere").string(), prog}), kOk) << err_;
  EXPECT_EQ(out_.find("inputs in order"), std::string::npos) << out_;
}

// Only the attributes the program uses are loaded (prune_attributes): a value that is
// not even valid in an unused column does not stop the run, explain lists what is
// loaded, and with the pass switched off the whole row is converted again.
TEST_F(CliTest, RunLoadsOnlyTheAttributesUsed) {
  std::string prog = write("wide.ra",
                           "input t(k i32, junk f64, v i64, note string) from \"t.tbl\" format tbl;\n"
                           "s = t |> select k > 1 |> reduce total = sum(v);\n"
                           "output s;\n");
  write("t.tbl", "1|x|10|a|\n2|y|20|b|\n3|z|30|c|\n");
  ASSERT_EQ(run({"explain", prog}), kOk) << err_;
  EXPECT_NE(out_.find("t: 2 of 4 attributes (k, v)"), std::string::npos) << out_;
  ASSERT_EQ(run({"run", "--cpu", prog}), kOk) << err_;
  EXPECT_NE(out_.find("50"), std::string::npos) << out_;
  setenv("RANC_DISABLE_PASSES", "prune_attributes", 1);
  int rc = run({"run", "--cpu", prog});
  unsetenv("RANC_DISABLE_PASSES");
  EXPECT_EQ(rc, kDataError) << out_;
  EXPECT_NE(err_.find("t.tbl:1:3"), std::string::npos) << err_;
}

// NULLs from a file to an output file: empty fields and the declared marker are NULL in
// nullable attributes, NULL prints as NULL and is written as an empty field; an empty
// field in an attribute that is not nullable is a located data error with a hint.
TEST_F(CliTest, RunReadsAndWritesNulls) {
  std::string prog = write("n.ra",
                           "input t(k i32 null, s string null, v i64 null) from \"t.csv\" null 'NA';\n"
                           "q = t |> left join (t |> project k as j, v as w) on k = j\n"
                           "  |> reduce by k n = count(), c = count(s), sw = sum(w) |> sort k;\n"
                           "output q;\n");
  write("t.csv", "k,s,v\n1,a,10\n,b,20\n2,,\n1,NA,5\n");
  ASSERT_EQ(run({"run", "--cpu", prog}), kOk) << err_;
  EXPECT_NE(out_.find("NULL"), std::string::npos) << out_;
  std::string out_csv = (dir_ / "q.csv").string();
  ASSERT_EQ(run({"run", "--cpu", "--output", "q=" + out_csv, prog}), kOk) << err_;
  std::ifstream f(out_csv);
  std::stringstream ss;
  ss << f.rdbuf();
  // k NULL: one tuple, no match (NULL keys match nothing); k 1: two tuples, each matching
  // both k = 1 rows (w 10 and 5); k 2: w NULL.
  EXPECT_EQ(ss.str(), "k,n,c,sw\n,1,1,\n1,4,2,30\n2,1,0,\n");
  std::string strict = write("strict.ra", "input t(k i32, s string, v i64) from \"t.csv\";\n"
                                          "output t;\n");
  EXPECT_EQ(run({"run", "--cpu", strict}), kDataError);
  EXPECT_NE(err_.find("t.csv:3:1"), std::string::npos) << err_;
  EXPECT_NE(err_.find("null"), std::string::npos) << err_;
}

TEST_F(CliTest, BadDataRowIsDataErrorWithLocation) {
  std::string prog = write("sales.ra", kSales);
  write("sales.csv", "region,amount,day\neast,12.5,2024-01-01\nwest,abc,2024-01-02\n");
  ASSERT_EQ(run({"run", "--cpu", prog}), kDataError);
  EXPECT_NE(err_.find("sales.csv:3:6"), std::string::npos) << err_;
  EXPECT_NE(err_.find("amount"), std::string::npos) << err_;
}

TEST_F(CliTest, MissingDataFileIsDataError) {
  std::string prog = write("sales.ra", kSales);
  EXPECT_EQ(run({"run", "--cpu", prog}), kDataError);
  EXPECT_NE(err_.find("sales.csv"), std::string::npos) << err_;
}

TEST_F(CliTest, UnknownInputOrOutputNameIsUsageError) {
  std::string prog = write("sales.ra", kSales);
  EXPECT_EQ(run({"run", "--cpu", "--input", "nosuch=x.csv", prog}), kUsageError);
  EXPECT_NE(err_.find("no input named 'nosuch'"), std::string::npos) << err_;
  EXPECT_EQ(run({"run", "--cpu", "--output", "nosuch=x.csv", prog}), kUsageError);
}

TEST_F(CliTest, DivisionByZeroIsExecutionError) {
  std::string prog = write("div.ra",
                           "input r(a i32, b i32) from \"r.csv\";\n"
                           "x = r |> project a / b as q;\n"
                           "output x;\n");
  write("r.csv", "a,b\n1,0\n");
  EXPECT_EQ(run({"run", "--cpu", prog}), kExecutionError);
  EXPECT_NE(err_.find("division by zero"), std::string::npos) << err_;
}

TEST_F(CliTest, EmitPrintsOrWritesCuda) {
  std::string prog = write("sales.ra", kSales);
  ASSERT_EQ(run({"emit", prog}), kOk) << err_;
  EXPECT_NE(out_.find("extern \"C\""), std::string::npos);
  EXPECT_NE(out_.find("__global__"), std::string::npos);
  std::string cu = (dir_ / "out.cu").string();
  ASSERT_EQ(run({"emit", prog, "-o", cu}), kOk) << err_;
  EXPECT_TRUE(fs::exists(cu));
  EXPECT_GT(fs::file_size(cu), 100u);
}

// --join picks the inner join's algorithm: hash kernels or the sort-merge ones.
TEST_F(CliTest, JoinOptionPicksTheAlgorithm) {
  std::string prog = write("j.ra",
                           "input r(k i32, v i64);\n"
                           "input q(k i32, w f64);\n"
                           "j = r |> join q on k;\n"
                           "output j;\n");
  // Unsorted inputs: auto hashes, like --join=hash.
  for (const char* join : {"--join=hash", "--join=auto"}) {
    ASSERT_EQ(run({"emit", prog, join}), kOk) << err_;
    EXPECT_NE(out_.find("_join_hash("), std::string::npos) << join;
    EXPECT_EQ(out_.find("_join_write("), std::string::npos) << join;
  }
  ASSERT_EQ(run({"emit", prog, "--join=merge"}), kOk) << err_;
  EXPECT_EQ(out_.find("_join_hash("), std::string::npos);
  EXPECT_NE(out_.find("_join_write("), std::string::npos);
  ASSERT_EQ(run({"explain", prog, "--join=hash"}), kOk) << err_;
  EXPECT_NE(out_.find("_join_hash"), std::string::npos) << out_;
  // explain says which algorithm each join takes and why.
  EXPECT_NE(out_.find("== joins ==\nn2 join inner: hash join built on the right input, probed by "
                      "the left: one global table for a mid-sized build side, else partitioned "
                      "(--join=hash)\n"),
            std::string::npos)
      << out_;
  ASSERT_EQ(run({"explain", prog}), kOk) << err_;
  EXPECT_NE(out_.find("join inner: hash join built on the right input, probed by the left: one "
                      "global table for a mid-sized build side, else partitioned (auto: no input "
                      "is ordered by the keys: hashing sorts neither)"),
            std::string::npos)
      << out_;
  ASSERT_EQ(run({"explain", prog, "--join=merge"}), kOk) << err_;
  EXPECT_NE(out_.find("join inner: sort-merge, left input unsorted: a binary search a left "
                      "row (--join=merge)"),
            std::string::npos)
      << out_;
  std::string sorted = write("s.ra",
                             "input r(k i32, v i64) sorted by k;\n"
                             "input q(k i32, w f64);\n"
                             "j = r |> join q on k;\n"
                             "s = r |> semijoin q on k;\n"
                             "output j;\noutput s;\n");
  ASSERT_EQ(run({"explain", sorted}), kOk) << err_;
  EXPECT_NE(out_.find("join inner: sort-merge, left input sorted by the keys: merged tile by "
                      "tile (auto:"),
            std::string::npos)
      << out_;
  EXPECT_NE(out_.find("join semi: sort-merge: a binary search a left row (an inner join sorts "
                      "the same right input by the same keys: the sort is shared)"),
            std::string::npos)
      << out_;
  EXPECT_NE(out_.find("_join_merge"), std::string::npos) << out_;
  EXPECT_EQ(run({"emit", prog, "--join=nested"}), kUsageError);
}

// explain says how each group-by groups and why: hashed (with its way out for many groups),
// sorted by --group-by=sort or because a key does not pack, or a segmented reduce over input
// already grouped by its keys.
TEST_F(CliTest, ExplainSaysHowEachGroupByGroups) {
  std::string prog = write("g.ra",
                           "input r(k i32, v i32, w f64);\n"
                           "input s(k i64, v i32) sorted by k;\n"
                           "input q(k i64, v i32);\n"
                           "a = r |> select w > 0.0 |> reduce by k t = sum(v);\n"
                           "b = s |> reduce by k t = sum(v);\n"
                           "c = q |> reduce by k t = sum(v);\n"
                           "output a;\noutput b;\noutput c;\n");
  ASSERT_EQ(run({"explain", prog}), kOk) << err_;
  const size_t at = out_.find("== group-bys ==\n");
  ASSERT_NE(at, std::string::npos) << out_;
  const std::string section = out_.substr(at, out_.find("\n\n", at) - at);
  EXPECT_NE(
      section.find(" reduce: hash aggregation (the keys pack into 32 bits); from 2^20 rows, "
                   "when a sample's keys span few enough values, tables indexed by the key in "
                   "shared memory take the rows first (RANC_HASH_DENSE_EARLY; states of up to 4 "
                   "words, no semi- or anti-join fused in front); when the blocks' "
                   "partial groups pass their room (RANC_HASH_RECORDS; default 512 blocks' table "
                   "slots), tables indexed by the key if the keys span few values (in shared "
                   "memory, RANC_HASH_DENSE_SHARED) or 2^16 values to the room (in device "
                   "memory, RANC_HASH_DENSE), else sorts its input"),
      std::string::npos)
      << section;
  EXPECT_NE(section.find(" reduce: segmented reduce (the input is already grouped by the keys)"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find(" reduce: sorts its input by the keys, then a segmented reduce (an 8-byte "
                         "key does not pack into the hash key word)"),
            std::string::npos)
      << section;
  ASSERT_EQ(run({"explain", prog, "--group-by=sort"}), kOk) << err_;
  EXPECT_NE(out_.find(" reduce: sorts its input by the keys, then a segmented reduce (--group-by=sort)"),
            std::string::npos)
      << out_;
  EXPECT_EQ(out_.find("hash aggregation"), std::string::npos) << out_;
}

TEST_F(CliTest, ExplainShowsGraphAndPlan) {
  std::string prog = write("sales.ra", kSales);
  ASSERT_EQ(run({"explain", prog}), kOk) << err_;
  EXPECT_NE(out_.find("== checked graph =="), std::string::npos);
  EXPECT_NE(out_.find("reduce"), std::string::npos);
  EXPECT_NE(out_.find("== physical plan =="), std::string::npos);
  ASSERT_EQ(run({"explain", "--dot", prog}), kOk) << err_;
  EXPECT_EQ(out_.rfind("digraph ranc {", 0), 0u) << out_;
}

// push_selects moves a select's one-side conjuncts below its join; the plan after it shows
// where they went, and switching it off leaves the select after the join.
TEST_F(CliTest, ExplainAfterPushSelects) {
  std::string prog = write("pj.ra",
                           "input f(k i32, v i32);\ninput s(pk i32, pv i32);\n"
                           "out = f |> join s on k = pk |> select v > 1 and pv < 5 and v < pv;\n"
                           "output out;\n");
  ASSERT_EQ(run({"explain", prog, "--after=push_selects"}), kOk) << err_;
  EXPECT_NE(out_.find("n2 = select n0 where (v > 1)"), std::string::npos) << out_;
  EXPECT_NE(out_.find("n3 = select n1 where (pv < 5)"), std::string::npos) << out_;
  EXPECT_NE(out_.find("n4 = join inner n2, n3 on (k = pk)"), std::string::npos) << out_;
  EXPECT_NE(out_.find("n5 = select n4 where (v < pv)"), std::string::npos) << out_;
  setenv("RANC_DISABLE_PASSES", "push_selects", 1);
  const int rc = run({"explain", prog, "--after=push_selects"});
  unsetenv("RANC_DISABLE_PASSES");
  ASSERT_EQ(rc, kOk) << err_;
  EXPECT_NE(out_.find("select n2 where (((v > 1) and (pv < 5)) and (v < pv))"), std::string::npos)
      << out_;
}

// The kernels with their fused operators, --no-fusion, the plan after a pass, and the
// Graphviz clusters per kernel; an unknown pass is a usage error.
TEST_F(CliTest, ExplainShowsFusedKernelsAndPasses) {
  std::string prog = write("sum.ra",
                           "input r(k i32, v i64);\n"
                           "s = r |> select k > 3 |> project v * 2 as w |> reduce total = sum(w);\n"
                           "output s;\n");
  ASSERT_EQ(run({"explain", prog}), kOk) << err_;
  EXPECT_NE(out_.find("== kernels =="), std::string::npos) << out_;
  EXPECT_NE(out_.find("n3_select_project_reduce: n1 select, n2 project, n3 reduce"),
            std::string::npos)
      << out_;
  EXPECT_NE(out_.find("n1 select(n0) fused into n3"), std::string::npos) << out_;
  ASSERT_EQ(run({"explain", prog, "--no-fusion"}), kOk) << err_;
  EXPECT_EQ(out_.find("fused into"), std::string::npos) << out_;
  EXPECT_NE(out_.find("n1_select: n1 select"), std::string::npos) << out_;
  ASSERT_EQ(run({"explain", prog, "--after=fuse_pipelines"}), kOk) << err_;
  EXPECT_EQ(out_.rfind("== plan after fuse_pipelines ==", 0), 0u) << out_;
  EXPECT_NE(out_.find("kernel of n3: n1 select, n2 project, n3 reduce"), std::string::npos) << out_;
  ASSERT_EQ(run({"explain", prog, "--after=insert_frees"}), kOk) << err_;
  EXPECT_NE(out_.find("free b"), std::string::npos) << out_;
  ASSERT_EQ(run({"explain", "--dot", prog}), kOk) << err_;
  EXPECT_NE(out_.find("subgraph cluster_k3"), std::string::npos) << out_;
  EXPECT_NE(out_.find("[style=dashed]"), std::string::npos) << out_;
  EXPECT_EQ(run({"explain", prog, "--after=optimise"}), kUsageError);
  EXPECT_NE(err_.find("--after: expects one of prune_attributes, lower_scalar_subqueries, "
                      "lower_distinct_aggregates, lower_outer_joins, lower_nulls, push_selects, plan_sort_orders"),
            std::string::npos)
      << err_;
  ASSERT_EQ(run({"emit", prog, "--no-fusion"}), kOk) << err_;
  EXPECT_NE(out_.find("n1_select("), std::string::npos);
}

// A distinct of a join's narrow output: the join's output stage writes the sort's packed words
// (the join and project fused into the sort) and the distinct reads them sorted, packed; the
// text and the Graphviz plan say so, --no-fusion unpacks.
TEST_F(CliTest, ExplainShowsSortedWords) {
  std::string prog = write("paths.ra",
                           "input e(s i32, d i32);\n"
                           "output e |> join (e |> project s as m, d as t) on d = m "
                           "|> project s, t |> distinct as paths;\n");
  // The sort-merge join's output stage (auto would hash this join of unsorted inputs).
  ASSERT_EQ(run({"explain", prog, "--join=merge"}), kOk) << err_;
  EXPECT_NE(out_.find("-> sorted words"), std::string::npos) << out_;
  EXPECT_NE(out_.find("_join_project_sort_write"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("_sorted:"), std::string::npos) << out_;
  ASSERT_EQ(run({"explain", "--dot", prog, "--join=merge"}), kOk) << err_;
  EXPECT_NE(out_.find("[style=bold, label=\"sorted words\"]"), std::string::npos) << out_;
  ASSERT_EQ(run({"explain", prog, "--no-fusion", "--join=merge"}), kOk) << err_;
  EXPECT_EQ(out_.find("sorted words"), std::string::npos) << out_;
  EXPECT_NE(out_.find("_sorted:"), std::string::npos) << out_;
}

}  // namespace
}  // namespace ranc::cli
