//! @file The CPU backend over MPI: one rank's slab, FFTW's MPI transforms (MpiCpuExec).
#if defined(CASCADE_HAVE_FFTW_MPI)
#include <fftw3-mpi.h>
#include <mpi.h>
#endif
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/cpu_loops.hpp"
#include "cascade/parallel.hpp"

namespace cascade {
#if defined(CASCADE_HAVE_FFTW_MPI)
namespace cpu {
namespace {

// ---------------------------------------------------------------- slabs over MPI (FFTW's MPI transforms)

template <class Real>
struct FftwMpi;

template <>
struct FftwMpi<double> {
  static void init() { fftw_mpi_init(); }
  static ptrdiff_t local_size(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t* ln0, ptrdiff_t* s0, ptrdiff_t* ln1, ptrdiff_t* s1) {
    return fftw_mpi_local_size_2d_transposed(n0, n1, MPI_COMM_WORLD, ln0, s0, ln1, s1);
  }
  static fftw_plan r2c(int n0, int n1, double* in, fftw_complex* out, unsigned flags) {
    return fftw_mpi_plan_dft_r2c_2d(n0, n1, in, out, MPI_COMM_WORLD, flags);
  }
  static fftw_plan c2r(int n0, int n1, fftw_complex* in, double* out, unsigned flags) {
    return fftw_mpi_plan_dft_c2r_2d(n0, n1, in, out, MPI_COMM_WORLD, flags);
  }
};

template <>
struct FftwMpi<float> {
  static void init() { fftwf_mpi_init(); }
  static ptrdiff_t local_size(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t* ln0, ptrdiff_t* s0, ptrdiff_t* ln1, ptrdiff_t* s1) {
    return fftwf_mpi_local_size_2d_transposed(n0, n1, MPI_COMM_WORLD, ln0, s0, ln1, s1);
  }
  static fftwf_plan r2c(int n0, int n1, float* in, fftwf_complex* out, unsigned flags) {
    return fftwf_mpi_plan_dft_r2c_2d(n0, n1, in, out, MPI_COMM_WORLD, flags);
  }
  static fftwf_plan c2r(int n0, int n1, fftwf_complex* in, float* out, unsigned flags) {
    return fftwf_mpi_plan_dft_c2r_2d(n0, n1, in, out, MPI_COMM_WORLD, flags);
  }
};

//! The executor of one MPI rank of a slab-decomposed run on the CPU: rows [j0, j0 + rows) of
//! physical fields, kx columns [i0, i0 + cols) of spectral ones (transposed, Slab), and FFTW's
//! MPI 2D transforms between them (1D transforms, one all-to-all transpose, 1D transforms:
//! FFTW_MPI_TRANSPOSED_OUT / _IN save the transpose back). FFTW's MPI real-data arrays have
//! padded rows (2 (nx/2+1) reals), so the transforms run in place on a padded work array the
//! fields are copied through. Reductions combine the ranks' results in rank order.
template <class Real>
class MpiCpuExec : public CpuLoops<Real> {
  using F = Fftw<Real>;
  using M = FftwMpi<Real>;
  using Cplx = Complex<Real>;

 public:
  MpiCpuExec(const Grid& grid, int threads, FftPlanning planning)
      : CpuLoops<Real>(grid, threads > 0 ? threads : auto_threads(grid)), nx_(grid.nx), ny_(grid.ny), nxh_(grid.nxh()) {
    require_slabs_fit(grid, parallel::size());
    static std::once_flag once;
    std::call_once(once, [] {
      F::init_threads();
      M::init();
    });
    ptrdiff_t n0 = 0, s0 = 0, n1 = 0, s1 = 0;
    const ptrdiff_t alloc = M::local_size(grid.ny, grid.nxh(), &n0, &s0, &n1, &s1);
    slab_ = Slab{int(s0), int(n0), int(s1), int(n1), true};
    work_ = this->template alloc<Cplx>(std::size_t(std::max<ptrdiff_t>(alloc, 1)));
    const bool measure = planning == FftPlanning::Measure ||
                         (planning == FftPlanning::Auto && grid.size() >= kMeasureFromPoints);
    const unsigned flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    Real* r = reinterpret_cast<Real*>(work_.data());
    auto* c = reinterpret_cast<typename F::complex*>(work_.data());
    std::lock_guard<std::mutex> lock(planner_mutex());
    F::threads(this->threads_);
    forward_ = M::r2c(grid.ny, grid.nx, r, c, flags | FFTW_MPI_TRANSPOSED_OUT);
    inverse_ = M::c2r(grid.ny, grid.nx, c, r, flags | FFTW_MPI_TRANSPOSED_IN);
    F::forget_wisdom();
    CASCADE_CHECK_FFTW_PLAN(forward_);
    CASCADE_CHECK_FFTW_PLAN(inverse_);
    planning_ = measure ? "measured plans" : "estimated plans";
  }
  ~MpiCpuExec() {
    std::lock_guard<std::mutex> lock(planner_mutex());
    if (forward_) F::destroy(forward_);
    if (inverse_) F::destroy(inverse_);
  }
  MpiCpuExec(const MpiCpuExec&) = delete;
  MpiCpuExec& operator=(const MpiCpuExec&) = delete;

  std::string description() const {
    return fmt::format("cpu ({} MPI, {} ranks, {} thread{} each, {})", fftw_version, parallel::size(),
                       this->threads_, this->threads_ == 1 ? "" : "s", planning_);
  }
  Slab slab() const { return slab_; }

