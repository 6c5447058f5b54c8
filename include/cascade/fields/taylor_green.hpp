//! @file Taylor-Green vorticity: psi = A sin(m kx0 x) sin(m ky0 y), omega = m^2 (kx0^2 + ky0^2) psi.
#pragma once

#include <cmath>

#include "cascade/types.hpp"

namespace cascade {

template <class Real>
struct TaylorGreenPoints {
  static constexpr bool kSpectral = false;
  Real dx, dy;
  double kx, ky;  //!< m kx0, m ky0
  double amplitude;
  CASCADE_HD double operator()(int i, int j) const {
    const double x = double(dx) * i, y = double(dy) * j;
    return amplitude * (kx * kx + ky * ky) * sin(kx * x) * sin(ky * y);
  }
};

}  // namespace cascade
