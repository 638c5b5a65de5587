// A program built against an installed ranc (find_package(ranc), ranc::ranc): a
// session holding one relation, a .ra query and a C++ DSL query run against it, on
// the GPU when there is one and on the CPU reference otherwise.
#include <cstdio>
#include <exception>

#include "ranc/dsl.h"
#include "ranc/session.h"

using namespace ranc;

int main() {
  try {
    Session s;  // the GPU when one is available, else the CPU reference
    s.add("edges", HostRelation::from_rows(Schema{{{"src", Type::I32}, {"dst", Type::I32}}, 0},
                                           {{Value::i32(1), Value::i32(2)},
                                            {Value::i32(2), Value::i32(3)},
                                            {Value::i32(2), Value::i32(4)},
                                            {Value::i32(3), Value::i32(1)}}));
    std::printf("running on: %s\n", s.device_name().c_str());

    // .ra text: out-degree per source.
    SessionResult a = s.run(
        "input edges(src i32, dst i32);\n"
        "deg = edges |> reduce by src n = count() |> sort src;\n"
        "output deg;\n");
    std::printf("%s", a.outputs[0].second.to_table().c_str());

    // The C++ DSL: two-hop paths.
    ProgramBuilder b;
    Rel edges = b.input("edges", {{"src", Type::I32}, {"dst", Type::I32}});
    Rel second = edges.project({as(col("src"), "mid"), as(col("dst"), "end")});
    b.output(edges.join(second, {"dst"}, {"mid"}).project({"src", "end"}).distinct().sort({"src", "end"}),
             "two_hops");
    SessionResult p = s.run(b.check());
    std::printf("%s", p.outputs[0].second.to_table().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ranc_app: %s\n", e.what());
    return 1;
  }
  return 0;
}
