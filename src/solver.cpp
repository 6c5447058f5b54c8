//! @file The vorticity equation on one backend: nonlinear term (Basdevant or advective form),
//! generic integrating-factor RK step driven by a table, CFL policy, diagnostics.
#include "cascade/solver.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cascade/error.hpp"

namespace cascade {

template <class Real>
Solver<Real>::Solver(Backend<Real>& backend, const Config& config)
    : b_(backend), config_(config), table_(stepper_table(config.time.stepper)) {
  const PhysicsConfig& p = config.physics;
  lin_ = {p.nu, p.nu_order, p.mu, p.alpha, p.alpha_order, p.beta};
  const TimeConfig& t = config.time;
  policy_ = {t.cfl, t.dt_max, t.dt_min, t.growth, t.dt_initial};

  S_ = b_.spectral_field();
  K_ = b_.spectral_field();
  if (!table_.low_storage) W_ = b_.spectral_field();
  a_hat_ = b_.spectral_field();
  b_hat_ = b_.spectral_field();
  u_ = b_.real_field();
  v_ = b_.real_field();
  if (config.grid.nonlinear == NonlinearForm::Advective) {
    c_hat_ = b_.spectral_field();
    d_hat_ = b_.spectral_field();
    wx_ = b_.real_field();
    wy_ = b_.real_field();
  }
}

template <class Real>
std::size_t Solver<Real>::memory_bytes() const {
  std::size_t n = S_.bytes() + K_.bytes() + W_.bytes() + a_hat_.bytes() + b_hat_.bytes() + c_hat_.bytes() +
                  d_hat_.bytes() + u_.bytes() + v_.bytes() + wx_.bytes() + wy_.bytes();
  if (forcing_hat_) n += forcing_hat_->bytes();
  return n;
}

// ---------------------------------------------------------------- state

template <class Real>
void Solver<Real>::initialise() {
  const InitialConfig& ic = config_.initial;
  if (ic.type == "random") {
    b_.random_vorticity(ic.k0, static_cast<unsigned long long>(ic.seed), S_);
    normalise_energy(ic.energy);
  } else if (ic.type == "taylor-green") {
    b_.taylor_green_vorticity(ic.mode, ic.amplitude, u_);
    b_.forward(u_, S_);
    b_.apply_mask(S_);
  } else if (ic.type == "zero") {
    b_.scale(S_, S_, Real(0));
  } else {
    throw InputError("initial.type: expected random, taylor-green or zero, found '" + ic.type + "'");
  }
  const ForcingConfig& f = config_.forcing;
  if (f.type == "kolmogorov") {
    b_.kolmogorov_forcing(f.amplitude, f.wavenumber, u_);
    forcing_hat_ = b_.spectral_field();
    b_.forward(u_, *forcing_hat_);
    b_.apply_mask(*forcing_hat_);
  } else if (f.type != "none") {
    throw InputError("forcing.type: expected none or kolmogorov, found '" + f.type + "'");
  }
  t_ = 0;
  step_ = 0;
  dt_prev_ = 0;
}

template <class Real>
void Solver<Real>::normalise_energy(double energy) {
  const double n2 = double(b_.grid().size()) * double(b_.grid().size());
  const double e = b_.spectral_sums(lin_, S_, nullptr).energy / n2;
  if (!(e > 0)) throw InputError("initial: the random field has no energy on this grid (k0 too large?)");
  b_.scale(S_, S_, Real(std::sqrt(energy / e)));
}

template <class Real>
void Solver<Real>::set_vorticity(const std::vector<Real>& omega) {
  b_.from_host(omega, u_);
  b_.forward(u_, S_);
  b_.apply_mask(S_);
}

template <class Real>
void Solver<Real>::set_vorticity_hat(const std::vector<Cplx>& omega_hat) {
  b_.from_host(omega_hat, S_);
}

template <class Real>
void Solver<Real>::set_forcing(const std::vector<Real>& f) {
  if (!forcing_hat_) forcing_hat_ = b_.spectral_field();
  b_.from_host(f, u_);
  b_.forward(u_, *forcing_hat_);
  b_.apply_mask(*forcing_hat_);
}

template <class Real>
void Solver<Real>::clear_forcing() {
  forcing_hat_.reset();
}

template <class Real>
std::vector<Real> Solver<Real>::vorticity() {
  b_.scale(S_, a_hat_, Real(1.0 / double(b_.grid().size())));
  b_.inverse(a_hat_, u_);
  std::vector<Real> out;
  b_.to_host(u_, out);
  return out;
}

template <class Real>
std::vector<Real> Solver<Real>::field(const std::string& name) {
  if (name == "vorticity") return vorticity();
  std::vector<Real> out;
  if (name == "streamfunction") {
    b_.streamfunction_hat(S_, a_hat_);
    b_.inverse(a_hat_, u_);
    b_.to_host(u_, out);
    return out;
  }
  if (name == "u" || name == "v") {
    b_.velocity_hat(S_, a_hat_, b_hat_);
    if (name == "u") {
      b_.inverse(a_hat_, u_);
      b_.to_host(u_, out);
    } else {
      b_.inverse(b_hat_, v_);
      b_.to_host(v_, out);
    }
    return out;
  }
  throw RunError("unknown field '" + name + "'");
}

template <class Real>
void Solver<Real>::set_vorticity_hat_resized(const std::vector<double>& src, int src_nx, int src_ny) {
  const Grid& g = b_.grid();
  const int src_nxh = src_nx / 2 + 1;
  if (src.size() != std::size_t(src_ny) * src_nxh * 2) throw RunError("resized state: wrong source size");
  const double ratio = double(g.size()) / (double(src_nx) * double(src_ny));  // unnormalised DFT
  std::vector<Cplx> out(g.spectral_size(), Cplx{Real(0), Real(0)});
  for (int j = 0; j < g.ny; ++j) {
    const int n = g.mode_y(j);
    if (2 * std::abs(n) >= src_ny) continue;  // beyond the source (its Nyquist row is zero)
    const int js = n >= 0 ? n : n + src_ny;
    for (int i = 0; i < g.nxh() && 2 * i < src_nx; ++i) {
      const std::size_t s = (std::size_t(js) * src_nxh + i) * 2;
      out[std::size_t(j) * g.nxh() + i] = {Real(src[s] * ratio), Real(src[s + 1] * ratio)};
    }
  }
  b_.from_host(out, S_);
  b_.apply_mask(S_);
}

template <class Real>
std::vector<Complex<Real>> Solver<Real>::vorticity_hat() {
  std::vector<Cplx> out;
  b_.to_host(S_, out);
  return out;
}

template <class Real>
void Solver<Real>::set_time(double t, long step, double dt_prev) {
  t_ = t;
  step_ = step;
  dt_prev_ = dt_prev;
}

// ---------------------------------------------------------------- nonlinear term

//! k = N(y) + F: -u.grad(omega), dealiased, plus the forcing. y and k may be the same buffer
//! (y is consumed before k is written). Returns max(|u|/dx + |v|/dy) of y's velocity, which
//! the product kernel computes on the way (no separate pass over the grid).
template <class Real>
Real Solver<Real>::nonlinear(const Buffer<Cplx>& y, Buffer<Cplx>& k) {
  const Buffer<Cplx>* f = forcing_hat_ ? &*forcing_hat_ : nullptr;
  if (config_.grid.nonlinear == NonlinearForm::Basdevant) {
    // 2 inverse + 2 forward transforms.
    b_.velocity_hat(y, a_hat_, b_hat_);
    b_.inverse(a_hat_, u_);
    b_.inverse(b_hat_, v_);
    const Real rate = b_.basdevant_products(u_, v_);
    b_.forward(u_, a_hat_);
    b_.forward(v_, b_hat_);
    b_.basdevant_combine(a_hat_, b_hat_, f, k);
    return rate;
  }
  // Advective: 4 inverse + 1 forward transforms.
  b_.advective_inputs(y, a_hat_, b_hat_, c_hat_, d_hat_);
  b_.inverse(a_hat_, u_);
  b_.inverse(b_hat_, v_);
  b_.inverse(c_hat_, wx_);
  b_.inverse(d_hat_, wy_);
  const Real rate = b_.advective_product(u_, v_, wx_, wy_);
  b_.forward(wx_, a_hat_);
  b_.advective_combine(a_hat_, f, k);
  return rate;
}

// ---------------------------------------------------------------- stepping

//! The stages after the first (whose K_1 = N(omega_n) is in K already): see stepper.hpp.
template <class Real>
void Solver<Real>::advance(double h) {
  const std::vector<StageCoefficients> stages = stage_coefficients(table_, h);
  const Buffer<Cplx>* w = table_.low_storage ? nullptr : &W_;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (i > 0) nonlinear(K_, K_);  // K holds Y_i; it becomes K_i
    b_.ifrk_stage(lin_, stages[i], w, S_, K_);
  }
}

