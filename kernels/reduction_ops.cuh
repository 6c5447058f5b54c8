//! @file The maximum and the CFL speed, written once as CASCADE_HD functors.
//!
//! The CPU loops (src/backends/cpu/backend_cpu.cpp, src/backends/cpu/reduction_cpu.cpp) and the CUDA kernels
//! (kernels/reduction.cuh, the row kernel) all fold with these, so the two backends share one
//! definition of "max" and of the CFL speed |u|/dx + |v|/dy. Plain C++ compiles this file:
//! CUDA-only code is guarded.
//!
//! NaN policy: max PROPAGATES NaN. A NaN anywhere in the input makes the result NaN, in every
//! stage (thread, warp, block, partials, host combine), because the CFL step size must not
//! silently ignore a blown-up field. fmax/fmaxf (and cuda::maximum's `a < b ? b : a`) drop a
//! NaN depending on its position, so they are never used here.
//!
//! Identity: -infinity, never 0: an all-negative field must reduce to its (negative) maximum,
//! and empty threads and blocks must not contribute.
#pragma once

#include <cmath>
#include <limits>

#include "cascade/types.hpp"

namespace cascade {

//! max(a, b), NaN-propagating: if either argument is NaN the result is NaN.
//! `a != a` is true only for NaN; when b is NaN and a is not, `a > b` is false -> b (NaN).
template <class Real>
struct MaxOp {
  CASCADE_HD static constexpr Real identity() { return -std::numeric_limits<Real>::infinity(); }
  CASCADE_HD Real operator()(Real a, Real b) const { return (a > b || a != a) ? a : b; }
};

//! |x| for float and double on host and device (fabs/fabsf exist in both; NaN stays NaN).
CASCADE_HD inline float abs_value(float x) { return fabsf(x); }
CASCADE_HD inline double abs_value(double x) { return fabs(x); }

//! The CFL speed of one grid point: s = |u| inv_dx + |v| inv_dy (inv_dx = 1/dx, inv_dy = 1/dy),
//! so that dt_cfl = cfl / max(s). Computed on the fly from u and v: the solver never stores s.
//!
//! Rounding: on the device the products and the sum are rounded separately (__fmul_rn /
//! __fadd_rn are never contracted into an FMA), which is what the host computes without FMA
//! contraction, so CPU and GPU give the same bits for the same u, v in the default builds.
template <class Real>
struct CflSpeed {
  Real inv_dx;
  Real inv_dy;
  CASCADE_HD Real operator()(Real u, Real v) const {
#if defined(__CUDA_ARCH__)
    return add_rn(mul_rn(abs_value(u), inv_dx), mul_rn(abs_value(v), inv_dy));
#else
    return abs_value(u) * inv_dx + abs_value(v) * inv_dy;
#endif
  }

 private:
#if defined(__CUDACC__)
  __device__ static float mul_rn(float a, float b) { return __fmul_rn(a, b); }
  __device__ static double mul_rn(double a, double b) { return __dmul_rn(a, b); }
  __device__ static float add_rn(float a, float b) { return __fadd_rn(a, b); }
  __device__ static double add_rn(double a, double b) { return __dadd_rn(a, b); }
#endif
};

}  // namespace cascade
