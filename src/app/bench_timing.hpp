//! @file What the step benchmarks share (bench_step.cpp, bench_ensemble.cpp): the median, and
//! the floor of a step, its transforms alone. Private to src/app.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

#include "cascade/backend.hpp"
#include "cascade/fields.hpp"

namespace cascade::bench {

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

}  // namespace cascade::bench
