//! @file `cascade poisson`: solve the Gaussian problem (physics/poisson.cpp), report its errors, write poisson.h5.
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "cascade/error.hpp"
#include "cascade/io.hpp"
#include "cascade/parallel.hpp"
#include "cascade/poisson.hpp"

namespace cascade {

namespace {

template <class Real>
int poisson_with(const Config& c, BackendKind kind, const std::string& why) {
  const Grid grid = c.make_grid();
  // One transform each way: measuring plans (auto's choice on large grids) would cost more than
  // it saves, unless the deck asks for it.
  const FftPlanning planning = c.run.fft_planning == FftPlanning::Measure ? FftPlanning::Measure : FftPlanning::Estimate;
  auto backend = make_backend<Real>(kind, grid, c.run.device, c.run.threads, planning);
  const PoissonConfig& p = c.poisson;
  const bool root = parallel::root();  // over MPI every rank solves its slab; rank 0 reports and writes
  if (root) {
    fmt::print("cascade poisson: {} x {} grid, box {:g} x {:g}, Gaussian sigma {:g} at ({:g}, {:g})\n", grid.nx,
               grid.ny, grid.lx, grid.ly, p.sigma, p.x0, p.y0);
    fmt::print("backend: {} [{}], precision {}\n", backend->description(), why, to_string(c.run.precision));
  }
  const PoissonResult r = solve_poisson(*backend, p);
  if (!root) return 0;
  // Non-finite values (an unresolvable Gaussian, say) are a failure, not a result to write.
  for (const auto* field : {&r.rhs, &r.phi})
    for (std::size_t k = 0; k < field->size(); ++k)
      if (!std::isfinite((*field)[k]))
        throw RunError(fmt::format("the {} is not finite ({} at point {}); nothing written (is poisson.sigma = {:g} "
                                   "resolved by the grid spacing {:g}?)",
                                   field == &r.rhs ? "right-hand side" : "solution", (*field)[k], k, p.sigma,
                                   std::min(grid.dx(), grid.dy())));
  fmt::print("gauge: {}\n", p.gauge == "corner" ? "phi(0,0) = 0 (corner, as the reference example)"
                                                 : "mean of phi = 0 (exact solution shifted to zero mean)");
  auto report = [&](const char* label, int i, int j) {
    fmt::print("phi at {} (i,j) = ({},{}), (x,y) = ({:.6g}, {:.6g}): {:.6f} (exact {:.6f})\n", label, i, j,
               grid.x(i), grid.y(j), r.at(r.phi, i, j), r.at(r.exact, i, j));
  };
  report("reference point", r.iref, r.jref);
  report("centre", r.icentre, r.jcentre);
  fmt::print("L-infinity error: {:.6e}\n", r.linf);
  fmt::print("L2 error (sqrt(sum e^2)/(nx*ny)): {:.6e}\n", r.l2);
  fmt::print("RMS error: {:.6e}\n", r.rms);

  make_directories(c.output.directory);
  const std::string path = c.output.directory + "/poisson.h5";
  H5Writer out(path);
  write_provenance(out, c, backend->description());
  out.attribute("gauge", p.gauge);
  out.attribute("sigma", p.sigma);
  out.attribute("linf_error", r.linf);
  out.attribute("l2_error", r.l2);
  std::vector<Real> narrow(r.phi.begin(), r.phi.end());
  out.write_2d("/phi", narrow.data(), grid.ny, grid.nx, "units of rhs times length^2",
               "computed solution of lap(phi) = rhs, gauge: " + p.gauge);
  narrow.assign(r.rhs.begin(), r.rhs.end());
  out.write_2d("/rhs", narrow.data(), grid.ny, grid.nx, "arbitrary", "right-hand side rhs = lap(exp(-s/(2 sigma^2)))");
  out.write_2d("/exact", r.exact.data(), grid.ny, grid.nx, "units of rhs times length^2",
               "exact solution exp(-s/(2 sigma^2)) in the same gauge (double)");
  write_grid_coordinates(out, grid.nx, grid.ny, grid.lx, grid.ly);  // netCDF dimensions (y, x)
  for (const char* name : {"/phi", "/rhs", "/exact"}) out.dimensions(name, {"/y", "/x"});
  out.close();
  fmt::print("wrote {}\n", path);
  return 0;
}

}  // namespace

int run_poisson_command(const Config& c, const std::string& backend_request) {
  std::string why;
  const BackendKind kind = resolve_backend(backend_request.empty() ? c.run.backend : backend_request, why);
  return c.run.precision == Precision::Single ? poisson_with<float>(c, kind, why)
                                              : poisson_with<double>(c, kind, why);
}

}  // namespace cascade
