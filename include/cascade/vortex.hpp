//! @file A vortex of an initial condition, shared by host code and kernels.
#pragma once

namespace cascade {

//! A Gaussian vortex omega = circulation / (2 pi s^2) exp(-r^2 / (2 s^2)) centred at (x, y).
struct VortexSpec {
  double x, y, s, circulation;
};

}  // namespace cascade
