//! @file The time-step policy: a pure function of the CFL maximum, the previous step and the
//! next output time (no logging, no state; tested on its own).
//!
//!   dt = min(dt_max, growth * dt_prev, cfl / max(|u|/dx + |v|/dy))
//!
//! then, near the next output time, shortened to land on it exactly: what remains within one
//! step is taken in one; within two, in two nearly equal steps (kFirstOfTwo of it, then the
//! rest), so that no step is a sliver of its neighbours. On the first step (dt_prev = 0)
//! dt_initial, when set (> 0), takes the place of growth * dt_prev. The caller refuses a step
//! below dt_min unless the output time shortened it, and stops on a non-finite maximum.
#pragma once

namespace cascade {

enum class DtLimit { Cfl, DtMax, Growth, Output };

const char* to_string(DtLimit limit);

constexpr double kFirstOfTwo = 0.51;

struct DtPolicy {
  double cfl = 0.5;
  double dt_max = 0.1;
  double dt_min = 1e-10;
  double growth = 1.1;
  double dt_initial = 0;
};

struct DtChoice {
  double dt = 0;
  DtLimit limit = DtLimit::DtMax;
  bool lands = false;  //!< this step ends exactly on the output time
};

//! max_rate = max over the grid of |u|/dx + |v|/dy (>= 0); dt_prev = 0 on the first step.
//! Returns NaN for dt when max_rate is not finite.
DtChoice choose_dt(const DtPolicy& policy, double max_rate, double dt_prev, double t, double t_output);

//! The first multiple of `every` strictly after t (output times are multiples of `every`,
//! whatever time a run starts or restarts at).
double next_multiple(double t, double every);

}  // namespace cascade
