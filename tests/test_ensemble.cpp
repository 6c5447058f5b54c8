//! @file Ensembles (ensemble.members > 1): every member stepped in one batch equals the single run
//! of its own deck (member_config) to round-off, on every backend; one dt for the batch, from
//! the CFL maximum over all members; a blow-up, or a step below dt_min, names its member; the
//! CPU and the GPU agree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend_cases.hpp"
#include "cascade/config.hpp"
#include "cascade/solver.hpp"
#include "solver_checks.hpp"

namespace cascade {
namespace {

using test::BackendCase;
using test::deck;

//! Randomly forced (white noise, a ring), random initial fields, viscosity and injection that
//! differ by member: each member's seeds (+ m), forcing and linear operator.
const char* kForcedDeck =
    "grid: {nx: 32}\n"
    "physics: {nu: 1.0e-3, mu: 0.05}\n"
    "forcing: {type: ring, epsilon: 0.2, k_f: 6, dk: 1.5}\n"
    "initial: {type: random, k0: 4, energy: 0.5}\n"
    "ensemble:\n"
    "  members: 3\n"
    "  vary:\n"
    "    physics.nu: [1.0e-3, 4.0e-3, 2.5e-4]\n"
    "    forcing.epsilon: [0.2, 0.05, 0.4]\n"
    "    initial.energy: [0.5, 1.5, 0.25]\n";

//! Fields given at points (Taylor-Green, Kolmogorov), which the members share one transform for.
const char* kPointsDeck =
    "grid: {nx: 32, ny: 48}\n"
    "physics: {nu: 2.0e-3, beta: 0.5}\n"
    "forcing: {type: kolmogorov, amplitude: 0.3, wavenumber: 3}\n"
    "initial: {type: taylor-green, amplitude: 1.0, mode: 2}\n"
    "ensemble:\n"
    "  members: 2\n"
    "  vary:\n"
    "    initial.amplitude: [1.0, 0.3]\n"
    "    forcing.amplitude: [0.3, 0.7]\n"
    "    physics.beta: [0.5, 3.0]\n";

double max_abs_diff(const std::vector<Complex<double>>& a, const std::vector<Complex<double>>& b, std::size_t first,
                    double& scale) {
  double d = 0;
  scale = 0;
  for (std::size_t k = 0; k < b.size(); ++k) {
    const Complex<double> x = a[first + k], y = b[k];
    d = std::max(d, std::hypot(x.re - y.re, x.im - y.im));
    scale = std::max(scale, std::hypot(y.re, y.im));
  }
  return d;
}

template <class Real>
std::vector<Complex<double>> to_double(const std::vector<Complex<Real>>& v) {
  std::vector<Complex<double>> out(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) out[k] = {double(v[k].re), double(v[k].im)};
  return out;
}

class EnsembleOnBackend : public testing::TestWithParam<BackendCase> {};

//! Member m after `steps` fixed steps, and the single run of member_config(c, m), agree to
//! round-off (double) or to single precision's; so do their diagnostics over the interval.
//! `request`: the ensemble's step plan (the GPU's batched pairs and cuFFT callbacks over the batch).
template <class Real>
void members_match_single_runs(BackendKind kind, const Config& c, int steps, double dt, double tol,
                               std::optional<StepRequest> request = std::nullopt) {
  auto b = make_backend<Real>(kind, c.make_grid(), 0, 0, FftPlanning::Estimate, 0, c.ensemble.members);
  Solver<Real> ensemble(*b, c, request);
  ASSERT_EQ(ensemble.members(), c.ensemble.members);
  ensemble.initialise();
  for (int n = 0; n < steps; ++n) ensemble.step_fixed(dt);
  const std::vector<Complex<double>> all = to_double(ensemble.vorticity_hat());
  const std::vector<Diagnostics> rows = ensemble.diagnose_interval_members();
  const std::vector<typename Solver<Real>::Spectra> spectra = ensemble.spectra_members();
  const std::size_t per = c.make_grid().spectral_size();
  ASSERT_EQ(all.size(), per * std::size_t(c.ensemble.members));
  for (int m = 0; m < c.ensemble.members; ++m) {
    SCOPED_TRACE("member " + std::to_string(m));
    const Config one = member_config(c, m);
    auto b1 = make_backend<Real>(kind, one.make_grid());
    Solver<Real> single(*b1, one);
    single.initialise();
    for (int n = 0; n < steps; ++n) single.step_fixed(dt);
    double scale = 0;
    const double diff = max_abs_diff(all, to_double(single.vorticity_hat()), per * std::size_t(m), scale);
    EXPECT_GT(scale, 0.0);
    EXPECT_LE(diff, tol * scale);
    const Diagnostics d = single.diagnose_interval(), e = rows[std::size_t(m)];
    EXPECT_NEAR(e.energy, d.energy, tol * std::abs(d.energy));
    EXPECT_NEAR(e.enstrophy, d.enstrophy, tol * std::abs(d.enstrophy));
    EXPECT_NEAR(e.dissipation, d.dissipation, 10 * tol * std::abs(d.dissipation));
    EXPECT_NEAR(e.injection, d.injection, 10 * tol * std::abs(d.injection) + 1e-300);
    EXPECT_NEAR(e.max_u, d.max_u, tol * d.max_u);
    const typename Solver<Real>::Spectra s = single.spectra();
    ASSERT_EQ(s.energy.size(), spectra[std::size_t(m)].energy.size());
    double e_scale = 0, flux_scale = 0;
    for (std::size_t k = 0; k < s.energy.size(); ++k) {
      e_scale = std::max(e_scale, std::abs(s.energy[k]));
      flux_scale = std::max(flux_scale, std::abs(s.flux[k]));
    }
    // The flux sums the transfer of the shells up to k, which cancel: in single precision the
    // batch's transforms (other plans, callbacks) and the single run's differ by more there.
    const double flux_tol = tol < 1e-9 ? 10 * tol : 1e-3;
    double flux_diff = 0;
    for (std::size_t k = 0; k < s.energy.size(); ++k) {
      EXPECT_NEAR(spectra[std::size_t(m)].energy[k], s.energy[k], tol * e_scale);
      flux_diff = std::max(flux_diff, std::abs(spectra[std::size_t(m)].flux[k] - s.flux[k]));
    }
    EXPECT_LE(flux_diff, flux_tol * flux_scale) << "the flux, relative: " << flux_diff / flux_scale;
  }
}

TEST_P(EnsembleOnBackend, EachMemberIsItsSingleRun) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  const bool dbl = GetParam().precision == Precision::Double;
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    const double tol = dbl ? 1e-12 : 2e-5;
    for (const char* form : {"basdevant", "advective"}) {
      SCOPED_TRACE(form);
      members_match_single_runs<Real>(GetParam().kind, deck(kForcedDeck, {std::string("grid.nonlinear=") + form}), 12,
                                      0.01, tol);
    }
    members_match_single_runs<Real>(GetParam().kind, deck(kPointsDeck, {"time.stepper=rk3"}), 10, 0.02, tol);
    if (GetParam().kind != BackendKind::Cuda) return;
    // The callbacks over a batch: the kept modes stored (and loaded) by batched plans, one field
    // a plan and pairs; complex pairs, each member's in its own full layout; rows and columns,
    // a row of the column kernel's blocks a member.
    for (const auto& [transforms, callbacks] : {std::pair{"plain", "all"}, {"plain-pairs", "store"},
                                               {"plain-pairs", "all"}, {"plain", "off"}, {"complex-pairs", "all"},
                                               {"complex-pairs", "off"}, {"rows-columns", "off"}}) {
      SCOPED_TRACE(std::string(transforms) + " " + callbacks);
      members_match_single_runs<Real>(GetParam().kind, deck(kForcedDeck), 12, 0.01, tol,
                                      step_request_from(transforms, callbacks));
    }
  });
}

