//! @file The step's evaluation paths against each other: the same turbulent run on the CPU and
//! on the GPU with every strategy, the fused, pruned, row-kernel and complex-pair transforms
//! against the plain ones, the CPU's evaluation row by row, plans made as values, and the
//! complex pairs' stage, velocity, unpacking and CFL speed against the half spectra.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <memory>
#include <functional>

#include "backend_cases.hpp"
#include "cascade/config.hpp"
#include "cascade/error.hpp"
#include "cascade/solver.hpp"
#include "cascade/stepper.hpp"
#include "kernels/column_fft.cuh"
#include "kernels/ns_ops.cuh"

#include "solver_checks.hpp"

namespace cascade {
namespace {

using test::deck;
using test::rel_l2;

// ---------------------------------------------------------------- CPU vs GPU

//! A backend of `kind` with the step plan the deck values ask for (run.step_transforms,
//! run.fft_callbacks; auto goes by the grid's size, and the test grids are small). The plan
//! asked for must be made: a silent fallback to the plain path would leave it untested. Null
//! where the problem cannot run it (plan_step refuses it).
template <class Real>
std::unique_ptr<Backend<Real>> planned_backend(BackendKind kind, const Grid& g, const char* transforms,
                                               const char* callbacks, bool basdevant = true, int threads = 0) {
  auto b = make_backend<Real>(kind, g, 0, threads);
  const StepRequest r = step_request_from(transforms, callbacks);
  StepPlan want;
  try {
    want = b->plan_for(r, basdevant);
  } catch (const InputError&) {
    return nullptr;
  }
  const StepPlan made = b->prepare_step(r, basdevant);
  EXPECT_EQ(made, want) << transforms << ", callbacks " << callbacks << ": " << describe(made);
  return b;
}
template <class Real>
std::unique_ptr<Backend<Real>> gpu_backend(const Grid& g, const char* transforms, const char* callbacks,
                                           bool basdevant = true) {
  auto b = planned_backend<Real>(BackendKind::Cuda, g, transforms, callbacks, basdevant);
  EXPECT_TRUE(b) << transforms << " refused";
  return b;
}
//! The deck values of every GPU strategy.
const char* const kGpuTransforms[] = {"plain", "plain-pairs", "pruned", "pruned-pairs", "rows", "complex-pairs"};

//! 200 steps of the deck's run on backend b: its vorticity appended to w, its time to t.
void turbulent_run(Backend<double>& b, const Config& c, std::vector<std::vector<double>>& w, std::vector<double>& t) {
  Solver<double> s(b, c);
  s.initialise();
  for (int n = 0; n < 200; ++n) s.step(1e9);
  w.push_back(s.vorticity());
  t.push_back(s.time());
}

// The same turbulent run on the CPU and on the GPU with the plain transforms, with each level
// of fused transforms (the dealiasing inside cuFFT's passes) and with the pruned transforms
// (two 1D passes, the removed columns skipped), one field a transform or pairs batched, in
// both nonlinear forms and with the 2/3 rule or none (then only the Nyquist modes are removed,
// and nothing is pruned).
TEST(SolverCpuGpu, TurbulentRunAgrees) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  for (const char* form : {"basdevant", "advective"})
    for (const char* dealias : {"two-thirds", "none"}) {
      SCOPED_TRACE(std::string(form) + ", dealias " + dealias);
      const Config c = deck(std::string("grid: {nx: 256, ny: 192, ly: 4.0, nonlinear: ") + form +
                            ", dealias: " + dealias +
                            "}\nphysics: {nu: 5e-4}\ninitial: {type: random, k0: 6, seed: 4}\ntime: {cfl: 0.5}\n");
      // The CPU first, then every GPU plan the problem can run (auto picks them by grid size;
      // here they are asked for): each strategy at each callback level.
      const bool basdevant = std::string(form) == "basdevant";
      std::vector<std::vector<double>> w;
      std::vector<double> t;
      std::vector<std::string> what = {"cpu"};
      turbulent_run(*make_backend<double>(BackendKind::Cpu, c.make_grid()), c, w, t);
      for (const char* transforms : kGpuTransforms)
        for (const char* level : {"off", "store", "all"}) {
          auto b = planned_backend<double>(BackendKind::Cuda, c.make_grid(), transforms, level, basdevant);
          if (!b) continue;  // refused: rows or complex pairs in the advective form, pruning without the rule
          turbulent_run(*b, c, w, t);
          what.push_back(describe(b->step_plan()));
        }
      for (std::size_t k = 1; k < w.size(); ++k) {
        EXPECT_LT(rel_l2(w[k], w[0]), 1e-10) << "GPU vs CPU: " << what[k];
        EXPECT_NEAR(t[k], t[0], 1e-12 * t[0]) << "the CFL steps differ: " << what[k];
      }
    }
}

// Rows and columns (the stage inside the column kernel) need powers of two, which the grid
// above has not: the same comparison on a non-square grid of them with every term of the stage
// (viscosity, friction, beta, a fixed forcing), both steppers, the budget's integrals too; single
// precision against the CPU's.
template <class Real>
void rows_and_columns_agree(const Config& c, int steps, double tol) {
  std::vector<double> w[2], integral[2], flux[2];
  double t[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    auto b = k == 0 ? make_backend<Real>(BackendKind::Cpu, c.make_grid())
                    : gpu_backend<Real>(c.make_grid(), "rows-columns", "off");
    ASSERT_TRUE(b);
    Solver<Real> s(*b, c);
    s.initialise();
    for (int n = 0; n < steps; ++n) s.step(1e9);
    const BudgetState& budget = s.budget();
    integral[k].assign(std::begin(budget.integral), std::end(budget.integral));
    flux[k] = s.spectra().flux;  // the transfer: the column kernel's forward passes alone
    s.step(1e9);                 // and a step after them: the inputs made again
    for (Real x : s.vorticity()) w[k].push_back(double(x));
    t[k] = s.time();
  }
  EXPECT_LT(rel_l2(flux[1], flux[0]), tol) << "the transfer spectrum";
  EXPECT_LT(rel_l2(w[1], w[0]), tol);
  EXPECT_NEAR(t[1], t[0], tol * t[0]) << "the CFL steps differ";
  for (std::size_t q = 0; q < integral[0].size(); ++q)
    EXPECT_NEAR(integral[1][q], integral[0][q], tol * (std::fabs(integral[0][q]) + 1e-30)) << "budget term " << q;
  EXPECT_GT(std::fabs(integral[0][0]), 0.0);  // viscosity has dissipated something
  EXPECT_GT(std::fabs(integral[0][4]), 0.0);  // the forcing has injected something
}

TEST(SolverCpuGpu, RowsAndColumnsAgree) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  const std::string base =
      "grid: {nx: 256, ny: 128, ly: 0.5}\nphysics: {nu: 5e-4, mu: 0.02, beta: 3.0}\n"
      "forcing: {type: kolmogorov, amplitude: 0.5, wavenumber: 4}\ninitial: {type: random, k0: 6, seed: 4}\n"
      "time: {cfl: 0.5, stepper: ";
  for (const char* stepper : {"rk4", "rk3"}) {
    SCOPED_TRACE(stepper);
    rows_and_columns_agree<double>(deck(base + stepper + "}\n"), 200, 1e-10);
  }
  rows_and_columns_agree<float>(deck(base + "rk4}\n"), 30, 1e-4);
  // Rows of 512 points (radix 8) and columns of 128 (radix 16 in double), and the other way;
  // columns of 2048, 4096, 8192 and 16384 points (on compute capability 9.0 over pairs of
  // blocks, one field each, their length a constant: tiles of two columns on 256 and 512
  // threads; 8192 and 16384 over quads of blocks, by field and the parity of y, two columns a
  // tile, the last with one of the eleven kept, and one), tiles of 32 columns of 16, rows of 16
  // points; rows of 4096 points, more than the blocks (staged on compute capability 9.0:
  // RowProductsMatchThePlainTransforms), and of 16384 (on compute capability 9.0 over pairs of
  // blocks, else in parts).
  struct Case {
    const char* grid;
    double nu;
    int wavenumber, k0, seed, steps;
  };
  for (const Case& k : {Case{"{nx: 512, ny: 128, ly: 0.25}", 5e-4, 4, 6, 5, 40},
                        Case{"{nx: 128, ny: 512, ly: 4.0}", 5e-4, 4, 6, 6, 40},
                        Case{"{nx: 32, ny: 2048, ly: 16.0}", 1e-3, 2, 4, 4, 20},
                        Case{"{nx: 64, ny: 4096, ly: 16.0}", 1e-3, 2, 4, 2, 20},
                        Case{"{nx: 32, ny: 8192, ly: 64.0}", 1e-3, 2, 4, 3, 10},
                        Case{"{nx: 16, ny: 16384, ly: 128.0}", 1e-3, 2, 4, 12, 10},
                        Case{"{nx: 16384, ny: 64, ly: 1.0}", 1e-3, 2, 4, 13, 6},
                        Case{"{nx: 16, ny: 16}", 1e-2, 2, 2, 2, 50},
                        Case{"{nx: 4096, ny: 512, ly: 0.125}", 5e-4, 4, 6, 7, 8}}) {
    SCOPED_TRACE(k.grid);
    rows_and_columns_agree<double>(
        deck(std::string("grid: ") + k.grid + "\nphysics: {nu: " + std::to_string(k.nu) + "}\n" +
             "forcing: {type: kolmogorov, amplitude: 0.5, wavenumber: " + std::to_string(k.wavenumber) + "}\n" +
             "initial: {type: random, k0: " + std::to_string(k.k0) + ", seed: " + std::to_string(k.seed) + "}\n"),
        k.steps, 1e-10);
  }
  // Single precision's pairs: columns of 4096 points, tiles of four (two butterflies a thread of
  // 512), of 8192 over quads of blocks, four a tile, the last with three of the eleven kept, and
  // of 16384, two a tile of the six kept (their length a constant); and the pairs' kernels that
  // read it at run time (ColumnKernelEval::kernel_for): columns of 2048, two a tile (of six
  // kept) on 256; rows of 8192 points, staged, on square cells (on a strip 0.0625 wide the
  // transfer differed from the CPU's by 3.9e-3, rows staged or not, against 4.2e-5 here: H200).
  struct Single {
    const char* grid;
    int seed, steps;
  };
  for (const Single& k : {Single{"{nx: 64, ny: 4096, ly: 16.0}", 7, 20}, Single{"{nx: 32, ny: 8192, ly: 64.0}", 10, 10},
                          Single{"{nx: 16, ny: 16384, ly: 128.0}", 8, 10},
                          Single{"{nx: 16, ny: 2048, ly: 32.0}", 9, 20},
                          Single{"{nx: 8192, ny: 512, ly: 0.39269908169872414}", 11, 8}}) {
    SCOPED_TRACE(k.grid);
    rows_and_columns_agree<float>(deck(std::string("grid: ") + k.grid + "\nphysics: {nu: 1e-3}\n" +
                                       "forcing: {type: kolmogorov, amplitude: 0.5, wavenumber: 2}\n" +
                                       "initial: {type: random, k0: 4, seed: " + std::to_string(k.seed) + "}\n"),
                                  k.steps, 1e-4);
  }
}

