//! @file Grid construction and wavenumbers.
#include "cascade/grid.hpp"

#include <cmath>

namespace cascade {

Grid::Grid(int nx_, int ny_, double lx_, double ly_, Dealias d)
    : nx(nx_), ny(ny_), lx(lx_), ly(ly_), dealias(d) {}

double Grid::kx(int i) const { return 2.0 * M_PI * mode_x(i) / lx; }
double Grid::ky(int j) const { return 2.0 * M_PI * mode_y(j) / ly; }

double Grid::shell_width() const { return 2 * M_PI / std::max(lx, ly); }

double Grid::shell_count() const {
  const double kmax = std::hypot(kx(nx / 2), 2 * M_PI * (ny / 2) / ly);
  return std::floor(kmax / shell_width() + 0.5) + 1;
}

}  // namespace cascade
