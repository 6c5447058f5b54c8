//! @file The fields the equation is given, as values at a mode or at a point: one type each in
//! include/cascade/fields/, listed once in FieldSpec. A backend fills a buffer from any of them
//! (Backend::fill_modes, fill_points; kernels/field_fill.cuh), written once for every device:
//! forcings (include/cascade/forcing/) and initial conditions (src/physics/initial/) are made
//! of these.
//!
//! A spectral type (kSpectral) gives F at a kept mode from (i, n, kx, ky), i the column (kx =
//! kx0 i) and n the signed row wavenumber (ky = ky0 n), kx and ky in double; the modes the
//! dealiasing removes are zero. A physical type gives the value at the point (i, j) of the
//! whole grid, in double.
#pragma once

#include <variant>

#include "cascade/fields/gaussian_poisson.hpp"
#include "cascade/fields/kolmogorov.hpp"
#include "cascade/fields/mcwilliams.hpp"
#include "cascade/fields/ring.hpp"
#include "cascade/fields/taylor_green.hpp"
#include "cascade/fields/vortices.hpp"

namespace cascade {

template <class Real>
using FieldSpec = std::variant<RingModes<Real>, McWilliamsModes<Real>, TaylorGreenPoints<Real>, KolmogorovPoints<Real>,
                               VortexPoints, GaussianPoissonRhs<Real>>;

//! Whether a field is given at modes (else at points).
template <class Real>
bool spectral(const FieldSpec<Real>& f) {
  return std::visit([](const auto& spec) { return std::decay_t<decltype(spec)>::kSpectral; }, f);
}

}  // namespace cascade
