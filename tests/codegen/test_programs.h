// Programs shared by the code generation tests: together they cover every operator,
// every expression kind and the key types (i32, i64, f64, string, bool, multi-attribute).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include <variant>

#include "ranc/dsl.h"
#include "ranc/passes/pass_runner.h"

namespace ranc::testing {

// Every expression kind, in select predicates and project expressions.
inline Program expressions_program() {
  ProgramBuilder b;
  auto r = b.input("r", {{"a", Type::I32},
                         {"b", Type::I64},
                         {"c", Type::F64},
                         {"d", Type::F32},
                         {"e", Type::Date},
                         {"s", Type::String},
                         {"t", Type::Bool}});
  auto p1 = r.select(((col("a") + 1 > 3 && col("b") * 2 <= 100) || !(col("c") / 2.0 < col("d"))) &&
                     col("a") / col("a") >= 0 && col("b") % 7 != 1 && col("a") - 5 < col("b"));
  b.output(p1, "sel_arith");
  auto p2 =
      r.select(between(col("c"), 1.0, 2.0) || in_list(col("a"), {1, 2, 3}) ||
               cast(col("c"), Type::I32) > 1 || cast(col("t"), Type::I32) == 1 ||
               year(col("e")) == 1994 || like(col("s"), "%ab_") || starts_with(col("s"), "pre"));
  b.output(p2, "sel_misc");
  auto p3 = r.select((col("s") == "x" || col("s") < "m" || Expr("m") <= col("s") ||
                      col("s") != col("s") || col("s") > "q" || col("s") >= "z" ||
                      between(col("s"), "b", "d") || in_list(col("s"), {"u", "v"})) &&
                     col("e") + 1 < date_lit("1995-01-01") && col("t") == true && col("s") != "zz");
  b.output(p3, "sel_strings");
  auto p4 = r.project({"a",
                       as(-col("a"), "neg_a"),
                       as(-col("c"), "neg_c"),
                       as(col("d") * 2.5f, "d2"),
                       as(cast(col("c"), Type::I64), "c_i64"),
                       as(cast(col("a"), Type::F64), "a_f64"),
                       as(cast(col("b"), Type::I32), "b_i32"),
                       as(cast(col("c"), Type::Bool), "c_bool"),
                       as(cast(col("e"), Type::I32), "e_i32"),
                       as(cast(col("a"), Type::Date), "a_date"),
                       as(case_when({{col("a") > 1, col("b")}, {col("a") < -1, lit(Value::i64(7))}},
                                    lit(Value::i64(0))),
                          "case_b"),
                       as(col("e") - col("e"), "days"),
                       as(col("e") + 30, "e30"),
                       as(year(col("e")), "y"),
                       as(col("b") / 3 + col("b") % 3, "divmod"),
                       as(cast(col("c"), Type::I64) % 2, "imod"),
                       as(lit(Value::i32(std::numeric_limits<int32_t>::min())), "imin"),
                       as(lit(Value::i64(std::numeric_limits<int64_t>::min())), "lmin"),
                       as(lit(Value::f64(std::numeric_limits<double>::infinity())), "inf"),
                       as(lit(Value::f64(std::nan(""))), "nan"),
                       as(lit(Value::f32(-0.0f)), "negz"),
                       as(col("s") < "k", "s_lt"),
                       as(!col("t"), "not_t"),
                       "s",
                       "t"});
  b.output(p4, "proj_all");
  return b.check();
}

// Every operator and key type.
inline Program operators_program() {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32},
                         {"k64", Type::I64},
                         {"kf", Type::F64},
                         {"ks", Type::String},
                         {"v", Type::I64},
                         {"w", Type::F64},
                         {"bo", Type::Bool},
                         {"f", Type::F32}});
  auto q = b.input("q", {{"qk", Type::I32},
                         {"qk64", Type::I64},
                         {"qkf", Type::F64},
                         {"qks", Type::String},
                         {"qv", Type::I32}});
  b.output(r.join(q, {"k"}, {"qk"}), "j_i32");
  b.output(r.join(q, {"k64"}, {"qk64"}), "j_i64");
  b.output(r.join(q, {"kf"}, {"qkf"}), "j_f64");
  b.output(r.join(q, {"ks"}, {"qks"}), "j_str");
  b.output(r.join(q, {"k", "ks"}, {"qk", "qks"}), "j_multi");
  b.output(r.join(q, {"k"}, {"qk"}, JoinKind::Inner, col("v") > col("qv")), "j_residual");
  b.output(r.semi_join(q, {"k"}, {"qk"}), "semi");
  b.output(r.anti_join(q, {"k64", "kf"}, {"qk64", "qkf"}), "anti");
  b.output(r.semi_join(q, {"k"}, {"qk"}, col("w") < cast(col("qv"), Type::F64)), "semi_residual");
  b.output(r.anti_join(q, {"ks"}, {"qks"}, col("v") / cast(col("qv"), Type::I64) > 1),
           "anti_residual");
  b.output(r.reduce({"k"}, {ranc::sum(col("v"), "sv"), ranc::sum(col("w"), "sw"), ranc::count("n"),
                            ranc::min(col("kf"), "mn"), ranc::max(col("ks"), "mx"),
                            ranc::avg(col("v"), "av"), ranc::sum(col("f"), "sf"),
                            ranc::min(col("k64"), "mn64"), ranc::max(col("f"), "mxf")}),
           "red_i32");
  b.output(r.reduce({"ks", "k64"}, {ranc::sum(col("v") * 2, "s2"), ranc::avg(col("w"), "aw")}),
           "red_multi");
  b.output(r.reduce({}, {ranc::count("n"), ranc::sum(col("k"), "sk"), ranc::max(col("w"), "mw")}),
           "red_all");
  b.output(r.reduce({"kf", "bo"}, {ranc::count("n")}), "red_f64_bool");
  b.output(r.sort({desc("k"), "kf"}), "sort_desc");
  b.output(r.sort({"ks", desc("bo"), "f"}), "sort_str_bool_f32");
  b.output(r.sort({"k64"}).limit(5, 3), "sort_limit");
  b.output(r.limit(10), "limit");
  b.output(r.distinct(), "distinct");
  auto rk = r.project({"k", "v"});
  auto qk = q.project({as(col("qk"), "k"), as(cast(col("qv"), Type::I64), "v")});
  b.output(rk.union_with(qk), "union");
  b.output(rk.intersect(qk), "intersect");
  b.output(rk.difference(qk), "difference");
  b.output(rk.distinct().union_with(qk.distinct()), "union_of_distinct");
  b.output(r.project({"k", "w"}).product(q.project({"qk", "qks"})), "product");
  b.output(r.select(col("k") > 0)
               .project({"k", as(col("v") + 1, "v1")})
               .sort({"k"})
               .reduce({"k"}, {ranc::sum(col("v1"), "s")}),
           "chain");
  return b.check();
}

