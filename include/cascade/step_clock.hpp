//! @file The scalars of the adaptive step, and the one rule that moves them: from the CFL rate
//! at the start of a step to its dt (choose_dt), the checks that stop a run, the stage
//! coefficients, the budget's weights and the clock after the step. Solver::step applies it on
//! the host; the step on the device (a CUDA graph that chooses its own dt: Backend::
//! run_step_graph) applies the same functions in a kernel, so that both take the same steps to
//! the bit. Plain data and CASCADE_HD functions, no CUDA types.
//!
//! Bits: a product that feeds a sum is rounded on its own (rounded_mul, rounded_add), as the host
//! computes it, where the device would fuse them into one multiply-add.
#pragma once

#include "cascade/cfl.hpp"
#include "cascade/coefficients.hpp"
#include "cascade/types.hpp"

namespace cascade {

//! The most stages a stepper table has (rk4).
constexpr int kMaxStages = 4;

//! How the forcing enters the budget: none, fixed in time, or white noise (drawn each step).
enum class ForcingKind { None, Fixed, WhiteNoise };

//! What does not change from step to step: the policy, the stepper table's factors of h in each
//! stage (h b_i, h a_{i+1}: stage_coefficients), and the budget's normalisation.
struct StepRule {
  DtPolicy policy;
  int stages = 0;
  double b[kMaxStages] = {};       //!< b_i
  double a_next[kMaxStages] = {};  //!< a_{i+1} (low storage: a_{i+1} - b_i); 0 in the last stage
  double n2 = 1;                   //!< (nx ny)^2
  ForcingKind forcing = ForcingKind::None;
};

//! The clock of a run and what its last step took.
struct StepClock {
  double t = 0;
  double dt_prev = 0;  //!< the growth limit's reference (a step shortened to land leaves it)
  long step = 0;
  // The budget's interval (BudgetState)
  double budget_last_dt = 0;
  double budget_interval = 0;
  int budget_open = 0;
  // The last step
  double dt = 0;
  double rate = 0;  //!< max(|u|/dx + |v|/dy) at its start
  int limit = int(DtLimit::DtMax);
  int lands = 0;
  // Its stage coefficients' h-dependent numbers, and the budget weights of its first stage
  double h = 0;
  double hb[kMaxStages] = {};
  double ha[kMaxStages] = {};
  BudgetWeights weights;
  //! Whether the stages apply: 0 where the step on the device could not take this step (a
  //! verdict other than Go), and its stages leave everything as it is.
  int go = 1;
};

//! Why a step cannot be taken at its start; Go when it can.
enum class StepVerdict { Go, NotFinite, BelowDtMin, BelowResolution };

CASCADE_HD inline StepVerdict verdict(const StepRule& r, const DtChoice& c, double rate, double t) {
  if (!finite_number(rate)) return StepVerdict::NotFinite;
  if (c.limit != DtLimit::Output && c.dt < r.policy.dt_min) return StepVerdict::BelowDtMin;
  if (!c.lands && !(rounded_add(t, c.dt) > t)) return StepVerdict::BelowResolution;
  return StepVerdict::Go;
}

//! How a step adds the budget rates of its start state (BudgetWeights): `d_weight` is the
//! time weight of the D(k) terms; a white-noise step also weighs the energy its increment h F
//! adds to omega_n, h Re<omega, F> + h^2/2 |F|^2.
CASCADE_HD inline BudgetWeights budget_weights(const StepRule& r, double d_weight, bool white_noise_step, double h) {
  BudgetWeights w;
  w.d = d_weight / r.n2;
  if (r.forcing == ForcingKind::Fixed) w.inj = w.d;
  if (r.forcing == ForcingKind::WhiteNoise && white_noise_step) {
    w.inj = h / r.n2;
    w.f2 = rounded_mul(rounded_mul(0.5, h), h) / r.n2;
  }
  return w;
}

//! Take the step `c` (verdict Go) on the clock: its stage numbers and budget weights (the first
//! stage adds the step's start half of the trapezoid, and the previous step's end half, still
//! pending: both are rates at the same state), then the clock after it.
CASCADE_HD inline void take_step(StepClock& k, const StepRule& r, const DtChoice& c, double rate, double t_output) {
  const double h = c.dt;
  k.h = h;
  for (int i = 0; i < r.stages; ++i) {
    k.hb[i] = rounded_mul(h, r.b[i]);
    k.ha[i] = rounded_mul(h, r.a_next[i]);
  }
  const double pending = k.budget_open ? rounded_mul(0.5, k.budget_last_dt) : 0.0;
  k.weights = budget_weights(r, rounded_add(pending, rounded_mul(0.5, h)), true, h);
  k.budget_open = 1;
  k.budget_last_dt = h;
  k.budget_interval = rounded_add(k.budget_interval, h);
  k.t = c.lands ? t_output : rounded_add(k.t, h);
  if (c.limit != DtLimit::Output) k.dt_prev = h;  // a shortened step does not slow the ramp
  k.step += 1;
  k.dt = h;
  k.rate = rate;
  k.limit = int(c.limit);
  k.lands = c.lands ? 1 : 0;
}

}  // namespace cascade
