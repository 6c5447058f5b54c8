//! @file The cascaded max-reduction: the CPU maximum and every GPU variant (fused, column
//! two-pass, column host combine) against host references on random data: NaN anywhere, odd
//! sizes, sizes off the block size, one row, one column, misaligned starts. Inputs sit between
//! NaN guards (a read outside them turns the result into NaN) and device results are poisoned
//! before each call (a variant that writes nothing fails). Max is exact: compared with ==.
//! GPU cases skip, with the reason, where CUDA is not built or no device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend_cases.hpp"  // CASCADE_SKIP_IF_UNAVAILABLE (cuda_unavailable_reason)
#include "cascade/backend.hpp"
#include "cascade/error.hpp"
#include "cascade/reduction.hpp"
#include "kernels/reduction_ops.cuh"

namespace {

using namespace cascade;

// The CFL speed |u|/dx + |v|/dy is one functor on host and device, rounded without FMA on both
// in the default builds; the host reference allows 2 ulps in case a host build contracts it.
// The GPU variants are compared with each other bit for bit.
constexpr double kCflUlps = 2.0;

template <class Real>
constexpr Real kNaN = std::numeric_limits<Real>::quiet_NaN();
template <class Real>
constexpr Real kPoison = Real(1234.5);  //!< never a value of the data nor an identity

const std::vector<std::size_t> kSizes = {0, 1, 2, 31, 32, 33, 255, 256, 257, 1023, 1025,
                                         (std::size_t(1) << 20) + 7};

enum class Pattern { MaxFirst, MaxLast, MaxRandom, AllNegative, NaNFirst, NaNLast, NaNRandom };
const std::vector<Pattern> kPatterns = {Pattern::MaxFirst, Pattern::MaxLast,  Pattern::MaxRandom,
                                        Pattern::AllNegative, Pattern::NaNFirst, Pattern::NaNLast,
                                        Pattern::NaNRandom};

const char* name(Pattern p) {
  switch (p) {
    case Pattern::MaxFirst: return "max-first";
    case Pattern::MaxLast: return "max-last";
    case Pattern::MaxRandom: return "max-random";
    case Pattern::AllNegative: return "all-negative";
    case Pattern::NaNFirst: return "nan-first";
    case Pattern::NaNLast: return "nan-last";
    case Pattern::NaNRandom: return "nan-random";
  }
  return "?";
}

//! n values uniform in [-1, 1) (all-negative: [-10, -1)) with the maximum planted: +2.5 first,
//! last or at a random place (-2.5 at another), or a NaN first, last or at a random place.
template <class Real>
std::vector<Real> make_data(std::size_t n, Pattern p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const bool negative = p == Pattern::AllNegative;
  std::uniform_real_distribution<double> dist(negative ? -10.0 : -1.0, negative ? -1.0 : 1.0);
  std::vector<Real> a(n);
  for (auto& x : a) x = static_cast<Real>(dist(rng));
  if (n == 0) return a;
  std::uniform_int_distribution<std::size_t> where(0, n - 1);
  switch (p) {
    case Pattern::MaxFirst: a.back() = Real(-2.5), a.front() = Real(2.5); break;
    case Pattern::MaxLast: a.front() = Real(-2.5), a.back() = Real(2.5); break;
    case Pattern::MaxRandom: a[where(rng)] = Real(-2.5), a[where(rng)] = Real(2.5); break;
    case Pattern::AllNegative: break;
    case Pattern::NaNFirst: a.front() = kNaN<Real>; break;
    case Pattern::NaNLast: a.back() = kNaN<Real>; break;
    case Pattern::NaNRandom: a[where(rng)] = kNaN<Real>; break;
  }
  return a;
}

//! The reference: NaN if any value is NaN, else std::max_element's (-inf when empty).
template <class Real>
Real reference_max(const std::vector<Real>& a) {
  if (std::any_of(a.begin(), a.end(), [](Real x) { return std::isnan(x); })) return kNaN<Real>;
  return a.empty() ? -std::numeric_limits<Real>::infinity() : *std::max_element(a.begin(), a.end());
}

template <class Real>
void expect_same(Real got, Real want, const std::string& what) {
  if (std::isnan(want))
    EXPECT_TRUE(std::isnan(got)) << what << ": should be NaN, got " << got;
  else
    EXPECT_EQ(got, want) << what;
}

//! u, v uniform in [-1, 1), a large |u| (negative) planted at a random place, optionally a NaN in v.
template <class Real>
void make_velocity(std::size_t n, std::uint64_t seed, bool with_nan, std::vector<Real>& u, std::vector<Real>& v) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  u.resize(n);
  v.resize(n);
  for (std::size_t i = 0; i < n; ++i) u[i] = static_cast<Real>(dist(rng)), v[i] = static_cast<Real>(dist(rng));
  if (n == 0) return;
  std::uniform_int_distribution<std::size_t> where(0, n - 1);
  u[where(rng)] = Real(-3.0);
  if (with_nan) v[where(rng)] = kNaN<Real>;
}

