//! @file Reductions (max, min, sum, CFL max) on the CPU and every GPU variant, against host
//! references: std::max_element / std::min_element (exact) and a long-double sum (tolerance).
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

// ---------------------------------------------------------------- tolerances
// Max and min are compared exactly. A sum is compared against the long-double sum with
// |got - exact| <= kSumTolerance * sum|x_i|: the worst-case rounding bound of a summation whose
// longest serial chain is m additions is about m * u (u = 2^-24 float, 2^-53 double). The longest
// chains here are ~2k (CPU: 1024-element blocks + block values per thread; column kernel with one
// row chunk: ~1025 rows per accumulator; host combine: 1024-value blocks), so 2k * u with a 2x
// margin: 2.5e-4 (float), 5e-13 (double).
template <class Real>
constexpr double kSumTolerance = sizeof(Real) == 4 ? 2.5e-4 : 5e-13;
// The CFL speed |u|/dx + |v|/dy is the same functor on host and device, rounded without FMA on
// both in the default builds; allow 2 ulps in case a host build contracts it into an FMA.
constexpr double kCflUlps = 2.0;

template <class Real>
constexpr Real kNaN = std::numeric_limits<Real>::quiet_NaN();

const std::vector<std::size_t> kFlatSizes = {1, 2, 31, 32, 33, 1023, 1025, (std::size_t(1) << 20) + 7};

enum class Pattern { MaxFirst, MaxLast, MaxRandom, AllNegative, NaNRandom };
const std::vector<Pattern> kPatterns = {Pattern::MaxFirst, Pattern::MaxLast, Pattern::MaxRandom,
                                        Pattern::AllNegative, Pattern::NaNRandom};

const char* name(Pattern p) {
  switch (p) {
    case Pattern::MaxFirst: return "max-first";
    case Pattern::MaxLast: return "max-last";
    case Pattern::MaxRandom: return "max-random";
    case Pattern::AllNegative: return "all-negative";
    case Pattern::NaNRandom: return "nan-random";
  }
  return "?";
}

//! n values uniform in [-1, 1) (all-negative: [-10, -1)), with the extreme values planted:
//! max-first: +2.5 at 0 and -2.5 at n-1; max-last: the reverse; max-random: both at random
//! places; nan-random: a NaN at a random place.
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
    case Pattern::MaxFirst:
      a.back() = Real(-2.5);
      a.front() = Real(2.5);
      break;
    case Pattern::MaxLast:
      a.front() = Real(-2.5);
      a.back() = Real(2.5);
      break;
    case Pattern::MaxRandom:
      a[where(rng)] = Real(-2.5);
      a[where(rng)] = Real(2.5);
      break;
    case Pattern::AllNegative: break;
    case Pattern::NaNRandom: a[where(rng)] = kNaN<Real>; break;
  }
  return a;
}

template <class Real>
struct Reference {
  bool has_nan = false;
  Real max = MaxOp<Real>::identity();
  Real min = MinOp<Real>::identity();
  long double sum = 0;
  long double sum_abs = 0;
};

template <class Real>
Reference<Real> reference(const Real* a, std::size_t n) {
  Reference<Real> r;
  r.has_nan = std::any_of(a, a + n, [](Real x) { return std::isnan(x); });
  if (n > 0 && !r.has_nan) {
    r.max = *std::max_element(a, a + n);
    r.min = *std::min_element(a, a + n);
  }
  for (std::size_t i = 0; i < n; ++i) {
    r.sum += a[i];
    r.sum_abs += std::fabs(static_cast<long double>(a[i]));
  }
  return r;
}

template <class Real>
void expect_result(ReduceOp op, Real got, const Reference<Real>& r, const std::string& what) {
  if (r.has_nan) {
    EXPECT_TRUE(std::isnan(got)) << what << ": " << to_string(op) << " should be NaN, got " << got;
    return;
  }
  switch (op) {
    case ReduceOp::Max: EXPECT_EQ(got, r.max) << what << ": max"; break;
    case ReduceOp::Min: EXPECT_EQ(got, r.min) << what << ": min"; break;
    case ReduceOp::Sum:
      EXPECT_NEAR(static_cast<double>(got), static_cast<double>(r.sum),
                  kSumTolerance<Real> * static_cast<double>(r.sum_abs) + 1e-30)
          << what << ": sum";
      break;
  }
}

