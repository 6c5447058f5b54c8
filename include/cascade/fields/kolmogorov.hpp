//! @file Kolmogorov forcing of the vorticity: the body force chi sin(k_f y) in x gives
//! f_omega = -chi k_f cos(k_f y).
#pragma once

#include <cmath>

#include "cascade/types.hpp"

namespace cascade {

template <class Real>
struct KolmogorovPoints {
  static constexpr bool kSpectral = false;
  Real dy;
  double chi, kf;
  CASCADE_HD double operator()(int, int j) const { return -chi * kf * cos(kf * double(dy) * j); }
};

}  // namespace cascade