template <class Real>
Real cfl_reference(const std::vector<Real>& u, const std::vector<Real>& v, Real inv_dx, Real inv_dy) {
  Real m = -std::numeric_limits<Real>::infinity();
  for (std::size_t i = 0; i < u.size(); ++i) {
    const Real s = std::fabs(u[i]) * inv_dx + std::fabs(v[i]) * inv_dy;
    if (std::isnan(s)) return kNaN<Real>;
    m = std::max(m, s);
  }
  return m;
}

template <class Real>
void expect_cfl(Real got, Real want, const std::string& what) {
  if (!std::isfinite(want)) return expect_same(got, want, what);  // NaN, or -inf when empty
  EXPECT_NEAR(got, want, kCflUlps * std::numeric_limits<Real>::epsilon() * std::fabs(want)) << what;
}

template <class Real>
class Reduction : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Reduction, RealTypes);

// ================================================================ host

TYPED_TEST(Reduction, MaxPropagatesNaNAndStartsFromMinusInfinity) {
  using Real = TypeParam;
  const Real inf = std::numeric_limits<Real>::infinity();
  const MaxOp<Real> mx;
  EXPECT_EQ(MaxOp<Real>::identity(), -inf);
  for (Real x : {Real(-1), Real(0), Real(1), -inf, inf}) {
    EXPECT_TRUE(std::isnan(mx(kNaN<Real>, x))) << x;
    EXPECT_TRUE(std::isnan(mx(x, kNaN<Real>))) << x;
    EXPECT_EQ(mx(MaxOp<Real>::identity(), x), x);
  }
  EXPECT_EQ(mx(Real(-3), Real(-2)), Real(-2));
  const CflSpeed<Real> speed{Real(4), Real(8)};
  EXPECT_EQ(speed(Real(-0.5), Real(0.25)), Real(4));
  EXPECT_TRUE(std::isnan(speed(Real(1), kNaN<Real>)));
}

TYPED_TEST(Reduction, CpuMaxMatchesReference) {
  using Real = TypeParam;
  std::uint64_t seed = 1;
  for (std::size_t n : kSizes)
    for (Pattern p : kPatterns) {
      const auto a = make_data<Real>(n, p, seed++);
      expect_same(max_cpu(a.data(), n), reference_max(a), "cpu n=" + std::to_string(n) + " " + name(p));
    }
}

TYPED_TEST(Reduction, CpuCflMaxMatchesReference) {
  using Real = TypeParam;
  const Real inv_dx = Real(1024 / 6.283185307179586), inv_dy = Real(512 / 3.141592653589793);
  std::uint64_t seed = 100;
  for (std::size_t n : kSizes)
    for (bool with_nan : {false, true}) {
      std::vector<Real> u, v;
      make_velocity(n, seed++, with_nan, u, v);
      expect_cfl(cfl_max_cpu(u.data(), v.data(), n, inv_dx, inv_dy), cfl_reference(u, v, inv_dx, inv_dy),
                 "cpu cfl n=" + std::to_string(n) + (with_nan ? " nan" : ""));
    }
}

// ================================================================ GPU

#define CASCADE_SKIP_WITHOUT_CUDA() CASCADE_SKIP_IF_UNAVAILABLE(::cascade::BackendKind::Cuda)

#if defined(CASCADE_HAVE_CUDA)

constexpr std::size_t kGuard = 5;  //!< NaN guard values after each device input

//! A device copy of `a` starting at element `offset` (d.data() + offset is misaligned for
//! offset > 0), NaN before and after it.
template <class Real>
Buffer<Real> upload_guarded(const std::vector<Real>& a, std::size_t offset) {
  std::vector<Real> padded(offset + a.size() + kGuard, kNaN<Real>);
  std::copy(a.begin(), a.end(), padded.begin() + static_cast<std::ptrdiff_t>(offset));
  return to_device(padded);
}

