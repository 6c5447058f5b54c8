//! @file One stage of the integrating-factor Runge-Kutta step fused with the spectral work
//! between two evaluations (FusedStage), the budget sums of a mode, and the two together.
#pragma once

#include <type_traits>
#include <utility>

#include "cascade/step_clock.hpp"
#include "kernels/ns_terms.cuh"

namespace cascade {

//! A condition the device's compiler may take as true (a promise, not a test); nothing on the host.
#if defined(__CUDA_ARCH__)
#define CASCADE_ASSUME(c) __builtin_assume(c)
#else
#define CASCADE_ASSUME(c) ((void)0)
#endif

//! The shape of a stage (FusedStage): the decisions its arithmetic takes at every mode alike,
//! which a kernel compiled for the shape takes as constants (StageOfColumns::with_shape). Its
//! propagators E(h dS), E(h d_next) and E(h dW) as FusedStage::each_propagator computes them
//! (E(0) = 1, a repeated time's reused, a doubled one's squared): 1, the mode's first
//! exponential X, its square, or a second one Y; the times X and Y are over; what it does with
//! the classic tables' W; whether it is the last.
enum class Factor : unsigned char { One, X, X2, Y };
//! A stage's times: h dS; h d_final on the last stage, else h dK; h dW.
enum class StageTime : unsigned char { S, Next, W };
//! What a stage does with W: nothing (low storage, and the last stage), saves S there (the first
//! stage of classic tables) or reads it.
enum class Tables : unsigned char { None, Save, Read };
struct StageShape {
  Factor s, next, w;
  StageTime x, y;  //!< y = x where there is no Y
  Tables tables;
  bool last;
  CASCADE_HD constexpr bool uses(Factor f) const { return s == f || next == f || w == f; }
  CASCADE_HD constexpr bool operator==(const StageShape& o) const {
    return s == o.s && next == o.next && w == o.w && x == o.x && y == o.y && tables == o.tables && last == o.last;
  }
};
//! The shapes the column kernels are compiled for: the stages of rk4 and rk3 (src/core/stepper.cpp).
//! StageOfColumns::shape is an index here plus one (0: none of them).
inline constexpr StageShape kStageShapes[] = {
    // rk4, c = (0, 1/2, 1/2, 1), classic tables
    {Factor::One, Factor::X, Factor::X, StageTime::Next, StageTime::Next, Tables::Save, false},
    {Factor::X, Factor::One, Factor::X, StageTime::S, StageTime::S, Tables::Read, false},
    {Factor::One, Factor::X, Factor::X2, StageTime::Next, StageTime::Next, Tables::Read, false},
    {Factor::X, Factor::One, Factor::One, StageTime::S, StageTime::S, Tables::None, true},
    // rk3 (Wray), c = (0, 8/15, 2/3), low storage
    {Factor::One, Factor::X, Factor::One, StageTime::Next, StageTime::Next, Tables::None, false},
    {Factor::X, Factor::Y, Factor::One, StageTime::S, StageTime::Next, Tables::None, false},
    {Factor::X, Factor::Y, Factor::One, StageTime::S, StageTime::Next, Tables::None, true},
};
inline constexpr int kStageShapeCount = int(sizeof(kStageShapes) / sizeof(kStageShapes[0]));

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

