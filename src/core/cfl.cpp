//! @file The time-step policy (include/cascade/cfl.hpp).
#include "cascade/cfl.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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
  // Landing on the output time never cuts a step short: what remains within one step is one
  // step; within two, two nearly equal ones (51% then 49%: the second still lands when the
  // bound shrinks by a few percent meanwhile), each within the bound.
  const double remaining = t_output - t;
  if (remaining <= c.dt) {
    c.dt = remaining;
    c.limit = DtLimit::Output;
    c.lands = true;
  } else if (remaining <= 2 * c.dt) {
    c.dt = std::min(c.dt, kFirstOfTwo * remaining);
    c.limit = DtLimit::Output;
  }
  return c;
}

double next_multiple(double t, double every) {
  // A time within a hair of a multiple (it was landed on, up to rounding) counts as that
  // multiple, so that the next output is a full interval later, never a sliver.
  constexpr double kHair = 1e-9;
  double k = std::floor(t / every + kHair) + 1;
  // The multiple the deck names: k every rounded to 15 significant digits, so that 3 x 0.1 is
  // 0.3 (as written), not 0.30000000000000004.
  char text[32];
  std::snprintf(text, sizeof(text), "%.15g", k * every);
  return std::strtod(text, nullptr);
}

}  // namespace cascade
