//! @file The step on the device (run.step_graph; Solver::steps_toward): the same steps as the
//! host's, bit for bit, over every GPU strategy, both forms and steppers, fixed forcing and
//! ensembles; the same stops (a blow-up, dt below dt_min) with the host's words; and the rule
//! it shares with the host (include/cascade/step_clock.hpp) against the host's own numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "backend_cases.hpp"
#include "cascade/config.hpp"
#include "cascade/error.hpp"
#include "cascade/solver.hpp"
#include "cascade/step_clock.hpp"
#include "cascade/stepper.hpp"
#include "solver_checks.hpp"

namespace cascade {
namespace {

using test::deck;

// ---------------------------------------------------------------- the rule (host)

// The stage numbers take_step gives equal stage_coefficients' (the host's stages) to the bit.
TEST(StepClock, StageNumbersAreTheHosts) {
  for (const char* name : {"rk4", "rk3"}) {
    const IfRkTable& t = stepper_table(name);
    const StepRule r = step_rule(t, DtPolicy{}, 1e8, ForcingKind::Fixed);
    for (double h : {1e-3, 0.0123456789, 0.1 / 3}) {
      StepClock k;
      DtChoice c;
      c.dt = h;
      take_step(k, r, c, 1.0, 1e9);
      const std::vector<StageCoefficients> host = stage_coefficients(t, h);
      ASSERT_EQ(int(host.size()), r.stages);
      for (int i = 0; i < r.stages; ++i) {
        SCOPED_TRACE(std::string(name) + " stage " + std::to_string(i));
        EXPECT_EQ(host[std::size_t(i)].stage, i);
        EXPECT_EQ(std::memcmp(&host[std::size_t(i)].hb, &k.hb[i], sizeof(double)), 0);
        EXPECT_EQ(std::memcmp(&host[std::size_t(i)].ha, &k.ha[i], sizeof(double)), 0);
      }
    }
  }
}

// The clock after a step: landing on the output time exactly, a shortened step leaving the
// growth limit's reference, the budget's trapezoid (the previous step's end half pending).
TEST(StepClock, TakeStepMovesTheClock) {
  DtPolicy p;
  p.cfl = 0.5;
  p.dt_max = 0.1;
  p.growth = 1.1;
  const StepRule r = step_rule(stepper_table("rk4"), p, 4.0, ForcingKind::Fixed);
  StepClock k;
  k.t = 0.3;
  k.dt_prev = 0.01;
  k.step = 7;
  k.budget_open = 1;
  k.budget_last_dt = 0.01;
  k.budget_interval = 0.05;
  DtChoice c = choose_dt(p, 10.0, k.dt_prev, k.t, 1.0);  // growth: 0.011
  ASSERT_EQ(c.limit, DtLimit::Growth);
  ASSERT_EQ(verdict(r, c, 10.0, k.t), StepVerdict::Go);
  take_step(k, r, c, 10.0, 1.0);
  EXPECT_DOUBLE_EQ(k.t, 0.3 + 0.011);
  EXPECT_DOUBLE_EQ(k.dt_prev, 0.011);
  EXPECT_EQ(k.step, 8);
  EXPECT_DOUBLE_EQ(k.weights.d, (0.5 * 0.01 + 0.5 * 0.011) / 4.0);
  EXPECT_DOUBLE_EQ(k.weights.inj, k.weights.d);  // fixed forcing: the same trapezoid
  EXPECT_DOUBLE_EQ(k.budget_interval, 0.05 + 0.011);
  EXPECT_DOUBLE_EQ(k.budget_last_dt, 0.011);
  // Within one step of the output time: it lands there exactly, and dt_prev stays.
  c = choose_dt(p, 10.0, k.dt_prev, k.t, 0.32);
  ASSERT_TRUE(c.lands);
  take_step(k, r, c, 10.0, 0.32);
  EXPECT_EQ(k.t, 0.32);
  EXPECT_EQ(k.lands, 1);
  EXPECT_DOUBLE_EQ(k.dt_prev, 0.011);
  // What stops a step.
  EXPECT_EQ(verdict(r, choose_dt(p, NAN, 0.01, 0, 1), NAN, 0), StepVerdict::NotFinite);
  p.dt_min = 1e-3;
  const StepRule strict = step_rule(stepper_table("rk4"), p, 4.0, ForcingKind::None);
  EXPECT_EQ(verdict(strict, choose_dt(p, 1e4, 0.01, 0, 1), 1e4, 0), StepVerdict::BelowDtMin);
}

// Where the step cannot run on the device: the CPU, `off`; `on` there is refused.
TEST(StepGraph, WhereItRuns) {
  const std::string base = "grid: {nx: 32}\ninitial: {type: random, k0: 4}\n";
  {
    const Config c = deck(base, {"run.backend=cpu"});
    auto b = make_backend<double>(BackendKind::Cpu, c.make_grid());
    Solver<double> s(*b, c);
    EXPECT_FALSE(s.graphed());
    EXPECT_NE(s.graph_note().find("the cpu backend steps from the host"), std::string::npos) << s.graph_note();
    s.initialise();
    s.steps_toward(1.0, 10);  // one step, from the host
    EXPECT_EQ(s.steps(), 1);
    const Config on = deck(base, {"run.step_graph=on"});
    EXPECT_THROW(Solver<double>(*b, on), InputError);
  }
  const std::string why = cuda_unavailable_reason();
  if (!why.empty()) GTEST_SKIP() << "CUDA backend unavailable: " << why;
  auto b = make_backend<double>(BackendKind::Cuda, deck(base).make_grid());
  EXPECT_TRUE(Solver<double>(*b, deck(base)).graphed());
  EXPECT_FALSE(Solver<double>(*b, deck(base, {"run.step_graph=off"})).graphed());
  // White noise is drawn on the device too.
  const std::string white = base + "forcing: {type: ring, epsilon: 0.1, k_f: 6, dk: 1.5}\n";
  EXPECT_TRUE(Solver<double>(*b, deck(white)).graphed());
  EXPECT_TRUE(Solver<double>(*b, deck(white, {"run.step_graph=on"})).graphed());
  // auto leaves a step of more than 4096^2 points to the host; `on` records it there too.
  const std::string big = "grid: {nx: 8192, ny: 2304}\ninitial: {type: random, k0: 4}\n";
  auto bb = make_backend<double>(BackendKind::Cuda, deck(big).make_grid());
  Solver<double> large(*bb, deck(big));
  EXPECT_FALSE(large.graphed());
  EXPECT_NE(large.graph_note().find("auto: above 4096^2 points"), std::string::npos) << large.graph_note();
  EXPECT_TRUE(Solver<double>(*bb, deck(big, {"run.step_graph=on"})).graphed());
  // Four steps an iteration of the loop for rows and columns of 512^2 points at most in all
  // (every member's), whose step costs its launches; one elsewhere.
  const std::string rc = "grid: {nx: 256, ny: 256}\ninitial: {type: random, k0: 4}\n";
  for (const auto& [transforms, ny, members, want] :
       {std::tuple{"rows-columns", 256, 4, 4}, {"rows-columns", 1024, 1, 4}, {"rows-columns", 512, 4, 1},
        {"rows-columns", 2048, 1, 1}, {"plain", 256, 1, 1}}) {
    SCOPED_TRACE(std::string(transforms) + " 256 x " + std::to_string(ny) + " x " + std::to_string(members));
    const Config c = deck(rc, {"grid.ny=" + std::to_string(ny), std::string("run.step_transforms=") + transforms,
                               "ensemble.members=" + std::to_string(members)});
    auto bs = make_backend<double>(BackendKind::Cuda, c.make_grid(), 0, 0, FftPlanning::Estimate, 0, members);
    Solver<double> s(*bs, c);
    s.initialise();
    s.prepare_graph();
    EXPECT_EQ(s.graph_iteration_steps(), want);
    EXPECT_EQ(s.graph_note().find("steps an iteration") != std::string::npos, want > 1) << s.graph_note();
  }
}

// ---------------------------------------------------------------- the device against the host

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

//! The deck run twice on the GPU to the output times 0.05, 0.10, ...: by the host a step at a
//! time, and by the device `chunk` steps a launch (so that launches end between output times
//! and on them); after each output time the two agree to the bit: time, steps, dt, state,
//! budget integrals and the interval's means.
template <class Real>
void device_matches_host(const Config& c, long chunk, int outputs = 4) {
  const int members = c.ensemble.members;
  auto bh = make_backend<Real>(BackendKind::Cuda, c.make_grid(), 0, 0, FftPlanning::Estimate, 0, members);
  auto bd = make_backend<Real>(BackendKind::Cuda, c.make_grid(), 0, 0, FftPlanning::Estimate, 0, members);
  Config host_deck = c;
  host_deck.run.step_graph = "off";
  Solver<Real> host(*bh, host_deck), dev(*bd, c);
  ASSERT_TRUE(dev.graphed()) << dev.graph_note();
  ASSERT_FALSE(host.graphed());
  host.initialise();
  dev.initialise();
  dev.prepare_graph();
  ASSERT_TRUE(dev.graphed()) << dev.graph_note();
  EXPECT_EQ(describe(bh->step_plan()), describe(bd->step_plan()));
  long launches = 0;
  for (int o = 1; o <= outputs; ++o) {
    const double t_out = 0.05 * o;
    SCOPED_TRACE("output time " + std::to_string(t_out));
    StepReport rh, rd;
    while (host.time() < t_out) rh = host.step(t_out);
    while (dev.time() < t_out) {
      const long before = dev.steps();
      rd = dev.steps_toward(t_out, chunk);
      ASSERT_GT(dev.steps(), before);
      ASSERT_LE(dev.steps() - before, chunk);
      ++launches;
    }
    ASSERT_EQ(host.time(), dev.time());
    ASSERT_EQ(host.steps(), dev.steps());
    EXPECT_EQ(host.last_dt(), dev.last_dt());
    EXPECT_EQ(rh.dt, rd.dt);
    EXPECT_EQ(rh.limit, rd.limit);
    EXPECT_TRUE(rd.landed);
    EXPECT_EQ(rh.cfl_rate, rd.cfl_rate);
    ASSERT_TRUE(same_bits(host.vorticity_hat(), dev.vorticity_hat())) << "the state differs";
    const BudgetState& bhs = host.budget();
    const BudgetState& bds = dev.budget();
    EXPECT_EQ(std::memcmp(bhs.integral, bds.integral, sizeof(bhs.integral)), 0);
    EXPECT_TRUE(same_bits(bhs.members, bds.members));
    EXPECT_EQ(bhs.interval, bds.interval);
    EXPECT_EQ(bhs.last_dt, bds.last_dt);
    const std::vector<Diagnostics> dh = host.diagnose_interval_members(), dd = dev.diagnose_interval_members();
    ASSERT_EQ(dh.size(), dd.size());
    for (std::size_t m = 0; m < dh.size(); ++m) {
      EXPECT_EQ(dh[m].energy, dd[m].energy);
      EXPECT_EQ(dh[m].dissipation, dd[m].dissipation);
      EXPECT_EQ(dh[m].injection, dd[m].injection);
    }
  }
  EXPECT_LT(launches, host.steps()) << "the device took one step a launch";
}

const char* const kTurbulence =
    "grid: {nx: 64, ny: 48, ly: 4.0}\n"
    "physics: {nu: 5e-4}\n"
    "initial: {type: random, k0: 6, energy: 0.5, seed: 4}\n"
    "time: {cfl: 0.5, dt_initial: 1e-4}\n";

// Every GPU strategy the deck can run, both forms, both steppers.
TEST(StepGraph, SameStepsAsTheHostBitForBit) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  for (const char* form : {"basdevant", "advective"})
    for (const char* stepper : {"rk4", "rk3"})
      for (const char* transforms : {"auto", "plain", "plain-pairs", "pruned", "rows", "complex-pairs"}) {
        const bool basdevant_only = std::string(transforms) == "rows" || std::string(transforms) == "complex-pairs";
        if (basdevant_only && std::string(form) == "advective") continue;
        SCOPED_TRACE(std::string(form) + ", " + stepper + ", " + transforms);
        const Config c = deck(kTurbulence, {std::string("grid.nonlinear=") + form, std::string("time.stepper=") + stepper,
                                            std::string("run.step_transforms=") + transforms});
        device_matches_host<double>(c, 7);
      }
}

// Rows and columns (the stage inside the column kernel, which reads the clock itself): a grid
// of powers of two, both steppers, forced (the budget's injection), and an ensemble whose
// members differ; rows staged (4096 points in double, 8192 in single on compute capability
// 9.0: the row kernel lets the next launch only at its end), more of them than the blocks.
TEST(StepGraph, SameStepsWithRowsAndColumns) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  const std::string forced =
      "grid: {nx: 64, ny: 32, ly: 0.5}\n"
      "physics: {nu: 1e-4, mu: 0.05, beta: 2.0}\n"
      "forcing: {type: kolmogorov, amplitude: 1.0, wavenumber: 4}\n"
      "initial: {type: random, k0: 5, energy: 0.3, seed: 3}\n"
      "time: {cfl: 0.4, dt_initial: 1e-4, growth: 1.05}\n"
      "run: {step_transforms: rows-columns}\n";
  for (const char* stepper : {"rk4", "rk3"}) {
    SCOPED_TRACE(stepper);
    device_matches_host<double>(deck(forced, {std::string("time.stepper=") + stepper}), 7);
  }
  device_matches_host<float>(deck(forced), 5);
  device_matches_host<double>(deck(forced + "ensemble: {members: 3, vary: {physics.nu: [1e-4, 3e-4, 1e-3]}}\n"), 4);
  device_matches_host<double>(deck(forced, {"grid.nx=4096", "grid.ny=512"}), 3, 2);
  device_matches_host<float>(deck(forced, {"grid.nx=8192", "grid.ny=512"}), 3, 2);
}

