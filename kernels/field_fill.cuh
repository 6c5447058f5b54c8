//! @file A buffer filled from a field of include/cascade/fields.hpp, over every index of a
//! backend's part of the grid (Backend::fill_modes, fill_points): the one place that turns a
//! flat index into the mode or point a field is given at; and a step's white noise
//! (StepForcing, Backend::step_forcing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "cascade/fields.hpp"
#include "cascade/step_clock.hpp"
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

//! One member's white noise in StepForcing: its base field, or none (a dropped member's).
template <class Spec>
struct MemberField {
  Spec base;
  bool at_rest;
};

//! Whether Spec is the base of white noise: base.at_step(step, h) is that step's draw.
template <class Spec, class = void>
struct HasAtStep : std::false_type {};
template <class Spec>
struct HasAtStep<Spec, std::void_t<decltype(std::declval<const Spec&>().at_step(std::uint64_t(0), 0.0))>>
    : std::true_type {};

//! The white noise of a step at every kept mode of every member (`per` modes each; member m's
//! from each[m], zero where at rest): the step and h from the step's clock where there is one
//! (the device's, which the host's steps write too: one kernel for both), else those given. A
//! step the clock does not take writes nothing.
template <class Real, class Spec>
struct StepForcing {
  SpectralShape<Real> s;
  DealiasMask<Real> mask;
  const MemberField<Spec>* each;
  std::size_t per;
  Complex<Real>* out;
  const StepClock* clock;  //!< null: step and h
  long step;
  double h;
  CASCADE_HD void operator()(std::size_t idx) const {
    if (clock && !clock->go) return;
    const std::size_t m = idx / per;
    const MemberField<Spec>& f = each[m];
    int i, j;
    s.mode(idx - m * per, i, j);
    const int n = s.my(j);
    if (f.at_rest || !mask.keep(s, i, j)) {
      out[idx] = Complex<Real>{Real(0), Real(0)};
      return;
    }
    const Spec spec = f.base.at_step(std::uint64_t(clock ? clock->step - 1 : step), clock ? clock->h : h);
    out[idx] = spec(i, n, double(s.kx0) * i, double(s.ky0) * n);
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
