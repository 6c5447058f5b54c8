//! @file The CPU maximum (OpenMP) over the functors of kernels/reduction_ops.cuh.
#include <cstddef>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "cascade/reduction.hpp"
#include "kernels/reduction_ops.cuh"

namespace cascade {
namespace {

//! max over value(i), i in [0, n): each thread one contiguous range, the thread values combined
//! in thread order (max is exact: the order only decides which NaN comes back).
template <class Real, class Value>
Real max_omp(std::size_t n, Value value) {
  const MaxOp<Real> op;
#if defined(_OPENMP)
  const int max_threads = omp_get_max_threads();
#else
  const int max_threads = 1;
#endif
  std::vector<Real> thread_value(static_cast<std::size_t>(max_threads), MaxOp<Real>::identity());
#if defined(_OPENMP)
#pragma omp parallel num_threads(max_threads)
#endif
  {
#if defined(_OPENMP)
    const std::size_t t = static_cast<std::size_t>(omp_get_thread_num());
    const std::size_t nt = static_cast<std::size_t>(omp_get_num_threads());
#else
    const std::size_t t = 0, nt = 1;
#endif
    Real acc = MaxOp<Real>::identity();
    for (std::size_t i = n * t / nt, end = n * (t + 1) / nt; i < end; ++i) acc = op(acc, value(i));
    thread_value[t] = acc;
  }
  Real result = MaxOp<Real>::identity();
  for (Real v : thread_value) result = op(result, v);
  return result;
}

}  // namespace

template <class Real>
Real max_cpu(const Real* a, std::size_t n) {
  return max_omp<Real>(n, [a](std::size_t i) { return a[i]; });
}

template <class Real>
Real cfl_max_cpu(const Real* u, const Real* v, std::size_t n, Real inv_dx, Real inv_dy) {
  const CflSpeed<Real> speed{inv_dx, inv_dy};
  return max_omp<Real>(n, [=](std::size_t i) { return speed(u[i], v[i]); });
}

template float max_cpu<float>(const float*, std::size_t);
template double max_cpu<double>(const double*, std::size_t);
template float cfl_max_cpu<float>(const float*, const float*, std::size_t, float, float);
template double cfl_max_cpu<double>(const double*, const double*, std::size_t, double, double);

}  // namespace cascade