//! White noise for every member in one pass (set_step_forcing, step_forcing): member m's is its
//! own base field's draw of the step (RingModes::at_step), filled alone; zero where at rest,
//! whatever was there. On the GPU the step and h come from the step's clock (the numbers given
//! are not read) and a step the clock does not take writes nothing. Base fields of several
//! kinds, without at_step, or too few are refused.
TEST_P(EnsembleOnBackend, StepForcingIsEachMembersOwnDraw) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    using Cplx = Complex<Real>;
    const bool gpu = GetParam().kind == BackendKind::Cuda;
    const int members = 4;
    const long step = 5;
    const double h = 0.0123;
    const Grid g = deck("grid: {nx: 32, ny: 48}\n").make_grid();
    auto batch = make_backend<Real>(GetParam().kind, g, 0, 0, FftPlanning::Estimate, 0, members);
    auto one = make_backend<Real>(GetParam().kind, g, 0, 0, FftPlanning::Estimate, 0, 1);
    std::vector<FieldSpec<Real>> bases;
    for (int m = 0; m < members; ++m)  // seeds and amplitudes that differ
      bases.push_back(RingModes<Real>{6.0, 1.5, 2.0 + m, std::uint64_t(11 + 7 * m), 0, g.ny});
    const std::vector<char> at_rest = {0, 0, 1, 0};
    batch->set_step_forcing(bases, at_rest);
    StepClock k;
    k.step = step + 1;  // the clock has taken the step
    k.h = h;
    Buffer<Cplx> all = batch->spectral_field();
    const std::vector<Cplx> ones(all.size(), Cplx{Real(1), Real(-1)});  // what a member at rest must lose
    batch->from_host(ones, all);
    if (gpu) batch->set_step_clock(k);
    batch->step_forcing(all, gpu ? -7 : step, gpu ? std::nan("") : h);
    std::vector<Cplx> got(all.size());
    batch->to_host(all, got);
    Buffer<Cplx> single = one->spectral_field();
    const std::size_t per = single.size();
    ASSERT_EQ(got.size(), per * members);
    for (int m = 0; m < members; ++m) {
      SCOPED_TRACE("member " + std::to_string(m));
      std::vector<Cplx> want(per, Cplx{Real(0), Real(0)});
      if (!at_rest[std::size_t(m)]) {
        one->fill_modes(std::get<RingModes<Real>>(bases[std::size_t(m)]).at_step(step, h), single);
        one->to_host(single, want);
      }
      double most = 0, err = 0;
      std::size_t nonzero = 0;
      for (std::size_t k2 = 0; k2 < per; ++k2) {
        const Cplx x = got[std::size_t(m) * per + k2], y = want[k2];
        err = std::max(err, std::hypot(double(x.re) - double(y.re), double(x.im) - double(y.im)));
        most = std::max(most, std::hypot(double(y.re), double(y.im)));
        nonzero += (y.re != 0 || y.im != 0) ? 1 : 0;
      }
      // The same arithmetic in another kernel: the same numbers but for a contracted multiply-add.
      EXPECT_LE(err, 4 * std::numeric_limits<Real>::epsilon() * most);
      if (at_rest[std::size_t(m)]) EXPECT_EQ(err, 0.0);
      else EXPECT_GT(nonzero, 0u);  // the ring is not empty on this grid
    }
    if (gpu) {  // a step the clock does not take: nothing written
      k.go = 0;
      batch->set_step_clock(k);
      batch->from_host(ones, all);
      batch->step_forcing(all, step, h);
      batch->to_host(all, got);
      EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](const Cplx& z) { return z.re == Real(1) && z.im == Real(-1); }));
    }
    std::vector<FieldSpec<Real>> mixed = bases;
    mixed[1] = McWilliamsModes<Real>{5.0, 3, g.ny};
    EXPECT_THROW(batch->set_step_forcing(mixed, at_rest), RunError);
    EXPECT_THROW(batch->set_step_forcing(std::vector<FieldSpec<Real>>(members, McWilliamsModes<Real>{5.0, 3, g.ny}), at_rest),
                 RunError);
    EXPECT_THROW(batch->set_step_forcing({bases[0]}, {0}), RunError);  // 1 field, 4 members
  });
}

