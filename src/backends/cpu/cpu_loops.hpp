//! @file What the CPU executors share (CpuLoops): buffers from fftw_malloc and the OpenMP loops
//! over the kernels/ functors with their reductions. Private to src/backends/cpu.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "backends/backend_impl.hpp"
#include "backends/cpu/fftw_plans.hpp"
#include "kernels/reduction_ops.cuh"

namespace cascade {
namespace cpu {

//! What the CPU executors share: buffers from fftw_malloc, and the OpenMP loops over the
//! functors with their reductions. CpuExec adds the transforms of a whole grid; MpiCpuExec
//! (mpi_slabs.cpp, with FFTW's MPI transforms) those of a slab, and reductions across the ranks.
template <class Real>
class CpuLoops {
  using F = Fftw<Real>;
  using Cplx = Complex<Real>;

 public:
  static constexpr BackendKind kKind = BackendKind::Cpu;
  static constexpr bool kCanFuse = false;   //!< no GPU transforms with the step's work folded in
  static constexpr bool kRowFused = false;  //!< CpuExec: the evaluation row by row (prepare_rows)
  static constexpr bool kCanGraph = false;  //!< the step is chosen and launched from the host

  //! run.threads beyond the cores available are not started (threads would only contend).
  //! `members`: the fields of an ensemble each buffer holds (the budget sums go member by member).
  CpuLoops(const Grid& grid, int threads, int members = 1)
      : threads_(threads > 0 ? std::min(threads, cpu_cores_available()) : auto_threads(grid)),
        members_(members),
        budget_(6 * std::size_t(members), 0.0) {}

  //! run.threads = 0: one thread per 16384 points, up to OpenMP's maximum (capped at the
  //! cores, cap_openmp_threads). Small grids run on one thread: their loops take
  //! microseconds, and spinning threads would only contend (worst when several runs or tests
  //! share the cores).
  static int auto_threads(const Grid& grid) {
    const std::size_t by_size = std::max<std::size_t>(1, grid.size() / 16384);
    const int most = std::min(omp_get_max_threads(), cpu_cores_available());
    return static_cast<int>(std::min<std::size_t>(by_size, std::size_t(std::max(1, most))));
  }

