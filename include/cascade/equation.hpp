//! @file Plain parameter structs of the vorticity equation and its stepper, shared by host
//! code and kernels (no CUDA types).
#pragma once

#include "cascade/types.hpp"

namespace cascade {

//! D(k) = nu k^(2p) + mu + alpha k^(-2q); beta: the beta-plane term -beta v.
struct LinearCoefficients {
  double nu = 0;
  int p = 1;
  double mu = 0;
  double alpha = 0;
  int q = 1;
  double beta = 0;
};

//! The numbers one stage of an integrating-factor Runge-Kutta step needs (src/stepper.cpp).
struct StageCoefficients {
  double h = 0;        //!< dt
  double dS = 0;       //!< c_i - c_{i-1}
  double hb = 0;       //!< h b_i
  bool last = false;
  double d_final = 0;  //!< 1 - c_s
  double dW = 0;       //!< c_{i+1} (classic tables)
  double dK = 0;       //!< c_{i+1} - c_i
  double ha = 0;       //!< h a_{i+1}
};

//! Sums over the half spectrum, in double, before the 1/(nx ny)^2 factor (ns_ops.cuh).
struct SpectralSums {
  double energy = 0, enstrophy = 0, palinstrophy = 0, dissipation = 0, injection = 0;
  CASCADE_HD SpectralSums operator+(const SpectralSums& o) const {
    return {energy + o.energy, enstrophy + o.enstrophy, palinstrophy + o.palinstrophy,
            dissipation + o.dissipation, injection + o.injection};
  }
};

}  // namespace cascade
