//! @file Plain parameter structs of the vorticity equation and its stepper, shared by host
//! code and kernels (no CUDA types).
#pragma once

#include "cascade/types.hpp"

namespace cascade {

//! The linear terms of the vorticity equation, their one list of numbers: the deck's `physics`
//! section (config.hpp PhysicsConfig) as read, and what the kernels' LinearOperator
//! (kernels/ns_terms.cuh) evaluates. D(k) = nu k^(2 nu_order) + mu + alpha k^(-2 alpha_order);
//! beta: the beta-plane term -beta v.
struct LinearCoefficients {
  double nu = 0;
  int nu_order = 1;
  double mu = 0;
  double alpha = 0;
  int alpha_order = 1;
  double beta = 0;
};

//! The numbers one stage of an integrating-factor Runge-Kutta step needs (src/core/stepper.cpp).
struct StageCoefficients {
  double h = 0;        //!< dt
  double dS = 0;       //!< c_i - c_{i-1}
  double hb = 0;       //!< h b_i
  bool last = false;
  double d_final = 0;  //!< 1 - c_s
  double dW = 0;       //!< c_{i+1} (classic tables)
  double dK = 0;       //!< c_{i+1} - c_i
  double ha = 0;       //!< h a_{i+1}
  int stage = 0;       //!< i: the step on the device reads h, hb and ha of stage i from its clock
};

//! Sums over the half spectrum, in double, before the 1/(nx ny)^2 factor (ns_ops.cuh):
//! the state's integrals and their rates of change by the linear terms and the forcing F.
struct SpectralSums {
  double energy = 0;        //!< E = 1/2 sum |w|^2/k^2
  double enstrophy = 0;     //!< Z = 1/2 sum |w|^2
  double palinstrophy = 0;  //!< P = 1/2 sum k^2 |w|^2
  double diss_nu = 0;       //!< -dE/dt by viscosity:      sum nu k^2p |w|^2/k^2
  double diss_mu = 0;       //!< -dE/dt by friction:       sum mu |w|^2/k^2
  double diss_alpha = 0;    //!< -dE/dt by hypoviscosity:  sum alpha k^-2q |w|^2/k^2
  double diss_z = 0;        //!< -dZ/dt by all of D(k):    sum D(k) |w|^2
  double inj = 0;           //!< sum Re(conj(w) F)/k^2  (dE/dt by F)
  double inj_z = 0;         //!< sum Re(conj(w) F)      (dZ/dt by F)
  double f2 = 0;            //!< sum |F|^2/k^2          (the forcing's own energy norm)
  double f2_z = 0;          //!< sum |F|^2
  CASCADE_HD SpectralSums operator+(const SpectralSums& o) const {
    SpectralSums r;
    r.energy = energy + o.energy;
    r.enstrophy = enstrophy + o.enstrophy;
    r.palinstrophy = palinstrophy + o.palinstrophy;
    r.diss_nu = diss_nu + o.diss_nu;
    r.diss_mu = diss_mu + o.diss_mu;
    r.diss_alpha = diss_alpha + o.diss_alpha;
    r.diss_z = diss_z + o.diss_z;
    r.inj = inj + o.inj;
    r.inj_z = inj_z + o.inj_z;
    r.f2 = f2 + o.f2;
    r.f2_z = f2_z + o.f2_z;
    return r;
  }
  double dissipation() const { return diss_nu + diss_mu + diss_alpha; }
};

//! How a step adds the budget rates of its start state to the interval's integrals
//! (Solver::begin_step), 1/(nx ny)^2 folded in: the D(k) terms with weight `d` (half the
//! previous step's dt, still pending, plus half this one's: trapezoidal in time), the forcing
//! terms with `inj`, and for white noise also `f2` times |F|^2 (the energy h F itself adds).
struct BudgetWeights {
  double d = 0, inj = 0, f2 = 0;
};

//! integral[0..5] (BudgetState's diss_nu, diss_mu, diss_alpha, diss_z, inj, inj_z) += rates.
CASCADE_HD inline void accumulate_budget(double* integral, const SpectralSums& s, const BudgetWeights& w) {
  integral[0] += w.d * s.diss_nu;
  integral[1] += w.d * s.diss_mu;
  integral[2] += w.d * s.diss_alpha;
  integral[3] += w.d * s.diss_z;
  integral[4] += w.inj * s.inj + w.f2 * s.f2;
  integral[5] += w.inj * s.inj_z + w.f2 * s.f2_z;
}

}  // namespace cascade
