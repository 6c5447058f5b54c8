//! @file Basic types shared by host code and kernels: Complex<Real>, CASCADE_HD, Precision.
#pragma once

#include <cstddef>
#include <string>

#if defined(__CUDACC__)
#define CASCADE_HD __host__ __device__
//! A function that must be inlined into its kernel (a kernel's phase: as a call it costs the
//! kernel its registers across the call, and ptxas minutes).
#define CASCADE_HD_INLINE __host__ __device__ __forceinline__
#else
#define CASCADE_HD
#define CASCADE_HD_INLINE inline
#endif

namespace cascade {

//! A complex number laid out as (re, im), the layout of fftw_complex and cufft(Double)Complex.
template <class Real>
struct alignas(2 * sizeof(Real)) Complex {
  Real re;
  Real im;
};

static_assert(sizeof(Complex<double>) == 2 * sizeof(double), "Complex must be two packed reals");
static_assert(sizeof(Complex<float>) == 2 * sizeof(float), "Complex must be two packed reals");

//! a * b and a + b, each rounded on its own. Where a product feeds a sum, the device's compiler
//! may fuse the two into one multiply-add in one kernel and not in another (or on the host);
//! arithmetic whose bits must be the same wherever it is compiled uses these.
template <class T>
CASCADE_HD inline T rounded_mul(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == sizeof(float)) return __fmul_rn(a, b);
  else return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
template <class T>
CASCADE_HD inline T rounded_add(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == sizeof(float)) return __fadd_rn(a, b);
  else return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

enum class Precision { Single, Double };
enum class BackendKind { Cpu, Cuda };

//! How the CPU backend plans its FFTW transforms (run.fft_planning; the CUDA backend has no
//! choice to make): `estimate` (FFTW_ESTIMATE: instant, the same plan on every machine),
//! `measure` (FFTW_MEASURE: timed on this machine, kept in a wisdom file; see fftw_wisdom_file)
//! or `auto` (measure from 512^2 points, estimate below).
enum class FftPlanning { Auto, Estimate, Measure };

inline const char* to_string(Precision p) { return p == Precision::Single ? "single" : "double"; }
inline const char* to_string(BackendKind b) { return b == BackendKind::Cpu ? "cpu" : "cuda"; }
inline const char* to_string(FftPlanning p) {
  return p == FftPlanning::Auto ? "auto" : p == FftPlanning::Estimate ? "estimate" : "measure";
}

template <class Real>
constexpr Precision precision_of() {
  return sizeof(Real) == sizeof(float) ? Precision::Single : Precision::Double;
}

}  // namespace cascade
