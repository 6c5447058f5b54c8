//! @file The vorticity equation on one backend: nonlinear term (Basdevant or advective form),
//! generic integrating-factor RK step driven by a table, CFL policy, diagnostics.
#include "cascade/solver.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <variant>

#include "cascade/error.hpp"
#include "cascade/parallel.hpp"
#include "physics/initial.hpp"

namespace cascade {

template <class Real>
Solver<Real>::Solver(Backend<Real>& backend, const Config& config, std::optional<StepRequest> request)
    : b_(backend), config_(config), eq_(Equation::of(config)), table_(stepper_table(config.time.stepper)) {
  const TimeConfig& t = config.time;
  policy_ = {t.cfl, t.dt_max, t.dt_min, t.growth, t.dt_initial};
  members_ = b_.members();
  first_ = b_.slab().first_member;
  batch_ = b_.slab().batch;
  drop_ = config.ensemble.on_blowup == "drop";
  if (config.ensemble.members != batch_)
    throw RunError(fmt::format("Solver: the backend holds {} members, the deck asks for {}", batch_,
                               config.ensemble.members));
  if (batch_ > 1) {
    // Each member's equation from its own deck (the run's member first_ + m); where their
    // linear coefficients differ, the backend takes each member's.
    bool differ = false;
    std::vector<LinearCoefficients> each;
    for (int m = 0; m < members_; ++m) {
      member_eq_.push_back(Equation::of(member_config(config, first_ + m)));
      const LinearCoefficients& c = member_eq_.back().linear;
      differ = differ || c.nu != lin_.nu || c.nu_order != lin_.nu_order || c.mu != lin_.mu || c.alpha != lin_.alpha ||
               c.alpha_order != lin_.alpha_order || c.beta != lin_.beta;
      each.push_back(c);
    }
    if (differ) b_.set_member_coefficients(each);
  }

  S_ = b_.spectral_field();
  if (!table_.low_storage) W_ = b_.spectral_field();
  // Pairs (one allocation each): the fields that go through the transforms together.
  b_.spectral_pair(a_hat_, b_hat_);
  b_.real_pair(u_, v_);
  if (advective()) {
    b_.spectral_pair(c_hat_, d_hat_);
    b_.real_pair(wx_, wy_);
  }
  // The step's transforms as the deck asks (run.step_transforms, run.fft_callbacks; auto: the
  // tuning table of src/core/step_plan.cpp), unless the backend has its plan already.
  if (!request) request = step_request_from(config.run.step_transforms, config.run.fft_callbacks);
  b_.prepare_step(*request, !advective());
  set_forcing_kind(ForcingKind::None);

  // The step on the device (run.step_graph): where the backend can record it (white noise is
  // drawn there too, from the device's clock: Backend::step_forcing).
  std::string why = b_.step_graph_unavailable();
  const std::string& want = config.run.step_graph;
  if (want == "on" && !why.empty()) throw InputError("run.step_graph: on, but " + why);
  // auto: where a step's launches and the host's wait cost (H100, rk4 double: 0.072 against
  // 0.128 ms at 128^2, 0.085 against 0.128 at 256^2, 0.328 against 0.360 at 1024^2, 4.26
  // against 4.29 at 4096^2); above, the host keeps ahead of the device and the inputs each
  // launch recomputes cost more (107.1 against 105.8 ms at 16384^2, two steps a launch).
  const double points = double(b_.grid().size()) * double(batch_);
  if (want == "auto" && why.empty() && points > kGraphAutoPoints)
    why = "auto: above 4096^2 points a step the host keeps ahead of the device; run.step_graph: on runs it there";
  graph_required_ = want == "on";
  if (want != "off" && why.empty()) {
    graph_ = Graph::Pending;
    graph_note_ = "on the device (a CUDA graph of the step that chooses its own dt)";
  } else {
    graph_note_ = want == "off" ? "from the host (run.step_graph: off)" : "from the host (" + why + ")";
  }
}

template <class Real>
std::size_t Solver<Real>::required_bytes(const Config& c, int share) {
  const Grid g = c.make_grid();
  const bool adv = c.grid.nonlinear == NonlinearForm::Advective;
  const bool classic = !stepper_table(c.time.stepper).low_storage;
  const bool forced = Equation::of(c).forced();
  const std::size_t spectral = 1 /*S*/ + (classic ? 1 : 0) + (adv ? 4 : 2) + (forced ? 1 : 0);
  const std::size_t real = adv ? 4 : 2;
  const std::size_t members = std::size_t(share > 0 ? share : std::max(1, c.ensemble.members));
  return members * (spectral * g.spectral_size() * sizeof(Cplx) + real * g.size() * sizeof(Real));
}

template <class Real>
std::size_t Solver<Real>::memory_bytes() const {
  std::size_t n = S_.bytes() + W_.bytes() + a_hat_.bytes() + b_hat_.bytes() + c_hat_.bytes() +
                  d_hat_.bytes() + u_.bytes() + v_.bytes() + wx_.bytes() + wy_.bytes();
  if (forcing_hat_) n += forcing_hat_->bytes();
  return n;
}

// ---------------------------------------------------------------- state

template <class Real>
void Solver<Real>::initialise(const InitialField* file) {
  if (batch_ > 1) initialise_members(file);
  else std::visit([&](const auto& initial) { initial.apply(*this, file); }, make_initial(config_.initial, b_.grid()));
  forcing_hat_.reset();
  set_forcing_kind(ForcingKind::None);
  if (eq_.forced()) {
    forcing_hat_ = b_.spectral_field();
    set_forcing_kind(eq_.white_noise() ? ForcingKind::WhiteNoise : ForcingKind::Fixed);
    if (rule_.forcing == ForcingKind::Fixed) draw_forcing();
    else set_step_forcing();  // white noise: drawn each step (advance, the step on the device)
  }
  t_ = 0;
  step_ = 0;
  dt_prev_ = 0;
  set_budget(BudgetState{});
}

template <class Real>
void Solver<Real>::initialise_members(const InitialField* file) {
  for (int m = 0; m < members_; ++m) {
    target_ = m;
    std::visit([&](const auto& initial) { initial.apply(*this, file); },
               make_initial(member_config(config_, first_ + m).initial, b_.grid()));
  }
  target_ = -1;
  finish_members();
}

//! The members' fields given at points (in u_), through one transform of every member, into S.
template <class Real>
void Solver<Real>::finish_members() {
  if (!pending_forward_) return;
  pending_forward_ = false;
  b_.forward(u_, S_);
  b_.apply_mask(S_);
}

//! The equation's forcing fixed in time into forcing_hat_ (each member's own in an ensemble;
//! white noise is drawn each step instead: set_step_forcing).
template <class Real>
void Solver<Real>::draw_forcing() {
  const long step = 0;  // fixed in time: a field of no step in particular
  const double h = 0;
  if (batch_ == 1) {
    std::visit(
        [&](const auto& f) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(f)>, NoForcing>)
            fill_spectral(f.template field<Real>(b_.grid(), step, h), *forcing_hat_);
        },
        eq_.forcing);
    return;
  }
  inputs_ready_ = false;  // u_ may change
  bool points = false;
  for (int m = 0; m < members_; ++m) {
    if (dropped(first_ + m)) continue;  // at rest, unforced (its forcing stays zero)
    std::visit(
        [&](const auto& f) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(f)>, NoForcing>) {
            const FieldSpec<Real> spec = f.template field<Real>(b_.grid(), step, h);
            if (spectral(spec)) {
              Buffer<Cplx> out = member(*forcing_hat_, m);
              b_.fill_modes(spec, out);
            } else {
              Buffer<Real> out = member(u_, m);
              b_.fill_points(spec, out);
              points = true;
            }
          }
        },
        member_eq_[m].forcing);
  }
  if (points) {
    for (int m = 0; m < members_; ++m)  // what the batch's transform gives a dropped member: zero
      if (dropped(first_ + m)) {
        Buffer<Real> u = member(u_, m);
        b_.from_host(std::vector<Real>(b_.grid().size(), Real(0)), u);
      }
    b_.forward(u_, *forcing_hat_);
    b_.apply_mask(*forcing_hat_);
  }
}