//! ensemble.members: 1 is the single run, bit for bit (the same deck without the section).
TEST_P(EnsembleOnBackend, OneMemberIsTheSingleRunBitForBit) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    const std::string plain = "grid: {nx: 32}\nphysics: {nu: 1.0e-3}\nforcing: {type: ring, epsilon: 0.2, k_f: 6}\n"
                              "initial: {type: random, k0: 4}\n";
    std::vector<Complex<Real>> out[2];
    std::vector<Diagnostics> rows[2];
    const std::string decks[2] = {plain, plain + "ensemble: {members: 1}\n"};
    for (int k = 0; k < 2; ++k) {
      const Config c = deck(decks[k]);
      auto b = make_backend<Real>(GetParam().kind, c.make_grid(), 0, 0, FftPlanning::Estimate, 0, c.ensemble.members);
      Solver<Real> s(*b, c);
      s.initialise();
      for (int n = 0; n < 10; ++n) s.step(1.0);
      out[k] = s.vorticity_hat();
      rows[k] = s.diagnose_interval_members();
    }
    ASSERT_EQ(out[0].size(), out[1].size());
    for (std::size_t i = 0; i < out[0].size(); ++i)
      ASSERT_TRUE(out[0][i].re == out[1][i].re && out[0][i].im == out[1][i].im) << i;
    ASSERT_EQ(rows[1].size(), 1u);
    EXPECT_EQ(rows[0][0].energy, rows[1][0].energy);
    EXPECT_EQ(rows[0][0].dissipation, rows[1][0].dissipation);
    EXPECT_EQ(rows[0][0].injection, rows[1][0].injection);
  });
}

