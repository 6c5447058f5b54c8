//! @file The vorticity equation's terms per mode and per point (kernels/ns_ops.cuh gives the
//! equation): the dealiasing mask, the linear operator L, the velocity of a mode, the inputs and
//! products of the nonlinear term in either form, the mask applied.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "cascade/coefficients.hpp"
#include "cascade/grid.hpp"
#include "cascade/types.hpp"
#include "kernels/reduction_ops.cuh"
#include "kernels/spectral_ops.cuh"

namespace cascade {

//! Modes kept: the 2/3 rule (include/cascade/grid.hpp two_thirds_keeps) or, with dealias
//! `none`, every mode but the Nyquist row and column (they have no real-valued odd
//! derivative). k = 0 is kept here; its value is zero throughout (omega has zero mean).
template <class Real>
struct DealiasMask {
  bool two_thirds;
  CASCADE_HD bool keep(const SpectralShape<Real>& s, int i, int j) const {
    const int m = i, n = s.my(j) < 0 ? -s.my(j) : s.my(j);
    if (s.nyquist_x(i) || s.nyquist_y(j)) return false;
    return !two_thirds || (two_thirds_keeps(m, s.nx) && two_thirds_keeps(n, s.ny));
  }
};

//! The linear operator L(k) = -D(k) + i beta kx / k^2 of the deck's coefficients (coefficients.hpp
//! LinearCoefficients, held as read), evaluated in Real.
template <class Real>
struct LinearOperator {
  LinearCoefficients c;

