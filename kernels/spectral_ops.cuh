//! @file Per-mode spectral operations, written once as CASCADE_HD functors.
//!
//! Each functor is called with the flat index of one mode of a ny x (nx/2+1) half spectrum
//! (or of its slab, see SpectralShape::mode);
//! the CPU backend loops over it (OpenMP), the CUDA backend wraps it in a one-line kernel.
//! Transforms are unnormalised in both directions (FFTW/cuFFT convention), so an operation
//! that prepares a field for the inverse transform multiplies by scale = 1/(nx ny).
#pragma once

#include <cstddef>

#include "cascade/types.hpp"

namespace cascade {

//! Shape of the half spectrum and the wavenumbers of its modes (see include/cascade/grid.hpp).
template <class Real>
struct SpectralShape {
  int nx;
  int ny;
  int nxh;   //!< nx/2 + 1
  Real kx0;  //!< 2 pi / lx
  Real ky0;  //!< 2 pi / ly

  double inv_nxh;  //!< 1 / nxh: the row of a flat index without an integer division

  // A slab of a decomposed grid (cascade::Slab): the columns i0.. stored transposed,
  // idx = (i - i0) ny + j. Zero/false for a whole grid.
  int i0 = 0;
  bool transposed = false;
  double inv_ny = 0;  //!< 1 / ny: the transposed layout's column, a member's field

  //! (i, j) of flat index idx = j nxh + i (or (i - i0) ny + j in a slab; in the field of member
  //! m, idx = (m ny + j) nxh + i). A 64-bit integer
  //! division costs tens of cycles a mode; a multiplication by the reciprocal, corrected by
  //! one step either way, does not.
  CASCADE_HD void mode(std::size_t idx, int& i, int& j) const {
    if (transposed) {
      std::size_t col = static_cast<std::size_t>(double(idx) * inv_ny);
      if (col * std::size_t(ny) > idx) --col;
      else if ((col + 1) * std::size_t(ny) <= idx) ++col;
      i = i0 + static_cast<int>(col);
      j = static_cast<int>(idx - col * std::size_t(ny));
      return;
    }
    std::size_t row = static_cast<std::size_t>(double(idx) * inv_nxh);
    if (row * std::size_t(nxh) > idx) --row;
    else if ((row + 1) * std::size_t(nxh) <= idx) ++row;
    i = static_cast<int>(idx - row * std::size_t(nxh));
    // Past the first field (the members of an ensemble, the second of a batched pair): the
    // rows run on, ny a field.
    if (row >= std::size_t(ny)) row -= member_rows(row) * std::size_t(ny);
    j = static_cast<int>(row);
  }
  //! mode(), and the field (ensemble member) m of idx too.
  CASCADE_HD void mode(std::size_t idx, int& i, int& j, int& m) const {
    std::size_t row = static_cast<std::size_t>(double(idx) * inv_nxh);
    if (row * std::size_t(nxh) > idx) --row;
    else if ((row + 1) * std::size_t(nxh) <= idx) ++row;
    i = static_cast<int>(idx - row * std::size_t(nxh));
    m = 0;
    if (row >= std::size_t(ny)) {
      const std::size_t f = member_rows(row);
      m = static_cast<int>(f);
      row -= f * std::size_t(ny);
    }
    j = static_cast<int>(row);
  }
  //! The field (ensemble member) of flat index idx, where a buffer holds several one after the
  //! other (whole grids alone: cascade::Slab::members).
  CASCADE_HD int member(std::size_t idx) const {
    std::size_t row = static_cast<std::size_t>(double(idx) * inv_nxh);
    if (row * std::size_t(nxh) > idx) --row;
    else if ((row + 1) * std::size_t(nxh) <= idx) ++row;
    return row >= std::size_t(ny) ? static_cast<int>(member_rows(row)) : 0;
  }
  //! row / ny for a row of a field past the first.
  CASCADE_HD std::size_t member_rows(std::size_t row) const {
    std::size_t m = static_cast<std::size_t>(double(row) * inv_ny);
    if (m * std::size_t(ny) > row) --m;
    else if ((m + 1) * std::size_t(ny) <= row) ++m;
    return m;
  }
  CASCADE_HD int my(int j) const { return j <= ny / 2 ? j : j - ny; }
  CASCADE_HD Real kx(int i) const { return kx0 * Real(i); }
  CASCADE_HD Real ky(int j) const { return ky0 * Real(my(j)); }
  CASCADE_HD bool nyquist_x(int i) const { return 2 * i == nx; }
  CASCADE_HD bool nyquist_y(int j) const { return 2 * j == ny; }
};

//! c * i^p for integer p >= 0.
template <class Real>
CASCADE_HD inline Complex<Real> times_i_power(Complex<Real> c, int p) {
  switch (p & 3) {
    case 0: return c;
    case 1: return {-c.im, c.re};
    case 2: return {-c.re, -c.im};
    default: return {c.im, -c.re};
  }
}

template <class Real>
CASCADE_HD inline Real int_power(Real x, int p) {
  Real r = Real(1);
  for (int q = 0; q < p; ++q) r *= x;
  return r;
}

//! Poisson: lap(phi) = r  ->  phi_hat = -r_hat / k^2 * scale, with the k = 0 mode set to zero
//! (the mean of phi is fixed afterwards by the caller).
template <class Real>
struct PoissonSolve {
  SpectralShape<Real> s;
  Real scale;
  const Complex<Real>* r_hat;
  Complex<Real>* phi_hat;

  CASCADE_HD void operator()(std::size_t idx) const {
    int i, j;
    s.mode(idx, i, j);
    const Real kx = s.kx(i), ky = s.ky(j);
    const Real k2 = kx * kx + ky * ky;
    const Real f = k2 > Real(0) ? -scale / k2 : Real(0);
    const Complex<Real> r = r_hat[idx];
    phi_hat[idx] = {r.re * f, r.im * f};
  }
};

//! Spectral derivative: out_hat = (i kx)^ox (i ky)^oy in_hat * scale.
//! For an odd order the Nyquist mode of that direction is zeroed: its derivative has no
//! real-valued representation on the grid.
template <class Real>
struct Derivative {
  SpectralShape<Real> s;
  int ox;
  int oy;
  Real scale;
  const Complex<Real>* in_hat;
  Complex<Real>* out_hat;

  CASCADE_HD void operator()(std::size_t idx) const {
    int i, j;
    s.mode(idx, i, j);
    if (((ox & 1) && s.nyquist_x(i)) || ((oy & 1) && s.nyquist_y(j))) {
      out_hat[idx] = {Real(0), Real(0)};
      return;
    }
    const Real f = scale * int_power(s.kx(i), ox) * int_power(s.ky(j), oy);
    const Complex<Real> c = times_i_power(in_hat[idx], ox + oy);
    out_hat[idx] = {c.re * f, c.im * f};
  }
};

//! out_hat = a * in_hat (in place allowed).
template <class Real>
struct ScaleSpectral {
  Real a;
  const Complex<Real>* in_hat;
  Complex<Real>* out_hat;
  CASCADE_HD void operator()(std::size_t idx) const {
    const Complex<Real> c = in_hat[idx];
    out_hat[idx] = {a * c.re, a * c.im};
  }
};

}  // namespace cascade
