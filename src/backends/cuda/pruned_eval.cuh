//! @file PrunedEval: the step's 2D transforms as two batched 1D passes, over all rows and over
//! the columns the 2/3 rule keeps alone (a third of the half spectrum's columns skipped).
#pragma once

#include <string>

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
//! Two fields' column passes run side by side (share()): the second on a second stream, with
//! a second plan of its own. cuFFT's strided passes over the kept columns take few blocks (43
//! of 1024 threads at 1024²), so the two fill the GPU where one leaves most of it idle.
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
    ny_ = ny;
    nxh_ = nxh;
    kept_columns_ = kept_columns;
    store_columns_ = store_columns;
    load_columns_ = load_columns;
    made_with_ = m.cb_info;
    make_columns(m, columns_forward_, columns_inverse_, "pruned");
  }
  //! The second field's column passes on a stream of their own (made here, with the columns'
  //! plans again), joined to `main` by events, where the columns' plans need no work area (a
  //! second one would cost as much as a field where they do); else they stay one after the other.
  void share(cudaStream_t main, void* work) {
    std::size_t work_forward = 1, work_inverse = 1;
    if (cufftGetSize(columns_forward_, &work_forward) != CUFFT_SUCCESS ||
        cufftGetSize(columns_inverse_, &work_inverse) != CUFFT_SUCCESS || work_forward || work_inverse)
      return;
    PlanMaker<Real> m{made_with_};
    make_columns(m, side_forward_, side_inverse_, "side");
    if (m.ok()) m.check(cufftGetSize(side_forward_, &work_forward), "side columns plan");
    if (m.ok()) m.check(cufftGetSize(side_inverse_, &work_inverse), "side columns plan");
    if (!m.ok() || work_forward || work_inverse) {
      destroy_plans(side_handles_);
      return;
    }
    main_ = main;
    CASCADE_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    CASCADE_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    CASCADE_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
    for (cufftHandle* p : side_handles_) {
      CASCADE_CUFFT_CHECK(cufftSetWorkArea(*p, work));  // none used: no work area asked
      CASCADE_CUFFT_CHECK(cufftSetStream(*p, side_));
    }
  }
  void destroy() {
    destroy_plans(handles());
    destroy_plans(side_handles_);
    if (fork_) cudaEventDestroy(fork_);
    if (join_) cudaEventDestroy(join_);
    if (side_) cudaStreamDestroy(side_);
    fork_ = join_ = nullptr;
    side_ = nullptr;
  }
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
    columns_forward(out, out + spectral_);
  }
  void inverse_pair(Cplx* in, Real* out) const {
    columns_inverse(in, in + spectral_);
    CASCADE_CUFFT_CHECK(T::exec_c2r(rows_c2r_pair_, in, out));
  }
  void columns_forward(Cplx* a) const { CASCADE_CUFFT_CHECK(T::exec_c2c(columns_forward_, a, CUFFT_FORWARD)); }
  void columns_inverse(Cplx* a) const { CASCADE_CUFFT_CHECK(T::exec_c2c(columns_inverse_, a, CUFFT_INVERSE)); }
  //! The column passes of two fields, side by side where share() made the second's plans.
  void columns_forward(Cplx* a, Cplx* b) const { both(a, b, columns_forward_, side_forward_, CUFFT_FORWARD); }
  void columns_inverse(Cplx* a, Cplx* b) const { both(a, b, columns_inverse_, side_inverse_, CUFFT_INVERSE); }

 private:
  void make_columns(PlanMaker<Real>& m, cufftHandle& forward, cufftHandle& inverse, const std::string& which) {
    const std::string f = which + " forward columns plan", i = which + " inverse columns plan";
    m.one_d(forward, T::c2c, ny_, nxh_, 1, nxh_, 1, kept_columns_, store_columns_, false, f.c_str());
    m.one_d(inverse, T::c2c, ny_, nxh_, 1, nxh_, 1, kept_columns_, load_columns_, true, i.c_str());
  }
  void both(Cplx* a, Cplx* b, cufftHandle first, cufftHandle second, int direction) const {
    if (!side_) {
      CASCADE_CUFFT_CHECK(T::exec_c2c(first, a, direction));
      CASCADE_CUFFT_CHECK(T::exec_c2c(first, b, direction));
      return;
    }
    CASCADE_CUDA_CHECK(cudaEventRecord(fork_, main_));  // in a capture: the side stream joins it
    CASCADE_CUDA_CHECK(cudaStreamWaitEvent(side_, fork_, 0));
    CASCADE_CUFFT_CHECK(T::exec_c2c(first, a, direction));
    CASCADE_CUFFT_CHECK(T::exec_c2c(second, b, direction));
    CASCADE_CUDA_CHECK(cudaEventRecord(join_, side_));
    CASCADE_CUDA_CHECK(cudaStreamWaitEvent(main_, join_, 0));
  }

  std::size_t spectral_ = 0;  //!< a half spectrum's elements
  long long ny_ = 0, nxh_ = 0, kept_columns_ = 0;
  const char* store_columns_ = nullptr;
  const char* load_columns_ = nullptr;
  void** made_with_ = nullptr;  //!< the callbacks' caller info the plans were made with
  cufftHandle rows_r2c_ = 0, rows_c2r_ = 0;            //!< one field
  cufftHandle rows_r2c_pair_ = 0, rows_c2r_pair_ = 0;  //!< two
  cufftHandle columns_forward_ = 0, columns_inverse_ = 0;  //!< in place
  cufftHandle* const handles_[6] = {&rows_r2c_,      &rows_c2r_,        &rows_r2c_pair_,
                                    &rows_c2r_pair_, &columns_forward_, &columns_inverse_};
  cufftHandle side_forward_ = 0, side_inverse_ = 0;  //!< the second field's, on side_ (share)
  cufftHandle* const side_handles_[2] = {&side_forward_, &side_inverse_};
  cudaStream_t main_ = nullptr, side_ = nullptr;
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
};

}  // namespace cascade
