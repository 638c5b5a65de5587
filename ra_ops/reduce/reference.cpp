// Reference semantics of reduce: groups by the total order on the group keys, one
// output tuple per group (groups in ascending key order), aggregates over the
// group's tuples in input order. sum of integers accumulates in uint64_t (wraps);
// sum of floats and avg accumulate each argument converted to f64 in f64, in input
// order; count counts tuples. min/max use the TOTAL order of program.h (not IEEE
// comparison) so that they are deterministic: for floats -NaN < -inf < ... < -0.0 <
// +0.0 < ... < inf < NaN, so a group holding a NaN has max NaN (and -0.0 is the min
// of {-0.0, 0.0}). No group keys: one tuple, or none for an empty input.
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

}  // namespace

HostRelation eval_reduce(const Node& n, const Inputs& in) {
  const HostRelation& r = *in[0];
  const size_t nk = n.group_key_index.size();
  internal_check(n.schema.size() == nk + n.aggregates.size(), "reduce: schema arity");

  Keys keys;
  for (int32_t k : n.group_key_index) keys.push_back(norm_keys(r.column(static_cast<size_t>(k))));
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
  const size_t groups = firsts.size();

  HostRelation out(n.schema);
  for (size_t k = 0; k < nk; ++k)
    put_column(out, k, gather_column(r.column(static_cast<size_t>(n.group_key_index[k])), firsts));

  for (size_t a = 0; a < n.aggregates.size(); ++a) {
    const Aggregate& agg = n.aggregates[a];
    const Type out_type = n.schema[nk + a].type;
    Column col(out_type);
    if (agg.func == AggFunc::Count) {
      for (size_t g = 0; g < groups; ++g)
        col.append(Value::i64(static_cast<int64_t>(starts[g + 1] - starts[g])));
      put_column(out, nk + a, std::move(col));
      continue;
    }
    internal_check(agg.arg.valid() && agg.arg->resolved(), "reduce: aggregate without argument");
    const Column arg = eval_column(r, *agg.arg, *agg.arg->type, n);
    switch (agg.func) {
      case AggFunc::Min:
      case AggFunc::Max: {
        // The best row of each group by the total order (the first one on ties).
        const std::vector<uint64_t> k = norm_keys(arg, agg.func == AggFunc::Max);
        Rows best;
        for (size_t g = 0; g < groups; ++g) {
          size_t b = order[starts[g]];
          for (size_t i = starts[g] + 1; i < starts[g + 1]; ++i)
            if (k[order[i]] < k[b]) b = order[i];
          best.push_back(b);
        }
        col = gather_column(arg, best);
        break;
      }
      case AggFunc::Sum:
        for (size_t g = 0; g < groups; ++g) {
          if (out_type == Type::I64) {
            uint64_t s = 0;
            for (size_t i = starts[g]; i < starts[g + 1]; ++i)
              s += static_cast<uint64_t>(int_at(arg, order[i]));
            col.append(Value::i64(static_cast<int64_t>(s)));
          } else {
            double s = 0.0;
            for (size_t i = starts[g]; i < starts[g + 1]; ++i) s += double_at(arg, order[i]);
            col.append(Value::f64(s));
          }
        }
        break;
      case AggFunc::Avg:
        for (size_t g = 0; g < groups; ++g) {
          double s = 0.0;
          for (size_t i = starts[g]; i < starts[g + 1]; ++i) s += double_at(arg, order[i]);
          col.append(Value::f64(s / static_cast<double>(starts[g + 1] - starts[g])));
        }
        break;
      case AggFunc::Count:
        break;
    }
    put_column(out, nk + a, std::move(col));
  }
  return out;
}

}  // namespace ranc::ops::ref