//! One dt for the batch: the CFL rate of a step is the largest of the members', and every
//! member moves with the dt that rate gives (they stay in lockstep).
TEST_P(EnsembleOnBackend, OneDtFromTheLargestMember) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    const Config c = deck(kForcedDeck, {"time.dt_max=1", "time.growth=100"});
    auto b = make_backend<Real>(GetParam().kind, c.make_grid(), 0, 0, FftPlanning::Estimate, 0, c.ensemble.members);
    Solver<Real> ensemble(*b, c);
    ensemble.initialise();
    const StepReport r = ensemble.step(1.0);
    double largest = 0;
    for (int m = 0; m < c.ensemble.members; ++m) {
      const Config one = member_config(c, m);
      auto b1 = make_backend<Real>(GetParam().kind, one.make_grid());
      Solver<Real> single(*b1, one);
      single.initialise();
      largest = std::max(largest, single.step(1.0).cfl_rate);
    }
    const double tol = GetParam().precision == Precision::Double ? 1e-12 : 1e-5;
    EXPECT_NEAR(r.cfl_rate, largest, tol * largest);
    EXPECT_NEAR(r.dt, c.time.cfl / largest, tol * r.dt);
    EXPECT_EQ(r.limit, DtLimit::Cfl);
  });
}

//! Each member's own CFL number (the diagnostics' cfl): the batch's dt times the member's own
//! max(|u|/dx + |v|/dy). Members of energies 0.5, 2 and 1/8 (ensemble.vary initial.energy): the
//! most energetic drives dt and sees about time.cfl, the others less; each one's cfl is dt times
//! the rate of its own fields (solver.field("u"), field("v"), taken on the host).
TEST_P(EnsembleOnBackend, EachMemberHasItsOwnCfl) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  const bool dbl = GetParam().precision == Precision::Double;
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    const Config c = deck(
        "grid: {nx: 32, ny: 48}\n"
        "physics: {nu: 1.0e-3}\n"
        "initial: {type: random, k0: 4, energy: 0.5}\n"
        "time: {cfl: 0.25, dt_max: 1, growth: 100}\n"
        "ensemble:\n"
        "  members: 3\n"
        "  vary:\n"
        "    initial.energy: [0.5, 2.0, 0.125]\n");
    const Grid g = c.make_grid();
    auto b = make_backend<Real>(GetParam().kind, g, 0, 0, FftPlanning::Estimate, 0, c.ensemble.members);
    Solver<Real> ensemble(*b, c);
    ensemble.initialise();
    for (const Diagnostics& d : ensemble.diagnose_members()) EXPECT_EQ(d.cfl, 0.0) << "the first row";
    const double tol = dbl ? 1e-12 : 1e-5;
    for (int n = 0; n < 3; ++n) {
      SCOPED_TRACE("step " + std::to_string(n + 1));
      const StepReport r = ensemble.step(1e9);
      ASSERT_EQ(r.limit, DtLimit::Cfl);
      std::vector<Diagnostics> rows = ensemble.diagnose_members();
      ASSERT_EQ(rows.size(), 3u);
      const std::vector<Real> u = ensemble.field("u"), v = ensemble.field("v");
      ASSERT_EQ(u.size(), 3 * g.size());
      for (std::size_t m = 0; m < rows.size(); ++m) {
        rows[m].set_dt(r.dt);
        double rate = 0;
        for (std::size_t k = m * g.size(); k < (m + 1) * g.size(); ++k)
          rate = std::max(rate, std::abs(double(u[k])) / g.dx() + std::abs(double(v[k])) / g.dy());
        EXPECT_NEAR(rows[m].cfl, r.dt * rate, tol * r.dt * rate) << "member " << m;
      }
      EXPECT_NEAR(rows[1].cfl, c.time.cfl, 0.03 * c.time.cfl) << "member 1 drives dt";
      EXPECT_LT(rows[0].cfl, 0.8 * c.time.cfl);
      EXPECT_LT(rows[2].cfl, rows[0].cfl);
    }
  });
}

