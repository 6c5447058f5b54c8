//! @file Spectral Poisson solver against the analytic Gaussian: the NVIDIA reference values,
//! exponential convergence, rectangular boxes, and CPU/GPU agreement.
#include <gtest/gtest.h>

#include <cmath>

#include "backend_cases.hpp"
#include "cascade/poisson.hpp"

namespace cascade {
namespace {

using test::BackendCase;

// Published values of the reference (L = 1, N = 64, sigma = 0.1, phi(0,0) = 0).
constexpr double kRefValue = 0.975879;     // computed phi at 1-based (32,32)
constexpr double kRefExact = 0.975882;     // exact phi there
constexpr double kRefLinf = 2.404194e-05;
constexpr double kRefL2 = 9.412790e-08;    // sqrt(sum e^2) / N^2
constexpr double kThreeDigits = 5e-4;      // relative: agreement to 3 significant digits
constexpr double kPrintedDigits = 1e-6;    // the reference printed 6 decimals

PoissonConfig seed_case() {
  PoissonConfig p;
  p.sigma = 0.1;
  p.x0 = 0.5;
  p.y0 = 0.5;
  p.gauge = "corner";
  return p;
}

class Poisson : public testing::TestWithParam<BackendCase> {};

TEST_P(Poisson, SeedCaseReproducesReferenceValues) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    const Grid g(64, 64, 1.0, 1.0);
    auto b = make_backend<Real>(GetParam().kind, g);
    const PoissonResult r = solve_poisson(*b, seed_case());
    ASSERT_EQ(r.iref, 31);
    ASSERT_EQ(r.jref, 31);
    EXPECT_NEAR(r.at(r.exact, 31, 31), kRefExact, kPrintedDigits);
    if (sizeof(Real) == 8) {
      EXPECT_NEAR(r.at(r.phi, 31, 31), kRefValue, kPrintedDigits);
      EXPECT_NEAR(r.linf / kRefLinf, 1.0, kThreeDigits);
      EXPECT_NEAR(r.l2 / kRefL2, 1.0, kThreeDigits);
    } else {
      // Single precision: phi is O(1), so round-off adds ~1e-6 to the 2.4e-5 image error.
      constexpr double kFloatRoundOff = 3e-6;
      EXPECT_NEAR(r.at(r.phi, 31, 31), kRefValue, kFloatRoundOff);
      EXPECT_NEAR(r.linf, kRefLinf, kFloatRoundOff);
      EXPECT_NEAR(r.l2, kRefL2, kFloatRoundOff / 64);
    }
  });
}

// A narrow Gaussian (sigma = 0.05 L): the periodic images are below round-off, so the error
// must fall exponentially with N down to round-off.
void expect_exponential_convergence(BackendKind kind, Precision prec, double lx, double ly, double aspect) {
  test::with_precision(prec, [&](auto tag) {
    using Real = decltype(tag);
    PoissonConfig p;
    p.sigma = 0.05 * std::min(lx, ly);
    p.x0 = lx / 2;
    p.y0 = ly / 2;
    std::vector<double> errors;
    for (int n : {16, 32, 64, 128}) {
      const Grid g(n, int(n * aspect), lx, ly);
      auto b = make_backend<Real>(kind, g);
      errors.push_back(solve_poisson(*b, p).linf);
    }
    const double floor = sizeof(Real) == 4 ? 2e-5 : 1e-12;
    // Until round-off is reached every doubling must cut the error by a large factor.
    for (std::size_t k = 1; k < errors.size(); ++k)
      if (errors[k - 1] > 100 * floor) EXPECT_LT(errors[k], errors[k - 1] / 50) << "N step " << k;
    EXPECT_GT(errors[0], 1e-3) << "N = 16 must be under-resolved, else the test shows nothing";
    EXPECT_LT(errors.back(), floor) << "N = 128 must reach round-off";
  });
}

TEST_P(Poisson, ExponentialConvergenceSquare) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  expect_exponential_convergence(GetParam().kind, GetParam().precision, 1.0, 1.0, 1.0);
}

