//! @file The vorticity equation against exact and independent results, on every backend:
//! Taylor-Green decay, analytic integrals, a manufactured steady state, Rossby waves,
//! inviscid conservation, convergence order, the two nonlinear forms, the energy budget, the
//! time-step loop, and single precision (the step's evaluation paths: test_step_paths.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <memory>
#include <functional>

#include "backend_cases.hpp"
#include "cascade/config.hpp"
#include "cascade/error.hpp"
#include "cascade/solver.hpp"
#include "kernels/ns_ops.cuh"
#include "solver_checks.hpp"

namespace cascade {
namespace {

using test::BackendCase;

constexpr double kRoundOff = 1e-12;       // double-precision agreement of exact results
constexpr double kIntegralTol = 1e-13;    // analytic integrals

using test::deck;
using test::rel_l2;

template <class Real>
std::vector<Real> sample(const Grid& g, const std::function<double(double, double)>& f) {
  std::vector<Real> out(g.size());
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) out[std::size_t(j) * g.nx + i] = Real(f(g.x(i), g.y(j)));
  return out;
}

class SolverOnBackend : public testing::TestWithParam<BackendCase> {
 protected:
  bool is_double() const { return GetParam().precision == Precision::Double; }
};

// ---------------------------------------------------------------- Taylor-Green

TEST_P(SolverOnBackend, TaylorGreenDecaysExactly) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    for (const char* stepper : {"rk4", "rk3"})
      for (const char* form : {"basdevant", "advective"}) {
        SCOPED_TRACE(std::string(stepper) + " " + form);
        const Config c = deck("grid: {nx: 64}\nphysics: {nu: 0.01}\ninitial: {type: taylor-green}\n"
                              "time: {t_end: 10, dt_max: 0.05}\n",
                              {std::string("time.stepper=") + stepper, std::string("grid.nonlinear=") + form});
        auto b = make_backend<Real>(GetParam().kind, c.make_grid());
        Solver<Real> s(*b, c);
        s.initialise();
        while (s.time() < 10) s.step(10.0);
        EXPECT_DOUBLE_EQ(s.time(), 10.0);
        const Diagnostics d = s.diagnose();
        const double decay = std::exp(-4 * 0.01 * 10);
        // Single precision: the decay factor rounds alike every step (about 2e-5 after 200).
        const double tol = is_double() ? kRoundOff : 1e-4;
        EXPECT_NEAR(d.energy / (0.25 * decay), 1.0, tol);
        EXPECT_NEAR(d.enstrophy / (0.5 * decay), 1.0, tol);
        EXPECT_NEAR(d.palinstrophy / (1.0 * decay), 1.0, tol);  // P = 1/2 <|grad w|^2> = 1
      }
  });
}

// ---------------------------------------------------------------- analytic integrals

TEST_P(SolverOnBackend, AnalyticIntegralsOnRectangularBox) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    // Box 2pi x 3pi; psi = sin(2x) cos(2y') + 2 sin(x) cos(3y'), y' = 2y/3:
    // E = 29/9, Z = 2701/162, P = 126277/1458 exactly.
    const Config c = deck("grid: {nx: 64, ny: 96, lx: 2pi, ly: 3pi}\n");
    const Grid g = c.make_grid();
    auto b = make_backend<Real>(GetParam().kind, g);
    Solver<Real> s(*b, c);
    s.set_vorticity(sample<Real>(g, [](double x, double y) {
      return 52.0 / 9 * std::sin(2 * x) * std::cos(4 * y / 3) + 10 * std::sin(x) * std::cos(2 * y);
    }));
    const Diagnostics d = s.diagnose();
    const double tol = is_double() ? kIntegralTol : 2e-6;
    EXPECT_NEAR(d.energy / (29.0 / 9), 1.0, tol);
    EXPECT_NEAR(d.enstrophy / (2701.0 / 162), 1.0, tol);
    EXPECT_NEAR(d.palinstrophy / (126277.0 / 1458), 1.0, tol);
    // max|u|: u = psi_y, v = -psi_x sampled on the grid; the spectral value must match it.
    double umax = 0;
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const double x = g.x(i), y = g.y(j);
        const double u = -4.0 / 3 * std::sin(2 * x) * std::sin(4 * y / 3) - 4 * std::sin(x) * std::sin(2 * y);
        const double v = -(2 * std::cos(2 * x) * std::cos(4 * y / 3) + 2 * std::cos(x) * std::cos(2 * y));
        umax = std::max(umax, std::hypot(u, v));
      }
    EXPECT_NEAR(d.max_u / umax, 1.0, is_double() ? 1e-12 : 1e-5);
  });
}