//! Every variant through both entry points: the value on the host, and (where the variant has
//! one) the device result, written over a poisoned value. run(v, d_result) queues into
//! d_result; value(v) returns the host value.
template <class Real, class Run, class Value, class Check>
void each_variant(Run&& run, Value&& value, Check&& check) {
  for (MaxVariant v : kMaxVariants) {
    check(value(v), std::string(to_string(v)) + " (value)");
    if (v == MaxVariant::ColumnHost) continue;
    Buffer<Real> d_result = to_device(std::vector<Real>{kPoison<Real>});
    run(v, d_result.data());
    check(to_host(d_result)[0], std::string(to_string(v)) + " (device result)");
  }
}

struct Shape {
  std::size_t rows, cols;
};
std::string str(const Shape& s) { return std::to_string(s.rows) + "x" + std::to_string(s.cols); }

//! One row, one column, warp and block edges (the blocks are 256 threads), widths that do and
//! do not allow 16-byte column groups, a long column, and a large odd field.
const std::vector<Shape> kShapes = {{1, 1},     {1, 33},     {33, 1},    {2, 31},   {31, 32},
                                    {32, 33},   {255, 257},  {7, 1025},  {1025, 7}, {1023, 64},
                                    {513, 2048}, {64, 4100}, {1, (std::size_t(1) << 20) + 7},
                                    {(std::size_t(1) << 20) + 7, 1}, {4097, 4099}};

TYPED_TEST(Reduction, GpuVariantsMatchReference) {
  CASCADE_SKIP_WITHOUT_CUDA();
  using Real = TypeParam;
  DeviceMax<Real> dmax(std::size_t(4097) * 4099);  // one for every shape: the ticket is reused
  std::uint64_t seed = 1000;
  for (const Shape& s : kShapes)
    for (Pattern p : kPatterns) {
      const auto a = make_data<Real>(s.rows * s.cols, p, seed++);
      const Real want = reference_max(a);
      for (std::size_t offset : {0, 1}) {  // offset 1: misaligned rows, one column a thread
        const auto d_a = upload_guarded(a, offset);
        const Real* first = d_a.data() + offset;
        const std::string what = str(s) + " " + name(p) + " offset=" + std::to_string(offset) + " ";
        each_variant<Real>([&](MaxVariant v, Real* d_r) { dmax.max_to_device(v, first, s.rows, s.cols, d_r); },
                           [&](MaxVariant v) { return dmax.max(v, first, s.rows, s.cols); },
                           [&](Real got, const std::string& how) { expect_same(got, want, what + how); });
      }
    }
}

TYPED_TEST(Reduction, GpuCflMaxMatchesReferenceAndAgreesAcrossVariants) {
  CASCADE_SKIP_WITHOUT_CUDA();
  using Real = TypeParam;
  const Real inv_dx = Real(1024 / 6.283185307179586), inv_dy = Real(512 / 3.141592653589793);
  DeviceMax<Real> dmax(std::size_t(4097) * 4099);
  std::uint64_t seed = 4000;
  for (const Shape& s : {Shape{1, 1}, Shape{1, 1025}, Shape{1025, 1}, Shape{33, 1025}, Shape{255, 257},
                         Shape{1024, 1024}, Shape{4097, 4099}})
    for (bool with_nan : {false, true}) {
      std::vector<Real> u, v;
      make_velocity(s.rows * s.cols, seed++, with_nan, u, v);
      const Real want = cfl_reference(u, v, inv_dx, inv_dy);
      // (u, v offsets): both aligned, both misaligned alike, misaligned differently.
      const std::vector<std::pair<std::size_t, std::size_t>> offsets = {{0, 0}, {1, 1}, {1, 0}};
      for (const auto& [ou, ov] : offsets) {
        const auto d_u = upload_guarded(u, ou);
        const auto d_v = upload_guarded(v, ov);
        const Real* pu = d_u.data() + ou;
        const Real* pv = d_v.data() + ov;
        const std::string what = "cfl " + str(s) + (with_nan ? " nan" : "") + " offsets=" +
                                 std::to_string(ou) + "," + std::to_string(ov) + " ";
        const Real fused = dmax.cfl_max(MaxVariant::Fused, pu, pv, s.rows, s.cols, inv_dx, inv_dy);
        expect_cfl(fused, want, what + "fused vs host");
        each_variant<Real>(
            [&](MaxVariant k, Real* d_r) { dmax.cfl_max_to_device(k, pu, pv, s.rows, s.cols, inv_dx, inv_dy, d_r); },
            [&](MaxVariant k) { return dmax.cfl_max(k, pu, pv, s.rows, s.cols, inv_dx, inv_dy); },
            [&](Real got, const std::string& how) { expect_same(got, fused, what + how + " vs fused"); });
      }
    }
}