//! One evaluation, operation against operation: the fused (or pruned) transforms against the
//! plain ones, at the modes the dealiasing keeps, and the CFL maximum. At level `all` the fused
//! side gets inputs that are not zero at the removed modes, which it must not read.
template <class Real>
void check_fused_products(const Grid& g, Backend<Real>* fused, Backend<Real>* plain, bool loads, bool advective,
                          double tol) {
  using C = Complex<Real>;
  // Inputs: the spectra of rough zero-mean real fields (every mode but k = 0 nonzero, as the
  // evaluation's inputs have no mean).
  std::vector<std::vector<Real>> in(4, std::vector<Real>(g.size()));
  for (int q = 0; q < 4; ++q) {
    double mean = 0;
    for (std::size_t k = 0; k < in[q].size(); ++k) {
      in[q][k] = Real(std::sin(0.37 * double(k) * (q + 1) + q) + 0.3 * std::cos(1e-3 * double(k * k)));
      mean += double(in[q][k]) / double(g.size());
    }
    for (auto& x : in[q]) x = Real(double(x) - mean);
  }
  auto load = [&](Backend<Real>& b, bool masked) {
    std::vector<Buffer<C>> hat;
    Buffer<Real> r = b.real_field();
    for (int q = 0; q < 4; ++q) {
      hat.push_back(b.spectral_field());
      b.from_host(in[q], r);
      b.forward(r, hat.back());
      if (masked) b.apply_mask(hat.back());
    }
    return hat;
  };
  // Removed modes zeroed on both sides (the fused forward leaves them alone), then compared.
  auto result = [&](Backend<Real>& b, Buffer<C>& a) {
    b.apply_mask(a);
    std::vector<C> h;
    b.to_host(a, h);
    return h;
  };
  for (bool cfl : {true, false}) {
    SCOPED_TRACE(cfl ? "with the CFL maximum" : "without");
    auto hf = load(*fused, !loads), hp = load(*plain, true);
    Buffer<Real> uf = fused->real_field(), vf = fused->real_field(), xf = fused->real_field(), yf = fused->real_field();
    Buffer<Real> up = plain->real_field(), vp = plain->real_field(), xp = plain->real_field(), yp = plain->real_field();
    fused->nonlinear_products(advective, cfl, hf[0], hf[1], &hf[2], &hf[3], uf, vf, &xf, &yf);
    plain->nonlinear_products(advective, cfl, hp[0], hp[1], &hp[2], &hp[3], up, vp, &xp, &yp);
    if (cfl) EXPECT_NEAR(double(fused->cfl_maximum()), double(plain->cfl_maximum()), tol * double(plain->cfl_maximum()));
    for (int q = 0; q < (advective ? 1 : 2); ++q) {
      const std::vector<C> a = result(*fused, hf[q]), b = result(*plain, hp[q]);
      double diff = 0, scale = 0;
      for (std::size_t k = 0; k < a.size(); ++k) {
        diff = std::max(diff, std::hypot(double(a[k].re) - double(b[k].re), double(a[k].im) - double(b[k].im)));
        scale = std::max(scale, std::hypot(double(b[k].re), double(b[k].im)));
      }
      EXPECT_GT(scale, 0.0);
      EXPECT_LE(diff, tol * scale) << "product " << q;
    }
  }
}

