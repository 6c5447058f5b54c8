//! @file Error types mapped to exit codes, and checks for FFTW and HDF5 calls.
//!
//! InputError: bad deck, bad command line, missing file -> exit code 2.
//! RunError:   the run itself failed (library error, blow-up, I/O failure) -> exit code 1.
//! CUDA and cuFFT checks live in src/backends/cuda/cuda_check.hpp so that include/ holds no CUDA types.
#pragma once

#include <stdexcept>
#include <string>

namespace cascade {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

//! Length of the UTF-8 sequence that starts at s[i], or 0 where the bytes there are not UTF-8.
std::size_t utf8_length(const std::string& s, std::size_t i);
bool is_utf8(const std::string& s);
//! Text from outside (a value, a key, a file name) made printable on one line: control
//! characters and bytes that are not UTF-8 are shown escaped (\n, \t, \xff).
std::string escaped(const std::string& text);
//! A message as one printable line (escaped), a very long one cut after `most` characters.
//! Every message that reaches stderr passes through it (src/app/main.cpp), whatever put the
//! characters there.
std::string one_line(const std::string& text, std::size_t most = 1000);

[[noreturn]] void fail_call(const char* library, const char* call, const std::string& detail,
                            const char* file, int line);

}  // namespace cascade

//! FFTW planners return a null plan on failure.
#define CASCADE_CHECK_FFTW_PLAN(plan_expr)                                                 \
  do {                                                                                     \
    if (!(plan_expr)) ::cascade::fail_call("FFTW", #plan_expr, "planner returned null", \
                                           __FILE__, __LINE__);                            \
  } while (0)

//! HDF5 C calls return a negative value on failure.
#define CASCADE_CHECK_HDF5(call)                                                             \
  ([&]() {                                                                                   \
    auto cascade_hdf5_rc_ = (call);                                                          \
    if (cascade_hdf5_rc_ < 0)                                                                \
      ::cascade::fail_call("HDF5", #call, "returned a negative status", __FILE__, __LINE__); \
    return cascade_hdf5_rc_;                                                                 \
  }())
