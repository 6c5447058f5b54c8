//! @file The device side of kernels/fft_callbacks.cuh: cuFFT LTO callbacks, one set a precision.
//! Compiled to LTO-IR alone (CMakeLists.txt: -dc -fatbin, code=lto_XX) and embedded in the
//! library as a byte array; cuFFT links them into its kernels when a plan is made. They are
//! C++ functions in the global namespace with cuFFT's callback signatures: cuFFT names them
//! by identifier and signature (extern "C" names are not found: CUFFT_INTERNAL_ERROR).
#include <cufftXt.h>

#include "kernels/fft_callbacks.cuh"

using cascade::TransformCallbackParams;

namespace {

template <class Real, class C>
__device__ inline C load_kept(void* in, unsigned long long offset, void* info) {
  const auto* p = static_cast<const TransformCallbackParams<Real>*>(info);
  if (!p->keeps(offset)) return C{Real(0), Real(0)};
  return static_cast<const C*>(in)[offset];
}

template <class Real, class C>
__device__ inline void store_kept(void* out, unsigned long long offset, C element, void* info) {
  const auto* p = static_cast<const TransformCallbackParams<Real>*>(info);
  if (p->keeps(offset)) static_cast<C*>(out)[offset] = element;
}

}  // namespace

__device__ cufftDoubleComplex cascade_load_kept_z(void* in, unsigned long long offset, void* info, void*) {
  return load_kept<double, cufftDoubleComplex>(in, offset, info);
}
__device__ cufftComplex cascade_load_kept_c(void* in, unsigned long long offset, void* info, void*) {
  return load_kept<float, cufftComplex>(in, offset, info);
}
__device__ void cascade_store_kept_z(void* out, unsigned long long offset, cufftDoubleComplex element, void* info,
                                     void*) {
  store_kept<double, cufftDoubleComplex>(out, offset, element, info);
}
__device__ void cascade_store_kept_c(void* out, unsigned long long offset, cufftComplex element, void* info, void*) {
  store_kept<float, cufftComplex>(out, offset, element, info);
}