//! A member whose velocity is not finite stops the batch, and the message names it.
TEST_P(EnsembleOnBackend, BlowUpNamesTheMember) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    const Config c = deck(kForcedDeck);
    auto b = make_backend<Real>(GetParam().kind, c.make_grid(), 0, 0, FftPlanning::Estimate, 0, c.ensemble.members);
    Solver<Real> ensemble(*b, c);
    ensemble.initialise();
    std::vector<Complex<Real>> state = ensemble.vorticity_hat();
    const std::size_t per = c.make_grid().spectral_size();
    state[2 * per + 5] = {Real(NAN), Real(0)};  // member 2, a kept mode (kx = 5, ky = 0)
    ensemble.set_vorticity_hat(state);
    try {
      ensemble.step(1.0);
      FAIL() << "no blow-up";
    } catch (const BlowUp& e) {
      EXPECT_NE(std::string(e.what()).find("in ensemble member 2 (of 3)"), std::string::npos) << e.what();
    }
  });
}

//! A time step below dt_min stops the batch, and the message names the member that drives it
//! (the largest max|u|).
TEST_P(EnsembleOnBackend, DtBelowDtMinNamesTheFastestMember) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    const Config c = deck(kForcedDeck, {"time.dt_max=1", "time.dt_min=0.9"});
    auto b = make_backend<Real>(GetParam().kind, c.make_grid(), 0, 0, FftPlanning::Estimate, 0, c.ensemble.members);
    Solver<Real> ensemble(*b, c);
    ensemble.initialise();
    const std::vector<Diagnostics> rows = ensemble.diagnose_members();
    std::size_t fastest = 0;
    for (std::size_t m = 1; m < rows.size(); ++m)
      if (rows[m].max_u > rows[fastest].max_u) fastest = m;
    try {
      ensemble.step(1.0);
      FAIL() << "no stop";
    } catch (const BlowUp& e) {
      const std::string want = "the fastest is ensemble member " + std::to_string(fastest) + " (of 3)";
      EXPECT_NE(std::string(e.what()).find("time step below dt_min"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  });
}

