//! @file Helpers of the solver's tests (test_solver.cpp, test_step_paths.cpp): a deck from YAML
//! text and the relative L2 distance of two fields.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "cascade/config.hpp"

namespace cascade::test {

inline Config deck(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  return parse_deck(yaml, "test-deck", sets);
}

template <class Real>
double rel_l2(const std::vector<Real>& a, const std::vector<Real>& b) {
  double num = 0, den = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    num += (double(a[k]) - double(b[k])) * (double(a[k]) - double(b[k]));
    den += double(b[k]) * double(b[k]);
  }
  return std::sqrt(num / den);
}

}  // namespace cascade::test
