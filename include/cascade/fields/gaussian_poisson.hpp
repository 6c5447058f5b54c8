//! @file The Gaussian Poisson problem (NVIDIA's spectral Poisson example, `cascade poisson`):
//!   phi = exp(-s / (2 sigma^2)),  s = (x - x0)^2 + (y - y0)^2,
//!   r = lap(phi) = exp(-s / (2 sigma^2)) (s - 2 sigma^2) / sigma^4,
//! r evaluated in Real.
#pragma once

#include <cmath>

#include "cascade/types.hpp"

namespace cascade {

template <class Real>
struct GaussianPoissonRhs {
  static constexpr bool kSpectral = false;
  Real dx, dy;
  Real sigma, x0, y0;
  CASCADE_HD Real operator()(int i, int j) const {
    const Real x = Real(i) * dx - x0;
    const Real y = Real(j) * dy - y0;
    const Real s = x * x + y * y;
    const Real s2 = sigma * sigma;
    const Real e = exp(-s / (Real(2) * s2));
    return e * (s - Real(2) * s2) / (s2 * s2);
  }
};

}  // namespace cascade
