//! @file Test parameterisation: every case on each backend and both precisions.
//! CUDA cases skip themselves, with the reason, where no CUDA device is usable.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cascade/backend.hpp"

namespace cascade::test {

struct BackendCase {
  BackendKind kind;
  Precision precision;
};

inline std::vector<BackendCase> all_backend_cases() {
  return {{BackendKind::Cpu, Precision::Double},
          {BackendKind::Cpu, Precision::Single},
          {BackendKind::Cuda, Precision::Double},
          {BackendKind::Cuda, Precision::Single}};
}

inline std::string case_name(const testing::TestParamInfo<BackendCase>& info) {
  return std::string(to_string(info.param.kind)) + "_" + to_string(info.param.precision);
}

//! Calls fn(Real{}) with Real = float or double.
template <class Fn>
void with_precision(Precision p, Fn&& fn) {
  if (p == Precision::Single) fn(float{});
  else fn(double{});
}

}  // namespace cascade::test

//! At the top of a test body: skip CUDA cases where CUDA cannot run, saying why.
#define CASCADE_SKIP_IF_UNAVAILABLE(kind_)                                   \
  do {                                                                       \
    if ((kind_) == ::cascade::BackendKind::Cuda) {                           \
      const std::string why_ = ::cascade::cuda_unavailable_reason();        \
      if (!why_.empty()) GTEST_SKIP() << "CUDA backend unavailable: " << why_; \
    }                                                                        \
  } while (0)
