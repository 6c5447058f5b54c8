//! @file A random vorticity field with a McWilliams (1984) spectrum: |psi_hat(k)|^2 proportional
//! to [k^2 (1 + (k/k0)^4 / 3)]^-1 (the form of pyqg's McWilliams example, with the peak moved
//! to k0), so that the shell energy spectrum E(k) ~ k / (1 + (k/k0)^4 / 3) peaks at k0 and falls
//! as k^-3 beyond it. Exact amplitudes with random phases keyed by (seed, m, n), Hermitian on
//! the column kx = 0. Not normalised: the initial condition rescales it to its energy.
//! Unnormalised DFT convention.
#pragma once

#include <cmath>
#include <cstdint>

#include "cascade/fields/random_keys.hpp"

namespace cascade {

template <class Real>
struct McWilliamsModes {
  static constexpr bool kSpectral = true;
  double k0;
  std::uint64_t seed;
  int ny;

  CASCADE_HD Complex<Real> operator()(int i, int n, double kx, double ky) const {
    const double k2 = kx * kx + ky * ky;
    if (k2 <= 0) return {Real(0), Real(0)};
    const double k = sqrt(k2), x = k / k0;
    const double psi_amp = 1.0 / (k * sqrt(1.0 + x * x * x * x / 3.0));
    // On the column m = 0 the modes n and -n are conjugate: draw the phase for |n| only.
    const int an = n < 0 ? -n : n;
    double theta = 2.0 * M_PI * uniform_key(seed, std::uint64_t(i), std::uint64_t(i == 0 ? an : n + ny));
    if (i == 0 && n < 0) theta = -theta;
    const double w = k2 * psi_amp;  // omega_hat = k^2 psi_hat
    return {Real(w * cos(theta)), Real(w * sin(theta))};
  }
};

}  // namespace cascade