const std::vector<ReduceOp> kOps = {ReduceOp::Max, ReduceOp::Min, ReduceOp::Sum};

//! CFL data: u, v uniform in [-1, 1); a large |u| (negative) planted at a random place, and
//! optionally a NaN in v.
template <class Real>
void make_velocity(std::size_t n, std::uint64_t seed, bool with_nan, std::vector<Real>& u,
                   std::vector<Real>& v) {
  u.resize(n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  v.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    u[i] = static_cast<Real>(dist(rng));
    v[i] = static_cast<Real>(dist(rng));
  }
  if (n == 0) return;
  std::uniform_int_distribution<std::size_t> where(0, n - 1);
  u[where(rng)] = Real(-3.0);
  if (with_nan) v[where(rng)] = kNaN<Real>;
}

template <class Real>
Real cfl_reference(const Real* u, const Real* v, std::size_t n, Real inv_dx, Real inv_dy) {
  Real m = MaxOp<Real>::identity();
  for (std::size_t i = 0; i < n; ++i) {
    const Real s = std::fabs(u[i]) * inv_dx + std::fabs(v[i]) * inv_dy;
    if (std::isnan(s)) return kNaN<Real>;
    m = std::max(m, s);
  }
  return m;
}

template <class Real>
void expect_cfl(Real got, Real want, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": should be NaN, got " << got;
    return;
  }
  EXPECT_NEAR(got, want, kCflUlps * std::numeric_limits<Real>::epsilon() * std::fabs(want)) << what;
}

template <class Real>
class Reduction : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Reduction, RealTypes);

// ================================================================ host-only

TYPED_TEST(Reduction, OpsPropagateNaNAndUseInfiniteIdentities) {
  using Real = TypeParam;
  const Real inf = std::numeric_limits<Real>::infinity();
  EXPECT_EQ(MaxOp<Real>::identity(), -inf);
  EXPECT_EQ(MinOp<Real>::identity(), inf);
  EXPECT_EQ(SumOp<Real>::identity(), Real(0));
  EXPECT_EQ(reduction_identity<Real>(ReduceOp::Max), -inf);
  EXPECT_EQ(reduction_identity<Real>(ReduceOp::Min), inf);
  EXPECT_EQ(reduction_identity<Real>(ReduceOp::Sum), Real(0));
  const MaxOp<Real> mx;
  const MinOp<Real> mn;
  for (Real x : {Real(-1), Real(0), Real(1), -inf, inf}) {
    EXPECT_TRUE(std::isnan(mx(kNaN<Real>, x))) << x;
    EXPECT_TRUE(std::isnan(mx(x, kNaN<Real>))) << x;
    EXPECT_TRUE(std::isnan(mn(kNaN<Real>, x))) << x;
    EXPECT_TRUE(std::isnan(mn(x, kNaN<Real>))) << x;
    EXPECT_EQ(mx(MaxOp<Real>::identity(), x), x);
    EXPECT_EQ(mn(MinOp<Real>::identity(), x), x);
  }
  EXPECT_EQ(mx(Real(-3), Real(-2)), Real(-2));
  EXPECT_EQ(mn(Real(-3), Real(-2)), Real(-3));
  const CflSpeed<Real> speed{Real(4), Real(8)};
  EXPECT_EQ(speed(Real(-0.5), Real(0.25)), Real(4));
  EXPECT_TRUE(std::isnan(speed(Real(1), kNaN<Real>)));
}

TYPED_TEST(Reduction, CpuMatchesReference) {
  using Real = TypeParam;
  std::uint64_t seed = 1;
  for (std::size_t n : kFlatSizes)
    for (Pattern p : kPatterns) {
      const auto a = make_data<Real>(n, p, seed++);
      const auto r = reference(a.data(), n);
      for (ReduceOp op : kOps)
        expect_result(op, reduce_cpu(op, a.data(), n),
                      r, "cpu n=" + std::to_string(n) + " " + name(p));
    }
}

