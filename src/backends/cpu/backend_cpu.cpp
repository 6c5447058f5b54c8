//! @file CPU backend: FFTW (threaded) transforms and OpenMP loops over the kernels/ functors.
#include <fcntl.h>
#include <fftw3.h>
#if defined(CASCADE_HAVE_FFTW_MPI)
#include <fftw3-mpi.h>
#include <mpi.h>
#endif
#include <fmt/format.h>
#include <omp.h>
#include <sched.h>
#include <sys/file.h>
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

#include "backends/backend_impl.hpp"
#include "cascade/parallel.hpp"
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
  static plan r2c_1d(int n, double* in, complex* out, unsigned flags) { return fftw_plan_dft_r2c_1d(n, in, out, flags); }
  static plan c2r_1d(int n, complex* in, double* out, unsigned flags) { return fftw_plan_dft_c2r_1d(n, in, out, flags); }
  //! `howmany` in-place transforms of length n, elements `stride` apart, transforms `dist` apart.
  static plan c2c_many(int n, int howmany, complex* data, int stride, int dist, int sign, unsigned flags) {
    return fftw_plan_many_dft(1, &n, howmany, data, nullptr, stride, dist, data, nullptr, stride, dist, sign, flags);
  }
  static void exec_r2c(plan p, double* in, complex* out) { fftw_execute_dft_r2c(p, in, out); }
  static void exec_c2r(plan p, complex* in, double* out) { fftw_execute_dft_c2r(p, in, out); }
  static void exec_c2c(plan p, complex* data) { fftw_execute_dft(p, data, data); }
  static void destroy(plan p) { fftw_destroy_plan(p); }
  static bool import_wisdom(const std::string& text) { return fftw_import_wisdom_from_string(text.c_str()) != 0; }
  static char* export_wisdom() { return fftw_export_wisdom_to_string(); }
  static void forget_wisdom() { fftw_forget_wisdom(); }
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
  static plan r2c_1d(int n, float* in, complex* out, unsigned flags) { return fftwf_plan_dft_r2c_1d(n, in, out, flags); }
  static plan c2r_1d(int n, complex* in, float* out, unsigned flags) { return fftwf_plan_dft_c2r_1d(n, in, out, flags); }
  static plan c2c_many(int n, int howmany, complex* data, int stride, int dist, int sign, unsigned flags) {
    return fftwf_plan_many_dft(1, &n, howmany, data, nullptr, stride, dist, data, nullptr, stride, dist, sign, flags);
  }
  static void exec_r2c(plan p, float* in, complex* out) { fftwf_execute_dft_r2c(p, in, out); }
  static void exec_c2r(plan p, complex* in, float* out) { fftwf_execute_dft_c2r(p, in, out); }
  static void exec_c2c(plan p, complex* data) { fftwf_execute_dft(p, data, data); }
  static void destroy(plan p) { fftwf_destroy_plan(p); }
  static bool import_wisdom(const std::string& text) { return fftwf_import_wisdom_from_string(text.c_str()) != 0; }
  static char* export_wisdom() { return fftwf_export_wisdom_to_string(); }
  static void forget_wisdom() { fftwf_forget_wisdom(); }
};

// ---------------------------------------------------------------- planning and wisdom
//
// FFTW_MEASURE times candidate plans on this machine: at 1024^2 and up they run 20-50% faster
// than FFTW_ESTIMATE's, but the choice depends on the timings, so two runs (a run and its
// restart) could pick different plans and differ in the last bits. Wisdom fixes the choice:
// a measured plan is recorded in a file and every later run on the machine reuses it (and
// skips the measuring). The file holds one precision (fftw_ and fftwf_ wisdom do not mix);
// thread counts share it, since FFTW's wisdom keys include the planner's thread count.