template <class Real>
void Solver<Real>::fill_spectral(const FieldSpec<Real>& f, Buffer<Cplx>& out) {
  inputs_ready_ = false;  // u_ may change
  if (spectral(f)) {
    b_.fill_modes(f, out);
    return;
  }
  b_.fill_points(f, u_);
  b_.forward(u_, out);
  b_.apply_mask(out);
}

template <class Real>
void Solver<Real>::set_vorticity(const std::vector<FieldSpec<Real>>& terms) {
  inputs_ready_ = false;  // the work fields are about to change, or S is
  if (target_ >= 0) {  // one member's initial field (initialise_members)
    Buffer<Cplx> s = member(S_, target_);
    if (terms.empty()) return b_.scale(s, s, Real(0));
    if (terms.size() == 1 && spectral(terms[0])) return b_.fill_modes(terms[0], s);
    Buffer<Real> u = member(u_, target_);
    for (std::size_t k = 0; k < terms.size(); ++k) {
      if (spectral(terms[k])) throw RunError("set_vorticity: a sum of fields must be given at points");
      b_.fill_points(terms[k], u, k > 0);
    }
    pending_forward_ = true;
    return;
  }
  if (terms.empty()) {
    b_.scale(S_, S_, Real(0));
    return;
  }
  if (terms.size() == 1) {
    fill_spectral(terms[0], S_);
    return;
  }
  for (std::size_t k = 0; k < terms.size(); ++k) {
    if (spectral(terms[k])) throw RunError("set_vorticity: a sum of fields must be given at points");
    b_.fill_points(terms[k], u_, k > 0);
  }
  b_.forward(u_, S_);
  b_.apply_mask(S_);
}