  template <class T>
  Buffer<T> alloc(std::size_t n) const {
    void* p = F::malloc(n * sizeof(T) + 1);  // +1: a valid pointer for n = 0
    if (!p) throw RunError("out of host memory allocating " + std::to_string(n * sizeof(T)) + " bytes");
    // Zeroed by the threads that will work on each part (the loops below split the same way):
    // the first write places a page in the memory of the socket that makes it.
    char* bytes = static_cast<char*>(p);
    parallel_ranges(n, [&](int, std::size_t begin, std::size_t end) {
      std::memset(bytes + begin * sizeof(T), 0, (end - begin) * sizeof(T));
    });
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

  // The loops. Each thread takes one contiguous share of the indices (parallel_ranges) and
  // runs a loop of its own over it (the *_range functions). Those are [[gnu::flatten]], so the
  // functor is inlined into the loop (GCC otherwise leaves the large ones, FusedStage above
  // all, as a call per index), and work on a local copy of it, so that its fields stay in
  // registers and its loop-invariant branches (advective, last, forcing, ...) are decided once:
  // through a reference, every store into a Real array might alias one of the functor's Real
  // fields and forces a reload. Neither changes a result: the operations and their order are
  // the functor's (and the build has no FMA, -mfma, that inlining could contract into).

  template <class Fn>
  void for_each(std::size_t n, const Fn& f) const {
    parallel_ranges(n, [&](int, std::size_t begin, std::size_t end) { apply_range(f, begin, end); });
  }

  //! As for_each_max, the result kept for max_result() (the GPU's asynchronous form).
  template <class Fn>
  void for_each_max_async(std::size_t n, const Fn& f) {
    max_ = for_each_max(n, f);
  }
  Real max_result() const { return max_; }

  //! Apply f to every index and return the NaN-propagating maximum of what it returns.
  template <class Fn>
  Real for_each_max(std::size_t n, const Fn& f) const {
    const MaxOp<Real> op;
    std::vector<Real> partial(threads_, MaxOp<Real>::identity());
    parallel_ranges(n, [&](int t, std::size_t begin, std::size_t end) { partial[t] = max_range(f, begin, end); });
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
    parallel_ranges(n, [&](int t, std::size_t begin, std::size_t end) { partial[t] = sum_range(f, begin, end); });
    R result{};
    for (const R& p : partial) result = result + p;
    return result;
  }

  //! Apply f to every index and add the weighted budget rates it returns (SpectralSums) to the
  //! budget integrals, each member's to its own (its field's indices summed as a single
  //! run's are).
  template <class Fn>
  void sum_into_budget(std::size_t n, const Fn& f, const BudgetWeights& w) {
    if (members_ == 1) return accumulate_budget(budget_.data(), transform_sum(n, f), w);
    const std::size_t per = n / std::size_t(members_);
    for (int m = 0; m < members_; ++m) {
      const std::size_t first = std::size_t(m) * per;
      accumulate_budget(budget_.data() + 6 * std::size_t(m),
                        transform_sum(per, [f, first](std::size_t idx) { return f(first + idx); }), w);
    }
  }
  void budget_integrals(double* out) const { std::copy(budget_.begin(), budget_.end(), out); }
  void set_budget_integrals(const double* in) { std::copy(in, in + budget_.size(), budget_.begin()); }

  //! Bin f(idx) = {bin, v[4]} into four histograms of `bins` values (bins < 0 or >= bins are
  //! dropped); per-thread bins combined in thread order (deterministic).
  template <class Fn>
  void histogram4(std::size_t n, const Fn& f, int bins, std::vector<double> (&out)[4]) const {
    std::vector<std::vector<double>> part(threads_, std::vector<double>(4 * std::size_t(bins), 0.0));
    parallel_ranges(n, [&](int t, std::size_t begin, std::size_t end) {
      bin_range(f, bins, part[t].data(), begin, end);
    });
    for (int q = 0; q < 4; ++q) {
      out[q].assign(bins, 0.0);
      for (int t = 0; t < threads_; ++t)
        for (int k = 0; k < bins; ++k) out[q][k] += part[t][std::size_t(q) * bins + k];
    }
  }

 protected:
  //! body(t, begin, end) on each thread t of the team, over its share of n items: OpenMP's
  //! static schedule as GCC and libgomp split it (the first n % T threads take one more item),
  //! so that the partial results combine exactly as `#pragma omp for schedule(static)`'s did.
  //! One thread runs it in place, without a parallel region.
  template <class Body>
  void parallel_ranges(std::size_t n, const Body& body) const {
#pragma omp parallel num_threads(threads_) if (threads_ > 1)
    {
      const int t = omp_get_thread_num();
      const std::size_t nt = std::size_t(omp_get_num_threads());
      std::size_t q = n / nt, r = n % nt;
      if (std::size_t(t) < r) {
        ++q;
        r = 0;
      }
      const std::size_t begin = q * std::size_t(t) + r;
      body(t, begin, begin + q);
    }
  }

  template <class Fn>
  [[gnu::flatten]] static void apply_range(const Fn& f_in, std::size_t begin, std::size_t end) {
    const Fn f = f_in;
    for (std::size_t idx = begin; idx < end; ++idx) f(idx);
  }
  template <class Fn>
  [[gnu::flatten]] static Real max_range(const Fn& f_in, std::size_t begin, std::size_t end) {
    const Fn f = f_in;
    const MaxOp<Real> op;
    Real acc = MaxOp<Real>::identity();
    for (std::size_t idx = begin; idx < end; ++idx) acc = op(acc, f(idx));
    return acc;
  }
  template <class Fn>
  [[gnu::flatten]] static auto sum_range(const Fn& f_in, std::size_t begin, std::size_t end)
      -> decltype(f_in(std::size_t(0))) {
    const Fn f = f_in;
    decltype(f(std::size_t(0))) acc{};
    for (std::size_t idx = begin; idx < end; ++idx) acc = acc + f(idx);
    return acc;
  }
  template <class Fn>
  [[gnu::flatten]] static void bin_range(const Fn& f_in, int bins, double* mine, std::size_t begin, std::size_t end) {
    const Fn f = f_in;
    for (std::size_t idx = begin; idx < end; ++idx) {
      const auto c = f(idx);
      if (c.bin >= 0 && c.bin < bins)
        for (int q = 0; q < 4; ++q) mine[std::size_t(q) * bins + c.bin] += c.v[q];
    }
  }

  int threads_;
  int members_ = 1;
  std::vector<double> budget_;  //!< six integrals a member
  Real max_ = 0;  //!< for_each_max_async's result
};

}  // namespace cpu
}  // namespace cascade