// Single precision, callbacks at every level, fixed forcing (Kolmogorov: the budget's
// injection), hyperviscosity and friction, dt_initial and growth limiting the first steps.
TEST(StepGraph, SameStepsWithForcingCallbacksAndSinglePrecision) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  const std::string forced =
      "grid: {nx: 64}\n"
      "physics: {nu: 1e-6, nu_order: 2, mu: 0.05}\n"
      "forcing: {type: kolmogorov, amplitude: 1.0, wavenumber: 4}\n"
      "initial: {type: random, k0: 5, energy: 0.3}\n"
      "time: {cfl: 0.4, dt_initial: 1e-4, growth: 1.05}\n";
  for (const char* callbacks : {"off", "store", "all"}) {
    SCOPED_TRACE(std::string("callbacks ") + callbacks);
    device_matches_host<double>(deck(forced, {std::string("run.fft_callbacks=") + callbacks}), 5);
  }
  device_matches_host<float>(deck(forced), 9);
  device_matches_host<float>(deck(kTurbulence), 3);
}

// An ensemble whose members differ in their coefficients and energies (one dt from the
// fastest), complex pairs over the batch, and a chunk of 2.
TEST(StepGraph, SameStepsForAnEnsemble) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  const std::string ens = std::string(kTurbulence) +
                          "ensemble:\n"
                          "  members: 3\n"
                          "  vary:\n"
                          "    physics.nu: [5e-4, 2e-3, 1e-4]\n"
                          "    initial.energy: [0.5, 2.0, 0.1]\n";
  device_matches_host<double>(deck(ens), 2);
  device_matches_host<double>(deck(ens, {"run.step_transforms=plain-pairs"}), 11);
}