TEST(FusedTransforms, ProductsMatchThePlainTransforms) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  const Grid g(96, 72, 2 * M_PI, 3.0, Dealias::TwoThirds);
  for (const char* transforms : {"plain-pairs", "pruned-pairs"})
    for (const char* level : {"off", "store", "all"})
      for (bool advective : {false, true}) {
        SCOPED_TRACE(std::string(transforms) + ", callbacks " + level + (advective ? ", advective" : ", basdevant"));
        const bool loads = std::string(level) == "all";
        check_fused_products<double>(g, gpu_backend<double>(g, transforms, level, !advective).get(),
                                     gpu_backend<double>(g, "plain", "off").get(), loads, advective, 1e-13);
        check_fused_products<float>(g, gpu_backend<float>(g, transforms, level, !advective).get(),
                                    gpu_backend<float>(g, "plain", "off").get(), loads, advective, 2e-6);
      }
}

// The GPU's row kernel (kernels/row_fft.cuh) against the plain transforms: every radix
// sequence (nx = 2^4 .. 2^13: first stages of radix 16, 2, 4 and 8, one to three stages before
// the pass in registers; one field's rows of 128 and 256 points in radix 4, of 512 in radix 8),
// rows more and fewer than the blocks, and the callbacks in the passes over the columns. The
// advective form has no row kernel: its cases run the pruned passes.
TEST(FusedTransforms, RowProductsMatchThePlainTransforms) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  const std::pair<int, int> sizes[] = {{16, 24}, {32, 32}, {64, 48}, {128, 96}, {256, 40},
                                       {512, 64}, {1024, 30}, {2048, 36}, {4096, 20}, {8192, 12}};
  for (auto [nx, ny] : sizes)
    for (const char* level : {"off", "all"})
      for (bool advective : {false, true}) {
        if (nx > 256 && (std::string(level) != "off" || advective)) continue;  // the short cases cover them
        SCOPED_TRACE(std::to_string(nx) + " x " + std::to_string(ny) + ", callbacks " + level +
                     (advective ? ", advective" : ", basdevant"));
        const Grid g(nx, ny, 2 * M_PI, 3.0, Dealias::TwoThirds);
        const bool loads = std::string(level) == "all";
        const char* transforms = advective ? "pruned" : "rows";
        check_fused_products<double>(g, gpu_backend<double>(g, transforms, level, !advective).get(),
                                     gpu_backend<double>(g, "plain", "off").get(), loads, advective, 1e-13);
        check_fused_products<float>(g, gpu_backend<float>(g, transforms, level, !advective).get(),
                                    gpu_backend<float>(g, "plain", "off").get(), loads, advective, 4e-6);
      }
  // More rows than blocks where compute capability 9.0 stages them (a block's next row copied
  // into shared memory while its row transforms: rows of 4096 and 8192 points in double, 8192
  // in single), several a block; single precision's rows of nx/2 + 1 start on 8-byte
  // boundaries. Rows longer than the kernel's transform in shared memory (8192 points) go in
  // parts. Single precision's products of these many points differ from the plain transforms'
  // by more than the short rows' (H200: 5.6e-6 of their largest at 4096 x 512, whose rows are
  // not staged, 6.8e-6 at 8192 x 384); double precision's by 1.6e-14 and 3.6e-14, as much as
  // the plain transforms' from the CPU's (1.6e-14, 3.4e-14).
  struct Long {
    int nx, ny;
    double single;  // single precision's tolerance
    const char* what;
  };
  for (const Long& k : {Long{4096, 512, 1e-5, "several rows a block"}, Long{8192, 384, 1e-5, "several rows a block"},
                        Long{16384, 6, 4e-6, "in parts"}, Long{32768, 3, 4e-6, "in parts"}}) {
    SCOPED_TRACE(std::to_string(k.nx) + " x " + std::to_string(k.ny) + ", " + k.what);
    const Grid g(k.nx, k.ny, 2 * M_PI, 3.0, Dealias::TwoThirds);
    check_fused_products<double>(g, gpu_backend<double>(g, "rows", "off").get(),
                                 gpu_backend<double>(g, "plain", "off").get(), false, false, 1e-13);
    check_fused_products<float>(g, gpu_backend<float>(g, "rows", "off").get(),
                                gpu_backend<float>(g, "plain", "off").get(), false, false, k.single);
  }
  // Where the kernel cannot run, asking for it is refused.
  auto odd = make_backend<double>(BackendKind::Cuda, Grid(96, 64, 1.0, 1.0));
  EXPECT_THROW(odd->prepare_step(step_request_from("rows", "auto")), InputError);
}