template <class Real>
void Solver<Real>::scale_to_energy(double energy) {
  inputs_ready_ = false;
  if (pending_forward_) throw RunError("scale_to_energy: a member's field waits for its transform");
  const double n2 = double(b_.grid().size()) * double(b_.grid().size());
  Buffer<Cplx> s = member(S_, std::max(target_, 0));
  if (target_ < 0 && batch_ > 1) throw RunError("scale_to_energy: of one member at a time");
  const double e = b_.spectral_sums(lin_, s, nullptr).energy / n2;
  if (!(e > 0)) throw InputError("initial: the random field has no energy on this grid (k0 too large?)");
  b_.scale(s, s, Real(std::sqrt(energy / e)));
}

template <class Real>
void Solver<Real>::set_vorticity(const std::vector<Real>& omega) {
  inputs_ready_ = false;  // the work fields are about to change, or S is
  if (target_ >= 0) {
    Buffer<Real> u = member(u_, target_);
    b_.from_host(omega, u);
    pending_forward_ = true;
    return;
  }
  b_.from_host(omega, u_);
  b_.forward(u_, S_);
  b_.apply_mask(S_);
}

template <class Real>
void Solver<Real>::set_vorticity_hat(const std::vector<Cplx>& omega_hat) {
  inputs_ready_ = false;  // the work fields are about to change, or S is
  const std::size_t per = b_.grid().spectral_size();
  if (drop_ && batch_ > 1 && omega_hat.size() == per * std::size_t(batch_)) {
    // A state whose dropped members are NaN (a checkpoint's): they stay dropped, at rest.
    std::vector<Cplx> state = omega_hat;
    dropped_.assign(std::size_t(batch_), 0);
    for (int g = 0; g < batch_; ++g) {
      Cplx* const first = state.data() + std::size_t(g) * per;
      const bool finite = std::all_of(first, first + per, [](const Cplx& z) {
        return std::isfinite(double(z.re)) && std::isfinite(double(z.im));
      });
      if (finite) continue;
      dropped_[std::size_t(g)] = 1;
      std::fill(first, first + per, Cplx{Real(0), Real(0)});
    }
    if (rule_.forcing == ForcingKind::WhiteNoise) set_step_forcing();  // the dropped unforced
    b_.from_host(state, S_);
    b_.apply_mask(S_);
    return;
  }
  b_.from_host(omega_hat, S_);
  // The state is dealiased (a checkpoint's is already: then this changes nothing); the fused
  // stages rely on it, as they never write its removed modes (Backend::fused_stage).
  b_.apply_mask(S_);
}

template <class Real>
void Solver<Real>::set_forcing(const std::vector<Real>& f) {
  if (!forcing_hat_) forcing_hat_ = b_.spectral_field();
  b_.from_host(f, u_);
  b_.forward(u_, *forcing_hat_);
  b_.apply_mask(*forcing_hat_);
  set_forcing_kind(ForcingKind::Fixed);  // steady: its injection enters the budget like Kolmogorov's
}

//! The forcing's kind enters the step's rule (the budget's weights); a step recorded on the
//! device holds the forcing's buffer and its kind: it is recorded again.
template <class Real>
void Solver<Real>::set_forcing_kind(ForcingKind kind) {
  const double n = double(b_.grid().size());
  rule_ = step_rule(table_, policy_, n * n, kind);
  if (graph_ == Graph::Ready) {
    b_.drop_step_graph();
    graph_ = Graph::Pending;
  }
}

template <class Real>
template <class T>
void Solver<Real>::mark_dropped(std::vector<T>& v, std::size_t per) const {
  if (dropped_.empty() || v.size() != per * std::size_t(batch_)) return;  // none, or not the whole batch here
  T nan;
  if constexpr (std::is_floating_point_v<T>) nan = std::numeric_limits<T>::quiet_NaN();
  else nan = T{std::numeric_limits<Real>::quiet_NaN(), std::numeric_limits<Real>::quiet_NaN()};
  for (int g = 0; g < batch_; ++g)
    if (dropped(g)) std::fill(v.begin() + std::ptrdiff_t(std::size_t(g) * per), v.begin() + std::ptrdiff_t(std::size_t(g + 1) * per), nan);
}

template <class Real>
std::vector<Real> Solver<Real>::vorticity() {
  inputs_ready_ = false;  // the work fields are about to change, or S is
  b_.scale(S_, a_hat_, Real(1.0 / double(b_.grid().size())));
  b_.inverse(a_hat_, u_);
  std::vector<Real> out;
  b_.to_host(u_, out);
  mark_dropped(out, b_.grid().size());
  return out;
}

template <class Real>
std::vector<Real> Solver<Real>::field(const std::string& name) {
  std::vector<Real> out = field_values(name);
  mark_dropped(out, b_.grid().size());
  return out;
}

template <class Real>
std::vector<Real> Solver<Real>::field_values(const std::string& name) {
  inputs_ready_ = false;  // the work fields are about to change, or S is
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
  inputs_ready_ = false;  // the work fields are about to change, or S is
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
  Buffer<Cplx> s = member(S_, std::max(target_, 0));
  if (target_ < 0 && batch_ > 1) throw RunError("set_vorticity_hat_resized: of one member at a time");
  b_.from_host(out, s);
  b_.apply_mask(s);
}

