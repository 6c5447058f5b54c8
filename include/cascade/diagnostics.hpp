//! @file What a Solver reports and takes that the output layer writes and reads: a row of
//! diagnostics, the budget of the open diagnostics interval (kept in checkpoints) and the field
//! of initial.type file. Plain data: the output layer includes this, not the solver.
#pragma once

#include <string>
#include <vector>

namespace cascade {

//! One row of diagnostics (docs/output-format.md, Diagnostics): domain means of the state at time t, and the
//! budget terms. In a row written at an output time the budget terms are means over the
//! interval since the previous row, accumulated exactly step by step (trapezoidal in time for
//! the damping, and for deterministic forcing; the injection of white-in-time forcing is the
//! energy its increment adds, Re<omega, F> + dt/2 |F|^2), so that
//! E(t_i) - E(t_{i-1}) = (t_i - t_{i-1}) (injection - dissipation) to the stepper's accuracy.
//! Elsewhere (the first row, progress lines) they are the instantaneous rates.
struct Diagnostics {
  long step = 0;
  double t = 0;
  double dt = 0;            //!< the step that ended at t (0 before the first)
  double energy = 0;        //!< E = 1/2 <|u|^2>
  double enstrophy = 0;     //!< Z = 1/2 <omega^2>
  double palinstrophy = 0;  //!< P = 1/2 <|grad omega|^2>
  double max_u = 0;         //!< max |u|
  //! The CFL number of the step that ended at t, as this member sees it: dt * max_rate (0 in
  //! the first row, where dt = 0). Set with dt (set_dt): the solver gives max_rate, the run dt.
  double cfl = 0;
  std::string cfl_limit = "none";
  double injection = 0;     //!< dE/dt from the forcing
  double dissipation = 0;   //!< -dE/dt from D(k) = the three below
  double dissipation_nu = 0;     //!< -dE/dt by viscosity
  double dissipation_mu = 0;     //!< -dE/dt by friction
  double dissipation_alpha = 0;  //!< -dE/dt by hypoviscosity
  double injection_z = 0;        //!< dZ/dt from the forcing
  double dissipation_z = 0;      //!< -dZ/dt from D(k)
  double wall_per_step = 0;      //!< seconds per step over the interval (run.cpp)
  //! max over the grid of |u|/dx + |v|/dy of the state at t (the solver's; no column: the
  //! row's cfl is dt times it).
  double max_rate = 0;

  //! The row's dt, and the cfl it gives: dt * max_rate (NaN where max_rate is, as in a dropped
  //! ensemble member's row).
  void set_dt(double step) {
    dt = step;
    cfl = step * max_rate;
  }
};

//! The budget integrals of the current diagnostics interval (kept in checkpoints, so that a
//! restart continues the interval exactly).
struct BudgetState {
  static constexpr int kTerms = 6;  //!< diss_nu, diss_mu, diss_alpha, diss_z, inj, inj_z
  double integral[kTerms] = {0, 0, 0, 0, 0, 0};
  //! An ensemble's (members > 1): kTerms integrals a member, member after member (member 0's
  //! also in `integral`); empty for a single run.
  std::vector<double> members;
  double interval = 0;  //!< time covered
  double last_dt = 0;   //!< the last step, whose end-of-step half is still to be added
  bool open = false;    //!< a step's end half is pending
};

//! The vorticity of initial.type file, read and checked (even sizes, finite values) by
//! read_initial_field (output.hpp): a snapshot's /vorticity (physical, ny x nx) or a
//! checkpoint's spectral state (interleaved re, im).
struct InitialField {
  bool spectral = false;
  int nx = 0, ny = 0;
  std::vector<double> values;
};

}  // namespace cascade
