//! @file initial.type taylor-green: psi = A sin(m kx0 x) sin(m ky0 y), an exact steady solution of
//! the Euler equations that viscosity decays as exp(-2 nu m^2 k0^2 t) (fields/taylor_green.hpp).
#pragma once

#include <array>
#include <cmath>

#include "cascade/solver.hpp"

namespace cascade {

struct TaylorGreenInitial {
  static constexpr std::array<const char*, 1> kTypes = {"taylor-green"};
  int mode = 1;
  double amplitude = 0;

  static TaylorGreenInitial from(const InitialConfig& ic, const Grid&) { return {ic.mode, ic.amplitude}; }
  template <class Real>
  void apply(Solver<Real>& s, const InitialField*) const {
    const Grid& g = s.backend().grid();
    s.set_vorticity({TaylorGreenPoints<Real>{Real(g.dx()), Real(g.dy()), mode * 2 * M_PI / g.lx,
                                             mode * 2 * M_PI / g.ly, amplitude}});
  }
};

}  // namespace cascade
