//! @file The device side of kernels/fft_callbacks.cuh: cuFFT LTO callbacks, one set a precision.
//! Compiled to LTO-IR alone (CMakeLists.txt: -dc -fatbin, code=lto_XX) and embedded in the
//! library as a byte array; cuFFT links them into its kernels when a plan is made. They are
//! C++ functions in the global namespace with cuFFT's callback signatures: cuFFT names them
//! by identifier and signature (extern "C" names are not found: CUFFT_INTERNAL_ERROR).
#include <cufftXt.h>

#include "kernels/fft_callbacks.cuh"

using cascade::TransformCallbackParams;

namespace {

//! What an offset is: a mode of the half spectrum, any mode of a column (the pruned transforms'
//! passes over the rows), a mode of a complex pair's full spectrum.
enum Kind { kModes, kColumns, kFull };

//! Whether the element at `offset` is moved: a kept mode, or any mode of a kept column.
template <class Real, int K>
__device__ inline bool kept(unsigned long long offset, void* info) {
  const auto* p = static_cast<const TransformCallbackParams<Real>*>(info);
  return K == kColumns ? p->keeps_column(offset) : K == kFull ? p->keeps_full(offset) : p->keeps(offset);
}

template <class Real, class C, int K = kModes>
__device__ inline C load_kept(void* in, unsigned long long offset, void* info) {
  if (!kept<Real, K>(offset, info)) return C{Real(0), Real(0)};
  return static_cast<const C*>(in)[offset];
}

template <class Real, class C, int K = kModes>
__device__ inline void store_kept(void* out, unsigned long long offset, C element, void* info) {
  if (kept<Real, K>(offset, info)) static_cast<C*>(out)[offset] = element;
}

//! Basdevant's products of a complex pair as the inverse transform stores z = u + i v:
//! u v + i (v^2 - u^2) in its place (the CFL maximum then comes from them: ns_ops.cuh
//! PackedProductsSpeed).
template <class Real, class C>
__device__ inline void store_products(void* out, unsigned long long offset, C element) {
  C products;
  cascade::basdevant_products<Real>(element.x, element.y, products.x, products.y);
  static_cast<C*>(out)[offset] = products;
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
  return load_kept<double, cufftDoubleComplex, kColumns>(in, offset, info);
}
__device__ cufftComplex cascade_load_kept_columns_c(void* in, unsigned long long offset, void* info, void*) {
  return load_kept<float, cufftComplex, kColumns>(in, offset, info);
}
__device__ void cascade_store_kept_columns_z(void* out, unsigned long long offset, cufftDoubleComplex element,
                                             void* info, void*) {
  store_kept<double, cufftDoubleComplex, kColumns>(out, offset, element, info);
}
__device__ void cascade_store_kept_columns_c(void* out, unsigned long long offset, cufftComplex element, void* info,
                                             void*) {
  store_kept<float, cufftComplex, kColumns>(out, offset, element, info);
}
__device__ cufftDoubleComplex cascade_load_kept_full_z(void* in, unsigned long long offset, void* info, void*) {
  return load_kept<double, cufftDoubleComplex, kFull>(in, offset, info);
}
__device__ cufftComplex cascade_load_kept_full_c(void* in, unsigned long long offset, void* info, void*) {
  return load_kept<float, cufftComplex, kFull>(in, offset, info);
}
__device__ void cascade_store_kept_full_z(void* out, unsigned long long offset, cufftDoubleComplex element,
                                          void* info, void*) {
  store_kept<double, cufftDoubleComplex, kFull>(out, offset, element, info);
}
__device__ void cascade_store_kept_full_c(void* out, unsigned long long offset, cufftComplex element, void* info,
                                          void*) {
  store_kept<float, cufftComplex, kFull>(out, offset, element, info);
}
__device__ void cascade_store_products_z(void* out, unsigned long long offset, cufftDoubleComplex element, void*,
                                         void*) {
  store_products<double, cufftDoubleComplex>(out, offset, element);
}
__device__ void cascade_store_products_c(void* out, unsigned long long offset, cufftComplex element, void*, void*) {
  store_products<float, cufftComplex>(out, offset, element);
}