//! ensemble.on_blowup: drop. A member whose velocity is not finite at the start of a step is set
//! to rest and left out; the others go on as their single runs; the dropped one is NaN in every
//! output, and its NaN state in a checkpoint keeps it dropped on a restart (or stops the run
//! with on_blowup: stop).
TEST_P(EnsembleOnBackend, DropLeavesABlownMemberOut) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  const bool dbl = GetParam().precision == Precision::Double;
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    using Cplx = Complex<Real>;
    const Config c = deck(kForcedDeck, {"ensemble.on_blowup=drop", "time.dt_min=1e-200", "time.dt_max=0.02"});
    const std::size_t per = c.make_grid().spectral_size();
    auto b = make_backend<Real>(GetParam().kind, c.make_grid(), 0, 0, FftPlanning::Estimate, 0, c.ensemble.members);
    Solver<Real> ensemble(*b, c);
    ensemble.initialise();
    // Member 2 finite but so strong that its products overflow: its state is not finite after
    // the first step, and the second finds it so.
    std::vector<Cplx> state = ensemble.vorticity_hat();
    const Real big = dbl ? Real(1e160) : Real(1e20);
    for (std::size_t k = 2 * per; k < 3 * per; ++k) state[k] = {state[k].re * big, state[k].im * big};
    ensemble.set_vorticity_hat(state);
    ASSERT_FALSE(ensemble.dropped(2));
    // It is dropped at the first step whose CFL maximum is not finite: the second (from u and
    // v, not finite after the first step's products overflowed), or the first where the
    // maximum is taken from the products (complex pairs, an ensemble's plan on a GPU).
    std::vector<double> dts;
    int dropped_at = -1;
    for (int n = 0; n < 8; ++n) {
      const StepReport r = ensemble.step(1.0);
      dts.push_back(r.dt);
      if (r.dropped.empty()) continue;
      EXPECT_EQ(dropped_at, -1) << "dropped twice";
      dropped_at = n;
      ASSERT_EQ(r.dropped, std::vector<int>{2});
      EXPECT_EQ(r.dropped_why, std::vector<std::string>{"its velocity is not finite"});
    }
    EXPECT_TRUE(dropped_at == 0 || dropped_at == 1) << dropped_at;
    EXPECT_TRUE(ensemble.dropped(2));
    std::vector<Diagnostics> rows = ensemble.diagnose_members();
    for (Diagnostics& d : rows) d.set_dt(dts.back());
    EXPECT_TRUE(std::isnan(rows[2].energy) && std::isnan(rows[2].cfl));
    EXPECT_TRUE(std::isfinite(rows[0].energy) && std::isfinite(rows[1].energy));
    EXPECT_TRUE(rows[0].cfl > 0 && rows[1].cfl > 0);
    const std::vector<Real> omega = ensemble.vorticity();
    const std::size_t points = c.make_grid().size();
    EXPECT_TRUE(std::isnan(double(omega[2 * points])) && std::isfinite(double(omega[points])));
    const std::vector<Complex<double>> all = to_double(ensemble.vorticity_hat());
    EXPECT_TRUE(std::isnan(all[2 * per].re));
    // Members 0 and 1: their single runs at the batch's steps.
    for (int m = 0; m < 2; ++m) {
      SCOPED_TRACE("member " + std::to_string(m));
      const Config one = member_config(c, m);
      auto b1 = make_backend<Real>(GetParam().kind, one.make_grid());
      Solver<Real> single(*b1, one);
      single.initialise();
      for (double dt : dts) single.step_fixed(dt);
      double scale = 0;
      const double diff = max_abs_diff(all, to_double(single.vorticity_hat()), per * std::size_t(m), scale);
      EXPECT_LE(diff, (dbl ? 1e-12 : 2e-5) * scale);
    }
    // A restart from that state: member 2 stays dropped (drop), or stops the run (stop).
    const std::vector<Cplx> saved = ensemble.vorticity_hat();
    Solver<Real> again(*b, c);
    again.initialise();
    again.set_vorticity_hat(saved);
    EXPECT_TRUE(again.dropped(2));
    EXPECT_TRUE(again.step(1.0).dropped.empty());
    const Config stop = deck(kForcedDeck, {"time.dt_min=1e-200", "time.dt_max=0.02"});
    Solver<Real> stopping(*b, stop);
    stopping.initialise();
    stopping.set_vorticity_hat(saved);
    EXPECT_FALSE(stopping.dropped(2));
    try {
      stopping.step(1.0);
      FAIL() << "no stop";
    } catch (const BlowUp& e) {
      EXPECT_NE(std::string(e.what()).find("in ensemble member 2 (of 3)"), std::string::npos) << e.what();
    }
  });
}