template <class Real>
std::vector<Complex<Real>> Solver<Real>::vorticity_hat() {
  std::vector<Cplx> out;
  b_.to_host(S_, out);
  mark_dropped(out, b_.grid().spectral_size());  // a checkpoint keeps who was dropped
  return out;
}

template <class Real>
void Solver<Real>::set_time(double t, long step, double dt_prev) {
  t_ = t;
  step_ = step;
  dt_prev_ = dt_prev;
}

// ---------------------------------------------------------------- nonlinear term

//! The inputs of a nonlinear evaluation of the state S (u_hat, v_hat and, in advective form,
//! the vorticity gradient, scaled for the inverse transforms) into the work fields.
template <class Real>
void Solver<Real>::evaluation_inputs() {
  if (advective()) b_.advective_inputs(S_, a_hat_, b_hat_, c_hat_, d_hat_);
  else b_.velocity_inputs(S_, a_hat_, b_hat_);
  inputs_ready_ = true;
}

//! The physical products of one evaluation and their forward transforms, from the inputs in
//! the work fields: Basdevant 2 inverse + 2 forward transforms (a <- (uv)_hat,
//! b <- (v^2 - u^2)_hat), advective 4 inverse + 1 forward (a <- (-u.grad omega)_hat). With
//! `cfl`, returns max(|u|/dx + |v|/dy), which the product kernel computes on the way (no
//! separate pass). Reading it is the one wait for the device in a step, and it comes after
//! the forward transforms are queued, so that the device works while the host waits; the
//! later stages pass false.
template <class Real>
void Solver<Real>::queue_products(bool cfl) {
  inputs_ready_ = false;  // the inverse transforms overwrite their inputs
  const bool adv = advective();
  b_.nonlinear_products(adv, cfl, a_hat_, b_hat_, adv ? &c_hat_ : nullptr, adv ? &d_hat_ : nullptr, u_, v_,
                        adv ? &wx_ : nullptr, adv ? &wy_ : nullptr);
}

template <class Real>
Real Solver<Real>::evaluate_products(bool cfl) {
  queue_products(cfl);
  return cfl ? b_.cfl_maximum() : Real(0);
}

// ---------------------------------------------------------------- stepping

//! The stages of a step of size h, from the products of the first evaluation (in the work
//! fields): each fused stage leaves the next evaluation's inputs there (see stepper.hpp and
//! ns_ops.cuh FusedStage); the last leaves those of the new state.
//! The first stage also adds the budget rates of the start state (take_step's weights).
template <class Real>
void Solver<Real>::stages(double h, const BudgetWeights& budget) {
  const std::vector<StageCoefficients> stages = stage_coefficients(table_, h);
  Buffer<Cplx>* w = table_.low_storage ? nullptr : &W_;
  const bool adv = advective();
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (i > 0) evaluate_products(false);
    b_.fused_stage(lin_, stages[i], adv, forcing(), w, i == 0 && w != nullptr, S_, a_hat_, b_hat_,
                   adv ? &c_hat_ : nullptr, adv ? &d_hat_ : nullptr, i == 0 ? &budget : nullptr);
  }
  inputs_ready_ = true;
}

template <class Real>
const BudgetState& Solver<Real>::budget() {
  if (batch_ == 1) {
    b_.budget_integrals(budget_.integral);
    budget_.members.clear();
    return budget_;
  }
  std::vector<double> mine(std::size_t(BudgetState::kTerms) * members_);
  b_.budget_integrals(mine.data());
  budget_.members = all_members(mine, BudgetState::kTerms);  // every member's, on every rank
  std::copy(budget_.members.begin(), budget_.members.begin() + BudgetState::kTerms, budget_.integral);
  return budget_;
}

template <class Real>
void Solver<Real>::set_budget(const BudgetState& b) {
  budget_ = b;
  if (batch_ == 1) return b_.set_budget_integrals(budget_.integral);
  const std::size_t n = std::size_t(BudgetState::kTerms) * batch_;
  if (budget_.members.empty()) budget_.members.assign(n, 0.0);  // a new interval: all zero
  if (budget_.members.size() != n)
    throw RunError(fmt::format("set_budget: {} integrals for {} members", budget_.members.size(), batch_));
  b_.set_budget_integrals(budget_.members.data() + std::size_t(BudgetState::kTerms) * first_);  // this rank's
}

template <class Real>
std::vector<double> Solver<Real>::all_members(const std::vector<double>& mine, std::size_t per) const {
  if (!split()) return mine;
  const int ranks = parallel::size();
  std::vector<std::size_t> counts;
  for (int r = 0; r < ranks; ++r)
    counts.push_back(std::size_t(Slab::of_members(b_.grid(), batch_, r, ranks).members) * per);
  std::vector<double> all(std::size_t(batch_) * per);
  parallel::gatherv(mine.data(), sizeof(double), counts, all.data());
  parallel::broadcast(all.data(), all.size() * sizeof(double), 0);
  return all;
}

