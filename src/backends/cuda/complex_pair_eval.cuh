//! @file ComplexPairEval: Basdevant's evaluation as complex pairs, u + i v through one complex
//! 2D transform each way (kernels/ns_ops.cuh PackedLayout).
#pragma once

#include "backends/cuda/plan_maker.cuh"
#include "backends/cuda/cuda_check.hpp"

namespace cascade {

//! The inverse loads the kept modes alone at level all and stores the products
//! u v + i (v^2 - u^2) in place of u + i v (a store callback: they take no pass of their own);
//! the forward stores the kept modes alone from level store. A plan of each direction, as the
//! callbacks differ.
template <class Real>
class ComplexPairEval {
  using T = CufftTypes<Real>;
  using Cplx = Complex<Real>;

 public:
  //! `members`: an ensemble's pairs, one after the other, in one batch.
  void make(PlanMaker<Real>& m, int ny, int nx, int level, int members = 1) {
    m.complex_2d(inverse_, ny, nx, level >= 2 ? T::load_kept_full : nullptr, true, T::store_products,
                 "complex pair inverse plan", members);
    m.complex_2d(forward_, ny, nx, level >= 1 ? T::store_kept_full : nullptr, false, nullptr,
                 "complex pair forward plan", members);
  }
  void destroy() { destroy_plans(handles()); }
  cufftHandle* const (&handles())[2] { return handles_; }

  //! From the full spectrum p of u + i v (a spectral pair's memory), out of place, straight to
  //! the products in z (a real pair's memory); and the forward transform back.
  void inverse(const Cplx* p, Cplx* z) const { CASCADE_CUFFT_CHECK(T::exec_c2c(inverse_, p, z, CUFFT_INVERSE)); }
  void forward(const Cplx* z, Cplx* p) const { CASCADE_CUFFT_CHECK(T::exec_c2c(forward_, z, p, CUFFT_FORWARD)); }

 private:
  cufftHandle inverse_ = 0;  //!< stores u v + i (v^2 - u^2) (a store callback)
  cufftHandle forward_ = 0;
  cufftHandle* const handles_[2] = {&inverse_, &forward_};
};

}  // namespace cascade