// Basdevant's evaluation as complex pairs (one complex transform of u + i v each way) against
// the plain transforms: the inputs of a random vorticity (velocity_inputs), the products'
// transforms unpacked into half spectra (natural_products), and the CFL maximum; even and odd
// sizes, with the 2/3 rule and without, both precisions. Buffers that are not pairs take the
// real transforms, as do the advective form and the row kernel where it runs.
template <class Real>
void check_complex_pairs(Backend<Real>* fused, Backend<Real>* plain, double tol) {
  using C = Complex<Real>;
  for (bool cfl : {true, false}) {
    SCOPED_TRACE(cfl ? "with the CFL maximum" : "without");
    std::vector<std::vector<C>> out[2];
    Real maxima[2];
    int side = 0;
    for (Backend<Real>* b : {fused, plain}) {
      Buffer<C> w = b->spectral_field(), a, bb;
      Buffer<Real> u, v;
      b->spectral_pair(a, bb);
      b->real_pair(u, v);
      b->fill_modes(McWilliamsModes<Real>{8, 5, b->grid().ny}, w);
      b->velocity_inputs(w, a, bb);
      b->nonlinear_products(false, cfl, a, bb, nullptr, nullptr, u, v, nullptr, nullptr);
      maxima[side] = cfl ? b->cfl_maximum() : Real(0);
      b->natural_products(a, bb, u, v);
      for (Buffer<C>* x : {&a, &bb}) {
        b->apply_mask(*x);
        out[side].emplace_back();
        b->to_host(*x, out[side].back());
      }
      ++side;
    }
    if (cfl) EXPECT_NEAR(double(maxima[0]), double(maxima[1]), tol * double(maxima[1]));
    for (int q = 0; q < 2; ++q) {
      double diff = 0, scale = 0;
      for (std::size_t k = 0; k < out[1][q].size(); ++k) {
        const C x = out[0][q][k], y = out[1][q][k];
        diff = std::max(diff, std::hypot(double(x.re) - double(y.re), double(x.im) - double(y.im)));
        scale = std::max(scale, std::hypot(double(y.re), double(y.im)));
      }
      EXPECT_GT(scale, 0.0);
      EXPECT_LE(diff, tol * scale) << "product " << q;
    }
  }
}

TEST(FusedTransforms, ComplexPairsMatchThePlainTransforms) {
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  for (auto [nx, ny] : {std::pair{96, 72}, std::pair{45, 30}, std::pair{64, 81}, std::pair{256, 128}})
    for (Dealias rule : {Dealias::TwoThirds, Dealias::None}) {
      SCOPED_TRACE(std::to_string(nx) + " x " + std::to_string(ny) +
                   (rule == Dealias::TwoThirds ? ", 2/3 rule" : ", no rule"));
      const Grid g(nx, ny, 2 * M_PI, 3.0, rule);
      for (const char* level : {"off", "store", "all"}) {
        SCOPED_TRACE(std::string("callbacks ") + level);
        check_complex_pairs<double>(gpu_backend<double>(g, "complex-pairs", level).get(),
                                    gpu_backend<double>(g, "plain", "off").get(), 1e-13);
        check_complex_pairs<float>(gpu_backend<float>(g, "complex-pairs", level).get(),
                                   gpu_backend<float>(g, "plain", "off").get(), 4e-6);
      }
    }
  // Fields that are not pairs: the real transforms (check_fused_products' buffers).
  const Grid g(96, 72, 2 * M_PI, 3.0, Dealias::TwoThirds);
  check_fused_products<double>(g, gpu_backend<double>(g, "complex-pairs", "off").get(),
                               gpu_backend<double>(g, "plain", "off").get(), false, false, 1e-13);
  // The advective form has none: asking for them is refused.
  auto advective = make_backend<double>(BackendKind::Cuda, Grid(64, 64, 1.0, 1.0));
  EXPECT_THROW(advective->prepare_step(step_request_from("complex-pairs", "auto"), false), InputError);
}

//! The CPU backend with its evaluation row by row (run.step_transforms: rows) or with the whole
//! field's transforms (plain), on `threads` threads.
template <class Real>
std::unique_ptr<Backend<Real>> cpu_backend(const Grid& g, bool rows, int threads = 0) {
  auto b = planned_backend<Real>(BackendKind::Cpu, g, rows ? "rows" : "plain", "auto", true, threads);
  EXPECT_TRUE(b);
  return b;
}

TEST(FusedTransforms, CpuRowsMatchTheWholeFieldTransforms) {
  const Grid g(96, 72, 2 * M_PI, 3.0, Dealias::TwoThirds);
  for (int threads : {1, 5})  // 5: rows split unevenly
    for (bool advective : {false, true}) {
      SCOPED_TRACE(std::to_string(threads) + " threads" + (advective ? ", advective" : ", basdevant"));
      check_fused_products<double>(g, cpu_backend<double>(g, true, threads).get(),
                                   cpu_backend<double>(g, false, threads).get(), false, advective, 1e-13);
      check_fused_products<float>(g, cpu_backend<float>(g, true, threads).get(),
                                  cpu_backend<float>(g, false, threads).get(), false, advective, 2e-6);
    }
}

// The same turbulent run on the CPU with the whole field's transforms and row by row, in both
// forms, on one thread and on three (the rows split among them), with the 2/3 rule (without
// it nothing is pruned and the rows are not used).
TEST(SolverCpu, RowByRowRunAgrees) {
  for (const char* form : {"basdevant", "advective"}) {
    SCOPED_TRACE(form);
    const Config c = deck(std::string("grid: {nx: 256, ny: 192, ly: 4.0, nonlinear: ") + form +
                          "}\nphysics: {nu: 5e-4}\ninitial: {type: random, k0: 6, seed: 4}\ntime: {cfl: 0.5}\n");
    std::vector<std::vector<double>> w;
    std::vector<double> t;
    for (auto [rows, threads] : {std::pair{false, 1}, std::pair{true, 1}, std::pair{true, 3}})
      turbulent_run(*cpu_backend<double>(c.make_grid(), rows, threads), c, w, t);
    for (std::size_t k = 1; k < w.size(); ++k) {
      EXPECT_LT(rel_l2(w[k], w[0]), 1e-12) << "variant " << k;
      EXPECT_NEAR(t[k], t[0], 1e-12 * t[0]) << "the CFL steps differ: variant " << k;
    }
  }
}

