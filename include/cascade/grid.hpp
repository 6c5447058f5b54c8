//! @file The doubly periodic grid: sizes, spacing, spectral shape and wavenumbers.
//!
//! Physical arrays are ny x nx, row-major with y the slow index: a[j*nx + i] at
//! (x_i, y_j) = (i lx/nx, j ly/ny). Spectral arrays (real-to-complex) are ny x (nx/2+1):
//! column i holds kx = 2 pi i / lx (i = 0..nx/2), row j holds ky = 2 pi n / ly with
//! n = j for j <= ny/2 and n = j - ny above.
#pragma once

#include <cstddef>

namespace cascade {

enum class Dealias { TwoThirds, None };

struct Grid {
  int nx = 0;
  int ny = 0;
  double lx = 0;
  double ly = 0;
  Dealias dealias = Dealias::TwoThirds;

  Grid() = default;
  Grid(int nx_, int ny_, double lx_, double ly_, Dealias d = Dealias::TwoThirds);

  int nxh() const { return nx / 2 + 1; }                         //!< spectral columns
  std::size_t size() const { return std::size_t(nx) * ny; }      //!< physical points
  std::size_t spectral_size() const { return std::size_t(nxh()) * ny; }
  double dx() const { return lx / nx; }
  double dy() const { return ly / ny; }
  double x(int i) const { return i * dx(); }
  double y(int j) const { return j * dy(); }
  int mode_x(int i) const { return i; }                          //!< integer wavenumber m
  int mode_y(int j) const { return j <= ny / 2 ? j : j - ny; }   //!< integer wavenumber n
  double kx(int i) const;
  double ky(int j) const;
};

}  // namespace cascade
