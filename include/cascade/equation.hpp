//! @file The equation a Solver advances, built once from the deck:
//!
//!   d omega / dt = L omega + N(omega) + F,   omega_hat kept dealiased,
//!
//! L the linear operator (coefficients.hpp LinearCoefficients; kernels/ns_terms.cuh
//! LinearOperator evaluates it), N = -u.grad(omega) in Basdevant's or the advective form,
//! the dealiasing rule (grid.hpp), and the forcing F (forcing.hpp). The kernels hold the one
//! definition of each term (kernels/ns_terms.cuh: the mask, L, the velocity of a mode, the
//! products and their spectral combination), used by every evaluation of the step.
#pragma once

#include "cascade/coefficients.hpp"
#include "cascade/config.hpp"
#include "cascade/forcing.hpp"
#include "cascade/grid.hpp"

namespace cascade {

struct Equation {
  LinearCoefficients linear;
  NonlinearForm form = NonlinearForm::Basdevant;
  Dealias dealias = Dealias::TwoThirds;
  Forcing forcing;

  //! InputError where the deck's forcing cannot be made on its grid.
  static Equation of(const Config& c) {
    return {c.physics, c.grid.nonlinear, c.grid.dealias, make_forcing(c.forcing, c.make_grid())};
  }
  bool advective() const { return form == NonlinearForm::Advective; }
  bool forced() const { return !std::holds_alternative<NoForcing>(forcing); }
  bool white_noise() const {
    return std::visit([](const auto& f) { return f.white_noise(); }, forcing);
  }
};

}  // namespace cascade
