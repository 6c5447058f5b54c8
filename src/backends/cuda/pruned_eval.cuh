//! @file PrunedEval: the step's 2D transforms as two batched 1D passes, over all rows and over
//! the columns the 2/3 rule keeps alone (a third of the half spectrum's columns skipped).
#pragma once

#include "backends/cuda/plan_maker.cuh"
#include "backends/cuda/cuda_check.hpp"

namespace cascade {

//! Under the 2/3 rule a third of the half spectrum's columns (kx > nx/3) is zero on the way in
//! and unused on the way out. The removed columns of a forward's output hold the rows' pass
//! alone, the removed rows of its kept columns are not masked: the fused stage reads the kept
//! modes alone, and writes zeros at the others for the inverse (as at callback level store).
//! With callbacks, the passes over the rows store or load the kept columns alone, those over
//! the columns the kept modes. Batched pairs: the rows' pass takes both fields; the columns'
//! pass runs once a field. The row kernel (RowKernelEval) runs between the column passes.
template <class Real>
class PrunedEval {
  using T = CufftTypes<Real>;
  using Cplx = Complex<Real>;

 public:
  void make(PlanMaker<Real>& m, int ny, int nx, int level, bool pairs) {
    spectral_ = std::size_t(ny) * std::size_t(nx / 2 + 1);
    const long long nxh = nx / 2 + 1, n = nx;
    const long long kept_columns = two_thirds_band(nx) + 1;  // kx = 0 .. the 2/3 rule's band
    // The level's callbacks: stores from level store, loads at level all.
    const char* store_rows = level >= 1 ? T::store_kept_columns : nullptr;
    const char* load_rows = level >= 2 ? T::load_kept_columns : nullptr;
    const char* store_columns = level >= 1 ? T::store_kept : nullptr;
    const char* load_columns = level >= 2 ? T::load_kept : nullptr;
    m.one_d(rows_r2c_, T::r2c, n, 1, n, 1, nxh, ny, store_rows, false, "pruned forward rows plan");
    m.one_d(rows_c2r_, T::c2r, n, 1, nxh, 1, n, ny, load_rows, true, "pruned inverse rows plan");
    if (pairs) {
      m.one_d(rows_r2c_pair_, T::r2c, n, 1, n, 1, nxh, 2LL * ny, store_rows, false, "pruned forward rows plan (pairs)");
      m.one_d(rows_c2r_pair_, T::c2r, n, 1, nxh, 1, n, 2LL * ny, load_rows, true, "pruned inverse rows plan (pairs)");
    }
    m.one_d(columns_forward_, T::c2c, ny, nxh, 1, nxh, 1, kept_columns, store_columns, false,
            "pruned forward columns plan");
    m.one_d(columns_inverse_, T::c2c, ny, nxh, 1, nxh, 1, kept_columns, load_columns, true,
            "pruned inverse columns plan");
  }
  void destroy() { destroy_plans(handles()); }
  cufftHandle* const (&handles())[6] { return handles_; }

  //! The rows, then the kept columns in place.
  void forward(const Real* in, Cplx* out) const {
    CASCADE_CUFFT_CHECK(T::exec_r2c(rows_r2c_, in, out));
    columns_forward(out);
  }
  //! The kept columns in place (the input is overwritten), then the rows.
  void inverse(Cplx* in, Real* out) const {
    columns_inverse(in);
    CASCADE_CUFFT_CHECK(T::exec_c2r(rows_c2r_, in, out));
  }
  //! The same of a pair of fields, the second just past the first.
  void forward_pair(const Real* in, Cplx* out) const {
    CASCADE_CUFFT_CHECK(T::exec_r2c(rows_r2c_pair_, in, out));
    columns_forward(out);
    columns_forward(out + spectral_);
  }
  void inverse_pair(Cplx* in, Real* out) const {
    columns_inverse(in);
    columns_inverse(in + spectral_);
    CASCADE_CUFFT_CHECK(T::exec_c2r(rows_c2r_pair_, in, out));
  }
  void columns_forward(Cplx* a) const { CASCADE_CUFFT_CHECK(T::exec_c2c(columns_forward_, a, CUFFT_FORWARD)); }
  void columns_inverse(Cplx* a) const { CASCADE_CUFFT_CHECK(T::exec_c2c(columns_inverse_, a, CUFFT_INVERSE)); }

 private:
  std::size_t spectral_ = 0;  //!< a half spectrum's elements
  cufftHandle rows_r2c_ = 0, rows_c2r_ = 0;            //!< one field
  cufftHandle rows_r2c_pair_ = 0, rows_c2r_pair_ = 0;  //!< two
  cufftHandle columns_forward_ = 0, columns_inverse_ = 0;  //!< in place
  cufftHandle* const handles_[6] = {&rows_r2c_,      &rows_c2r_,        &rows_r2c_pair_,
                                    &rows_c2r_pair_, &columns_forward_, &columns_inverse_};
};

}  // namespace cascade
