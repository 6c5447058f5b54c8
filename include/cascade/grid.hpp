//! @file The doubly periodic grid: sizes, spacing, spectral shape and wavenumbers.
//!
//! Physical arrays are ny x nx, row-major with y the slow index: a[j*nx + i] at
//! (x_i, y_j) = (i lx/nx, j ly/ny). Spectral arrays (real-to-complex) are ny x (nx/2+1):
//! column i holds kx = 2 pi i / lx (i = 0..nx/2), row j holds ky = 2 pi n / ly with
//! n = j for j <= ny/2 and n = j - ny above.
#pragma once

#include <algorithm>
#include <cstddef>

#include "cascade/types.hpp"

namespace cascade {

enum class Dealias { TwoThirds, None };

//! The 2/3 rule along an axis of n points (Orszag 1971), its one definition: wavenumber index
//! |m| is kept when 3 |m| < n, strictly. A product of two kept modes reaches 2K and aliases to
//! 2K - n, which must fall outside the kept band, K < n/3; where n is a multiple of 3 the mode
//! |m| = n/3 itself would alias back onto -n/3, so it goes too.
CASCADE_HD constexpr bool two_thirds_keeps(int m_abs, int n) { return 3 * m_abs < n; }
//! The largest index the 2/3 rule keeps along an axis of n points: the kept band is 0..band.
constexpr int two_thirds_band(int n) { return (n - 1) / 3; }

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
  //! Spectra are summed over shells of this width, 2 pi / max(lx, ly), centred on s dk.
  double shell_width() const;
  //! Shells from k = 0 to the largest |k| of the grid (as a double: an absurd box overflows int).
  double shell_count() const;
};

//! The part of a grid one backend holds. A single-process backend holds all of it; a
//! slab-decomposed one (MPI ranks) holds the physical rows [j0, j0 + rows), and in spectral
//! space the kx columns [i0, i0 + cols), stored transposed: a_hat[(i - i0) * ny + j] (the
//! layout of FFTW's MPI transforms with FFTW_MPI_TRANSPOSED_OUT). Functors decode their flat
//! index through SpectralShape / PhysicalShape, which carry these offsets.
//!
//! A backend may hold `members` fields of its part of the grid in every buffer (an ensemble,
//! stepped as one batch): member m's field follows member m - 1's, each in the layout above.
//! An ensemble split over MPI ranks (of_members) gives each rank whole grids of a contiguous
//! block of the run's `batch` members: its member m is the run's member first_member + m.
struct Slab {
  int j0 = 0;
  int rows = 0;
  int i0 = 0;
  int cols = 0;
  bool transposed = false;
  int members = 1;       //!< fields a buffer holds, one after the other (whole grids alone)
  int first_member = 0;  //!< the run's index of this backend's member 0
  int batch = 1;         //!< the run's members, on every rank together (members alone: not split)

  static Slab whole(const Grid& g, int members = 1) { return {0, g.ny, 0, g.nxh(), false, members, 0, members}; }
  //! Rank r's block of an ensemble of `batch` members split over `ranks` (batch >= ranks):
  //! whole grids of members [first_member, first_member + members), contiguous and in rank
  //! order, batch / ranks each and one more on the first batch % ranks ranks.
  static Slab of_members(const Grid& g, int batch, int r, int ranks) {
    const int base = batch / ranks, extra = batch % ranks;
    Slab s = whole(g, base + (r < extra ? 1 : 0));
    s.first_member = r * base + std::min(r, extra);
    s.batch = batch;
    return s;
  }
  //! Whether the run's members are split over ranks (this backend holds some of them).
  bool members_split() const { return members < batch; }
  //! Rank r's slab of `ranks`: FFTW's block distribution (blocks of ceil(n / ranks) rows and
  //! columns, the last ranks' shorter). Empty for ranks beyond the grid (see fits).
  static Slab of_rank(const Grid& g, int r, int ranks) {
    const int br = (g.ny + ranks - 1) / ranks, bc = (g.nxh() + ranks - 1) / ranks;
    const int j0 = std::min(r * br, g.ny), i0 = std::min(r * bc, g.nxh());
    return {j0, std::min(br, g.ny - j0), i0, std::min(bc, g.nxh() - i0), true};
  }
  //! Whether every one of `ranks` gets at least one row and one kx column.
  static bool fits(const Grid& g, int ranks) {
    return of_rank(g, ranks - 1, ranks).rows > 0 && of_rank(g, ranks - 1, ranks).cols > 0;
  }
  //! The values of a buffer: every member's.
  std::size_t real_count(const Grid& g) const { return std::size_t(members) * member_real_count(g); }
  std::size_t spectral_count(const Grid& g) const { return std::size_t(members) * member_spectral_count(g); }
  //! The values of one member's field.
  std::size_t member_real_count(const Grid& g) const { return std::size_t(rows) * g.nx; }
  std::size_t member_spectral_count(const Grid& g) const { return std::size_t(cols) * g.ny; }
};

}  // namespace cascade