template <class Real>
StepReport Solver<Real>::step(double t_output) {
  if (!table_.low_storage) b_.copy(S_, W_);
  const double rate = double(nonlinear(S_, K_));
  const DtChoice c = choose_dt(policy_, rate, dt_prev_, t_, t_output);
  const double dx = std::min(b_.grid().dx(), b_.grid().dy());
  if (!std::isfinite(rate))
    throw BlowUp(fmt::format("blow-up at step {}, t = {:.9g}, dt = {:.3e}: the velocity is not finite "
                             "(max(|u|/dx + |v|/dy) = {})",
                             step_ + 1, t_, dt_prev_, rate));
  if (c.limit != DtLimit::Output && c.dt < policy_.dt_min)
    throw BlowUp(fmt::format("time step below dt_min at step {}, t = {:.9g}: dt = {:.3e} < {:.3e}, "
                             "max(|u|/dx + |v|/dy) = {:.6g} (max velocity about {:.6g})",
                             step_ + 1, t_, c.dt, policy_.dt_min, rate, rate * dx));
  advance(c.dt);
  t_ = c.lands ? t_output : t_ + c.dt;
  dt_prev_ = c.limit == DtLimit::Output ? dt_prev_ : c.dt;  // a shortened step does not slow the ramp
  ++step_;
  return {c.dt, c.limit, c.lands, rate};
}

