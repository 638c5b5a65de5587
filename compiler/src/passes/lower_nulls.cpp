// lower_nulls (see ranc/passes/lower_nulls.h): nullable attributes become (a.valid, a)
// pairs and expressions a value and a validity.
#include "ranc/passes/lower_nulls.h"

#include <algorithm>
#include <map>
#include <optional>

#include "rewrite.h"

namespace ranc::passes {
namespace {

// An expression in the layout: its value and, when it can be NULL, its validity.
struct VN {
  Expr v;
  std::optional<Expr> n;  // nullopt: never NULL
};

Expr lit_bool(bool b) {
  return lit(Value::boolean(b));
}
Expr and_(Expr a, Expr b) {
  return make_binary(BinaryOp::And, std::move(a), std::move(b));
}
Expr or_(Expr a, Expr b) {
  return make_binary(BinaryOp::Or, std::move(a), std::move(b));
}
Expr not_(Expr a) {
  return make_unary(UnaryOp::Not, std::move(a));
}
// a and b where a missing validity is true.
std::optional<Expr> both(const std::optional<Expr>& a, const std::optional<Expr>& b) {
  if (!a) return b;
  if (!b) return a;
  return and_(*a, *b);
}
Expr valid_or_true(const std::optional<Expr>& n) {
  return n ? *n : lit_bool(true);
}
// The condition "x is true" (not false, not NULL).
Expr is_true(const VN& x) {
  return x.n ? and_(*x.n, x.v) : x.v;
}

// The stored value of a NULL of type t.
Expr zero(Type t) {
  return lit(Value::zero(t));
}

// Whether e reads anything that can be NULL (then it needs translating even when its own
// value cannot be NULL, as `x is null` or coalesce(x, 0)).
bool touches_null(const ExprNode& e) {
  if (e.nullable) return true;
  for (const auto& a : e.args)
    if (touches_null(*a)) return true;
  return false;
}

// Three-valued and/or of two translated booleans (program.h: `x and y` evaluates y only
// when x is not false; the validity's first term stops there).
VN and3(const VN& a, const VN& b) {
  Expr v = and_(a.v, b.v);
  if (!a.n && !b.n) return {v, std::nullopt};
  Expr na = valid_or_true(a.n), nb = valid_or_true(b.n);
  Expr n = or_(or_(and_(na, not_(a.v)), and_(nb, not_(b.v))), and_(na, nb));
  return {v, n};
}
VN or3(const VN& a, const VN& b) {
  Expr v = or_(a.v, b.v);
  if (!a.n && !b.n) return {v, std::nullopt};
  Expr na = valid_or_true(a.n), nb = valid_or_true(b.n);
  Expr n = or_(or_(and_(na, a.v), and_(nb, b.v)), and_(na, nb));
  return {v, n};
}
VN compare3(BinaryOp op, const VN& a, const VN& b) {
  return {make_binary(op, a.v, b.v), both(a.n, b.n)};
}

VN translate(const ExprPtr& e) {
  internal_check(e && e->resolved(), "lower_nulls: unresolved expression");
  if (!touches_null(*e)) return {Expr(e), std::nullopt};
  const Type t = *e->type;
  auto arg = [&](size_t i) { return translate(e->args.at(i)); };
  switch (e->kind) {
    case ExprKind::Attr:
      return {col(e->text, e->loc), col(validity_name(e->text), e->loc)};
    case ExprKind::Literal:
      internal_check(e->literal.is_null(), "lower_nulls: a nullable literal that is not NULL");
      return {zero(t), lit_bool(false)};
    case ExprKind::Unary: {
      VN x = arg(0);
      return {make_unary(e->unary_op, x.v, e->loc), x.n};
    }
    case ExprKind::Binary: {
      VN a = arg(0), b = arg(1);
      if (e->binary_op == BinaryOp::And) return and3(a, b);
      if (e->binary_op == BinaryOp::Or) return or3(a, b);
      Expr v = make_binary(e->binary_op, a.v, b.v, e->loc);
      std::optional<Expr> n = both(a.n, b.n);
      // Integer division only where no operand is NULL (a NULL's stored zero must not
      // raise division by zero).
      const bool divides = e->binary_op == BinaryOp::Div || e->binary_op == BinaryOp::Mod;
      if (divides && n && (is_integer(t) || t == Type::Date)) v = case_when({{*n, v}}, zero(t));
      return {v, n};
    }
    case ExprKind::Between: {
      VN x = arg(0), lo = arg(1), hi = arg(2);
      return and3(compare3(BinaryOp::Le, lo, x), compare3(BinaryOp::Le, x, hi));
    }
    case ExprKind::InList: {
      VN x = arg(0);
      VN acc = compare3(BinaryOp::Eq, x, arg(1));
      for (size_t i = 2; i < e->args.size(); ++i) acc = or3(acc, compare3(BinaryOp::Eq, x, arg(i)));
      return acc;
    }
    case ExprKind::Cast: {
      VN x = arg(0);
      return {cast(x.v, e->cast_type, e->loc), x.n};
    }
    case ExprKind::Case: {
      std::vector<std::pair<Expr, Expr>> values, valids;
      bool nullable = false;
      std::vector<VN> vals;
      for (size_t i = 0; i + 1 < e->args.size(); i += 2) {
        Expr c = is_true(arg(i));
        VN v = arg(i + 1);
        nullable = nullable || v.n.has_value();
        values.emplace_back(c, v.v);
        valids.emplace_back(c, valid_or_true(v.n));
      }
      VN other = translate(e->args.back());
      nullable = nullable || other.n.has_value();
      Expr v = case_when(values, other.v, e->loc);
      if (!nullable) return {v, std::nullopt};
      return {v, case_when(valids, valid_or_true(other.n), e->loc)};
    }
    case ExprKind::Year: {
      VN x = arg(0);
      return {year(x.v, e->loc), x.n};
    }
    case ExprKind::Like: {
      VN x = arg(0);
      return {like(x.v, e->text, e->loc), x.n};
    }
    case ExprKind::StartsWith: {
      VN x = arg(0);
      return {starts_with(x.v, e->text, e->loc), x.n};
    }
    case ExprKind::Substring: {
      VN x = arg(0);
      return {substring(x.v, Expr(e->args[1]), Expr(e->args[2]), e->loc), x.n};
    }
    case ExprKind::IsNull: {
      VN x = arg(0);
      return {x.n ? not_(*x.n) : lit_bool(false), std::nullopt};
    }
    case ExprKind::Coalesce: {
      // The first argument that is not NULL; a non-nullable argument ends the search.
      std::vector<std::pair<Expr, Expr>> branches;
      std::optional<Expr> any_valid;
      for (size_t i = 0; i < e->args.size(); ++i) {
        VN x = arg(i);
        const bool last = i + 1 == e->args.size();
        if (!x.n || last) {
          Expr v = branches.empty() ? x.v : case_when(branches, x.v, e->loc);
          if (!x.n) return {v, std::nullopt};
          return {v, any_valid ? or_(*any_valid, *x.n) : *x.n};
        }
        branches.emplace_back(*x.n, x.v);
        any_valid = any_valid ? or_(*any_valid, *x.n) : *x.n;
      }
      break;
    }
    case ExprKind::Null:
    case ExprKind::Scalar:
      break;
  }
  throw InternalError(fmt::format("lower_nulls: cannot translate {}", to_string(e)));
}

// The schema's attributes in the layout, by name: (a.valid, a) for nullable ones.
std::vector<NamedExpr> layout_columns(const Schema& s, const SourceLoc& loc) {
  std::vector<NamedExpr> v;
  for (const Attribute& a : s.attributes) {
    if (a.nullable)
      v.push_back(NamedExpr{validity_name(a.name), col(validity_name(a.name)), loc});
    v.push_back(NamedExpr{a.name, col(a.name), loc});
  }
  return v;
}

// Sort keys in the layout: a nullable key sorts by its validity first.
std::vector<SortKey> layout_keys(const std::vector<SortKey>& keys, const Schema& s) {
  std::vector<SortKey> out;
  for (const SortKey& k : keys) {
    auto i = s.find(k.attr);
    internal_check(i.has_value(), "lower_nulls: sort key not in the schema");
    if (s[*i].nullable) out.push_back(SortKey{validity_name(k.attr), k.descending, k.loc});
    out.push_back(SortKey{k.attr, k.descending, k.loc});
  }
  return out;
}

class LowerNulls {
 public:
  explicit LowerNulls(const Program& in) : rw_(in) {}