TYPED_TEST(Reduction, CpuEmptyInputGivesIdentity) {
  using Real = TypeParam;
  for (ReduceOp op : kOps)
    EXPECT_EQ(reduce_cpu<Real>(op, nullptr, 0), reduction_identity<Real>(op)) << to_string(op);
  EXPECT_EQ(cfl_max_cpu<Real>(nullptr, nullptr, 0, Real(1), Real(1)), MaxOp<Real>::identity());
}

TYPED_TEST(Reduction, CpuCflMaxMatchesReference) {
  using Real = TypeParam;
  const Real inv_dx = Real(1024 / 6.283185307179586), inv_dy = Real(512 / 3.141592653589793);
  std::uint64_t seed = 100;
  for (std::size_t n : kFlatSizes)
    for (bool with_nan : {false, true}) {
      std::vector<Real> u, v;
      make_velocity(n, seed++, with_nan, u, v);
      expect_cfl(cfl_max_cpu(u.data(), v.data(), n, inv_dx, inv_dy),
                 cfl_reference(u.data(), v.data(), n, inv_dx, inv_dy),
                 "cpu cfl n=" + std::to_string(n) + (with_nan ? " nan" : ""));
    }
}

// ================================================================ GPU

#define CASCADE_SKIP_WITHOUT_CUDA() CASCADE_SKIP_IF_UNAVAILABLE(::cascade::BackendKind::Cuda)

#if defined(CASCADE_HAVE_CUDA)

constexpr std::size_t kGuard = 4;  //!< NaN guard elements after each device input
const std::vector<Combine> kCombines = {Combine::Fused, Combine::TwoPass, Combine::Host};

//! Device copy of `a` at element offset `offset` (so d_a + offset is misaligned for offset > 0),
//! surrounded by NaN: any read outside [offset, offset + n) turns the result into NaN.
template <class Real>
DeviceArray<Real> upload_guarded(const std::vector<Real>& a, std::size_t offset) {
  std::vector<Real> padded(offset + a.size() + kGuard, kNaN<Real>);
  std::copy(a.begin(), a.end(), padded.begin() + static_cast<std::ptrdiff_t>(offset));
  return DeviceArray<Real>(padded);
}

template <class Real>
Real download_one(const DeviceArray<Real>& d) {
  return d.download().at(0);
}

TYPED_TEST(Reduction, GpuFlatVariantsMatchReference) {
  CASCADE_SKIP_WITHOUT_CUDA();
  using Real = TypeParam;
  DeviceReducer<Real> reducer(kFlatSizes.back());  // one reducer for every size: tickets are reused
  DeviceArray<Real> d_result(1);
  std::uint64_t seed = 1000;
  for (std::size_t n : kFlatSizes)
    for (Pattern p : kPatterns) {
      const auto a = make_data<Real>(n, p, seed++);
      const auto r = reference(a.data(), n);
      for (std::size_t offset : {0, 1, 2, 3}) {  // start at every 4-byte offset mod 16 bytes
        const auto d_a = upload_guarded(a, offset);
        const Real* d_first = d_a.data() + offset;
        const std::string what = "n=" + std::to_string(n) + " " + name(p) +
                                 " offset=" + std::to_string(offset);
        for (ReduceOp op : kOps) {
          for (Combine c : kCombines)
            expect_result(op, reducer.reduce(op, d_first, n, c), r,
                          what + " reduce/" + to_string(c));
          for (Combine c : {Combine::Fused, Combine::TwoPass}) {
            reducer.reduce_to_device(op, d_first, n, d_result.data(), c);
            expect_result(op, download_one(d_result), r, what + " reduce_to_device/" + to_string(c));
          }
        }
      }
    }
}

