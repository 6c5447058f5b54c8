//! @file What the step benchmarks share (bench_step.cpp, bench_ensemble.cpp): the median, the
//! floor of a step, its transforms alone, and the copy bandwidth its memory-traffic bound is
//! taken at. Private to src/app.
#pragma once

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "cascade/backend.hpp"
#include "cascade/bench.hpp"
#include "cascade/fields.hpp"
#include "cascade/solver.hpp"
#include "cascade/step_plan.hpp"

namespace cascade::bench {

//! The deck's forcing section of `bench step --forcing` and `bench ensemble --forcing` on an N^2
//! grid: none, the ring's white noise (drawn each step) around k_f = N/8 (4 to 10), or
//! Kolmogorov's at wavenumber 4.
inline std::string forcing_section(const std::string& forcing, long n) {
  if (forcing == "ring")
    return fmt::format("forcing: {{type: ring, epsilon: 0.1, k_f: {}, dk: 1.5}}\n", std::clamp(n / 8, 4L, 10L));
  if (forcing == "kolmogorov") return "forcing: {type: kolmogorov, amplitude: 0.1, wavenumber: 4}\n";
  return "";
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

//! The transforms of a step of `stages` stages (Basdevant: 2 inverse and 2 forward a stage;
//! advective: 4 and 1) with the backend's plans, alone, in ms: one sample each of `samples`.
//! Each sample transforms fresh data (every member's field a random one): unnormalised round
//! trips grow it by nx ny each, and an inverse transform destroys its input; overflowed or NaN
//! data must not be what is timed.
template <class Real>
std::vector<double> transforms_alone(Backend<Real>& b, int stages, bool basdevant, int samples) {
  using Clock = std::chrono::steady_clock;
  Buffer<Real> r = b.real_field();
  Buffer<Complex<Real>> h = b.spectral_field();
  std::vector<double> ms;
  for (int k = 0; k < samples; ++k) {
    for (int m = 0; m < b.members(); ++m) {
      Buffer<Complex<Real>> one = b.member_view(h, m);
      b.fill_modes(McWilliamsModes<Real>{10, 1, b.grid().ny}, one);
    }
    b.synchronize();
    const auto t0 = Clock::now();
    for (int st = 0; st < stages; ++st) {
      for (int q = 0; q < (basdevant ? 2 : 4); ++q) b.inverse(h, r);
      for (int q = 0; q < (basdevant ? 2 : 1); ++q) b.forward(r, h);
    }
    b.synchronize();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return ms;
}

//! The copy bandwidth of a backend's memory: on a GPU a device-to-device copy
//! (copy_bandwidth_cuda), on the CPU std::memcpy of each OpenMP thread's share; of `bytes`, at
//! least 256 MiB, to leave the caches. Median of `repeats`.
inline CopyBandwidth copy_bandwidth(BackendKind kind, int device, std::size_t bytes, int repeats) {
  bytes = std::max(bytes, std::size_t(256) << 20);
#if defined(CASCADE_HAVE_CUDA)
  if (kind == BackendKind::Cuda) return copy_bandwidth_cuda(device, bytes, repeats);
#else
  (void)device;
#endif
  (void)kind;
  const long parts = 256;  // shares of the threads, whole parts of the buffer
  const std::size_t part = bytes / parts;
  std::vector<unsigned char> from(part * parts, 1), to(part * parts, 0);
  const auto copy = [&] {
#pragma omp parallel for schedule(static)
    for (long k = 0; k < parts; ++k) std::memcpy(to.data() + k * part, from.data() + k * part, part);
  };
  copy();  // warm-up: the threads
  std::vector<double> ms;
  for (int r = 0; r < std::max(repeats, 1); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    copy();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return {2.0 * double(part * parts) / median(ms) / 1e6,
          fmt::format("CPU: std::memcpy over {} OpenMP threads of {:.0f} MiB, median of {}", omp_get_max_threads(),
                      double(part * parts) / 1048576.0, std::max(repeats, 1))};
}

//! The bytes a step of the solver moves: its backend's plan for its grid and members, its
//! stepper's stages and registers.
template <class Real>
StepTraffic traffic_of(const Backend<Real>& b, const Solver<Real>& s, bool basdevant) {
  const Grid& g = b.grid();
  const bool two_thirds = g.dealias == Dealias::TwoThirds;
  const StepProblem problem{g.nx, g.ny, precision_of<Real>(), basdevant, two_thirds, {}, b.members()};
  return step_traffic(problem, b.step_plan(), s.table().stages(), !s.table().low_storage);
}

//! A step's memory-traffic bound in ms: its bytes (step_traffic) at the copy bandwidth; NaN
//! where the plan is not modelled.
inline double traffic_ms(const StepTraffic& t, const CopyBandwidth& copy) { return t.total() / copy.gbps / 1e6; }

}  // namespace cascade::bench