//! The plan a backend makes of a request and carries out, as values: auto as the tuning table
//! gives it on this device (the table's own cases are in test_step_plan.cpp), a named strategy
//! as asked.
TEST(FusedTransforms, PlansAreMadeAsValues) {
  const StepPlan not_made{StepStrategy::Plain, CallbackLevel::Off, false, ""};
  {  // the CPU: row by row under the 2/3 rule from 256^2 points (auto)
    auto cpu = make_backend<double>(BackendKind::Cpu, Grid(16, 16, 1.0, 1.0));
    EXPECT_EQ(cpu->step_plan(), not_made);
    EXPECT_EQ(cpu->step_plan().why, "not made yet");
    EXPECT_EQ(cpu->prepare_step({}), not_made);
    auto large = make_backend<float>(BackendKind::Cpu, Grid(256, 256, 1.0, 1.0), 0, 1, FftPlanning::Estimate);
    const StepPlan rows = large->prepare_step({});
    EXPECT_EQ(rows, (StepPlan{StepStrategy::CpuRows, CallbackLevel::Off, false, ""}));
    EXPECT_EQ(describe(rows), "pruned, row by row (auto, from 256^2 points; estimated plans)");
    EXPECT_EQ(large->step_plan(), rows);
    EXPECT_EQ(large->prepare_step(step_request_from("plain", "off")), rows) << "a backend plans once";
    auto none = make_backend<double>(BackendKind::Cpu, Grid(256, 256, 1.0, 1.0, Dealias::None));
    EXPECT_EQ(none->prepare_step({}), not_made);
    auto bad = make_backend<double>(BackendKind::Cpu, Grid(16, 16, 1.0, 1.0));
    EXPECT_THROW(bad->prepare_step(step_request_from("auto", "store")), InputError);
    EXPECT_THROW(bad->prepare_step(step_request_from("pruned", "auto")), InputError);
  }
  CASCADE_SKIP_IF_UNAVAILABLE(BackendKind::Cuda);
  const Grid g(16, 16, 1.0, 1.0);
  auto plan = [](StepStrategy s, CallbackLevel l, bool batched) { return StepPlan{s, l, batched, ""}; };
  // Every strategy and level, asked for, is made (planned_backend checks it).
  for (const char* transforms : kGpuTransforms)
    for (const char* level : {"off", "store", "all"}) {
      gpu_backend<double>(g, transforms, level);
      gpu_backend<float>(g, transforms, level);
    }
  // auto: by size and precision.
  auto small = make_backend<double>(BackendKind::Cuda, g);
  EXPECT_EQ(small->step_plan().why, "not made yet");
  EXPECT_EQ(small->prepare_step({}), plan(StepStrategy::Plain, CallbackLevel::Off, true));
  EXPECT_EQ(make_backend<float>(BackendKind::Cuda, g)->prepare_step({}),
            plan(StepStrategy::Plain, CallbackLevel::Off, true));
  // Larger grids (plans made, no fields): what auto makes of them.
  auto auto_plan = [](auto precision, int nx, int ny, bool basdevant = true) {
    using Real = decltype(precision);
    return make_backend<Real>(BackendKind::Cuda, Grid(nx, ny, 1.0, 1.0))->prepare_step({}, basdevant);
  };
  EXPECT_EQ(auto_plan(0.0, 8192, 2560), plan(StepStrategy::Rows, CallbackLevel::Off, false));
  EXPECT_EQ(auto_plan(0.0, 16384, 4608), plan(StepStrategy::Plain, CallbackLevel::All, false));
  // One grid from 2048^2 to 8192^2: rows and columns where the column kernel's tiles split over
  // pairs of blocks (clusters, compute capability 9.0), else the row products.
  bool pairs = false;
#if defined(CASCADE_HAVE_CUDA)
  pairs = cuda_devices().at(0).major >= 9;
#endif
  EXPECT_EQ(auto_plan(0.0, 4096, 2048), plan(pairs ? StepStrategy::RowsColumns : StepStrategy::Rows,
                                             CallbackLevel::Off, false));
  EXPECT_EQ(auto_plan(0.0f, 8192, 4096), plan(pairs ? StepStrategy::RowsColumns : StepStrategy::Rows,
                                              CallbackLevel::Off, false));
  EXPECT_EQ(auto_plan(0.0, 256, 256), plan(StepStrategy::RowsColumns, CallbackLevel::Off, false));
  EXPECT_EQ(auto_plan(0.0f, 512, 512), plan(StepStrategy::Plain, CallbackLevel::Off, true));
  // The advective form has no row kernel, and keeps the transforms auto gives it without.
  EXPECT_EQ(auto_plan(0.0, 8192, 2560, false), plan(StepStrategy::Plain, CallbackLevel::Store, false));
  EXPECT_EQ(auto_plan(0.0, 4096, 2048, false), plan(StepStrategy::Pruned, CallbackLevel::Off, true));
}

// ---------------------------------------------------------------- complex pairs

//! The full spectrum of the pair (a, b) of real fields' half spectra: P(c, j) = A + i B at
//! kx = c, A(nx - c, -j) conjugated past nx/2 (the definition, written here on its own).
template <class Real>
std::vector<Complex<Real>> full_pair(int nx, int ny, const std::vector<Complex<Real>>& a,
                                     const std::vector<Complex<Real>>& b) {
  const int nxh = nx / 2 + 1;
  std::vector<Complex<Real>> p(std::size_t(nx) * ny);
  for (int j = 0; j < ny; ++j)
    for (int c = 0; c < nx; ++c) {
      const bool half = c < nxh;
      const std::size_t h = half ? std::size_t(j) * nxh + c : std::size_t((ny - j) % ny) * nxh + (nx - c);
      const std::complex<double> x(a[h].re, half ? a[h].im : -a[h].im), y(b[h].re, half ? b[h].im : -b[h].im);
      const std::complex<double> z = x + std::complex<double>(0, 1) * y;
      p[std::size_t(j) * nx + c] = {Real(z.real()), Real(z.imag())};
    }
  return p;
}

//! A half spectrum of a real field: random, with the columns kx = 0 (and kx = nx/2) Hermitian
//! in ky, and zero where `mask` removes modes when `masked`.
std::vector<Complex<double>> random_half(const SpectralShape<double>& s, const DealiasMask<double>& mask,
                                         unsigned seed, bool masked) {
  std::vector<Complex<double>> h(std::size_t(s.ny) * s.nxh);
  unsigned state = seed;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return double(state >> 8) / double(1u << 24) - 0.5;
  };
  for (auto& x : h) x = {next(), next()};
  for (int i : {0, s.nx / 2}) {
    if (i != 0 && 2 * i != s.nx) continue;
    for (int j = 0; j < s.ny; ++j) {
      const int jm = (s.ny - j) % s.ny;
      Complex<double>& x = h[std::size_t(j) * s.nxh + i];
      if (jm == j) x.im = 0;
      else if (j > jm) x = {h[std::size_t(jm) * s.nxh + i].re, -h[std::size_t(jm) * s.nxh + i].im};
    }
  }
  if (masked)
    for (std::size_t idx = 0; idx < h.size(); ++idx) {
      int i, j;
      s.mode(idx, i, j);
      if (!mask.keep(s, i, j)) h[idx] = {0, 0};
    }
  return h;
}

