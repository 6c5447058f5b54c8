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

#include <cmath>
#include <limits>

#include "cascade/types.hpp"

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

//! Whether x is a finite number, on the host and on the device.
CASCADE_HD inline bool finite_number(double x) {
#if defined(__CUDA_ARCH__)
  return isfinite(x);
#else
  return std::isfinite(x);
#endif
}

//! max_rate = max over the grid of |u|/dx + |v|/dy (>= 0); dt_prev = 0 on the first step.
//! Returns NaN for dt when max_rate is not finite. One definition for the host and the device
//! (the step on the device chooses its own dt: include/cascade/step_clock.hpp): products and
//! quotients alone, none feeding a sum, so both round alike.
CASCADE_HD inline DtChoice choose_dt(const DtPolicy& p, double max_rate, double dt_prev, double t, double t_output) {
  DtChoice c;
  if (!finite_number(max_rate)) {
    c.dt = std::numeric_limits<double>::quiet_NaN();
    c.limit = DtLimit::Cfl;
    return c;
  }
  c.dt = p.dt_max;
  c.limit = DtLimit::DtMax;
  const double ramp = dt_prev > 0 ? p.growth * dt_prev : p.dt_initial;
  if (ramp > 0 && ramp < c.dt) {
    c.dt = ramp;
    c.limit = DtLimit::Growth;
  }
  if (max_rate > 0) {
    const double dt_cfl = p.cfl / max_rate;
    if (dt_cfl < c.dt) {
      c.dt = dt_cfl;
      c.limit = DtLimit::Cfl;
    }
  }
  // Landing on the output time never cuts a step short: what remains within one step is one
  // step; within two, two nearly equal ones (51% then 49%: the second still lands when the
  // bound shrinks by a few percent meanwhile), each within the bound.
  const double remaining = t_output - t;
  if (remaining <= c.dt) {
    c.dt = remaining;
    c.limit = DtLimit::Output;
    c.lands = true;
  } else if (remaining <= 2 * c.dt) {
    const double share = kFirstOfTwo * remaining;
    if (share < c.dt) c.dt = share;
    c.limit = DtLimit::Output;
  }
  return c;
}

//! The first multiple of `every` strictly after t (output times are multiples of `every`,
//! whatever time a run starts or restarts at).
double next_multiple(double t, double every);

}  // namespace cascade
