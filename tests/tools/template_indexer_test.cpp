// tools/template_indexer on copies of the template headers: a pristine copy gives the registry
// the build generated; a copy whose SelectAgent::Hooks::pred takes an int gives a registry that
// differs in exactly that hook, and the code generator, given it, rejects its select kernel before
// NVRTC sees any source; copies with malformed contracts make the indexer fail, naming the header,
// the skeleton and the hook, and write nothing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>

#include "ranc/codegen/codegen.h"
#include "ranc/codegen/template_registry.h"
#include "ranc/data/error.h"
#include "ranc/dsl.h"

namespace ranc::codegen {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A copy of the template headers in a fresh temporary folder (INCLUDE/ranc/templates/*.cuh).
class HeaderCopy {
 public:
  explicit HeaderCopy(const std::string& name)
      : root_(fs::temp_directory_path() /
              ("ranc_indexer_test_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(root_);
    fs::create_directories(dir());
    for (const auto& e :
         fs::directory_iterator(fs::path(RANC_TEMPLATE_INCLUDE_DIR) / "ranc" / "templates"))
      if (e.path().extension() == ".cuh") fs::copy_file(e.path(), dir() / e.path().filename());
  }
  ~HeaderCopy() { fs::remove_all(root_); }
  fs::path include() const { return root_ / "include"; }
  fs::path dir() const { return include() / "ranc" / "templates"; }
  fs::path output() const { return root_ / "registry.txt"; }

  // Replaces the one occurrence of `from` in header `file` by `to`.
  void edit(const std::string& file, const std::string& from, const std::string& to) const {
    std::string text = read_file(dir() / file);
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << file << " has no '" << from << "'";
    ASSERT_EQ(text.find(from, at + 1), std::string::npos) << file << " has '" << from << "' twice";
    text.replace(at, from.size(), to);
    std::ofstream(dir() / file, std::ios::binary) << text;
  }

  // Runs the indexer on the copy: its exit status and what it printed.
  std::pair<int, std::string> index() const {
    std::string cmd =
        shell_quoted(RANC_TEMPLATE_INDEXER) + " --include-dir " + shell_quoted(include().string());
    std::istringstream args(RANC_TEMPLATE_INDEXER_ARGS);
    for (std::string a; std::getline(args, a, '\t');) cmd += " " + shell_quoted(a);
    cmd += " --output " + shell_quoted(output().string()) + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return {-1, "popen failed"};
    std::string out;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int status = ::pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  }

 private:
  fs::path root_;
};

// The indexer's error for a copy edited by `edit`: it fails and writes no registry.
std::string indexer_error(const std::string& name,
                          const std::function<void(const HeaderCopy&)>& edit) {
  HeaderCopy copy(name);
  edit(copy);
  auto [status, out] = copy.index();
  EXPECT_EQ(status, 1) << out;
  EXPECT_FALSE(fs::exists(copy.output())) << "a registry was written for a malformed contract";
  return out;
}

TEST(TemplateIndexer, PristineCopyGivesTheBuiltInRegistry) {
  HeaderCopy copy("pristine");
  auto [status, out] = copy.index();
  ASSERT_EQ(status, 0) << out;
  EXPECT_EQ(read_file(copy.output()), builtin_template_registry_text());
}

TEST(TemplateIndexer, BrokenHookSignatureIsCaughtByTheGenerator) {
  HeaderCopy copy("broken_hook");
  copy.edit("select.cuh", "__device__ bool pred(i64 row) const;",
            "__device__ bool pred(int row) const;");
  auto [status, out] = copy.index();
  ASSERT_EQ(status, 0) << out;
  const std::string text = read_file(copy.output());

  // The registry differs from the built-in one in that hook's line and nowhere else.
  std::istringstream a{std::string(builtin_template_registry_text())}, b{text};
  std::vector<std::pair<std::string, std::string>> diff;
  for (std::string la, lb; std::getline(a, la) && std::getline(b, lb);)
    if (la != lb) diff.emplace_back(la, lb);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0].first, "hook\tpred\tbool\tlong long|row");
  EXPECT_EQ(diff[0].second, "hook\tpred\tbool\tint|row");

  // The generator, checking against it, rejects the select kernel it writes, naming the
  // template, its header and the hook; with the built-in registry the program generates.
  const TemplateRegistry broken = TemplateRegistry::parse(text);
  ProgramBuilder pb;
  // Rows of 24 bytes: SelectAgent (SelectValuesAgent stages rows of at most 16).
  auto r = pb.input("r", {{"a", Type::I64}, {"b", Type::I64}, {"c", Type::I64}});
  pb.output(r.select(col("a") < 5), "o");
  const Program p = pb.check();
  EXPECT_NO_THROW(generate_plan(p));
  try {
    generate_plan(p, {.templates = &broken});
    FAIL() << "the generator accepted a select kernel its registry rejects";
  } catch (const InternalError& e) {
    EXPECT_NE(
        std::string(e.what()).find("template SelectAgent (ranc/templates/select.cuh): hook 'pred': "
                                   "the generator writes bool(long long) but the header declares "
                                   "bool(int)"),
        std::string::npos)
        << e.what();
  }
}

TEST(TemplateIndexer, HookWithoutSignature) {
  const std::string out = indexer_error("no_signature", [](const HeaderCopy& c) {
    c.edit("select.cuh", "__device__ void emit(i64 row, i64 out_row) const;", "");
  });
  EXPECT_TRUE(std::regex_search(
      out, std::regex("ranc/templates/select\\.cuh:[0-9]+: SelectAgent::run takes hook "
                      "'emit' \\(template parameter Emit\\) but SelectAgent::Hooks "
                      "declares no signature for it")))
      << out;
}

TEST(TemplateIndexer, HookCalledWithOtherArity) {
  const std::string out = indexer_error("arity", [](const HeaderCopy& c) {
    c.edit("select.cuh", "__device__ void emit(i64 row, i64 out_row) const;",
           "__device__ void emit(i64 row) const;");
  });
  EXPECT_TRUE(std::regex_search(
      out, std::regex("ranc/templates/select\\.cuh:[0-9]+: SelectAgent::run calls hook "
                      "'emit' with 2 arguments; Hooks::emit declares 1")))
      << out;
}

TEST(TemplateIndexer, DeclaredHookNoEntryTakes) {
  const std::string out = indexer_error("unused_hook", [](const HeaderCopy& c) {
    c.edit("product.cuh", "__device__ void emit(i64 a_row, i64 b_row, i64 out_row) const;",
           "__device__ void emit(i64 a_row, i64 b_row, i64 out_row) const;\n    __device__ bool "
           "extra(i64 row) const;");
  });
  EXPECT_TRUE(std::regex_search(
      out, std::regex("ranc/templates/product\\.cuh:[0-9]+: ProductAgent::Hooks declares "
                      "hook 'extra' but no entry point of ProductAgent takes it")))
      << out;
}

TEST(TemplateIndexer, EntryWithoutLaunchRule) {
  const std::string out = indexer_error("no_launch", [](const HeaderCopy& c) {
    c.edit("product.cuh", "static constexpr LaunchRule run_launch",
           "static constexpr LaunchRule other_launch");
  });
  EXPECT_NE(out.find("ProductAgent::run has no launch rule"), std::string::npos) << out;
  EXPECT_NE(out.find("ProductAgent::other_launch: ProductAgent has no entry point 'other'"),
            std::string::npos)
      << out;
}

TEST(TemplateIndexer, AgentWithoutHooks) {
  const std::string out = indexer_error("stray_agent", [](const HeaderCopy& c) {
    c.edit("product.cuh", "template <class Policy>\nstruct ProductAgent {",
           "template <class F>\nstruct StrayAgent {\n  __device__ static void run(F f) { f(0); "
           "}\n};\n\n"
           "template <class Policy>\nstruct ProductAgent {");
  });
  EXPECT_TRUE(std::regex_search(
      out, std::regex("ranc/templates/product\\.cuh:[0-9]+: StrayAgent: a skeleton "
                      "\\(a struct named \\*Agent\\) must declare its hooks")))
      << out;
}

TEST(TemplateIndexer, HeaderThatDoesNotParse) {
  const std::string out = indexer_error("syntax", [](const HeaderCopy& c) {
    c.edit("product.cuh", "struct ProductAgent {", "struct ProductAgent { int missing_semicolon");
  });
  EXPECT_NE(out.find("could not parse the templates"), std::string::npos) << out;
  EXPECT_NE(out.find("product.cuh"), std::string::npos) << out;
}

}  // namespace
}  // namespace ranc::codegen
