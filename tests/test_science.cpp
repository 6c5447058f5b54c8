//! @file Forcings, initial conditions and online diagnostics of the science cases: ring forcing
//! (injection rate, dt independence, CPU = GPU), budgets with forcing, spectra and fluxes,
//! initial conditions (random, vortices, gaussian, file) and the Lamb dipole's speed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numeric>

#include "backend_cases.hpp"
#include "cascade/config.hpp"
#include "cascade/io.hpp"
#include "cascade/output.hpp"
#include "cascade/solver.hpp"

namespace cascade {
namespace {

Config deck(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  return parse_deck(yaml, "test-deck", sets);
}

// ---------------------------------------------------------------- ring forcing

// The mean injection of white-in-time ring forcing is epsilon, whatever the time step.
TEST(RingForcing, MeanInjectionIsEpsilonForTwoDtPolicies) {
  for (const char* cfl : {"0.2", "0.6"}) {
    SCOPED_TRACE(std::string("cfl ") + cfl);
    const Config c = deck("grid: {nx: 64}\nphysics: {nu: 2e-3, mu: 0.1}\n"
                          "forcing: {type: ring, epsilon: 0.05, k_f: 8, dk: 1.5, seed: 3}\n"
                          "initial: {type: zero}\ntime: {dt_max: 0.02}\n",
                          {std::string("time.cfl=") + cfl});
    auto b = make_backend<double>(BackendKind::Cpu, c.make_grid());
    Solver<double> s(*b, c);
    s.initialise();
    s.diagnose_interval();  // start the interval at t = 0
    while (s.time() < 40) s.step(40);
    const Diagnostics d = s.diagnose_interval();
    EXPECT_NEAR(d.injection / 0.05, 1.0, 0.02) << "mean injection over t = 40, " << s.steps() << " steps";
  }
}

TEST(RingForcing, CpuAndGpuDrawTheSameForcing) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  const Grid g(128, 96, 2 * M_PI, 1.5 * M_PI);
  auto cpu = make_backend<double>(BackendKind::Cpu, g);
  auto gpu = make_backend<double>(BackendKind::Cuda, g);
  Buffer<Complex<double>> fc = cpu->spectral_field(), fg = gpu->spectral_field();
  for (unsigned long long step : {0ull, 1ull, 12345ull}) {
    cpu->fill_modes(RingModes<double>{10, 2, 3.5, 42, step, g.ny}, fc);
    gpu->fill_modes(RingModes<double>{10, 2, 3.5, 42, step, g.ny}, fg);
    std::vector<Complex<double>> a, b;
    cpu->to_host(fc, a);
    gpu->to_host(fg, b);
    double diff = 0, scale = 0;
    int forced = 0;
    for (std::size_t k = 0; k < a.size(); ++k) {
      diff = std::max(diff, std::hypot(a[k].re - b[k].re, a[k].im - b[k].im));
      scale = std::max(scale, std::hypot(a[k].re, a[k].im));
      forced += a[k].re != 0 || a[k].im != 0;
    }
    EXPECT_GT(forced, 20);
    // The random numbers are integer hashes (identical); only cos/sin of the phase may differ
    // in the last bit between the host and device math libraries.
    EXPECT_LT(diff / scale, 1e-15) << "step " << step;
  }
}

TEST(RingForcing, IsRealAndConfinedToTheShell) {
  const Config c = deck("grid: {nx: 64}\nforcing: {type: ring, epsilon: 1, k_f: 6, dk: 1}\n"
                        "initial: {type: zero}\n");
  auto b = make_backend<double>(BackendKind::Cpu, c.make_grid());
  Buffer<Complex<double>> f = b->spectral_field();
  Buffer<double> phys = b->real_field();
  b->fill_modes(RingModes<double>{6, 1, 1.0, 1, 7, c.grid.ny}, f);
  std::vector<Complex<double>> h;
  b->to_host(f, h);
  const Grid& g = c.make_grid();
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nxh(); ++i) {
      const double k = std::hypot(g.kx(i), g.ky(j));
      const Complex<double> v = h[std::size_t(j) * g.nxh() + i];
      if (std::abs(k - 6) >= 1) EXPECT_EQ(std::hypot(v.re, v.im), 0.0) << i << "," << j;
      else EXPECT_NEAR(std::hypot(v.re, v.im), k, 1e-12) << i << "," << j;
    }
  // Hermitian on the column kx = 0: a real field round-trips unchanged.
  b->scale(f, f, 1.0 / double(g.size()));
  std::vector<Complex<double>> before;
  b->to_host(f, before);
  b->inverse(f, phys);
  Buffer<Complex<double>> again = b->spectral_field();
  b->forward(phys, again);
  std::vector<Complex<double>> after;
  b->to_host(again, after);
  for (std::size_t k = 0; k < after.size(); ++k) {
    EXPECT_NEAR(after[k].re / double(g.size()), before[k].re, 1e-15);
    EXPECT_NEAR(after[k].im / double(g.size()), before[k].im, 1e-15);
  }
}

