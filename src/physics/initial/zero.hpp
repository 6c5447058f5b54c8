//! @file initial.type zero: omega = 0 (a forced run from rest).
#pragma once

#include <array>

#include "cascade/solver.hpp"

namespace cascade {

struct ZeroInitial {
  static constexpr std::array<const char*, 1> kTypes = {"zero"};
  static ZeroInitial from(const InitialConfig&, const Grid&) { return {}; }
  template <class Real>
  void apply(Solver<Real>& s, const InitialField*) const {
    s.set_vorticity(std::vector<FieldSpec<Real>>{});  // no terms: zero
  }
};

}  // namespace cascade
