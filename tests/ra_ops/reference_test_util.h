// Helpers for the reference executor tests: short value constructors, building
// relations, running a one-output DSL program through check() and
// execute_reference(), and comparing with hand-computed rows.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "ranc/dsl.h"
#include "ranc/ra_ops/ra_ops.h"

namespace ranc {
// gtest prints Values readably.
inline void PrintTo(const Value& v, std::ostream* os) {
  *os << v.literal_str() << ":" << type_name(v.type());
}
}  // namespace ranc

namespace ranc::test {

using Row = std::vector<Value>;
using Rows = std::vector<Row>;

inline Value B(bool b) {
  return Value::boolean(b);
}
inline Value I(int32_t x) {
  return Value::i32(x);
}
inline Value L(int64_t x) {
  return Value::i64(x);
}
inline Value F(float x) {
  return Value::f32(x);
}
inline Value D(double x) {
  return Value::f64(x);
}
inline Value S(std::string s) {
  return Value::string(std::move(s));
}
inline Value Dt(std::string_view ymd) {
  return Value::date(*parse_date(ymd));
}

inline Schema schema(std::vector<Attribute> attrs, size_t key = 0) {
  return Schema{std::move(attrs), key};
}
inline HostRelation rel(std::vector<Attribute> attrs, const Rows& rows) {
  return HostRelation::from_rows(schema(std::move(attrs)), rows);
}

inline Rows sorted(Rows rows) {
  std::sort(rows.begin(), rows.end(),
            [](const Row& a, const Row& b) { return compare_rows(a, b) < 0; });
  return rows;
}

inline Rows rows_of(const HostRelation& r) {
  Rows out;
  for (size_t i = 0; i < r.num_rows(); ++i) out.push_back(r.row(i));
  return out;
}

using Bindings = std::vector<std::pair<std::string, HostRelation>>;

// Checks the builder's program and runs it; returns the single output.
inline HostRelation run(const ProgramBuilder& b, const Bindings& inputs) {
  Program checked = check(b.program());
  auto outs = execute_reference(checked, inputs);
  EXPECT_EQ(outs.size(), 1u);
  return outs.empty() ? HostRelation() : std::move(outs[0]);
}

// Compares as multisets (order-insensitive).
#define EXPECT_BAG_EQ(relation, ...)                               \
  EXPECT_EQ(::ranc::test::sorted(::ranc::test::rows_of(relation)), \
            ::ranc::test::sorted(__VA_ARGS__))
// Compares in order.
#define EXPECT_ROWS_EQ(relation, ...) EXPECT_EQ(::ranc::test::rows_of(relation), (__VA_ARGS__))

// Evaluates `e` (written over attributes `attrs`) on one row through
// check() + execute_reference(), as a one-attribute projection.
inline Value eval1(Expr e, std::vector<Attribute> attrs, Row row) {
  ProgramBuilder b;
  auto t = b.input("t", attrs);
  b.output(t.project({as(std::move(e), "r")}), "out");
  HostRelation out = run(b, {{"t", rel(attrs, {std::move(row)})}});
  EXPECT_EQ(out.num_rows(), 1u);
  return out.num_rows() == 1 ? out.get(0, 0) : Value();
}

// Same, with no attributes read (a dummy one-row input).
inline Value eval0(Expr e) {
  return eval1(std::move(e), {{"dummy", Type::I32}}, {I(0)});
}

}  // namespace ranc::test
