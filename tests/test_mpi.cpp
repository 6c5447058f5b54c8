//! @file Slab-decomposed CPU backend (MPI) against the whole-grid CPU backend, operation by
//! operation. Run under mpirun with 1, 2, 4 ranks (tests/CMakeLists.txt): every rank builds
//! both backends; fields go in whole on every rank (from_host) and come out whole on rank 0
//! (to_host gathers there), where each result is compared with the single-process one;
//! reductions are compared on every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cascade/backend.hpp"
#include "cascade/config.hpp"
#include "cascade/error.hpp"
#include "cascade/parallel.hpp"
#include "cascade/solver.hpp"

using namespace cascade;

namespace {

// A grid whose spectral columns (nx/2+1 = 41) and rows (36) split unevenly over 2 and 4 ranks.
const Grid kGrid(80, 36, 2 * M_PI, 3.0);

//! Why this kind of slab backend cannot be tested here ("" when it can).
std::string unavailable(BackendKind kind) {
  if (kind == BackendKind::Cuda) {
    const std::string why = cuda_unavailable_reason();
    if (!why.empty()) return why;
#if defined(CASCADE_HAVE_CUDA)
    if (parallel::ranks_on_this_node() > cuda_device_count())
      return std::to_string(parallel::ranks_on_this_node()) + " ranks on this machine, " +
             std::to_string(cuda_device_count()) + " GPUs: one rank per GPU";
#endif
  }
  if (parallel::size() > 1 && !slabs_built(kind)) return std::string("no ") + to_string(kind) + " slabs in this build";
  return "";
}

//! The whole grid on one device (this rank's GPU), and this rank's slab of it.
std::unique_ptr<Backend<double>> whole_backend(BackendKind kind) {
#if defined(CASCADE_HAVE_CUDA)
  if (kind == BackendKind::Cuda) return make_cuda_backend<double>(kGrid, parallel::rank_on_this_node() % cuda_device_count());
#endif
  return make_cpu_backend<double>(kGrid, 1);
}
std::unique_ptr<Backend<double>> slab_backend(BackendKind kind) {
  return parallel::size() > 1 ? make_backend<double>(kind, kGrid, 0, 1, FftPlanning::Estimate) : whole_backend(kind);
}

std::vector<double> random_field(unsigned seed) {
  std::mt19937_64 gen(seed);  // the same on every rank
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> f(kGrid.size());
  for (auto& x : f) x = u(gen);
  return f;
}

template <class T>
double max_abs(const std::vector<T>& a);
template <>
double max_abs(const std::vector<double>& a) {
  double m = 0;
  for (double x : a) m = std::max(m, std::abs(x));
  return m;
}
template <>
double max_abs(const std::vector<Complex<double>>& a) {
  double m = 0;
  for (const auto& c : a) m = std::max(m, std::hypot(c.re, c.im));
  return m;
}
// Gathered fields are compared on rank 0 (the others hold none).
double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (!parallel::root()) return 0;
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (std::size_t k = 0; k < a.size() && k < b.size(); ++k) m = std::max(m, std::abs(a[k] - b[k]));
  return m;
}
double max_diff(const std::vector<Complex<double>>& a, const std::vector<Complex<double>>& b) {
  if (!parallel::root()) return 0;
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (std::size_t k = 0; k < a.size() && k < b.size(); ++k)
    m = std::max(m, std::hypot(a[k].re - b[k].re, a[k].im - b[k].im));
  return m;
}

//! The spectrum of a random real field on both backends.
struct Pair {
  std::unique_ptr<Backend<double>> whole, slab;
  Buffer<double> rw, rs;
  Buffer<Complex<double>> hw, hs;
  Pair(BackendKind kind, unsigned seed)
      : whole(whole_backend(kind)), slab(slab_backend(kind)), rw(whole->real_field()), rs(slab->real_field()),
        hw(whole->spectral_field()), hs(slab->spectral_field()) {
    const auto f = random_field(seed);
    whole->from_host(f, rw);
    slab->from_host(f, rs);
    whole->forward(rw, hw);
    slab->forward(rs, hs);
  }
  std::vector<Complex<double>> spectra(bool from_slab) {
    std::vector<Complex<double>> h;
    (from_slab ? slab->to_host(hs, h) : whole->to_host(hw, h));
    return h;
  }
};