// A stage as complex pairs (PackedStage: the products' transforms read from the full layout
// of u v + i (v^2 - u^2), the next inputs written as u + i v) against FusedStage on the two
// half spectra: the same state, the same inputs element for element (every one of the nx ny,
// the removed modes' zeros and the mirrors past nx/2 too), the same budget sums; even and odd
// sizes, with the 2/3 rule and without, classic and low-storage, a middle and a last stage.
// Run on the host, one mode after another; the GPU runs it in parallel in the solver tests.
TEST(ComplexPairs, StageMatchesTheHalfSpectra) {
  const double two_pi = 2 * M_PI;
  for (auto [nx, ny] : {std::pair{12, 10}, std::pair{9, 7}, std::pair{16, 9}, std::pair{10, 16}})
    for (bool two_thirds : {true, false})
      for (bool classic : {true, false})
        for (bool last : {false, true}) {
          SCOPED_TRACE(std::to_string(nx) + " x " + std::to_string(ny) + (two_thirds ? ", 2/3" : ", no rule") +
                       (classic ? ", classic" : ", low storage") + (last ? ", last stage" : ""));
          const int nxh = nx / 2 + 1;
          const SpectralShape<double> s{nx, ny, nxh, two_pi / 2.0, two_pi / 3.0, 1.0 / nxh, 0, false, 1.0 / ny};
          const DealiasMask<double> mask{two_thirds};
          const LinearOperator<double> lin{LinearCoefficients{1e-2, 1, 0.1, 1e-3, 1, 0.7}};
          auto S1 = random_half(s, mask, 1, true), S2 = S1;
          auto W1 = random_half(s, mask, 2, true), W2 = W1;
          const auto F = random_half(s, mask, 3, true);
          auto A = random_half(s, mask, 4, false), B = random_half(s, mask, 5, false);
          std::vector<Complex<double>> P = full_pair(nx, ny, A, B);
          P.resize(2 * S1.size());  // a spectral pair's memory
          const double scale = 1.0 / (nx * ny);
          FusedStage<double> natural{s,    mask, lin,   scale, false, 0.01, 0.5,    1.0 / 6, last, 1.0, 0.5, 0.5, 0.5,
                                     classic, false, F.data(), classic ? W1.data() : nullptr, S1.data(), A.data(),
                                     B.data(), nullptr, nullptr};
          FusedStage<double> core = natural;
          core.W = classic ? W2.data() : nullptr;
          core.S = S2.data();
          core.A = P.data();
          core.B = nullptr;
          const SpectralSumsOfMode<double> sums1{s, lin, S1.data(), F.data()}, sums2{s, lin, S2.data(), F.data()};
          const PackedStage<double> packed{core, sums2, true};
          const FusedStageWithSums<double> with_sums{natural, sums1};
          SpectralSums r1{}, r2{};
          for (std::size_t idx = 0; idx < S1.size(); ++idx) r1 = r1 + with_sums(idx);
          for (std::size_t idx = 0; idx < S2.size(); ++idx) r2 = r2 + packed(idx);
          auto max_diff = [](const std::vector<Complex<double>>& x, const std::vector<Complex<double>>& y,
                             std::size_t n) {
            double d = 0, m = 0;
            for (std::size_t k = 0; k < n; ++k) {
              d = std::max(d, std::hypot(x[k].re - y[k].re, x[k].im - y[k].im));
              m = std::max(m, std::hypot(y[k].re, y[k].im));
            }
            return m > 0 ? d / m : d;
          };
          EXPECT_LE(max_diff(S2, S1, S1.size()), 1e-14);
          if (classic) EXPECT_LE(max_diff(W2, W1, W1.size()), 0.0);
          const std::vector<Complex<double>> expect = full_pair(nx, ny, A, B);
          EXPECT_LE(max_diff(P, expect, expect.size()), 1e-14);
          for (double SpectralSums::*f : {&SpectralSums::energy, &SpectralSums::enstrophy, &SpectralSums::diss_z,
                                          &SpectralSums::inj})
            EXPECT_NEAR(r2.*f, r1.*f, 1e-13 * std::abs(r1.*f));
          EXPECT_GT(r1.energy, 0.0);
        }
}

// The budget's sums row by row (KeptSums::at, as cuda_launch::row_sum_kernel takes them where
// a column kernel's tiles span several blocks) against the flat sum of the sums at the kept
// modes (as FusedStageWithSums and the column kernel add them): the same bits in the same
// order, over every column or over the kept columns of the rows KeptSums::row_kept visits alone
// (the removed ones add zeros; a row it skips has no kept mode), for the
// second member of a buffer of two as for the first; the state and forcing are not zero at the
// removed modes, which neither sum reads.
TEST(KeptSums, RowByRowIsTheFlatSum) {
  for (auto [nx, ny] : {std::pair{12, 10}, std::pair{9, 7}, std::pair{16, 9}})
    for (bool two_thirds : {true, false}) {
      SCOPED_TRACE(std::to_string(nx) + " x " + std::to_string(ny) + (two_thirds ? ", 2/3" : ", no rule"));
      const int nxh = nx / 2 + 1;
      const SpectralShape<double> s{nx, ny, nxh, 2 * M_PI / 2.0, 2 * M_PI / 3.0, 1.0 / nxh, 0, false, 1.0 / ny};
      const DealiasMask<double> mask{two_thirds};
      const LinearCoefficients c{1e-2, 2, 0.1, 1e-3, 1, 0.7};
      const auto S0 = random_half(s, mask, 11, false), S1 = random_half(s, mask, 12, false);
      const auto F0 = random_half(s, mask, 13, false), F1 = random_half(s, mask, 14, false);
      std::vector<Complex<double>> S = S0, F = F0;  // two members, one after the other
      S.insert(S.end(), S1.begin(), S1.end());
      F.insert(F.end(), F1.begin(), F1.end());
      const KeptSums<double> rows{mask, {s, LinearOperator<double>{c}, S.data(), F.data()}};
      const int kept = two_thirds ? two_thirds_band(nx) + 1 : nxh;
      for (int m : {0, 1}) {
        const SpectralSumsOfMode<double> flat{s, LinearOperator<double>{c}, m ? S1.data() : S0.data(),
                                              m ? F1.data() : F0.data()};
        SpectralSums expect{}, all{}, band{};
        for (std::size_t idx = 0; idx < S0.size(); ++idx) {
          int i, j;
          s.mode(idx, i, j);
          if (mask.keep(s, i, j)) expect = expect + flat(idx);
        }
        for (int j = 0; j < ny; ++j) {
          for (int i = 0; i < nxh; ++i) all = all + rows.at(i, j, m);
          if (!rows.row_kept(j)) {  // the kernel skips the row: nothing of it is kept
            for (int i = 0; i < nxh; ++i) EXPECT_FALSE(mask.keep(s, i, j)) << i << ", " << j;
            continue;
          }
          for (int i = 0; i < kept; ++i) band = band + rows.at(i, j, m);
        }
        for (double SpectralSums::*f :
             {&SpectralSums::energy, &SpectralSums::enstrophy, &SpectralSums::palinstrophy, &SpectralSums::diss_nu,
              &SpectralSums::diss_mu, &SpectralSums::diss_alpha, &SpectralSums::diss_z, &SpectralSums::inj,
              &SpectralSums::inj_z, &SpectralSums::f2, &SpectralSums::f2_z}) {
          EXPECT_EQ(all.*f, expect.*f);
          EXPECT_EQ(band.*f, expect.*f);
        }
        EXPECT_GT(expect.energy, 0.0);
        EXPECT_GT(expect.diss_alpha, 0.0);
      }
    }
}

