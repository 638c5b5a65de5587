// The C++ DSL: write RA programs fluently.
//
//   ranc::ProgramBuilder b;
//   auto li = b.input("lineitem", {{"l_orderkey", ranc::Type::I64}, {"l_price", ranc::Type::F64}});
//   auto q = li.select(ranc::col("l_price") > 100.0)
//              .reduce({"l_orderkey"}, {ranc::sum(ranc::col("l_price"), "total")});
//   b.output(q, "big_orders");
//   ranc::Program checked = ranc::check(b.program());
//
// Each call records the caller's file:line (std::source_location), so checking
// errors point at the line of the DSL call that made the mistake.
#pragma once

#include <initializer_list>
#include <source_location>
#include <string>
#include <vector>

#include "ranc/ir/program.h"

namespace ranc {

class ProgramBuilder;

// An aggregate for reduce: sum(col("x"), "total"), count("n"), avg(col("p"), "avg_p").
Aggregate sum(Expr arg, std::string name);
Aggregate min(Expr arg, std::string name);
Aggregate max(Expr arg, std::string name);
Aggregate avg(Expr arg, std::string name);
Aggregate count(std::string name);

// A projected attribute: as(col("a") * 2, "twice_a"), or a plain name to keep "a".
struct Projection {
  Projection(const char* keep) : name(keep), expr(col(keep)) {}
  Projection(std::string keep) : name(keep), expr(col(keep)) {}
  Projection(Expr e, std::string n) : name(std::move(n)), expr(std::move(e)) {}
  std::string name;
  Expr expr;
};
inline Projection as(Expr e, std::string name) {
  return Projection(std::move(e), std::move(name));
}

// A sort key: "a" (ascending), desc("b").
struct SortSpec {
  SortSpec(const char* a) : attr(a) {}
  SortSpec(std::string a, bool d = false) : attr(std::move(a)), descending(d) {}
  std::string attr;
  bool descending = false;
};
inline SortSpec asc(std::string a) {
  return SortSpec(std::move(a), false);
}
inline SortSpec desc(std::string a) {
  return SortSpec(std::move(a), true);
}

// A handle to a relation (a node) in a ProgramBuilder.
class Rel {
 public:
  Rel() = default;
  Rel(ProgramBuilder* b, NodeId id) : b_(b), id_(id) {}
  NodeId id() const { return id_; }
  ProgramBuilder* builder() const { return b_; }

  Rel select(Expr predicate, std::source_location loc = std::source_location::current()) const;
  Rel project(std::vector<Projection> attrs,
              std::source_location loc = std::source_location::current()) const;
  Rel product(const Rel& right, std::source_location loc = std::source_location::current()) const;
  Rel union_with(const Rel& right,
                 std::source_location loc = std::source_location::current()) const;
  Rel intersect(const Rel& right, std::source_location loc = std::source_location::current()) const;
  Rel difference(const Rel& right,
                 std::source_location loc = std::source_location::current()) const;
  // Equi-join on left_keys[i] = right_keys[i], with an optional residual predicate.
  Rel join(const Rel& right, std::vector<std::string> left_keys,
           std::vector<std::string> right_keys, JoinKind kind = JoinKind::Inner, Expr residual = {},
           std::source_location loc = std::source_location::current()) const;
  Rel semi_join(const Rel& right, std::vector<std::string> left_keys,
                std::vector<std::string> right_keys, Expr residual = {},
                std::source_location loc = std::source_location::current()) const;
  Rel anti_join(const Rel& right, std::vector<std::string> left_keys,
                std::vector<std::string> right_keys, Expr residual = {},
                std::source_location loc = std::source_location::current()) const;
  Rel reduce(std::vector<std::string> group_keys, std::vector<Aggregate> aggregates,
             std::source_location loc = std::source_location::current()) const;
  Rel sort(std::vector<SortSpec> keys,
           std::source_location loc = std::source_location::current()) const;
  Rel limit(int64_t n, int64_t offset = 0,
            std::source_location loc = std::source_location::current()) const;
  Rel distinct(std::source_location loc = std::source_location::current()) const;

 private:
  ProgramBuilder* b_ = nullptr;
  NodeId id_ = -1;
};

class ProgramBuilder {
 public:
  // Declares an input relation; the key is its first key_size attributes. `sorted_by`
  // declares that the bound rows are sorted by these keys (the planner then skips
  // sorts; both executors verify it and fail with an ExecutionError if not).
  Rel input(std::string name, std::vector<Attribute> attributes, size_t key_size = 0,
            std::vector<SortSpec> sorted_by = {},
            std::source_location loc = std::source_location::current());
  void output(const Rel& rel, std::string name,
              std::source_location loc = std::source_location::current());
  const Program& program() const { return program_; }
  Program& program() { return program_; }
  // check(program()).
  Program check() const { return ranc::check(program_); }

  // Adds a node built by Rel's methods (inputs belonging to another builder are an
  // InvalidGraph error at check time).
  Rel add(Node n);

 private:
  Program program_;
};

}  // namespace ranc
