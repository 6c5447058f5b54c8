//! @file CPU backend: FFTW (threaded) transforms and OpenMP loops over the kernels/ functors.
#include <fftw3.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

#include <vector>

#include "backend_impl.hpp"
#include "kernels/reduction_ops.cuh"

namespace cascade {
namespace {

// FFTW's planner is not thread-safe; every plan is made and destroyed under this lock.
std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

template <class Real>
struct Fftw;

template <>
struct Fftw<double> {
  using plan = fftw_plan;
  using complex = fftw_complex;
  static void init_threads() {
    static std::once_flag once;
    std::call_once(once, [] {
      if (!fftw_init_threads()) fail_call("FFTW", "fftw_init_threads()", "failed", __FILE__, __LINE__);
    });
  }
  static void* malloc(std::size_t n) { return fftw_malloc(n); }
  static void free(void* p) noexcept { fftw_free(p); }
  static void threads(int n) { fftw_plan_with_nthreads(n); }
  static plan r2c(int n0, int n1, double* in, complex* out, unsigned flags) {
    return fftw_plan_dft_r2c_2d(n0, n1, in, out, flags);
  }
  static plan c2r(int n0, int n1, complex* in, double* out, unsigned flags) {
    return fftw_plan_dft_c2r_2d(n0, n1, in, out, flags);
  }
  static void exec_r2c(plan p, double* in, complex* out) { fftw_execute_dft_r2c(p, in, out); }
  static void exec_c2r(plan p, complex* in, double* out) { fftw_execute_dft_c2r(p, in, out); }
  static void destroy(plan p) { fftw_destroy_plan(p); }
};

template <>
struct Fftw<float> {
  using plan = fftwf_plan;
  using complex = fftwf_complex;
  static void init_threads() {
    static std::once_flag once;
    std::call_once(once, [] {
      if (!fftwf_init_threads()) fail_call("FFTW", "fftwf_init_threads()", "failed", __FILE__, __LINE__);
    });
  }
  static void* malloc(std::size_t n) { return fftwf_malloc(n); }
  static void free(void* p) noexcept { fftwf_free(p); }
  static void threads(int n) { fftwf_plan_with_nthreads(n); }
  static plan r2c(int n0, int n1, float* in, complex* out, unsigned flags) {
    return fftwf_plan_dft_r2c_2d(n0, n1, in, out, flags);
  }
  static plan c2r(int n0, int n1, complex* in, float* out, unsigned flags) {
    return fftwf_plan_dft_c2r_2d(n0, n1, in, out, flags);
  }
  static void exec_r2c(plan p, float* in, complex* out) { fftwf_execute_dft_r2c(p, in, out); }
  static void exec_c2r(plan p, complex* in, float* out) { fftwf_execute_dft_c2r(p, in, out); }
  static void destroy(plan p) { fftwf_destroy_plan(p); }
};

template <class Real>
class CpuExec {
  using F = Fftw<Real>;
  using Cplx = Complex<Real>;

 public:
  static constexpr BackendKind kKind = BackendKind::Cpu;

  CpuExec(const Grid& grid, int threads) : threads_(threads > 0 ? threads : auto_threads(grid)) {
    F::init_threads();
    // Plan on scratch arrays (FFTW_ESTIMATE never touches them); every buffer comes from
    // fftw_malloc, so the new-array execute functions see the same alignment.
    Buffer<Real> r = alloc<Real>(grid.size());
    Buffer<Cplx> c = alloc<Cplx>(grid.spectral_size());
    auto* cin = reinterpret_cast<typename F::complex*>(c.data());
    std::lock_guard<std::mutex> lock(planner_mutex());
    F::threads(threads_);
    forward_ = F::r2c(grid.ny, grid.nx, r.data(), cin, FFTW_ESTIMATE);
    CASCADE_CHECK_FFTW_PLAN(forward_);
    inverse_ = F::c2r(grid.ny, grid.nx, cin, r.data(), FFTW_ESTIMATE);
    CASCADE_CHECK_FFTW_PLAN(inverse_);
  }
  ~CpuExec() {
    std::lock_guard<std::mutex> lock(planner_mutex());
    if (forward_) F::destroy(forward_);
    if (inverse_) F::destroy(inverse_);
  }
  CpuExec(const CpuExec&) = delete;
  CpuExec& operator=(const CpuExec&) = delete;

  //! run.threads = 0: one thread per 16384 points, up to OpenMP's maximum. Small grids run on
  //! one thread: their loops take microseconds, and spinning threads would only contend
  //! (worst when several runs or tests share the cores).
  static int auto_threads(const Grid& grid) {
    const std::size_t by_size = std::max<std::size_t>(1, grid.size() / 16384);
    return static_cast<int>(std::min<std::size_t>(by_size, std::size_t(omp_get_max_threads())));
  }

