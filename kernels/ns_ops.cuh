//! @file The vorticity equation's per-mode and per-point operations, written once as
//! CASCADE_HD functors and applied by both backends.
//!
//!   d(omega)/dt = L omega + N(omega) + F,   omega = -lap(psi), u = psi_y, v = -psi_x
//!   L(k) = -D(k) + i beta kx / k^2,  D(k) = nu k^(2p) + mu + alpha k^(-2q)
//!   N = -u.grad(omega), evaluated in advective form or in Basdevant's (1983) form
//!       u.grad(omega) = (dxx - dyy)(uv) + dxy(v^2 - u^2)
//! (-beta v = i beta kx psi_hat = i beta kx omega_hat / k^2 is linear and goes into L, so
//! Rossby waves are integrated exactly with the viscous decay.)
//!
//! Storage: omega_hat is the unnormalised DFT of omega (FFTW/cuFFT convention); operations
//! that feed an inverse transform take the factor scale = 1/(nx ny). The state is kept
//! dealiased: every nonlinear term and forcing passes through the mask.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "cascade/equation.hpp"
#include "cascade/types.hpp"
#include "cascade/vortex.hpp"
#include "kernels/reduction_ops.cuh"
#include "kernels/spectral_ops.cuh"

namespace cascade {

//! Modes kept: the 2/3 rule or, with dealias `none`, every mode but the Nyquist row and
//! column (they have no real-valued odd derivative). k = 0 is kept here; its value is zero
//! throughout (omega has zero mean).
//!
//! The 2/3 rule keeps |m| < nx/3 and |n| < ny/3, strictly: a product of two kept modes reaches
//! 2K and aliases to 2K - N, which must fall outside the kept band, K < N/3. Where N is a
//! multiple of 3 the mode |m| = N/3 itself would alias back onto -N/3, so it is zeroed too.
template <class Real>
struct DealiasMask {
  bool two_thirds;
  CASCADE_HD bool keep(const SpectralShape<Real>& s, int i, int j) const {
    const int m = i, n = s.my(j) < 0 ? -s.my(j) : s.my(j);
    if (s.nyquist_x(i) || s.nyquist_y(j)) return false;
    return !two_thirds || (3 * m < s.nx && 3 * n < s.ny);
  }
};

//! Coefficients of the linear operator L(k) = -D(k) + i beta kx / k^2.
template <class Real>
struct LinearOperator {
  Real nu;
  int p;
  Real mu;
  Real alpha;
  int q;
  Real beta;