// ---------------------------------------------------------------- budgets with forcing

// E(t_i) - E(t_{i-1}) = (t_i - t_{i-1}) (injection - dissipation), and the enstrophy
// analogue, from the recorded interval means, on a forced 256^2 run.
TEST(Budget, ClosesWithRingForcing) {
  const Config c = deck("grid: {nx: 256}\nphysics: {nu: 1e-3, mu: 0.05}\n"
                        "forcing: {type: ring, epsilon: 0.1, k_f: 20, dk: 2, seed: 5}\n"
                        "initial: {type: random, k0: 10, energy: 0.05, seed: 4}\ntime: {cfl: 0.25}\n");
  auto b = make_backend<double>(BackendKind::Cpu, c.make_grid());
  Solver<double> s(*b, c);
  s.initialise();
  std::vector<Diagnostics> rows = {s.diagnose_interval()};
  const double every = 0.05;
  double next = every;
  while (rows.size() < 41) {
    if (s.step(next).landed) {
      rows.push_back(s.diagnose_interval());
      next += every;
    }
  }
  double worst_e = 0, worst_z = 0, scale_e = 0, scale_z = 0;
  double sum_de = 0, sum_e = 0, sum_inj = 0, sum_dz = 0, sum_z = 0, sum_inj_z = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const double T = rows[i].t - rows[i - 1].t;
    worst_e = std::max(worst_e, std::abs(rows[i].energy - rows[i - 1].energy - T * (rows[i].injection - rows[i].dissipation)));
    worst_z = std::max(worst_z, std::abs(rows[i].enstrophy - rows[i - 1].enstrophy -
                                         T * (rows[i].injection_z - rows[i].dissipation_z)));
    scale_e = std::max(scale_e, T * (std::abs(rows[i].injection) + rows[i].dissipation));
    scale_z = std::max(scale_z, T * (std::abs(rows[i].injection_z) + rows[i].dissipation_z));
    sum_de += rows[i].energy - rows[i - 1].energy;
    sum_e += T * (rows[i].injection - rows[i].dissipation);
    sum_inj += T * rows[i].injection;
    sum_dz += rows[i].enstrophy - rows[i - 1].enstrophy;
    sum_z += T * (rows[i].injection_z - rows[i].dissipation_z);
    sum_inj_z += T * rows[i].injection_z;
    EXPECT_NEAR(rows[i].dissipation, 2e-3 * rows[i].enstrophy + 0.1 * rows[i].energy,
                0.05 * rows[i].dissipation) << "dissipation ~ 2 nu Z + 2 mu E (interval mean vs end value)";
  }
  printf("budget: worst interval %g (E) %g (Z); whole run %g (E) %g (Z)\n", worst_e / scale_e, worst_z / scale_z,
         std::abs(sum_de - sum_e) / sum_inj, std::abs(sum_dz - sum_z) / sum_inj_z);
  // Over the run: the budget closes to 1e-3 of the energy (enstrophy) injected.
  EXPECT_LT(std::abs(sum_de - sum_e) / sum_inj, 1e-3);
  EXPECT_LT(std::abs(sum_dz - sum_z) / sum_inj_z, 1e-3);
  // Each interval: white noise correlates with the nonlinear term within a step
  // (h^2 Re<N, F>, zero in the mean), so single intervals scatter a little more.
  EXPECT_LT(worst_e / scale_e, 5e-3);
  EXPECT_LT(worst_z / scale_z, 5e-3);
}