TYPED_TEST(Reduction, GpuCubStyleScratchQueryAndRawCalls) {
  CASCADE_SKIP_WITHOUT_CUDA();
  using Real = TypeParam;
  std::size_t bytes = 0;
  reduce_device<Real>(nullptr, bytes, ReduceOp::Max, nullptr, 12345, nullptr);
  EXPECT_GT(bytes, 0u);
  EXPECT_EQ(bytes, reduction_scratch_bytes<Real>());
  std::size_t cfl_bytes = 0;
  cfl_max_device<Real>(nullptr, cfl_bytes, nullptr, nullptr, 12345, Real(1), Real(1), nullptr);
  EXPECT_EQ(cfl_bytes, bytes);

  // Scratch zeroed once, then reused by many fused and two-pass calls of different grid sizes.
  DeviceArray<Real> d_scratch(std::vector<Real>((bytes + sizeof(Real) - 1) / sizeof(Real), Real(0)));
  DeviceArray<Real> d_result(1);
  std::uint64_t seed = 2000;
  for (int round = 0; round < 3; ++round)
    for (std::size_t n : kFlatSizes) {
      const auto a = make_data<Real>(n, Pattern::MaxRandom, seed++);
      const auto r = reference(a.data(), n);
      const DeviceArray<Real> d_a(a);
      for (ReduceOp op : kOps)
        for (Combine c : {Combine::Fused, Combine::TwoPass}) {
          reduce_device(d_scratch.data(), bytes, op, d_a.data(), n, d_result.data(), c);
          expect_result(op, download_one(d_result), r,
                        "raw n=" + std::to_string(n) + " " + to_string(c));
        }
    }
  // Host combine has nowhere to leave its value on the raw path; too little scratch is refused.
  const DeviceArray<Real> d_one(std::vector<Real>{Real(1)});
  EXPECT_THROW(reduce_device(d_scratch.data(), bytes, ReduceOp::Max, d_one.data(), 1,
                             d_result.data(), Combine::Host),
               RunError);
  std::size_t too_few = bytes - 1;
  EXPECT_THROW(reduce_device(d_scratch.data(), too_few, ReduceOp::Max, d_one.data(), 1,
                             d_result.data(), Combine::Fused),
               RunError);
}

TYPED_TEST(Reduction, GpuEmptyInputAndCapacity) {
  CASCADE_SKIP_WITHOUT_CUDA();
  using Real = TypeParam;
  DeviceReducer<Real> reducer(100);
  DeviceArray<Real> d_a(std::vector<Real>(101, Real(1)));
  DeviceArray<Real> d_result(1);
  for (ReduceOp op : kOps) {
    for (Combine c : kCombines) {
      EXPECT_EQ(reducer.reduce(op, d_a.data(), 0, c), reduction_identity<Real>(op)) << to_string(op);
      EXPECT_EQ(reducer.reduce_columns(op, d_a.data(), 0, 7, 0, c), reduction_identity<Real>(op));
      EXPECT_EQ(reducer.reduce_columns(op, d_a.data(), 7, 0, 0, c), reduction_identity<Real>(op));
    }
    reducer.reduce_to_device(op, d_a.data(), 0, d_result.data());
    EXPECT_EQ(download_one(d_result), reduction_identity<Real>(op));
  }
  EXPECT_EQ(reducer.reduce(ReduceOp::Sum, d_a.data(), 100), Real(100));
  EXPECT_THROW(reducer.reduce(ReduceOp::Max, d_a.data(), 101), RunError);
  EXPECT_THROW(reducer.reduce_columns(ReduceOp::Max, d_a.data(), 11, 10), RunError);
  EXPECT_THROW(reducer.reduce_to_device(ReduceOp::Max, d_a.data(), 10, d_result.data(), Combine::Host),
               RunError);
  // A moved-to reducer works; the moved-from one refuses.
  DeviceReducer<Real> moved(std::move(reducer));
  EXPECT_EQ(moved.reduce(ReduceOp::Max, d_a.data(), 100), Real(1));
  EXPECT_THROW(reducer.reduce(ReduceOp::Max, d_a.data(), 100), RunError);  // NOLINT(bugprone-use-after-move)
}

struct Shape {
  std::size_t n1, n2;
};

