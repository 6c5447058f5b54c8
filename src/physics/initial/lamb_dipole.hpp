//! @file initial.type lamb-dipole: the Lamb-Chaplygin dipole of radius a translating at speed U
//! along +x (Lamb 1932): inside r < a, omega = -2 U k J1(k r) / J0(k a) sin(theta), k a = 3.8317
//! (the first zero of J1); zero outside. Evaluated on the host (Bessel functions), with the
//! nearest periodic images.
#pragma once

#include <array>
#include <cmath>
#include <vector>

#include "cascade/solver.hpp"

namespace cascade {

struct LambDipoleInitial {
  static constexpr std::array<const char*, 1> kTypes = {"lamb-dipole"};
  double x0 = 0, y0 = 0, radius = 0, speed = 0;

  static LambDipoleInitial from(const InitialConfig& ic, const Grid&) { return {ic.x0, ic.y0, ic.radius, ic.speed}; }
  template <class Real>
  void apply(Solver<Real>& s, const InitialField*) const {
    const Grid& g = s.backend().grid();
    const double ka = 3.831705970207512, a = radius, k = ka / a, U = speed;
    const double j0 = std::cyl_bessel_j(0.0, ka);
    std::vector<Real> w(g.size(), Real(0));
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        double x = g.x(i) - x0, y = g.y(j) - y0;
        x -= g.lx * std::round(x / g.lx);  // nearest image
        y -= g.ly * std::round(y / g.ly);
        const double r = std::hypot(x, y);
        if (r >= a || r == 0) continue;
        w[std::size_t(j) * g.nx + i] = Real(-2 * U * k * std::cyl_bessel_j(1.0, k * r) / j0 * (y / r));
      }
    s.set_vorticity(w);
  }
};

}  // namespace cascade