// ---------------------------------------------------------------- manufactured steady state

// psi = sin(x) sin(2y) + 0.5 cos(2x + 3y) is steady under the forcing F = D omega + u.grad omega
// (friction and viscosity included): the nonlinear term must cancel the forcing's Jacobian
// part exactly. Lawson's integrating-factor schemes do not keep an equilibrium of the full
// equation exactly: their error on it is O(dt^p |L|^(p+1)) per unit time (measured: 1.6e-11
// for rk4 and 3.7e-9 for rk3 at dt = 0.01 with D ~ 0.2, falling as dt^4 and dt^3). With weak
// damping (D ~ 0.02) and dt = 0.01 (rk4) or 0.002 (rk3) it is below 1e-12, so the test sees
// the nonlinear term.
struct Manufactured {
  double nu = 1e-3, mu = 5e-3;
  static double psi(double x, double y) { return std::sin(x) * std::sin(2 * y) + 0.5 * std::cos(2 * x + 3 * y); }
  static double omega(double x, double y) {
    return 5 * std::sin(x) * std::sin(2 * y) + 0.5 * 13 * std::cos(2 * x + 3 * y);
  }
  static double u(double x, double y) { return 2 * std::sin(x) * std::cos(2 * y) - 1.5 * std::sin(2 * x + 3 * y); }
  static double v(double x, double y) { return -(std::cos(x) * std::sin(2 * y) - std::sin(2 * x + 3 * y)); }
  static double wx(double x, double y) { return 5 * std::cos(x) * std::sin(2 * y) - 13 * std::sin(2 * x + 3 * y); }
  static double wy(double x, double y) {
    return 10 * std::sin(x) * std::cos(2 * y) - 0.5 * 13 * 3 * std::sin(2 * x + 3 * y);
  }
  double forcing(double x, double y) const {
    const double damp = nu * (5 * 5 * std::sin(x) * std::sin(2 * y) + 0.5 * 13 * 13 * std::cos(2 * x + 3 * y)) +
                        mu * omega(x, y);
    return damp + u(x, y) * wx(x, y) + v(x, y) * wy(x, y);
  }
};

TEST_P(SolverOnBackend, ManufacturedSteadyStateStaysSteady) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  if (!is_double()) GTEST_SKIP() << "a round-off test: double precision only";
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    const Manufactured m;
    for (const char* stepper : {"rk4", "rk3"})
      for (const char* form : {"basdevant", "advective"}) {
        SCOPED_TRACE(std::string(stepper) + " " + form);
        // rk3's equilibrium error (4e-11 at dt = 0.01, order 3) needs the smaller step.
        const std::string dt_max = std::string(stepper) == "rk4" ? "0.01" : "0.002";
        const Config c = deck("grid: {nx: 64}\nphysics: {nu: 1e-3, mu: 5e-3}\n",
                              {std::string("time.stepper=") + stepper, std::string("grid.nonlinear=") + form,
                               "time.dt_max=" + dt_max});
        const Grid g = c.make_grid();
        auto b = make_backend<Real>(GetParam().kind, g);
        Solver<Real> s(*b, c);
        const auto w0 = sample<Real>(g, Manufactured::omega);
        s.set_vorticity(w0);
        s.set_forcing(sample<Real>(g, [&](double x, double y) { return m.forcing(x, y); }));
        // The forcing cancels the tendency: N(omega) + F - D omega = 0 at the state.
        while (s.time() < 1.0) s.step(1.0);
        EXPECT_LT(rel_l2(s.vorticity(), w0), kRoundOff);
      }
  });
}

