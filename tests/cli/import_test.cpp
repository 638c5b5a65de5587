// `ranc import` and columnar inputs (compiler/src/cli/cli.cpp, ranc/io/columnar.h):
// a program run on the imported .rcol files prints exactly what it prints on the
// text files (through --data with the .rcol fallback, --input and `from "x.rcol"`,
// and in the shell); corrupt, truncated and mistyped .rcol files are data errors
// naming the file; usage errors exit 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "cli.h"
#include "cli_fixture.h"

namespace ranc::cli {
namespace {

namespace fs = std::filesystem;

// A TPC-H-like pair of tables with every type: orders keyed by an i64, lineitem
// referring to it; strings repeat (dictionaries), dates span years.
constexpr const char* kDecls = R"(input orders(o_orderkey i64 key, o_custkey i32, o_status string,
             o_totalprice f64, o_orderdate date, o_urgent bool)
  from "orders.tbl" format tbl;
input lineitem(l_orderkey i64, l_quantity f32, l_extendedprice f64, l_discount f64,
               l_returnflag string, l_shipdate date, l_comment string)
  from "lineitem.tbl" format tbl;
)";

constexpr const char* kQueries = R"(
q1 = lineitem
  |> select l_shipdate <= date '1998-09-02'
  |> reduce by l_returnflag
       sum_qty = sum(l_quantity), sum_price = sum(l_extendedprice * (1 - l_discount)),
       n = count()
  |> sort l_returnflag;
q3 = lineitem
  |> join orders on l_orderkey = o_orderkey
  |> select o_urgent and o_orderdate < date '1996-01-01'
  |> reduce by l_orderkey, o_status revenue = sum(l_extendedprice)
  |> sort revenue desc, l_orderkey
  |> limit 20;
output q1;
output q3;
)";

class ImportTest : public CliFixture {
 protected:
  void SetUp() override {
    CliFixture::SetUp();
    fs::create_directories(dir_ / "text");
    std::mt19937 rng(42);
    const char* status[] = {"F", "O", "P"};
    const char* flags[] = {"A", "N", "R"};
    std::ofstream orders(dir_ / "text" / "orders.tbl"), lines(dir_ / "text" / "lineitem.tbl");
    for (int o = 1; o <= 300; ++o) {
      orders << o * 32LL + 5000000000LL << '|' << rng() % 150 << '|' << status[rng() % 3] << '|'
             << (rng() % 5000000) / 100.0 << '|' << 1992 + rng() % 7 << "-0" << 1 + rng() % 9
             << "-1" << rng() % 10 << '|' << ((rng() & 1) ? "true" : "false") << "|\n";
      for (unsigned l = 0; l < 1 + rng() % 6; ++l)
        lines << o * 32LL + 5000000000LL << '|' << 1 + rng() % 50 << ".5|"
              << (rng() % 10000000) / 100.0 << "|0.0" << rng() % 10 << '|' << flags[rng() % 3]
              << '|' << 1992 + rng() % 7 << "-1" << rng() % 3 << "-2" << rng() % 9 << "|note "
              << rng() % 40 << "|\n";
    }
    program_ = write("q.ra", std::string(kDecls) + kQueries);
  }
  std::string text_dir() const { return (dir_ / "text").string(); }
  std::string rcol_dir() const { return (dir_ / "rcol").string(); }
  // The text run's output, the oracle.
  std::string text_output() {
    EXPECT_EQ(run({"run", "--cpu", "--max-rows", "0", program_, "--data", text_dir()}), kOk)
        << err_;
    return out_;
  }
  void import_all() {
    ASSERT_EQ(run({"import", program_, "--data", text_dir(), "-o", rcol_dir()}), kOk) << err_;
  }
  void flip_byte(const std::string& path, uint64_t at) {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekg(static_cast<std::streamoff>(at));
    char c = static_cast<char>(f.get());
    f.seekp(static_cast<std::streamoff>(at));
    f.put(static_cast<char>(c ^ 0x40));
  }

  std::string program_;
};

