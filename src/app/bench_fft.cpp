//! @file `cascade bench fft`: one forward + one inverse 2D real transform, per backend and
//! precision, median of repeated runs. This is the floor that a time step is compared with.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <memory>
#include <vector>

#include "cascade/backend.hpp"
#include "cascade/bench.hpp"
#include "cascade/error.hpp"

namespace cascade {
namespace {

struct Row {
  std::string backend;
  std::string precision;
  long n;
  double ms;      // median ms for forward + inverse
  double gflops;  // 2 x 2.5 N^2 log2(N^2) flops (the usual real-transform count)
};

template <class Real>
Row time_pair(BackendKind kind, long side, int repeats, int device, FftPlanning planning) {
  const Grid grid(static_cast<int>(side), static_cast<int>(side), 2 * M_PI, 2 * M_PI);
  auto b = make_backend<Real>(kind, grid, device, 0, planning);
  Buffer<Real> r = b->real_field();
  Buffer<Complex<Real>> c = b->spectral_field();
  std::vector<Real> host(grid.size());
  for (std::size_t k = 0; k < host.size(); ++k) host[k] = Real(std::sin(0.001 * double(k)) + 0.5);
  b->from_host(host, r);
  const int inner = kind == BackendKind::Cuda ? 20 : 2;  // transforms per sample, amortising the sync
  auto pair = [&] {
    for (int q = 0; q < inner; ++q) {
      b->forward(r, c);
      b->inverse(c, r);
    }
    b->synchronize();
  };
  pair();  // warm-up (plans, caches, clocks)
  std::vector<double> samples;
  for (int k = 0; k < repeats; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    pair();
    const auto t1 = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count() / inner);
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  const double ms = samples[samples.size() / 2];
  const double points = double(side) * double(side);
  return {to_string(kind), to_string(precision_of<Real>()), side, ms, 2 * 2.5 * points * std::log2(points) / (ms * 1e6)};
}

}  // namespace

int run_fft_bench(const BenchOptions& o) {
  std::vector<Precision> precisions = o.precisions;
  if (precisions.empty()) precisions = {Precision::Single, Precision::Double};
  std::vector<BackendKind> kinds = {BackendKind::Cpu};
  const std::string why = cuda_unavailable_reason();
  if (why.empty()) kinds.push_back(BackendKind::Cuda);
  else fmt::print("cuda rows skipped: {}\n", why);

  std::vector<Row> rows;
  fmt::print("{:<6} {:<7} {:>7} {:>12} {:>10}\n", "backend", "prec", "N", "ms(fwd+inv)", "GFLOP/s");
  for (BackendKind k : kinds) {
    std::vector<long> sizes = o.sizes;
    if (sizes.empty()) sizes = k == BackendKind::Cuda ? std::vector<long>{1024, 2048, 4096, 8192, 16384}
                                                      : std::vector<long>{256, 512, 1024};
    for (Precision p : precisions)
      for (long n : sizes) {
        const Row r = p == Precision::Single ? time_pair<float>(k, n, o.repeats, o.device, o.fft_planning)
                                             : time_pair<double>(k, n, o.repeats, o.device, o.fft_planning);
        fmt::print("{:<7} {:<7} {:>7} {:>12.4f} {:>10.1f}\n", r.backend, r.precision, r.n, r.ms, r.gflops);
        std::fflush(stdout);
        rows.push_back(r);
      }
  }
  if (!o.csv.empty()) {
    std::ofstream csv(o.csv);
    if (!csv) throw InputError("--csv: cannot write '" + o.csv + "'");
    csv << "backend,precision,n,ms_forward_inverse,gflops\n";
    for (const Row& r : rows) csv << fmt::format("{},{},{},{:.6f},{:.3f}\n", r.backend, r.precision, r.n, r.ms, r.gflops);
  }
  return 0;
}

}  // namespace cascade