// A stage's fields on an nx x ny half spectrum under the 2/3 rule, for the tests of the stage at
// the modes of a tile of columns: S, W, the forcing and the products' transforms at random, and
// an operator with every term (viscosity of order 2, friction, hypoviscosity, beta).
struct StageFields {
  int nx, ny, nxh;
  SpectralShape<double> s;
  DealiasMask<double> mask{true};
  LinearOperator<double> lin{LinearCoefficients{1e-2, 2, 0.1, 1e-3, 1, 0.7}};
  std::vector<Complex<double>> F, S0, W0, A0, B0;
  //! What a stage writes: S, W and the work fields, from the same start in every run.
  struct Run {
    std::vector<Complex<double>> S, W, A, B;
  };
  StageFields(int nx_, int ny_)
      : nx(nx_),
        ny(ny_),
        nxh(nx_ / 2 + 1),
        s{nx, ny, nxh, 2 * M_PI / 2.0, 2 * M_PI / 3.0, 1.0 / nxh, 0, false, 1.0 / ny},
        F(random_half(s, mask, 3, true)),
        S0(random_half(s, mask, 1, true)),
        W0(random_half(s, mask, 2, true)),
        A0(random_half(s, mask, 4, false)),
        B0(random_half(s, mask, 5, false)) {}
  Run run() const { return {S0, W0, A0, B0}; }
  //! The stage of these times on r (W: classic tables; the forcing where forced).
  FusedStage<double> stage_on(Run& r, const StageCoefficients& c, bool classic, bool save_w, bool forced) const {
    return FusedStage<double>{s,          mask,       lin,       1.0 / (nx * ny), false,   c.h,
                              c.dS,       c.hb,       c.last,    c.d_final,       c.dW,    c.dK,
                              c.ha,       save_w,     false,     forced ? F.data() : nullptr,
                              classic ? r.W.data() : nullptr,    r.S.data(),      r.A.data(),
                              r.B.data(), nullptr,    nullptr};
  }
  //! The flat stage (FusedStage, as the CPU takes it) at every mode.
  static void flat(const FusedStage<double>& stage, std::size_t size) {
    for (std::size_t idx = 0; idx < size; ++idx) stage(idx);
  }
  //! f (a StageOfColumns, or its functor of a shape) at every mode, as the phase of each mode
  //! takes a tile: its reads, then the stage.
  template <class Fn>
  void columns(const Fn& f, Run& r) const {
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nxh; ++i) {
        const std::size_t idx = std::size_t(j) * nxh + i;
        const auto x = f.ahead(i, j);
        f(i, j, r.A[idx], r.B[idx], x);
      }
  }
  //! Whether the runs wrote the same bits.
  static void expect_same(const Run& x, const Run& y) {
    const auto same = [](const std::vector<Complex<double>>& a, const std::vector<Complex<double>>& b,
                         const char* what) {
      for (std::size_t k = 0; k < a.size(); ++k)
        ASSERT_TRUE(a[k].re == b[k].re && a[k].im == b[k].im) << what << ", index " << k;
    };
    same(x.S, y.S, "S");
    same(x.W, y.W, "W");
    same(x.A, y.A, "u");
    same(x.B, y.B, "v");
  }
};

// The stage at the modes of a tile of columns (StageOfColumns, as the column kernels take it)
// with its propagators computed with the reads (early_propagators: ahead() computes them) and
// without (the stage computes them as it goes), against the flat stage (FusedStage, as the CPU
// takes it): the same bits in S, W and the next inputs, on stages whose propagators are 1, one
// exponential, a repeated one and a square, with beta, the forcing and the classic tables.
TEST(StageOfColumns, PropagatorsWithTheReadsGiveTheSameBits) {
  struct Taus {
    double dS, dK, dW, d_final;
    bool last, save_w;
  };
  const Taus stages[] = {{0.0, 0.5, 0.5, 0.0, false, true},
                         {0.5, 0.0, 0.5, 0.0, false, false},
                         {0.5, 1.0, 1.0, 0.0, false, false},
                         {0.5, 0.5, 0.0, 0.5, true, false}};
  for (auto [nx, ny] : {std::pair{12, 10}, std::pair{16, 9}})
    for (bool classic : {true, false})
      for (const Taus& t : stages) {
        SCOPED_TRACE(std::to_string(nx) + " x " + std::to_string(ny) + (classic ? ", classic" : ", low storage") +
                     ", dS " + std::to_string(t.dS) + (t.last ? ", last" : ""));
        const StageFields f(nx, ny);
        StageCoefficients c;
        c.h = 0.01, c.dS = t.dS, c.hb = 1.0 / 6, c.last = t.last, c.d_final = t.d_final, c.dW = t.dW, c.dK = t.dK,
        c.ha = 0.5;
        StageFields::Run flat = f.run();
        StageFields::flat(f.stage_on(flat, c, classic, classic && t.save_w, true), f.S0.size());
        for (bool early : {false, true}) {
          SCOPED_TRACE(early ? "propagators with the reads" : "propagators in the stage");
          StageFields::Run tile = f.run();
          StageOfColumns<double> op{f.stage_on(tile, c, classic, classic && t.save_w, true),
                                    SpectralSumsOfMode<double>{f.s, f.lin, tile.S.data(), f.F.data()}, false, 0, 0};
          op.early_propagators = early;
          f.columns(op, tile);
          StageFields::expect_same(tile, flat);
        }
        double moved = 0;  // the stage did something
        for (std::size_t k = 0; k < f.S0.size(); ++k) moved = std::max(moved, std::abs(flat.S[k].re - f.S0[k].re));
        EXPECT_GT(moved, 0.0);
      }
}