  Program run() {
    for (const Node& n : rw_.in().nodes()) visit(n);
    Program out = rw_.finish();
    for (const Node& n : out.nodes())
      for (const Attribute& a : n.schema.attributes)
        internal_check(!a.nullable, fmt::format("lower_nulls: n{} still has nullable '{}'", n.id,
                                                a.name));
    return out;
  }

 private:
  const Schema& schema_of(NodeId old) const { return rw_.in().node(old).schema; }

  // The input of an old node whose attributes get the nullability `want` (a.valid =
  // true where the input's attribute is not nullable).
  NodeId widened(NodeId old, const std::vector<bool>& want, const SourceLoc& loc) {
    const Schema& s = schema_of(old);
    bool same = true;
    for (size_t i = 0; i < s.size(); ++i) same = same && s[i].nullable == want[i];
    if (same) return rw_.at(old);
    std::vector<NamedExpr> proj;
    for (size_t i = 0; i < s.size(); ++i) {
      const std::string& a = s[i].name;
      if (want[i])
        proj.push_back(NamedExpr{validity_name(a),
                                 s[i].nullable ? col(validity_name(a)) : lit_bool(true), loc});
      proj.push_back(NamedExpr{a, col(a), loc});
    }
    return rw_.project(rw_.at(old), std::move(proj), loc);
  }

