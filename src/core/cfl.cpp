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