// A step the device cannot take is left to the host, which stops with its own words at the
// same step: dt below dt_min (after steps the device took), and a velocity that is not finite.
// Also on rows and columns of a small grid, whose launches take four steps an iteration of the
// loop: the stop at step 5 comes in the second iteration's first step, and its three others
// must take none.
TEST(StepGraph, StopsAsTheHostDoes) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  for (const char* transforms : {"auto", "rows-columns"})
  for (const char* why : {"dt_min", "overflow"}) {
    SCOPED_TRACE(std::string(transforms) + ", " + why);
    const bool overflow = std::string(why) == "overflow";
    const bool columns = std::string(transforms) == "rows-columns";
    Config c = deck(kTurbulence, {"time.dt_min=1e-200", std::string("run.step_transforms=") + transforms,
                                  columns ? "grid.ny=64" : "grid.ny=48"});
    if (!overflow) {  // dt halving from 1e-3 (a growth below 1, which no deck may ask): below 1e-4 at step 5
      c.time.dt_initial = 1e-3;
      c.time.growth = 0.5;
      c.time.dt_min = 1e-4;
    }
    std::string words[2];
    long steps[2] = {0, 0};
    for (int d = 0; d < 2; ++d) {
      Config cd = c;
      cd.run.step_graph = d == 0 ? "off" : "on";
      auto b = make_backend<double>(BackendKind::Cuda, cd.make_grid());
      Solver<double> s(*b, cd);
      s.initialise();
      if (overflow) {  // finite, but its products overflow: the state is not finite after a step
        std::vector<Complex<double>> w = s.vorticity_hat();
        for (auto& x : w) x = {x.re * 1e160, x.im * 1e160};
        s.set_vorticity_hat(w);
      }
      try {
        for (int n = 0; n < 50; ++n) {
          if (d == 0) s.step(1.0);
          else s.steps_toward(1.0, 6);
        }
      } catch (const BlowUp& e) {
        words[d] = e.what();
      }
      steps[d] = s.steps();
      if (d == 1) EXPECT_EQ(s.graph_iteration_steps(), columns ? 4 : 1) << s.graph_note();
    }
    EXPECT_FALSE(words[0].empty()) << "the host did not stop";
    EXPECT_GT(steps[0], 0) << "the stop came before any step: the device's steps are not tested";
    EXPECT_EQ(words[0], words[1]);
    EXPECT_EQ(steps[0], steps[1]);
  }
}

