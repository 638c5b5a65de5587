// Reference semantics of reduce: groups by the total order on the group keys (one group
// for NULL), one output tuple per group (groups in ascending key order), aggregates over
// the group's tuples in input order, skipping those whose argument is NULL or whose filter
// is not true (distinct: the first tuple of each argument value). sum of integers
// accumulates exactly (128 bits) and is an ExecutionError when the result leaves i64;
// sum of floats and avg accumulate each argument converted to f64 in f64, in input order;
// count() counts tuples, count(x) non-NULL arguments; an aggregate with nothing to fold is
// NULL (count: 0). Without group keys: one tuple, also over an empty input. min/max use the TOTAL order of program.h (not IEEE
// comparison) so that they are deterministic: for floats -NaN < -inf < ... < -0.0 <
// +0.0 < ... < inf < NaN, so a group holding a NaN has max NaN (and -0.0 is the min
// of {-0.0, 0.0}). No group keys: one tuple, or none for an empty input.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "../reference_internal.h"

namespace ranc::ops::ref {
namespace {

int64_t int_at(const Column& c, size_t i) {
  switch (c.type()) {
    case Type::I32:
      return c.data<int32_t>()[i];
    case Type::I64:
      return c.data<int64_t>()[i];
    default:
      throw InternalError("reduce: integer sum of a non-integer column");
  }
}

double double_at(const Column& c, size_t i) {
  switch (c.type()) {
    case Type::I32:
      return c.data<int32_t>()[i];
    case Type::I64:
      return static_cast<double>(c.data<int64_t>()[i]);
    case Type::F32:
      return c.data<float>()[i];
    case Type::F64:
      return c.data<double>()[i];
    default:
      throw InternalError("reduce: sum of a non-numeric column");
  }
}

const SourceLoc& loc_or_node(const Aggregate& a, const Node& n) {
  return a.loc.known() ? a.loc : n.loc;
}

}  // namespace

HostRelation eval_reduce(const Node& n, const Inputs& in) {
  const HostRelation& r = *in[0];
  const size_t nk = n.group_key_index.size();
  internal_check(n.schema.size() == nk + n.aggregates.size(), "reduce: schema arity");

  Keys keys;
  for (int32_t k : n.group_key_index) push_norm_keys(keys, r.column(static_cast<size_t>(k)));
  // Stable, so rows within a group stay in input order.
  const Rows order = sort_rows(keys, r.num_rows());

  // Groups: order[starts[g] .. starts[g+1]), firsts[g] = the group's first row.
  Rows firsts;
  std::vector<size_t> starts;
  for (size_t k = 0; k < order.size(); ++k)
    if (k == 0 || compare_keys(keys, order[k - 1], keys, order[k]) != 0) {
      firsts.push_back(order[k]);
      starts.push_back(k);
    }
  starts.push_back(order.size());
  // Without group keys there is one group, also over an empty input.
  const size_t groups = nk == 0 ? 1 : firsts.size();
  if (nk == 0 && firsts.empty()) starts.insert(starts.begin(), 0);

  HostRelation out(n.schema);
  for (size_t k = 0; k < nk; ++k)
    put_column(out, k, gather_column(r.column(static_cast<size_t>(n.group_key_index[k])), firsts));

  for (size_t a = 0; a < n.aggregates.size(); ++a) {
    const Aggregate& agg = n.aggregates[a];
    const Type out_type = n.schema[nk + a].type;
    Column col(out_type, true);
    // The rows the aggregate folds: its filter holds and its argument is not NULL.
    std::vector<uint8_t> use(r.num_rows(), 1);
    if (agg.filter.valid()) {
      const Column f = eval_column(r, *agg.filter, Type::Bool, n);
      for (size_t i = 0; i < use.size(); ++i)
        use[i] = !f.is_null(i) && f.data<uint8_t>()[i] != 0;
    }
    std::optional<Column> arg;
    std::vector<uint64_t> arg_keys;  // the total order of the argument (min/max/distinct)
    if (agg.arg.valid()) {
      internal_check(agg.arg->resolved(), "reduce: unresolved aggregate argument");
      arg = eval_column(r, *agg.arg, *agg.arg->type, n);
      for (size_t i = 0; i < use.size(); ++i)
        if (arg->is_null(i)) use[i] = 0;
      if (agg.distinct || agg.func == AggFunc::Min || agg.func == AggFunc::Max)
        arg_keys = norm_keys(*arg, agg.func == AggFunc::Max);
    }
    for (size_t g = 0; g < groups; ++g) {
      // The group's rows this aggregate folds, in input order (distinct: the first of each
      // value).
      Rows rows;
      for (size_t i = starts[g]; i < starts[g + 1]; ++i)
        if (use[order[i]]) rows.push_back(order[i]);
      if (agg.distinct) {
        std::vector<uint64_t> seen;
        Rows kept;
        for (size_t row : rows) {
          if (std::find(seen.begin(), seen.end(), arg_keys[row]) != seen.end()) continue;
          seen.push_back(arg_keys[row]);
          kept.push_back(row);
        }
        rows = std::move(kept);
      }
      if (agg.func == AggFunc::Count) {
        col.append(Value::i64(static_cast<int64_t>(rows.size())));
        continue;
      }
      if (rows.empty()) {
        // NULL, or the type's zero in lower_nulls' layout (Node::explicit_validity).
        col.append(n.schema[nk + a].nullable ? Value::null(out_type) : Value::zero(out_type));
        continue;
      }
      switch (agg.func) {
        case AggFunc::Min:
        case AggFunc::Max: {
          // The best row by the total order (the first one on ties).
          size_t b = rows[0];
          for (size_t row : rows)
            if (arg_keys[row] < arg_keys[b]) b = row;
          col.append(arg->get(b));
          break;
        }
        case AggFunc::Sum:
          if (out_type == Type::I64) {
            __int128 s = 0;
            for (size_t row : rows) s += int_at(*arg, row);
            if (s > std::numeric_limits<int64_t>::max() || s < std::numeric_limits<int64_t>::min())
              throw UserError(Diagnostic{
                  ErrorKind::Execution,
                  fmt::format("integer overflow: sum '{}' leaves the i64 range (in node {}: {})",
                              agg.name, n.id, op_kind_name(n.kind)),
                  loc_or_node(agg, n), "cast the argument to f64 to sum it approximately"});
            col.append(Value::i64(static_cast<int64_t>(s)));
          } else {
            double s = 0.0;
            for (size_t row : rows) s += double_at(*arg, row);
            col.append(Value::f64(s));
          }
          break;
        case AggFunc::Avg: {
          double s = 0.0;
          for (size_t row : rows) s += double_at(*arg, row);
          col.append(Value::f64(s / static_cast<double>(rows.size())));
          break;
        }
        case AggFunc::Count:
          break;
      }
    }
    put_column(out, nk + a, std::move(col));
  }
  return out;
}

}  // namespace ranc::ops::ref
