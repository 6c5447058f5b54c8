//! @file Spectral Poisson solve of the Gaussian problem, its error norms, and poisson.h5.
#include "cascade/poisson.hpp"

#include <fmt/format.h>

#include <cmath>

#include "cascade/error.hpp"
#include "cascade/io.hpp"
#include "cascade/parallel.hpp"

namespace cascade {

template <class Real>
PoissonResult solve_poisson(Backend<Real>& backend, const PoissonConfig& p) {
  const Grid& g = backend.grid();
  if (p.rhs != "gaussian") throw InputError("poisson.rhs: expected gaussian, found '" + p.rhs + "'");

  // r on the backend (the same functor on every device), then phi_hat = -r_hat / k^2.
  Buffer<Real> rhs = backend.real_field();
  Buffer<Real> phi = backend.real_field();
  Buffer<Complex<Real>> r_hat = backend.spectral_field();
  Buffer<Complex<Real>> phi_hat = backend.spectral_field();
  backend.gaussian_poisson_problem(Real(p.sigma), Real(p.x0), Real(p.y0), rhs, nullptr);
  backend.forward(rhs, r_hat);
  backend.poisson_solve(r_hat, phi_hat);
  backend.inverse(phi_hat, phi);
  if (p.gauge == "corner") backend.add_constant(phi, -backend.value_at(phi, 0));

  PoissonResult res;
  res.grid = g;
  res.gauge = p.gauge;
  std::vector<Real> host;
  backend.to_host(phi, host);
  res.phi.assign(host.begin(), host.end());
  backend.to_host(rhs, host);
  res.rhs.assign(host.begin(), host.end());
  if (res.phi.empty()) return res;  // an MPI rank other than 0: the fields are gathered there

  // The exact solution, evaluated independently on the host in double.
  res.exact.resize(g.size());
  const double two_s2 = 2.0 * p.sigma * p.sigma;
  double mean = 0;
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) {
      const double x = g.x(i) - p.x0, y = g.y(j) - p.y0;
      const double e = std::exp(-(x * x + y * y) / two_s2);
      res.exact[std::size_t(j) * g.nx + i] = e;
      mean += e;
    }
  if (p.gauge == "zero-mean") {
    mean /= double(g.size());
    for (double& e : res.exact) e -= mean;
  }

  double sum2 = 0;
  for (std::size_t k = 0; k < g.size(); ++k) {
    const double e = std::abs(res.phi[k] - res.exact[k]);
    res.linf = std::isnan(e) || std::isnan(res.linf) ? NAN : std::max(res.linf, e);  // NaN is never hidden
    sum2 += e * e;
  }
  res.l2 = std::sqrt(sum2) / double(g.size());
  res.rms = std::sqrt(sum2 / double(g.size()));
  res.iref = g.nx / 2 - 1;
  res.jref = g.ny / 2 - 1;
  res.icentre = g.nx / 2;
  res.jcentre = g.ny / 2;
  return res;
}

template PoissonResult solve_poisson<float>(Backend<float>&, const PoissonConfig&);
template PoissonResult solve_poisson<double>(Backend<double>&, const PoissonConfig&);

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
