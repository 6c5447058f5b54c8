//! @file Basdevant's evaluation as complex pairs: the full layout of a pair, the velocity packed
//! into it, the CFL speed of its products, unpacking, and the fused stage on a pair.
#pragma once

#include <cstddef>

#include "kernels/ns_stage.cuh"

namespace cascade {

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
//! In an ensemble each member's pair has its own full layout, member after member: `base` is
//! member m's first element, m ny nx.
template <class Real>
struct PackedLayout {
  int nx, ny;
  std::size_t base = 0;
  CASCADE_HD std::size_t own(int i, int j) const { return base + std::size_t(j) * std::size_t(nx) + std::size_t(i); }
  CASCADE_HD std::size_t mirror(int i, int j) const {
    return base + std::size_t(j == 0 ? 0 : ny - j) * std::size_t(nx) + std::size_t(i == 0 ? 0 : nx - i);
  }
  //! Member m's layout.
  CASCADE_HD static PackedLayout of(int nx, int ny, int m) {
    return {nx, ny, std::size_t(m) * std::size_t(ny) * std::size_t(nx)};
  }
  //! Whether the mirror of column i lies past nx/2 (its own to write), not in the half spectrum.
  CASCADE_HD bool mirrored(int i) const { return i != 0 && 2 * i != nx; }
  //! P(k) and P(-k) of the pair (u_hat, v_hat) at k.
  //! (Sums rounded on their own: the fused stage and PackedVelocity, which makes the same inputs
  //! from the state, must give the same bits: velocity_of.)
  CASCADE_HD static Complex<Real> pack(Complex<Real> u, Complex<Real> v) {
    return {rounded_add(u.re, -v.im), rounded_add(u.im, v.re)};
  }
  CASCADE_HD static Complex<Real> pack_mirror(Complex<Real> u, Complex<Real> v) {
    return {rounded_add(u.re, v.im), rounded_add(v.re, -u.im)};
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
    int i, j, m;
    s.mode(idx, i, j, m);
    const PackedLayout<Real> L = PackedLayout<Real>::of(s.nx, s.ny, m);
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
    int i, j, f;
    s.mode(idx, i, j, f);
    const PackedLayout<Real> L = PackedLayout<Real>::of(s.nx, s.ny, f);
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

  //! EachMember's hooks (ns_stage.cuh).
  CASCADE_HD int member_of(std::size_t idx) const { return stage.member_of(idx); }
  CASCADE_HD void set_linear(const LinearCoefficients& c) {
    stage.set_linear(c);
    sums.set_linear(c);
  }
  CASCADE_HD void set_step(double h, double hb, double ha) { stage.set_step(h, hb, ha); }

  CASCADE_HD SpectralSums operator()(std::size_t idx) const {
    const SpectralShape<Real>& s = stage.s;
    Complex<Real>* const P = stage.A;
    int i, j, f;
    s.mode(idx, i, j, f);
    const PackedLayout<Real> L = PackedLayout<Real>::of(s.nx, s.ny, f);
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
      const std::size_t idx2 = (std::size_t(f) * std::size_t(s.ny) + std::size_t(j2)) * std::size_t(s.nxh) + std::size_t(i);
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

}  // namespace cascade
