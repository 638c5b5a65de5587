// ranc::Session on the GPU: resident relations (added and declared from files),
// programs run against them equal the CPU session's results, the shared dictionary
// grows and recodes what is resident, drop frees device memory, wider relations bind,
// the plan cache, and errors that leave the session usable.
#include "ranc/session.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fmt/format.h>

#include <fstream>

#include "gpu_test_util.h"
#include "ranc/io/csv.h"

namespace ranc {
namespace {

namespace fs = std::filesystem;

HostRelation people(int n, const std::string& prefix) {
  HostRelation r(Schema{{{"id", Type::I32}, {"name", Type::String}, {"city", Type::String},
                         {"score", Type::F64}},
                        0});
  for (int i = 0; i < n; ++i)
    r.append_row({Value::i32(i), Value::string(fmt::format("{}{}", prefix, i % 37)),
                  Value::string(fmt::format("c{}", i % 5)), Value::f64(i * 0.25)});
  return r;
}

std::string csv(const SessionResult& r) {
  std::string s;
  for (const auto& [n, rel] : r.outputs) s += n + "\n" + to_csv_string(rel);
  return s;
}

SessionOptions on(bool gpu, std::string data_dir = {}) {
  SessionOptions o;
  o.gpu = gpu;
  o.data_dir = std::move(data_dir);
  return o;
}

constexpr const char* kQuery =
    "input p(id i32, name string, score f64);\n"
    "input q(id i32, name string, city string, score f64);\n"
    "a = p |> select score > 10.0 |> reduce by name n = count(), s = sum(score)\n"
    "  |> sort name;\n"
    "qq = q |> project id as qid, city;\n"
    "b = p |> join qq on id = qid |> project name, city |> distinct |> sort name, city;\n"
    "output a;\noutput b;\n";

TEST(SessionGpu, ResidentRelationsMatchTheCpuSession) {
  RANC_REQUIRE_GPU();
  Session gpu(on(true));
  Session cpu(on(false));
  ASSERT_TRUE(gpu.on_gpu());
  const int64_t base = gpu.device_bytes_in_use();
  for (Session* s : {&gpu, &cpu}) {
    s->add("p", people(5000, "ann"));
    s->add("q", people(3000, "bob"));  // new strings: the shared dictionary grows
  }
  EXPECT_GT(gpu.device_bytes_in_use(), base);
  SessionResult g1 = gpu.run(kQuery);
  SessionResult c1 = cpu.run(kQuery);
  EXPECT_EQ(csv(g1), csv(c1));
  EXPECT_FALSE(g1.plan_cached);
  SessionResult g2 = gpu.run(kQuery);
  EXPECT_TRUE(g2.plan_cached);
  EXPECT_EQ(g2.stats.compile_source, rt::CacheSource::Memory);
  EXPECT_EQ(g2.stats.bytes_uploaded, 0);  // nothing uploaded: all resident
  EXPECT_EQ(csv(g2), csv(c1));

  // Replacing q with more strings recodes p (resident) into the grown dictionary.
  for (Session* s : {&gpu, &cpu}) s->add("q", people(4000, "zed"));
  EXPECT_EQ(csv(gpu.run(kQuery)), csv(cpu.run(kQuery)));

  // Drop frees the device memory.
  gpu.drop("q");
  gpu.drop("p");
  EXPECT_EQ(gpu.device_bytes_in_use(), base) << "resident bytes after dropping everything";
  EXPECT_THROW(gpu.drop("p"), UserError);
  EXPECT_THROW(gpu.run(kQuery), UserError);
  // Usable after the error.
  gpu.add("p", people(100, "x"));
  gpu.add("q", people(100, "y"));
  cpu.add("p", people(100, "x"));
  cpu.add("q", people(100, "y"));
  EXPECT_EQ(csv(gpu.run(kQuery)), csv(cpu.run(kQuery)));
}

TEST(SessionGpu, DeclaredFilesLoadOnlyWhatIsUsed) {
  RANC_REQUIRE_GPU();
  fs::path dir = fs::temp_directory_path() / ("ranc_session_gpu_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  HostRelation t = people(20000, "w");
  write_tbl(t, (dir / "t.tbl").string());
  Session gpu(on(true, dir.string()));
  Session cpu(on(false, dir.string()));
  const std::string decl = "input t(id i32, name string, city string, score f64) from \"t.tbl\";\n";
  const std::string q1 = decl + "s = t |> reduce total = sum(score);\noutput s;\n";
  const std::string q2 = decl + "c = t |> reduce by city n = count() |> sort city;\noutput c;\n";
  for (Session* s : {&gpu, &cpu}) {
    EXPECT_EQ(csv(s->run(q1)), csv(cpu.run(q1)));
    auto rels = s->relations();
    ASSERT_EQ(rels.size(), 1u);
    EXPECT_EQ(rels[0].loaded, std::vector<std::string>{"score"});
    EXPECT_EQ(rels[0].rows, 20000);
  }
  EXPECT_EQ(csv(gpu.run(q2)), csv(cpu.run(q2)));
  EXPECT_EQ(gpu.relations()[0].loaded, (std::vector<std::string>{"city", "score"}));
  EXPECT_GT(gpu.relations()[0].device_bytes, 0);
  // A declaration that does not match the file's relation is a clear error.
  EXPECT_THROW(gpu.run("input t(id i64);\nx = t |> reduce m = max(id);\noutput x;\n"),
               UserError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ranc