//! Diagnostics rows through all_members: their numbers (cfl_limit is the handler's to set).
template <class Real>
std::vector<Diagnostics> Solver<Real>::all_members(const std::vector<Diagnostics>& mine) const {
  if (!split()) return mine;
  constexpr std::size_t per = 17;
  std::vector<double> flat;
  for (const Diagnostics& d : mine)
    flat.insert(flat.end(), {double(d.step), d.t, d.dt, d.energy, d.enstrophy, d.palinstrophy, d.max_u, d.injection,
                             d.dissipation, d.dissipation_nu, d.dissipation_mu, d.dissipation_alpha, d.injection_z,
                             d.dissipation_z, d.wall_per_step, d.cfl, d.max_rate});
  const std::vector<double> all = all_members(flat, per);
  std::vector<Diagnostics> out(static_cast<std::size_t>(batch_));
  for (std::size_t b = 0; b < out.size(); ++b) {
    const double* v = all.data() + b * per;
    Diagnostics& d = out[b];
    d.step = long(v[0]);
    d.t = v[1];
    d.dt = v[2];
    d.energy = v[3];
    d.enstrophy = v[4];
    d.palinstrophy = v[5];
    d.max_u = v[6];
    d.injection = v[7];
    d.dissipation = v[8];
    d.dissipation_nu = v[9];
    d.dissipation_mu = v[10];
    d.dissipation_alpha = v[11];
    d.injection_z = v[12];
    d.dissipation_z = v[13];
    d.wall_per_step = v[14];
    d.cfl = v[15];
    d.max_rate = v[16];
  }
  return out;
}

//! The weights that add the rates of `s` (the current state) to the interval's integrals
//! (host side: the end half of the last step, when a diagnostics row closes the interval).
template <class Real>
StepClock Solver<Real>::clock() const {
  StepClock k;
  k.t = t_;
  k.dt_prev = dt_prev_;
  k.step = step_;
  k.budget_last_dt = budget_.last_dt;
  k.budget_interval = budget_.interval;
  k.budget_open = budget_.open ? 1 : 0;
  return k;
}

template <class Real>
void Solver<Real>::set_clock(const StepClock& k) {
  t_ = k.t;
  dt_prev_ = k.dt_prev;
  step_ = k.step;
  budget_.last_dt = k.budget_last_dt;
  budget_.interval = k.budget_interval;
  budget_.open = k.budget_open != 0;
}

//! The step the clock has just taken (take_step: k.step is one past it): the white-noise
//! forcing of this step (held fixed across its stages, |F| ~ 1/sqrt(h); drawn from the clock,
//! by the kernel the step on the device runs), then its stages.
template <class Real>
void Solver<Real>::advance(const StepClock& k) {
  b_.set_step_clock(k);
  if (rule_.forcing == ForcingKind::WhiteNoise) b_.step_forcing(*forcing_hat_, k.step - 1, k.h);
  stages(k.h, k.weights);
}

template <class Real>
StepReport Solver<Real>::step(double t_output) {
  if (!inputs_ready_) evaluation_inputs();
  double rate = double(evaluate_products());
  StepReport report;
  if (drop_ && batch_ > 1) drop_members(rate, t_output, report);
  const DtChoice c = choose_dt(policy_, rate, dt_prev_, t_, t_output);
  const double dx = std::min(b_.grid().dx(), b_.grid().dy());
  switch (verdict(rule_, c, rate, t_)) {
    case StepVerdict::NotFinite:
      throw BlowUp(fmt::format("blow-up at step {}, t = {:.9g}, dt = {:.3e}: the velocity is not finite{} "
                               "(max(|u|/dx + |v|/dy) = {})",
                               step_ + 1, t_, dt_prev_, blown_members(), rate));
    case StepVerdict::BelowDtMin:
      throw BlowUp(fmt::format("time step below dt_min at step {}, t = {:.9g}: dt = {:.3e} < {:.3e}, "
                               "max(|u|/dx + |v|/dy) = {:.6g} (max velocity about {:.6g}){}",
                               step_ + 1, t_, c.dt, policy_.dt_min, rate, rate * dx, fastest_member()));
    case StepVerdict::BelowResolution:
      throw BlowUp(fmt::format("time step {:.3e} at step {}, t = {:.17g}, is below the resolution of t", c.dt,
                               step_ + 1, t_));
    case StepVerdict::Go: break;
  }
  StepClock k = clock();
  take_step(k, rule_, c, rate, t_output);
  advance(k);
  set_clock(k);
  report.dt = c.dt;
  report.limit = c.limit;
  report.landed = c.lands;
  report.cfl_rate = rate;
  return report;
}

template <class Real>
StepReport Solver<Real>::steps_toward(double t_output, long max_steps) {
  if (graph_ == Graph::Off || max_steps < 2) return step(t_output);
  prepare_graph();
  if (graph_ == Graph::Off) return step(t_output);
  StepClock k = clock();
  const long taken = b_.run_step_graph(k, t_output, max_steps);
  // The work fields: each launch makes the inputs from the state again (a step not taken left
  // them spent), and so does the host's next step.
  inputs_ready_ = false;
  // None taken: the first step cannot be (a blow-up, dt below dt_min): the host's step stops
  // the run, or drops members, with its words.
  if (taken == 0) return step(t_output);
  set_clock(k);
  StepReport report;
  report.dt = k.dt;
  report.limit = DtLimit(k.limit);
  report.landed = k.lands != 0;
  report.cfl_rate = k.rate;
  return report;
}

