// Host-to-device upload throughput (issue 10): the ceiling (cudaMemcpy from pinned
// memory), a plain copy from pageable memory (what ranc did before), and ranc's staged
// Uploader (runtime/include/ranc/runtime/upload.h) with 1..N worker threads, copying
// and recoding dictionary codes. Each figure is the best of --repeat runs, in GB/s of
// bytes moved, and as % of the pinned ceiling measured in the same run.
//
//   upload_bench [--mib N] [--columns C] [--repeat R] [--threads 1,2,4,8]
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "ranc/runtime/check.h"
#include "ranc/runtime/upload.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <typename Fn>
double best_of(int repeat, Fn fn) {
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = 2048;
  int columns = 4, repeat = 3;
  std::vector<unsigned> threads = {1, 2, 4, 8};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--mib" && i + 1 < argc) mib = std::stoul(argv[++i]);
    if (a == "--columns" && i + 1 < argc) columns = std::stoi(argv[++i]);
    if (a == "--repeat" && i + 1 < argc) repeat = std::stoi(argv[++i]);
    if (a == "--threads" && i + 1 < argc) {
      threads.clear();
      std::stringstream ss(argv[++i]);
      for (std::string t; std::getline(ss, t, ',');) threads.push_back(std::stoul(t));
    }
  }
  try {
    cudaDeviceProp prop{};
    RANC_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const size_t col_bytes = (mib << 20) / static_cast<size_t>(columns) & ~size_t{3};
    const double total = static_cast<double>(col_bytes) * columns;
    std::printf("device %s; %d columns of %.1f MiB (%.2f GB in all), best of %d\n", prop.name,
                columns, col_bytes / 1048576.0, total / 1e9, repeat);
    std::vector<std::vector<int32_t>> host(static_cast<size_t>(columns));
    for (auto& h : host) {
      h.resize(col_bytes / 4);
      for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<int32_t>(i % 1000);
    }
    std::vector<int32_t> map(1000);
    std::iota(map.begin(), map.end(), 7);
    std::vector<void*> dev(static_cast<size_t>(columns));
    for (auto& d : dev) RANC_CUDA_CHECK(cudaMalloc(&d, col_bytes));
    cudaStream_t stream;
    RANC_CUDA_CHECK(cudaStreamCreate(&stream));

    // The ceiling: one pinned buffer of a column's size, copied to each column.
    void* pinned = nullptr;
    RANC_CUDA_CHECK(cudaHostAlloc(&pinned, col_bytes, cudaHostAllocDefault));
    std::memcpy(pinned, host[0].data(), col_bytes);
    double t_pinned = best_of(repeat, [&] {
      for (auto d : dev)
        RANC_CUDA_CHECK(cudaMemcpyAsync(d, pinned, col_bytes, cudaMemcpyHostToDevice, stream));
      RANC_CUDA_CHECK(cudaStreamSynchronize(stream));
    });
    const double ceiling = total / t_pinned / 1e9;
    std::printf("pinned cudaMemcpy (ceiling):   %7.2f GB/s\n", ceiling);

    double t_pageable = best_of(repeat, [&] {
      for (int c = 0; c < columns; ++c)
        RANC_CUDA_CHECK(cudaMemcpyAsync(dev[c], host[c].data(), col_bytes,
                                        cudaMemcpyHostToDevice, stream));
      RANC_CUDA_CHECK(cudaStreamSynchronize(stream));
    });
    std::printf("pageable cudaMemcpy:           %7.2f GB/s  %5.1f%% of pinned\n",
                total / t_pageable / 1e9, 100 * total / t_pageable / 1e9 / ceiling);

    for (unsigned t : threads) {
      ranc::rt::Uploader up(t);
      for (bool recode : {false, true}) {
        double s = best_of(repeat, [&] {
          for (int c = 0; c < columns; ++c)
            up.add(dev[c], host[c].data(), col_bytes, recode ? map.data() : nullptr,
                   recode ? map.size() : 0);
          up.run(stream);
        });
        std::printf("Uploader %u thread%s %s  %7.2f GB/s  %5.1f%% of pinned\n", t,
                    t == 1 ? ", " : "s,", recode ? "recode:" : "copy:  ", total / s / 1e9,
                    100 * total / s / 1e9 / ceiling);
      }
    }
    // Check the last (recoded) upload.
    std::vector<int32_t> back(1024);
    RANC_CUDA_CHECK(cudaMemcpy(back.data(), dev[columns - 1], back.size() * 4,
                               cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < back.size(); ++i)
      if (back[i] != map[i % 1000]) {
        std::printf("WRONG: element %zu is %d, expected %d\n", i, back[i], map[i % 1000]);
        return 1;
      }
    std::printf("recoded data verified\n");
    RANC_CUDA_CHECK(cudaFreeHost(pinned));
    for (auto d : dev) RANC_CUDA_CHECK(cudaFree(d));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "upload_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