// A single Rossby wave psi = cos(k.x - w t), w = -beta kx / k^2, is an exact solution (its
// Jacobian vanishes); the integrating factor carries the phase exactly.
TEST_P(SolverOnBackend, RossbyWavePropagatesExactly) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    // A weak wave (U k^2 / beta ~ 0.03): linear dynamics dominate, so the triad instability of
    // a finite-amplitude Rossby wave does not amplify round-off within the test's time.
    const double beta = 5.0, kx = 2, ky = 3, k2 = kx * kx + ky * ky, freq = -beta * kx / k2, nu = 0.003, amp = 0.01;
    const Config c = deck("grid: {nx: 64}\nphysics: {beta: 5.0, nu: 0.003}\ntime: {dt_max: 0.05}\n");
    const Grid g = c.make_grid();
    auto b = make_backend<Real>(GetParam().kind, g);
    Solver<Real> s(*b, c);
    s.set_vorticity(sample<Real>(g, [&](double x, double y) { return amp * k2 * std::cos(kx * x + ky * y); }));
    const double t_end = 5;
    while (s.time() < t_end) s.step(t_end);
    const auto want = sample<Real>(g, [&](double x, double y) {
      return amp * k2 * std::exp(-nu * k2 * t_end) * std::cos(kx * x + ky * y - freq * t_end);
    });
    EXPECT_LT(rel_l2(s.vorticity(), want), is_double() ? kRoundOff : 1e-5);
  });
}

// ---------------------------------------------------------------- conservation and order

// Inviscid, dealiased: the Galerkin system conserves E and Z exactly, so their change comes
// from the time stepping alone and must shrink with dt at (at least) the stepper's order. On
// the imaginary axis |R(iz)|^2 = 1 - z^6/72 + ... for RK4 and 1 - z^4/12 + ... for RK3, so
// the loss per unit time falls as dt^5 and dt^3. Its size is set by the modes at the
// truncation, where the inviscid cascade piles up enstrophy: measured at cfl = 0.3 over 1000
// steps, E changes by 3e-6 and Z by 6e-5 with rk4 (6e-4 and 9e-3 with rk3); the bounds below
// leave a factor of 3.
TEST_P(SolverOnBackend, InviscidConservationShrinksWithDt) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  if (!is_double()) GTEST_SKIP() << "a conservation-order test: double precision only";
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    for (const char* stepper : {"rk4", "rk3"}) {
      SCOPED_TRACE(stepper);
      const Config c = deck("grid: {nx: 128}\ninitial: {type: random, k0: 6, energy: 0.5, seed: 3}\n",
                            {std::string("time.stepper=") + stepper});
      auto b = make_backend<Real>(GetParam().kind, c.make_grid());
      double change[2][2] = {};
      double dt0 = 0;
      for (int refine = 0; refine < 2; ++refine) {
        Solver<Real> s(*b, c);
        s.initialise();
        const Diagnostics d0 = s.diagnose();
        if (refine == 0) {
          dt0 = 0.3 / s.step(1e9).cfl_rate;  // cfl = 0.3 on the initial field, then fixed
          s.initialise();
        }
        const int steps = refine == 0 ? 1000 : 2000;
        const double dt = refine == 0 ? dt0 : dt0 / 2;
        for (int n = 0; n < steps; ++n) s.step_fixed(dt);
        const Diagnostics d1 = s.diagnose();
        change[refine][0] = std::abs(d1.energy / d0.energy - 1);
        change[refine][1] = std::abs(d1.enstrophy / d0.enstrophy - 1);
      }
      const bool rk4 = std::string(stepper) == "rk4";
      const int order = rk4 ? 4 : 3;
      const double bound[2] = {rk4 ? 1e-5 : 2e-3, rk4 ? 2e-4 : 3e-2};
      for (int q = 0; q < 2; ++q) {
        EXPECT_LT(change[0][q], bound[q]) << (q ? "Z" : "E") << " at cfl = 0.3";
        const double observed = std::log2(change[0][q] / change[1][q]);
        EXPECT_GT(observed, order - 0.3) << (q ? "Z" : "E") << ": change " << change[0][q] << " -> "
                                         << change[1][q];
      }
    }
  });
}

