//! @file CPU reductions (OpenMP) over the same functors as the CUDA kernels.
#include <cstddef>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "cascade/reduction.hpp"
#include "kernels/reduction_ops.cuh"

namespace cascade {

const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::Sum: return "sum";
  }
  return "?";
}

const char* to_string(Combine c) {
  switch (c) {
    case Combine::Fused: return "fused";
    case Combine::TwoPass: return "two-pass";
    case Combine::Host: return "host";
  }
  return "?";
}

namespace {

//! Elements folded serially before their block value joins the thread's accumulator. Bounds the
//! longest serial chain (hence the sum's rounding error) at kBlock + n / (kBlock * threads).
constexpr std::size_t kBlock = 1024;

//! op over value(i), i in [0, n). Each thread takes a contiguous range of blocks; the thread
//! values are combined in thread order, so the result does not depend on scheduling.
template <class Real, class Op, class Value>
Real reduce_omp(std::size_t n, Op op, Value value) {
  const std::size_t nblocks = (n + kBlock - 1) / kBlock;
#if defined(_OPENMP)
  const int max_threads = omp_get_max_threads();
#else
  const int max_threads = 1;
#endif
  std::vector<Real> thread_value(static_cast<std::size_t>(max_threads), Op::identity());
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
    const std::size_t b0 = nblocks * t / nt;
    const std::size_t b1 = nblocks * (t + 1) / nt;
    Real acc = Op::identity();
    for (std::size_t b = b0; b < b1; ++b) {
      const std::size_t i1 = (b + 1) * kBlock < n ? (b + 1) * kBlock : n;
      Real block = Op::identity();
      for (std::size_t i = b * kBlock; i < i1; ++i) block = op(block, value(i));
      acc = op(acc, block);
    }
    thread_value[t] = acc;
  }
  Real result = Op::identity();
  for (Real v : thread_value) result = op(result, v);
  return result;
}

template <class Real, class Op>
Real reduce_array(Op op, const Real* a, std::size_t n) {
  return reduce_omp<Real>(n, op, [a](std::size_t i) { return a[i]; });
}

}  // namespace

template <class Real>
Real reduction_identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::Max: return MaxOp<Real>::identity();
    case ReduceOp::Min: return MinOp<Real>::identity();
    case ReduceOp::Sum: return SumOp<Real>::identity();
  }
  return SumOp<Real>::identity();
}

template <class Real>
Real reduce_cpu(ReduceOp op, const Real* a, std::size_t n) {
  switch (op) {
    case ReduceOp::Max: return reduce_array(MaxOp<Real>{}, a, n);
    case ReduceOp::Min: return reduce_array(MinOp<Real>{}, a, n);
    case ReduceOp::Sum: return reduce_array(SumOp<Real>{}, a, n);
  }
  return reduction_identity<Real>(op);
}

template <class Real>
Real cfl_max_cpu(const Real* u, const Real* v, std::size_t n, Real inv_dx, Real inv_dy) {
  const CflSpeed<Real> speed{inv_dx, inv_dy};
  return reduce_omp<Real>(n, MaxOp<Real>{}, [=](std::size_t i) { return speed(u[i], v[i]); });
}

template float reduction_identity<float>(ReduceOp);
template double reduction_identity<double>(ReduceOp);
template float reduce_cpu<float>(ReduceOp, const float*, std::size_t);
template double reduce_cpu<double>(ReduceOp, const double*, std::size_t);
template float cfl_max_cpu<float>(const float*, const float*, std::size_t, float, float);
template double cfl_max_cpu<double>(const double*, const double*, std::size_t, double, double);

}  // namespace cascade
