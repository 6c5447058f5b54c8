//! @file Vortices with Gaussian vorticity, summed over the nearest periodic images:
//! omega = sum_v Gamma_v / (2 pi s_v^2) exp(-r^2 / (2 s_v^2)), with s = radius (gaussian) or
//! radius / sqrt(2) (lamb-oseen: Gamma/(pi a^2) exp(-r^2/a^2)).
#pragma once

#include <cmath>

#include "cascade/types.hpp"

namespace cascade {

struct VortexSpec {
  double x, y, s, circulation;
};

//! Up to kVortexBatch vortices a fill (the list travels by value in the kernel's arguments);
//! longer lists are added batch by batch.
constexpr int kVortexBatch = 32;

struct VortexPoints {
  static constexpr bool kSpectral = false;
  double dx, dy, lx, ly;
  VortexSpec v[kVortexBatch];
  int count;
  CASCADE_HD double operator()(int i, int j) const {
    const double x = dx * i, y = dy * j;
    double w = 0.0;
    for (int k = 0; k < count; ++k) {
      const VortexSpec& p = v[k];
      const double norm = p.circulation / (2 * M_PI * p.s * p.s);
      for (int a = -1; a <= 1; ++a)
        for (int b = -1; b <= 1; ++b) {
          const double ddx = x - p.x + a * lx, ddy = y - p.y + b * ly;
          w += norm * exp(-(ddx * ddx + ddy * ddy) / (2 * p.s * p.s));
        }
    }
    return w;
  }
};

}  // namespace cascade