TEST_P(SolverOnBackend, ConvergenceOrderOnNonlinearFlow) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  if (!is_double()) GTEST_SKIP() << "an order test: double precision only";
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    for (const char* stepper : {"rk4", "rk3"}) {
      SCOPED_TRACE(stepper);
      const Config c = deck("grid: {nx: 64}\nphysics: {nu: 0.005, mu: 0.05, beta: 1}\n"
                            "initial: {type: random, k0: 4, energy: 0.5, seed: 5}\n",
                            {std::string("time.stepper=") + stepper});
      auto b = make_backend<Real>(GetParam().kind, c.make_grid());
      const double t_end = 1.0;
      std::vector<std::vector<Real>> w;
      for (int steps : {200, 400, 800}) {
        Solver<Real> s(*b, c);
        s.initialise();
        for (int n = 0; n < steps; ++n) s.step_fixed(t_end / steps);
        w.push_back(s.vorticity());
      }
      const double e1 = rel_l2(w[0], w[1]), e2 = rel_l2(w[1], w[2]);
      const double observed = std::log2(e1 / e2);
      const double order = std::string(stepper) == "rk4" ? 4 : 3;
      EXPECT_NEAR(observed, order, 0.3) << "differences " << e1 << ", " << e2;
    }
  });
}

TEST_P(SolverOnBackend, AdvectiveAndBasdevantFormsAgree) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    std::vector<std::vector<Real>> w;
    for (const char* form : {"basdevant", "advective"}) {
      const Config c = deck("grid: {nx: 128, ny: 96, lx: 2pi, ly: 1.5pi}\nphysics: {nu: 1e-3}\n"
                            "initial: {type: random, k0: 8, seed: 11}\n",
                            {std::string("grid.nonlinear=") + form});
      auto b = make_backend<Real>(GetParam().kind, c.make_grid());
      Solver<Real> s(*b, c);
      s.initialise();
      for (int n = 0; n < 20; ++n) s.step_fixed(2e-3);
      w.push_back(s.vorticity());
    }
    EXPECT_LT(rel_l2(w[1], w[0]), is_double() ? kRoundOff : 1e-5);
  });
}

// dE/dt = -dissipation + injection, with dissipation = 2 nu Z + 2 mu E for p = 1, from the
// recorded series (central differences: second order in the sampling interval).
TEST_P(SolverOnBackend, EnergyBudgetCloses) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  if (!is_double()) GTEST_SKIP() << "a budget test: double precision only";
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    const Config c = deck("grid: {nx: 64}\nphysics: {nu: 0.01, mu: 0.1}\n"
                          "forcing: {type: kolmogorov, amplitude: 1, wavenumber: 2}\n"
                          "initial: {type: random, k0: 4, energy: 0.2, seed: 2}\n");
    auto b = make_backend<Real>(GetParam().kind, c.make_grid());
    Solver<Real> s(*b, c);
    s.initialise();
    const double dt = 2e-3;
    std::vector<Diagnostics> series;
    for (int n = 0; n <= 200; ++n) {
      series.push_back(s.diagnose());
      s.step_fixed(dt);
    }
    double worst = 0, scale = 0;
    for (std::size_t n = 1; n + 1 < series.size(); ++n) {
      const Diagnostics& d = series[n];
      EXPECT_NEAR(d.dissipation, 2 * 0.01 * d.enstrophy + 2 * 0.1 * d.energy, 1e-12 * d.dissipation);
      const double dEdt = (series[n + 1].energy - series[n - 1].energy) / (2 * dt);
      worst = std::max(worst, std::abs(dEdt - (d.injection - d.dissipation)));
      scale = std::max(scale, std::abs(d.injection) + std::abs(d.dissipation));
    }
    EXPECT_GT(series.back().injection, 0.0) << "the forcing must inject energy";
    EXPECT_LT(worst / scale, 1e-4) << "budget residual relative to the largest term";
  });
}

