//! @file Making the step's cuFFT plans (the evaluators' make()): without work areas of their own
//! (the executor's one is shared, grown to the largest need), with the callbacks of
//! src/backends/cuda/fft_callbacks.cu linked in where asked, the first failure kept with what failed.
#pragma once

#include <cufft.h>
#include <cufftXt.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "backends/cuda/cufft_traits.hpp"
#include "fft_callbacks_fatbin.h"  // cascade_fft_callbacks: LTO-IR of src/backends/cuda/fft_callbacks.cu

namespace cascade {

template <class Real>
struct PlanMaker {
  using T = CufftTypes<Real>;
  void** cb_info;  //!< the callbacks' caller info (the executor's: alive with the plans)
  cufftResult r = CUFFT_SUCCESS;
  std::string failed;   //!< the plan that failed first
  std::size_t need = 0;  //!< the largest work area of the plans made

  bool ok() const { return r == CUFFT_SUCCESS; }
  void check(cufftResult rc, const char* what) {
    if (r == CUFFT_SUCCESS && rc != CUFFT_SUCCESS) {
      r = rc;
      failed = what;
    }
  }
  //! A new plan without a work area, with the callback `name` (null: none), a load where `load`.
  bool begin(cufftHandle& p, const char* name, bool load, const char* what) {
    if (!ok()) return false;
    check(cufftCreate(&p), what);
    check(cufftSetAutoAllocation(p, 0), what);
    if (name)
      check(cufftXtSetJITCallback(p, name, cascade_fft_callbacks, sizeof(cascade_fft_callbacks),
                                  load ? T::load_complex : T::store_complex, cb_info),
            what);
    return true;
  }
  //! A 2D plan of the whole grid, forward (R2C) or inverse (C2R), of `batch` fields, with the
  //! callback `name` (null: none).
  void real_2d(cufftHandle& p, int ny, int nx, bool forward, int batch, const char* name) {
    const char* what = forward ? "forward plan" : "inverse plan";
    if (!begin(p, name, !forward, what)) return;
    const std::size_t spectral = std::size_t(ny) * std::size_t(nx / 2 + 1), real = std::size_t(ny) * std::size_t(nx);
    long long dims[2] = {ny, nx};
    std::size_t work = 0;
    const long long in_dist = forward ? (long long)real : (long long)spectral;
    const long long out_dist = forward ? (long long)spectral : (long long)real;
    // 64-bit: the distances of the largest grids pass 2^31 elements.
    check(cufftMakePlanMany64(p, 2, dims, nullptr, 1, in_dist, nullptr, 1, out_dist, forward ? T::r2c : T::c2r,
                              batch, &work),
          what);
    need = std::max(need, work);
  }
  //! `count` 1D transforms of length n, elements `stride` apart, transforms `dist` apart.
  void one_d(cufftHandle& p, cufftType type, long long n, long long in_stride, long long in_dist, long long out_stride,
             long long out_dist, long long count, const char* name, bool load, const char* what) {
    if (!begin(p, name, load, what)) return;
    long long dims[1] = {n};
    // The embeddings only need to be given for the strides to count; a 1D transform reads
    // n elements `stride` apart whatever they say.
    long long embed[1] = {n};
    std::size_t work = 0;
    check(cufftMakePlanMany64(p, 1, dims, embed, in_stride, in_dist, embed, out_stride, out_dist, type, count, &work),
          what);
    need = std::max(need, work);
  }
  //! A complex 2D plan of the whole grid (of `batch` fields, one after the other) with up to
  //! two callbacks.
  void complex_2d(cufftHandle& p, int ny, int nx, const char* first, bool first_load, const char* second,
                  const char* what, int batch = 1) {
    if (!begin(p, first, first_load, what)) return;
    if (second)
      check(cufftXtSetJITCallback(p, second, cascade_fft_callbacks, sizeof(cascade_fft_callbacks), T::store_complex,
                                  cb_info),
            what);
    std::size_t work = 0;
    if (batch == 1) {
      check(cufftMakePlan2d(p, ny, nx, T::c2c, &work), what);
    } else {
      long long dims[2] = {ny, nx};
      const long long dist = (long long)ny * (long long)nx;
      check(cufftMakePlanMany64(p, 2, dims, nullptr, 1, dist, nullptr, 1, dist, T::c2c, batch, &work), what);
    }
    need = std::max(need, work);
  }
};

//! Destroy the plans among `handles` that were made, and zero them.
template <std::size_t N>
void destroy_plans(cufftHandle* const (&handles)[N]) {
  for (cufftHandle* p : handles) {
    if (*p) cufftDestroy(*p);
    *p = 0;
  }
}

}  // namespace cascade
