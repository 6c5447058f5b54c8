//! @file What the equation is measured by: the shell spectra of a mode and the speeds at a point
//! (the fields it is given: include/cascade/fields.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/ns_terms.cuh"

namespace cascade {

//! One mode's contribution to the shell spectra: shell s holds |k| in [(s - 1/2) dk,
//! (s + 1/2) dk); with w = 1 on the columns kx = 0 and kx = Nyquist of the half spectrum and 2
//! elsewhere, before 1/(nx ny)^2:
//!   v[0] energy 1/2 w |omega|^2 / k^2, v[1] enstrophy 1/2 w |omega|^2,
//!   v[2] energy transfer w Re(conj(omega) N) / k^2, v[3] enstrophy transfer w Re(conj(omega) N)
//! (N: the dealiased nonlinear term, formed from the transforms of the products as in
//! FusedStage, when given; the transfers sum to zero over all shells).
struct ShellContribution {
  int bin;  //!< -1: no contribution (k = 0)
  double v[4];
};

template <class Real>
struct ShellSpectrumOfMode {
  SpectralShape<Real> s;
  DealiasMask<Real> mask;
  double dk;
  const Complex<Real>* omega_hat;
  bool advective;
  const Complex<Real>* A;  //!< transforms of the products (see FusedStage); may be null
  const Complex<Real>* B;
  CASCADE_HD ShellContribution operator()(std::size_t idx) const {
    int i, j;
    s.mode(idx, i, j);
    const double kx = double(s.kx0) * i, ky = double(s.ky0) * s.my(j), k2 = kx * kx + ky * ky;
    if (k2 <= 0) return {-1, {0.0, 0.0, 0.0, 0.0}};
    const double w = (i == 0 || s.nyquist_x(i)) ? 1.0 : 2.0;
    const Complex<Real> o = omega_hat[idx];
    const double a2 = double(o.re) * double(o.re) + double(o.im) * double(o.im);
    double t = 0;
    if (A && mask.keep(s, i, j)) {
      double nre, nim;
      if (advective) {
        nre = double(A[idx].re);
        nim = double(A[idx].im);
      } else {
        const Complex<double> n = basdevant_term(kx, ky, Complex<double>{double(A[idx].re), double(A[idx].im)},
                                                 Complex<double>{double(B[idx].re), double(B[idx].im)});
        nre = n.re;
        nim = n.im;
      }
      t = w * (double(o.re) * nre + double(o.im) * nim);
    }
    return {int(floor(sqrt(k2) / dk + 0.5)), {0.5 * w * a2 / k2, 0.5 * w * a2, t / k2, t}};
  }
};

//! |u| = sqrt(u^2 + v^2) at a point (diagnostics: max|u|).
template <class Real>
struct Speed {
  const Real* u;
  const Real* v;
  CASCADE_HD Real operator()(std::size_t idx) const {
    const Real a = u[idx], b = v[idx];
    return sqrt(a * a + b * b);
  }
};

//! The CFL speed |u|/dx + |v|/dy at a point (CflSpeed, as the step's maximum takes it;
//! diagnostics: cfl = dt * its maximum).
template <class Real>
struct CflRate {
  CflSpeed<Real> speed;
  const Real* u;
  const Real* v;
  CASCADE_HD Real operator()(std::size_t idx) const { return speed(u[idx], v[idx]); }
};

}  // namespace cascade