TEST_F(ImportTest, RunOnImportedFilesPrintsExactlyTheTextRunsOutput) {
  const std::string want = text_output();
  ASSERT_NE(want.find("q3:"), std::string::npos) << want;
  ASSERT_NE(want.find("(20 rows)"), std::string::npos) << want;  // the join matched
  ASSERT_NO_FATAL_FAILURE(import_all());
  EXPECT_NE(out_.find("orders: 300 rows, 6 attributes"), std::string::npos) << out_;
  EXPECT_NE(out_.find("lineitem: "), std::string::npos) << out_;
  EXPECT_NE(out_.find(" -> " + (fs::path(rcol_dir()) / "lineitem.rcol").string()),
            std::string::npos)
      << out_;
  // Only the two files: no temporary file left.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(rcol_dir()))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"lineitem.rcol", "orders.rcol"}));

  // --data: orders.tbl is missing there, orders.rcol is read instead.
  ASSERT_EQ(run({"run", "--cpu", "--max-rows", "0", program_, "--data", rcol_dir()}), kOk) << err_;
  EXPECT_EQ(out_, want);
  // --input NAME=PATH with a columnar file (mixed with a text input).
  ASSERT_EQ(run({"run", "--cpu", "--max-rows", "0", program_, "--data", text_dir(), "--input",
                 "lineitem=" + rcol_dir() + "/lineitem.rcol"}),
            kOk)
      << err_;
  EXPECT_EQ(out_, want);
  // `from "x.rcol"` in the program; the files' extra attributes are not declared.
  std::string decls = kDecls;
  decls.replace(decls.find("orders.tbl\" format tbl"), 22, "orders.rcol\"");
  decls.replace(decls.find("lineitem.tbl\" format tbl"), 24, "lineitem.rcol\"");
  std::string prog = write("rcol.ra", decls + kQueries);
  ASSERT_EQ(run({"run", "--cpu", "--max-rows", "0", prog, "--data", rcol_dir()}), kOk) << err_;
  EXPECT_EQ(out_, want);
}

TEST_F(ImportTest, ShellReadsImportedFilesThroughData) {
  ASSERT_NO_FATAL_FAILURE(import_all());
  std::string script = write("s.ra", std::string(kDecls) + kQueries);
  ASSERT_EQ(run({"shell", "--cpu", "--max-rows", "0", "--data", text_dir(), script}), kOk) << err_;
  const std::string text_shell = out_;
  EXPECT_NE(text_shell.find("(20 rows)"), std::string::npos) << text_shell;
  ASSERT_EQ(run({"shell", "--cpu", "--max-rows", "0", "--data", rcol_dir(), script}), kOk) << err_;
  EXPECT_EQ(out_, text_shell);
}

TEST_F(ImportTest, CorruptTruncatedOrMistypedRcolIsADataError) {
  ASSERT_NO_FATAL_FAILURE(import_all());
  const std::string li = rcol_dir() + "/lineitem.rcol";
  const uint64_t size = fs::file_size(li);
  // Inside the last section, l_comment's dictionary: no query reads l_comment, so
  // runs do not notice; importing again reads every attribute and does.
  flip_byte(li, size - 100);
  EXPECT_EQ(run({"run", "--cpu", program_, "--data", rcol_dir()}), kOk) << err_;
  EXPECT_EQ(run({"import", program_, "--data", rcol_dir(), "-o", (dir_ / "again").string()}),
            kDataError);
  EXPECT_NE(err_.find(li + ": error: checksum mismatch in the dictionary of column l_comment"),
            std::string::npos)
      << err_;
  // In the middle of the file: a column the queries read.
  flip_byte(li, size / 2);
  EXPECT_EQ(run({"run", "--cpu", program_, "--data", rcol_dir()}), kDataError);
  EXPECT_NE(err_.find(li + ": error: checksum mismatch in column l_"), std::string::npos) << err_;
  fs::resize_file(li, size - 1000);
  EXPECT_EQ(run({"run", "--cpu", program_, "--data", rcol_dir()}), kDataError);
  EXPECT_NE(err_.find(li + ": error: truncated"), std::string::npos) << err_;
  // The program declares a type the file does not have.
  ASSERT_NO_FATAL_FAILURE(import_all());
  std::string decls = kDecls;
  decls.replace(decls.find("l_quantity f32"), 14, "l_quantity f64");
  std::string prog = write("mistyped.ra", decls + kQueries);
  EXPECT_EQ(run({"run", "--cpu", prog, "--data", rcol_dir()}), kDataError);
  EXPECT_NE(err_.find("attribute l_quantity has type f32 in the file, the program declares f64"),
            std::string::npos)
      << err_;
  // Bad text while importing is a data error too, and nothing is written for it.
  write("text/orders.tbl", "1|2|F|3.5|not a date|true|\n");
  fs::remove_all(rcol_dir());
  EXPECT_EQ(run({"import", program_, "--data", text_dir(), "-o", rcol_dir()}), kDataError);
  EXPECT_NE(err_.find("orders.tbl:1:"), std::string::npos) << err_;
  EXPECT_FALSE(fs::exists(rcol_dir() + "/orders.rcol"));
}