  //! EachMember's hooks: the member of a mode, and that member's operator in place of lin.
  CASCADE_HD int member_of(std::size_t idx) const { return s.member(idx); }
  CASCADE_HD void set_linear(const LinearCoefficients& c) { lin = LinearOperator<Real>{c}; }
  //! Clocked's hook: the numbers of this stage that depend on h, as the host converts them.
  CASCADE_HD void set_step(double h_, double hb_, double ha_) {
    h = Real(h_);
    hb = Real(hb_);
    ha = Real(ha_);
  }

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
    if (!advective) return kept_mode(idx, i, j, mean ? zero : A[idx], mean ? zero : B[idx], A[idx], B[idx]);
    const Complex<Real> y = advance(idx, i, j, mean ? zero : A[idx], zero);
    const Real kx = s.kx(i), ky = s.ky(j);
    velocity_of(kx, ky, scale, y, A[idx], B[idx]);  // the next evaluation's inputs
    C[idx] = {-kx * y.im * scale, kx * y.re * scale};
    D[idx] = {-ky * y.im * scale, ky * y.re * scale};
  }

  //! What the stage reads at a kept mode: S, the forcing (where there is one, but at k = 0)
  //! and W (classic tables, but on the stage that saves it and on the last); zero where not read.
  struct Reads {
    Complex<Real> s, f, w;
  };
  CASCADE_HD Reads reads(std::size_t idx, int i, int j) const {
    Reads r{};
    r.s = S[idx];
    if (F && (i != 0 || j != 0)) r.f = F[idx];
    if (W && !save_w && !last) r.w = W[idx];
    return r;
  }
  //! In place of Reads: each value read from memory where advance() uses it, after the term
  //! (a thread a mode, nothing to overlap). Read first (6cee1b9), complex pairs' stage kernel
  //! spilled more (ptxas, sm_90, double: 88 bytes stored where 52) and 32768^2 rk3 took 3.3%
  //! longer a step (H100, 2026-12-06, one call: 329.2-329.4 ms at 48be9c2 and 5ea2e43, 340.4
  //! at 6cee1b9; the commits between touch the row and column kernels alone).
  struct ReadAtUse {};

  //! Which of a stage's propagators advance() asks for: E(h dS); E(h d_final) (the last
  //! stage); E(h dK); E(h dW) (classic tables).
  enum class Which { S, Final, K, W };
  //! A stage's propagators at a mode, computed before its arithmetic (propagators()): E(h dS);
  //! E(h d_final) on the last stage, else E(h dK); E(h dW) where the stage takes W (classic
  //! tables, not on the last stage), else 1. They depend on the mode alone, not on what is read
  //! there, so that a loop over modes can have them computed while the mode's reads are on their
  //! way (StageOfColumns::ahead). As advance() asks for them: (tau, which).
  struct Propagators {
    Complex<Real> s, next, w;
    CASCADE_HD Complex<Real> operator()(Real, Which which) const {
      return which == Which::S ? s : which == Which::W ? w : next;
    }
  };
  CASCADE_HD Propagators propagators(Real kx, Real k2) const {
    Propagators e;
    each_propagator(kx, k2, [&](auto&& prop) {
      e.s = prop(h * dS, Which::S);
      e.next = last ? prop(h * d_final, Which::Final) : prop(h * dK, Which::K);
      e.w = !last && W ? prop(h * dW, Which::W) : Complex<Real>{Real(1), Real(0)};
    });
    return e;
  }
  //! The shape of this stage (StageShape), as each_propagator's tests of the times decide at
  //! every mode: kStageShapes' index plus one, 0 where it is none of them (or advective).
  CASCADE_HD int shape() const {
    if (advective) return 0;
    StageShape r{Factor::One, Factor::One, Factor::One, StageTime::S, StageTime::S, Tables::None, last};
    Real cached = Real(-1);
    int made = 0;  // exponentials computed: X, then Y
    bool known = true;
    // As each_propagator: the times are h d, h > 0, so that they compare as the d do.
    const auto slot = [&](Real d, StageTime t) {
      if (d == Real(0)) return Factor::One;
      if (d == cached) return made == 1 ? Factor::X : Factor::Y;
      if (cached > Real(0) && d == Real(2) * cached) {
        known = known && made == 1;
        return Factor::X2;
      }
      cached = d;
      if (made == 0) r.x = r.y = t;
      else r.y = t;
      known = known && made < 2;
      return ++made == 1 ? Factor::X : Factor::Y;
    };
    r.s = slot(dS, StageTime::S);
    r.next = last ? slot(d_final, StageTime::Next) : slot(dK, StageTime::Next);
    if (!last && W) r.w = slot(dW, StageTime::W);
    r.tables = last || !W ? Tables::None : save_w ? Tables::Save : Tables::Read;
    if (!known) return 0;
    for (int k = 0; k < kStageShapeCount; ++k)
      if (kStageShapes[k] == r) return k + 1;
    return 0;
  }
  //! This stage with the decisions of shape K (kStageShapes[K - 1]; shape() == K) as constants,
  //! so that a kernel compiled for it has them folded: no tests of the times, of W, of the last
  //! stage at each mode.
  template <int K>
  CASCADE_HD FusedStage shaped() const {
    constexpr StageShape sh = kStageShapes[K - 1];
    FusedStage r = *this;
    r.advective = false;
    r.last = sh.last;
    r.save_w = sh.tables == Tables::Save;
    if constexpr (sh.tables != Tables::None) CASCADE_ASSUME(r.W != nullptr);
    else if constexpr (!sh.last) r.W = nullptr;  // the last stage does not touch W
    return r;
  }
  //! propagators() of a stage of shape K: the same values, its 1s and squares without the
  //! tests of the times.
  template <int K>
  CASCADE_HD Propagators shaped_propagators(Real kx, Real k2) const {
    constexpr StageShape sh = kStageShapes[K - 1];
    const Complex<Real> one{Real(1), Real(0)};
    Complex<Real> x = one, y = one;
    if constexpr (sh.uses(Factor::X) || sh.uses(Factor::X2)) x = lin.propagator(kx, k2, time_of(sh.x));
    if constexpr (sh.uses(Factor::Y)) y = lin.propagator(kx, k2, time_of(sh.y));
    const auto of = [&](Factor f) { return f == Factor::One ? one : f == Factor::X ? x : f == Factor::X2 ? cmul(x, x) : y; };
    return {of(sh.s), of(sh.next), of(sh.w)};
  }
  //! kx, ky and k2 of mode (i, j), as advance() and propagators() take them.
  CASCADE_HD void wavenumbers(int i, int j, Real& kx, Real& ky, Real& k2) const {
    kx = s.kx(i);
    ky = s.ky(j);
    k2 = kx * kx + ky * ky;
  }

  //! Basdevant's stage at the kept mode idx = (i, j), given the transforms p of u v and q of
  //! v^2 - u^2 there (taken as zero at k = 0): S (and W) updated, and u, v <- the next
  //! evaluation's inputs there. Here (operator()) and over a tile of columns
  //! (StageOfColumns, kernels/column_fft.cuh).
  CASCADE_HD void kept_mode(std::size_t idx, int i, int j, Complex<Real> p, Complex<Real> q, Complex<Real>& u,
                            Complex<Real>& v) const {
    kept_mode(idx, i, j, p, q, u, v, ReadAtUse{});
  }
  template <class In>
  CASCADE_HD void kept_mode(std::size_t idx, int i, int j, Complex<Real> p, Complex<Real> q, Complex<Real>& u,
                            Complex<Real>& v, const In& in) const {
    const Complex<Real> y = advance(idx, i, j, p, q, in);
    velocity_of(s.kx(i), s.ky(j), scale, y, u, v);
  }
  //! kept_mode() with the mode's propagators computed already (`e`: propagators(kx, k2)).
  CASCADE_HD void kept_mode(std::size_t idx, int i, int j, Complex<Real> p, Complex<Real> q, Complex<Real>& u,
                            Complex<Real>& v, const Reads& in, const Propagators& e) const {
    const Complex<Real> y = advance(idx, i, j, p, q, in, e);
    velocity_of(s.kx(i), s.ky(j), scale, y, u, v);
  }

  //! The stage at the kept mode idx = (i, j), given the transforms of the products there
  //! (Basdevant: p, q those of u v and v^2 - u^2; advective: p that of -u.grad omega, q
  //! unused): S (and W) updated, and Y, the state the next evaluation takes, returned.
  CASCADE_HD Complex<Real> advance(std::size_t idx, int i, int j, Complex<Real> p, Complex<Real> q) const {
    return advance(idx, i, j, p, q, ReadAtUse{});
  }
  //! advance() with what it reads at the mode read already (`in`: reads(idx, i, j)), so that a
  //! loop over modes can ask memory for the next mode's while it computes this one's; or
  //! ReadAtUse.
  template <class In>
  CASCADE_HD Complex<Real> advance(std::size_t idx, int i, int j, Complex<Real> p, Complex<Real> q,
                                   const In& in) const {
    Real kx, ky, k2;
    wavenumbers(i, j, kx, ky, k2);
    Complex<Real> y;
    each_propagator(kx, k2, [&](auto&& prop) { y = advance_with(idx, i, j, p, q, in, prop); });
    return y;
  }
  //! advance() with the mode's propagators computed already (`e`: propagators(kx, k2)).
  CASCADE_HD Complex<Real> advance(std::size_t idx, int i, int j, Complex<Real> p, Complex<Real> q,
                                   const Reads& in, const Propagators& e) const {
    return advance_with(idx, i, j, p, q, in, e);
  }

 private:
  CASCADE_HD Real time_of(StageTime t) const {
    return t == StageTime::S ? h * dS : t == StageTime::W ? h * dW : last ? h * d_final : h * dK;
  }
  //! f(prop), prop(tau, which) a stage's propagator over a time tau at the mode of wavenumbers
  //! kx and k2, computed as asked. The propagators of a stage share their exponentials: E(0) = 1,
  //! a repeated tau is reused and E(2 tau) = E(tau)^2 (classic RK4 needs one exp a mode a stage).
  template <class F>
  CASCADE_HD void each_propagator(Real kx, Real k2, const F& f) const {
    Real cached_tau = Real(-1);
    Complex<Real> cached = {Real(1), Real(0)};
    auto prop = [&](Real tau, Which) -> Complex<Real> {
      if (tau == Real(0)) return {Real(1), Real(0)};
      if (tau == cached_tau) return cached;
      if (cached_tau > Real(0) && tau == Real(2) * cached_tau) return cmul(cached, cached);
      cached_tau = tau;
      cached = lin.propagator(kx, k2, tau);
      return cached;
    };
    f(prop);
  }
  //! What advance_with() reads at mode idx: from `in` (Reads) or from memory there (ReadAtUse).
  CASCADE_HD Complex<Real> s_of(const Reads& in, std::size_t) const { return in.s; }
  CASCADE_HD Complex<Real> s_of(ReadAtUse, std::size_t idx) const { return S[idx]; }
  CASCADE_HD Complex<Real> f_of(const Reads& in, std::size_t) const { return in.f; }
  CASCADE_HD Complex<Real> f_of(ReadAtUse, std::size_t idx) const { return F[idx]; }
  CASCADE_HD Complex<Real> w_of(const Reads& in, std::size_t) const { return in.w; }
  CASCADE_HD Complex<Real> w_of(ReadAtUse, std::size_t idx) const { return W[idx]; }
  //! advance(), its propagators from prop(tau, which) (each_propagator's, or Propagators).
  template <class In, class Prop>
  CASCADE_HD Complex<Real> advance_with(std::size_t idx, int i, int j, Complex<Real> p, Complex<Real> q,
                                        const In& in, Prop& prop) const {
    const Real kx = s.kx(i), ky = s.ky(j);
    Complex<Real> k = {Real(0), Real(0)};
    if (i != 0 || j != 0) {
      if (advective) {
        k = p;
      } else {
        k = basdevant_term(kx, ky, p, q);
      }
      if (F) k = caxpy(k, Real(1), f_of(in, idx));
    }
    const Complex<Real> s_old = s_of(in, idx);
    if (save_w) W[idx] = s_old;
    const Complex<Real> snew = caxpy(cmul(prop(h * dS, Which::S), s_old), hb, k);
    if (last) {
      const Complex<Real> y = cmul(prop(h * d_final, Which::Final), snew);
      S[idx] = y;
      return y;
    }
    S[idx] = snew;
    const Complex<Real> ek = prop(h * dK, Which::K);
    const Complex<Real> base = W ? cmul(prop(h * dW, Which::W), save_w ? s_old : w_of(in, idx)) : cmul(ek, snew);
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

  CASCADE_HD int member_of(std::size_t idx) const { return s.member(idx); }
  CASCADE_HD void set_linear(const LinearCoefficients& c) { lin = LinearOperator<Real>{c}; }

  CASCADE_HD SpectralSums operator()(std::size_t idx) const {
    int i, j;
    s.mode(idx, i, j);
    return at(i, j, idx);
  }
  //! The sums of mode (i, j), at index idx of omega_hat (and forcing_hat).
  CASCADE_HD SpectralSums at(int i, int j, std::size_t idx) const {
    const Complex<Real> zero = {Real(0), Real(0)};
    return of(i, j, omega_hat[idx], forcing_hat ? forcing_hat[idx] : zero);
  }
  //! at(i, j, idx) where `mask` keeps the mode; nothing where it removes it (S and F are zero
  //! there: not read).
  CASCADE_HD SpectralSums kept(const DealiasMask<Real>& mask, int i, int j, std::size_t idx) const {
    return mask.keep(s, i, j) ? at(i, j, idx) : SpectralSums{};
  }
  //! The sums of mode (i, j), given omega_hat there (o) and forcing_hat (f; read only where
  //! forcing_hat is not null).
  CASCADE_HD SpectralSums of(int i, int j, Complex<Real> o, Complex<Real> f) const {
    const double kx = double(s.kx0) * i, ky = double(s.ky0) * s.my(j), k2 = kx * kx + ky * ky;
    if (k2 <= 0) return SpectralSums{};
    const double w = (i == 0 || s.nyquist_x(i)) ? 1.0 : 2.0;
    const double a2 = double(o.re) * double(o.re) + double(o.im) * double(o.im);
    const double e = w * a2 / k2;  // twice this mode's energy
    SpectralSums r;
    r.energy = 0.5 * e;
    r.enstrophy = 0.5 * w * a2;
    r.palinstrophy = 0.5 * w * a2 * k2;
    const Real nu = lin.viscous(Real(k2)), alpha = lin.hypoviscous(Real(k2));
    r.diss_nu = double(nu) * e;
    r.diss_mu = double(lin.friction()) * e;
    r.diss_alpha = double(alpha) * e;
    r.diss_z = double(lin.friction() + nu + alpha) * w * a2;  // lin.damping(k2), its parts computed once
    if (forcing_hat) {
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

  CASCADE_HD int member_of(std::size_t idx) const { return stage.member_of(idx); }
  CASCADE_HD void set_linear(const LinearCoefficients& c) {
    stage.set_linear(c);
    sums.set_linear(c);
  }
  CASCADE_HD void set_step(double h, double hb, double ha) { stage.set_step(h, hb, ha); }

  CASCADE_HD SpectralSums operator()(std::size_t idx) const {
    int i, j;
    stage.s.mode(idx, i, j);
    const SpectralSums r = stage.mask.keep(stage.s, i, j) ? sums(idx) : SpectralSums{};
    stage(idx);
    return r;
  }
};

//! The budget's sums of S and F at the modes the dealiasing keeps, as FusedStageWithSums adds
//! them, without the stage: mode (i, j) of member m's field, taken row by row
//! (cuda_launch::row_sum_kernel), before a stage whose column kernel does not take them
//! (ColumnKernelEval::sums_apart).
template <class Real>
struct KeptSums {
  DealiasMask<Real> mask;
  SpectralSumsOfMode<Real> sums;

  CASCADE_HD void set_linear(const LinearCoefficients& c) { sums.set_linear(c); }
  //! Whether row j has kept modes (that of kx = 0 is kept where any is): the rows the
  //! dealiasing removes, a third under the 2/3 rule, are not visited.
  CASCADE_HD bool row_kept(int j) const { return mask.keep(sums.s, 0, j); }
  CASCADE_HD SpectralSums at(int i, int j, int m) const {
    const SpectralShape<Real>& s = sums.s;
    const std::size_t row = std::size_t(m) * std::size_t(s.ny) + std::size_t(j);
    return sums.kept(mask, i, j, row * std::size_t(s.nxh) + std::size_t(i));
  }
};

template <class Real, int K>
struct ShapedStageOfColumns;

//! The fused stage (and the budget's sums, with `sums`) at the modes of one member's tile of
//! columns (kernels/column_fft.cuh ColumnTile::each_mode: column c of the tile, row j), given
//! the transforms of the products there in a, b and leaving the next evaluation's inputs
//! there: FusedStage's arithmetic on values in shared memory instead of the work fields.
template <class Real>
struct StageOfColumns {
  FusedStage<Real> stage;
  SpectralSumsOfMode<Real> sums;
  bool with_sums;
  std::size_t base;  //!< the member's first index
  int first_column;
  //! ahead() computes the mode's propagators too (FusedStage::propagators), after its reads are
  //! asked for, while they are on their way; else the stage computes them as it goes. The
  //! column kernel sets it from cuda_launch::ColumnShape::early_propagators.
  bool early_propagators = false;
  //! The stage's shape (FusedStage::shape): where it is one of kStageShapes, the phase of each
  //! mode runs compiled for it (with_shape).
  int shape = 0;

  CASCADE_HD void set_linear(const LinearCoefficients& c) {
    stage.set_linear(c);
    sums.set_linear(c);
  }
  CASCADE_HD void set_step(double h, double hb, double ha) { stage.set_step(h, hb, ha); }

  //! g(fn), fn this functor as a kernel compiled for its stage's shape runs it
  //! (ShapedStageOfColumns), or this functor itself where the shape is none of kStageShapes.
  //! `ncu` of the single 8192^2 column kernel: the phase of each mode executed 542 warp
  //! instructions a position (two modes and their join), some 250 of them the tests of the
  //! stage's decisions, their branches and moves (docs/performance.md, "The stage compiled for
  //! its shape"). The shape is found once a launch, on the host (CudaExec::column_stage).
  template <class G>
  CASCADE_HD_INLINE auto with_shape(const G& g) const {
    return dispatch_shape(g, std::make_integer_sequence<int, kStageShapeCount>{});
  }

  //! What the stage reads from memory at mode (c, j) of the tile, asked for ahead of its
  //! arithmetic: ColumnTile::each_mode asks for the next mode's while this one computes, so
  //! that a thread does not wait for S at each of its modes (ncu, 4096^2 double: the first use
  //! of S took 11% of the column kernel's stall samples). Whether the mode is kept, its index
  //! and the stage's reads there; the budget's sums take S and the forcing from them too
  //! (sums reads the stage's S and F: backend_impl.hpp builds both from the same buffers).
  //! With early_propagators, the mode's propagators too.
  struct Ahead {
    bool keep;
    std::size_t idx;
    typename FusedStage<Real>::Reads in;
    typename FusedStage<Real>::Propagators e;
  };
  CASCADE_HD Ahead ahead(int c, int j) const { return ahead_as<0>(c, j); }
  CASCADE_HD SpectralSums operator()(int c, int j, Complex<Real>& a, Complex<Real>& b, const Ahead& x) const {
    return at_as<0>(c, j, a, b, x);
  }
  //! ahead() and operator() of the stage as shape K has it (FusedStage::shaped), K = 0: as it is.
  template <int K>
  CASCADE_HD Ahead ahead_as(int c, int j) const {
    decltype(auto) st = stage_as<K>();
    const int i = first_column + c;
    Ahead r{};
    r.keep = st.mask.keep(st.s, i, j);  // elsewhere S is zero and stays so: nothing read
    if (!r.keep) return r;
    r.idx = base + std::size_t(j) * std::size_t(st.s.nxh) + std::size_t(i);
    r.in = st.reads(r.idx, i, j);
    if (early_propagators) r.e = propagators_as<K>(st, i, j);
    return r;
  }
  template <int K>
  CASCADE_HD SpectralSums at_as(int c, int j, Complex<Real>& a, Complex<Real>& b, const Ahead& x) const {
    const int i = first_column + c;
    const Complex<Real> zero = {Real(0), Real(0)};
    if (!x.keep) {  // the inputs zero
      a = b = zero;
      return SpectralSums{};
    }
    const SpectralSums r = with_sums ? sums.of(i, j, x.in.s, x.in.f) : SpectralSums{};  // S before the stage
    const bool mean = i == 0 && j == 0;
    decltype(auto) st = stage_as<K>();
    if (early_propagators) st.kept_mode(x.idx, i, j, mean ? zero : a, mean ? zero : b, a, b, x.in, x.e);
    else if constexpr (K > 0)
      st.kept_mode(x.idx, i, j, mean ? zero : a, mean ? zero : b, a, b, x.in, propagators_as<K>(st, i, j));
    else st.kept_mode(x.idx, i, j, mean ? zero : a, mean ? zero : b, a, b, x.in);
    return r;
  }

 private:
  template <int K>
  CASCADE_HD decltype(auto) stage_as() const {
    if constexpr (K == 0) return (stage);
    else return stage.template shaped<K>();
  }
  template <int K>
  CASCADE_HD static typename FusedStage<Real>::Propagators propagators_as(const FusedStage<Real>& st, int i, int j) {
    Real kx, ky, k2;
    st.wavenumbers(i, j, kx, ky, k2);
    if constexpr (K == 0) return st.propagators(kx, k2);
    else return st.template shaped_propagators<K>(kx, k2);
  }
  template <class G, int... K>
  CASCADE_HD_INLINE auto dispatch_shape(const G& g, std::integer_sequence<int, K...>) const {
    decltype(g(*this)) r{};
    const bool shaped = ((shape == K + 1 && (r = g(ShapedStageOfColumns<Real, K + 1>{*this}), true)) || ...);
    if (!shaped) r = g(*this);
    return r;
  }
};

//! A StageOfColumns of shape K (StageOfColumns::shape, kStageShapes[K - 1]) as the phase of each
//! mode takes it: its stage's decisions constants.
template <class Real, int K>
struct ShapedStageOfColumns {
  const StageOfColumns<Real>& op;
  CASCADE_HD typename StageOfColumns<Real>::Ahead ahead(int c, int j) const { return op.template ahead_as<K>(c, j); }
  CASCADE_HD SpectralSums operator()(int c, int j, Complex<Real>& a, Complex<Real>& b,
                                     const typename StageOfColumns<Real>::Ahead& x) const {
    return op.template at_as<K>(c, j, a, b, x);
  }
};

//! The inputs of an evaluation of the state omega_hat at the modes of a tile of columns:
//! velocity_of, as the fused stage leaves them (zero at the removed modes).
template <class Real>
struct InputsOfColumns {
  SpectralShape<Real> s;
  DealiasMask<Real> mask;
  Real scale;
  const Complex<Real>* omega_hat;
  std::size_t base;
  int first_column;
  CASCADE_HD SpectralSums operator()(int c, int j, Complex<Real>& a, Complex<Real>& b) const {
    const int i = first_column + c;
    if (!mask.keep(s, i, j)) {
      a = b = Complex<Real>{Real(0), Real(0)};
      return SpectralSums{};
    }
    velocity_of(s.kx(i), s.ky(j), scale, omega_hat[base + std::size_t(j) * std::size_t(s.nxh) + std::size_t(i)], a, b);
    return SpectralSums{};
  }
};

//! The products' transforms at the modes of a tile of columns, stored as half spectra in a_out,
//! b_out (Backend::natural_products).
template <class Real>
struct StoreColumns {
  Complex<Real>* a_out;
  Complex<Real>* b_out;
  int ld;  //!< nx/2 + 1
  std::size_t base;
  int first_column;
  CASCADE_HD SpectralSums operator()(int c, int j, Complex<Real>& a, Complex<Real>& b) const {
    const std::size_t idx = base + std::size_t(j) * std::size_t(ld) + std::size_t(first_column + c);
    a_out[idx] = a;
    b_out[idx] = b;
    return SpectralSums{};
  }
};

//! A functor of the step over every member of an ensemble whose members differ in their linear
//! coefficients (ensemble.vary; Backend::set_member_coefficients): at each mode, the functor
//! with that member's operator. A wrapper, so that the functors themselves (and the kernels of
//! a single run) are unchanged.
template <class Fn>
struct EachMember {
  Fn f;
  const LinearCoefficients* each;  //!< one a member, in the backend's memory
  CASCADE_HD void set_step(double h, double hb, double ha) { f.set_step(h, hb, ha); }
  CASCADE_HD auto operator()(std::size_t idx) const {
    Fn g = f;
    g.set_linear(each[f.member_of(idx)]);
    return g(idx);
  }
};

//! A stage of the step on the device (Backend::run_step_graph): the functor with the numbers of
//! the step that depend on its h read from the device's clock (include/cascade/step_clock.hpp),
//! which the step chose there; a wrapper, so that the stage of a step chosen on the host is
//! unchanged.
template <class Fn>
struct Clocked {
  Fn f;
  const StepClock* clock;  //!< in the backend's memory
  int stage;
  CASCADE_HD auto operator()(std::size_t idx) const {
    using R = decltype(f(idx));
    if (!clock->go) {  // a step not taken: nothing written, nothing added
      if constexpr (std::is_void_v<R>) return;
      else return R{};
    }
    Fn g = f;
    g.set_step(clock->h, clock->hb[stage], clock->ha[stage]);
    return g(idx);
  }
};

}  // namespace cascade
