//! @file CPU backend: FFTW (threaded) transforms of a whole grid (CpuExec) over the OpenMP loops of
//! cpu_loops.hpp; FFTW planning is fftw_plans.cpp, the slabs over MPI mpi_slabs.cpp.
#include <fftw3.h>
#include <fmt/format.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/cpu_loops.hpp"
#include "cascade/parallel.hpp"
#include "kernels/reduction_ops.cuh"

namespace cascade {
namespace cpu {
namespace {

//! The forward and inverse plans of one grid (of `members` fields one after the other): what
//! CpuExec's constructor makes, under the planner lock.
template <class Real>
void make_plans(const Grid& grid, int members, int threads, bool measure, Real* r, typename Fftw<Real>::complex* c,
                typename Fftw<Real>::plan& forward, typename Fftw<Real>::plan& inverse, std::string& outcome) {
  using F = Fftw<Real>;
  F::threads(threads);
  plan_set<Real>(
      measure,
      [&](unsigned flags) {
        forward = members > 1 ? F::r2c_many(grid.ny, grid.nx, members, r, c, flags) : F::r2c(grid.ny, grid.nx, r, c, flags);
        inverse = members > 1 ? F::c2r_many(grid.ny, grid.nx, members, c, r, flags) : F::c2r(grid.ny, grid.nx, c, r, flags);
        return forward && inverse;
      },
      [&] {
        if (forward) F::destroy(forward);
        if (inverse) F::destroy(inverse);
        forward = inverse = nullptr;
      },
      outcome);
}

//! The executor of the CPU backend: a whole grid (of `members` fields, one batch), FFTW's
//! threaded 2D transforms.
template <class Real>
class CpuExec : public CpuLoops<Real> {
  using F = Fftw<Real>;
  using Cplx = Complex<Real>;

 public:
  CpuExec(const Grid& grid, int threads, FftPlanning planning = FftPlanning::Estimate, int members = 1)
      : CpuLoops<Real>(grid, threads, members),
        measure_(planning == FftPlanning::Measure ||
                 (planning == FftPlanning::Auto && grid.size() * std::size_t(members) >= kMeasureFromPoints)),
        whole_(Slab::whole(grid, members)),
        nx_(grid.nx),
        ny_(grid.ny) {
    F::init_threads();
    // Plan on scratch arrays (FFTW_MEASURE overwrites them); every buffer comes from
    // fftw_malloc, so the new-array execute functions see the same alignment.
    Buffer<Real> r = this->template alloc<Real>(whole_.real_count(grid));
    Buffer<Cplx> c = this->template alloc<Cplx>(whole_.spectral_count(grid));
    std::lock_guard<std::mutex> lock(planner_mutex());
    make_plans<Real>(grid, members, this->threads_, measure_, r.data(), reinterpret_cast<typename F::complex*>(c.data()), forward_,
                     inverse_, planning_);
    CASCADE_CHECK_FFTW_PLAN(forward_);
    CASCADE_CHECK_FFTW_PLAN(inverse_);
  }
  ~CpuExec() {
    std::lock_guard<std::mutex> lock(planner_mutex());
    if (forward_) F::destroy(forward_);
    if (inverse_) F::destroy(inverse_);
    destroy_row_plans();
  }
  CpuExec(const CpuExec&) = delete;
  CpuExec& operator=(const CpuExec&) = delete;

  std::string description() const {
    return fmt::format("cpu ({}, {} thread{}, {})", fftw_version, this->threads_, this->threads_ == 1 ? "" : "s", planning_);
  }

  Slab slab() const { return whole_; }

  void forward(const Real* in, Cplx* out) const {
    // r2c out of place preserves its input (FFTW's default for r2c).
    F::exec_r2c(forward_, const_cast<Real*>(in), reinterpret_cast<typename F::complex*>(out));
  }
  void inverse(Cplx* in, Real* out) const {
    F::exec_c2r(inverse_, reinterpret_cast<typename F::complex*>(in), out);
  }

  // ---- the evaluation row by row (Backend::nonlinear_products on the CPU)
  //
  // Under the 2/3 rule an evaluation's transforms and products can go row by row: the inverse
  // transforms' passes over the columns, on the columns the dealiasing keeps alone (a third of
  // the half spectrum's columns is zero: kx > nx/3), in place and threaded as FFTW does; then,
  // each thread on its own rows, the inverse transforms of a row of every input, the products
  // of that row and the forward transforms of the products' rows, in cache; then the forward
  // transforms' passes over the kept columns. The real fields are never written out whole,
  // and no transform touches the removed columns. The same operations as the 2D transforms
  // (FFTW's 2D transforms are rows and columns too), in another order: results agree to
  // round-off. The inputs must be zero at the removed modes (the fused stage writes them);
  // on return the outputs are defined at the kept modes.

