//! @file initial.type gaussian (one Gaussian vortex of peak vorticity initial.amplitude and width
//! initial.radius at (x0, y0)) and vortices (the list initial.vortices, Gaussian or Lamb-Oseen
//! profiles), summed over the nearest periodic images (fields/vortices.hpp). The mask also
//! removes the mean: a periodic box holds no net circulation.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "cascade/solver.hpp"

namespace cascade {

struct VorticesInitial {
  static constexpr std::array<const char*, 2> kTypes = {"gaussian", "vortices"};
  std::vector<VortexSpec> list;

  static VorticesInitial from(const InitialConfig& ic, const Grid&) {
    VorticesInitial v;
    if (ic.type == "gaussian") {
      // Peak vorticity `amplitude`, width `radius`: Gamma = amplitude 2 pi sigma^2.
      v.list.push_back({ic.x0, ic.y0, ic.radius, ic.amplitude * 2 * M_PI * ic.radius * ic.radius});
      return v;
    }
    for (const VortexConfig& c : ic.vortices)
      v.list.push_back({c.x, c.y, c.profile == "lamb-oseen" ? c.radius / std::sqrt(2.0) : c.radius, c.circulation});
    return v;
  }
  template <class Real>
  void apply(Solver<Real>& s, const InitialField*) const {
    const Grid& g = s.backend().grid();
    std::vector<FieldSpec<Real>> batches;
    for (std::size_t first = 0; first < list.size() || first == 0; first += kVortexBatch) {
      VortexPoints p{g.dx(), g.dy(), g.lx, g.ly, {}, 0};
      for (std::size_t k = first; k < list.size() && p.count < kVortexBatch; ++k) p.v[p.count++] = list[k];
      batches.push_back(p);
      if (list.empty()) break;
    }
    s.set_vorticity(batches);
  }
};

}  // namespace cascade