// White noise (the ring's), drawn each step from the device's clock: a single run, both
// steppers, single precision, and an ensemble whose members' seeds and injection rates differ,
// on complex pairs and on rows and columns.
TEST(StepGraph, SameStepsWithWhiteNoise) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  const std::string white = std::string(kTurbulence) + "forcing: {type: ring, epsilon: 0.3, k_f: 6, dk: 1.5}\n";
  for (const char* stepper : {"rk4", "rk3"}) {
    SCOPED_TRACE(stepper);
    device_matches_host<double>(deck(white, {std::string("time.stepper=") + stepper}), 7);
  }
  device_matches_host<float>(deck(white), 5);
  const std::string ens = white + "ensemble: {members: 3, vary: {forcing.epsilon: [0.3, 0.05, 1.0]}}\n";
  device_matches_host<double>(deck(ens), 4);
  const std::string square =
      "grid: {nx: 64, ny: 32, ly: 0.5}\n"
      "physics: {nu: 1e-4, mu: 0.05}\n"
      "forcing: {type: ring, epsilon: 0.3, k_f: 14, dk: 4}\n"
      "initial: {type: random, k0: 5, energy: 0.3, seed: 3}\n"
      "time: {cfl: 0.4, dt_initial: 1e-4}\n"
      "run: {step_transforms: rows-columns}\n"
      "ensemble: {members: 2, vary: {forcing.epsilon: [0.3, 0.6]}}\n";
  device_matches_host<double>(deck(square), 5);
}

