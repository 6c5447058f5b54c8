//! @file The device side of kernels/fft_callbacks.cuh: cuFFT LTO callbacks, one set a precision.
//! Compiled to LTO-IR alone (CMakeLists.txt: -dc -fatbin, code=lto_XX) and embedded in the
//! library as a byte array; cuFFT links them into its kernels when a plan is made. They are
//! C++ functions in the global namespace with cuFFT's callback signatures: cuFFT names them
//! by identifier and signature (extern "C" names are not found: CUFFT_INTERNAL_ERROR).
#include <cufftXt.h>

#include "kernels/fft_callbacks.cuh"

using cascade::TransformCallbackParams;

namespace {

//! Whether the element at `offset` is moved: a kept mode (kColumns false) or any mode of a kept
//! column (kColumns: the pruned transforms' passes over the rows).
template <class Real, bool kColumns>
__device__ inline bool kept(unsigned long long offset, void* info) {
  const auto* p = static_cast<const TransformCallbackParams<Real>*>(info);
  return kColumns ? p->keeps_column(offset) : p->keeps(offset);
}

template <class Real, class C, bool kColumns = false>
__device__ inline C load_kept(void* in, unsigned long long offset, void* info) {
  if (!kept<Real, kColumns>(offset, info)) return C{Real(0), Real(0)};
  return static_cast<const C*>(in)[offset];
}

template <class Real, class C, bool kColumns = false>
__device__ inline void store_kept(void* out, unsigned long long offset, C element, void* info) {
  if (kept<Real, kColumns>(offset, info)) static_cast<C*>(out)[offset] = element;
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
__device__ cufftDoubleComplex cascade_load_kept_columns_z(void* in, unsigned long long offset, void* info, void*) {
  return load_kept<double, cufftDoubleComplex, true>(in, offset, info);
}
__device__ cufftComplex cascade_load_kept_columns_c(void* in, unsigned long long offset, void* info, void*) {
  return load_kept<float, cufftComplex, true>(in, offset, info);
}
__device__ void cascade_store_kept_columns_z(void* out, unsigned long long offset, cufftDoubleComplex element,
                                             void* info, void*) {
  store_kept<double, cufftDoubleComplex, true>(out, offset, element, info);
}
__device__ void cascade_store_kept_columns_c(void* out, unsigned long long offset, cufftComplex element, void* info,
                                             void*) {
  store_kept<float, cufftComplex, true>(out, offset, element, info);
}