// The diagnostics' cfl: dt times max(|u|/dx + |v|/dy) of the state at the row's time. After a
// step the CFL bound set (dt = time.cfl / the rate at the step's start) it is time.cfl to the
// rate's change over the step, and it is dt times the rate of solver.field("u"), field("v")
// taken on the host, on a box whose dx and dy differ.
TEST_P(SolverOnBackend, CflIsDtTimesTheStatesRate) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    const Config c = deck("grid: {nx: 64, ny: 48, lx: 2pi, ly: 3pi}\nphysics: {nu: 1.0e-3}\n"
                          "initial: {type: random, k0: 4, energy: 0.5, seed: 3}\n"
                          "time: {cfl: 0.5, dt_max: 1, growth: 100}\n");
    const Grid g = c.make_grid();
    auto b = make_backend<Real>(GetParam().kind, g);
    Solver<Real> s(*b, c);
    s.initialise();
    Diagnostics d = s.diagnose();
    EXPECT_EQ(d.cfl, 0.0) << "the first row: no step yet";
    const double tol = is_double() ? 1e-12 : 1e-5;
    for (int n = 0; n < 3; ++n) {
      SCOPED_TRACE("step " + std::to_string(n + 1));
      const StepReport r = s.step(1e9);
      ASSERT_EQ(r.limit, DtLimit::Cfl);
      d = s.diagnose();
      d.set_dt(r.dt);
      EXPECT_NEAR(d.cfl, c.time.cfl, 0.03 * c.time.cfl);
      const std::vector<Real> u = s.field("u"), v = s.field("v");
      double rate = 0;
      for (std::size_t k = 0; k < u.size(); ++k)
        rate = std::max(rate, std::abs(double(u[k])) / g.dx() + std::abs(double(v[k])) / g.dy());
      EXPECT_NEAR(d.cfl, r.dt * rate, tol * r.dt * rate);
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Backends, SolverOnBackend, testing::ValuesIn(test::all_backend_cases()), test::case_name);

// ---------------------------------------------------------------- the time-step loop

TEST(SolverTimeLoop, RespectsCflAndGrowthAndHitsOutputTimesFromNonZeroStart) {
  const Config c = deck("grid: {nx: 64}\nphysics: {nu: 1e-3}\ninitial: {type: random, k0: 5, seed: 9}\n"
                        "time: {cfl: 0.4, growth: 1.05, dt_max: 0.02, dt_initial: 1e-4}\n");
  auto b = make_backend<double>(BackendKind::Cpu, c.make_grid());
  Solver<double> s(*b, c);
  s.initialise();
  s.set_time(3.7, 0, 0);
  const double every = 0.25;
  double prev = 0;
  int outputs = 0;
  double next = next_multiple(s.time(), every);
  EXPECT_DOUBLE_EQ(next, 3.75);
  while (s.time() < 5.0) {
    const StepReport r = s.step(next);
    EXPECT_LE(r.dt * r.cfl_rate, 0.4 * (1 + 1e-12)) << "CFL bound";
    if (prev > 0 && r.limit != DtLimit::Output) EXPECT_LE(r.dt, 1.05 * prev * (1 + 1e-12)) << "growth";
    if (prev == 0) EXPECT_LE(r.dt, 1e-4) << "dt_initial";
    EXPECT_LE(r.dt, 0.02);
    if (r.limit != DtLimit::Output) prev = r.dt;
    if (r.landed) {
      EXPECT_EQ(s.time(), next) << "output time must be hit exactly";
      ++outputs;
      next = next_multiple(s.time(), every);
    }
  }
  EXPECT_EQ(outputs, 6);  // 3.75, 4.0, ..., 5.0
  EXPECT_EQ(s.time(), 5.0);
}