  //! run.threads = 0 over MPI: CpuLoops' rule for this rank's share of the grid, and no more
  //! than this rank's share of the machine's cores (threads of ranks that share cores would
  //! spin against each other in OpenMP's barriers and MPI's polling).
  static int auto_threads(const Grid& grid) {
    const std::size_t by_size = std::max<std::size_t>(1, grid.size() / std::size_t(parallel::size()) / 16384);
    const int share = std::max(1, omp_get_max_threads() / std::max(1, parallel::ranks_on_this_node()));
    return static_cast<int>(std::min<std::size_t>(by_size, std::size_t(share)));
  }

  void forward(const Real* in, Cplx* out) {
    Real* w = reinterpret_cast<Real*>(work_.data());
    const std::size_t nx = std::size_t(nx_), pitch = 2 * std::size_t(nxh_);
    this->parallel_ranges(std::size_t(slab_.rows), [&](int, std::size_t b, std::size_t e) {
      for (std::size_t r = b; r < e; ++r) std::memcpy(w + r * pitch, in + r * nx, nx * sizeof(Real));
    });
    F::exec_r2c(forward_, w, reinterpret_cast<typename F::complex*>(work_.data()));
    const std::size_t n = std::size_t(slab_.cols) * std::size_t(ny_);
    this->parallel_ranges(n, [&](int, std::size_t b, std::size_t e) {
      std::memcpy(out + b, work_.data() + b, (e - b) * sizeof(Cplx));
    });
  }
  void inverse(Cplx* in, Real* out) {
    const std::size_t n = std::size_t(slab_.cols) * std::size_t(ny_);
    this->parallel_ranges(n, [&](int, std::size_t b, std::size_t e) {
      std::memcpy(work_.data() + b, in + b, (e - b) * sizeof(Cplx));
    });
    Real* w = reinterpret_cast<Real*>(work_.data());
    F::exec_c2r(inverse_, reinterpret_cast<typename F::complex*>(work_.data()), w);
    const std::size_t nx = std::size_t(nx_), pitch = 2 * std::size_t(nxh_);
    this->parallel_ranges(std::size_t(slab_.rows), [&](int, std::size_t b, std::size_t e) {
      for (std::size_t r = b; r < e; ++r) std::memcpy(out + r * nx, w + r * pitch, nx * sizeof(Real));
    });
  }

  // ---- reductions: this rank's part (CpuLoops), then every rank's, combined in rank order
  template <class Fn>
  Real for_each_max(std::size_t n, const Fn& f) const {
    const double mine = double(CpuLoops<Real>::for_each_max(n, f));
    std::vector<double> all(std::size_t(parallel::size()));
    parallel::allgather(&mine, sizeof(double), all.data());
    const MaxOp<double> op;
    double result = MaxOp<double>::identity();
    for (double v : all) result = op(result, v);  // NaN anywhere is NaN everywhere
    return Real(result);
  }
  template <class Fn>
  void for_each_max_async(std::size_t n, const Fn& f) {
    this->max_ = for_each_max(n, f);
  }
  template <class Fn>
  auto transform_sum(std::size_t n, const Fn& f) const -> decltype(f(std::size_t(0))) {
    using R = decltype(f(std::size_t(0)));
    const R mine = CpuLoops<Real>::transform_sum(n, f);
    std::vector<R> all(std::size_t(parallel::size()));
    parallel::allgather(&mine, sizeof(R), all.data());
    R result{};
    for (const R& p : all) result = result + p;
    return result;
  }
  template <class Fn>
  void histogram4(std::size_t n, const Fn& f, int bins, std::vector<double> (&out)[4]) const {
    CpuLoops<Real>::histogram4(n, f, bins, out);
    for (auto& h : out) parallel::sum_in_rank_order(h.data(), bins);
  }
  //! Each rank accumulates the budget of its modes (sum_into_budget); reading adds them up.
  void budget_integrals(double* out) const {
    CpuLoops<Real>::budget_integrals(out);
    parallel::sum_in_rank_order(out, 6);
  }
  //! Setting (a restart) puts the integrals on rank 0 and zeros elsewhere: the sum is `in`.
  void set_budget_integrals(const double* in) {
    const double zero[6] = {0, 0, 0, 0, 0, 0};
    CpuLoops<Real>::set_budget_integrals(parallel::root() ? in : zero);
  }

 private:
  int nx_, ny_, nxh_;
  Slab slab_;
  Buffer<Cplx> work_;  //!< FFTW's local array: padded rows in, transposed columns out
  std::string planning_;
  typename F::plan forward_ = nullptr;
  typename F::plan inverse_ = nullptr;
};

}  // namespace
}  // namespace cpu
#endif  // CASCADE_HAVE_FFTW_MPI

template <class Real>
std::unique_ptr<Backend<Real>> make_mpi_cpu_backend(const Grid& grid, int threads, FftPlanning planning) {
#if defined(CASCADE_HAVE_FFTW_MPI)
  return std::make_unique<BackendImpl<Real, cpu::MpiCpuExec<Real>>>(grid, threads, planning);
#else
  (void)grid;
  (void)threads;
  (void)planning;
  throw InputError("run.backend: cpu over MPI needs FFTW's MPI library, which this cascade was built without "
                   "(install libfftw3-mpi-dev and rebuild)");
#endif
}

template std::unique_ptr<Backend<float>> make_mpi_cpu_backend<float>(const Grid&, int, FftPlanning);
template std::unique_ptr<Backend<double>> make_mpi_cpu_backend<double>(const Grid&, int, FftPlanning);

}  // namespace cascade
