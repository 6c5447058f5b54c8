//! @file Stepper tables and their per-stage coefficients (include/cascade/stepper.hpp).
#include "cascade/stepper.hpp"

#include "cascade/error.hpp"

namespace cascade {

std::vector<std::vector<double>> IfRkTable::butcher() const {
  const int s = stages();
  std::vector<std::vector<double>> A(s, std::vector<double>(s, 0.0));
  for (int i = 1; i < s; ++i) {
    A[i][i - 1] = a[i];
    if (low_storage)
      for (int j = 0; j < i - 1; ++j) A[i][j] = b[j];
  }
  return A;
}

const IfRkTable& rk4_table() {
  static const IfRkTable t{"rk4", 4, false, {0.0, 0.5, 0.5, 1.0}, {0.0, 0.5, 0.5, 1.0},
                           {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6}};
  return t;
}

const IfRkTable& rk3_table() {
  // Wray's RK3: a21 = 8/15, a31 = 1/4 (= b1), a32 = 5/12; b = (1/4, 0, 3/4); c = (0, 8/15, 2/3).
  static const IfRkTable t{"rk3", 3, true, {0.0, 8.0 / 15, 2.0 / 3}, {0.0, 8.0 / 15, 5.0 / 12},
                           {0.25, 0.0, 0.75}};
  return t;
}

const IfRkTable& stepper_table(const std::string& name) {
  if (name == "rk4") return rk4_table();
  if (name == "rk3") return rk3_table();
  throw InputError("time.stepper: expected rk4 or rk3, found '" + name + "'");
}

namespace {
//! The factor of h in stage i's step to the next stage value (a_{i+1}; low storage a_{i+1} - b_i).
double a_next(const IfRkTable& t, int i) { return t.low_storage ? t.a[i + 1] - t.b[i] : t.a[i + 1]; }
}  // namespace

std::vector<StageCoefficients> stage_coefficients(const IfRkTable& t, double h) {
  const int s = t.stages();
  std::vector<StageCoefficients> out(s);
  for (int i = 0; i < s; ++i) {
    StageCoefficients& k = out[i];
    k.h = h;
    k.stage = i;
    k.dS = t.c[i] - (i > 0 ? t.c[i - 1] : 0.0);
    k.hb = h * t.b[i];
    k.last = i == s - 1;
    k.d_final = 1.0 - t.c[s - 1];
    if (!k.last) {
      k.dW = t.c[i + 1];
      k.dK = t.c[i + 1] - t.c[i];
      k.ha = h * a_next(t, i);
    }
  }
  return out;
}

StepRule step_rule(const IfRkTable& t, const DtPolicy& policy, double n2, ForcingKind forcing) {
  if (t.stages() > kMaxStages)
    throw RunError("stepper " + t.name + ": " + std::to_string(t.stages()) + " stages, at most " +
                   std::to_string(kMaxStages) + " supported");
  StepRule r;
  r.policy = policy;
  r.stages = t.stages();
  for (int i = 0; i < r.stages; ++i) {
    r.b[i] = t.b[i];
    r.a_next[i] = i + 1 < r.stages ? a_next(t, i) : 0.0;
  }
  r.n2 = n2;
  r.forcing = forcing;
  return r;
}

}  // namespace cascade
