//! @file FFTW for the CPU executors (backend_cpu.cpp, mpi_slabs.cpp): the precision traits, the
//! planner lock, and planning through the wisdom file (fftw_plans.cpp). Private to src/backends/cpu.
#pragma once
#include <fftw3.h>

#include <cstddef>
#include <functional>
#include <mutex>
#include <string>

#include "cascade/error.hpp"

namespace cascade {
namespace cpu {

// FFTW's planner is not thread-safe; every plan is made and destroyed under this lock.
std::mutex& planner_mutex();

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
  //! `howmany` 2D transforms of fields one after the other (the members of an ensemble).
  static plan r2c_many(int n0, int n1, int howmany, double* in, complex* out, unsigned flags) {
    const int n[2] = {n0, n1};
    return fftw_plan_many_dft_r2c(2, n, howmany, in, nullptr, 1, n0 * n1, out, nullptr, 1, n0 * (n1 / 2 + 1), flags);
  }
  static plan c2r_many(int n0, int n1, int howmany, complex* in, double* out, unsigned flags) {
    const int n[2] = {n0, n1};
    return fftw_plan_many_dft_c2r(2, n, howmany, in, nullptr, 1, n0 * (n1 / 2 + 1), out, nullptr, 1, n0 * n1, flags);
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
  //! `howmany` 2D transforms of fields one after the other (the members of an ensemble).
  static plan r2c_many(int n0, int n1, int howmany, float* in, complex* out, unsigned flags) {
    const int n[2] = {n0, n1};
    return fftwf_plan_many_dft_r2c(2, n, howmany, in, nullptr, 1, n0 * n1, out, nullptr, 1, n0 * (n1 / 2 + 1), flags);
  }
  static plan c2r_many(int n0, int n1, int howmany, complex* in, float* out, unsigned flags) {
    const int n[2] = {n0, n1};
    return fftwf_plan_many_dft_c2r(2, n, howmany, in, nullptr, 1, n0 * (n1 / 2 + 1), out, nullptr, 1, n0 * n1, flags);
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
inline constexpr std::size_t kMeasureFromPoints = std::size_t(512) * 512;

//! Make a set of plans with the run's planning, under the planner lock: `make(flags)` makes
//! them all with those FFTW flags (FFTW_ESTIMATE or FFTW_MEASURE) and returns whether every
//! one was made; `drop()` destroys those made. Measured plans go through the wisdom file (the
//! comment above). `outcome` says how (for the backend's description).
template <class Real>
void plan_set(bool measure, const std::function<bool(unsigned)>& make, const std::function<void()>& drop,
              std::string& outcome);

}  // namespace cpu
}  // namespace cascade