class MpiSlabs : public ::testing::TestWithParam<BackendKind> {
 protected:
  void SetUp() override {
    const std::string why = unavailable(GetParam());
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

}  // namespace

INSTANTIATE_TEST_SUITE_P(Backends, MpiSlabs, ::testing::Values(BackendKind::Cpu, BackendKind::Cuda),
                         [](const ::testing::TestParamInfo<BackendKind>& i) { return std::string(to_string(i.param)); });

TEST_P(MpiSlabs, SlabsCoverTheGrid) {
  auto b = slab_backend(GetParam());
  const Slab s = b->slab();
  int rows = s.rows, cols = s.cols;
  std::vector<Slab> all(std::size_t(parallel::size()));
  parallel::allgather(&s, sizeof(Slab), all.data());
  int next_row = 0, next_col = 0;
  for (const Slab& t : all) {
    EXPECT_EQ(t.j0, next_row);
    EXPECT_EQ(t.i0, next_col);
    EXPECT_GT(t.rows, 0);
    EXPECT_GT(t.cols, 0);
    next_row += t.rows;
    next_col += t.cols;
  }
  EXPECT_EQ(next_row, kGrid.ny);
  EXPECT_EQ(next_col, kGrid.nxh());
  EXPECT_GT(rows, 0);
  EXPECT_GT(cols, 0);
}

TEST_P(MpiSlabs, TransformsMatchAndRoundTrip) {
  Pair p(GetParam(), 1);
  const auto hw = p.spectra(false), hs = p.spectra(true);
  EXPECT_LE(max_diff(hw, hs), 1e-12 * max_abs(hw));
  // Inverse (scaled by 1/N) returns the field.
  p.slab->scale(p.hs, p.hs, 1.0 / double(kGrid.size()));
  p.slab->inverse(p.hs, p.rs);
  std::vector<double> back;
  p.slab->to_host(p.rs, back);
  EXPECT_LE(max_diff(back, random_field(1)), 1e-13);
}

TEST_P(MpiSlabs, SpectralOperationsMatch) {
  Pair p(GetParam(), 2);
  auto ws = p.slab->spectral_field(), ww = p.whole->spectral_field();
  auto us = p.slab->spectral_field(), uw = p.whole->spectral_field();
  auto check = [&](const char* what) {
    std::vector<Complex<double>> a, b, c, d;
    p.whole->to_host(ww, a);
    p.slab->to_host(ws, b);
    EXPECT_LE(max_diff(a, b), 1e-12 * std::max(max_abs(a), 1e-300)) << what;
    p.whole->to_host(uw, c);
    p.slab->to_host(us, d);
    EXPECT_LE(max_diff(c, d), 1e-12 * std::max(max_abs(c), 1e-300)) << what;
  };
  p.whole->derivative(p.hw, ww, 1, 2);
  p.slab->derivative(p.hs, ws, 1, 2);
  p.whole->poisson_solve(p.hw, uw);
  p.slab->poisson_solve(p.hs, us);
  check("derivative, poisson");
  p.whole->velocity_hat(p.hw, ww, uw);
  p.slab->velocity_hat(p.hs, ws, us);
  check("velocity");
  p.whole->apply_mask(p.hw);
  p.slab->apply_mask(p.hs);
  EXPECT_LE(max_diff(p.spectra(false), p.spectra(true)), 1e-12 * max_abs(p.spectra(false))) << "mask";
  p.whole->fill_modes(RingModes<double>{8.0, 1.5, 2.0, 7, 11, kGrid.ny}, ww);
  p.slab->fill_modes(RingModes<double>{8.0, 1.5, 2.0, 7, 11, kGrid.ny}, ws);
  p.whole->fill_modes(McWilliamsModes<double>{5.0, 3, kGrid.ny}, uw);
  p.slab->fill_modes(McWilliamsModes<double>{5.0, 3, kGrid.ny}, us);
  check("ring forcing, random vorticity");

  const LinearCoefficients lin{1e-3, 1, 0.1, 0.01, 1, 0};
  const SpectralSums a = p.whole->spectral_sums(lin, p.hw, &ww), b = p.slab->spectral_sums(lin, p.hs, &ws);
  EXPECT_NEAR(a.energy, b.energy, 1e-12 * a.energy);
  EXPECT_NEAR(a.enstrophy, b.enstrophy, 1e-12 * a.enstrophy);
  EXPECT_NEAR(a.palinstrophy, b.palinstrophy, 1e-12 * a.palinstrophy);
  EXPECT_NEAR(a.diss_nu, b.diss_nu, 1e-12 * std::abs(a.diss_nu));
  EXPECT_NEAR(a.inj, b.inj, 1e-12 * std::abs(a.inj) + 1e-300);
  EXPECT_NEAR(a.f2, b.f2, 1e-12 * a.f2);

  std::vector<double> sw[4], ss[4];
  p.whole->shell_spectra(p.hw, false, &ww, &uw, 1.0, 30, sw);
  p.slab->shell_spectra(p.hs, false, &ws, &us, 1.0, 30, ss);
  for (int q = 0; q < 4; ++q) EXPECT_LE(max_diff(sw[q], ss[q]), 1e-12 * max_abs(sw[q])) << "shell sum " << q;
}

TEST_P(MpiSlabs, FusedStageAndBudgetMatch) {
  Pair p(GetParam(), 3), q(GetParam(), 4);
  auto as = p.slab->spectral_field(), aw = p.whole->spectral_field();
  auto bs = p.slab->spectral_field(), bw = p.whole->spectral_field();
  std::vector<Complex<double>> h;
  q.whole->to_host(q.hw, h);
  p.whole->from_host(h, aw);
  p.slab->from_host(h, as);
  p.whole->scale(p.hw, bw, 0.5);
  p.slab->scale(p.hs, bs, 0.5);
  p.whole->apply_mask(p.hw);
  p.slab->apply_mask(p.hs);
  const LinearCoefficients lin{1e-3, 1, 0.1, 0, 1, 0};
  StageCoefficients c{};
  c.h = 0.01;
  c.dS = 0.5;
  c.hb = 0.01 / 6;
  c.dK = 0.5;
  c.ha = 0.005;
  const BudgetWeights w{1.0, 0.0, 0.0};
  p.whole->fused_stage(lin, c, false, nullptr, nullptr, false, p.hw, aw, bw, nullptr, nullptr, &w);
  p.slab->fused_stage(lin, c, false, nullptr, nullptr, false, p.hs, as, bs, nullptr, nullptr, &w);
  EXPECT_LE(max_diff(p.spectra(false), p.spectra(true)), 1e-12 * max_abs(p.spectra(false)));
  std::vector<Complex<double>> x, y;
  p.whole->to_host(aw, x);
  p.slab->to_host(as, y);
  EXPECT_LE(max_diff(x, y), 1e-12 * max_abs(x));
  double iw[6], is[6];
  p.whole->budget_integrals(iw);
  p.slab->budget_integrals(is);
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(iw[k], is[k], 1e-12 * std::abs(iw[k]) + 1e-300) << k;
  // A restart sets the integrals: they read back the same on every rank.
  const double set[6] = {1, 2, 3, 4, 5, 6};
  p.slab->set_budget_integrals(set);
  p.slab->budget_integrals(is);
  for (int k = 0; k < 6; ++k) EXPECT_EQ(is[k], set[k]);
}

TEST_P(MpiSlabs, PhysicalOperationsMatch) {
  Pair p(GetParam(), 5);
  auto vs = p.slab->real_field(), vw = p.whole->real_field();
  p.whole->from_host(random_field(6), vw);
  p.slab->from_host(random_field(6), vs);
  EXPECT_EQ(p.whole->max_speed(p.rw, vw), p.slab->max_speed(p.rs, vs));
  const std::size_t probe = kGrid.size() - 7;
  EXPECT_EQ(p.whole->value_at(vw, probe), p.slab->value_at(vs, probe));
  p.whole->basdevant_products(p.rw, vw, true);
  p.slab->basdevant_products(p.rs, vs, true);
  EXPECT_EQ(p.whole->cfl_maximum(), p.slab->cfl_maximum());
  std::vector<double> a, b;
  auto same = [&](Buffer<double>& x, Buffer<double>& y, const char* what) {
    p.whole->to_host(x, a);
    p.slab->to_host(y, b);
    EXPECT_LE(max_diff(a, b), 1e-14 * max_abs(a)) << what;
  };
  same(p.rw, p.rs, "products");
  p.whole->fill_points(TaylorGreenPoints<double>{kGrid.dx(), kGrid.dy(), 4 * M_PI / kGrid.lx, 4 * M_PI / kGrid.ly, 0.7}, vw);
  p.slab->fill_points(TaylorGreenPoints<double>{kGrid.dx(), kGrid.dy(), 4 * M_PI / kGrid.lx, 4 * M_PI / kGrid.ly, 0.7}, vs);
  same(vw, vs, "taylor-green");
  p.whole->fill_points(KolmogorovPoints<double>{kGrid.dy(), 0.3, 6 * M_PI / kGrid.ly}, vw);
  p.slab->fill_points(KolmogorovPoints<double>{kGrid.dy(), 0.3, 6 * M_PI / kGrid.ly}, vs);
  same(vw, vs, "kolmogorov");
  const VortexPoints vortices{kGrid.dx(), kGrid.dy(), kGrid.lx, kGrid.ly, {{1.0, 1.2, 1.0, 0.3}, {3.5, 2.0, 0.5, -0.4}}, 2};
  p.whole->fill_points(vortices, vw);
  p.slab->fill_points(vortices, vs);
  same(vw, vs, "vortices");
  p.whole->fill_points(GaussianPoissonRhs<double>{kGrid.dx(), kGrid.dy(), 0.4, 2.0, 1.0}, vw);
  p.slab->fill_points(GaussianPoissonRhs<double>{kGrid.dx(), kGrid.dy(), 0.4, 2.0, 1.0}, vs);
  same(vw, vs, "gaussian");
  // A NaN on any rank is the maximum on all of them.
  std::vector<double> f = random_field(7);
  f[kGrid.size() - 1] = NAN;
  p.slab->from_host(f, vs);
  EXPECT_TRUE(std::isnan(p.slab->max_speed(vs, vs)));
}

// The GPU slabs' all-to-all in chunks (run.exchange_chunks): 1, 2, 3 and 4 chunks (uneven where
// a slab's rows or kx columns do not divide: kGrid's 36 rows and 41 columns), with the strided x
// plans and without them (CASCADE_SLAB_PACKED: the packing passes, cuFFT's fallback), each
// against the whole grid on one GPU; more chunks than the smallest slab allows are refused.
TEST_P(MpiSlabs, ExchangeChunksMatchOneGpu) {
  if (GetParam() != BackendKind::Cuda || parallel::size() == 1) GTEST_SKIP() << "chunks are the GPU slabs' own";
  const auto f = random_field(8);
  auto whole = whole_backend(GetParam());
  auto rw = whole->real_field();
  auto hw = whole->spectral_field();
  whole->from_host(f, rw);
  whole->forward(rw, hw);
  std::vector<Complex<double>> reference, first;
  whole->to_host(hw, reference);
  for (int packed = 0; packed < 2; ++packed)
    for (int k : {1, 2, 3, 4}) {
      const std::string what = std::to_string(k) + " chunks" + (packed ? ", packed rows" : "");
      if (packed) ::setenv("CASCADE_SLAB_PACKED", "1", 1);
      auto b = make_backend<double>(BackendKind::Cuda, kGrid, 0, 1, FftPlanning::Estimate, k);
      ::unsetenv("CASCADE_SLAB_PACKED");
      EXPECT_NE(b->description().find("exchange in " + std::to_string(k) + " chunk"), std::string::npos)
          << b->description();
      EXPECT_EQ(b->description().find("packed rows") != std::string::npos, packed == 1) << b->description();
      auto rs = b->real_field();
      auto hs = b->spectral_field();
      b->from_host(f, rs);
      b->forward(rs, hs);
      std::vector<Complex<double>> h;
      b->to_host(hs, h);
      EXPECT_LE(max_diff(reference, h), 1e-12 * max_abs(reference)) << what;
      if (parallel::root()) {  // whether cuFFT's batched plans give the same bits whatever the batch
        if (first.empty()) first = h;
        const bool same = h.size() == first.size() && std::memcmp(h.data(), first.data(), h.size() * sizeof(h[0])) == 0;
        std::printf("  %d ranks, %-22s forward within %.1e of one GPU; bit for bit as 1 chunk: %s\n", parallel::size(),
                    what.c_str(), max_diff(reference, h) / max_abs(reference), same ? "yes" : "no");
      }
      b->scale(hs, hs, 1.0 / double(kGrid.size()));
      b->inverse(hs, rs);
      std::vector<double> back;
      b->to_host(rs, back);
      EXPECT_LE(max_diff(back, f), 1e-13) << what;
    }
  // 36 rows and 41 columns: the smallest slab over 2 ranks has 18 rows, over 4 ranks 8 columns.
  EXPECT_THROW(make_backend<double>(BackendKind::Cuda, kGrid, 0, 1, FftPlanning::Estimate, 19), InputError);
}

// ---------------------------------------------------------------- ensembles split by members

//! Five members of a forced 32^2 deck, split over the ranks (2 + 1 + 1 + 1 on 4 ranks), against
//! the same ensemble in one backend of this rank's own: each step's agreed CFL maximum, the
//! gathered state (bit for bit: each member is computed alike), every member's diagnostics and
//! spectra on every rank; then a NaN in member 4 (the last rank's) stops every rank at the same
//! step, each naming member 4 of 5. On the CPU (the GPU's split is the same code over CudaExec).
const char* kEnsembleDeck =
    "grid: {nx: 32}\n"
    "physics: {nu: 1.0e-3, mu: 0.05}\n"
    "forcing: {type: ring, epsilon: 0.2, k_f: 6, dk: 1.5}\n"
    "initial: {type: random, k0: 4, energy: 0.5}\n"
    "ensemble:\n"
    "  members: 5\n"
    "  vary:\n"
    "    physics.nu: [1.0e-3, 4.0e-3, 2.5e-4, 2.0e-3, 3.0e-3]\n"
    "    initial.energy: [0.5, 1.5, 0.25, 1.0, 0.75]\n";

TEST(MpiEnsemble, MembersSplitOverRanksMatchOneProcess) {
  const Config c = parse_deck(kEnsembleDeck, "test-deck", {});
  const Grid g = c.make_grid();
  auto split = make_backend<double>(BackendKind::Cpu, g, 0, 1, FftPlanning::Estimate, 0, 5);
  auto whole = make_cpu_backend<double>(g, 1, FftPlanning::Estimate, 5);
  const Slab& part = split->slab();
  const int ranks = parallel::size(), rank = parallel::rank();
  EXPECT_EQ(part.members, 5 / ranks + (rank < 5 % ranks ? 1 : 0));
  EXPECT_EQ(part.batch, 5);
  EXPECT_EQ(part.members_split(), ranks > 1);
  Solver<double> s(*split, c), w(*whole, c);
  EXPECT_EQ(s.members(), 5);
  EXPECT_EQ(s.local_members(), part.members);
  EXPECT_EQ(s.first_member(), part.first_member);
  s.initialise();
  w.initialise();
  for (int k = 0; k < 6; ++k) {
    const StepReport a = s.step(1.0), b = w.step(1.0);
    EXPECT_EQ(a.cfl_rate, b.cfl_rate) << "step " << k;  // the maximum over every rank's members
    EXPECT_EQ(a.dt, b.dt) << "step " << k;
  }
  const auto hs = s.vorticity_hat(), hw = w.vorticity_hat();
  if (parallel::root()) {
    ASSERT_EQ(hs.size(), hw.size());
    EXPECT_EQ(std::memcmp(hs.data(), hw.data(), hs.size() * sizeof(hs[0])), 0) << "the gathered state";
  } else {
    EXPECT_TRUE(hs.empty());
  }
  const auto ds = s.diagnose_interval_members(), dw = w.diagnose_interval_members();
  ASSERT_EQ(ds.size(), 5u);
  for (std::size_t m = 0; m < 5; ++m) {
    EXPECT_EQ(ds[m].energy, dw[m].energy) << m;
    EXPECT_EQ(ds[m].dissipation, dw[m].dissipation) << m;
    EXPECT_EQ(ds[m].injection, dw[m].injection) << m;
    EXPECT_EQ(ds[m].max_u, dw[m].max_u) << m;
    EXPECT_EQ(ds[m].step, dw[m].step) << m;
  }
  const auto ps = s.spectra_members(), pw = w.spectra_members();
  ASSERT_EQ(ps.size(), 5u);
  for (std::size_t m = 0; m < 5; ++m) {
    EXPECT_EQ(ps[m].energy, pw[m].energy) << m;
    EXPECT_EQ(ps[m].flux, pw[m].flux) << m;
  }
  // Restart-like: the whole batch in on every rank, each keeps its own members.
  std::vector<Complex<double>> state = w.vorticity_hat();
  state[4 * g.spectral_size() + 5] = {NAN, 0.0};  // member 4, a kept mode (kx = 5, ky = 0)
  s.set_vorticity_hat(state);
  try {
    s.step(1.0);
    ADD_FAILURE() << "no blow-up on rank " << rank;
  } catch (const BlowUp& e) {
    EXPECT_NE(std::string(e.what()).find("in ensemble member 4 (of 5)"), std::string::npos) << e.what();
  }
  // More ranks than members (two or more: one member is a single run, split into slabs): refused.
  if (ranks > 2) EXPECT_THROW(make_backend<double>(BackendKind::Cpu, g, 0, 1, FftPlanning::Estimate, 0, ranks - 1), InputError);
}

int main(int argc, char** argv) {
  parallel::init(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (!parallel::root()) {  // one report: rank 0's (failures on other ranks still fail the run)
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  int any[1] = {failed};
  parallel::agree_max(any, 1);
  parallel::finalize();
  return any[0];
}