// The stages of rk4 and rk3 as the column kernels run them, each compiled for its shape
// (StageOfColumns::with_shape, FusedStage::shaped): each stage has the shape the table says, and
// gives the flat stage's bits in S, W and the next inputs, with its propagators early and not,
// with beta, hypoviscosity and the forcing. Stages of no listed shape run as they are.
TEST(StageOfColumns, ShapesGiveTheSameBits) {
  const StageFields f(16, 12);
  int first = 1;  // the tables' stages are kStageShapes in this order
  for (const IfRkTable* table : {&rk4_table(), &rk3_table()}) {
    const bool classic = !table->low_storage;
    for (const StageCoefficients& c : stage_coefficients(*table, 0.0125))
      for (bool forced : {false, true}) {
        SCOPED_TRACE(table->name + ", stage " + std::to_string(c.stage) + (forced ? ", forced" : ""));
        const bool save_w = classic && c.stage == 0;
        StageFields::Run flat = f.run();
        const FusedStage<double> natural = f.stage_on(flat, c, classic, save_w, forced);
        ASSERT_EQ(natural.shape(), first + c.stage);
        StageFields::flat(natural, f.S0.size());
        for (bool early : {false, true}) {
          SCOPED_TRACE(early ? "propagators with the reads" : "propagators in the stage");
          StageFields::Run tile = f.run();
          StageOfColumns<double> op{f.stage_on(tile, c, classic, save_w, forced),
                                    SpectralSumsOfMode<double>{f.s, f.lin, tile.S.data(), f.F.data()}, false, 0, 0};
          op.early_propagators = early;
          op.shape = op.stage.shape();
          bool shaped = false;
          op.with_shape([&](const auto& fn) {
            shaped = !std::is_same_v<std::decay_t<decltype(fn)>, StageOfColumns<double>>;
            f.columns(fn, tile);
            return column_fft::NoSums{};
          });
          EXPECT_TRUE(shaped);
          StageFields::expect_same(tile, flat);
        }
      }
    first += table->stages();
  }
  EXPECT_EQ(first, kStageShapeCount + 1);
  // Stages of no listed shape: a second exponential squared, the last stage's propagator
  // repeated, the advective form.
  StageFields::Run r = f.run();
  StageCoefficients odd = stage_coefficients(rk4_table(), 0.0125)[2];
  odd.dS = 0.5, odd.dK = 0.75, odd.dW = 1.5;
  EXPECT_EQ(f.stage_on(r, odd, true, false, false).shape(), 0);  // S: X, K: Y, W: Y squared
  StageCoefficients last = stage_coefficients(rk4_table(), 0.0125)[3];
  last.d_final = last.dS;
  EXPECT_EQ(f.stage_on(r, last, true, false, false).shape(), 0);
  FusedStage<double> advective = f.stage_on(r, stage_coefficients(rk4_table(), 0.0125)[1], true, false, false);
  EXPECT_EQ(advective.shape(), 2);
  advective.advective = true;
  EXPECT_EQ(advective.shape(), 0);
}

// The evaluation's inputs as a pair (PackedVelocity) and the products back as half spectra
// (UnpackPair) against their definitions.
TEST(ComplexPairs, VelocityAndUnpackMatchTheHalfSpectra) {
  for (auto [nx, ny] : {std::pair{12, 10}, std::pair{9, 7}}) {
    const int nxh = nx / 2 + 1;
    const SpectralShape<double> s{nx, ny, nxh, 1.0, 2.0, 1.0 / nxh, 0, false, 1.0 / ny};
    const DealiasMask<double> mask{true};
    const auto w = random_half(s, mask, 7, true);
    std::vector<Complex<double>> u(w.size()), v(w.size()), P(std::size_t(nx) * ny);
    const double scale = 0.25;
    for (std::size_t idx = 0; idx < w.size(); ++idx) {
      VelocityFromVorticity<double>{s, scale, w.data(), u.data(), v.data()}(idx);
      PackedVelocity<double>{s, scale, w.data(), P.data()}(idx);
    }
    const auto expect = full_pair(nx, ny, u, v);
    for (std::size_t k = 0; k < P.size(); ++k) {
      EXPECT_NEAR(P[k].re, expect[k].re, 1e-15) << k;
      EXPECT_NEAR(P[k].im, expect[k].im, 1e-15) << k;
    }
    const auto A = random_half(s, mask, 8, false), B = random_half(s, mask, 9, false);
    const auto Q = full_pair(nx, ny, A, B);
    std::vector<Complex<double>> a(A.size()), b(B.size());
    for (std::size_t idx = 0; idx < a.size(); ++idx) UnpackPair<double>{s, Q.data(), a.data(), b.data()}(idx);
    for (std::size_t k = 0; k < a.size(); ++k) {
      EXPECT_NEAR(a[k].re, A[k].re, 1e-15) << k;
      EXPECT_NEAR(a[k].im, A[k].im, 1e-15) << k;
      EXPECT_NEAR(b[k].re, B[k].re, 1e-15) << k;
      EXPECT_NEAR(b[k].im, B[k].im, 1e-15) << k;
    }
  }
}

// The CFL speed from Basdevant's products alone (PackedProductsSpeed: the complex pairs'
// inverse transform leaves u v + i (v^2 - u^2), not u and v) against |u|/dx + |v|/dy: either
// sign, one component zero or 1e-12 of the other (where the naive (r - q) / 2 cancels), NaN.
template <class Real>
void check_speed_from_products(double tol) {
  const CflSpeed<Real> speed{Real(3.0), Real(0.5)};
  const double values[] = {0.0, 1e-12, -3e-7, 0.25, -1.0, 1.7, -42.0, 1e6};
  for (double a : values)
    for (double b : values) {
      const Real u = Real(a), v = Real(b);
      const Complex<Real> w = {u * v, v * v - u * u};
      const double got = double(PackedProductsSpeed<Real>{speed, &w}(0));
      const double want = std::abs(double(u)) * 3.0 + std::abs(double(v)) * 0.5;
      EXPECT_NEAR(got, want, tol * want) << "u " << a << ", v " << b;
    }
  const Complex<Real> nan = {Real(NAN), Real(1)};
  EXPECT_TRUE(std::isnan(double(PackedProductsSpeed<Real>{speed, &nan}(0))));
  const Complex<Real> nan2 = {Real(1), Real(NAN)};
  EXPECT_TRUE(std::isnan(double(PackedProductsSpeed<Real>{speed, &nan2}(0))));
}

TEST(ComplexPairs, CflSpeedFromTheProducts) {
  check_speed_from_products<double>(1e-15);
  check_speed_from_products<float>(1e-6);
}

}  // namespace
}  // namespace cascade
