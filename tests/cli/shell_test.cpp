// `ranc shell` driven through standard input (CPU reference, so it runs without a
// GPU): declarations load lazily and only the attributes used, definitions persist
// and are checked when entered, outputs print as tables, errors leave the session
// usable and set the exit code, dot-commands, scripts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli.h"
#include "cli_fixture.h"
#include "ranc/dsl.h"
#include "ranc/io/columnar.h"
#include "ranc/session.h"

namespace ranc::cli {
namespace {

namespace fs = std::filesystem;

class ShellTest : public CliFixture {
 protected:
  void SetUp() override {
    CliFixture::SetUp();
    // k, note (unused by the queries; 'x' would not even be a valid i32), v
    write("t.tbl", "1|x|10|\n2|y|20|\n3|z|30|\n");
  }

  int shell(const std::string& script, ShellOptions o = {}) {
    o.gpu = false;
    o.data_dir = dir_.string();
    std::istringstream in(script);
    std::ostringstream out, err;
    int rc = run_shell(o, in, out, err, false);
    out_ = out.str();
    err_ = err.str();
    return rc;
  }
};

constexpr const char* kDecl = "input t(k i32, note string, v i64) from \"t.tbl\" format tbl;\n";

TEST_F(ShellTest, DeclareDefineOutputAndTables) {
  int rc = shell(std::string(kDecl) +
                 ".tables\n"
                 "big = t |> select k > 1;\n"
                 "s = big\n"
                 "  |> reduce total = sum(v);   -- a statement over two lines\n"
                 "output s;\n"
                 ".tables\n");
  EXPECT_EQ(rc, kOk) << err_;
  EXPECT_NE(out_.find("not loaded yet"), std::string::npos) << out_;
  EXPECT_NE(out_.find("s:\n"), std::string::npos) << out_;
  EXPECT_NE(out_.find("50"), std::string::npos) << out_;
  // Only k and v were read (note never was).
  EXPECT_NE(out_.find("3 rows; loaded: k, v"), std::string::npos) << out_;
}

TEST_F(ShellTest, LaterQueriesLoadMoreAttributesAndReuseDefinitions) {
  int rc = shell(std::string(kDecl) +
                 "a = t |> reduce n = count();\n"
                 "output a;\n"
                 "b = t |> select note = 'y' |> project k;\n"
                 "output b;\n"
                 "output a;\n"
                 ".tables\n");
  EXPECT_EQ(rc, kOk) << err_;
  EXPECT_NE(out_.find("b:\nk\n-\n2\n(1 row)"), std::string::npos) << out_;
  EXPECT_NE(out_.find("loaded: k, note"), std::string::npos) << out_;
}

TEST_F(ShellTest, ErrorsLeaveTheSessionUsable) {
  int rc = shell(std::string(kDecl) +
                 "bad = nothing |> select x > 1;\n"   // unknown relation: not kept
                 "s = t |> reduce total = sum(v);\n"
                 "output nope;\n"                       // unknown relation
                 "this is not a statement;\n"
                 ".nosuchcommand\n"
                 "output s;\n");
  EXPECT_EQ(rc, kProgramError);
  EXPECT_NE(err_.find("unknown relation 'nothing'"), std::string::npos) << err_;
  EXPECT_NE(err_.find("unknown command '.nosuchcommand'"), std::string::npos) << err_;
  EXPECT_NE(out_.find("   60\n"), std::string::npos) << out_;  // the last output still ran
}

TEST_F(ShellTest, BadDataIsADataErrorAndTheShellGoesOn) {
  std::ofstream(dir_ / "bad.tbl") << "1|a|10|\n2|b|oops|\n";
  int rc = shell("input b(k i32, note string, v i64) from \"bad.tbl\" format tbl;\n"
                 "s = b |> reduce total = sum(v);\n"
                 "output s;\n"
                 "c = b |> reduce n = count();\n"
                 "output c;\n");
  EXPECT_EQ(rc, kDataError);
  EXPECT_NE(err_.find("bad.tbl:2:"), std::string::npos) << err_;
  EXPECT_NE(out_.find("c:\n"), std::string::npos) << out_;  // k alone loads fine
}

TEST_F(ShellTest, DropReadTimerMemoryAndQuit) {
  std::ofstream(dir_ / "script.ra") << kDecl << "s = t |> reduce total = sum(v);\noutput s;\n";
  int rc = shell(".read " + (dir_ / "script.ra").string() +
                 "\n.timer on\noutput s;\n.drop t\n.tables\noutput s;\n.memory\n.quit\n"
                 "output s;\n");
  EXPECT_EQ(rc, kOk) << err_;
  // The result's cell, a line of its own ("   60"): a timer line such as "0.260 ms" also
  // holds "60".
  size_t n = 0;
  for (size_t at = out_.find("   60\n"); at != std::string::npos; at = out_.find("   60\n", at + 1)) ++n;
  EXPECT_EQ(n, 3u) << out_;  // .read, then twice more; nothing after .quit
  EXPECT_NE(out_.find("time: plan"), std::string::npos) << out_;
  EXPECT_NE(out_.find("(cached)"), std::string::npos) << out_;
  EXPECT_NE(out_.find("CPU reference: 0 B"), std::string::npos) << out_;
}

// Reading a second program that declares the same file again keeps what is loaded.
TEST_F(ShellTest, RedeclaringTheSameFileKeepsItLoaded) {
  std::ofstream(dir_ / "a.ra") << kDecl << "a = t |> reduce total = sum(v);\noutput a;\n";
  std::ofstream(dir_ / "b.ra") << kDecl << "b = t |> reduce n = count();\noutput b;\n";
  int rc = shell(".read " + (dir_ / "a.ra").string() + "\n.read " + (dir_ / "b.ra").string() +
                 "\n.tables\n");
  EXPECT_EQ(rc, kOk) << err_;
  EXPECT_NE(out_.find("3 rows; loaded: k, v"), std::string::npos) << out_;
}

// A relation declared from a columnar file that records the order of its rows is planned as
// sorted by it (the timer says so), as `ranc run` plans it; declared again from a file
// without that order, the cached plan is made again without it. Same results either way,
// and with the recorded orders off.
TEST_F(ShellTest, RecordedOrdersPlanRelationsAsSorted) {
  auto rcol = [&](const std::string& name, bool sorted) {
    Schema sc;
    sc.attributes = {{"k", Type::I32}, {"v", Type::I64}};
    HostRelation rel(sc);
    const int n = 70000;
    for (int i = 0; i < n; ++i) {
      const int k = sorted ? i / 4 : (i * 7919) % (n / 4);
      rel.append_row({Value::i32(k), Value::i64(i % 13 - 4)});
    }
    write_columnar((dir_ / name).string(), rel);
  };
  rcol("sorted.rcol", true);
  rcol("mixed.rcol", false);
  const std::string query =
      "q = r |> reduce by k s = sum(v) |> select s > 0 |> reduce n = count(), t = sum(s);\n"
      "output q;\n";
  ShellOptions o;
  o.timer = true;
  const std::string order_line = "inputs in order (planned as sorted by): r by k (recorded)";
  ASSERT_EQ(shell("input r(k i32, v i64) from \"sorted.rcol\";\n.tables\n", o), kOk) << err_;
  EXPECT_NE(out_.find("sorted.rcol; the file records rows ascending by k\n"), std::string::npos)
      << out_;
  ASSERT_EQ(shell("input r(k i32, v i64) from \"sorted.rcol\";\n" + query + "output q;\n" +
                      "input r(k i32, v i64) from \"mixed.rcol\";\noutput q;\n",
                  o),
            kOk)
      << err_;
  // The first two runs (the second from the cache) took the order; the third did not.
  size_t at = out_.find(order_line), count = 0;
  for (; at != std::string::npos; at = out_.find(order_line, at + 1)) ++count;
  EXPECT_EQ(count, 2u) << out_;
  EXPECT_NE(out_.find("(cached)"), std::string::npos) << out_;
  const std::string with = out_;
  o.recorded_order = false;
  ASSERT_EQ(shell("input r(k i32, v i64) from \"sorted.rcol\";\n" + query + "output q;\n" +
                      "input r(k i32, v i64) from \"mixed.rcol\";\noutput q;\n",
                  o),
            kOk)
      << err_;
  EXPECT_EQ(out_.find("inputs in order"), std::string::npos) << out_;
  // The same tables (the timer lines aside).
  auto tables = [](const std::string& text) {
    std::string kept, line;
    std::istringstream in(text);
    while (std::getline(in, line))
      if (line.rfind("time:", 0) != 0 && line.rfind("inputs in order", 0) != 0) kept += line + "\n";
    return kept;
  };
  EXPECT_EQ(tables(with), tables(out_));
}

// The embedding API takes recorded orders too, for a checked program of the C++ DSL.
TEST_F(ShellTest, SessionPlansDslProgramsByRecordedOrders) {
  Schema sc;
  sc.attributes = {{"k", Type::I64}, {"v", Type::I32}};
  HostRelation rel(sc);
  for (int i = 0; i < 80000; ++i) rel.append_row({Value::i64(i / 2 - 7), Value::i32(i % 5)});
  write_columnar((dir_ / "r.rcol").string(), rel);
  auto result = [&](bool recorded) {
    SessionOptions so;
    so.gpu = false;
    so.recorded_order = recorded;
    Session s(so);
    s.declare("r", (dir_ / "r.rcol").string(), sc);
    ProgramBuilder b;
    auto r = b.input("r", sc.attributes, 0);
    b.output(r.reduce({"k"}, {ranc::sum(col("v"), "s")}).select(col("s") > 3), "q");
    SessionResult res = s.run(b.check());
    EXPECT_EQ(res.recorded_orders, recorded ? "r by k" : "");
    return res.outputs.at(0).second.to_table(0);
  };
  EXPECT_EQ(result(true), result(false));
}

TEST_F(ShellTest, UnfinishedStatementIsAnError) {
  EXPECT_EQ(shell(std::string(kDecl) + "s = t |> reduce total = sum(v)\n"), kProgramError);
  EXPECT_NE(err_.find("a ';' is missing"), std::string::npos) << err_;
}

// A fixpoint block is one statement over several lines; it defines the names it
// assigns, which later statements use and which a later block may redefine.
TEST_F(ShellTest, FixpointBlockDefinesItsNames) {
  std::ofstream(dir_ / "e.tbl") << "1|2|\n2|3|\n";
  int rc = shell(
      "input e(src i32, dst i32) from \"e.tbl\" format tbl;\n"
      "fixpoint {\n"
      "  path = e;\n"
      "  path = path |> join (e |> project src as mid, dst as to) on dst = mid\n"
      "    |> project src, to as dst;   -- '}' in a comment or ';' do not end the block\n"
      "}\n"
      "n = path |> reduce n = count();\n"
      "output n;\n"
      "fixpoint max 1 { path = e; }\n"
      "output n;\n"
      "fixpoint { path = e |> select nope > 0; }\n"  // does not check: not kept
      "output path |> sort src, dst as tc;\n");
  EXPECT_EQ(rc, kProgramError) << err_;
  EXPECT_NE(out_.find("n:\nn\n-\n3\n(1 row)"), std::string::npos) << out_;
  EXPECT_NE(out_.find("n:\nn\n-\n2\n(1 row)"), std::string::npos) << out_;
  EXPECT_NE(err_.find("'nope'"), std::string::npos) << err_;
  EXPECT_NE(out_.find("tc:\nsrc  dst\n---  ---\n  1    2\n  2    3\n(2 rows)"), std::string::npos)
      << out_;
}

}  // namespace
}  // namespace ranc::cli