TYPED_TEST(Reduction, GpuEmptyInputCapacityAndMisuse) {
  CASCADE_SKIP_WITHOUT_CUDA();
  using Real = TypeParam;
  DeviceMax<Real> dmax(100);
  const auto d_a = to_device(std::vector<Real>(101, Real(1)));
  const Real minus_inf = -std::numeric_limits<Real>::infinity();
  for (const Shape& s : {Shape{0, 7}, Shape{7, 0}, Shape{0, 0}})
    each_variant<Real>([&](MaxVariant v, Real* d_r) { dmax.max_to_device(v, d_a.data(), s.rows, s.cols, d_r); },
                       [&](MaxVariant v) { return dmax.max(v, d_a.data(), s.rows, s.cols); },
                       [&](Real got, const std::string& how) { EXPECT_EQ(got, minus_inf) << str(s) << " " << how; });
  for (MaxVariant v : kMaxVariants) {
    EXPECT_EQ(dmax.max(v, d_a.data(), 10, 10), Real(1)) << to_string(v);
    EXPECT_THROW(dmax.max(v, d_a.data(), 1, 101), RunError) << to_string(v);
    EXPECT_THROW(dmax.max(v, d_a.data(), 11, 10), RunError) << to_string(v);
  }
  auto d_result = to_device(std::vector<Real>{kPoison<Real>});
  EXPECT_THROW(dmax.max_to_device(MaxVariant::ColumnHost, d_a.data(), 10, 10, d_result.data()), RunError);
  DeviceMax<Real> moved(std::move(dmax));
  EXPECT_EQ(moved.max(MaxVariant::Fused, d_a.data(), 1, 100), Real(1));
  EXPECT_THROW(dmax.max(MaxVariant::Fused, d_a.data(), 1, 100), RunError);  // NOLINT(bugprone-use-after-move)
}

TYPED_TEST(Reduction, GpuColumnPlan) {
  CASCADE_SKIP_WITHOUT_CUDA();
  using Real = TypeParam;
  constexpr int kWide = 16 / sizeof(Real);  // values of a 16-byte group
  DeviceMax<Real> dmax(std::size_t(4096) * 4096);
  const auto d_a = device_buffer<Real>(16);
  EXPECT_EQ(dmax.column_width(d_a.data(), 4096), kWide);
  EXPECT_EQ(dmax.column_width(d_a.data(), 4097), 1);      // width not a multiple of the group
  EXPECT_EQ(dmax.column_width(d_a.data() + 1, 4096), 1);  // misaligned
  const int chunks = dmax.column_chunks(d_a.data(), 4096, 4096);
  EXPECT_GE(chunks, 1);
  EXPECT_LE(chunks, 4096 / 4);  // at least kMinRowsPerChunk rows a chunk
  EXPECT_LE(dmax.column_chunks(d_a.data(), 5, 4096), 5);
  EXPECT_EQ(dmax.column_chunks(d_a.data(), 1, 4096), 1);
}

TYPED_TEST(Reduction, GpuMatchesCpu) {
  CASCADE_SKIP_WITHOUT_CUDA();
  using Real = TypeParam;
  const std::size_t rows = 1027, cols = 1021;
  const Real inv_dx = Real(1) / Real(0.003), inv_dy = Real(1) / Real(0.007);
  std::vector<Real> u, v;
  make_velocity(rows * cols, 5000, false, u, v);
  DeviceMax<Real> dmax(rows * cols);
  const auto d_u = to_device(u), d_v = to_device(v);
  for (MaxVariant k : kMaxVariants) {
    EXPECT_EQ(dmax.max(k, d_u.data(), rows, cols), max_cpu(u.data(), u.size())) << to_string(k);
    expect_cfl(dmax.cfl_max(k, d_u.data(), d_v.data(), rows, cols, inv_dx, inv_dy),
               cfl_max_cpu(u.data(), v.data(), u.size(), inv_dx, inv_dy), std::string("cfl ") + to_string(k));
  }
}

#else  // !CASCADE_HAVE_CUDA

TYPED_TEST(Reduction, GpuVariants) { CASCADE_SKIP_WITHOUT_CUDA(); }

#endif

}  // namespace
