//! @file The time-step policy (include/cascade/cfl.hpp).
#include "cascade/cfl.hpp"

#include <cmath>
#include <limits>

namespace cascade {

const char* to_string(DtLimit limit) {
  switch (limit) {
    case DtLimit::Cfl: return "cfl";
    case DtLimit::DtMax: return "dt_max";
    case DtLimit::Growth: return "growth";
    case DtLimit::Output: return "output";
  }
  return "?";
}

DtChoice choose_dt(const DtPolicy& p, double max_rate, double dt_prev, double t, double t_output) {
  DtChoice c;
  if (!std::isfinite(max_rate)) {
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
  const double remaining = t_output - t;
  if (remaining <= c.dt) {
    c.dt = remaining;
    c.limit = DtLimit::Output;
    c.lands = true;
  }
  return c;
}

double next_multiple(double t, double every) {
  // A time within a hair of a multiple (it was landed on, up to rounding) counts as that
  // multiple, so that the next output is a full interval later, never a sliver.
  constexpr double kHair = 1e-9;
  double k = std::floor(t / every + kHair) + 1;
  return k * every;
}

}  // namespace cascade