// Inner joins on every key type that the hash join packs into one word (i32, date,
// string, bool, f32 in 32 bits; i64, f64 and two 32-bit keys in 64 bits), with and
// without residuals, a right input with only key attributes and a join of a join.
inline Program hash_join_program() {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32},
                         {"k64", Type::I64},
                         {"kf", Type::F64},
                         {"kf32", Type::F32},
                         {"kd", Type::Date},
                         {"ks", Type::String},
                         {"kb", Type::Bool},
                         {"v", Type::I64},
                         {"w", Type::F64}});
  auto q = b.input("q", {{"qk", Type::I32},
                         {"qk64", Type::I64},
                         {"qkf", Type::F64},
                         {"qkf32", Type::F32},
                         {"qkd", Type::Date},
                         {"qks", Type::String},
                         {"qkb", Type::Bool},
                         {"qv", Type::I32}});
  b.output(r.join(q, {"k"}, {"qk"}), "j_i32");
  b.output(r.join(q, {"k64"}, {"qk64"}), "j_i64");
  b.output(r.join(q, {"kf"}, {"qkf"}), "j_f64");
  b.output(r.join(q, {"kf32"}, {"qkf32"}), "j_f32");
  b.output(r.join(q, {"kd"}, {"qkd"}), "j_date");
  b.output(r.join(q, {"ks"}, {"qks"}), "j_str");
  b.output(r.select(col("k") < 3).join(q.select(col("qk") < 3), {"kb"}, {"qkb"}), "j_bool");
  b.output(r.join(q, {"k", "kd"}, {"qk", "qkd"}), "j_two_i32");
  b.output(r.join(q, {"ks", "kf32"}, {"qks", "qkf32"}), "j_str_f32");
  b.output(r.join(q, {"k"}, {"qk"}, JoinKind::Inner, col("v") > col("qv")), "j_i32_residual");
  b.output(r.join(q, {"k64"}, {"qk64"}, JoinKind::Inner,
                  col("w") < cast(col("qv"), Type::F64) || col("ks") != col("qks")),
           "j_i64_residual");
  b.output(r.join(q, {"kf"}, {"qkf"}, JoinKind::Inner, col("qks") >= "k000000003" && !col("qkb")),
           "j_f64_residual");
  b.output(r.join(q, {"k", "kd"}, {"qk", "qkd"}, JoinKind::Inner, col("kb") == col("qkb")),
           "j_two_i32_residual");
  b.output(r.join(q.project({"qk"}), {"k"}, {"qk"}), "j_keys_only_right");
  b.output(
      r.project({"k", "v"})
          .join(q.project({"qk", "qk64", "qv"}), {"k"}, {"qk"})
          .join(q.project({as(col("qk64"), "k64b"), as(col("qv"), "qv2")}), {"qk64"}, {"k64b"}),
      "j_of_j");
  return b.check();
}