//! on_blowup: drop where a member drives dt below dt_min: the fastest member goes, the others
//! step with the dt they give; when none would be left, the run stops as a single run does.
TEST_P(EnsembleOnBackend, DropTheMemberThatDrivesDtBelowDtMin) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    const Config base = deck(kForcedDeck, {"time.dt_max=1", "time.growth=100"});
    std::vector<double> rate;
    for (int m = 0; m < base.ensemble.members; ++m) {
      const Config one = member_config(base, m);
      auto b1 = make_backend<Real>(GetParam().kind, one.make_grid());
      Solver<Real> single(*b1, one);
      single.initialise();
      rate.push_back(single.step(1.0).cfl_rate);
    }
    std::vector<double> sorted = rate;
    std::sort(sorted.begin(), sorted.end());
    const int fastest = int(std::max_element(rate.begin(), rate.end()) - rate.begin());
    // dt_min between the fastest member's dt and the next one's.
    const double dt_min = 0.5 * (base.time.cfl / sorted[2] + base.time.cfl / sorted[1]);
    const Config c = deck(kForcedDeck, {"time.dt_max=1", "time.growth=100", "ensemble.on_blowup=drop",
                                        "time.dt_min=" + std::to_string(dt_min)});
    auto b = make_backend<Real>(GetParam().kind, c.make_grid(), 0, 0, FftPlanning::Estimate, 0, c.ensemble.members);
    Solver<Real> ensemble(*b, c);
    ensemble.initialise();
    const StepReport r = ensemble.step(1.0);
    ASSERT_EQ(r.dropped, std::vector<int>{fastest});
    ASSERT_EQ(r.dropped_why.size(), 1u);
    EXPECT_NE(r.dropped_why[0].find("it drove dt below time.dt_min"), std::string::npos) << r.dropped_why[0];
    const double tol = GetParam().precision == Precision::Double ? 1e-12 : 1e-5;
    EXPECT_NEAR(r.dt, c.time.cfl / sorted[1], tol * r.dt);
    // dt_min above every member's dt: the last one is kept, and the run stops.
    const Config none = deck(kForcedDeck, {"time.dt_max=1", "time.dt_min=0.9", "ensemble.on_blowup=drop"});
    Solver<Real> stopping(*b, none);
    stopping.initialise();
    try {
      stopping.step(1.0);
      FAIL() << "no stop";
    } catch (const BlowUp& e) {
      EXPECT_NE(std::string(e.what()).find("time step below dt_min"), std::string::npos) << e.what();
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Backends, EnsembleOnBackend, testing::ValuesIn(test::all_backend_cases()), test::case_name);

