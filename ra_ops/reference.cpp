// The CPU reference executor (the oracle): ops::eval_node dispatches a checked node
// to its operator's reference semantics (ra_ops/<op>/reference.cpp), and
// execute_reference binds inputs and runs a checked program node by node. Also the
// shared helpers of reference_internal.h.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>
#include <numeric>

#include "ranc/ra_ops/ra_ops.h"
#include "reference_internal.h"

namespace ranc::ops {
namespace ref {

static uint64_t float_bits(double x) {
  uint64_t b = std::bit_cast<uint64_t>(x);
  return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
}
static uint64_t float_bits(float x) {
  uint32_t b = std::bit_cast<uint32_t>(x);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

std::vector<uint64_t> norm_keys(const Column& c, bool descending, const Dictionary* common) {
  std::vector<uint64_t> k;
  k.reserve(c.size());
  switch (c.type()) {
    case Type::Bool:
      for (uint8_t x : c.data<uint8_t>()) k.push_back(x);
      break;
    case Type::I32:
    case Type::Date:
      for (int32_t x : c.data<int32_t>()) k.push_back(static_cast<uint32_t>(x) ^ 0x80000000u);
      break;
    case Type::I64:
      for (int64_t x : c.data<int64_t>())
        k.push_back(static_cast<uint64_t>(x) ^ 0x8000000000000000ull);
      break;
    case Type::F32:
      for (float x : c.data<float>()) k.push_back(float_bits(x));
      break;
    case Type::F64:
      for (double x : c.data<double>()) k.push_back(float_bits(x));
      break;
    case Type::String: {
      const Dictionary& own = *c.dictionary();  // finishes pending strings
      std::vector<uint64_t> rank(own.size());
      for (size_t i = 0; i < own.size(); ++i)
        rank[i] =
            common ? static_cast<uint64_t>(*common->find(own.at(static_cast<int32_t>(i)))) : i;
      for (int32_t code : c.data<int32_t>()) k.push_back(rank[static_cast<size_t>(code)]);
      break;
    }
  }
  if (c.nullable()) {
    const auto& valid = c.validity();
    for (size_t i = 0; i < k.size(); ++i)
      if (!valid[i]) k[i] = 0;
  }
  if (descending)
    for (auto& x : k) x = ~x;
  return k;
}

void push_norm_keys(Keys& keys, const Column& c, bool descending, const Dictionary* common,
                    bool with_validity) {
  if (c.nullable() || with_validity) {
    std::vector<uint64_t> v(c.size(), 1);
    if (c.nullable())
      for (size_t i = 0; i < v.size(); ++i) v[i] = c.validity()[i];
    if (descending)
      for (auto& x : v) x = ~x;
    keys.push_back(std::move(v));
  }
  keys.push_back(norm_keys(c, descending, common));
}

bool any_null(const HostRelation& r, const std::vector<size_t>& cols, size_t i) {
  for (size_t c : cols)
    if (r.column(c).is_null(i)) return true;
  return false;
}

std::shared_ptr<const Dictionary> common_dictionary(const Column& a, const Column& b) {
  std::vector<std::string> all = a.dictionary()->strings();
  all.insert(all.end(), b.dictionary()->strings().begin(), b.dictionary()->strings().end());
  return Dictionary::from_strings(std::move(all));
}

void norm_keys_pair(const HostRelation& a, const std::vector<size_t>& ca, const HostRelation& b,
                    const std::vector<size_t>& cb, Keys& ka, Keys& kb) {
  internal_check(ca.size() == cb.size(), "norm_keys_pair: arity");
  for (size_t k = 0; k < ca.size(); ++k) {
    const Column& x = a.column(ca[k]);
    const Column& y = b.column(cb[k]);
    internal_check(x.type() == y.type(), "norm_keys_pair: columns of different types");
    std::shared_ptr<const Dictionary> common;
    if (x.type() == Type::String) common = common_dictionary(x, y);
    const bool validity = x.nullable() || y.nullable();
    push_norm_keys(ka, x, false, common.get(), validity);
    push_norm_keys(kb, y, false, common.get(), validity);
  }
}

Rows sort_rows(const Keys& keys, size_t n) {
  Rows perm = all_rows(n);
  std::vector<std::pair<uint64_t, size_t>> cur(n), next(n);
  constexpr int kBits = 16;
  constexpr uint64_t kMask = (uint64_t{1} << kBits) - 1;
  std::vector<size_t> count(size_t{1} << kBits);
  // Least significant column first; each pass is a stable counting sort on kBits bits.
  for (size_t c = keys.size(); c-- > 0;) {
    internal_check(keys[c].size() == n, "sort_rows: key column size");
    for (size_t i = 0; i < n; ++i) cur[i] = {keys[c][perm[i]], perm[i]};
    for (int shift = 0; shift < 64; shift += kBits) {
      std::fill(count.begin(), count.end(), 0);
      for (const auto& e : cur) ++count[(e.first >> shift) & kMask];
      if (n == 0 || count[(cur[0].first >> shift) & kMask] == n) continue;  // one digit: no-op
      size_t sum = 0;
      for (auto& x : count) {
        size_t t = x;
        x = sum;
        sum += t;
      }
      for (const auto& e : cur) next[count[(e.first >> shift) & kMask]++] = e;
      cur.swap(next);
    }
    for (size_t i = 0; i < n; ++i) perm[i] = cur[i].second;
  }
  return perm;
}

std::strong_ordering compare_keys(const Keys& a, size_t i, const Keys& b, size_t j) {
  for (size_t c = 0; c < a.size(); ++c) {
    auto r = a[c][i] <=> b[c][j];
    if (r != 0) return r;
  }
  return std::strong_ordering::equal;
}

template <typename T>
static std::vector<T> gather_vec(const std::vector<T>& src, const Rows& rows) {
  std::vector<T> out;
  out.reserve(rows.size());
  for (size_t r : rows) out.push_back(src[r]);
  return out;
}

Column gather_column(const Column& c, const Rows& rows) {
  Column out(c.type());
  if (c.type() == Type::String) {
    auto dict = c.dictionary();
    out.set_codes(gather_vec(c.data<int32_t>(), rows), std::move(dict));
  } else {
    std::visit([&](const auto& src) { out.storage() = gather_vec(src, rows); }, c.storage());
  }
  if (c.nullable()) {
    out.set_nullable(true);
    out.validity() = gather_vec(c.validity(), rows);
  }
  return out;
}

void put_column(HostRelation& out, size_t c, Column col) {
  internal_check(c < out.num_columns() && out.schema()[c].type == col.type(),
                 "reference executor: column type differs from the node's schema");
  col.set_nullable(out.schema()[c].nullable);
  out.column(c) = std::move(col);
}

Column concat_columns(const Column& a, const Column& b) {
  internal_check(a.type() == b.type(), "concat_columns: types differ");
  Column out(a.type());
  if (a.type() == Type::String) {
    auto dict = common_dictionary(a, b);
    std::vector<int32_t> codes;
    codes.reserve(a.size() + b.size());
    for (const Column* c : {&a, &b}) {
      const Dictionary& own = *c->dictionary();
      std::vector<int32_t> map(own.size());
      for (size_t i = 0; i < own.size(); ++i)
        map[i] = *dict->find(own.at(static_cast<int32_t>(i)));
      for (int32_t code : c->data<int32_t>()) codes.push_back(map[static_cast<size_t>(code)]);
    }
    out.set_codes(std::move(codes), std::move(dict));
  } else {
    std::visit(
        [&](const auto& va) {
          using V = std::decay_t<decltype(va)>;
          V v = va;
          const V& vb = std::get<V>(b.storage());
          v.insert(v.end(), vb.begin(), vb.end());
          out.storage() = std::move(v);
        },
        a.storage());
  }
  if (a.nullable() || b.nullable()) {
    out.set_nullable(true);
    auto& valid = out.validity();
    valid.clear();
    for (const Column* c : {&a, &b})
      for (size_t i = 0; i < c->size(); ++i) valid.push_back(c->is_null(i) ? 0 : 1);
  }
  return out;
}

HostRelation gather(const HostRelation& in, const Rows& rows, const Schema& schema) {
  internal_check(schema.size() == in.num_columns(), "gather: schema arity differs");
  HostRelation out(schema);
  for (size_t c = 0; c < in.num_columns(); ++c)
    put_column(out, c, gather_column(in.column(c), rows));
  return out;
}

Rows all_rows(size_t n) {
  Rows r(n);
  std::iota(r.begin(), r.end(), size_t{0});
  return r;
}

Rows first_occurrences(const HostRelation& in) {
  Keys keys;
  for (size_t c = 0; c < in.num_columns(); ++c) push_norm_keys(keys, in.column(c));
  const size_t n = in.num_rows();
  Rows order = sort_rows(keys, n);
  // The sort is stable, so the first of each run of equal tuples is the earliest.
  std::vector<uint8_t> keep(n, 0);
  for (size_t k = 0; k < n; ++k)
    if (k == 0 || compare_keys(keys, order[k - 1], keys, order[k]) != 0) keep[order[k]] = 1;
  Rows out;
  for (size_t r = 0; r < n; ++r)
    if (keep[r]) out.push_back(r);
  return out;
}

Column eval_column(const HostRelation& in, const ExprNode& e, Type t, const Node& n) {
  if (e.kind == ExprKind::Attr) {
    const Column& c = in.column(static_cast<size_t>(e.attr_index));
    internal_check(c.type() == t, "eval_column: attribute of another type");
    return c;  // a copy; strings keep their dictionary
  }
  Column col(t, e.nullable);
  col.reserve(in.num_rows());
  RowLoader loader(in, e);
  try {
    for (size_t i = 0; i < in.num_rows(); ++i) col.append(eval_expr(e, loader.load(i)));
  } catch (const UserError& err) {
    rethrow_in_node(err, n);
  }
  return col;
}

static void collect_attrs(const ExprNode& e, std::vector<size_t>& out) {
  if (e.kind == ExprKind::Attr) {
    internal_check(e.attr_index >= 0, "unresolved attribute in the reference executor");
    out.push_back(static_cast<size_t>(e.attr_index));
  }
  for (const auto& a : e.args)
    if (a) collect_attrs(*a, out);
}

std::vector<size_t> attrs_read(const ExprNode& e) {
  std::vector<size_t> out;
  collect_attrs(e, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

RowLoader::RowLoader(const HostRelation& r, const ExprNode& e)
    : r_(r), used_(attrs_read(e)), row_(r.num_columns()) {
  for (size_t c : used_) internal_check(c < r.num_columns(), "attribute index out of range");
}

const std::vector<Value>& RowLoader::load(size_t i) {
  for (size_t c : used_) row_[c] = r_.column(c).get(i);
  return row_;
}

void rethrow_in_node(const UserError& e, const Node& n) {
  std::vector<Diagnostic> ds = e.diagnostics();
  for (auto& d : ds) {
    d.message += fmt::format(" (in node {}: {})", n.id, op_kind_name(n.kind));
    if (!d.loc.known()) d.loc = n.loc;
  }
  throw UserError(std::move(ds));
}

Value scalar_value(const HostRelation& r, const Node& n) {
  if (r.num_rows() > 1)
    throw UserError(Diagnostic{
        ErrorKind::Execution,
        fmt::format("a scalar subquery has {} tuples, more than one (in node {}: {})",
                    r.num_rows(), n.id, op_kind_name(n.kind)),
        n.loc, "a scalar subquery must yield at most one tuple: reduce it to one"});
  internal_check(r.num_columns() == 1, "scalar subquery: not one attribute");
  return r.num_rows() == 0 ? Value::null(r.schema()[0].type) : r.get(0, 0);
}

namespace {
// e with every scalar subquery replaced by its value, as a literal.
ExprPtr substitute(const ExprPtr& e, const std::vector<Value>& values) {
  return rewrite_expr(e, [&](const ExprNode& x) -> ExprPtr {
    if (x.kind != ExprKind::Scalar) return nullptr;
    ExprNode lit = x;
    lit.kind = ExprKind::Literal;
    lit.literal = values.at(static_cast<size_t>(x.subquery));
    lit.subquery = -1;
    return make_expr(std::move(lit));
  });
}
}  // namespace

Node substitute_subqueries(const Node& n, std::vector<const HostRelation*>& inputs) {
  const size_t arity = static_cast<size_t>(op_arity(n.kind));
  std::vector<Value> values(inputs.size());
  for (size_t i = arity; i < inputs.size(); ++i) values[i] = scalar_value(*inputs[i], n);
  inputs.resize(arity);
  Node out = n;
  auto sub = [&](Expr& e) {
    if (e.ptr()) e = Expr(substitute(e.ptr(), values));
  };
  sub(out.predicate);
  for (auto& ne : out.exprs) sub(ne.expr);
  for (auto& a : out.aggregates) {
    sub(a.arg);
    sub(a.filter);
  }
  return out;
}

}  // namespace ref

HostRelation eval_node(const Program& program, const Node& n,
                       const std::vector<const HostRelation*>& given) {
  std::vector<const HostRelation*> inputs = given;
  for (const HostRelation* r : inputs) internal_check(r != nullptr, "eval_node: null input");
  size_t expected = n.kind == OpKind::Input      ? 1
                    : n.kind == OpKind::Fixpoint ? (n.fixpoint ? n.fixpoint->outer.size() : 0)
                                                 : static_cast<size_t>(op_arity(n.kind));
  if (op_takes_subqueries(n.kind) && inputs.size() > expected) {
    Node plain = ref::substitute_subqueries(n, inputs);
    return eval_node(program, plain, inputs);
  }
  internal_check(inputs.size() == expected, "eval_node: wrong number of inputs");
  switch (n.kind) {
    case OpKind::Input:
      return ref::eval_input(n, inputs);
    case OpKind::Select:
      return ref::eval_select(n, inputs);
    case OpKind::Project:
      return ref::eval_project(n, inputs);
    case OpKind::Product:
      return ref::eval_product(n, inputs);
    case OpKind::Union:
    case OpKind::Intersect:
    case OpKind::Difference:
    case OpKind::UnionAll:
      return ref::eval_set_op(n, inputs);
    case OpKind::Scalar:
      return ref::eval_scalar(n, inputs);
    case OpKind::Join:
      return ref::eval_join(n, inputs);
    case OpKind::Reduce:
      return ref::eval_reduce(n, inputs);
    case OpKind::Sort:
      return ref::eval_sort(n, inputs);
    case OpKind::Limit:
      return ref::eval_limit(n, inputs);
    case OpKind::Distinct:
      return ref::eval_distinct(n, inputs);
    case OpKind::Fixpoint:
      return ref::eval_fixpoint(n, inputs);
    case OpKind::Output:
      return ref::eval_output(n, inputs);
  }
  throw InternalError("eval_node: unknown operator kind");
}

}  // namespace ranc::ops

namespace ranc {

std::vector<HostRelation> execute_reference(
    const Program& checked, const std::vector<std::pair<std::string, HostRelation>>& inputs) {
  if (!checked.checked())
    throw UserError(Diagnostic{ErrorKind::InvalidArgument,
                               "execute_reference needs a checked program",
                               {},
                               "pass the result of ranc::check(program)"});
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (inputs[i].first == inputs[j].first)
        throw UserError(
            Diagnostic{ErrorKind::InvalidArgument,
                       fmt::format("input relation '{}' is given twice", inputs[i].first),
                       {},
                       {}});

  std::vector<HostRelation> results(checked.size());
  // A fixpoint group is evaluated once, for its first node.
  std::map<const FixpointDef*, std::vector<HostRelation>> groups;
  for (size_t i = 0; i < checked.size(); ++i) {
    const Node& n = checked.node(static_cast<NodeId>(i));
    internal_check(n.id == static_cast<NodeId>(i), "checked program: node id is not its index");
    std::vector<const HostRelation*> in;
    if (n.kind == OpKind::Input) {
      auto it = std::find_if(inputs.begin(), inputs.end(),
                             [&](const auto& p) { return p.first == n.name; });
      if (it == inputs.end())
        throw UserError(
            Diagnostic{ErrorKind::InvalidArgument,
                       fmt::format("no data given for input relation '{}'", n.name), n.loc,
                       fmt::format("bind a relation with schema {}", n.declared.str())});
      in.push_back(&it->second);
    } else {
      for (NodeId id : n.inputs) {
        internal_check(id >= 0 && id < n.id, "checked program is not in topological order");
        in.push_back(&results[static_cast<size_t>(id)]);
      }
    }
    if (n.kind == OpKind::Fixpoint) {
      internal_check(n.fixpoint != nullptr, "execute_reference: fixpoint without definition");
      auto it = groups.find(n.fixpoint.get());
      if (it == groups.end())
        it = groups.emplace(n.fixpoint.get(), ops::ref::eval_fixpoint_group(*n.fixpoint, in)).first;
      results[static_cast<size_t>(n.id)] = it->second.at(static_cast<size_t>(n.fixpoint_index));
      continue;
    }
    results[static_cast<size_t>(n.id)] = ops::eval_node(checked, n, in);
  }

  std::vector<HostRelation> out;
  for (NodeId id : checked.outputs()) out.push_back(std::move(results[static_cast<size_t>(id)]));
  return out;
}

}  // namespace ranc
