//! @file Per-point operations on physical fields, written once as CASCADE_HD functors.
//!
//! Each functor is called with the flat index idx = j*nx + i of one grid point (rows counted
//! from the first row of its slab, PhysicalShape::j0).
#pragma once

#include <cmath>
#include <cstddef>

#include "cascade/types.hpp"

namespace cascade {

//! Geometry of the physical grid: x_i = i dx, y_j = j dy.
template <class Real>
struct PhysicalShape {
  int nx;
  int ny;
  Real dx;
  Real dy;
  double inv_nx;  //!< 1 / nx (see SpectralShape::mode)
  int j0 = 0;     //!< the first row of a slab (cascade::Slab); 0 for a whole grid
  CASCADE_HD void point(std::size_t idx, int& i, int& j) const {
    std::size_t row = static_cast<std::size_t>(double(idx) * inv_nx);
    if (row * std::size_t(nx) > idx) --row;
    else if ((row + 1) * std::size_t(nx) <= idx) ++row;
    j = j0 + static_cast<int>(row);
    i = static_cast<int>(idx - row * std::size_t(nx));
  }
};

//! The Gaussian Poisson problem (NVIDIA's spectral Poisson example):
//!   phi = exp(-s / (2 sigma^2)),  s = (x - x0)^2 + (y - y0)^2,
//!   r = lap(phi) = exp(-s / (2 sigma^2)) (s - 2 sigma^2) / sigma^4.
//! Writes r (and phi, when `exact` is not null).
template <class Real>
struct GaussianPoissonProblem {
  PhysicalShape<Real> g;
  Real sigma;
  Real x0;
  Real y0;
  Real* rhs;
  Real* exact;

  CASCADE_HD void operator()(std::size_t idx) const {
    int i, j;
    g.point(idx, i, j);
    const Real x = Real(i) * g.dx - x0;
    const Real y = Real(j) * g.dy - y0;
    const Real s = x * x + y * y;
    const Real s2 = sigma * sigma;
    const Real e = exp(-s / (Real(2) * s2));
    rhs[idx] = e * (s - Real(2) * s2) / (s2 * s2);
    if (exact) exact[idx] = e;
  }
};

//! a += c
template <class Real>
struct AddConstant {
  Real c;
  Real* a;
  CASCADE_HD void operator()(std::size_t idx) const { a[idx] += c; }
};

}  // namespace cascade
