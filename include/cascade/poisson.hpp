//! @file The spectral Poisson problem lap(phi) = r on the periodic box (`cascade poisson`).
//!
//! r is the Laplacian of a Gaussian, so the exact solution is known (NVIDIA's spectral Poisson
//! example): phi = exp(-s/(2 sigma^2)), s = |x - x0|^2. phi_hat = -r_hat/k^2 with the k = 0
//! mode zero; the free constant is then fixed by the gauge: `corner` sets phi(0,0) = 0 (as
//! the reference did), `zero-mean` keeps <phi> = 0 and compares with exact - <exact>.
#pragma once

#include <string>
#include <vector>

#include "cascade/backend.hpp"
#include "cascade/config.hpp"

namespace cascade {

struct PoissonResult {
  Grid grid;
  std::string gauge;
  std::vector<double> phi;    //!< computed solution (run precision, widened)
  std::vector<double> rhs;    //!< right-hand side as evaluated on the backend
  std::vector<double> exact;  //!< analytic solution in double, in the same gauge
  double linf = 0;            //!< max |phi - exact|
  double l2 = 0;              //!< sqrt(sum (phi - exact)^2) / (nx ny), the reference's norm
  double rms = 0;             //!< sqrt(mean (phi - exact)^2)
  int iref = 0, jref = 0;     //!< the reference's point: (nx/2 - 1, ny/2 - 1)
  int icentre = 0, jcentre = 0;  //!< the box centre: (nx/2, ny/2)
  double at(const std::vector<double>& f, int i, int j) const { return f[std::size_t(j) * grid.nx + i]; }
};

//! Solve the Gaussian problem on `backend` (its grid) with the deck's poisson section.
template <class Real>
PoissonResult solve_poisson(Backend<Real>& backend, const PoissonConfig& p);

//! `cascade poisson`: solve, print the reference-point value and errors, write poisson.h5.
//! `backend_request` overrides run.backend when not empty.
int run_poisson_command(const Config& config, const std::string& backend_request);

}  // namespace cascade