//! The step on the device, recorded once: the inputs of the state, the evaluation (the
//! products with the CFL maximum) and a step's stages (their h-dependent numbers and the
//! budget's weights read from the device's clock: fused_stage sees coef.stage; the values
//! passed here are NaN, which nothing may read). The backend loops over the evaluation, its
//! clock (take_step) and the stages.
template <class Real>
void Solver<Real>::prepare_graph() {
  if (graph_ != Graph::Pending) return;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  try {
    graph_iteration_steps_ = b_.capture_step_graph(
        rule_, [&] { evaluation_inputs(); }, [&] { queue_products(true); },
        [&] {
          if (rule_.forcing == ForcingKind::WhiteNoise) b_.step_forcing(*forcing_hat_, -1, nan);  // the clock's
          stages(nan, BudgetWeights{nan, nan, nan});
        });
  } catch (const RunError& e) {
    inputs_ready_ = false;
    if (graph_required_) throw RunError(std::string("run.step_graph: on, but the device refused the graph: ") + e.what());
    graph_ = Graph::Off;
    graph_note_ = std::string("from the host (the device refused the graph: ") + e.what() + ")";
    return;
  }
  inputs_ready_ = false;
  graph_ = Graph::Ready;
  if (graph_iteration_steps_ > 1)
    graph_note_ = fmt::format("on the device (a CUDA graph of the step that chooses its own dt, {} steps an "
                              "iteration of its loop)",
                              graph_iteration_steps_);
}

template <class Real>
void Solver<Real>::drop_members(double& rate, double t_output, StepReport& report) {
  const auto too_small = [&] {
    const DtChoice c = choose_dt(policy_, rate, dt_prev_, t_, t_output);
    return c.limit != DtLimit::Output && c.dt < policy_.dt_min;
  };
  while (!std::isfinite(rate) || too_small()) {
    const bool blown = !std::isfinite(rate);
    const std::vector<double> speed = member_speeds();  // agreed: every rank drops the same
    std::vector<int> out;
    int left = 0;
    for (int g = 0; g < batch_; ++g) left += dropped(g) ? 0 : 1;
    if (blown) {
      for (int g = 0; g < batch_; ++g)
        if (!dropped(g) && !std::isfinite(speed[std::size_t(g)])) out.push_back(g);
    } else {
      int fastest = -1;
      for (int g = 0; g < batch_; ++g)
        if (!dropped(g) && (fastest < 0 || speed[std::size_t(g)] > speed[std::size_t(fastest)])) fastest = g;
      if (fastest >= 0) out.push_back(fastest);
    }
    // Nothing to drop, or no member left after: the step's own checks stop the run, as for a
    // single run (the work fields were changed: they are taken again first).
    if (out.empty() || int(out.size()) >= left) {
      evaluation_inputs();
      rate = double(evaluate_products());
      return;
    }
    for (int g : out) {
      drop_member(g);
      report.dropped.push_back(g);
      report.dropped_why.push_back(blown ? "its velocity is not finite"
                                         : fmt::format("it drove dt below time.dt_min (max|u| = {:.6g})",
                                                       speed[std::size_t(g)]));
    }
    evaluation_inputs();
    rate = double(evaluate_products());
  }
}

//! Member g at rest (its state, its stage register and its forcing zero), its budget integrals
//! zero: it stays at rest, adds nothing to the CFL maximum or the budget, and is NaN in every
//! output from now on (mark_dropped).
template <class Real>
void Solver<Real>::drop_member(int g) {
  if (dropped_.empty()) dropped_.assign(std::size_t(batch_), 0);
  dropped_[std::size_t(g)] = 1;
  if (g >= first_ && g < first_ + members_) {
    const std::vector<Cplx> zero(b_.grid().spectral_size(), Cplx{Real(0), Real(0)});
    Buffer<Cplx> s = member(S_, g - first_);
    b_.from_host(zero, s);
    if (!W_.empty()) {
      Buffer<Cplx> w = member(W_, g - first_);
      b_.from_host(zero, w);
    }
    if (forcing_hat_) {
      Buffer<Cplx> f = member(*forcing_hat_, g - first_);
      b_.from_host(zero, f);
    }
  }
  if (rule_.forcing == ForcingKind::WhiteNoise) set_step_forcing();  // it unforced from now on
  BudgetState b = budget();  // gathered: every rank takes part
  std::fill_n(b.members.begin() + std::ptrdiff_t(BudgetState::kTerms) * g, BudgetState::kTerms, 0.0);
  set_budget(b);
  inputs_ready_ = false;
}