template <class Real>
void Solver<Real>::step_fixed(double dt) {
  if (!table_.low_storage) b_.copy(S_, W_);
  nonlinear(S_, K_);
  advance(dt);
  t_ += dt;
  dt_prev_ = dt;
  ++step_;
}

// ---------------------------------------------------------------- diagnostics

template <class Real>
Diagnostics Solver<Real>::diagnose() {
  const Buffer<Cplx>* f = forcing_hat_ ? &*forcing_hat_ : nullptr;
  const SpectralSums s = b_.spectral_sums(lin_, S_, f);
  const double n2 = double(b_.grid().size()) * double(b_.grid().size());
  Diagnostics d;
  d.step = step_;
  d.t = t_;
  d.energy = s.energy / n2;
  d.enstrophy = s.enstrophy / n2;
  d.palinstrophy = s.palinstrophy / n2;
  d.dissipation = s.dissipation / n2;
  d.injection = s.injection / n2;
  b_.velocity_hat(S_, a_hat_, b_hat_);
  b_.inverse(a_hat_, u_);
  b_.inverse(b_hat_, v_);
  d.max_u = double(b_.max_speed(u_, v_));
  return d;
}

template <class Real>
double Solver<Real>::dk() const {
  return 2 * M_PI / std::max(b_.grid().lx, b_.grid().ly);
}

template <class Real>
std::vector<double> Solver<Real>::shell_centres() const {
  const Grid& g = b_.grid();
  const double kmax = std::hypot(g.kx(g.nx / 2), 2 * M_PI * (g.ny / 2) / g.ly);
  const int shells = int(std::floor(kmax / dk() + 0.5)) + 1;
  std::vector<double> k(shells);
  for (int s = 0; s < shells; ++s) k[s] = s * dk();
  return k;
}

template <class Real>
void Solver<Real>::spectra(std::vector<double>& energy, std::vector<double>& enstrophy) {
  const int shells = int(shell_centres().size());
  b_.shell_spectra(S_, dk(), shells, energy, enstrophy);
  const double n2 = double(b_.grid().size()) * double(b_.grid().size());
  for (int s = 0; s < shells; ++s) {
    energy[s] /= n2 * dk();
    enstrophy[s] /= n2 * dk();
  }
}

template class Solver<float>;
template class Solver<double>;

}  // namespace cascade