  //! The three parts of D(k) for k^2 > 0: viscosity, friction, hypoviscosity.
  CASCADE_HD Real viscous(Real k2) const { return nu != Real(0) ? nu * int_power(k2, p) : Real(0); }
  CASCADE_HD Real hypoviscous(Real k2) const { return alpha != Real(0) ? alpha / int_power(k2, q) : Real(0); }
  //! D(k) for k^2 > 0.
  CASCADE_HD Real damping(Real k2) const { return mu + viscous(k2) + hypoviscous(k2); }
  //! exp(L(k) tau): the integrating factor over a time tau, for one mode (1 at k = 0).
  CASCADE_HD Complex<Real> propagator(Real kx, Real k2, Real tau) const {
    if (k2 <= Real(0) || tau == Real(0)) return {Real(1), Real(0)};
    // Below -750 (double) or -105 (float) exp is exactly 0 in Real; saying so directly skips
    // libm's slow underflow path, which the many modes that the dealiasing and hyperviscosity
    // damp to nothing would take at every stage (on the CPU, 60% of the fused stage).
    const Real x = -damping(k2) * tau;
    const Real decay = x < Real(sizeof(Real) == sizeof(double) ? -750 : -105) ? Real(0) : Real(exp(x));
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
//! v = -i kx psi, psi = w / k^2 (zero at k = 0), times scale.
template <class Real>
CASCADE_HD inline void velocity_of(Real kx, Real ky, Real scale, Complex<Real> w, Complex<Real>& u,
                                   Complex<Real>& v) {
  const Real k2 = kx * kx + ky * ky;
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

//! Basdevant's products, in place: u <- u v, v <- v^2 - u^2. Returns the CFL speed
//! |u|/dx + |v|/dy of the point, so that the product kernel also yields the CFL maximum.
template <class Real>
struct BasdevantProducts {
  CflSpeed<Real> speed;
  Real* u;
  Real* v;
  CASCADE_HD Real operator()(std::size_t idx) const {
    const Real a = u[idx], b = v[idx];
    u[idx] = a * b;
    v[idx] = b * b - a * a;
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

//! One stage of an integrating-factor Runge-Kutta step, fused with everything spectral that
//! lies between the forward transforms of one nonlinear evaluation and the inverse transforms
//! of the next (src/core/stepper.cpp derives the recursion; E(tau) = exp(L tau), h = dt):
//!
//!   K = mask[N + F],  N = (kx^2 - ky^2) A + kx ky B  (Basdevant: A, B the transforms of
//!                                                     uv and v^2 - u^2)  or  N = A (advective)
//!   S <- E(h dS) S + h b_i K                          (S: the solution accumulated to c_i)
//!   last stage:  S <- E(h d_final) S,  Y = S          (the next step starts from S)
//!   otherwise:   Y = base + h a_next E(h dK) K,  base = E(h dW) W (classic) or E(h dK) S
//!   A, B (, C, D) <- the inputs of the next evaluation: u_hat, v_hat (, omega_x, omega_y) of Y,
//!                    scaled by 1/(nx ny) for the inverse transforms.
//! The stage values are never stored: only their velocity is needed. On the first stage of a
//! classic step, W <- S (omega_n) on the way.
template <class Real>
struct FusedStage {
  SpectralShape<Real> s;
  DealiasMask<Real> mask;
  LinearOperator<Real> lin;
  Real scale;  //!< 1/(nx ny)
  bool advective;
  Real h, dS, hb;
  bool last;
  Real d_final, dW, dK, ha;
  bool save_w;  //!< first stage of a classic step: W <- S
  //! Leave the modes the dealiasing removes alone: the GPU's inverse transforms read the kept
  //! modes alone (kernels/fft_callbacks.cuh), so no zeros are needed; S is zero there already.
  bool skip_removed;
  const Complex<Real>* F;  //!< forcing, may be null
  Complex<Real>* W;        //!< classic tables; null for low storage
  Complex<Real>* S;
  Complex<Real>* A;
  Complex<Real>* B;
  Complex<Real>* C;  //!< advective form only
  Complex<Real>* D;  //!< advective form only

  CASCADE_HD void operator()(std::size_t idx) const {
    int i, j;
    s.mode(idx, i, j);
    if (!mask.keep(s, i, j)) {
      // A mode the dealiasing removes (and the Nyquist modes): the state is zero there and stays
      // zero (no nonlinear term, no forcing reaches it), so S is left as it is, and W, read only
      // at kept modes, too. The next inputs are zero there: written without reading anything
      // or evaluating the propagator, which skips most of the work for 5/9 of the modes under
      // the 2/3 rule; or, where the inverse transforms read the kept modes alone, not written.
      if (skip_removed) return;
      const Complex<Real> zero = {Real(0), Real(0)};
      A[idx] = zero;
      B[idx] = zero;
      if (advective) {
        C[idx] = zero;
        D[idx] = zero;
      }
      return;
    }
    const bool mean = i == 0 && j == 0;  // k = 0: no nonlinear term, nothing read
    const Complex<Real> zero = {Real(0), Real(0)};
    const Complex<Real> y = advance(idx, i, j, mean ? zero : A[idx], mean || advective ? zero : B[idx]);
    const Real kx = s.kx(i), ky = s.ky(j);
    velocity_of(kx, ky, scale, y, A[idx], B[idx]);  // the next evaluation's inputs
    if (advective) {
      C[idx] = {-kx * y.im * scale, kx * y.re * scale};
      D[idx] = {-ky * y.im * scale, ky * y.re * scale};
    }
  }

  //! The stage at the kept mode idx = (i, j), given the transforms of the products there
  //! (Basdevant: p, q those of u v and v^2 - u^2; advective: p that of -u.grad omega, q
  //! unused): S (and W) updated, and Y, the state the next evaluation takes, returned.
  CASCADE_HD Complex<Real> advance(std::size_t idx, int i, int j, Complex<Real> p, Complex<Real> q) const {
    const Real kx = s.kx(i), ky = s.ky(j), k2 = kx * kx + ky * ky;
    Complex<Real> k = {Real(0), Real(0)};
    if (i != 0 || j != 0) {
      if (advective) {
        k = p;
      } else {
        const Real a = kx * kx - ky * ky, b = kx * ky;
        k = {a * p.re + b * q.re, a * p.im + b * q.im};
      }
      if (F) k = caxpy(k, Real(1), F[idx]);
    }
    const Complex<Real> s_old = S[idx];
    if (save_w) W[idx] = s_old;
    // The propagators of this stage share their exponentials: E(0) = 1, a repeated tau is
    // reused and E(2 tau) = E(tau)^2 (classic RK4 needs one exp a mode a stage).
    Real cached_tau = Real(-1);
    Complex<Real> cached = {Real(1), Real(0)};
    auto prop = [&](Real tau) -> Complex<Real> {
      if (tau == Real(0)) return {Real(1), Real(0)};
      if (tau == cached_tau) return cached;
      if (cached_tau > Real(0) && tau == Real(2) * cached_tau) return cmul(cached, cached);
      cached_tau = tau;
      cached = lin.propagator(kx, k2, tau);
      return cached;
    };
    const Complex<Real> snew = caxpy(cmul(prop(h * dS), s_old), hb, k);
    if (last) {
      const Complex<Real> y = cmul(prop(h * d_final), snew);
      S[idx] = y;
      return y;
    }
    S[idx] = snew;
    const Complex<Real> ek = prop(h * dK);
    const Complex<Real> base = W ? cmul(prop(h * dW), save_w ? s_old : W[idx]) : cmul(ek, snew);
    return caxpy(base, ha, cmul(ek, k));
  }
};

//! Domain means from the half spectrum (Parseval; columns 0 and nx/2 count once, the others
//! twice), accumulated in double whatever the run's precision, before the 1/(nx ny)^2 factor:
//!   energy      E = 1/2 <|u|^2>       = 1/2 sum |w|^2 / k^2
//!   enstrophy   Z = 1/2 <omega^2>     = 1/2 sum |w|^2
//!   palinstrophy P = 1/2 <|grad w|^2> = 1/2 sum k^2 |w|^2
//!   dissipation   = sum D(k) |w|^2 / k^2         (-dE/dt from the linear damping)
//!   injection     = sum Re(conj(w) F) / k^2      (dE/dt from the forcing)
template <class Real>
struct SpectralSumsOfMode {
  SpectralShape<Real> s;
  LinearOperator<Real> lin;
  const Complex<Real>* omega_hat;
  const Complex<Real>* forcing_hat;  //!< may be null

  CASCADE_HD SpectralSums operator()(std::size_t idx) const {
    int i, j;
    s.mode(idx, i, j);
    const double kx = double(s.kx0) * i, ky = double(s.ky0) * s.my(j), k2 = kx * kx + ky * ky;
    if (k2 <= 0) return SpectralSums{};
    const double w = (i == 0 || s.nyquist_x(i)) ? 1.0 : 2.0;
    const Complex<Real> o = omega_hat[idx];
    const double a2 = double(o.re) * double(o.re) + double(o.im) * double(o.im);
    const double e = w * a2 / k2;  // twice this mode's energy
    SpectralSums r;
    r.energy = 0.5 * e;
    r.enstrophy = 0.5 * w * a2;
    r.palinstrophy = 0.5 * w * a2 * k2;
    r.diss_nu = double(lin.viscous(Real(k2))) * e;
    r.diss_mu = double(lin.mu) * e;
    r.diss_alpha = double(lin.hypoviscous(Real(k2))) * e;
    r.diss_z = double(lin.damping(Real(k2))) * w * a2;
    if (forcing_hat) {
      const Complex<Real> f = forcing_hat[idx];
      const double dot = w * (double(o.re) * double(f.re) + double(o.im) * double(f.im));
      const double f2 = w * (double(f.re) * double(f.re) + double(f.im) * double(f.im));
      r.inj = dot / k2;
      r.inj_z = dot;
      r.f2 = f2 / k2;
      r.f2_z = f2;
    }
    return r;
  }
};

//! The first fused stage of a step with the budget sums of its start state folded in: the
//! sums read S and F before the stage overwrites S, so the budget costs no pass of its own.
//! The modes the dealiasing removes add nothing (S and F are zero there): they are not read.
template <class Real>
struct FusedStageWithSums {
  FusedStage<Real> stage;
  SpectralSumsOfMode<Real> sums;

  CASCADE_HD SpectralSums operator()(std::size_t idx) const {
    int i, j;
    stage.s.mode(idx, i, j);
    const SpectralSums r = stage.mask.keep(stage.s, i, j) ? sums(idx) : SpectralSums{};
    stage(idx);
    return r;
  }
};

// ---------------------------------------------------------------- complex pairs

//! Basdevant's evaluation as complex pairs (the GPU's step where CudaExec chose them): the
//! two real fields u and v travel as one complex field z = u + i v, whose full spectrum
//! (ny x nx, no Hermitian half) is P = U + i V; one complex transform each way replaces the
//! two real ones, and the products come back the same way, as the spectrum of
//! u v + i (v^2 - u^2). A half-spectrum mode k = (i, j) sits at `own` in the full layout, and
//! -k at `mirror`; as U(-k) = conj U(k) for a real field,
//!   P(k) = U(k) + i V(k),  P(-k) = conj U(k) + i conj V(k),
//!   U(k) = (P(k) + conj P(-k)) / 2,  V(k) = (P(k) - conj P(-k)) / (2 i).
//! The columns 0 and nx/2 of the half spectrum hold -k in their own column (the mirror is
//! another mode of the half spectrum); the others hold the mirror in the columns past nx/2,
//! which no half-spectrum mode owns. So every element of the full layout is written once.
template <class Real>
struct PackedLayout {
  int nx, ny;
  CASCADE_HD std::size_t own(int i, int j) const { return std::size_t(j) * std::size_t(nx) + std::size_t(i); }
  CASCADE_HD std::size_t mirror(int i, int j) const {
    return std::size_t(j == 0 ? 0 : ny - j) * std::size_t(nx) + std::size_t(i == 0 ? 0 : nx - i);
  }
  //! Whether the mirror of column i lies past nx/2 (its own to write), not in the half spectrum.
  CASCADE_HD bool mirrored(int i) const { return i != 0 && 2 * i != nx; }
  //! P(k) and P(-k) of the pair (u_hat, v_hat) at k.
  CASCADE_HD static Complex<Real> pack(Complex<Real> u, Complex<Real> v) { return {u.re - v.im, u.im + v.re}; }
  CASCADE_HD static Complex<Real> pack_mirror(Complex<Real> u, Complex<Real> v) {
    return {u.re + v.im, v.re - u.im};
  }
  //! U(k) and V(k) from p = P(k) and m = P(-k).
  CASCADE_HD static Complex<Real> first(Complex<Real> p, Complex<Real> m) {
    return {Real(0.5) * (p.re + m.re), Real(0.5) * (p.im - m.im)};
  }
  CASCADE_HD static Complex<Real> second(Complex<Real> p, Complex<Real> m) {
    return {Real(0.5) * (p.im + m.im), Real(0.5) * (m.re - p.re)};
  }
};

//! The inputs of an evaluation as a complex pair: P = U + i V of the velocity of omega_hat,
//! scaled by `scale` (VelocityFromVorticity's), into the full layout.
template <class Real>
struct PackedVelocity {
  SpectralShape<Real> s;
  Real scale;
  const Complex<Real>* omega_hat;
  Complex<Real>* P;
  CASCADE_HD void operator()(std::size_t idx) const {
    int i, j;
    s.mode(idx, i, j);
    const PackedLayout<Real> L{s.nx, s.ny};
    Complex<Real> u, v;
    velocity_of(s.kx(i), s.ky(j), scale, omega_hat[idx], u, v);
    P[L.own(i, j)] = L.pack(u, v);
    if (L.mirrored(i)) P[L.mirror(i, j)] = L.pack_mirror(u, v);
  }
};

//! The CFL speed |u|/dx + |v|/dy of a point of a complex pair that holds Basdevant's products
//! w = u v + i (v^2 - u^2) (the inverse transform stored them in place of u + i v): as
//! (v^2 - u^2)^2 + (2 u v)^2 = (u^2 + v^2)^2, r = |(v^2 - u^2, 2 u v)| is u^2 + v^2, and the
//! larger of u^2 = (r - q) / 2, v^2 = (r + q) / 2 comes without cancellation, the other's
//! modulus as |u v| over the larger's. A read-only pass: the maximum costs half the traffic of a product kernel.
//! NaN stays NaN (the CFL maximum then reports the blow-up).
template <class Real>
struct PackedProductsSpeed {
  CflSpeed<Real> speed;
  const Complex<Real>* w;
  CASCADE_HD Real operator()(std::size_t idx) const {
    const Complex<Real> x = w[idx];
    const Real p = x.re, q = x.im;
    using std::hypot;
    using std::sqrt;
    const Real r = hypot(q, Real(2) * p), ap = p < Real(0) ? -p : p;
    Real a, b;  // |u|, |v|
    if (q >= Real(0)) {
      b = sqrt(Real(0.5) * (r + q));
      a = b > Real(0) ? ap / b : Real(0);
    } else {
      a = sqrt(Real(0.5) * (r - q));
      b = a > Real(0) ? ap / a : Real(0);
    }
    return speed(a, b);
  }
};

//! dst <- src, n complex numbers (natural_products' copy of a pair's full layout).
template <class Real>
struct CopyComplex {
  const Complex<Real>* src;
  Complex<Real>* dst;
  CASCADE_HD void operator()(std::size_t idx) const { dst[idx] = src[idx]; }
};

//! The products' transforms of a complex pair (in `P`, the full layout, left as it is) as the
//! two half spectra a <- (u v)_hat, b <- (v^2 - u^2)_hat (shell_spectra reads them so).
template <class Real>
struct UnpackPair {
  SpectralShape<Real> s;
  const Complex<Real>* P;
  Complex<Real>* a;
  Complex<Real>* b;
  CASCADE_HD void operator()(std::size_t idx) const {
    int i, j;
    s.mode(idx, i, j);
    const PackedLayout<Real> L{s.nx, s.ny};
    const Complex<Real> p = P[L.own(i, j)], m = P[L.mirror(i, j)];
    a[idx] = L.first(p, m);
    b[idx] = L.second(p, m);
  }
};

//! FusedStage (Basdevant's form) on a complex pair: the products' transforms read from the
//! full layout in stage.A (P(k) and P(-k) give those of u v and v^2 - u^2 at k), the next
//! evaluation's inputs written there as a pair, in place. A mode and its mirror are read and
//! written by one thread: in the columns 0 and nx/2, where the mirror is another mode of the
//! half spectrum, the mode with j < ny/2 does both (the other returns at once), so no thread
//! reads what another has written. With `sums`, the budget sums of the modes it did are
//! returned (FusedStageWithSums); without, zero.
template <class Real>
struct PackedStage {
  FusedStage<Real> stage;
  SpectralSumsOfMode<Real> sums;
  bool with_sums;

  CASCADE_HD SpectralSums operator()(std::size_t idx) const {
    const SpectralShape<Real>& s = stage.s;
    const PackedLayout<Real> L{s.nx, s.ny};
    Complex<Real>* const P = stage.A;
    int i, j;
    s.mode(idx, i, j);
    const std::size_t own = L.own(i, j), mirror = L.mirror(i, j);
    if (!stage.mask.keep(s, i, j)) {  // zero inputs, as FusedStage writes them (nothing read)
      if (stage.skip_removed) return SpectralSums{};  // the inverse loads the kept modes alone
      const Complex<Real> zero = {Real(0), Real(0)};
      P[own] = zero;
      if (L.mirrored(i)) P[mirror] = zero;
      return SpectralSums{};
    }
    const bool paired_column = !L.mirrored(i) && j != 0;  // the mirror is the half spectrum's (i, ny - j)
    if (paired_column && 2 * j > s.ny) return SpectralSums{};  // (i, ny - j) does this one
    const Complex<Real> p = P[own], m = P[mirror];
    SpectralSums r{};
    if (with_sums) r = sums(idx);
    const Complex<Real> y = mode(idx, i, j, p, m);
    if (paired_column) {  // the mirror mode (i, ny - j): its own P(k) is our P(-k)
      const int j2 = s.ny - j;
      const std::size_t idx2 = std::size_t(j2) * std::size_t(s.nxh) + std::size_t(i);
      if (with_sums) r = r + sums(idx2);
      const Complex<Real> y2 = mode(idx2, i, j2, m, p);
      P[mirror] = inputs(i, j2, y2, false);
    }
    P[own] = inputs(i, j, y, false);
    if (L.mirrored(i)) P[mirror] = inputs(i, j, y, true);
    return r;
  }
  //! The stage at the kept mode (i, j), from P(k) = p and P(-k) = m.
  CASCADE_HD Complex<Real> mode(std::size_t idx, int i, int j, Complex<Real> p, Complex<Real> m) const {
    const bool mean = i == 0 && j == 0;
    const Complex<Real> zero = {Real(0), Real(0)};
    return stage.advance(idx, i, j, mean ? zero : PackedLayout<Real>::first(p, m),
                         mean ? zero : PackedLayout<Real>::second(p, m));
  }
  //! P(k) (or, with `mirror`, P(-k)) of the velocity of y at k = (i, j), scaled as FusedStage's.
  CASCADE_HD Complex<Real> inputs(int i, int j, Complex<Real> y, bool mirror) const {
    Complex<Real> u, v;
    velocity_of(stage.s.kx(i), stage.s.ky(j), stage.scale, y, u, v);
    return mirror ? PackedLayout<Real>::pack_mirror(u, v) : PackedLayout<Real>::pack(u, v);
  }
};

// ---------------------------------------------------------------- counter-based random numbers

//! SplitMix64's finaliser: a bijective 64-bit mix, so that (seed, stream, counter) keys give
//! independent-looking uniforms on any device without state (Steele et al. 2014).
CASCADE_HD inline std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

//! A uniform number in [0, 1) (53 random bits) keyed by (seed, a, b).
CASCADE_HD inline double uniform_key(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  const std::uint64_t z = mix64(mix64(mix64(seed) ^ a) ^ (b * 0xD1B54A32D192ED03ull));
  return double(z >> 11) * (1.0 / 9007199254740992.0);
}

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
        const double a = kx * kx - ky * ky, b = kx * ky;
        nre = a * double(A[idx].re) + b * double(B[idx].re);
        nim = a * double(A[idx].im) + b * double(B[idx].im);
      }
      t = w * (double(o.re) * nre + double(o.im) * nim);
    }
    return {int(floor(sqrt(k2) / dk + 0.5)), {0.5 * w * a2 / k2, 0.5 * w * a2, t / k2, t}};
  }
};

//! Stochastic (or steady) forcing in the shell |k| - k_f| < dk: |F(k)| = amp |k|, so that every
//! forced mode carries the same energy |F|^2/k^2, with a phase keyed by (seed, counter, mode)
//! (Hermitian on the column kx = 0). The ring is cut to the modes the dealiasing keeps.
template <class Real>
struct RingForcing {
  SpectralShape<Real> s;
  DealiasMask<Real> mask;
  double k_f;
  double dk;
  double amp;
  std::uint64_t seed;
  std::uint64_t counter;  //!< the step (ring) or 0 (ring-steady)
  Complex<Real>* f_hat;