// ---------------------------------------------------------------- spectra

TEST(Spectra, SingleModeSitsInItsShellAndFluxesVanishForIt) {
  const Config c = deck("grid: {nx: 64}\n");
  const Grid g = c.make_grid();
  auto b = make_backend<double>(BackendKind::Cpu, g);
  Solver<double> s(*b, c);
  std::vector<double> w(g.size());
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) w[std::size_t(j) * g.nx + i] = 25 * std::cos(3 * g.x(i) + 4 * g.y(j));
  s.set_vorticity(w);
  const auto sp = s.spectra();
  const Diagnostics d = s.diagnose();
  for (std::size_t k = 0; k < sp.energy.size(); ++k) {
    if (k == 5) EXPECT_NEAR(sp.energy[k] * s.dk() / d.energy, 1.0, 1e-13);
    else EXPECT_LT(sp.energy[k] * s.dk() / d.energy, 1e-28) << "shell " << k;  // FFT round-off only
    EXPECT_NEAR(sp.flux[k], 0.0, 1e-12);  // a single mode has no nonlinear transfer
  }
}

TEST(Spectra, FluxesOfTurbulenceSumToZero) {
  const Config c = deck("grid: {nx: 128}\nphysics: {nu: 1e-3}\ninitial: {type: random, k0: 8, seed: 6}\n");
  auto b = make_backend<double>(BackendKind::Cpu, c.make_grid());
  Solver<double> s(*b, c);
  s.initialise();
  for (int n = 0; n < 50; ++n) s.step(1e9);
  const auto sp = s.spectra();
  double peak = 0, peak_z = 0;
  for (std::size_t k = 0; k < sp.flux.size(); ++k) {
    peak = std::max(peak, std::abs(sp.flux[k]));
    peak_z = std::max(peak_z, std::abs(sp.flux_z[k]));
  }
  EXPECT_GT(peak, 0.0);
  // The nonlinear term conserves E and Z: the flux through the last shell is zero.
  EXPECT_LT(std::abs(sp.flux.back()) / peak, 1e-12);
  EXPECT_LT(std::abs(sp.flux_z.back()) / peak_z, 1e-12);
  // Direct enstrophy cascade: enstrophy flows to small scales through the middle shells.
  EXPECT_GT(sp.flux_z[sp.flux_z.size() / 4], 0.0);
}

// ---------------------------------------------------------------- initial conditions