TEST_F(ImportTest, OnlyThreadsTimeAndUsageErrors) {
  ASSERT_EQ(run({"import", program_, "--data", text_dir(), "-o", rcol_dir(), "--only", "orders",
                 "--threads", "2", "--time"}),
            kOk)
      << err_;
  EXPECT_TRUE(fs::exists(rcol_dir() + "/orders.rcol"));
  EXPECT_FALSE(fs::exists(rcol_dir() + "/lineitem.rcol"));
  EXPECT_EQ(out_.find("lineitem"), std::string::npos) << out_;
  EXPECT_NE(err_.find("time: read"), std::string::npos) << err_;

  EXPECT_EQ(run({"import", program_, "--data", text_dir()}), kUsageError);
  EXPECT_NE(err_.find("-o is required"), std::string::npos) << err_;
  EXPECT_EQ(run({"import", program_, "-o", rcol_dir(), "--only", "nosuch"}), kUsageError);
  EXPECT_NE(err_.find("no input named 'nosuch'"), std::string::npos) << err_;
  EXPECT_EQ(run({"import", program_, "-o", rcol_dir(), "--threads", "0"}), kUsageError);
  EXPECT_EQ(run({"import", program_, "-o", rcol_dir(), "--input", "nosuch=x.tbl"}), kUsageError);
  // An output folder that is a file.
  std::string file = write("afile", "x");
  EXPECT_EQ(run({"import", program_, "--data", text_dir(), "-o", file}), kDataError);
  EXPECT_NE(err_.find("cannot create the folder"), std::string::npos) << err_;

  EXPECT_EQ(run({"import", "--help"}), kOk);
  EXPECT_NE(out_.find("usage: ranc import"), std::string::npos) << out_;
  EXPECT_EQ(run({"--help"}), kOk);
  EXPECT_NE(out_.find("import "), std::string::npos) << out_;
  EXPECT_EQ(run({"run", "--help"}), kOk);
  EXPECT_NE(out_.find(".rcol"), std::string::npos) << out_;
}


// ranc build: a package of the same program prints exactly the text run's output (on
// the CPU reference here: without a GPU the package's program text runs), also from
// the imported .rcol files; a damaged package is a data error naming it; building
// from a package and plan options at run time are usage errors.
TEST_F(ImportTest, BuildPackageRunsLikeTheProgram) {
  const std::string want = text_output();
  const std::string pkg = (dir_ / "q.rancpkg").string();
  ASSERT_EQ(run({"build", program_, "-o", pkg, "--arch", "90,80"}), kOk) << err_;
  EXPECT_NE(out_.find("kernels for sm_90, sm_80"), std::string::npos) << out_;
  ASSERT_EQ(run({"run", "--cpu", "--max-rows", "0", pkg, "--data", text_dir()}), kOk) << err_;
  EXPECT_EQ(out_, want);
  ASSERT_NO_FATAL_FAILURE(import_all());
  ASSERT_EQ(run({"run", "--cpu", "--max-rows", "0", pkg, "--data", rcol_dir()}), kOk) << err_;
  EXPECT_EQ(out_, want);

  EXPECT_EQ(run({"build", pkg, "-o", (dir_ / "again.rancpkg").string()}), kUsageError);
  EXPECT_NE(err_.find("already a package"), std::string::npos) << err_;
  EXPECT_EQ(run({"run", "--cpu", pkg, "--no-fusion", "--data", text_dir()}), kUsageError);
  EXPECT_EQ(run({"build", program_}), kUsageError);  // -o is required
  EXPECT_EQ(run({"build", program_, "-o", pkg, "--arch", "9"}), kUsageError);

  const uint64_t size = fs::file_size(pkg);
  flip_byte(pkg, size / 2);
  EXPECT_EQ(run({"run", "--cpu", pkg, "--data", text_dir()}), kDataError);
  EXPECT_NE(err_.find("checksum mismatch"), std::string::npos) << err_;
  EXPECT_NE(err_.find("q.rancpkg"), std::string::npos) << err_;
  fs::resize_file(pkg, size / 3);
  EXPECT_EQ(run({"run", "--cpu", pkg, "--data", text_dir()}), kDataError);
  EXPECT_NE(err_.find("truncated"), std::string::npos) << err_;
}

}  // namespace
}  // namespace ranc::cli