  std::string description() const {
    return std::string("cpu (") + fftw_version + ", " + std::to_string(threads_) + (threads_ == 1 ? " thread)" : " threads)");
  }

  template <class T>
  Buffer<T> alloc(std::size_t n) const {
    void* p = F::malloc(n * sizeof(T) + 1);  // +1: a valid pointer for n = 0
    if (!p) throw RunError("out of host memory allocating " + std::to_string(n * sizeof(T)) + " bytes");
    std::memset(p, 0, n * sizeof(T));
    return Buffer<T>(static_cast<T*>(p), n, MemorySpace::Host, &F::free);
  }
  template <class T>
  void copy_to_host(const T* src, T* dst, std::size_t n) const {
    if (n) std::memcpy(dst, src, n * sizeof(T));
  }
  template <class T>
  void copy_from_host(const T* src, T* dst, std::size_t n) const {
    if (n) std::memcpy(dst, src, n * sizeof(T));
  }
  void synchronize() const {}
  void device_memory(std::size_t& used, std::size_t& total) const { used = total = 0; }
  std::size_t fft_work_bytes() const { return 0; }

  template <class Fn>
  void for_each(std::size_t n, const Fn& f) const {
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::ptrdiff_t idx = 0; idx < count; ++idx) f(static_cast<std::size_t>(idx));
  }

  //! Apply f to every index and return the NaN-propagating maximum of what it returns.
  template <class Fn>
  Real for_each_max(std::size_t n, const Fn& f) const {
    const MaxOp<Real> op;
    std::vector<Real> partial(threads_, MaxOp<Real>::identity());
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel num_threads(threads_)
    {
      Real acc = MaxOp<Real>::identity();
#pragma omp for schedule(static)
      for (std::ptrdiff_t idx = 0; idx < count; ++idx) acc = op(acc, f(static_cast<std::size_t>(idx)));
      partial[omp_get_thread_num()] = acc;
    }
    Real result = MaxOp<Real>::identity();
    for (Real p : partial) result = op(result, p);
    return result;
  }

  //! Sum of f(idx) over every index, combined in thread order (deterministic for a given
  //! thread count).
  template <class Fn>
  auto transform_sum(std::size_t n, const Fn& f) const -> decltype(f(std::size_t(0))) {
    using R = decltype(f(std::size_t(0)));
    std::vector<R> partial(threads_, R{});
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel num_threads(threads_)
    {
      R acc{};
#pragma omp for schedule(static)
      for (std::ptrdiff_t idx = 0; idx < count; ++idx) acc = acc + f(static_cast<std::size_t>(idx));
      partial[omp_get_thread_num()] = acc;
    }
    R result{};
    for (const R& p : partial) result = result + p;
    return result;
  }

  //! Bin f(idx) = {bin, v[4]} into four histograms of `bins` values (bins < 0 or >= bins are
  //! dropped); per-thread bins combined in thread order (deterministic).
  template <class Fn>
  void histogram4(std::size_t n, const Fn& f, int bins, std::vector<double> (&out)[4]) const {
    std::vector<std::vector<double>> part(threads_, std::vector<double>(4 * std::size_t(bins), 0.0));
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel num_threads(threads_)
    {
      std::vector<double>& mine = part[omp_get_thread_num()];
#pragma omp for schedule(static)
      for (std::ptrdiff_t idx = 0; idx < count; ++idx) {
        const auto c = f(static_cast<std::size_t>(idx));
        if (c.bin >= 0 && c.bin < bins)
          for (int q = 0; q < 4; ++q) mine[std::size_t(q) * bins + c.bin] += c.v[q];
      }
    }
    for (int q = 0; q < 4; ++q) {
      out[q].assign(bins, 0.0);
      for (int t = 0; t < threads_; ++t)
        for (int k = 0; k < bins; ++k) out[q][k] += part[t][std::size_t(q) * bins + k];
    }
  }

  void forward(const Real* in, Cplx* out) const {
    // r2c out of place preserves its input (FFTW's default for r2c).
    F::exec_r2c(forward_, const_cast<Real*>(in), reinterpret_cast<typename F::complex*>(out));
  }
  void inverse(Cplx* in, Real* out) const {
    F::exec_c2r(inverse_, reinterpret_cast<typename F::complex*>(in), out);
  }

 private:
  int threads_;
  typename F::plan forward_ = nullptr;
  typename F::plan inverse_ = nullptr;
};

}  // namespace

template <class Real>
std::unique_ptr<Backend<Real>> make_cpu_backend(const Grid& grid, int threads) {
  return std::make_unique<BackendImpl<Real, CpuExec<Real>>>(grid, threads);
}

template std::unique_ptr<Backend<float>> make_cpu_backend<float>(const Grid&, int);
template std::unique_ptr<Backend<double>> make_cpu_backend<double>(const Grid&, int);

}  // namespace cascade
