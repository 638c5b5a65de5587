// Loader benchmark: reads a TPC-H lineitem file (.tbl or .csv with a header, as
// tpchgen-cli writes them; see gen_data.sh) several times per thread count and
// prints the best throughput in MB/s of input text. A columnar .rcol file (known by
// its magic bytes, e.g. from `ranc import` or --write-rcol) is read with its own
// schema and reported in MB/s of the column sections read.
//
//   io_bench FILE [--threads 1,2,...] [--repeat N] [--columns a,b,...] [--write]
//                 [--write-rcol OUT.rcol]
//
// --columns keeps only those attributes (the others are skipped unconverted, as
// `ranc run` does for the attributes a program does not use); q1 names TPC-H Q1's.
// --write-rcol writes the text file's relation (all attributes) to OUT.rcol and then
// reads that with the same columns, for the two loaders side by side.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ranc/data/error.h"
#include "ranc/io/columnar.h"
#include "ranc/io/csv.h"
#include "ranc/io/tpch.h"

// CPU seconds of the whole process (all threads): on a busy machine wall time
// says little, MB per CPU second says what one free core would do.
static double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Reads a columnar file `repeat` times per thread count: MB/s of the sections read.
static void bench_rcol(const std::string& path, const std::vector<unsigned>& threads, int repeat,
                       const std::vector<std::string>& columns) {
  ranc::ColumnarInfo info = ranc::read_columnar_info(path);
  auto padded = [](uint64_t n) { return (n + 63) / 64 * 64; };
  uint64_t bytes = 0;
  for (size_t c = 0; c < info.schema.size(); ++c)
    if (columns.empty() ||
        std::find(columns.begin(), columns.end(), info.schema[c].name) != columns.end())
      bytes += padded(info.sections[c].data_bytes) + padded(info.sections[c].dictionary_bytes) +
               padded(info.sections[c].validity_bytes);
  const double mb = static_cast<double>(bytes) / 1e6;
  std::printf("rcol %s: %.1f MB, %llu rows, %zu attributes; %.1f MB of sections read\n",
              path.c_str(), static_cast<double>(info.file_bytes) / 1e6,
              static_cast<unsigned long long>(info.rows), info.schema.size(), mb);
  for (unsigned t : threads) {
    double best = 1e30, best_cpu = 1e30;
    size_t rows = 0;
    for (int r = 0; r < repeat; ++r) {
      double c0 = cpu_seconds();
      ranc::CsvOptions opt;
      opt.num_threads = t;
      opt.columns = columns;
      auto t0 = std::chrono::steady_clock::now();
      rows = ranc::read_columnar(path, info.schema, opt).num_rows();
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::min(best, s);
      best_cpu = std::min(best_cpu, cpu_seconds() - c0);
    }
    std::printf(
        "rcol  threads %2u: wall %7.3f s %7.1f MB/s | cpu %7.3f s %7.1f MB/cpu-s | %zu rows, "
        "best of %d\n",
        t, best, mb / best, best_cpu, mb / best_cpu, rows, repeat);
  }
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s FILE [--threads 1,2] [--repeat N] [--columns a,b|q1] [--write] "
                 "[--write-rcol OUT.rcol]\n",
                 argv[0]);
    return 2;
  }
  std::string path = argv[1];
  std::vector<unsigned> threads = {1, std::max(1u, std::thread::hardware_concurrency())};
  int repeat = 3;
  bool write = false;
  std::string write_rcol;
  std::vector<std::string> columns;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      threads.clear();
      std::stringstream ss(argv[++i]);
      for (std::string t; std::getline(ss, t, ',');) threads.push_back(std::stoul(t));
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::stoi(argv[++i]);
    } else if (a == "--columns" && i + 1 < argc) {
      std::string list = argv[++i];
      if (list == "q1") list = "l_quantity,l_extendedprice,l_discount,l_tax,l_returnflag,l_linestatus,l_shipdate";
      std::stringstream ss(list);
      for (std::string c; std::getline(ss, c, ',');) columns.push_back(c);
    } else if (a == "--write") {
      write = true;
    } else if (a == "--write-rcol" && i + 1 < argc) {
      write_rcol = argv[++i];
    } else {
      std::fprintf(stderr, "unknown or incomplete option '%s'\n", a.c_str());
      return 2;
    }
  }
  try {
    if (ranc::is_columnar_file(path)) {
      bench_rcol(path, threads, repeat, columns);
      return 0;
    }
    auto fmt = ranc::format_from_path(path).value_or(ranc::TextFormat::Csv);
    const double mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
    std::printf("file %s: %.1f MB, format %s, hardware threads %u, %s\n", path.c_str(), mb,
                fmt == ranc::TextFormat::Tbl ? "tbl" : "csv", std::thread::hardware_concurrency(),
                columns.empty() ? "all columns" : (std::to_string(columns.size()) + " columns").c_str());
    ranc::HostRelation last;
    for (unsigned t : threads) {
      double best = 1e30, best_cpu = 1e30;
      for (int r = 0; r < repeat; ++r) {
        double c0 = cpu_seconds();
        ranc::CsvOptions opt = ranc::options_for(fmt);
        opt.num_threads = t;
        opt.columns = columns;
        auto t0 = std::chrono::steady_clock::now();
        last = ranc::read_csv(path, ranc::tpch::schema("lineitem"), opt);
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::min(best, s);
        best_cpu = std::min(best_cpu, cpu_seconds() - c0);
      }
      std::printf(
          "read  threads %2u: wall %7.2f s %7.1f MB/s | cpu %7.2f s %7.1f MB/cpu-s | %zu rows, "
          "best of %d\n",
          t, best, mb / best, best_cpu, mb / best_cpu, last.num_rows(), repeat);
    }
    if (write) {
      auto out = std::filesystem::temp_directory_path() / "ranc_io_bench_out";
      double c0 = cpu_seconds();
      auto t0 = std::chrono::steady_clock::now();
      ranc::write_csv(last, out.string(), ranc::options_for(fmt));
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double omb = static_cast<double>(std::filesystem::file_size(out)) / 1e6;
      double cpu = cpu_seconds() - c0;
      std::printf("write:            wall %7.2f s %7.1f MB/s | cpu %7.2f s %7.1f MB/cpu-s\n", s,
                  omb / s, cpu, omb / cpu);
      std::filesystem::remove(out);
    }
    if (!write_rcol.empty()) {
      ranc::HostRelation full;
      if (columns.empty()) {
        full = std::move(last);
      } else {
        ranc::CsvOptions opt = ranc::options_for(fmt);
        full = ranc::read_csv(path, ranc::tpch::schema("lineitem"), opt);
      }
      double c0 = cpu_seconds();
      auto t0 = std::chrono::steady_clock::now();
      ranc::write_columnar(write_rcol, full);
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double omb = static_cast<double>(std::filesystem::file_size(write_rcol)) / 1e6;
      std::printf("write rcol:       wall %7.3f s %7.1f MB/s | cpu %7.3f s (%.1f MB, synced)\n", s,
                  omb / s, cpu_seconds() - c0, omb);
      bench_rcol(write_rcol, threads, repeat, columns);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
