//! @file Spectral Poisson solve of the Gaussian problem and its error norms (poisson.h5 is written by app/poisson_command.cpp).
#include "cascade/poisson.hpp"

#include <cmath>

#include "cascade/error.hpp"

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
  backend.fill_points(GaussianPoissonRhs<Real>{Real(g.dx()), Real(g.dy()), Real(p.sigma), Real(p.x0), Real(p.y0)}, rhs);
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

}  // namespace cascade