// One program per fusion rule (passes/fuse_pipelines.h): chains of select/project, a
// select/project in front of a join's left side and of a grouped and a global reduce, a
// select after a join (residual), a semi and an anti join inside a chain, a limit fused
// into a select, a theta join (select after product), project chains into set operations
// and distinct, and barriers (sort, two consumers, product inputs, outputs).
inline Program fusion_program() {
  ProgramBuilder b;
  auto r = b.input("r", {{"k", Type::I32}, {"v", Type::I64}, {"f", Type::F64}, {"s", Type::String}});
  auto q = b.input("q", {{"qk", Type::I32}, {"qv", Type::I64}});
  auto chain = r.select(col("k") > 3).select(col("v") % 2 == 0).project(
      {"k", as(col("v") * 3 + 1, "v3"), as(col("f") / 2.0, "f2")});
  b.output(chain, "chain");
  b.output(r.select(col("f") < 2.5).project({"k", as(col("v") / 3, "d")}).join(q, {"k"}, {"qk"}),
           "into_join");
  b.output(r.join(q, {"k"}, {"qk"}).select(col("qv") > col("v")).project({"k", as(col("qv") - col("v"), "diff")}),
           "after_join");
  b.output(r.select(col("k") < 10).project({as(col("v") * 2, "x"), "f"}).reduce({}, {sum(col("x"), "sx"), max(col("f"), "mf"), count("n")}),
           "global_reduce");
  b.output(r.project({"k", as(col("v") + 1, "w")}).reduce({"k"}, {sum(col("w"), "sw")}), "grouped_reduce");
  // A select in front of a reduce that hashes (string and i32 keys in one 63-bit word).
  b.output(r.select(col("f") < 1.0).reduce({"s", "k"}, {sum(col("v"), "sv"), min(col("f"), "mf"), count("n")}),
           "filtered_hash_reduce");
  b.output(r.semi_join(q, {"k"}, {"qk"}).select(col("v") > 0).anti_join(q.select(col("qv") < 0), {"k"}, {"qk"})
               .project({"k", "s"}),
           "semi_anti");
  b.output(r.sort({"k"}).select(col("v") > 2).limit(5, 2), "select_limit");
  b.output(r.project({"k", "v"}).product(q.select(col("qk") < 3)).select(col("k") < col("qk")), "theta");
  b.output(r.project({as(col("k") + 1, "u")}).union_with(q.project({"qk"})), "set_of_projects");
  b.output(r.project({as(col("k") * 2, "u")}).distinct(), "distinct_of_project");
  auto shared = r.select(col("k") > 0);
  b.output(shared.project({"k"}), "shared_a");
  b.output(shared.project({"v"}), "shared_b");
  return b.check();
}

// The kernels a plan defines, and the launches in its steps, whose name contains `part`.
inline int kernels_named(const rt::Plan& plan, std::string_view part) {
  int c = 0;
  for (const auto& k : plan.kernels) c += k.find(part) != std::string::npos;
  return c;
}
inline int launches_named(const rt::Plan& plan, std::string_view part) {
  int c = 0;
  for (const auto& s : plan.steps)
    if (const auto* l = std::get_if<rt::Launch>(&s)) c += l->kernel.find(part) != std::string::npos;
  return c;
}