  //! The three parts of D(k) for k^2 > 0: viscosity, friction, hypoviscosity.
  CASCADE_HD Real viscous(Real k2) const {
    return Real(c.nu) != Real(0) ? Real(c.nu) * int_power(k2, c.nu_order) : Real(0);
  }
  CASCADE_HD Real friction() const { return Real(c.mu); }
  CASCADE_HD Real hypoviscous(Real k2) const {
    return Real(c.alpha) != Real(0) ? Real(c.alpha) / int_power(k2, c.alpha_order) : Real(0);
  }
  //! D(k) for k^2 > 0.
  CASCADE_HD Real damping(Real k2) const { return friction() + viscous(k2) + hypoviscous(k2); }
  //! exp(L(k) tau): the integrating factor over a time tau, for one mode (1 at k = 0).
  CASCADE_HD Complex<Real> propagator(Real kx, Real k2, Real tau) const {
    if (k2 <= Real(0) || tau == Real(0)) return {Real(1), Real(0)};
    // Below -750 (double) or -105 (float) exp is exactly 0 in Real; saying so directly skips
    // libm's slow underflow path, which the many modes that the dealiasing and hyperviscosity
    // damp to nothing would take at every stage (on the CPU, 60% of the fused stage).
    const Real x = -damping(k2) * tau;
    const Real decay = x < Real(sizeof(Real) == sizeof(double) ? -750 : -105) ? Real(0) : Real(exp(x));
    const Real beta = Real(c.beta);
    if (beta == Real(0)) return {decay, Real(0)};
    const Real phase = beta * kx / k2 * tau;
    return {decay * Real(cos(phase)), decay * Real(sin(phase))};
  }
};

template <class Real>
CASCADE_HD inline Complex<Real> cmul(Complex<Real> a, Complex<Real> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class Real>
CASCADE_HD inline Complex<Real> caxpy(Complex<Real> y, Real a, Complex<Real> x) {
  return {y.re + a * x.re, y.im + a * x.im};
}

//! The velocity's spectra at k = (kx, ky) of the vorticity w there: u = i ky psi,
//! v = -i kx psi, psi = w / k^2 (zero at k = 0), times scale. k^2 is rounded term by term, so
//! that the fused stage (which hands the next evaluation these inputs) and velocity_inputs
//! (which makes them from the state after a restart, a diagnostic or a launch of the step on
//! the device) give the same bits.
template <class Real>
CASCADE_HD inline void velocity_of(Real kx, Real ky, Real scale, Complex<Real> w, Complex<Real>& u,
                                   Complex<Real>& v) {
  const Real k2 = rounded_add(rounded_mul(kx, kx), rounded_mul(ky, ky));
  const Real f = k2 > Real(0) ? scale / k2 : Real(0);
  const Complex<Real> psi = {w.re * f, w.im * f};
  u = {-ky * psi.im, ky * psi.re};
  v = {kx * psi.im, -kx * psi.re};
}

//! u_hat = i ky psi_hat, v_hat = -i kx psi_hat, psi_hat = omega_hat / k^2, times scale.
template <class Real>
struct VelocityFromVorticity {
  SpectralShape<Real> s;
  Real scale;
  const Complex<Real>* omega_hat;
  Complex<Real>* u_hat;
  Complex<Real>* v_hat;

  CASCADE_HD void operator()(std::size_t idx) const {
    int i, j;
    s.mode(idx, i, j);
    velocity_of(s.kx(i), s.ky(j), scale, omega_hat[idx], u_hat[idx], v_hat[idx]);
  }
};

//! The four inputs of the advective form: u_hat, v_hat, (omega_x)_hat, (omega_y)_hat, scaled.
template <class Real>
struct AdvectiveInputs {
  SpectralShape<Real> s;
  Real scale;
  const Complex<Real>* omega_hat;
  Complex<Real>* u_hat;
  Complex<Real>* v_hat;
  Complex<Real>* wx_hat;
  Complex<Real>* wy_hat;

  CASCADE_HD void operator()(std::size_t idx) const {
    VelocityFromVorticity<Real>{s, scale, omega_hat, u_hat, v_hat}(idx);
    int i, j;
    s.mode(idx, i, j);
    const Real kx = s.kx(i), ky = s.ky(j);
    const Complex<Real> w = omega_hat[idx];
    // Odd derivatives: the Nyquist modes are zero in the (dealiased) state already.
    wx_hat[idx] = {-kx * w.im * scale, kx * w.re * scale};
    wy_hat[idx] = {-ky * w.im * scale, ky * w.re * scale};
  }
};

//! Basdevant's (1983) products of the velocity at a point, their one definition (the product
//! kernel, the row kernel and the complex pairs' store callback call it): u v and v^2 - u^2.
//! With them u.grad(omega) needs two transforms instead of four (basdevant_term).
template <class Real>
CASCADE_HD inline void basdevant_products(Real u, Real v, Real& uv, Real& vv_uu) {
  uv = u * v;
  vv_uu = v * v - u * u;
}

//! The nonlinear term N = -u.grad(omega) at mode (kx, ky) from the transforms p of u v and q of
//! v^2 - u^2: N = (kx^2 - ky^2) p + kx ky q (the fused stage and the shell transfer spectra).
template <class T>
CASCADE_HD inline Complex<T> basdevant_term(T kx, T ky, Complex<T> p, Complex<T> q) {
  const T a = kx * kx - ky * ky, b = kx * ky;
  return {a * p.re + b * q.re, a * p.im + b * q.im};
}

//! Basdevant's products, in place: u <- u v, v <- v^2 - u^2. Returns the CFL speed
//! |u|/dx + |v|/dy of the point, so that the product kernel also yields the CFL maximum.
template <class Real>
struct BasdevantProducts {
  CflSpeed<Real> speed;
  Real* u;
  Real* v;
  CASCADE_HD Real operator()(std::size_t idx) const {
    const Real a = u[idx], b = v[idx];
    basdevant_products(a, b, u[idx], v[idx]);
    return speed(a, b);
  }
};

//! Advective product: wx <- -(u omega_x + v omega_y). Returns the CFL speed of the point.
template <class Real>
struct AdvectiveProduct {
  CflSpeed<Real> speed;
  const Real* u;
  const Real* v;
  Real* wx;
  const Real* wy;
  CASCADE_HD Real operator()(std::size_t idx) const {
    const Real a = u[idx], b = v[idx];
    wx[idx] = -(a * wx[idx] + b * wy[idx]);
    return speed(a, b);
  }
};

//! a_hat <- mask(a_hat) (zero the modes the 2/3 rule removes; k = 0 set to zero too).
template <class Real>
struct ApplyMask {
  SpectralShape<Real> s;
  DealiasMask<Real> mask;
  Complex<Real>* a_hat;
  CASCADE_HD void operator()(std::size_t idx) const {
    int i, j;
    s.mode(idx, i, j);
    if (!mask.keep(s, i, j) || (i == 0 && j == 0)) a_hat[idx] = {Real(0), Real(0)};
  }
};

}  // namespace cascade
