// Reference semantics of scalar: the input's one tuple, or a tuple of NULLs for an empty
// input; more than one tuple is an ExecutionError naming the node (scalar_value). With
// explicit_validity (lower_nulls' layout), the tuple (v.valid, v) instead.
#include "../reference_internal.h"

namespace ranc::ops::ref {

HostRelation eval_scalar(const Node& n, const Inputs& in) {
  const HostRelation& r = *in[0];
  if (r.num_rows() > 1) (void)scalar_value(r, n);  // the error
  HostRelation out(n.schema);
  std::vector<Value> row;
  if (!n.explicit_validity) {
    for (size_t c = 0; c < r.num_columns(); ++c)
      row.push_back(r.num_rows() ? r.get(0, c) : Value::null(n.schema[c].type));
  } else {
    const size_t v = r.num_columns() - 1;
    const bool valid = r.num_rows() == 1 && (v == 0 || r.get(0, 0).as_bool());
    row = {Value::boolean(valid), valid ? r.get(0, v) : Value::zero(n.schema[1].type)};
  }
  out.append_row(row);
  return out;
}

}  // namespace ranc::ops::ref
