//! @file forcing.type kolmogorov: the steady body force chi sin(k_f y) along x, k_f = 2 pi n_f / ly
//! (forcing.amplitude = chi, forcing.wavenumber = n_f; fields/kolmogorov.hpp).
#pragma once

#include <array>
#include <cmath>

#include "cascade/config.hpp"
#include "cascade/fields.hpp"

namespace cascade {

struct KolmogorovForcing {
  static constexpr std::array<const char*, 1> kTypes = {"kolmogorov"};
  double chi = 0;
  double k_f = 0;

  static KolmogorovForcing from(const ForcingConfig& f, const Grid& g) {
    return {f.amplitude, f.wavenumber * 2 * M_PI / g.ly};
  }
  bool white_noise() const { return false; }
  template <class Real>
  FieldSpec<Real> field(const Grid& g, long /*step*/, double /*h*/) const {
    return KolmogorovPoints<Real>{Real(g.dy()), chi, k_f};
  }
};

}  // namespace cascade