  static constexpr bool kRowFused = true;

  //! Plan the row-by-row evaluation, once, where the step plan says (StepStrategy::CpuRows;
  //! plan_step takes it from 256^2 points under the 2/3 rule); its why then says how FFTW
  //! planned the rows.
  void prepare_rows(StepPlan& plan) {
    if (plan.strategy != StepStrategy::CpuRows || rows_) return;
    make_row_plans();
    rows_ = true;
    plan.why += "; " + rows_planning_;
  }
  bool rows_fused() const { return rows_; }

  //! One evaluation row by row: the `inputs` spectral fields `in` are transformed (overwritten),
  //! `make(rows)` gives the products' functor over one row's real values (rows[q]: input q's;
  //! the functor writes the products in place and returns a point's CFL speed), and the real
  //! rows rows[out_rows[k]] are transformed forward into out[k]. Where `with_max`, the maximum
  //! of what the functor returned is kept for max_result().
  template <class MakeProduct>
  void products_by_rows(int inputs, Cplx* const* in, int outputs, const int* out_rows, Cplx* const* out,
                        bool with_max, const MakeProduct& make) {
    using C = typename F::complex;
    const std::size_t nx = std::size_t(nx_), nxh = nx / 2 + 1;
    for (int q = 0; q < inputs; ++q) F::exec_c2c(columns_inverse_, reinterpret_cast<C*>(in[q]));
    std::fill(row_partials_.begin(), row_partials_.end(), MaxOp<Real>::identity());
    this->parallel_ranges(std::size_t(ny_), [&](int t, std::size_t begin, std::size_t end) {
      Real* const real = row_real_.data() + std::size_t(t) * kMaxRows * row_stride_real_;
      Cplx* const spectral = row_spectral_.data() + std::size_t(t) * row_stride_spectral_;
      Real* rows[kMaxRows];
      for (int q = 0; q < kMaxRows; ++q) rows[q] = real + std::size_t(q) * row_stride_real_;
      const MaxOp<Real> op;
      Real acc = MaxOp<Real>::identity();
      for (std::size_t j = begin; j < end; ++j) {
        // Each row through an aligned scratch row, so that every row takes the planned path.
        for (int q = 0; q < inputs; ++q) {
          std::memcpy(spectral, in[q] + j * nxh, nxh * sizeof(Cplx));
          F::exec_c2r(row_c2r_, reinterpret_cast<C*>(spectral), rows[q]);
        }
        acc = op(acc, row_max(make(rows), nx));
        for (int k = 0; k < outputs; ++k) {
          F::exec_r2c(row_r2c_, rows[out_rows[k]], reinterpret_cast<C*>(spectral));
          std::memcpy(out[k] + j * nxh, spectral, nxh * sizeof(Cplx));
        }
      }
      row_partials_[t] = acc;
    });
    for (int k = 0; k < outputs; ++k) F::exec_c2c(columns_forward_, reinterpret_cast<C*>(out[k]));
    if (!with_max) return;
    const MaxOp<Real> op;
    Real result = MaxOp<Real>::identity();
    for (Real p : row_partials_) result = op(result, p);
    this->max_ = result;
  }

 private:
  static constexpr int kMaxRows = 4;  //!< real rows a thread holds: u, v (, omega_x, omega_y)

  template <class Fn>
  [[gnu::flatten]] static Real row_max(const Fn& f_in, std::size_t n) {
    const Fn f = f_in;
    const MaxOp<Real> op;
    Real acc = MaxOp<Real>::identity();
    for (std::size_t i = 0; i < n; ++i) acc = op(acc, f(i));
    return acc;
  }

