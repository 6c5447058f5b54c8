//! @file `cascade bench reduction`: CPU rows (the OpenMP maximum vs std::max_element), then the
//! GPU rows (src/app/bench_reduction_cuda.cu) when built with CUDA. Table on stdout, CSV with --csv.
//!
//! CSV columns (shared with the GPU rows, which append to the same file):
//!   backend,precision,n,elements,variant,median_us,gbps,pct_read,pct_copy,vs_cub,check
//! (n: the side of the N x N field; variant is double-quoted: it contains commas)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cascade/bench.hpp"
#include "cascade/error.hpp"
#include "cascade/reduction.hpp"

namespace cascade {
namespace {

//! CPU rows stop here: larger inputs only measure the host's memory for minutes.
constexpr std::size_t kCpuMaxElements = std::size_t(1) << 26;

struct CpuRow {
  std::string variant;
  double median_us;
  double gbps;
  bool ok;
};

template <class F>
double median_us(int repeats, F&& f) {
  f();  // warm-up (page faults, thread pool)
  std::vector<double> t;
  for (int r = 0; r < std::max(repeats, 1); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <class Real>
std::vector<CpuRow> cpu_rows(std::size_t n, int repeats) {  // n = N * N
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<Real> u(n), v(n);
  for (std::size_t i = 0; i < n; ++i) {
    u[i] = static_cast<Real>(dist(rng));
    v[i] = static_cast<Real>(dist(rng));
  }
  const double bytes = double(n) * sizeof(Real);
  const Real inv_dx = Real(n), inv_dy = Real(n) / 2;

  volatile Real sink = 0;
  Real std_max = *std::max_element(u.begin(), u.end());
  Real omp_max = max_cpu(u.data(), n);
  Real cfl_serial = 0;
  {
    Real m = -1;
    for (std::size_t i = 0; i < n; ++i)
      m = std::max(m, std::abs(u[i]) * inv_dx + std::abs(v[i]) * inv_dy);
    cfl_serial = m;
  }
  const Real cfl = cfl_max_cpu(u.data(), v.data(), n, inv_dx, inv_dy);

  std::vector<CpuRow> rows;
  double us = median_us(repeats, [&] { sink = *std::max_element(u.begin(), u.end()); });
  rows.push_back({"std::max_element (1 thread)", us, bytes / us / 1e3, true});
  us = median_us(repeats, [&] { sink = max_cpu(u.data(), n); });
  rows.push_back({"max_cpu (OpenMP)", us, bytes / us / 1e3, omp_max == std_max});
  us = median_us(repeats, [&] { sink = cfl_max_cpu(u.data(), v.data(), n, inv_dx, inv_dy); });
  rows.push_back({"cfl_max_cpu (OpenMP, 2 arrays)", us, 2 * bytes / us / 1e3,
                  std::abs(cfl - cfl_serial) <= 4 * std::numeric_limits<Real>::epsilon() * cfl_serial});
  (void)sink;
  return rows;
}

}  // namespace

int run_reduction_bench(const BenchOptions& options) {
  std::vector<Precision> precisions = options.precisions;
  if (precisions.empty()) precisions = {Precision::Single, Precision::Double};
  std::vector<std::size_t> sides;
  if (options.sizes.empty()) {
    sides = {1024, 2048, 4096};
  } else {
    for (long side : options.sizes) sides.push_back(std::size_t(side));
  }

  std::ofstream csv;
  if (!options.csv.empty()) {
    csv.open(options.csv, std::ios::trunc);
    if (!csv) throw InputError("--csv: cannot write " + options.csv);
    csv << "backend,precision,n,elements,variant,median_us,gbps,pct_read,pct_copy,vs_cub,check\n";
  }

  bool all_ok = true;
  fmt::print("# cascade bench reduction: CPU rows (median of {} runs; GB/s = bytes read / time)\n",
             options.repeats);
  fmt::print("{:<7} {:<9} {:>6} {:>11}  {:<34} {:>11} {:>9}  {}\n", "backend", "precision", "N",
             "elements", "variant", "median_us", "GB/s", "check");
  for (Precision p : precisions)
    for (std::size_t side : sides) {
      const std::size_t n = side * side;
      if (n > kCpuMaxElements) {
        fmt::print("cpu     {:<9} {:>6} {:>11}  skipped (CPU rows stop at 2^26 elements)\n", to_string(p), side, n);
        continue;
      }
      const auto rows = p == Precision::Single ? cpu_rows<float>(n, options.repeats)
                                               : cpu_rows<double>(n, options.repeats);
      for (const auto& r : rows) {
        all_ok = all_ok && r.ok;
        fmt::print("{:<7} {:<9} {:>6} {:>11}  {:<34} {:>11.1f} {:>9.2f}  {}\n", "cpu", to_string(p), side,
                   n, r.variant, r.median_us, r.gbps, r.ok ? "ok" : "MISMATCH");
        if (csv)
          csv << fmt::format("cpu,{},{},{},\"{}\",{:.3f},{:.3f},,,,{}\n", to_string(p), side, n, r.variant,
                             r.median_us, r.gbps, r.ok ? "ok" : "MISMATCH");
      }
      std::fflush(stdout);
    }
  if (csv) csv.close();

  int rc = all_ok ? 0 : 1;
#if defined(CASCADE_HAVE_CUDA)
  const int gpu_rc = run_reduction_bench_cuda(options);
  if (gpu_rc != 0) rc = gpu_rc;
#else
  fmt::print("GPU rows skipped: built without CUDA\n");
#endif
  return rc;
}

}  // namespace cascade