TEST(InitialConditions, RandomFieldHasRequestedEnergyAndSpectrum) {
  const Config c = deck("grid: {nx: 256}\ninitial: {type: random, k0: 12, energy: 0.7, seed: 2}\n");
  const Grid g = c.make_grid();
  auto b = make_backend<double>(BackendKind::Cpu, g);
  Solver<double> s(*b, c);
  s.initialise();
  EXPECT_NEAR(s.diagnose().energy, 0.7, 1e-12);
  // Every mode carries energy |omega|^2/k^2 proportional to 1/(1 + (k/k0)^4/3): the shell
  // spectrum E(k) ~ k/(1 + (k/k0)^4/3) peaks at k0.
  const auto h = s.vorticity_hat();
  double lo = 1e300, hi = 0;
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nxh(); ++i) {
      const double k2 = g.kx(i) * g.kx(i) + g.ky(j) * g.ky(j);
      const Complex<double> v = h[std::size_t(j) * g.nxh() + i];
      if (k2 == 0 || (v.re == 0 && v.im == 0)) continue;
      const double x = std::sqrt(k2) / 12;
      const double shape = (v.re * v.re + v.im * v.im) / k2 * (1 + x * x * x * x / 3);
      lo = std::min(lo, shape);
      hi = std::max(hi, shape);
    }
  EXPECT_NEAR(hi / lo, 1.0, 1e-12);
  // Random phases: the field is not symmetric, and another seed gives another field.
  const Config c2 = deck("grid: {nx: 256}\ninitial: {type: random, k0: 12, energy: 0.7, seed: 3}\n");
  Solver<double> s2(*b, c2);
  s2.initialise();
  const std::size_t m = std::size_t(3) * g.nxh() + 5;  // kx = 5, ky = 3: inside the band
  EXPECT_NE(h[m].re, 0.0);
  EXPECT_NE(s2.vorticity_hat()[m].re, h[m].re);
}

TEST(InitialConditions, VorticesHaveTheirCirculationAndCentre) {
  const Config c = deck("grid: {nx: 256}\ninitial:\n  type: vortices\n  vortices:\n"
                        "    - {x: 2, y: 2, radius: 0.3, circulation: 1.5, profile: gaussian}\n"
                        "    - {x: 4.5, y: 4, radius: 0.4, circulation: -2, profile: lamb-oseen}\n");
  const Grid g = c.make_grid();
  auto b = make_backend<double>(BackendKind::Cpu, g);
  Solver<double> s(*b, c);
  s.initialise();
  const auto w = s.vorticity();
  // Circulation within 5 radii of each centre (the zero-mean shift is included exactly).
  const double area = (2 * M_PI) * (2 * M_PI);
  struct V { double x, y, r, gamma; } vs[2] = {{2, 2, 0.3, 1.5}, {4.5, 4, 0.4 / std::sqrt(2.0), -2}};
  for (const V& v : vs) {
    double gamma = 0, wmax = 0, xm = 0, ym = 0;
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const double dx = g.x(i) - v.x, dy = g.y(j) - v.y;
        if (std::hypot(dx, dy) > 5 * v.r) continue;
        const double val = w[std::size_t(j) * g.nx + i];
        gamma += val * g.dx() * g.dy();
        if (std::abs(val) > wmax) {
          wmax = std::abs(val);
          xm = g.x(i);
          ym = g.y(j);
        }
      }
    const double mean_shift = -(1.5 - 2) / area * M_PI * 25 * v.r * v.r;  // the removed mean over the disc
    EXPECT_NEAR(gamma - mean_shift, v.gamma, 1e-3 * std::abs(v.gamma));
    EXPECT_NEAR(xm, v.x, g.dx());
    EXPECT_NEAR(ym, v.y, g.dy());
  }
}

TEST(InitialConditions, GaussianHasItsPeak) {
  const Config c = deck("grid: {nx: 128}\ninitial: {type: gaussian, amplitude: 3, radius: 0.4, x0: 3, y0: 2}\n");
  const Grid g = c.make_grid();
  auto b = make_backend<double>(BackendKind::Cpu, g);
  Solver<double> s(*b, c);
  s.initialise();
  const auto w = s.vorticity();
  const auto it = std::max_element(w.begin(), w.end());
  const std::size_t at = std::size_t(it - w.begin());
  const double mean = 3 * 2 * M_PI * 0.16 / (4 * M_PI * M_PI);  // removed with the k = 0 mode
  EXPECT_NEAR(*it + mean, 3 * std::exp(-(std::pow(g.x(at % g.nx) - 3, 2) + std::pow(g.y(at / g.nx) - 2, 2)) / 0.32),
              1e-9);
}

