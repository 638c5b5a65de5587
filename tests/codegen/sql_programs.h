// Programs and data for the tests of NULLs and the SQL lowering passes (no GPU needed to
// build them): relations in lower_nulls' (a.valid, a) layout and back, two relations l and
// r with NULLs in keys and values (hand-written or random), and .ra programs over them that
// use every feature the passes lower. Used by lower_sql_test (CPU) and nulls_gpu_test.
#pragma once

#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ranc/data/host_relation.h"
#include "ranc/ir/program.h"

namespace ranc::sqltest {

// The column without its validity (NULL rows keep their stored zero).
inline Column strip(const Column& c) {
  Column out(c.type());
  if (c.type() == Type::String)
    out.set_codes(c.data<int32_t>(), c.dictionary());
  else
    out.storage() = c.storage();
  return out;
}

// A relation in lower_nulls' layout: (a.valid, a) for every nullable attribute.
inline HostRelation to_layout(const HostRelation& r) {
  Schema s;
  for (const Attribute& a : r.schema().attributes) {
    if (a.nullable) s.attributes.push_back(Attribute{validity_name(a.name), Type::Bool});
    s.attributes.push_back(Attribute{a.name, a.type});
  }
  HostRelation out(s);
  size_t k = 0;
  for (size_t c = 0; c < r.num_columns(); ++c) {
    const Column& col = r.column(c);
    if (col.nullable()) {
      Column v(Type::Bool);
      v.data<uint8_t>() = col.validity();
      out.column(k++) = std::move(v);
    }
    out.column(k++) = strip(col);
  }
  return out;
}

// A relation of lower_nulls' layout back in the user's schema.
inline HostRelation from_layout(const HostRelation& lr, const Schema& user) {
  HostRelation out(user);
  for (size_t c = 0; c < user.size(); ++c) {
    const Attribute& a = user[c];
    auto vi = lr.schema().find(a.name);
    EXPECT_TRUE(vi.has_value()) << a.name;
    Column col = lr.column(*vi);
    if (a.nullable) {
      auto vv = lr.schema().find(validity_name(a.name));
      EXPECT_TRUE(vv.has_value()) << validity_name(a.name);
      const auto& valid = lr.column(*vv).data<uint8_t>();
      col.set_nullable(true);
      col.validity() = valid;
      // A NULL's stored value must be the type's zero (the layout's rule).
      Column stored = strip(lr.column(*vi));
      const Value zero = Value::zero(a.type);
      for (size_t i = 0; i < valid.size(); ++i) {
        if (!valid[i]) {
          EXPECT_EQ(stored.get(i), zero) << "row " << i << " of " << a.name;
        }
      }
    }
    out.column(c) = std::move(col);
  }
  return out;
}

using Bindings = std::vector<std::pair<std::string, HostRelation>>;

inline Value NI() {
  return Value::null(Type::I32);
}
inline Value NS() {
  return Value::null(Type::String);
}
inline Value NL() {
  return Value::null(Type::I64);
}

// Two relations with NULLs in keys and values.
inline Bindings lr_inputs() {
  HostRelation l = HostRelation::from_rows(
      Schema{{{"k", Type::I32, true}, {"x", Type::String, true}, {"u", Type::F64}}, 0},
      {{Value::i32(1), Value::string("a"), Value::f64(1.5)},
       {NI(), Value::string("b"), Value::f64(2.0)},
       {Value::i32(2), NS(), Value::f64(-1.0)},
       {Value::i32(4), Value::string("d"), Value::f64(0.0)},
       {Value::i32(1), Value::string("a"), Value::f64(3.0)},
       {NI(), NS(), Value::f64(2.0)}});
  HostRelation r = HostRelation::from_rows(
      Schema{{{"j", Type::I32, true}, {"y", Type::I64, true}}, 0},
      {{Value::i32(1), Value::i64(10)},
       {Value::i32(1), NL()},
       {NI(), Value::i64(20)},
       {Value::i32(3), Value::i64(30)},
       {Value::i32(2), Value::i64(7)}});
  return {{"l", l}, {"r", r}};
}
inline const char* kDecl = "input l(k i32 null, x string null, u f64);\ninput r(j i32 null, y i64 null);\n";

// l and r with `rows` rows each, NULLs in each nullable attribute at `null_rate`, keys in
// a small domain so that joins match and groups repeat.
inline Bindings random_lr(int64_t rows, double null_rate, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return static_cast<int32_t>(rng() % static_cast<uint64_t>(n)); };
  auto maybe = [&](Value v, Type t) {
    return std::uniform_real_distribution<double>(0, 1)(rng) < null_rate ? Value::null(t) : v;
  };
  const int domain = static_cast<int>(std::max<int64_t>(4, rows / 8));
  std::vector<std::vector<Value>> lrows, rrows;
  for (int64_t i = 0; i < rows; ++i)
    lrows.push_back({maybe(Value::i32(pick(domain)), Type::I32),
                     maybe(Value::string(std::string(1, static_cast<char>('a' + pick(6))) +
                                         std::to_string(pick(5))),
                           Type::String),
                     Value::f64(pick(13) * 0.5 - 3.0)});
  for (int64_t i = 0; i < rows; ++i)
    rrows.push_back(
        {maybe(Value::i32(pick(domain)), Type::I32), maybe(Value::i64(pick(60) - 5), Type::I64)});
  return {{"l", HostRelation::from_rows(
                    Schema{{{"k", Type::I32, true}, {"x", Type::String, true}, {"u", Type::F64}}, 0},
                    lrows)},
          {"r", HostRelation::from_rows(Schema{{{"j", Type::I32, true}, {"y", Type::I64, true}}, 0},
                                        rrows)}};
}