//! White noise: each member's base field (this rank's members), none for a dropped one, to the
//! backend, which draws each step's from them (Backend::step_forcing).
template <class Real>
void Solver<Real>::set_step_forcing() {
  std::vector<FieldSpec<Real>> bases;
  std::vector<char> at_rest;
  for (int m = 0; m < members_; ++m)
    std::visit(
        [&](const auto& f) {
          if constexpr (has_base_field<std::decay_t<decltype(f)>>::value) {
            bases.push_back(f.template base_field<Real>(b_.grid()));
            at_rest.push_back(dropped(first_ + m) ? 1 : 0);
          }
        },
        batch_ == 1 ? eq_.forcing : member_eq_[m].forcing);
  b_.set_step_forcing(bases, at_rest);
}

template <class Real>
void Solver<Real>::step_fixed(double dt) {
  if (!inputs_ready_) evaluation_inputs();
  evaluate_products(false);  // no CFL maximum: the step is given
  StepClock k = clock();
  DtChoice c;
  c.dt = dt;
  take_step(k, rule_, c, 0.0, t_);
  advance(k);
  set_clock(k);
}

template <class Real>
std::vector<double> Solver<Real>::member_speeds() {
  inputs_ready_ = false;
  b_.velocity_hat(S_, a_hat_, b_hat_);
  b_.inverse(a_hat_, u_);
  b_.inverse(b_hat_, v_);
  std::vector<double> mine(static_cast<std::size_t>(members_));
  for (int m = 0; m < members_; ++m) mine[std::size_t(m)] = double(b_.max_speed(member(u_, m), member(v_, m)));
  return all_members(mine, 1);  // every member's, on every rank (NaN stays NaN)
}

template <class Real>
std::string Solver<Real>::blown_members() {
  if (batch_ == 1) return "";
  const std::vector<double> speed = member_speeds();
  std::string list;
  int count = 0;
  for (int m = 0; m < batch_; ++m) {
    if (std::isfinite(speed[std::size_t(m)])) continue;
    if (++count <= 8) list += (list.empty() ? "" : ", ") + std::to_string(m);
  }
  if (count > 8) list += fmt::format(" and {} more", count - 8);
  return fmt::format(" in ensemble member{} {} (of {})", count == 1 ? "" : "s", list, batch_);
}

template <class Real>
std::string Solver<Real>::fastest_member() {
  if (batch_ == 1) return "";
  const std::vector<double> speed = member_speeds();
  const std::size_t m = std::size_t(std::max_element(speed.begin(), speed.end()) - speed.begin());
  return fmt::format("; the fastest is ensemble member {} (of {}), max|u| = {:.6g}", m, batch_, speed[m]);
}

// ---------------------------------------------------------------- diagnostics

template <class Real>
std::vector<Diagnostics> Solver<Real>::diagnose_members() {
  std::vector<Diagnostics> rows = all_members(diagnose_local());
  mark_dropped(rows);
  return rows;
}

template <class Real>
std::vector<Diagnostics> Solver<Real>::diagnose_local() {
  inputs_ready_ = false;  // the work fields are about to change, or S is
  const double n2 = double(b_.grid().size()) * double(b_.grid().size());
  // White noise has no instantaneous rate: report the mean over the steps so far (0 before).
  const bool white = rule_.forcing == ForcingKind::WhiteNoise;
  if (white && budget_.interval > 0) budget();  // the integrals, from the backend
  b_.velocity_hat(S_, a_hat_, b_hat_);
  b_.inverse(a_hat_, u_);
  b_.inverse(b_hat_, v_);
  std::vector<Diagnostics> out(static_cast<std::size_t>(members_));
  for (int m = 0; m < members_; ++m) {
    const Buffer<Cplx> f = forcing() ? member(*forcing(), m) : Buffer<Cplx>();
    const SpectralSums s = b_.spectral_sums(linear_of(m), member(S_, m), forcing() ? &f : nullptr);
    Diagnostics& d = out[std::size_t(m)];
    d.step = step_;
    d.t = t_;
    d.energy = s.energy / n2;
    d.enstrophy = s.enstrophy / n2;
    d.palinstrophy = s.palinstrophy / n2;
    d.dissipation_nu = s.diss_nu / n2;
    d.dissipation_mu = s.diss_mu / n2;
    d.dissipation_alpha = s.diss_alpha / n2;
    d.dissipation = d.dissipation_nu + d.dissipation_mu + d.dissipation_alpha;
    d.dissipation_z = s.diss_z / n2;
    d.injection = white ? 0.0 : s.inj / n2;
    d.injection_z = white ? 0.0 : s.inj_z / n2;
    d.max_u = double(b_.max_speed(member(u_, m), member(v_, m)));
    d.max_rate = double(b_.max_rate(member(u_, m), member(v_, m)));  // cfl = dt * max_rate (set_dt)
    if (white && budget_.interval > 0) d.injection = integrals(m)[4] / budget_.interval;
  }
  return out;
}