TEST(InitialConditions, FileFromASnapshotOfAnotherResolution) {
  char dir[] = "/tmp/cascade-file-ic-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/snap.h5";
  // A 64^2 snapshot of a band-limited field, loaded on a 96^2 grid.
  const Config src = deck("grid: {nx: 64}\ninitial: {type: random, k0: 4, seed: 9}\n");
  auto bs = make_backend<double>(BackendKind::Cpu, src.make_grid());
  Solver<double> s(*bs, src);
  s.initialise();
  const auto w = s.vorticity();
  {
    H5Writer f(path);
    f.write_2d("/vorticity", w.data(), 64, 64, "1/time", "test field");
    f.attribute("time", 0.0);
    f.close();
  }
  const Config dst = deck("grid: {nx: 96}\n", {"initial.type=file", "initial.path=" + path});
  auto bd = make_backend<double>(BackendKind::Cpu, dst.make_grid());
  Solver<double> d(*bd, dst);
  const InitialField field = read_initial_field(path);
  d.initialise(&field);
  EXPECT_NEAR(d.diagnose().energy / s.diagnose().energy, 1.0, 1e-13);
  EXPECT_NEAR(d.diagnose().palinstrophy / s.diagnose().palinstrophy, 1.0, 1e-13);
  std::remove(path.c_str());
  rmdir(dir);
}

// ---------------------------------------------------------------- Lamb dipole

// GeophysicalFlows' test: a Lamb dipole of speed U = 1 translates at U (inviscid), at 256^2.
// In a doubly periodic box the zero-mean constraint adds a backflow -I/A (I = 2 pi a^2 U, the
// dipole's impulse; A the box area) and the image lattice +I/(2A) at the dipole, so it moves
// at U (1 - pi a^2 / A): 1.3% slower for a = 0.4 in the 2 pi box (measured, a = 0.4, 0.5 and
// 0.8: the deficit follows a^2 to within 6e-4).
TEST(LambDipole, TranslatesAtItsSpeed) {
  const Config c = deck("grid: {nx: 256}\ninitial: {type: lamb-dipole, speed: 1, radius: 0.4, x0: 2, y0: pi}\n"
                        "time: {cfl: 0.3}\n");
  const Grid g = c.make_grid();
  auto b = make_backend<double>(BackendKind::Cpu, g);
  Solver<double> s(*b, c);
  s.initialise();
  // The dipole's position: the centroid of omega^2 within 2a of the strongest vorticity (the
  // weak ripples the truncated initial profile sheds stay behind and must not bias it).
  const double a = 0.4;
  auto centroid = [&](const std::vector<double>& w) {
    const std::size_t peak = std::size_t(std::max_element(w.begin(), w.end(), [](double p, double q) {
                                           return std::abs(p) < std::abs(q);
                                         }) - w.begin());
    const double xp = g.x(int(peak % g.nx)), yp = g.y(int(peak / g.nx));
    double num = 0, den = 0;
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        if (std::hypot(g.x(i) - xp, g.y(j) - yp) > 2 * a) continue;
        const double q = w[std::size_t(j) * g.nx + i] * w[std::size_t(j) * g.nx + i];
        num += q * g.x(i);
        den += q;
      }
    return num / den;
  };
  const auto w0 = s.vorticity();
  const double x0 = centroid(w0);
  double impulse = 0;  // I = int y omega dA about the dipole's axis (y = pi): 2 pi a^2 U
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) impulse += (g.y(j) - M_PI) * w0[std::size_t(j) * g.nx + i] * g.dx() * g.dy();
  EXPECT_NEAR(impulse / (2 * M_PI * a * a), 1.0, 1e-2);
  const double t_end = 2.0;
  while (s.time() < t_end) s.step(t_end);
  const double speed = (centroid(s.vorticity()) - x0) / t_end;
  const double periodic = 1.0 * (1 - M_PI * a * a / (g.lx * g.ly));
  EXPECT_NEAR(speed, periodic, 2e-3) << "translation speed in the periodic box";
  EXPECT_NEAR(speed, 1.0, 1.5e-2) << "and against U itself";
}

}  // namespace
}  // namespace cascade
