//! @file Per-point operations on physical fields, written once as CASCADE_HD functors.
//!
//! Each functor is called with the flat index idx = j*nx + i of one grid point (rows counted
//! from the first row of its slab, PhysicalShape::j0).
#pragma once

#include <cmath>
#include <cstddef>

#include "cascade/types.hpp"

namespace cascade {

//! Geometry of the physical grid: x_i = i dx, y_j = j dy.
template <class Real>
struct PhysicalShape {
  int nx;
  int ny;
  Real dx;
  Real dy;
  double inv_nx;  //!< 1 / nx (see SpectralShape::mode)
  int j0 = 0;     //!< the first row of a slab (cascade::Slab); 0 for a whole grid
  double inv_ny = 0;  //!< 1 / ny: the rows of the members past the first (whole grids alone)
  CASCADE_HD void point(std::size_t idx, int& i, int& j) const {
    std::size_t row = static_cast<std::size_t>(double(idx) * inv_nx);
    if (row * std::size_t(nx) > idx) --row;
    else if ((row + 1) * std::size_t(nx) <= idx) ++row;
    i = static_cast<int>(idx - row * std::size_t(nx));
    if (j0 == 0 && row >= std::size_t(ny)) {  // member m's field: rows m ny ..
      std::size_t m = static_cast<std::size_t>(double(row) * inv_ny);
      if (m * std::size_t(ny) > row) --m;
      else if ((m + 1) * std::size_t(ny) <= row) ++m;
      row -= m * std::size_t(ny);
    }
    j = j0 + static_cast<int>(row);
  }
};

//! a += c
template <class Real>
struct AddConstant {
  Real c;
  Real* a;
  CASCADE_HD void operator()(std::size_t idx) const { a[idx] += c; }
};

}  // namespace cascade