  CASCADE_HD static bool in_ring(double k, double k_f, double dk) { return k > 0 && fabs(k - k_f) < dk; }

  CASCADE_HD void operator()(std::size_t idx) const {
    int i, j;
    s.mode(idx, i, j);
    const int n = s.my(j);
    const double kx = double(s.kx0) * i, ky = double(s.ky0) * n, k = sqrt(kx * kx + ky * ky);
    if (!in_ring(k, k_f, dk) || !mask.keep(s, i, j)) {
      f_hat[idx] = {Real(0), Real(0)};
      return;
    }
    const int an = n < 0 ? -n : n;
    const std::uint64_t mode = std::uint64_t(i) * 2654435761ull + std::uint64_t(i == 0 ? an : n + s.ny);
    double theta = 2.0 * M_PI * uniform_key(seed ^ 0xF0F0F0F0F0F0F0F0ull, counter, mode);
    if (i == 0 && n < 0) theta = -theta;
    f_hat[idx] = {Real(amp * k * cos(theta)), Real(amp * k * sin(theta))};
  }
};

//! Vortices with Gaussian vorticity (include/cascade/vortex.hpp), summed over the nearest
//! periodic images: omega = sum_v Gamma_v / (2 pi s_v^2) exp(-r^2 / (2 s_v^2)), with
//! s = radius (gaussian) or radius / sqrt(2) (lamb-oseen: Gamma/(pi a^2) exp(-r^2/a^2)).

//! Up to kVortexBatch vortices a launch (the list travels by value in the kernel's arguments).
constexpr int kVortexBatch = 32;

template <class Real>
struct VortexField {
  int nx;
  double dx, dy, lx, ly;
  VortexSpec v[kVortexBatch];
  int count;
  bool accumulate;  //!< add to omega (later batches) instead of overwriting it
  Real* omega;
  int j0 = 0;  //!< first row of the slab (cascade::Slab)
  CASCADE_HD void operator()(std::size_t idx) const {
    const int r = int(idx / nx), i = int(idx - std::size_t(r) * nx);
    const double x = dx * i, y = dy * (j0 + r);
    double w = accumulate ? double(omega[idx]) : 0.0;
    for (int k = 0; k < count; ++k) {
      const VortexSpec& p = v[k];
      const double norm = p.circulation / (2 * M_PI * p.s * p.s);
      for (int a = -1; a <= 1; ++a)
        for (int b = -1; b <= 1; ++b) {
          const double ddx = x - p.x + a * lx, ddy = y - p.y + b * ly;
          w += norm * exp(-(ddx * ddx + ddy * ddy) / (2 * p.s * p.s));
        }
    }
    omega[idx] = Real(w);
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

//! A random vorticity field with a McWilliams (1984) spectrum: |psi_hat(k)|^2 proportional to
//! [k^2 (1 + (k/k0)^4 / 3)]^-1 (the form of pyqg's McWilliams example, with the peak moved to
//! k0), so that the shell energy spectrum E(k) ~ k / (1 + (k/k0)^4 / 3) peaks at k0 and falls
//! as k^-3 beyond it. Exact
//! amplitudes with random phases keyed by (seed, m, n), Hermitian on the column kx = 0. Not
//! yet normalised: the caller rescales to the requested energy. Unnormalised DFT convention.
template <class Real>
struct RandomVorticity {
  SpectralShape<Real> s;
  DealiasMask<Real> mask;
  double k0;
  std::uint64_t seed;
  Complex<Real>* omega_hat;

  CASCADE_HD void operator()(std::size_t idx) const {
    int i, j;
    s.mode(idx, i, j);
    const int n = s.my(j);
    const double kx = double(s.kx0) * i, ky = double(s.ky0) * n, k2 = kx * kx + ky * ky;
    if (k2 <= 0 || !mask.keep(s, i, j)) {
      omega_hat[idx] = {Real(0), Real(0)};
      return;
    }
    const double k = sqrt(k2), x = k / k0;
    const double psi_amp = 1.0 / (k * sqrt(1.0 + x * x * x * x / 3.0));
    // On the column m = 0 the modes n and -n are conjugate: draw the phase for |n| only.
    const int an = n < 0 ? -n : n;
    double theta = 2.0 * M_PI * uniform_key(seed, std::uint64_t(i), std::uint64_t(i == 0 ? an : n + s.ny));
    if (i == 0 && n < 0) theta = -theta;
    const double w = k2 * psi_amp;  // omega_hat = k^2 psi_hat
    omega_hat[idx] = {Real(w * cos(theta)), Real(w * sin(theta))};
  }
};

//! Taylor-Green vorticity: psi = A sin(m kx0 x) sin(m ky0 y), omega = (m^2)(kx0^2 + ky0^2) psi.
template <class Real>
struct TaylorGreenVorticity {
  int nx;
  Real dx, dy;
  double kx, ky;  //!< m kx0, m ky0
  double amplitude;
  Real* omega;
  int j0 = 0;  //!< first row of the slab (cascade::Slab)
  CASCADE_HD void operator()(std::size_t idx) const {
    const int r = int(idx / nx), i = int(idx - std::size_t(r) * nx);
    const double x = double(dx) * i, y = double(dy) * (j0 + r);
    omega[idx] = Real(amplitude * (kx * kx + ky * ky) * sin(kx * x) * sin(ky * y));
  }
};

//! Kolmogorov forcing of the vorticity: the body force chi sin(k_f y) in x gives
//! f_omega = -chi k_f cos(k_f y).
template <class Real>
struct KolmogorovVorticityForcing {
  int nx;
  Real dy;
  double chi, kf;
  Real* f;
  int j0 = 0;  //!< first row of the slab (cascade::Slab)
  CASCADE_HD void operator()(std::size_t idx) const {
    const int j = j0 + int(idx / nx);
    f[idx] = Real(-chi * kf * cos(kf * double(dy) * j));
  }
};

}  // namespace cascade
