//! @file PlainEval: the step on cuFFT's whole-grid 2D transforms, with the kept-mode callbacks
//! (kernels/fft_callbacks.cuh) and batched pairs where the plan has them.
#pragma once

#include "backends/cuda/plan_maker.cuh"
#include "backends/cuda/cuda_check.hpp"

namespace cascade {

//! Its own plans: a forward storing the kept modes alone (level store and up), an inverse
//! loading them alone (level all), and batch-2 plans of each direction with the level's
//! callbacks (batched pairs). Without them, the executor's plain plans.
template <class Real>
class PlainEval {
  using T = CufftTypes<Real>;
  using Cplx = Complex<Real>;

 public:
  //! `members`: the fields of an ensemble a buffer holds (a field's plans batch them all, a
  //! pair's twice as many).
  void make(PlanMaker<Real>& m, int ny, int nx, int level, bool pairs, int members = 1) {
    if (level >= 1) m.real_2d(forward_kept_, ny, nx, true, members, T::store_kept);
    if (level >= 2) m.real_2d(inverse_kept_, ny, nx, false, members, T::load_kept);
    if (pairs) {
      m.real_2d(forward_pair_, ny, nx, true, 2 * members, level >= 1 ? T::store_kept : nullptr);
      m.real_2d(inverse_pair_, ny, nx, false, 2 * members, level >= 2 ? T::load_kept : nullptr);
    }
  }
  void destroy() { destroy_plans(handles()); }
  cufftHandle* const (&handles())[4] { return handles_; }

  //! The forward transform of products (`plain`: the executor's plan, where no callback).
  void forward(cufftHandle plain, const Real* in, Cplx* out) const {
    CASCADE_CUFFT_CHECK(T::exec_r2c(forward_kept_ ? forward_kept_ : plain, in, out));
  }
  void inverse(cufftHandle plain, Cplx* in, Real* out) const {
    CASCADE_CUFFT_CHECK(T::exec_c2r(inverse_kept_ ? inverse_kept_ : plain, in, out));
  }
  //! The same of a pair of fields, the second just past the first.
  void forward_pair(const Real* in, Cplx* out) const { CASCADE_CUFFT_CHECK(T::exec_r2c(forward_pair_, in, out)); }
  void inverse_pair(Cplx* in, Real* out) const { CASCADE_CUFFT_CHECK(T::exec_c2r(inverse_pair_, in, out)); }

 private:
  cufftHandle forward_kept_ = 0;  //!< one field, level >= store
  cufftHandle inverse_kept_ = 0;  //!< one field, level all
  cufftHandle forward_pair_ = 0;  //!< two fields, with the level's callback
  cufftHandle inverse_pair_ = 0;
  cufftHandle* const handles_[4] = {&forward_kept_, &inverse_kept_, &forward_pair_, &inverse_pair_};
};

}  // namespace cascade
