// lower_distinct_aggregates (see ranc/passes/lower_distinct_aggregates.h).
#include "ranc/passes/lower_distinct_aggregates.h"

#include <map>

#include "rewrite.h"

namespace ranc::passes {
namespace {

NodeId reduce_node(detail::Rewrite& rw, NodeId in, std::vector<std::string> keys,
                   std::vector<Aggregate> aggs, const SourceLoc& loc) {
  Node r;
  r.kind = OpKind::Reduce;
  r.loc = loc;
  r.inputs = {in};
  r.group_keys = std::move(keys);
  r.aggregates = std::move(aggs);
  return rw.add(std::move(r));
}

}  // namespace

Program lower_distinct_aggregates(const Program& checked) {
  bool any = false;
  for (const Node& n : checked.nodes())
    for (const Aggregate& a : n.aggregates) any = any || a.distinct;
  if (!any) return checked;

  detail::Rewrite rw(checked);
  for (const Node& n : checked.nodes()) {
    bool distinct = false;
    for (const Aggregate& a : n.aggregates) distinct = distinct || a.distinct;
    if (n.kind != OpKind::Reduce || !distinct) {
      rw.keep(n);
      continue;
    }
    const NodeId in = rw.at(n.inputs[0]);
    // The distinct arguments, by text, in order of first use.
    std::vector<std::string> args;
    std::map<std::string, std::vector<size_t>> users;  // argument -> aggregates over it
    std::vector<size_t> plain;
    for (size_t i = 0; i < n.aggregates.size(); ++i) {
      const Aggregate& a = n.aggregates[i];
      if (!a.distinct) {
        plain.push_back(i);
        continue;
      }
      std::string text = to_string(a.arg);
      if (!users.count(text)) args.push_back(text);
      users[text].push_back(i);
    }
    // R |> project G, x as $d |> distinct |> reduce by G (the aggregates over $d).
    auto distinct_part = [&](const std::string& arg) {
      const std::vector<size_t>& idx = users.at(arg);
      std::vector<NamedExpr> proj;
      for (const auto& k : n.group_keys) proj.push_back(NamedExpr{k, col(k), n.loc});
      std::string d = rw.fresh("d");
      proj.push_back(NamedExpr{d, n.aggregates[idx[0]].arg, n.loc});
      Node dist;
      dist.kind = OpKind::Distinct;
      dist.loc = n.loc;
      dist.inputs = {rw.project(in, std::move(proj), n.loc)};
      NodeId distinct_rows = rw.add(std::move(dist));
      std::vector<Aggregate> aggs;
      for (size_t i : idx) {
        Aggregate a = n.aggregates[i];
        a.distinct = false;
        a.arg = col(d);
        aggs.push_back(std::move(a));
      }
      return reduce_node(rw, distinct_rows, n.group_keys, std::move(aggs), n.loc);
    };
    if (plain.empty() && args.size() == 1) {
      // The aggregates' order is the original one (all of them are over $d).
      rw.set(n.id, distinct_part(args[0]));
      continue;
    }
    std::vector<Aggregate> base_aggs;
    for (size_t i : plain) base_aggs.push_back(n.aggregates[i]);
    if (base_aggs.empty()) base_aggs.push_back(Aggregate{rw.fresh("n"), AggFunc::Count, {}, n.loc});
    NodeId acc = reduce_node(rw, in, n.group_keys, std::move(base_aggs), n.loc);
    for (const std::string& arg : args) {
      NodeId part = distinct_part(arg);
      if (n.group_keys.empty()) {
        acc = rw.binary(OpKind::Product, acc, part, n.loc);
        continue;
      }
      Node j;
      j.kind = OpKind::Join;
      j.join_kind = JoinKind::Left;
      j.loc = n.loc;
      j.inputs = {acc, part};
      j.left_keys = j.right_keys = n.group_keys;
      j.null_safe_keys = true;
      acc = rw.add(std::move(j));
    }
    // The original attributes in order; a group without non-NULL x counts 0.
    std::vector<NamedExpr> out;
    for (const auto& k : n.group_keys) out.push_back(NamedExpr{k, col(k), n.loc});
    for (size_t i = 0; i < n.aggregates.size(); ++i) {
      const Aggregate& a = n.aggregates[i];
      const Attribute& want = n.schema[n.group_keys.size() + i];
      Expr e = col(a.name);
      // The left join's padding makes a distinct aggregate nullable; every group has a row
      // in its part (NULL arguments included), so the padding never happens: what the
      // reduce would not make NULL stays not nullable (count(distinct): 0).
      if (a.distinct && !want.nullable) e = coalesce({e, lit(Value::zero(want.type))}, n.loc);
      out.push_back(NamedExpr{a.name, e, n.loc});
    }
    rw.set(n.id, rw.project(acc, std::move(out), n.loc));
  }
  return rw.finish();
}

}  // namespace ranc::passes