TEST_P(Poisson, ExponentialConvergenceRectangular) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  // nx != ny and lx != ly, with the same resolution per unit length in both directions.
  expect_exponential_convergence(GetParam().kind, GetParam().precision, 1.0, 1.5, 1.5);
}

TEST_P(Poisson, ZeroMeanGauge) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    const Grid g(128, 128, 1.0, 1.0);
    auto b = make_backend<Real>(GetParam().kind, g);
    PoissonConfig p = seed_case();
    p.sigma = 0.05;
    p.gauge = "zero-mean";
    const PoissonResult r = solve_poisson(*b, p);
    double mean = 0;
    for (double v : r.phi) mean += v;
    EXPECT_NEAR(mean / double(g.size()), 0.0, sizeof(Real) == 4 ? 1e-6 : 1e-14);
    EXPECT_LT(r.linf, sizeof(Real) == 4 ? 2e-5 : 1e-12);
  });
}

INSTANTIATE_TEST_SUITE_P(Backends, Poisson, testing::ValuesIn(test::all_backend_cases()), test::case_name);

// CPU and GPU must agree: 1e-12 relative in double, 1e-5 in single.
class CpuGpuAgreement : public testing::TestWithParam<Precision> {};

TEST_P(CpuGpuAgreement, PoissonAndTransforms) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  test::with_precision(GetParam(), [&](auto tag) {
    using Real = decltype(tag);
    const double tol = sizeof(Real) == 4 ? 1e-5 : 1e-12;
    for (auto [nx, ny, lx, ly] : {std::tuple{64, 64, 1.0, 1.0}, std::tuple{256, 192, 2.0, 1.5}}) {
      const Grid g(nx, ny, lx, ly);
      auto cpu = make_backend<Real>(BackendKind::Cpu, g);
      auto gpu = make_backend<Real>(BackendKind::Cuda, g);
      PoissonConfig p = seed_case();
      p.x0 = lx / 2;
      p.y0 = ly / 2;
      const PoissonResult a = solve_poisson(*cpu, p), c = solve_poisson(*gpu, p);
      double diff = 0, scale = 0;
      for (std::size_t k = 0; k < a.phi.size(); ++k) {
        diff = std::max(diff, std::abs(a.phi[k] - c.phi[k]));
        scale = std::max(scale, std::abs(a.phi[k]));
      }
      EXPECT_LT(diff / scale, tol) << nx << "x" << ny << " phi";
      // A derivative of the rhs, round trip through both transforms. First order: a spectral
      // derivative multiplies the transforms' round-off at the highest modes by k_max, so in
      // single precision a second derivative of this sharp rhs differs by ~5e-5 between two
      // correct FFT libraries, a first derivative by ~1e-6.
      Buffer<Real> rc = cpu->real_field(), rg = gpu->real_field();
      Buffer<Complex<Real>> hc = cpu->spectral_field(), hg = gpu->spectral_field();
      Buffer<Complex<Real>> dc = cpu->spectral_field(), dg = gpu->spectral_field();
      std::vector<Real> rhs(a.rhs.begin(), a.rhs.end());
      cpu->from_host(rhs, rc);
      gpu->from_host(rhs, rg);
      cpu->forward(rc, hc);
      gpu->forward(rg, hg);
      cpu->derivative(hc, dc, 1, 0);
      gpu->derivative(hg, dg, 1, 0);
      cpu->inverse(dc, rc);
      gpu->inverse(dg, rg);
      std::vector<Real> oc, og;
      cpu->to_host(rc, oc);
      gpu->to_host(rg, og);
      diff = scale = 0;
      for (std::size_t k = 0; k < oc.size(); ++k) {
        diff = std::max(diff, std::abs(double(oc[k]) - double(og[k])));
        scale = std::max(scale, std::abs(double(oc[k])));
      }
      EXPECT_LT(diff / scale, tol) << nx << "x" << ny << " d/dx";
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Precisions, CpuGpuAgreement, testing::Values(Precision::Double, Precision::Single),
                         [](const testing::TestParamInfo<Precision>& i) { return std::string(to_string(i.param)); });

}  // namespace
}  // namespace cascade
