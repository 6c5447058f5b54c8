//! @file The ring forcing's field: |F(k)| = amp |k| in the shell ||k| - k_f| < dk, so that every
//! forced mode carries the same energy |F|^2/k^2, with a phase keyed by (seed, counter, mode)
//! (Hermitian on the column kx = 0).
#pragma once

#include <cmath>
#include <cstdint>

#include "cascade/fields/random_keys.hpp"

namespace cascade {

template <class Real>
struct RingModes {
  static constexpr bool kSpectral = true;
  double k_f;
  double dk;
  double amp;
  std::uint64_t seed;
  std::uint64_t counter;  //!< the step (white noise) or 0 (steady)
  int ny;

  CASCADE_HD static bool in_ring(double k, double k_f, double dk) { return k > 0 && fabs(k - k_f) < dk; }

  //! White noise: the draw of step `step` of size h, |F| ~ 1/sqrt(h), from the field of every
  //! step (amp unscaled, counter 0). One definition for the host's step and the device's.
  CASCADE_HD RingModes at_step(std::uint64_t step, double h) const {
    RingModes r = *this;
    r.amp = amp / sqrt(h);
    r.counter = step;
    return r;
  }

  //! F at the kept mode (i, n): kx = kx0 i, ky = ky0 n.
  CASCADE_HD Complex<Real> operator()(int i, int n, double kx, double ky) const {
    const double k = sqrt(kx * kx + ky * ky);
    if (!in_ring(k, k_f, dk)) return {Real(0), Real(0)};
    const int an = n < 0 ? -n : n;
    const std::uint64_t mode = std::uint64_t(i) * 2654435761ull + std::uint64_t(i == 0 ? an : n + ny);
    double theta = 2.0 * M_PI * uniform_key(seed ^ 0xF0F0F0F0F0F0F0F0ull, counter, mode);
    if (i == 0 && n < 0) theta = -theta;
    return {Real(amp * k * cos(theta)), Real(amp * k * sin(theta))};
  }
};

}  // namespace cascade
