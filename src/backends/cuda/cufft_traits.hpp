//! @file cuFFT's types and calls of a precision (R2C/C2R/C2C, the callbacks' names and kinds).
#pragma once

#include <cufft.h>
#include <cufftXt.h>

#include "cascade/types.hpp"

namespace cascade {

template <class Real>
struct CufftTypes;
template <>
struct CufftTypes<double> {
  static constexpr cufftType r2c = CUFFT_D2Z;
  static constexpr cufftType c2r = CUFFT_Z2D;
  static constexpr cufftType c2c = CUFFT_Z2Z;
  // The callbacks of src/backends/cuda/fft_callbacks.cu and their kinds.
  static constexpr const char* load_kept = "cascade_load_kept_z";
  static constexpr const char* store_kept = "cascade_store_kept_z";
  static constexpr const char* load_kept_columns = "cascade_load_kept_columns_z";
  static constexpr const char* store_kept_columns = "cascade_store_kept_columns_z";
  static constexpr const char* load_kept_full = "cascade_load_kept_full_z";
  static constexpr const char* store_kept_full = "cascade_store_kept_full_z";
  static constexpr const char* store_products = "cascade_store_products_z";
  static constexpr cufftXtCallbackType load_complex = CUFFT_CB_LD_COMPLEX_DOUBLE;
  static constexpr cufftXtCallbackType store_complex = CUFFT_CB_ST_COMPLEX_DOUBLE;
  static cufftResult exec_r2c(cufftHandle p, const double* in, Complex<double>* out) {
    return cufftExecD2Z(p, const_cast<double*>(in), reinterpret_cast<cufftDoubleComplex*>(out));
  }
  static cufftResult exec_c2r(cufftHandle p, Complex<double>* in, double* out) {
    return cufftExecZ2D(p, reinterpret_cast<cufftDoubleComplex*>(in), out);
  }
  static cufftResult exec_c2c(cufftHandle p, Complex<double>* data, int direction) {
    auto* d = reinterpret_cast<cufftDoubleComplex*>(data);
    return cufftExecZ2Z(p, d, d, direction);
  }
  static cufftResult exec_c2c(cufftHandle p, const Complex<double>* in, Complex<double>* out, int direction) {
    auto* i = reinterpret_cast<cufftDoubleComplex*>(const_cast<Complex<double>*>(in));
    return cufftExecZ2Z(p, i, reinterpret_cast<cufftDoubleComplex*>(out), direction);
  }
};
template <>
struct CufftTypes<float> {
  static constexpr cufftType r2c = CUFFT_R2C;
  static constexpr cufftType c2r = CUFFT_C2R;
  static constexpr cufftType c2c = CUFFT_C2C;
  static constexpr const char* load_kept = "cascade_load_kept_c";
  static constexpr const char* store_kept = "cascade_store_kept_c";
  static constexpr const char* load_kept_columns = "cascade_load_kept_columns_c";
  static constexpr const char* store_kept_columns = "cascade_store_kept_columns_c";
  static constexpr const char* load_kept_full = "cascade_load_kept_full_c";
  static constexpr const char* store_kept_full = "cascade_store_kept_full_c";
  static constexpr const char* store_products = "cascade_store_products_c";
  static constexpr cufftXtCallbackType load_complex = CUFFT_CB_LD_COMPLEX;
  static constexpr cufftXtCallbackType store_complex = CUFFT_CB_ST_COMPLEX;
  static cufftResult exec_r2c(cufftHandle p, const float* in, Complex<float>* out) {
    return cufftExecR2C(p, const_cast<float*>(in), reinterpret_cast<cufftComplex*>(out));
  }
  static cufftResult exec_c2r(cufftHandle p, Complex<float>* in, float* out) {
    return cufftExecC2R(p, reinterpret_cast<cufftComplex*>(in), out);
  }
  static cufftResult exec_c2c(cufftHandle p, Complex<float>* data, int direction) {
    auto* d = reinterpret_cast<cufftComplex*>(data);
    return cufftExecC2C(p, d, d, direction);
  }
  static cufftResult exec_c2c(cufftHandle p, const Complex<float>* in, Complex<float>* out, int direction) {
    auto* i = reinterpret_cast<cufftComplex*>(const_cast<Complex<float>*>(in));
    return cufftExecC2C(p, i, reinterpret_cast<cufftComplex*>(out), direction);
  }
};

}  // namespace cascade