template <class Real>
std::vector<Diagnostics> Solver<Real>::diagnose_interval_members() {
  std::vector<Diagnostics> out = diagnose_local();
  if (budget_.interval > 0) {
    budget();  // the integrals, from the backend
    for (int m = 0; m < members_; ++m) {
      double* integral = integrals(m);
      if (budget_.open) {  // the last step's end half, at the current state
        const Buffer<Cplx> f = forcing() ? member(*forcing(), m) : Buffer<Cplx>();
        accumulate_budget(integral, b_.spectral_sums(linear_of(m), member(S_, m), forcing() ? &f : nullptr),
                          budget_weights(rule_, 0.5 * budget_.last_dt, false, 0.0));
      }
      const double T = budget_.interval;
      Diagnostics& d = out[std::size_t(m)];
      d.dissipation_nu = integral[0] / T;
      d.dissipation_mu = integral[1] / T;
      d.dissipation_alpha = integral[2] / T;
      d.dissipation = d.dissipation_nu + d.dissipation_mu + d.dissipation_alpha;
      d.dissipation_z = integral[3] / T;
      d.injection = integral[4] / T;
      d.injection_z = integral[5] / T;
    }
  }
  set_budget(BudgetState{});
  std::vector<Diagnostics> rows = all_members(out);
  mark_dropped(rows);
  return rows;
}

template <class Real>
double Solver<Real>::dk() const {
  return b_.grid().shell_width();
}

template <class Real>
std::vector<double> Solver<Real>::shell_centres() const {
  const int shells = int(b_.grid().shell_count());  // bounded by the deck's checks
  std::vector<double> k(shells);
  for (int s = 0; s < shells; ++s) k[s] = s * dk();
  return k;
}

template <class Real>
std::vector<typename Solver<Real>::Spectra> Solver<Real>::spectra_members() {
  const int shells = int(shell_centres().size());
  // The products of the current state, whose transforms give its nonlinear transfer.
  evaluation_inputs();
  evaluate_products(false);
  if (!advective()) b_.natural_products(a_hat_, b_hat_, u_, v_);
  const double n2 = double(b_.grid().size()) * double(b_.grid().size());
  std::vector<Spectra> all(static_cast<std::size_t>(members_));
  for (int m = 0; m < members_; ++m) {
    std::vector<double> sums[4];
    const Buffer<Cplx> a = member(a_hat_, m), b = member(b_hat_, m);
    b_.shell_spectra(member(S_, m), advective(), &a, advective() ? nullptr : &b, dk(), shells, sums);
    Spectra& out = all[std::size_t(m)];
    out.energy.resize(shells);
    out.enstrophy.resize(shells);
    out.flux.resize(shells);
    out.flux_z.resize(shells);
    double pe = 0, pz = 0;
    for (int s = 0; s < shells; ++s) {
      out.energy[s] = sums[0][s] / (n2 * dk());
      out.enstrophy[s] = sums[1][s] / (n2 * dk());
      pe -= sums[2][s] / n2;  // flux through the top of shell s: what the shells up to s lose
      pz -= sums[3][s] / n2;
      out.flux[s] = pe;
      out.flux_z[s] = pz;
    }
  }
  if (!split()) {
    mark_dropped(all);
    return all;
  }
  // Every member's, on every rank: the four spectra of a member in one row of 4 shells.
  std::vector<double> flat;
  for (const Spectra& sp : all)
    for (const std::vector<double>* v : {&sp.energy, &sp.enstrophy, &sp.flux, &sp.flux_z})
      flat.insert(flat.end(), v->begin(), v->end());
  const std::size_t per = 4 * std::size_t(shells);
  const std::vector<double> every = all_members(flat, per);
  std::vector<Spectra> out(static_cast<std::size_t>(batch_));
  for (std::size_t b = 0; b < out.size(); ++b) {
    const double* v = every.data() + b * per;
    Spectra& sp = out[b];
    std::size_t k = 0;
    for (std::vector<double>* to : {&sp.energy, &sp.enstrophy, &sp.flux, &sp.flux_z}) {
      to->assign(v + k * shells, v + (k + 1) * shells);
      ++k;
    }
  }
  mark_dropped(out);
  return out;
}

template <class Real>
void Solver<Real>::mark_dropped(std::vector<Diagnostics>& rows) const {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t g = 0; g < rows.size(); ++g) {
    if (!dropped(int(g))) continue;
    Diagnostics& d = rows[g];
    for (double* x : {&d.energy, &d.enstrophy, &d.palinstrophy, &d.max_u, &d.cfl, &d.max_rate, &d.injection,
                      &d.dissipation, &d.dissipation_nu, &d.dissipation_mu, &d.dissipation_alpha, &d.injection_z,
                      &d.dissipation_z})
      *x = nan;
  }
}

template <class Real>
void Solver<Real>::mark_dropped(std::vector<Spectra>& all) const {
  for (std::size_t g = 0; g < all.size(); ++g)
    if (dropped(int(g)))
      for (std::vector<double>* v : {&all[g].energy, &all[g].enstrophy, &all[g].flux, &all[g].flux_z})
        std::fill(v->begin(), v->end(), std::numeric_limits<double>::quiet_NaN());
}

template class Solver<float>;
template class Solver<double>;

}  // namespace cascade
