// Helpers of the GPU tests (see gpu_test_util.h).
#include "gpu_test_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ranc/ra_ops/ra_ops.h"
#include "ranc/runtime/device.h"
#include "ranc/runtime/executor.h"

namespace ranc::gputest {

const char* dist_name(Dist d) {
  switch (d) {
    case Dist::Unique:
      return "unique";
    case Dist::Duplicates:
      return "duplicates";
    case Dist::Zipf:
      return "zipf";
    case Dist::NoMatch:
      return "nomatch";
    case Dist::AllMatch:
      return "allmatch";
  }
  return "?";
}

std::vector<int64_t> make_keys(Dist d, int64_t n, std::mt19937_64& rng, bool other_side,
                               int64_t domain) {
  std::vector<int64_t> k(static_cast<size_t>(n));
  switch (d) {
    case Dist::Unique:
      std::iota(k.begin(), k.end(), int64_t{0});
      std::shuffle(k.begin(), k.end(), rng);
      break;
    case Dist::Duplicates: {
      std::uniform_int_distribution<int64_t> u(0, std::max<int64_t>(0, n / 8));
      for (auto& x : k) x = u(rng);
      break;
    }
    case Dist::Zipf: {
      if (other_side) {  // skew on one side only (foreign keys); the other side is unique
        std::iota(k.begin(), k.end(), int64_t{0});
        std::shuffle(k.begin(), k.end(), rng);
        break;
      }
      // Inverse CDF over a domain of D values with P(rank r) ~ 1 / r^1.2.
      const int64_t D = std::max<int64_t>(1, std::min<int64_t>(n / 4 + 1, 1 << 20));
      std::vector<double> cdf(static_cast<size_t>(D));
      double s = 0;
      for (int64_t r = 0; r < D; ++r)
        cdf[static_cast<size_t>(r)] = s += 1.0 / std::pow(static_cast<double>(r + 1), 1.2);
      std::uniform_real_distribution<double> u(0, s);
      for (auto& x : k) x = std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin();
      break;
    }
    case Dist::NoMatch: {
      std::uniform_int_distribution<int64_t> u(0, std::max<int64_t>(1, n));
      for (auto& x : k) x = 2 * u(rng) + (other_side ? 1 : 0);
      break;
    }
    case Dist::AllMatch: {
      if (other_side) {
        std::iota(k.begin(), k.end(), int64_t{0});  // every key of the domain, once
        std::shuffle(k.begin(), k.end(), rng);
      } else {
        std::uniform_int_distribution<int64_t> u(0, std::max<int64_t>(1, domain) - 1);
        for (auto& x : k) x = u(rng);
      }
      break;
    }
  }
  return k;
}

Column column_from_keys(Type type, const std::vector<int64_t>& keys) {
  Column c(type);
  c.reserve(keys.size());
  switch (type) {
    case Type::Bool:
      for (auto k : keys) c.data<uint8_t>().push_back(static_cast<uint8_t>(k & 1));
      break;
    case Type::I32:
    case Type::Date:
      for (auto k : keys) c.data<int32_t>().push_back(static_cast<int32_t>(k));
      break;
    case Type::I64:
      for (auto k : keys) c.data<int64_t>().push_back(k * 3 - 5);
      break;
    case Type::F32:
      for (auto k : keys) c.data<float>().push_back(static_cast<float>(k) / 4.0f);
      break;
    case Type::F64:
      for (auto k : keys) c.data<double>().push_back(static_cast<double>(k) / 4.0);
      break;
    case Type::String: {
      std::vector<std::string> strs;
      strs.reserve(keys.size());
      for (auto k : keys) strs.push_back(fmt::format("k{:09}", k));
      auto dict = Dictionary::from_strings(strs);
      std::vector<int32_t> codes;
      codes.reserve(keys.size());
      for (const auto& s : strs) codes.push_back(*dict->find(s));
      c.set_codes(std::move(codes), dict);
      break;
    }
  }
  return c;
}

Column random_column(Type type, int64_t n, std::mt19937_64& rng) {
  Column c(type);
  c.reserve(static_cast<size_t>(n));
  std::uniform_int_distribution<int32_t> small(-1000, 1000);
  switch (type) {
    case Type::Bool:
      for (int64_t i = 0; i < n; ++i) c.data<uint8_t>().push_back(static_cast<uint8_t>(rng() & 1));
      break;
    case Type::I32:
      for (int64_t i = 0; i < n; ++i) c.data<int32_t>().push_back(small(rng));
      break;
    case Type::Date:
      for (int64_t i = 0; i < n; ++i) c.data<int32_t>().push_back(8000 + small(rng) * 3);
      break;
    case Type::I64:
      // Wider than 32 bits, yet sums of up to 2^22 values stay in i64 (an integer sum that
      // leaves it is an error, which GpuNulls.IntegerSumOverflow* tests).
      for (int64_t i = 0; i < n; ++i)
        c.data<int64_t>().push_back(static_cast<int64_t>(rng() >> 23) - (int64_t{1} << 40));
      break;
    case Type::F32:
      for (int64_t i = 0; i < n; ++i)
        c.data<float>().push_back(static_cast<float>(small(rng)) / 8.0f);
      break;
    case Type::F64:
      for (int64_t i = 0; i < n; ++i)
        c.data<double>().push_back(static_cast<double>(small(rng)) / 16.0);
      break;
    case Type::String: {
      static const char* words[] = {"apple", "banana", "cherry", "date",  "elder",
                                    "fig",   "grape",  "kiwi",   "lemon", "mango"};
      for (int64_t i = 0; i < n; ++i) c.append(Value::string(words[rng() % 10]));
      break;
    }
  }
  return c;
}

HostRelation make_relation(const Schema& schema, std::vector<Column> columns) {
  HostRelation r(schema);
  for (size_t i = 0; i < columns.size(); ++i) r.column(i) = std::move(columns[i]);
  return r;
}

bool have_gpu() {
  return rt::gpu_available();
}

namespace {

rt::Executor& executor() {
  static rt::Executor ex;
  return ex;
}

bool close(const Value& a, const Value& b, double tol) {
  if (a == b) return true;
  if (a.is_null() || b.is_null()) return false;
  if (!is_floating(a.type()) || a.type() != b.type()) return false;
  double x = a.to_double(), y = b.to_double();
  if (std::isnan(x) || std::isnan(y)) return false;
  return std::fabs(x - y) <= tol * std::max({1.0, std::fabs(x), std::fabs(y)});
}

std::string row_text(const std::vector<Value>& r) {
  std::string s;
  for (const auto& v : r) s += (s.empty() ? "" : ", ") + v.str();
  return "(" + s + ")";
}


}  // namespace

// Ordered outputs: `order` holds the indices of the attributes the output is ordered by.
// Rows that tie on all of them may come in any order (a project that drops the sort's
// tie-break attributes leaves such ties), so the rows are compared run by run: the
// reference's runs of equal order keys, each compared as a multiset, which still checks
// that every row sits in its run, i.e. the order keys come in the reference's sequence.
std::string compare_outputs(const std::string& name, const HostRelation& gpu, const HostRelation& ref,
                    const std::vector<size_t>& order, bool ordered, double tol) {
  if (gpu.num_rows() != ref.num_rows())
    return fmt::format("output '{}': {} rows on the GPU, {} in the reference", name, gpu.num_rows(),
                       ref.num_rows());
  // Row ids, compared on the columns (HostRelation::compare_row_ids): Values only for the
  // cells compared and for a message.
  std::vector<size_t> g, r;
  if (ordered) {
    g.resize(gpu.num_rows());
    r.resize(ref.num_rows());
    for (size_t i = 0; i < g.size(); ++i) g[i] = r[i] = i;
    auto keys_equal = [&](size_t a, size_t b) {
      for (size_t c : order)
        if (!(ref.get(a, c) == ref.get(b, c))) return false;
      return true;
    };
    for (size_t begin = 0, end; begin < r.size(); begin = end) {
      for (end = begin + 1; end < r.size() && keys_equal(r[begin], r[end]);) ++end;
      if (end - begin < 2) continue;
      const auto b = static_cast<ptrdiff_t>(begin), e = static_cast<ptrdiff_t>(end);
      std::sort(r.begin() + b, r.begin() + e, [&](size_t x, size_t y) { return ref.compare_row_ids(x, y) < 0; });
      std::sort(g.begin() + b, g.begin() + e, [&](size_t x, size_t y) { return gpu.compare_row_ids(x, y) < 0; });
    }
  } else {
    g = gpu.sorted_row_ids();
    r = ref.sorted_row_ids();
  }
  const size_t cols = std::min(gpu.num_columns(), ref.num_columns());
  for (size_t i = 0; i < g.size(); ++i) {
    bool ok = gpu.num_columns() == ref.num_columns();
    for (size_t c = 0; ok && c < cols; ++c) ok = close(gpu.get(g[i], c), ref.get(r[i], c), tol);
    if (!ok)
      return fmt::format("output '{}' ({}) row {}: GPU {} vs reference {}", name,
                         ordered ? "ordered; ties on the order keys as multisets" : "as multiset",
                         i, row_text(gpu.row(g[i])), row_text(ref.row(r[i])));
  }
  return "";
}

Reference reference(const Program& checked, const Inputs& inputs) {
  Reference r;
  try {
    r.outputs = execute_reference(checked, inputs);
  } catch (const UserError& e) {
    r.error = e.what();
  }
  return r;
}

std::string run_and_compare(const Program& checked, const Inputs& inputs,
                            const codegen::CodegenOptions& options, rt::RunStats* stats) {
  return compare_with_reference(checked, inputs, reference(checked, inputs), options, stats);
}

std::string compare_with_reference(const Program& checked, const Inputs& inputs,
                                   const std::vector<HostRelation>& ref,
                                   const std::string& ref_error,
                                   const codegen::CodegenOptions& options, rt::RunStats* stats) {
  rt::Plan plan = codegen::generate_plan(checked, options);
  std::map<std::string, const HostRelation*> bind;
  for (const auto& [n, r] : inputs) bind[n] = &r;
  rt::RunResult res;
  try {
    res = executor().run(plan, bind);
  } catch (const UserError& e) {
    if (!ref_error.empty() && e.kind() == ErrorKind::Execution) return "";  // both fail
    return fmt::format("GPU run failed: {} (reference: {})", e.what(),
                       ref_error.empty() ? "ok" : ref_error);
  } catch (const std::exception& e) {
    return fmt::format("GPU run failed: {}\n{}", e.what(), codegen::describe_plan(plan));
  }
  if (stats) *stats = res.stats;
  if (!ref_error.empty())
    return fmt::format("the reference failed ({}) but the GPU did not", ref_error);
  int64_t rows = 1;
  for (const auto& [n, r] : inputs)
    rows = std::max<int64_t>(rows, static_cast<int64_t>(r.num_rows()));
  const double tol = 1e-12 * static_cast<double>(rows) + 1e-9;
  std::vector<NodeId> outs = checked.outputs();
  if (res.outputs.size() != outs.size()) return "output count differs";
  for (size_t k = 0; k < outs.size(); ++k) {
    const Node& on = checked.node(outs[k]);
    bool ordered = !on.order.empty();
    const HostRelation* gpu = nullptr;
    for (const auto& [n, r] : res.outputs)
      if (n == on.name) gpu = &r;
    if (!gpu) return fmt::format("output '{}' missing from the GPU run", on.name);
    if (gpu->schema().attributes != ref[k].schema().attributes)
      return fmt::format("output '{}': schema {} on the GPU, {} in the reference", on.name,
                         gpu->schema().str(), ref[k].schema().str());
    std::vector<size_t> order;
    for (const SortKey& key : on.order)
      for (size_t c = 0; c < ref[k].schema().attributes.size(); ++c)
        if (ref[k].schema().attributes[c].name == key.attr) order.push_back(c);
    if (order.size() != on.order.size())
      return fmt::format("output '{}': an order attribute is not in its schema", on.name);
    std::string d = compare_outputs(on.name, *gpu, ref[k], order, ordered, tol);
    if (!d.empty()) return d;
  }
  return "";
}

}  // namespace ranc::gputest
