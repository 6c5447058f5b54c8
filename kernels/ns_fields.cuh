//! @file Fields the equation is given and measured by: counter-based random numbers, the shell
//! spectra of a mode, the ring forcing, Gaussian vortices, the speed at a point, the random
//! (McWilliams) and Taylor-Green initial vorticity, and Kolmogorov forcing.
#pragma once

#include <cmath>
#include <cstdint>

#include "cascade/vortex.hpp"
#include "kernels/ns_terms.cuh"

namespace cascade {

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
