//! @file Integrating-factor Runge-Kutta steppers as coefficient tables.
//!
//! A table (c, sub-diagonal a, b) drives one generic stage routine (Solver::advance). With
//! E(tau) = exp(L tau) per mode, h = dt, Y_i the stage values and K_i = N(Y_i):
//!
//!   Y_1 = omega_n
//!   Y_i = base_i + h a_i E((c_i - c_{i-1}) h) K_{i-1}
//!   omega_{n+1} = E(h) omega_n + h sum_i b_i E((1 - c_i) h) K_i     (Lawson's IF-RK)
//!
//! Two families need only a running accumulator S_i = E(c_i h) omega_n + h sum_{j<=i} b_j
//! E((c_i - c_j) h) K_j besides K:
//!  - classic (a_{ij} = 0 for j < i-1, e.g. classic RK4): base_i = E(c_i h) omega_n, so
//!    omega_n is kept too: three spectral registers (W, S, K);
//!  - low storage (a_{ij} = b_j for j < i-1, van der Houwen's 2R form, e.g. Wray's RK3):
//!    base_i = E((c_i - c_{i-1}) h) S_{i-1} with a_i replaced by a_i - b_{i-1}: two registers
//!    (S, K).
#pragma once

#include <string>
#include <vector>

#include "cascade/coefficients.hpp"
#include "cascade/step_clock.hpp"

namespace cascade {

struct IfRkTable {
  std::string name;
  int order = 0;
  bool low_storage = false;  //!< van der Houwen form: a_{ij} = b_j for j < i-1
  std::vector<double> c;     //!< stage times, c[0] = 0
  std::vector<double> a;     //!< a[i] = a_{i,i-1} (Butcher), a[0] unused
  std::vector<double> b;     //!< weights

  int stages() const { return static_cast<int>(b.size()); }
  int registers() const { return low_storage ? 2 : 3; }
  //! The full Butcher matrix the table stands for (for the order-condition checks).
  std::vector<std::vector<double>> butcher() const;
};

//! Classic RK4 (Kutta 1901) with an integrating factor (Lawson 1967).
const IfRkTable& rk4_table();
//! Wray's low-storage third-order RK (Spalart, Moser & Rogers 1991) with an integrating factor.
const IfRkTable& rk3_table();
//! "rk4" or "rk3"; throws InputError otherwise.
const IfRkTable& stepper_table(const std::string& name);

//! The coefficients of each stage of one step of size h.
std::vector<StageCoefficients> stage_coefficients(const IfRkTable& table, double h);

//! The rule of an adaptive step with this table (include/cascade/step_clock.hpp): the factors of
//! h in each stage, which take_step multiplies by h as stage_coefficients does.
StepRule step_rule(const IfRkTable& table, const DtPolicy& policy, double n2, ForcingKind forcing);

}  // namespace cascade