//! run.fft_planning: auto measures from this many points (512^2) on: there a step costs tens
//! of milliseconds and the planning (under a second at 1024^2, paid once per machine with the
//! wisdom) is repaid within a few hundred steps. Smaller grids keep ESTIMATE's instant, fixed
//! plans: the test suite's many small runs and the quick-start run read and write no file.
constexpr std::size_t kMeasureFromPoints = std::size_t(512) * 512;

//! The directory of the running executable ("" where /proc/self/exe cannot be read).
std::string executable_directory() {
  std::string buf(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", &buf[0], buf.size());
  if (n <= 0 || std::size_t(n) >= buf.size()) return "";
  buf.resize(std::size_t(n));
  const auto slash = buf.rfind('/');
  return slash == std::string::npos ? "" : buf.substr(0, slash == 0 ? 1 : slash);
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

//! Read a whole (small) file; false with `why` if it is missing (`missing` set) or unreadable.
bool read_small_file(const std::string& path, std::string& text, std::string& why, bool& missing) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  missing = !in && errno == ENOENT;
  if (!in) {
    why = errno ? std::strerror(errno) : "cannot open";
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  text = s.str();
  if (text.size() > (std::size_t(16) << 20)) {  // wisdom is a few kB; this is something else
    why = "larger than 16 MiB";
    return false;
  }
  return true;
}

//! Write text to path through a temporary file beside it, flushed to disk and renamed over
//! it, so that a reader (another run) sees the old file or the new one, never a torn one.
//! Returns "" on success, else why not (the temporary file is removed).
std::string write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(long(::getpid()));
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return std::string("cannot write ") + tmp + ": " + std::strerror(errno);
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fflush(f) == 0 && ok;
  ok = ::fsync(::fileno(f)) == 0 && ok;
  ok = std::fclose(f) == 0 && ok;
  if (ok && std::rename(tmp.c_str(), path.c_str()) == 0) return "";
  const std::string why = std::strerror(errno);
  std::remove(tmp.c_str());
  return "cannot write " + path + ": " + why;
}

//! An advisory lock on `fftw-wisdom.lock` in the wisdom's directory, held while measuring:
//! runs started together on one machine then measure one after another, so that they do not
//! time their candidates against each other, and the later ones find the first one's wisdom
//! and use the same plans. Best effort: where the lock file cannot be made or locked
//! (read-only directory, a file system without flock), or another run holds it for more than
//! ten minutes, planning goes on without it.
class WisdomLock {
 public:
  explicit WisdomLock(const std::string& wisdom_path) {
    if (wisdom_path.empty()) return;
    fd_ = ::open((directory_of(wisdom_path) + "/fftw-wisdom.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd_ < 0) return;
    const auto t0 = std::chrono::steady_clock::now();
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      waited_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if ((errno != EWOULDBLOCK && errno != EINTR) || waited_ > 600) {
        ::close(fd_);
        fd_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~WisdomLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  WisdomLock(const WisdomLock&) = delete;
  WisdomLock& operator=(const WisdomLock&) = delete;
  //! Seconds spent waiting for another run's planning (0 if none).
  double waited() const { return waited_; }

 private:
  int fd_ = -1;
  double waited_ = 0;
};

template <class Real>
std::string wisdom_string() {
  char* s = Fftw<Real>::export_wisdom();
  std::string text = s ? s : "";
  std::free(s);  // FFTW allocates it with malloc
  return text;
}

//! The wisdom this process has planned with, per precision: reimported before each measured
//! planning, ahead of the file's (FFTW keeps the first entry it has for a problem), so that a
//! process plans a size the same way every time even if another run rewrote the file since.
//! FFTW's own wisdom is forgotten after each planning, so that estimated plans never pick up
//! measured ones and stay the same everywhere.
template <class Real>
std::string& process_wisdom() {
  static std::string text;
  return text;
}

//! Make a set of plans with the run's planning, under the planner lock: `make(flags)` makes
//! them all with those FFTW flags (FFTW_ESTIMATE or FFTW_MEASURE) and returns whether every
//! one was made; `drop()` destroys those made. Measured plans go through the wisdom file (the
//! comment above). `outcome` says how (for the backend's description).
template <class Real>
void plan_set(bool measure, const std::function<bool(unsigned)>& make, const std::function<void()>& drop,
              std::string& outcome) {
  using F = Fftw<Real>;
  F::forget_wisdom();
  if (!measure) {
    make(FFTW_ESTIMATE);
    F::forget_wisdom();
    outcome = "estimated plans";
    return;
  }
  const std::string path = fftw_wisdom_file(precision_of<Real>());
  const WisdomLock lock(path);
  std::string note;
  if (!process_wisdom<Real>().empty()) F::import_wisdom(process_wisdom<Real>());
  bool file_ok = false;
  if (!path.empty()) {
    std::string text, why;
    bool missing = false;
    if (!read_small_file(path, text, why, missing)) {
      if (!missing) note = "wisdom " + path + " unreadable (" + why + ")";
    } else if (!(file_ok = F::import_wisdom(text))) {
      // FFTW leaves its wisdom as it was when an import fails; the file is rewritten below.
      note = "wisdom " + path + " was not FFTW " + fftw_version + " " + to_string(precision_of<Real>()) +
             " wisdom: replaced";
    }
  }
  const std::string before = wisdom_string<Real>();
  const auto t0 = std::chrono::steady_clock::now();
  // FFTW_MEASURE runs its candidates on the arrays and overwrites them: `make` plans on scratch.
  const bool made = make(FFTW_MEASURE);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!made) {
    // FFTW replans by itself around inconsistent wisdom; this is the last resort.
    drop();
    F::forget_wisdom();
    make(FFTW_ESTIMATE);
    F::forget_wisdom();
    outcome = "estimated plans (measuring failed)";
    return;
  }
  const std::string after = wisdom_string<Real>();
  process_wisdom<Real>() = after;
  F::forget_wisdom();
  const bool measured = after != before;
  outcome = measured ? fmt::format("plans measured in {:.1f} s", seconds) : "measured plans from wisdom";
  if (lock.waited() >= 1) outcome += fmt::format(" after {:.0f} s waiting for another run's planning", lock.waited());
  if (path.empty()) {
    outcome += ", no wisdom file (CASCADE_FFTW_WISDOM is empty)";
  } else if (measured || !file_ok) {
    const std::string why = write_atomically(path, after);
    outcome += why.empty() ? ", wisdom saved to " + path : "; wisdom not saved: " + why;
  } else {
    outcome += " " + path;
  }
  if (!note.empty()) outcome += "; " + note;
}

//! The forward and inverse plans of one grid: what CpuExec's constructor makes, under the
//! planner lock.
template <class Real>
void make_plans(const Grid& grid, int threads, bool measure, Real* r, typename Fftw<Real>::complex* c,
                typename Fftw<Real>::plan& forward, typename Fftw<Real>::plan& inverse, std::string& outcome) {
  using F = Fftw<Real>;
  F::threads(threads);
  plan_set<Real>(
      measure,
      [&](unsigned flags) {
        forward = F::r2c(grid.ny, grid.nx, r, c, flags);
        inverse = F::c2r(grid.ny, grid.nx, c, r, flags);
        return forward && inverse;
      },
      [&] {
        if (forward) F::destroy(forward);
        if (inverse) F::destroy(inverse);
        forward = inverse = nullptr;
      },
      outcome);
}

//! What the CPU executors share: buffers from fftw_malloc, and the OpenMP loops over the
//! functors with their reductions. CpuExec adds the transforms of a whole grid; MpiCpuExec
//! (below, with FFTW's MPI transforms) those of a slab, and reductions across the ranks.
template <class Real>
class CpuLoops {
  using F = Fftw<Real>;
  using Cplx = Complex<Real>;

 public:
  static constexpr BackendKind kKind = BackendKind::Cpu;
  static constexpr bool kCanFuse = false;   //!< no GPU transforms with the step's work folded in
  static constexpr bool kRowFused = false;  //!< CpuExec: the evaluation row by row (prepare_rows)

  //! run.threads beyond the cores available are not started (threads would only contend).
  CpuLoops(const Grid& grid, int threads)
      : threads_(threads > 0 ? std::min(threads, cpu_cores_available()) : auto_threads(grid)) {}

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
  //! budget integrals.
  template <class Fn>
  void sum_into_budget(std::size_t n, const Fn& f, const BudgetWeights& w) {
    accumulate_budget(budget_, transform_sum(n, f), w);
  }
  void budget_integrals(double (&out)[6]) const { std::copy(budget_, budget_ + 6, out); }
  void set_budget_integrals(const double (&in)[6]) { std::copy(in, in + 6, budget_); }

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
  double budget_[6] = {0, 0, 0, 0, 0, 0};
  Real max_ = 0;  //!< for_each_max_async's result
};

//! The executor of the CPU backend: a whole grid, FFTW's threaded 2D transforms.
template <class Real>
class CpuExec : public CpuLoops<Real> {
  using F = Fftw<Real>;
  using Cplx = Complex<Real>;

 public:
  CpuExec(const Grid& grid, int threads, FftPlanning planning = FftPlanning::Estimate)
      : CpuLoops<Real>(grid, threads),
        measure_(planning == FftPlanning::Measure ||
                 (planning == FftPlanning::Auto && grid.size() >= kMeasureFromPoints)),
        whole_(Slab::whole(grid)),
        nx_(grid.nx),
        ny_(grid.ny) {
    F::init_threads();
    // Plan on scratch arrays (FFTW_MEASURE overwrites them); every buffer comes from
    // fftw_malloc, so the new-array execute functions see the same alignment.
    Buffer<Real> r = this->template alloc<Real>(grid.size());
    Buffer<Cplx> c = this->template alloc<Cplx>(grid.spectral_size());
    std::lock_guard<std::mutex> lock(planner_mutex());
    make_plans<Real>(grid, this->threads_, measure_, r.data(), reinterpret_cast<typename F::complex*>(c.data()), forward_,
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
    const int kept_columns = (nx - 1) / 3 + 1;  // kx with 3 kx < nx (DealiasMask)
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

#if defined(CASCADE_HAVE_FFTW_MPI)
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
  void budget_integrals(double (&out)[6]) const {
    CpuLoops<Real>::budget_integrals(out);
    parallel::sum_in_rank_order(out, 6);
  }
  //! Setting (a restart) puts the integrals on rank 0 and zeros elsewhere: the sum is `in`.
  void set_budget_integrals(const double (&in)[6]) {
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
#endif  // CASCADE_HAVE_FFTW_MPI

}  // namespace

std::string fftw_wisdom_file(Precision precision) {
  std::string dir;
  if (const char* env = std::getenv("CASCADE_FFTW_WISDOM")) {
    dir = env;
    if (dir.empty() || dir == "none") return "";
  } else {
    dir = executable_directory();
    if (dir.empty()) return "";
  }
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + "/fftw-wisdom-" + to_string(precision);
}

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
std::unique_ptr<Backend<Real>> make_cpu_backend(const Grid& grid, int threads, FftPlanning planning) {
  return std::make_unique<BackendImpl<Real, CpuExec<Real>>>(grid, threads, planning);
}

template std::unique_ptr<Backend<float>> make_cpu_backend<float>(const Grid&, int, FftPlanning);
template std::unique_ptr<Backend<double>> make_cpu_backend<double>(const Grid&, int, FftPlanning);

template <class Real>
std::unique_ptr<Backend<Real>> make_mpi_cpu_backend(const Grid& grid, int threads, FftPlanning planning) {
#if defined(CASCADE_HAVE_FFTW_MPI)
  return std::make_unique<BackendImpl<Real, MpiCpuExec<Real>>>(grid, threads, planning);
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