  void make_row_plans() {
    using C = typename F::complex;
    const int nx = nx_, ny = ny_, nxh = nx / 2 + 1;
    const int kept_columns = two_thirds_band(nx) + 1;  // kx = 0 .. the 2/3 rule's band
    // Scratch rows, each thread its own, each row on its own 64-byte boundary (fftw_malloc's
    // alignment or finer), so that every row has the alignment the plans were made for.
    constexpr std::size_t real_step = 64 / sizeof(Real), spectral_step = 64 / sizeof(Cplx);
    row_stride_real_ = (std::size_t(nx) + real_step - 1) / real_step * real_step;
    row_stride_spectral_ = (std::size_t(nxh) + spectral_step - 1) / spectral_step * spectral_step;
    row_real_ = this->template alloc<Real>(std::size_t(this->threads_) * kMaxRows * row_stride_real_);
    row_spectral_ = this->template alloc<Cplx>(std::size_t(this->threads_) * row_stride_spectral_);
    row_partials_.assign(this->threads_, MaxOp<Real>::identity());
    Buffer<Cplx> scratch = this->template alloc<Cplx>(std::size_t(ny) * std::size_t(nxh));
    auto* c = reinterpret_cast<C*>(scratch.data());
    auto* row_c = reinterpret_cast<C*>(row_spectral_.data());
    std::lock_guard<std::mutex> lock(planner_mutex());
    plan_set<Real>(
        measure_,
        [&](unsigned flags) {
          F::threads(this->threads_);  // the passes over the columns: FFTW's threads
          columns_inverse_ = F::c2c_many(ny, kept_columns, c, nxh, 1, FFTW_BACKWARD, flags);
          columns_forward_ = F::c2c_many(ny, kept_columns, c, nxh, 1, FFTW_FORWARD, flags);
          F::threads(1);  // a row: one thread's
          row_c2r_ = F::c2r_1d(nx, row_c, row_real_.data(), flags);
          row_r2c_ = F::r2c_1d(nx, row_real_.data(), row_c, flags);
          return columns_inverse_ && columns_forward_ && row_c2r_ && row_r2c_;
        },
        [&] { destroy_row_plans(); }, rows_planning_);
    CASCADE_CHECK_FFTW_PLAN(columns_inverse_);
    CASCADE_CHECK_FFTW_PLAN(columns_forward_);
    CASCADE_CHECK_FFTW_PLAN(row_c2r_);
    CASCADE_CHECK_FFTW_PLAN(row_r2c_);
  }
  void destroy_row_plans() {
    for (typename F::plan* p : {&columns_inverse_, &columns_forward_, &row_c2r_, &row_r2c_}) {
      if (*p) F::destroy(*p);
      *p = nullptr;
    }
  }

  std::string planning_;  //!< how the plans were made (description)
  bool measure_;  //!< FFTW_MEASURE (run.fft_planning), else FFTW_ESTIMATE
  typename F::plan forward_ = nullptr;
  typename F::plan inverse_ = nullptr;
  Slab whole_;
  int nx_, ny_;
  // The row-by-row evaluation (prepare_rows).
  bool rows_ = false;
  std::string rows_planning_;
  typename F::plan columns_inverse_ = nullptr, columns_forward_ = nullptr;  //!< in place, the kept columns
  typename F::plan row_c2r_ = nullptr, row_r2c_ = nullptr;                  //!< one row, one thread
  Buffer<Real> row_real_;
  Buffer<Cplx> row_spectral_;
  std::size_t row_stride_real_ = 0, row_stride_spectral_ = 0;
  std::vector<Real> row_partials_;  //!< each thread's CFL maximum (no allocation an evaluation)
};

}  // namespace
}  // namespace cpu

int cpu_cores_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? int(n) : 1;
}

std::string cap_openmp_threads() {
  static const std::string note = [] {
    const int cores = cpu_cores_available();
    const int asked = omp_get_max_threads();
    if (asked <= cores) return std::string();
    omp_set_num_threads(cores);
    return fmt::format("OpenMP would start {} threads (OMP_NUM_THREADS) on {} cores: using {}", asked, cores, cores);
  }();
  return note;
}

template <class Real>
std::unique_ptr<Backend<Real>> make_cpu_backend(const Grid& grid, int threads, FftPlanning planning, int members,
                                                int first_member, int batch) {
  auto b = std::make_unique<BackendImpl<Real, cpu::CpuExec<Real>>>(grid, threads, planning, members);
  if (batch > 0) b->hold_members(first_member, batch);
  return b;
}

template std::unique_ptr<Backend<float>> make_cpu_backend<float>(const Grid&, int, FftPlanning, int, int, int);
template std::unique_ptr<Backend<double>> make_cpu_backend<double>(const Grid&, int, FftPlanning, int, int, int);

}  // namespace cascade