//! The GPU's batch and the CPU's agree to round-off in double.
TEST(Ensemble, CpuAndGpuAgree) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  const Config c = deck(kForcedDeck);
  std::vector<Complex<double>> out[2];
  const BackendKind kinds[2] = {BackendKind::Cpu, BackendKind::Cuda};
  for (int k = 0; k < 2; ++k) {
    auto b = make_backend<double>(kinds[k], c.make_grid(), 0, 0, FftPlanning::Estimate, 0, c.ensemble.members);
    Solver<double> s(*b, c);
    s.initialise();
    while (s.time() < 0.2) s.step(0.2);
    out[k] = s.vorticity_hat();
  }
  double scale = 0;
  const double diff = max_abs_diff(out[0], out[1], 0, scale);
  EXPECT_LE(diff, 1e-10 * scale);
}

//! Rows and columns over a batch of `members` grids of n^2 against complex pairs (cuFFT) in
//! double, ten fixed steps, the members `check` compared.
void rows_and_columns_batch_agrees(int n, int members, std::initializer_list<int> check) {
  std::string nu = "[", energy = "[";
  for (int m = 0; m < members; ++m) {
    nu += (m ? ", " : "") + std::to_string(1e-3 * (1 + m % 5));
    energy += (m ? ", " : "") + std::to_string(0.25 + 0.01 * m);
  }
  const Config c = deck("grid: {nx: " + std::to_string(n) + "}\nphysics: {nu: 1.0e-3}\n"
                        "forcing: {type: kolmogorov, amplitude: 0.5, wavenumber: 4}\n"
                        "initial: {type: random, k0: 6, energy: 0.5}\n"
                        "ensemble:\n  members: " +
                        std::to_string(members) + "\n  vary:\n    physics.nu: " + nu + "]\n    initial.energy: " +
                        energy + "]\n");
  std::vector<Complex<double>> out[2];
  const char* transforms[2] = {"rows-columns", "complex-pairs"};
  for (int k = 0; k < 2; ++k) {
    auto b = make_backend<double>(BackendKind::Cuda, c.make_grid(), 0, 0, FftPlanning::Estimate, 0, members);
    Solver<double> s(*b, c, step_request_from(transforms[k], "off"));
    s.initialise();
    EXPECT_EQ(b->step_plan().strategy, k == 0 ? StepStrategy::RowsColumns : StepStrategy::ComplexPairs);
    for (int step = 0; step < 10; ++step) s.step_fixed(0.005);
    out[k] = s.vorticity_hat();
  }
  ASSERT_EQ(out[0].size(), out[1].size());
  const std::size_t per = out[0].size() / members;
  for (int m : check) {
    SCOPED_TRACE("member " + std::to_string(m));
    double scale = 0;
    const std::vector<Complex<double>> one(out[1].begin() + std::ptrdiff_t(per * m),
                                           out[1].begin() + std::ptrdiff_t(per * (m + 1)));
    const double diff = max_abs_diff(out[0], one, per * std::size_t(m), scale);
    EXPECT_GT(scale, 0.0);
    EXPECT_LE(diff, 1e-12 * scale);
  }
}

//! Rows and columns over a batch that fills the GPU: 128 members of 128^2, whose rows (16,384)
//! and column tiles (5,504) are more than the narrow blocks take, so that the kernels of
//! constant size run their stages in radix 16 (a single run of this size takes radix 4:
//! row_kernel_eval.cuh, column_kernel_eval.cuh); and 8 members of 512^2, whose rows (4,096) and
//! columns of 512 points run in radix 8.
TEST(Ensemble, LargeBatchOfRowsAndColumnsAgreesWithComplexPairs) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  rows_and_columns_batch_agrees(128, 128, {0, 1, 63, 127});
  rows_and_columns_batch_agrees(512, 8, {0, 3, 7});
}

}  // namespace
}  // namespace cascade
