//! @file initial.type random: a McWilliams (1984) spectrum peaked at initial.k0 with random
//! phases (initial.seed), scaled to the total energy initial.energy (fields/mcwilliams.hpp).
#pragma once

#include <array>
#include <cstdint>

#include "cascade/solver.hpp"

namespace cascade {

struct RandomInitial {
  static constexpr std::array<const char*, 1> kTypes = {"random"};
  double k0 = 0, energy = 0;
  std::uint64_t seed = 0;

  static RandomInitial from(const InitialConfig& ic, const Grid&) {
    return {ic.k0, ic.energy, static_cast<std::uint64_t>(ic.seed)};
  }
  template <class Real>
  void apply(Solver<Real>& s, const InitialField*) const {
    s.set_vorticity({McWilliamsModes<Real>{k0, seed, s.backend().grid().ny}});
    s.scale_to_energy(energy);
  }
};

}  // namespace cascade
