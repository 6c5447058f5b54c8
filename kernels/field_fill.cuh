//! @file A buffer filled from a field of include/cascade/fields.hpp, over every index of a
//! backend's part of the grid (Backend::fill_modes, fill_points): the one place that turns a
//! flat index into the mode or point a field is given at.
#pragma once

#include <cstddef>

#include "cascade/fields.hpp"
#include "kernels/ns_terms.cuh"
#include "kernels/pointwise_ops.cuh"

namespace cascade {

//! out[idx] = the field at mode idx where the dealiasing keeps it, zero elsewhere.
template <class Real, class Spec>
struct FillModes {
  SpectralShape<Real> s;
  DealiasMask<Real> mask;
  Spec spec;
  Complex<Real>* out;
  CASCADE_HD void operator()(std::size_t idx) const {
    int i, j;
    s.mode(idx, i, j);
    const int n = s.my(j);
    out[idx] = mask.keep(s, i, j) ? spec(i, n, double(s.kx0) * i, double(s.ky0) * n) : Complex<Real>{Real(0), Real(0)};
  }
};

//! One member's field in an ensemble's fill (FillModesEach): zero where at rest.
template <class Spec>
struct MemberField {
  Spec spec;
  bool at_rest;
};

//! FillModes over every member of an ensemble's buffer (`per` elements each) in one pass, member
//! m's field from each[m].
template <class Real, class Spec>
struct FillModesEach {
  SpectralShape<Real> s;
  DealiasMask<Real> mask;
  const MemberField<Spec>* each;
  std::size_t per;
  Complex<Real>* out;
  CASCADE_HD void operator()(std::size_t idx) const {
    const std::size_t m = idx / per;
    const MemberField<Spec>& f = each[m];
    int i, j;
    s.mode(idx - m * per, i, j);
    const int n = s.my(j);
    out[idx] = !f.at_rest && mask.keep(s, i, j) ? f.spec(i, n, double(s.kx0) * i, double(s.ky0) * n)
                                                : Complex<Real>{Real(0), Real(0)};
  }
};

//! out[idx] = the field at point idx, or out[idx] + the field (`add`), summed in double.
template <class Real, class Spec>
struct FillPoints {
  PhysicalShape<Real> g;
  Spec spec;
  bool add;
  Real* out;
  CASCADE_HD void operator()(std::size_t idx) const {
    int i, j;
    g.point(idx, i, j);
    const double v = double(spec(i, j));
    out[idx] = Real(add ? double(out[idx]) + v : v);
  }
};

}  // namespace cascade
