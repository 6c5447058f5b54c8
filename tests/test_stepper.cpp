//! @file Stepper tables (order conditions, stage coefficients) and the pure dt policy.
#include <gtest/gtest.h>

#include <cmath>

#include "cascade/cfl.hpp"
#include "cascade/error.hpp"
#include "cascade/stepper.hpp"

namespace cascade {
namespace {

constexpr double kExact = 1e-15;

// Order conditions of an explicit RK method (Butcher): all up to the table's order.
void expect_order_conditions(const IfRkTable& t) {
  const auto A = t.butcher();
  const int s = t.stages();
  const auto& b = t.b;
  const auto& c = t.c;
  for (int i = 0; i < s; ++i) {
    double row = 0;
    for (int j = 0; j < s; ++j) row += A[i][j];
    EXPECT_NEAR(row, c[i], kExact) << "c_" << i << " = sum_j a_ij";
  }
  auto sum = [&](auto f) {
    double r = 0;
    for (int i = 0; i < s; ++i) r += f(i);
    return r;
  };
  auto Ac = [&](int i, int power) {
    double r = 0;
    for (int j = 0; j < s; ++j) r += A[i][j] * std::pow(c[j], power);
    return r;
  };
  EXPECT_NEAR(sum([&](int i) { return b[i]; }), 1.0, kExact);
  EXPECT_NEAR(sum([&](int i) { return b[i] * c[i]; }), 1.0 / 2, kExact);
  EXPECT_NEAR(sum([&](int i) { return b[i] * c[i] * c[i]; }), 1.0 / 3, kExact);
  EXPECT_NEAR(sum([&](int i) { return b[i] * Ac(i, 1); }), 1.0 / 6, kExact);
  if (t.order >= 4) {
    EXPECT_NEAR(sum([&](int i) { return b[i] * std::pow(c[i], 3); }), 1.0 / 4, kExact);
    EXPECT_NEAR(sum([&](int i) { return b[i] * c[i] * Ac(i, 1); }), 1.0 / 8, kExact);
    EXPECT_NEAR(sum([&](int i) { return b[i] * Ac(i, 2); }), 1.0 / 12, kExact);
    EXPECT_NEAR(sum([&](int i) {
                  double r = 0;
                  for (int j = 0; j < s; ++j) r += A[i][j] * Ac(j, 1);
                  return b[i] * r;
                }),
                1.0 / 24, kExact);
  } else {
    // A third-order table must not accidentally satisfy the fourth-order ones (else its
    // stated order, which the convergence test checks, would be wrong).
    EXPECT_GT(std::abs(sum([&](int i) { return b[i] * std::pow(c[i], 3); }) - 0.25), 1e-3);
  }
}

TEST(Stepper, Rk4SatisfiesFourthOrderConditions) { expect_order_conditions(rk4_table()); }
TEST(Stepper, Rk3SatisfiesThirdOrderConditions) { expect_order_conditions(rk3_table()); }

TEST(Stepper, TablesAreConsistent) {
  for (const IfRkTable* t : {&rk4_table(), &rk3_table()}) {
    SCOPED_TRACE(t->name);
    EXPECT_EQ(t->c.size(), t->b.size());
    EXPECT_EQ(t->a.size(), t->b.size());
    EXPECT_EQ(t->c[0], 0.0);
  }
  EXPECT_EQ(rk3_table().registers(), 2);
  EXPECT_EQ(rk4_table().registers(), 3);
  EXPECT_EQ(&stepper_table("rk3"), &rk3_table());
  EXPECT_THROW(stepper_table("euler"), InputError);
}

TEST(Stepper, StageCoefficientsReconstructTheLawsonWeights) {
  // Replaying the stage recursion on a scalar with E = 1 (L = 0) must give y + h sum b_i k_i
  // for arbitrary stage values k_i, and each Y_i = y + h sum_j a_ij k_j.
  for (const IfRkTable* t : {&rk4_table(), &rk3_table()}) {
    SCOPED_TRACE(t->name);
    const double h = 0.3, y = 1.7;
    const std::vector<double> k = {0.9, -1.3, 2.1, 0.4};
    const auto st = stage_coefficients(*t, h);
    const auto A = t->butcher();
    double S = y, K = 0, W = y;
    for (int i = 0; i < t->stages(); ++i) {
      if (i > 0) {
        double want = y;
        for (int j = 0; j < i; ++j) want += h * A[i][j] * k[j];
        EXPECT_NEAR(K, want, 1e-14) << "stage value Y_" << i;
      }
      K = k[i];
      S = S + st[i].hb * K;
      if (!st[i].last) K = (t->low_storage ? S : W) + st[i].ha * K;
    }
    double want = y;
    for (int i = 0; i < t->stages(); ++i) want += h * t->b[i] * k[i];
    EXPECT_NEAR(S, want, 1e-14);
  }
}

// ---------------------------------------------------------------- dt policy

TEST(DtPolicy, TakesTheSmallestBound) {
  const DtPolicy p{0.5, 0.1, 1e-8, 1.2, 0};
  DtChoice c = choose_dt(p, 100.0, 0.001, 0.0, 10.0);  // cfl 0.005, growth 0.0012
  EXPECT_DOUBLE_EQ(c.dt, 0.0012);
  EXPECT_EQ(c.limit, DtLimit::Growth);
  c = choose_dt(p, 100.0, 0.01, 0.0, 10.0);
  EXPECT_DOUBLE_EQ(c.dt, 0.005);
  EXPECT_EQ(c.limit, DtLimit::Cfl);
  c = choose_dt(p, 1.0, 1.0, 0.0, 10.0);
  EXPECT_DOUBLE_EQ(c.dt, 0.1);
  EXPECT_EQ(c.limit, DtLimit::DtMax);
  EXPECT_FALSE(c.lands);
}

TEST(DtPolicy, FirstStepUsesDtInitialAndZeroVelocityUsesDtMax) {
  DtPolicy p{0.5, 0.1, 1e-8, 1.2, 1e-3};
  EXPECT_DOUBLE_EQ(choose_dt(p, 0.0, 0.0, 0.0, 10.0).dt, 1e-3);
  p.dt_initial = 0;
  const DtChoice c = choose_dt(p, 0.0, 0.0, 0.0, 10.0);
  EXPECT_DOUBLE_EQ(c.dt, 0.1);
  EXPECT_EQ(c.limit, DtLimit::DtMax);
}

TEST(DtPolicy, LandsExactlyOnOutputTimes) {
  const DtPolicy p{0.5, 0.1, 1e-8, 1.2, 0};
  const DtChoice c = choose_dt(p, 1.0, 1.0, 3.75, 3.8);
  EXPECT_EQ(c.limit, DtLimit::Output);
  EXPECT_TRUE(c.lands);
  EXPECT_DOUBLE_EQ(3.75 + c.dt, 3.8);
}

TEST(DtPolicy, NonFiniteMaximumGivesNaN) {
  const DtPolicy p;
  EXPECT_TRUE(std::isnan(choose_dt(p, NAN, 0.01, 0, 1).dt));
  EXPECT_TRUE(std::isnan(choose_dt(p, INFINITY, 0.01, 0, 1).dt));
}

TEST(DtPolicy, NextOutputIsAFullIntervalAhead) {
  EXPECT_DOUBLE_EQ(next_multiple(0.0, 0.1), 0.1);
  EXPECT_DOUBLE_EQ(next_multiple(3.7, 0.25), 3.75);
  EXPECT_DOUBLE_EQ(next_multiple(3 * 0.1, 0.1), 4 * 0.1);  // 0.30000000000000004
  EXPECT_DOUBLE_EQ(next_multiple(0.3, 0.1), 4 * 0.1);      // 0.29999999999999999
  EXPECT_DOUBLE_EQ(next_multiple(1e6 + 0.5, 1.0), 1e6 + 1);
}

}  // namespace
}  // namespace cascade