TYPED_TEST(Reduction, GpuColumnVariantsMatchReference) {
  CASCADE_SKIP_WITHOUT_CUDA();
  using Real = TypeParam;
  // Shapes: degenerate rows/columns, sizes around warp and block multiples, widths that do and do
  // not allow 16-byte column groups (n2 % 4, n2 % 2), and the 4097 x 4099 field.
  const std::vector<Shape> shapes = {{1, 1},    {1, 33},   {33, 1},     {2, 31},     {31, 32},
                                     {32, 33},  {7, 1025}, {1025, 7},   {1023, 64},  {513, 2048},
                                     {64, 4100}, {4097, 4099}};
  const std::vector<int> chunk_counts = {1, 3, 0, 64, 100000};  // 0 = automatic; 1e5 is clamped
  DeviceReducer<Real> reducer(std::size_t(4097) * 4099);
  DeviceArray<Real> d_result(1);
  std::uint64_t seed = 3000;
  for (const Shape& s : shapes) {
    const std::size_t n = s.n1 * s.n2;
    for (Pattern p : kPatterns) {
      const auto a = make_data<Real>(n, p, seed++);
      const auto r = reference(a.data(), n);
      // Offset 1 makes the rows misaligned: the kernel must fall back to one column per thread.
      for (std::size_t offset : {0, 1}) {
        const auto d_a = upload_guarded(a, offset);
        const Real* d_first = d_a.data() + offset;
        const std::string what = std::to_string(s.n1) + "x" + std::to_string(s.n2) + " " + name(p) +
                                 " offset=" + std::to_string(offset);
        for (ReduceOp op : kOps)
          for (int chunks : chunk_counts)
            for (ColumnWidth w : {ColumnWidth::Auto, ColumnWidth::Scalar}) {
              const std::string v = what + " chunks=" + std::to_string(chunks) +
                                    (w == ColumnWidth::Auto ? " auto-width" : " scalar");
              for (Combine c : kCombines)
                expect_result(op, reducer.reduce_columns(op, d_first, s.n1, s.n2, chunks, c, w), r,
                              v + " " + to_string(c));
              for (Combine c : {Combine::Fused, Combine::TwoPass}) {
                reducer.reduce_columns_to_device(op, d_first, s.n1, s.n2, d_result.data(), chunks,
                                                 c, w);
                expect_result(op, download_one(d_result), r, v + " to_device/" + to_string(c));
              }
            }
      }
    }
  }
}

TYPED_TEST(Reduction, GpuColumnChunkResolution) {
  CASCADE_SKIP_WITHOUT_CUDA();
  using Real = TypeParam;
  DeviceReducer<Real> reducer(std::size_t(4096) * 4096);
  DeviceArray<Real> d_a(16);
  EXPECT_EQ(reducer.resolved_row_chunks(d_a.data(), 4096, 4096, 1), 1);
  EXPECT_EQ(reducer.resolved_row_chunks(d_a.data(), 4096, 4096, 7), 7);
  EXPECT_EQ(reducer.resolved_row_chunks(d_a.data(), 5, 4096, 100), 5);  // at most one per row
  const int automatic = reducer.resolved_row_chunks(d_a.data(), 4096, 4096, 0);
  EXPECT_GE(automatic, 1);
  EXPECT_LE(automatic, 4096 / 4);  // at least kMinRowsPerChunk rows per chunk
}

