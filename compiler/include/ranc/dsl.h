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
// errors point at the line of the DSL call that made the mistake. Recursion:
// ProgramBuilder::fixpoint() and FixpointBuilder, below.
#pragma once

#include <initializer_list>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "ranc/ir/program.h"

namespace ranc {

class ProgramBuilder;
class FixpointBuilder;
namespace dsl_detail {
struct FixpointState;
}

// An aggregate for reduce: sum(col("x"), "total"), count("n"), avg(col("p"), "avg_p").
// count(col("x"), "n") counts the tuples where x is not NULL; distinct(count(col("x"),
// "n")) is count(distinct x), and so for the others.
Aggregate sum(Expr arg, std::string name);
Aggregate min(Expr arg, std::string name);
Aggregate max(Expr arg, std::string name);
Aggregate avg(Expr arg, std::string name);
Aggregate count(std::string name);
Aggregate count(Expr arg, std::string name);
Aggregate distinct(Aggregate a);

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
  // Every tuple of both (a bag; the left's names).
  Rel union_all(const Rel& right, std::source_location loc = std::source_location::current()) const;
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

// A scalar subquery: the value of `r`'s only attribute (r has at most one tuple at run
// time; NULL when it has none), usable in select, project, join residuals and aggregates
// of relations of the same ProgramBuilder:
//   li.select(col("price") > scalar(li.reduce({}, {avg(col("price"), "m")})))
Expr scalar(const Rel& r);

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
  // Starts a group of recursive relations (see FixpointBuilder). max_iterations 0:
  // iterate until no relation changes; L > 0: stop after L iterations.
  FixpointBuilder fixpoint(int64_t max_iterations = 0,
                           std::source_location loc = std::source_location::current());

  // Adds a node built by Rel's methods (inputs belonging to another builder are an
  // InvalidGraph error at check time).
  Rel add(Node n);
  // The id to record for `rel` as an input of a node added here by a call at `loc`:
  // rel's id, or -2 for another builder's relation (check() reports it). A relation
  // that crosses the boundary of a fixpoint's rules is a UserError at once.
  NodeId input_id(const Rel& rel, const SourceLoc& loc) const;

 private:
  friend class FixpointBuilder;
  Program program_;
  // On the builder of a fixpoint's rules: the builder of the program it belongs to.
  ProgramBuilder* main_ = nullptr;
  // The fixpoints started here; they own their rules' builders, which Rels point to.
  std::vector<std::shared_ptr<dsl_detail::FixpointState>> fixpoints_;
};

// Builds one fixpoint group (ir/program.h, RECURSION): recursive relations, each the
// union (as a set) of its rules, which read the group's relations and outer relations
// of the main program. Transitive closure (with `using namespace ranc`):
//
//   FixpointBuilder fp = b.fixpoint();
//   Rel e = fp.use(edges);                   // an outer relation, read in the rules
//   Rel path = fp.relation("path");          // a recursive relation, read in the rules
//   fp.rule(path, e);                        // every edge is a path
//   Rel hop = e.project({as(col("src"), "mid"), as(col("dst"), "to")});
//   fp.rule(path, path.join(hop, {"dst"}, {"mid"})   // and so is a path and an edge
//                     .project({"src", as(col("to"), "dst")}));
//   Rel tc = fp.result(path);                // the relation, in the main program
//
// Rels made in the rules belong to the fixpoint: a main-program Rel used in a rule
// without use(), or a rules Rel used in the main program, is a UserError at the call.
// The first result() closes the group: use(), relation() and rule() are errors after it.
// A copy of a FixpointBuilder is a handle to the same group.
class FixpointBuilder {
 public:
  // `outer`, a relation of the main program, as read inside the rules. Its name in the
  // rules (FixpointDef::outer) is `name`, by default the input's name for an input and
  // "outer<k>" otherwise. Using the same relation again returns the same Rel.
  Rel use(const Rel& outer, std::string name = {},
          std::source_location loc = std::source_location::current());
  // The recursive relation `name`, as read inside the rules (the same Rel for the same
  // name). It needs at least one rule.
  Rel relation(const std::string& name, std::source_location loc = std::source_location::current());
  // Adds a rule of `relation` (a Rel from relation()): it contains every tuple of `body`,
  // a Rel built in the rules from relation() and use() Rels.
  void rule(const Rel& relation, const Rel& body,
            std::source_location loc = std::source_location::current());
  // The recursive relation as a relation of the main program. The first call closes
  // the group.
  Rel result(const Rel& relation, std::source_location loc = std::source_location::current());
  Rel result(const std::string& name, std::source_location loc = std::source_location::current());

 private:
  friend class ProgramBuilder;
  explicit FixpointBuilder(std::shared_ptr<dsl_detail::FixpointState> state)
      : state_(std::move(state)) {}
  std::shared_ptr<dsl_detail::FixpointState> state_;
};

}  // namespace ranc