TEST(SolverTimeLoop, BlowUpIsReportedWithStepTimeAndDt) {
  // Unstable on purpose: inviscid, and a CFL number far beyond RK3's stability limit (about
  // 0.8 for the fastest resolved mode).
  const Config c = deck("grid: {nx: 64}\ninitial: {type: random, k0: 10, energy: 50, seed: 1}\n"
                        "time: {cfl: 5, dt_max: 10, growth: 100, stepper: rk3}\n");
  auto b = make_backend<double>(BackendKind::Cpu, c.make_grid());
  Solver<double> s(*b, c);
  s.initialise();
  try {
    for (int n = 0; n < 10000; ++n) s.step(1e9);
    FAIL() << "the run did not blow up";
  } catch (const BlowUp& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("step"), std::string::npos) << m;
    EXPECT_NE(m.find("t = "), std::string::npos) << m;
    EXPECT_NE(m.find("dt"), std::string::npos) << m;
  }
}

// ---------------------------------------------------------------- single precision

class SolverSingle : public testing::TestWithParam<BackendKind> {};

TEST_P(SolverSingle, DecayingDeckStaysNearDouble) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam());
  const Config c = load_deck(std::string(CASCADE_SOURCE_DIR) + "/input/decaying.yaml");
  auto bd = make_backend<double>(GetParam(), c.make_grid());
  auto bf = make_backend<float>(GetParam(), c.make_grid());
  Solver<double> sd(*bd, c);
  Solver<float> sf(*bf, c);
  sd.initialise();
  sf.initialise();
  for (int n = 0; n < 100; ++n) {
    sd.step_fixed(2e-3);
    sf.step_fixed(2e-3);
  }
  const Diagnostics dd = sd.diagnose(), df = sf.diagnose();
  ASSERT_TRUE(std::isfinite(df.energy) && std::isfinite(df.enstrophy) && std::isfinite(df.max_u));
  EXPECT_LT(std::abs(df.energy / dd.energy - 1), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Backends, SolverSingle, testing::Values(BackendKind::Cpu, BackendKind::Cuda),
                         [](const testing::TestParamInfo<BackendKind>& i) { return std::string(to_string(i.param)); });

}  // namespace
}  // namespace cascade

namespace cascade {
namespace {

// Restart on another grid: padding keeps every mode (E, Z, P unchanged to round-off) and
// truncating back returns the original state.
TEST(SolverResize, PadAndTruncateSpectrally) {
  const Config small = parse_deck("grid: {nx: 64, ny: 48, ly: 1.5pi}\ninitial: {type: random, k0: 5, seed: 8}\n", "d");
  const Config large = parse_deck("grid: {nx: 128, ny: 96, ly: 1.5pi}\n", "d");
  auto bs = make_backend<double>(BackendKind::Cpu, small.make_grid());
  auto bl = make_backend<double>(BackendKind::Cpu, large.make_grid());
  Solver<double> s(*bs, small), l(*bl, large);
  s.initialise();
  const auto hat = s.vorticity_hat();
  std::vector<double> flat(2 * hat.size());
  for (std::size_t k = 0; k < hat.size(); ++k) {
    flat[2 * k] = hat[k].re;
    flat[2 * k + 1] = hat[k].im;
  }
  l.set_vorticity_hat_resized(flat, 64, 48);
  const Diagnostics a = s.diagnose(), b = l.diagnose();
  EXPECT_NEAR(b.energy / a.energy, 1.0, 1e-14);
  EXPECT_NEAR(b.enstrophy / a.enstrophy, 1.0, 1e-14);
  EXPECT_NEAR(b.palinstrophy / a.palinstrophy, 1.0, 1e-14);
  const auto big = l.vorticity_hat();
  std::vector<double> bflat(2 * big.size());
  for (std::size_t k = 0; k < big.size(); ++k) {
    bflat[2 * k] = big[k].re;
    bflat[2 * k + 1] = big[k].im;
  }
  Solver<double> back(*bs, small);
  back.set_vorticity_hat_resized(bflat, 128, 96);
  const auto again = back.vorticity_hat();
  double diff = 0, scale = 0;
  for (std::size_t k = 0; k < hat.size(); ++k) {
    diff = std::max(diff, std::hypot(again[k].re - hat[k].re, again[k].im - hat[k].im));
    scale = std::max(scale, std::hypot(hat[k].re, hat[k].im));
  }
  EXPECT_LT(diff / scale, 1e-15);
}

}  // namespace
}  // namespace cascade