TYPED_TEST(Reduction, GpuCflMaxMatchesReference) {
  CASCADE_SKIP_WITHOUT_CUDA();
  using Real = TypeParam;
  const Real inv_dx = Real(1024 / 6.283185307179586), inv_dy = Real(512 / 3.141592653589793);
  DeviceReducer<Real> reducer(std::size_t(4097) * 4099);
  DeviceArray<Real> d_result(1);
  std::size_t bytes = 0;
  cfl_max_device<Real>(nullptr, bytes, nullptr, nullptr, 0, inv_dx, inv_dy, nullptr);
  DeviceArray<Real> d_scratch(std::vector<Real>((bytes + sizeof(Real) - 1) / sizeof(Real), Real(0)));
  std::uint64_t seed = 4000;

  std::vector<std::size_t> sizes = kFlatSizes;
  sizes.push_back(std::size_t(4097) * 4099);
  for (std::size_t n : sizes)
    for (bool with_nan : {false, true}) {
      std::vector<Real> u, v;
      make_velocity(n, seed++, with_nan, u, v);
      const Real want = cfl_reference(u.data(), v.data(), n, inv_dx, inv_dy);
      // (u offset, v offset): both aligned, both misaligned alike (vector path with a scalar
      // head), misaligned differently (scalar fallback).
      const std::vector<std::pair<std::size_t, std::size_t>> offsets = {{0, 0}, {1, 1}, {3, 3}, {1, 0}, {0, 2}};
      for (const auto& [ou, ov] : offsets) {
        const auto d_u = upload_guarded(u, ou);
        const auto d_v = upload_guarded(v, ov);
        const Real* pu = d_u.data() + ou;
        const Real* pv = d_v.data() + ov;
        const std::string what = "cfl n=" + std::to_string(n) + (with_nan ? " nan" : "") +
                                 " offsets=" + std::to_string(ou) + "," + std::to_string(ov);
        for (Combine c : kCombines)
          expect_cfl(reducer.cfl_max(pu, pv, n, inv_dx, inv_dy, c), want, what + " " + to_string(c));
        for (Combine c : {Combine::Fused, Combine::TwoPass}) {
          reducer.cfl_max_to_device(pu, pv, n, inv_dx, inv_dy, d_result.data(), c);
          expect_cfl(download_one(d_result), want, what + " to_device/" + to_string(c));
          cfl_max_device(d_scratch.data(), bytes, pu, pv, n, inv_dx, inv_dy, d_result.data(), c);
          expect_cfl(download_one(d_result), want, what + " raw/" + to_string(c));
        }
      }
    }

  // Column kernel over the two arrays (fields).
  for (const Shape& s : {Shape{1, 1}, Shape{33, 1025}, Shape{1024, 1024}, Shape{4097, 4099}})
    for (bool with_nan : {false, true}) {
      const std::size_t n = s.n1 * s.n2;
      std::vector<Real> u, v;
      make_velocity(n, seed++, with_nan, u, v);
      const Real want = cfl_reference(u.data(), v.data(), n, inv_dx, inv_dy);
      const auto d_u = upload_guarded(u, 0);
      const auto d_v = upload_guarded(v, 0);
      for (int chunks : {1, 0, 50})
        for (Combine c : kCombines)
          for (ColumnWidth w : {ColumnWidth::Auto, ColumnWidth::Scalar})
            expect_cfl(reducer.cfl_max_columns(d_u.data(), d_v.data(), s.n1, s.n2, inv_dx, inv_dy,
                                               chunks, c, w),
                       want,
                       "cfl columns " + std::to_string(s.n1) + "x" + std::to_string(s.n2) +
                           " chunks=" + std::to_string(chunks) + " " + to_string(c) +
                           (with_nan ? " nan" : ""));
    }
}

TYPED_TEST(Reduction, GpuMatchesCpu) {
  CASCADE_SKIP_WITHOUT_CUDA();
  using Real = TypeParam;
  // Max/min of the same data are exact on both backends; the CFL maximum uses one functor.
  const std::size_t n = (std::size_t(1) << 20) + 7;
  const Real inv_dx = Real(1) / Real(0.003), inv_dy = Real(1) / Real(0.007);
  std::vector<Real> u, v;
  make_velocity(n, 5000, false, u, v);
  DeviceReducer<Real> reducer(n);
  const DeviceArray<Real> d_u(u), d_v(v);
  EXPECT_EQ(reducer.reduce(ReduceOp::Max, d_u.data(), n), reduce_cpu(ReduceOp::Max, u.data(), n));
  EXPECT_EQ(reducer.reduce(ReduceOp::Min, d_v.data(), n), reduce_cpu(ReduceOp::Min, v.data(), n));
  expect_cfl(reducer.cfl_max(d_u.data(), d_v.data(), n, inv_dx, inv_dy),
             cfl_max_cpu(u.data(), v.data(), n, inv_dx, inv_dy), "gpu vs cpu cfl");
}

#else  // !CASCADE_HAVE_CUDA

TYPED_TEST(Reduction, GpuVariants) { CASCADE_SKIP_WITHOUT_CUDA(); }

#endif

}  // namespace