// ensemble.on_blowup: drop on the device: the launch ends before the step that needs it, the
// host's step drops the member, and the device goes on: as the host alone, to the bit (also
// on rows and columns, four steps an iteration of the loop, the launch's end in its middle).
TEST(StepGraph, DropsAsTheHostDoes) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  for (const char* transforms : {"auto", "rows-columns"})
  for (const char* forcing : {"", "forcing: {type: ring, epsilon: 0.3, k_f: 6, dk: 1.5}\n"}) {
  SCOPED_TRACE(std::string(transforms) + (*forcing ? ", white noise" : ", unforced"));
  const bool columns = std::string(transforms) == "rows-columns";
  const std::string ens = std::string(kTurbulence) + forcing +
                          "ensemble:\n"
                          "  members: 3\n"
                          "  on_blowup: drop\n";
  std::vector<Complex<double>> state[2];
  BudgetState budgets[2];
  long steps[2] = {0, 0};
  for (int d = 0; d < 2; ++d) {
    Config x = deck(ens, {"time.dt_min=1e-200", "time.growth=1e100", std::string("run.step_transforms=") + transforms,
                          columns ? "grid.ny=64" : "grid.ny=48"});
    x.run.step_graph = d == 0 ? "off" : "on";
    auto b = make_backend<double>(BackendKind::Cuda, x.make_grid(), 0, 0, FftPlanning::Estimate, 0, 3);
    Solver<double> s(*b, x);
    s.initialise();
    // Member 1 finite but so strong that its products overflow: not finite after a step.
    std::vector<Complex<double>> w = s.vorticity_hat();
    const std::size_t per = x.make_grid().spectral_size();
    for (std::size_t k = per; k < 2 * per; ++k) w[k] = {w[k].re * 1e160, w[k].im * 1e160};
    s.set_vorticity_hat(w);
    while (s.time() < 0.1) {
      if (d == 0) s.step(0.1);
      else s.steps_toward(0.1, columns ? 6 : 4);
    }
    EXPECT_TRUE(s.dropped(1));
    EXPECT_FALSE(s.dropped(0));
    EXPECT_FALSE(s.dropped(2));
    state[d] = s.vorticity_hat();
    steps[d] = s.steps();
    budgets[d] = s.budget();
    if (d == 1) EXPECT_EQ(s.graph_iteration_steps(), columns ? 4 : 1) << s.graph_note();
  }
  EXPECT_EQ(steps[0], steps[1]);
  EXPECT_TRUE(same_bits(state[0], state[1]));
  // The dropped member stays at rest, unforced: nothing enters its budget.
  for (int d = 0; d < 2; ++d)
    for (int term = 0; term < BudgetState::kTerms; ++term)
      EXPECT_EQ(budgets[d].members[std::size_t(BudgetState::kTerms + term)], 0.0) << "term " << term;
  }
}

}  // namespace
}  // namespace cascade