struct Case {
  const char* name;
  const char* body;
};

inline const Case kCases[] = {
    {"Expressions",
     "q = l |> project k + 1 as a, k < 2 or x = 'a' as b, not (k = 1) and u > 0 as c, "
     "k between 1 and 3 as d, k in (1, null, 4) as e, x is null as f, coalesce(k, 0) as g, "
     "coalesce(x, 'none') as h, case when k > 1 then x when u > 1 then 'big' else null end as i, "
     "k / case when k is null then 0 else 2 end as m, substring(x, 1, 1) as n, x like 'a%' as o;\noutput q;"},
    {"Select", "q = l |> select k < 2 or x = 'd';\noutput q;"},
    {"SelectNot", "q = l |> select not (k = 1);\noutput q;"},
    {"InnerJoin", "q = l |> join r on k = j;\noutput q;"},
    {"JoinResidual", "q = l |> join r on k = j where y > 5 or x is null;\noutput q;"},
    {"SemiJoin", "q = l |> semijoin r on k = j;\noutput q;"},
    {"AntiJoin", "q = l |> antijoin r on k = j;\noutput q;"},
    {"AntiJoinResidual", "q = l |> antijoin r on k = j where y > 10;\noutput q;"},
    {"LeftJoin", "q = l |> left join r on k = j;\noutput q;"},
    {"RightJoin", "q = l |> right join r on k = j;\noutput q;"},
    {"FullJoin", "q = l |> full outer join r on k = j where y <> 10;\noutput q;"},
    {"ReduceNullKeys",
     "q = l |> reduce by k n = count(), s = sum(u), c = count(x), lo = min(x), hi = max(x), "
     "m = avg(u);\noutput q;"},
    {"ReduceNullableArgs",
     "q = r |> reduce by j s = sum(y), c = count(y), lo = min(y), m = avg(y), n = count();\n"
     "output q;"},
    {"GlobalReduce", "q = r |> reduce s = sum(y), c = count(y), n = count(), hi = max(y);\noutput q;"},
    {"CountDistinctOnly", "q = l |> reduce by k d = count(distinct x);\noutput q;"},
    {"DistinctMixed",
     "q = l |> reduce by k d = count(distinct x), n = count(), su = sum(distinct u), "
     "s = sum(u);\noutput q;"},
    {"DistinctGlobal", "q = l |> reduce d = count(distinct k), n = count();\noutput q;"},
    {"Sort", "q = l |> sort k desc, x;\noutput q;"},
    {"SortLimit", "q = l |> sort x, k desc |> limit 3;\noutput q;"},
    {"Distinct", "q = l |> project k, x |> distinct;\noutput q;"},
    {"SetOps",
     "a = l |> project k, x;\nb = r |> project j as k, cast(y as i32) as z |> project k, "
     "case when z > 9 then 'a' else null end as x;\n"
     "q = union(a, b) |> union all (a |> intersect b) |> union all (a |> except b);\noutput q;"},
    {"MixedNullability",
     "a = l |> project u as v;\nb = r |> project cast(y as f64) as v;\n"
     "q = (a |> union all b) |> union (b |> except a) |> union (a |> intersect b);\noutput q;"},
    {"ScalarSubqueries",
     "q = l |> select u > scalar(l |> reduce m = avg(u)) "
     "|> project k, u - scalar(r |> select j = 3 |> project y) as d, "
     "scalar(r |> select j = 9 |> project y) as none;\noutput q;"},
    {"ScalarInJoinAndReduce",
     "q = l |> join r on k = j where y > scalar(r |> reduce m = min(y)) "
     "|> reduce by x s = sum(u * scalar(r |> reduce c = count())) ;\noutput q;"},
    {"Product", "q = l |> product (r |> select y is null |> sort j, y |> limit 3);\noutput q;"},
};

}  // namespace ranc::sqltest