  void visit(const Node& n) {
    switch (n.kind) {
      case OpKind::Input: {
        Node m = rw_.copy_of(n);
        Schema d;
        d.key_size = n.declared.key_size;
        for (const Attribute& a : n.declared.attributes) {
          if (a.nullable) d.attributes.push_back(Attribute{validity_name(a.name), Type::Bool});
          d.attributes.push_back(Attribute{a.name, a.type});
        }
        m.declared = std::move(d);
        m.sort_keys = layout_keys(n.sort_keys, n.declared);
        rw_.set(n.id, rw_.add(std::move(m)));
        return;
      }
      case OpKind::Select: {
        Node m = rw_.copy_of(n);
        m.predicate = is_true(translate(n.predicate.ptr()));
        rw_.set(n.id, rw_.add(std::move(m)));
        return;
      }
      case OpKind::Project:
        return project(n);
      case OpKind::Join:
        return join(n);
      case OpKind::Reduce:
        return reduce(n);
      case OpKind::Sort: {
        Node m = rw_.copy_of(n);
        m.sort_keys = layout_keys(n.sort_keys, schema_of(n.inputs[0]));
        rw_.set(n.id, rw_.add(std::move(m)));
        return;
      }
      case OpKind::Union:
      case OpKind::UnionAll:
      case OpKind::Intersect:
      case OpKind::Difference:
        return set_op(n);
      case OpKind::Scalar: {
        Node m = rw_.copy_of(n);
        m.explicit_validity = true;
        rw_.set(n.id, rw_.add(std::move(m)));
        return;
      }
      case OpKind::Product:
      case OpKind::Limit:
      case OpKind::Distinct:
      case OpKind::Fixpoint:
      case OpKind::Output:
        rw_.keep(n);
        return;
    }
    throw InternalError("lower_nulls: unknown operator");
  }

  void project(const Node& n) {
    Node m = rw_.copy_of(n);
    m.exprs.clear();
    for (const NamedExpr& ne : n.exprs) {
      const ExprPtr& e = ne.expr.ptr();
      if (!e->nullable) {
        m.exprs.push_back(NamedExpr{ne.name, translate(e).v, ne.loc});
        continue;
      }
      if (e->kind == ExprKind::Attr) {  // passed through with its validity
        m.exprs.push_back(NamedExpr{validity_name(ne.name), col(validity_name(e->text)), ne.loc});
        m.exprs.push_back(NamedExpr{ne.name, col(e->text), ne.loc});
        continue;
      }
      VN x = translate(e);
      Expr valid = valid_or_true(x.n);
      m.exprs.push_back(NamedExpr{validity_name(ne.name), valid, ne.loc});
      m.exprs.push_back(NamedExpr{ne.name, case_when({{valid, x.v}}, zero(*e->type)), ne.loc});
    }
    rw_.set(n.id, rw_.add(std::move(m)));
  }