// Empty when every kernel of the pipeline's plan contains exactly the operators that
// fuse_pipelines grouped into it: a fused node runs only in kernels of its group's node
// (the last operator a kernel lists), and a kernel lists a fused node only if the node's
// group is that kernel's; every fused node runs in some kernel, except projects in a
// group that runs none (only passed-through columns). Otherwise a description of the first disagreement.
inline std::string kernel_group_mismatch(const passes::PipelineResult& r) {
  const auto& pn = r.physical.nodes;
  std::vector<bool> seen(pn.size(), false);
  for (const auto& step : r.plan.steps) {
    const auto* l = std::get_if<rt::Launch>(&step);
    if (!l || l->nodes.empty()) continue;
    int32_t group = l->nodes.back();
    size_t members = l->nodes.size() - 1;
    // Or the head of a group, all of whose nodes are fused into one later node: the hash
    // group-by's way out for many groups materialises its fused input chain to sort it.
    const auto& last = pn.at(static_cast<size_t>(group));
    if (last.fused && r.physical.program.node(last.kernel).kind == OpKind::Reduce &&
        std::all_of(l->nodes.begin(), l->nodes.end(), [&](int32_t m) {
          const auto& q = pn.at(static_cast<size_t>(m));
          return q.fused && q.kernel == last.kernel;
        })) {
      group = last.kernel;
      members = l->nodes.size();
    }
    for (size_t i = 0; i < members; ++i) {
      const auto& p = pn.at(static_cast<size_t>(l->nodes[i]));
      // Input sharing: an unfused chain written by its group's kernel.
      if (!p.fused && p.shared_read >= 0 && p.kernel == group) continue;
      if (!p.fused || p.kernel != group)
        return fmt::format("kernel {} runs n{}, which fuse_pipelines put in the kernel of n{}{}",
                           l->kernel, l->nodes[i], p.kernel, p.fused ? "" : " (not fused)");
      seen[static_cast<size_t>(l->nodes[i])] = true;
    }
  }
  // A project chain whose group keeps only passed-through attributes runs no kernel at
  // all: its consumer reads the columns it passes through.
  std::vector<bool> launched(pn.size(), false);
  for (const auto& step : r.plan.steps)
    if (const auto* l = std::get_if<rt::Launch>(&step); l && l->node >= 0)
      launched[static_cast<size_t>(l->nodes.empty() ? l->node : l->nodes.back())] = true;
  auto renames_only = [&](size_t i) {
    const Node& n = r.physical.program.node(static_cast<NodeId>(i));
    return n.kind == OpKind::Project && !launched[static_cast<size_t>(pn[i].kernel)];
  };
  for (size_t i = 0; i < pn.size(); ++i)
    if (pn[i].fused && !seen[i] && !renames_only(i))
      return fmt::format("n{} {} is fused into the kernel of n{} {}, but no kernel runs it", i,
                         op_kind_name(r.physical.program.node(static_cast<NodeId>(i)).kind),
                         pn[i].kernel, op_kind_name(r.physical.program.node(pn[i].kernel).kind));
  return "";
}

// Transitive closure (.ra text), linear: each round joins the new paths with the edges.
inline constexpr std::string_view kTc = R"(
input edges(src i32, dst i32);
fixpoint {
  tc = edges;
  tc = tc |> join (edges |> project src as mid, dst as to) on dst = mid |> project src, to as dst;
}
output tc;
)";

// The same closure written non-linearly (tc joined with itself): two recursive occurrences.
inline constexpr std::string_view kTcSquare = R"(
input edges(src i32, dst i32);
fixpoint {
  tc = edges;
  tc = tc |> join (tc |> project src as mid, dst as to) on dst = mid |> project src, to as dst;
}
output tc;
)";

// Same generation (.ra text): x and y are of the same generation if they are siblings, or if
// their parents are. Its recursive rule joins the delta as the right input of its first join.
inline constexpr std::string_view kSameGeneration = R"(
input parent(child i32, par i32);
fixpoint {
  sg = parent |> join (parent |> project child as c2, par as p2) on par = p2
              |> select child <> c2 |> project child as x, c2 as y;
  sg = parent |> join sg on par = x
              |> join (parent |> project child as c2, par as p2) on y = p2
              |> project child as x, c2 as y;
}
output sg;
)";

}  // namespace ranc::testing