  void set_op(const Node& n) {
    const Schema& l = schema_of(n.inputs[0]);
    const Schema& r = schema_of(n.inputs[1]);
    std::vector<bool> want(l.size());
    for (size_t i = 0; i < l.size(); ++i) want[i] = l[i].nullable || r[i].nullable;
    Node m = rw_.copy_of(n);
    m.inputs = {widened(n.inputs[0], want, n.loc), widened(n.inputs[1], want, n.loc)};
    NodeId id = rw_.add(std::move(m));
    // intersect and difference keep the left's nullability: drop a validity the left did
    // not have (it is true on every tuple they keep).
    bool extra = false;
    for (size_t i = 0; i < l.size(); ++i) extra = extra || (want[i] && !n.schema[i].nullable);
    if (extra) {
      std::vector<NamedExpr> proj;
      for (size_t i = 0; i < l.size(); ++i) {
        // The set operation's output has the left's names.
        const std::string& a = n.schema[i].name;
        if (n.schema[i].nullable)
          proj.push_back(NamedExpr{validity_name(a), col(validity_name(a)), n.loc});
        proj.push_back(NamedExpr{a, col(a), n.loc});
      }
      id = rw_.project(id, std::move(proj), n.loc);
    }
    rw_.set(n.id, id);
  }

  void join(const Node& n) {
    internal_check(!is_outer_join(n.join_kind), "lower_nulls: outer joins are lowered before");
    const Schema& ls = schema_of(n.inputs[0]);
    const Schema& rs = schema_of(n.inputs[1]);
    NodeId L = rw_.at(n.inputs[0]), R = rw_.at(n.inputs[1]);
    Node m = rw_.copy_of(n);
    m.left_keys.clear();
    m.right_keys.clear();
    m.null_safe_keys = false;
    const bool drop_nulls = !n.null_safe_keys && n.join_kind != JoinKind::Anti;
    std::vector<std::string> right_drop;  // validities of the right not to pass to the output
    std::vector<NamedExpr> left_extra, right_extra;  // constant true validities added
    for (size_t k = 0; k < n.left_keys.size(); ++k) {
      const std::string &lk = n.left_keys[k], &rk = n.right_keys[k];
      const bool ln = ls[*ls.find(lk)].nullable, rn = rs[*rs.find(rk)].nullable;
      if (!ln && !rn) {
        m.left_keys.push_back(lk);
        m.right_keys.push_back(rk);
        continue;
      }
      if (drop_nulls) {
        // NULL matches nothing: drop NULL keys on each side before the join.
        if (ln) L = rw_.select(L, col(validity_name(lk)), n.loc);
        if (rn) {
          R = rw_.select(R, col(validity_name(rk)), n.loc);
          right_drop.push_back(validity_name(rk));
        }
        m.left_keys.push_back(lk);
        m.right_keys.push_back(rk);
        continue;
      }
      if (n.null_safe_keys) {
        // (k.valid, k) pairs: NULL = NULL. A side without validity has a constant one.
        std::string lv = validity_name(lk), rv = validity_name(rk);
        if (!ln) {
          lv = rw_.fresh("t");
          left_extra.push_back(NamedExpr{lv, lit_bool(true), n.loc});
        }
        if (!rn) {
          rv = rw_.fresh("t");
          right_extra.push_back(NamedExpr{rv, lit_bool(true), n.loc});
        }
        m.left_keys.push_back(lv);
        m.right_keys.push_back(rv);
        m.left_keys.push_back(lk);
        m.right_keys.push_back(rk);
        continue;
      }
      // anti: the right's NULL keys can match nothing, and a left tuple with a NULL key
      // must stay: join (k.valid, k) with (true, k) over the right's non-NULL keys.
      if (rn) {
        R = rw_.select(R, col(validity_name(rk)), n.loc);
        right_drop.push_back(validity_name(rk));
      }
      if (ln) {
        std::string t = rw_.fresh("t");
        right_extra.push_back(NamedExpr{t, lit_bool(true), n.loc});
        m.left_keys.push_back(validity_name(lk));
        m.right_keys.push_back(t);
      }
      m.left_keys.push_back(lk);
      m.right_keys.push_back(rk);
    }
    if (!left_extra.empty()) {
      std::vector<NamedExpr> proj = layout_columns(ls, n.loc);
      for (auto& e : left_extra) proj.push_back(e);
      L = rw_.project(L, std::move(proj), n.loc);
    }
    if (!right_drop.empty() || !right_extra.empty()) {
      std::vector<NamedExpr> proj;
      for (NamedExpr& e : layout_columns(rs, n.loc))
        if (std::find(right_drop.begin(), right_drop.end(), e.name) == right_drop.end())
          proj.push_back(std::move(e));
      for (auto& e : right_extra) proj.push_back(e);
      R = rw_.project(R, std::move(proj), n.loc);
    }
    if (n.predicate.valid()) m.predicate = is_true(translate(n.predicate.ptr()));
    m.inputs = {L, R};
    NodeId id = rw_.add(std::move(m));
    // A constant validity added on the left passes through the join: drop it.
    if (!left_extra.empty()) id = rw_.project(id, layout_columns(n.schema, n.loc), n.loc);
    rw_.set(n.id, id);
  }

  void reduce(const Node& n) {
    const size_t nk = n.group_keys.size();
    Node m = rw_.copy_of(n);
    m.group_keys.clear();
    m.aggregates.clear();
    m.explicit_validity = true;  // its aggregates are zeros where SQL has NULLs
    const Schema& in = schema_of(n.inputs[0]);
    for (const std::string& k : n.group_keys) {
      if (in[*in.find(k)].nullable) m.group_keys.push_back(validity_name(k));
      m.group_keys.push_back(k);
    }
    // The project after the reduce: keys as they are, nullable aggregates rebuilt from a
    // raw value and a count of the rows folded.
    std::vector<NamedExpr> post;
    bool needs_post = false;
    std::map<std::string, std::string> counts;  // filter text -> its count aggregate
    for (size_t k = 0; k < nk; ++k)
      for (NamedExpr& e : layout_columns(Schema{{n.schema[k]}, 0}, n.loc)) post.push_back(e);
    for (size_t i = 0; i < n.aggregates.size(); ++i) {
      const Aggregate& a = n.aggregates[i];
      internal_check(!a.distinct, "lower_nulls: distinct aggregates are lowered before");
      std::optional<Expr> keep;  // the rows the aggregate folds
      if (a.filter.valid()) keep = is_true(translate(a.filter.ptr()));
      std::optional<VN> x;
      if (a.arg.valid()) {
        x = translate(a.arg.ptr());
        keep = both(keep, x->n);
      }
      Aggregate b = a;
      b.filter = keep ? *keep : Expr();
      if (a.func == AggFunc::Count) {
        b.arg = Expr();  // count(x) counts the rows where x is not NULL
        m.aggregates.push_back(std::move(b));
        post.push_back(NamedExpr{a.name, col(a.name), n.loc});
        continue;
      }
      b.arg = x->v;
      if (!n.schema[nk + i].nullable) {
        m.aggregates.push_back(std::move(b));
        post.push_back(NamedExpr{a.name, col(a.name), n.loc});
        continue;
      }
      needs_post = true;
      const std::string raw = rw_.fresh("a");
      b.name = raw;
      Expr filter = b.filter;
      m.aggregates.push_back(std::move(b));
      // One count per distinct filter (aggregates over non-nullable arguments of a reduce
      // without group keys share the count of its rows).
      const std::string filter_text = filter.valid() ? to_string(filter) : "";
      auto known = counts.find(filter_text);
      if (known == counts.end()) {
        known = counts.emplace(filter_text, rw_.fresh("c")).first;
        m.aggregates.push_back(Aggregate{known->second, AggFunc::Count, Expr(), a.loc, false, filter});
      }
      const std::string& count = known->second;
      Expr some = make_binary(BinaryOp::Gt, col(count), Expr(int64_t{0}));
      post.push_back(NamedExpr{validity_name(a.name), some, n.loc});
      post.push_back(NamedExpr{a.name, case_when({{some, col(raw)}}, zero(n.schema[nk + i].type)),
                               n.loc});
    }
    NodeId id = rw_.add(std::move(m));
    if (needs_post) id = rw_.project(id, std::move(post), n.loc);
    rw_.set(n.id, id);
  }

  detail::Rewrite rw_;
};

}  // namespace

Program lower_nulls(const Program& checked) {
  bool any = false;
  for (const Node& n : checked.nodes()) {
    for (const Attribute& a : n.schema.attributes) any = any || a.nullable;
    any = any || n.null_safe_keys;
  }
  if (!any) return checked;
  return LowerNulls(checked).run();
}

}  // namespace ranc::passes
