//! @file FFT round trip and spectral derivatives of sin/cos products, on every backend.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <type_traits>
#include <sstream>

#include "backend_cases.hpp"
#include "kernels/column_fft.cuh"
#include "kernels/row_fft.cuh"

namespace cascade {
namespace {

using test::BackendCase;

// Round-off scales: a few hundred ulps after two transforms of size <= 256^2.
template <class Real>
constexpr double round_off() {
  return sizeof(Real) == 4 ? 2e-5 : 5e-13;
}

class Fft : public testing::TestWithParam<BackendCase> {};

TEST_P(Fft, RoundTripRecoversTheField) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    for (auto [nx, ny] : {std::pair{64, 64}, std::pair{96, 40}, std::pair{256, 128}}) {
      const Grid g(nx, ny, 2 * M_PI, 3.0);
      auto b = make_backend<Real>(GetParam().kind, g);
      std::mt19937 rng(7);
      std::uniform_real_distribution<double> u(-1, 1);
      std::vector<Real> f(g.size());
      for (auto& v : f) v = Real(u(rng));
      Buffer<Real> a = b->real_field(), out = b->real_field();
      Buffer<Complex<Real>> a_hat = b->spectral_field();
      b->from_host(f, a);
      b->forward(a, a_hat);
      b->scale(a_hat, a_hat, Real(1.0 / double(g.size())));
      b->inverse(a_hat, out);
      std::vector<Real> back, kept;
      b->to_host(out, back);
      b->to_host(a, kept);
      double err = 0;
      for (std::size_t k = 0; k < f.size(); ++k) err = std::max(err, std::abs(double(back[k]) - double(f[k])));
      EXPECT_LT(err, round_off<Real>()) << nx << "x" << ny;
      EXPECT_EQ(kept, f) << "forward transform must preserve its input";
    }
  });
}

TEST_P(Fft, ForwardMatchesAnalyticModes) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    // f = cos(3x) + 2 sin(2y) on [0,2pi)^2: F(m=3,n=0) = N/2, F(0,n=2) = -i N, F(0,n=-2) = +i N
    const Grid g(32, 16, 2 * M_PI, 2 * M_PI);
    auto b = make_backend<Real>(GetParam().kind, g);
    std::vector<Real> f(g.size());
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) f[j * g.nx + i] = Real(std::cos(3 * g.x(i)) + 2 * std::sin(2 * g.y(j)));
    Buffer<Real> a = b->real_field();
    Buffer<Complex<Real>> a_hat = b->spectral_field();
    b->from_host(f, a);
    b->forward(a, a_hat);
    std::vector<Complex<Real>> h;
    b->to_host(a_hat, h);
    const double n = double(g.size()), tol = round_off<Real>() * n;
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nxh(); ++i) {
        double re = 0, im = 0;
        if (i == 3 && j == 0) re = n / 2;
        if (i == 0 && g.mode_y(j) == 2) im = -n;
        if (i == 0 && g.mode_y(j) == -2) im = n;
        EXPECT_NEAR(h[j * g.nxh() + i].re, re, tol) << i << "," << j;
        EXPECT_NEAR(h[j * g.nxh() + i].im, im, tol) << i << "," << j;
      }
  });
}

TEST_P(Fft, DerivativesOfTrigProductsAreExact) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    // Rectangular box and grid: f = sin(a x) cos(b y) + cos(c x) sin(d y) with a = 3 kx0 ...
    const double lx = 2.0, ly = 3.0;
    const Grid g(48, 64, lx, ly);
    const double a = 3 * 2 * M_PI / lx, bb = 2 * 2 * M_PI / ly, c = 5 * 2 * M_PI / lx, d = 7 * 2 * M_PI / ly;
    auto be = make_backend<Real>(GetParam().kind, g);
    auto field = [&](auto fn) {
      std::vector<Real> out(g.size());
      for (int j = 0; j < g.ny; ++j)
        for (int i = 0; i < g.nx; ++i) out[j * g.nx + i] = Real(fn(g.x(i), g.y(j)));
      return out;
    };
    const auto f = field([&](double x, double y) { return std::sin(a * x) * std::cos(bb * y) + std::cos(c * x) * std::sin(d * y); });
    struct Expect {
      int ox, oy;
      std::function<double(double, double)> df;
    };
    const std::vector<Expect> cases = {
        {1, 0, [&](double x, double y) { return a * std::cos(a * x) * std::cos(bb * y) - c * std::sin(c * x) * std::sin(d * y); }},
        {0, 1, [&](double x, double y) { return -bb * std::sin(a * x) * std::sin(bb * y) + d * std::cos(c * x) * std::cos(d * y); }},
        {2, 0, [&](double x, double y) { return -a * a * std::sin(a * x) * std::cos(bb * y) - c * c * std::cos(c * x) * std::sin(d * y); }},
        {1, 1, [&](double x, double y) { return -a * bb * std::cos(a * x) * std::sin(bb * y) - c * d * std::sin(c * x) * std::cos(d * y); }},
        {0, 2, [&](double x, double y) { return -bb * bb * std::sin(a * x) * std::cos(bb * y) - d * d * std::cos(c * x) * std::sin(d * y); }},
        {3, 0, [&](double x, double y) { return -a * a * a * std::cos(a * x) * std::cos(bb * y) + c * c * c * std::sin(c * x) * std::sin(d * y); }},
    };
    Buffer<Real> in = be->real_field(), out = be->real_field();
    Buffer<Complex<Real>> f_hat = be->spectral_field(), d_hat = be->spectral_field();
    be->from_host(f, in);
    be->forward(in, f_hat);
    for (const auto& e : cases) {
      be->derivative(f_hat, d_hat, e.ox, e.oy);
      be->inverse(d_hat, out);
      std::vector<Real> got;
      be->to_host(out, got);
      const auto want = field(e.df);
      double err = 0, scale = 0;
      for (std::size_t k = 0; k < got.size(); ++k) {
        err = std::max(err, std::abs(double(got[k]) - double(want[k])));
        scale = std::max(scale, std::abs(double(want[k])));
      }
      EXPECT_LT(err / scale, 10 * round_off<Real>()) << "d^" << e.ox << "/dx, d^" << e.oy << "/dy";
    }
  });
}

TEST_P(Fft, OddDerivativeZeroesNyquist) {
  CASCADE_SKIP_IF_UNAVAILABLE(GetParam().kind);
  test::with_precision(GetParam().precision, [&](auto tag) {
    using Real = decltype(tag);
    // cos(pi x / dx) is the Nyquist mode in x: its d/dx is not representable and must vanish.
    const Grid g(16, 8, 2 * M_PI, 2 * M_PI);
    auto be = make_backend<Real>(GetParam().kind, g);
    std::vector<Real> f(g.size());
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) f[j * g.nx + i] = Real((i % 2 ? -1.0 : 1.0) + (j % 2 ? -1.0 : 1.0));
    Buffer<Real> in = be->real_field(), out = be->real_field();
    Buffer<Complex<Real>> h = be->spectral_field(), dh = be->spectral_field();
    be->from_host(f, in);
    be->forward(in, h);
    for (auto [ox, oy] : {std::pair{1, 0}, std::pair{0, 1}}) {
      be->derivative(h, dh, ox, oy);
      be->inverse(dh, out);
      std::vector<Real> got;
      be->to_host(out, got);
      for (Real v : got) EXPECT_NEAR(double(v), 0.0, sizeof(Real) == 4 ? 1e-5 : 1e-12);
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Backends, Fft, testing::ValuesIn(test::all_backend_cases()), test::case_name);

// ---------------------------------------------------------------- measured plans and wisdom

//! CASCADE_FFTW_WISDOM pointed at a fresh temporary directory for one test, restored after.
class WisdomDir {
 public:
  WisdomDir() {
    dir_ = std::filesystem::temp_directory_path() / ("cascade-wisdom-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    if (const char* old = std::getenv("CASCADE_FFTW_WISDOM")) old_ = old, had_ = true;
    ::setenv("CASCADE_FFTW_WISDOM", dir_.c_str(), 1);
  }
  ~WisdomDir() {
    if (had_) ::setenv("CASCADE_FFTW_WISDOM", old_.c_str(), 1);
    else ::unsetenv("CASCADE_FFTW_WISDOM");
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path file(const char* name) const { return dir_ / name; }

 private:
  std::filesystem::path dir_;
  std::string old_;
  bool had_ = false;
};

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

//! The largest error of a forward + inverse round trip (scaled) of a fixed random field.
template <class Real>
double round_trip_error(Backend<Real>& b) {
  const Grid& g = b.grid();
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Real> f(g.size()), back;
  for (auto& v : f) v = Real(u(rng));
  Buffer<Real> a = b.real_field(), out = b.real_field();
  Buffer<Complex<Real>> h = b.spectral_field();
  b.from_host(f, a);
  b.forward(a, h);
  b.scale(h, h, Real(1.0 / double(g.size())));
  b.inverse(h, out);
  b.to_host(out, back);
  double err = 0;
  for (std::size_t k = 0; k < f.size(); ++k) err = std::max(err, std::abs(double(back[k]) - double(f[k])));
  return err;
}

TEST(FftwWisdom, MeasuredPlansAreSavedAndReused) {
  const WisdomDir w;
  const Grid g(32, 16, 2 * M_PI, 2 * M_PI);
  {
    auto b = make_backend<double>(BackendKind::Cpu, g, 0, 1, FftPlanning::Measure);
    EXPECT_NE(b->description().find("wisdom saved to"), std::string::npos) << b->description();
    EXPECT_LT(round_trip_error(*b), round_off<double>());
  }
  const std::string saved = read_text(w.file("fftw-wisdom-double"));
  EXPECT_EQ(saved.rfind("(fftw-3", 0), 0u) << saved;
  EXPECT_FALSE(std::filesystem::exists(w.file("fftw-wisdom-single"))) << "one file per precision";
  auto again = make_backend<double>(BackendKind::Cpu, g, 0, 1, FftPlanning::Measure);
  EXPECT_NE(again->description().find("measured plans from wisdom"), std::string::npos) << again->description();
  EXPECT_EQ(read_text(w.file("fftw-wisdom-double")), saved) << "nothing new measured: the file stays as it was";
  // FFTW keys its wisdom by thread count too: two threads are measured anew, in the same file.
  auto two = make_backend<double>(BackendKind::Cpu, g, 0, 2, FftPlanning::Measure);
  EXPECT_NE(two->description().find("plans measured"), std::string::npos) << two->description();
  EXPECT_LT(round_trip_error(*two), round_off<double>());
  EXPECT_GT(read_text(w.file("fftw-wisdom-double")).size(), saved.size());
  // Estimated plans neither read nor write wisdom.
  auto est = make_backend<float>(BackendKind::Cpu, g, 0, 1, FftPlanning::Estimate);
  EXPECT_NE(est->description().find("estimated plans"), std::string::npos) << est->description();
  EXPECT_FALSE(std::filesystem::exists(w.file("fftw-wisdom-single")));
  // Auto measures from 512^2 points only.
  auto small = make_backend<float>(BackendKind::Cpu, g, 0, 1, FftPlanning::Auto);
  EXPECT_NE(small->description().find("estimated plans"), std::string::npos) << small->description();
}

TEST(FftwWisdom, ACorruptOrUnwritableWisdomFileNeverFailsARun) {
  const WisdomDir w;
  const Grid g(16, 16, 2 * M_PI, 2 * M_PI);
  {
    std::ofstream(w.file("fftw-wisdom-single")) << "(fftw-3.3.10 fftwf_wisdom #x1 (garbage";
    auto b = make_backend<float>(BackendKind::Cpu, g, 0, 1, FftPlanning::Measure);
    EXPECT_NE(b->description().find("replaced"), std::string::npos) << b->description();
    EXPECT_LT(round_trip_error(*b), round_off<float>());
    EXPECT_EQ(read_text(w.file("fftw-wisdom-single")).rfind("(fftw-3", 0), 0u);
    EXPECT_EQ(read_text(w.file("fftw-wisdom-single")).find("garbage"), std::string::npos);
  }
  {
    // Single-precision wisdom in the double file: FFTW refuses it; the run goes on.
    std::filesystem::copy_file(w.file("fftw-wisdom-single"), w.file("fftw-wisdom-double"));
    auto b = make_backend<double>(BackendKind::Cpu, g, 0, 1, FftPlanning::Measure);
    EXPECT_LT(round_trip_error(*b), round_off<double>()) << b->description();
  }
  {
    // A directory that does not exist: measured plans, nothing saved, no failure.
    ::setenv("CASCADE_FFTW_WISDOM", w.file("absent/deeper").c_str(), 1);
    auto b = make_backend<double>(BackendKind::Cpu, Grid(24, 8, 1.0, 1.0), 0, 1, FftPlanning::Measure);
    EXPECT_NE(b->description().find("wisdom not saved"), std::string::npos) << b->description();
    EXPECT_LT(round_trip_error(*b), round_off<double>());
    EXPECT_FALSE(std::filesystem::exists(w.file("absent")));
  }
  {
    // CASCADE_FFTW_WISDOM empty: no file at all.
    ::setenv("CASCADE_FFTW_WISDOM", "", 1);
    EXPECT_EQ(fftw_wisdom_file(Precision::Double), "");
    auto b = make_backend<double>(BackendKind::Cpu, Grid(20, 8, 1.0, 1.0), 0, 1, FftPlanning::Measure);
    EXPECT_NE(b->description().find("no wisdom file"), std::string::npos) << b->description();
  }
}

}  // namespace
}  // namespace cascade

namespace cascade {
namespace {

// ---------------------------------------------------------------- the GPU's row kernel, on the host

//! The GPU step's row-by-row evaluation (kernels/row_fft.cuh), run on the host thread by thread
//! and phase by phase as the kernel runs it between barriers, against a direct DFT: one row's
//! C2R of two half spectra, Basdevant's products, and the R2C of the products, kept columns.
//! fold: the load folded into the first inverse stage (RowPhases::fold); `out`, where given,
//! gets the products' half spectra as the phases left them (a's kept columns, then b's).
//! `pair` (split 2): the parts over a pair of blocks (RowPhases::part), each phase run by both
//! blocks' threads before the next, block 1's first, as between the pair's barriers.
//! `stage_table`: the table with the radix-16 stages' sections, read there (RowPhases::stage_table).
template <class Real>
void check_row_products(int n, unsigned seed, double tol, int split = 1, int rb = 4, int flight = 4, bool fold = false,
                        bool fold_store = false, std::vector<Complex<Real>>* out = nullptr, bool pair = false,
                        bool stage_table = false) {
  using C = Complex<Real>;
  const int kept = (n - 1) / 3 + 1;
  int m = 0;
  while ((1 << m) < n) ++m;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::vector<C> a(kept), b(kept);
  for (int k = 0; k < kept; ++k) {
    a[k] = {Real(uni(rng) / (1 + k)), Real(uni(rng) / (1 + k))};  // imag. part of k = 0 dropped
    b[k] = {Real(uni(rng) / (1 + k)), Real(uni(rng) / (1 + k))};
  }
  const double two_pi = 2 * std::acos(-1.0);
  // Reference: u, v by the C2R sum in long double, then the products' half spectra.
  std::vector<long double> cs(n), sn(n);  // cos, sin (2 pi j / n)
  for (int j = 0; j < n; ++j) {
    cs[j] = std::cos(2 * std::acos(-1.0L) * j / n);
    sn[j] = std::sin(2 * std::acos(-1.0L) * j / n);
  }
  std::vector<long double> u(n), v(n);
  for (int x = 0; x < n; ++x) {
    long double su = a[0].re, sv = b[0].re;
    for (int k = 1; k < kept; ++k) {
      const int j = int((long long)k * x % n);
      su += 2 * (a[k].re * cs[j] - a[k].im * sn[j]);
      sv += 2 * (b[k].re * cs[j] - b[k].im * sn[j]);
    }
    u[x] = su;
    v[x] = sv;
  }
  const CflSpeed<Real> speed{Real(3), Real(5)};
  long double rate_ref = 0, scale = 0;
  std::vector<std::complex<long double>> p_ref(kept), q_ref(kept);
  for (int k = 0; k < kept; ++k) {
    std::complex<long double> sp = 0, sq = 0;
    for (int x = 0; x < n; ++x) {
      const int j = int((long long)k * x % n);
      const std::complex<long double> e(cs[j], -sn[j]);
      sp += u[x] * v[x] * e;
      sq += (v[x] * v[x] - u[x] * u[x]) * e;
    }
    p_ref[k] = sp;
    q_ref[k] = sq;
    scale = std::max({scale, std::abs(sp), std::abs(sq)});
  }
  for (int x = 0; x < n; ++x) rate_ref = std::max(rate_ref, 3 * std::fabs(u[x]) + 5 * std::fabs(v[x]));

  // The kernel's phases, thread by thread: a sixteenth as many threads as the transform in
  // shared memory has points, a barrier between phases.
  const int len = n / split;
  std::vector<C> tw(n), s(row_fft::Padded::size(len), C{Real(7), Real(7)});  // garbage: the load zeroes
  std::vector<C> spill(std::size_t(split - 1) * len + 1);
  for (int k = 0; k < n; ++k) tw[k] = {Real(std::cos(two_pi * k / n)), Real(std::sin(two_pi * k / n))};
  if (stage_table) tw = row_fft::twiddle_table<Real>(n, true);  // its first n entries as above
  int m_len = 0;
  while ((1 << m_len) < len) ++m_len;
  row_fft::RowPhases<Real> ph{n, m_len, kept, s.data(), tw.data(), speed, spill.data()};
  ph.rb = rb;
  ph.flight = flight;
  ph.fold = fold;
  ph.fold_store = fold_store;
  ph.stage_table = stage_table;
  ASSERT_EQ(ph.split(), split);
  // A pair: block q does part q in its own shared memory, the partner's the other's.
  std::vector<C> s1(s.size(), C{Real(7), Real(7)});
  row_fft::RowPhases<Real> blocks[2] = {ph, ph};
  if (pair) {
    ASSERT_EQ(split, 2);
    blocks[1].s = s1.data();
    for (auto& b : blocks) b.spill = nullptr;  // a pair spills nothing
  }
  std::vector<C> a_out = a, b_out = b;  // in place, as on the GPU
  const int threads = len >> rb;
  Real rate = MaxOp<Real>::identity();
  const int phases = pair ? ph.part_phases() : ph.count();
  for (int p = 0; p < phases; ++p)
    for (int i = pair ? 1 : 0; i >= 0; --i)
      for (int t = 0; t < threads; ++t) {
        C* const ao = a_out.data();
        C* const bo = b_out.data();
        rate = MaxOp<Real>()(rate, pair ? blocks[i].run_pair(p, i, blocks[1 - i].s, t, threads, ao, bo, ao, bo)
                                        : ph.run(p, t, threads, ao, bo, ao, bo));
      }

  double err = 0;
  for (int k = 0; k < kept; ++k) {
    err = std::max(err, double(std::abs(std::complex<long double>(a_out[k].re, a_out[k].im) - p_ref[k])));
    err = std::max(err, double(std::abs(std::complex<long double>(b_out[k].re, b_out[k].im) - q_ref[k])));
  }
  EXPECT_LT(err / double(scale), tol) << "n = " << n << ", split " << split << ", radix bits " << rb << ", flight "
                                       << flight << ", fold " << fold << ", store folded " << fold_store << ", pair "
                                       << pair << ", stage table " << stage_table;
  if (out) {
    *out = a_out;
    out->insert(out->end(), b_out.begin(), b_out.end());
  }
  EXPECT_GT(scale, 1.0L);  // the products are not trivially zero
  EXPECT_NEAR(double(rate), double(rate_ref), tol * double(rate_ref)) << "n = " << n << ", split " << split;
}

TEST(RowFft, HostEmulationMatchesTheDirectTransforms) {
  // Every radix sequence: a first stage of radix 16 (16, 256, 4096), 2, 4 or 8.
  for (int n : {16, 32, 64, 128, 256, 512, 1024, 2048, 4096}) check_row_products<double>(n, 11u + n, 1e-13);
  for (int n : {64, 512, 2048}) check_row_products<float>(n, 5u + n, 2e-6);
}

TEST(RowFft, HostEmulationRadixFour) {
  // The rows of a constant length in radix 4 (first_stage_bits: a first stage of radix 2 where
  // m is odd), rows of 8 to 1024 points, and 512 in parts.
  for (int n : {8, 16, 32, 64, 128, 256, 512, 1024}) check_row_products<double>(n, 23u + n, 1e-13, 1, 2);
  for (int n : {128, 256}) check_row_products<float>(n, 29u + n, 2e-6, 1, 2);
  check_row_products<double>(512, 31u, 1e-13, 2, 2);
}

TEST(RowFft, HostEmulationRadixEight) {
  // Radix 8, which the rows of 512 points take (three stages of 8): a first stage of radix 2
  // or 4 where m is not a multiple of 3, or none (the pass in registers alone: 8 points).
  for (int n : {8, 16, 32, 64, 128, 256, 512}) check_row_products<double>(n, 37u + n, 1e-13, 1, 3);
  check_row_products<float>(512, 41u, 2e-6, 1, 3);
}

TEST(RowFft, HostEmulationTwoLoadsInFlight) {
  // Two columns' loads in flight a thread (the loads not folded of rows of 1024 to 8192 points
  // in double, 8192 in single): every kept column placed, the last round of loads short (22, 342 and 1366 kept
  // columns over 4, 64 and 256 threads).
  for (int n : {64, 1024, 4096}) check_row_products<double>(n, 43u + n, 1e-13, 1, 4, 2);
  check_row_products<float>(512, 47u, 2e-6, 1, 4, 2);
}

TEST(RowFft, HostEmulationLoadFoldedIntoTheFirstStage) {
  // The load folded into the first inverse stage (rows of a constant length on the GPU): every
  // first stage (radix 2, 4, 8, 16; rb 2, 3, 4), the same bits as the load and the stage apart.
  const auto same_bits = [](const auto& x, const auto& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), sizeof(x[0]) * x.size()) == 0;
  };
  for (int rb : {2, 3, 4})
    for (int n : {64, 128, 256, 512, 1024, 2048, 4096, 8192}) {
      if (rb != 4 && n > 1024) continue;
      std::vector<Complex<double>> apart, folded;
      check_row_products<double>(n, 53u + n, 1e-13, 1, rb, 4, false, false, &apart);
      check_row_products<double>(n, 53u + n, 1e-13, 1, rb, 4, true, false, &folded);
      EXPECT_TRUE(same_bits(apart, folded)) << "n = " << n << ", radix bits " << rb;
    }
  for (int n : {2048, 8192}) {
    std::vector<Complex<float>> apart, folded;
    check_row_products<float>(n, 59u + n, 4e-6, 1, 4, 2, false, false, &apart);
    check_row_products<float>(n, 59u + n, 4e-6, 1, 4, 2, true, false, &folded);
    EXPECT_TRUE(same_bits(apart, folded)) << "n = " << n << ", single";
  }
  // Split rows keep the load of their parts: fold asks for nothing there.
  check_row_products<double>(2048, 61u, 1e-13, 4, 4, 4, true);
}

TEST(RowFft, HostEmulationStoreFoldedIntoTheLastStage) {
  // The store folded into the last forward stage (RowPhases::fold_store: a thread the pair of
  // butterflies t, M - t where the first radix is below 2^rb, else a butterfly a thread and its
  // partner's outputs exchanged): every first radix (2, 4, 8, 16; rb 2, 3, 4), with the load
  // folded or not, the same bits as the stage and the store apart.
  const auto same_bits = [](const auto& x, const auto& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), sizeof(x[0]) * x.size()) == 0;
  };
  for (int rb : {2, 3, 4})
    for (int n : {32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}) {
      if (rb != 4 && n > 1024) continue;
      for (bool fold : {false, true}) {
        std::vector<Complex<double>> apart, folded;
        check_row_products<double>(n, 89u + n, 1e-13, 1, rb, 4, fold, false, &apart);
        check_row_products<double>(n, 89u + n, 1e-13, 1, rb, 4, fold, true, &folded);
        EXPECT_TRUE(same_bits(apart, folded)) << "n = " << n << ", radix bits " << rb << ", load folded " << fold;
      }
    }
  for (int n : {1024, 2048, 4096, 8192}) {
    std::vector<Complex<float>> apart, folded;
    check_row_products<float>(n, 97u + n, 4e-6, 1, 4, 2, true, false, &apart);
    check_row_products<float>(n, 97u + n, 4e-6, 1, 4, 2, true, true, &folded);
    EXPECT_TRUE(same_bits(apart, folded)) << "n = " << n << ", single";
  }
  // Split rows keep their store (the last forward stage folded into it): fold_store asks for
  // nothing there.
  check_row_products<double>(2048, 67u, 1e-13, 4, 4, 4, false, true);
}

TEST(RowFft, HostEmulationSplitRows) {
  // Rows longer than the transform in shared memory: in 2 or 4 parts, and 2 over a pair of blocks.
  for (int split : {2, 4})
    for (int n : {64, 512, 2048}) check_row_products<double>(n, 17u + n + split, 1e-13, split);
  check_row_products<float>(1024, 19u, 2e-6, 4);
  for (int n : {64, 512, 2048}) check_row_products<double>(n, 71u + n, 1e-13, 2, 4, 4, false, false, nullptr, true);
  check_row_products<float>(1024, 73u, 2e-6, 2, 4, 4, false, false, nullptr, true);
}

TEST(RowFft, TwiddleTableSections) {
  // The sections of the radix-16 stages (row_fft::stage_section): each butterfly's w, w^4, w^8,
  // w^12 of every block length from 32 points up, the flat table's own entries, the sections
  // back to back up to the table's end.
  for (int n : {16, 32, 64, 1024, 8192}) {
    const auto flat = row_fft::twiddle_table<float>(n, false), tw = row_fft::twiddle_table<float>(n, true);
    ASSERT_EQ(flat.size(), std::size_t(n));
    ASSERT_EQ(tw.size(), std::size_t(row_fft::twiddle_table_size(n, true)));
    EXPECT_EQ(std::memcmp(flat.data(), tw.data(), sizeof(flat[0]) * flat.size()), 0) << "n = " << n;
    int end = n;
    for (int l = 5; (1 << l) <= n; ++l) {
      const int M = 1 << (l - 4), at = row_fft::stage_section(n, l);
      EXPECT_EQ(at, end) << "n = " << n << ", l = " << l;
      for (int n1 = 0; n1 < M; ++n1)
        for (int f = 0; f < 4; ++f) {
          const auto w = tw[std::size_t(at + f * M + n1)];
          const auto want = flat[std::size_t((n1 * (n >> l) * (f ? 4 * f : 1)) % n)];
          ASSERT_TRUE(w.re == want.re && w.im == want.im) << "n = " << n << ", l = " << l << ", n1 " << n1 << ", f " << f;
        }
      end = at + 4 * M;
    }
    EXPECT_EQ(std::size_t(end), tw.size()) << "n = " << n;
  }
}

TEST(RowFft, HostEmulationStageTwiddlesGiveTheSameBits) {
  // The radix-16 stages' factors from the table's sections (RowPhases::stage_table, single
  // precision's row kernels) against the flat table: the same bits, with every first radix (16,
  // 2, 4, 8), the load and the store folded or not, rows in parts and over pairs of blocks, in
  // both precisions.
  const auto same_bits = [](const auto& x, const auto& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), sizeof(x[0]) * x.size()) == 0;
  };
  const auto both = [&](auto real, int n, unsigned seed, double tol, int split, int flight, bool fold, bool fold_store,
                        bool pair) {
    using Real = decltype(real);
    std::vector<Complex<Real>> flat, sections;
    check_row_products<Real>(n, seed, tol, split, 4, flight, fold, fold_store, &flat, pair, false);
    check_row_products<Real>(n, seed, tol, split, 4, flight, fold, fold_store, &sections, pair, true);
    EXPECT_TRUE(same_bits(flat, sections)) << "n = " << n << ", split " << split << ", fold " << fold
                                           << ", store folded " << fold_store << ", pair " << pair << ", "
                                           << sizeof(Real) << "-byte reals";
  };
  for (int n : {256, 512, 1024, 2048, 4096, 8192})
    for (bool fold : {false, true})
      for (bool fold_store : {false, true}) {
        both(float{}, n, 113u + n, 4e-6, 1, n == 8192 ? 2 : 4, fold, fold_store, false);
        if (n <= 2048) both(double{}, n, 127u + n, 1e-13, 1, 4, fold, fold_store, false);
      }
  both(float{}, 16384, 131u, 4e-6, 2, 4, false, false, false);
  both(float{}, 16384, 137u, 4e-6, 2, 4, false, false, true);
  both(float{}, 2048, 139u, 4e-6, 4, 4, false, false, false);
  both(double{}, 2048, 149u, 1e-13, 2, 4, false, false, true);
}

TEST(RowFft, HostEmulationLargestRows) {
  check_row_products<double>(8192, 3u, 1e-13);
  check_row_products<double>(16384, 4u, 1e-13, 2);
  check_row_products<double>(16384, 6u, 1e-13, 2, 4, 4, false, false, nullptr, true);
  check_row_products<float>(16384, 5u, 4e-6);
}

// ---------------------------------------------------------------- the GPU's column kernel, on the host

//! The DFT of a column, exponent sign `sign`, unnormalised, in long double: for a power of two a
//! recursive decimation in time (another algorithm than row_fft's stages, and some thousand
//! times faster than the direct sums at 16384 points), else the direct sums.
std::vector<std::complex<double>> long_double_dft(const std::vector<std::complex<double>>& x, int sign) {
  using L = std::complex<long double>;
  const int n = int(x.size());
  std::vector<L> e(n);  // exp(sign 2 pi i j / n)
  for (int j = 0; j < n; ++j) {
    const long double a = 2 * std::acos(-1.0L) * j / n;
    e[j] = L(std::cos(a), sign * std::sin(a));
  }
  std::vector<L> in(n), out(n);
  for (int y = 0; y < n; ++y) in[y] = L(x[y].real(), x[y].imag());
  if ((n & (n - 1)) == 0) {
    // out[k] of the len points in[0], in[stride], ...: the halves' transforms, then the butterflies.
    const auto fft = [&](const auto& self, const L* from, int stride, L* to, int len) -> void {
      if (len == 1) {
        to[0] = from[0];
        return;
      }
      const int h = len / 2;
      self(self, from, 2 * stride, to, h);
      self(self, from + stride, 2 * stride, to + h, h);
      for (int k = 0; k < h; ++k) {
        const L even = to[k], odd = e[std::size_t(k) * std::size_t(stride)] * to[k + h];
        to[k] = even + odd;
        to[k + h] = even - odd;
      }
    };
    fft(fft, in.data(), 1, out.data(), n);
  } else {
    for (int k = 0; k < n; ++k) {
      L acc = 0;
      for (int y = 0; y < n; ++y) acc += in[y] * e[std::size_t((long long)k * y % n)];
      out[k] = acc;
    }
  }
  std::vector<std::complex<double>> result(n);
  for (int k = 0; k < n; ++k) result[k] = std::complex<double>(double(out[k].real()), double(out[k].imag()));
  return result;
}

//! The column kernel's passes (kernels/column_fft.cuh), run on the host thread by thread and
//! phase by phase as the kernel runs them between barriers, against long_double_dft along y: one
//! tile of `columns` columns (the last `columns - valid` past the kept ones) of two fields with
//! rows of ld elements. `pair`: the tile split over two blocks, one field each (ColumnTile::field),
//! each phase run by both blocks' threads before the next, as between the pair's barriers. kQuad
//! (with pair): over four blocks, by field and the parity of y (ColumnTile::parity), each
//! transforming its field's points y = 2t + parity.
template <class Real, class Layout = row_fft::Padded, bool kQuad = false>
void check_column_passes(int n, int columns, int valid, unsigned seed, double tol, int threads = 256, int rb = 4,
                         bool pair = false) {
  using C = Complex<Real>;
  using Z = std::complex<double>;
  int m = 0;
  while ((1 << m) < n) ++m;
  const int ld = columns + 3, first = 1;  // the tile starts at column 1 of rows of ld
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::vector<C> a(std::size_t(n) * ld), b(a.size());
  for (auto& z : a) z = {Real(uni(rng)), Real(uni(rng))};
  for (auto& z : b) z = {Real(uni(rng)), Real(uni(rng))};
  const std::vector<C> a0 = a, b0 = b;
  const double two_pi = 2 * std::acos(-1.0);
  const std::size_t quarter = std::size_t(columns) * column_fft::column_stride<Layout>(n / 2);
  std::vector<C> tw(n), tw_half(n / 2),
      s(std::max(std::size_t(2 * columns) * column_fft::column_stride<Layout>(n), 4 * quarter), C{Real(7), Real(7)});
  for (int k = 0; k < n; ++k) tw[k] = {Real(std::cos(two_pi * k / n)), Real(std::sin(two_pi * k / n))};
  for (int k = 0; k < n / 2; ++k) tw_half[k] = tw[2 * k];
  const std::vector<C> tw_join = kQuad ? column_fft::join_twiddles(m - 1, rb, tw) : std::vector<C>{};
  column_fft::ColumnTile<Real, Layout> tile{n, m, columns, first, valid, ld, s.data(), tw.data()};
  tile.rb = rb;
  // A pair: field 0's block holds the first half of s, field 1's the second.
  column_fft::ColumnTile<Real, Layout> tiles[2] = {tile, tile};
  const std::size_t half = std::size_t(columns) * column_fft::column_stride<Layout>(n);
  tiles[0].field = 0;
  tiles[0].partner = s.data() + half;
  tiles[1].field = 1;
  tiles[1].s = s.data() + half;
  tiles[1].partner = s.data();
  // A quad: block field + 2 parity holds the quarter of s at that rank, its rows 2t + parity of
  // a and b (rows of 2 ld from row parity).
  column_fft::ColumnTile<Real, Layout> quads[4] = {tile, tile, tile, tile};
  for (int r = 0; r < 4; ++r) {
    quads[r].n = n / 2;
    quads[r].m = m - 1;
    quads[r].ld = 2 * ld;
    quads[r].tw = tw_half.data();
    quads[r].tw_join = tw_join.data();
    quads[r].field = r & 1;
    quads[r].parity = r >> 1;
    quads[r].s = s.data() + r * quarter;
    for (int q = 0; q < 4; ++q) quads[r].quad[q] = s.data() + q * quarter;
  }
  const auto column_of = [&](const std::vector<C>& f, int c) {
    std::vector<Z> x(n);
    for (int y = 0; y < n; ++y) x[y] = Z(f[std::size_t(y) * ld + first + c].re, f[std::size_t(y) * ld + first + c].im);
    return x;
  };
  // As the kernel's threads: each phase run by every thread before the next, the threads (and
  // a pair's blocks) in turn, or in the reverse order (`reversed`): a thread that read what
  // another writes in the same phase, where the kernel has no barrier, would then differ.
  bool reversed = false;
  const auto run = [&](const auto& ph, std::vector<C>& fa, std::vector<C>& fb) {
    double total = 0;
    using Phases = std::remove_cv_t<std::remove_reference_t<decltype(ph)>>;
    Phases each[4] = {ph, ph, ph, ph};
    std::size_t rows[4] = {0, 0, 0, 0};  // where each block's rows start in a, b
    for (int r = 0; r < 4; ++r) {
      if (kQuad) {
        each[r].tile = quads[r];
        rows[r] = std::size_t(r >> 1) * ld;
      } else if (pair && r < 2) {
        each[r].tile = tiles[r];
      }
    }
    const Phases& one = each[0];
    const int count = (kQuad ? 4 : pair ? 2 : 1) * threads;
    for (int p = 0; p < one.count(); ++p)
      for (int i = 0; i < count; ++i) {
        const int k = reversed ? count - 1 - i : i, block = k / threads, t = k % threads;
        const double got = each[block].run(p, t, threads, fa.data() + rows[block], fb.data() + rows[block]);
        if (p != one.mode_phase()) EXPECT_EQ(got, 0.0) << "phase " << p;  // the kernel adds up that phase's alone
        total += got;
      }
    return total;
  };
  // A functor of the mode: a filter g(c, k) on a, another on b; it counts the modes it sees.
  struct Sum {
    double n = 0;
    Sum operator+(const Sum& o) const { return {n + o.n}; }
    operator double() const { return n; }
  };
  const auto g = [n](int c, int k) { return Z(1.0 + 0.1 * c, 0.01 * k - 0.2) / double(n); };
  const auto h = [n](int c, int k) { return Z(-0.5, 0.03 * c + 0.001 * k) / double(n); };
  std::vector<int> seen(std::size_t(n) * columns, 0);
  const auto filter = [&](int c, int k, C& va, C& vb) {
    seen[std::size_t(k) * columns + c] += 1;
    const Z za = Z(va.re, va.im) * g(c, k), zb = Z(vb.re, vb.im) * h(c, k);
    va = {Real(za.real()), Real(za.imag())};
    vb = {Real(zb.real()), Real(zb.imag())};
    return Sum{1};
  };
  double err = 0;
  const auto compare = [&](const std::vector<Z>& want, const std::vector<C>& got, int c) {
    double scale = 0;
    for (int y = 0; y < n; ++y) {
      const C z = got[std::size_t(y) * ld + first + c];
      err = std::max(err, std::abs(Z(z.re, z.im) - want[y]));
      scale = std::max(scale, std::abs(want[y]));
    }
    return scale;
  };

  // Stage: forward transforms, the filter at each mode, inverse transforms back.
  const column_fft::ColumnPhases<Real, Sum, decltype(filter), Layout, true, kQuad> stage{
      tile, column_fft::ColumnPass::Stage, filter};
  EXPECT_EQ(run(stage, a, b), double(n) * valid);
  for (int c = 0; c < columns; ++c) {
    for (int k = 0; k < n; ++k) EXPECT_EQ(seen[std::size_t(k) * columns + c], c < valid ? 1 : 0) << c << " " << k;
    if (c >= valid) {  // past the kept columns: untouched
      EXPECT_EQ(column_of(a, c), column_of(a0, c));
      continue;
    }
    std::vector<Z> fa = long_double_dft(column_of(a0, c), -1), fb = long_double_dft(column_of(b0, c), -1);
    for (int k = 0; k < n; ++k) fa[k] *= g(c, k), fb[k] *= h(c, k);
    const double scale = std::max(compare(long_double_dft(fa, +1), a, c), compare(long_double_dft(fb, +1), b, c));
    EXPECT_GT(scale, 0.1);
    EXPECT_LT(err / scale, tol) << "stage, n = " << n << ", column " << c;
  }
  // The columns outside the tile: untouched.
  for (int c : {-1, columns, columns + 1})
    for (int y = 0; y < n; ++y) {
      const std::size_t i = std::size_t(y) * ld + first + c;
      ASSERT_EQ(a[i].re, a0[i].re);
      ASSERT_EQ(b[i].im, b0[i].im);
    }
  // a2, b2 hold the same bits as a, b.
  const auto same_bits = [&](const std::vector<C>& a2, const std::vector<C>& b2, const char* what) {
    for (std::size_t i = 0; i < a.size(); ++i)
      ASSERT_TRUE(a2[i].re == a[i].re && a2[i].im == a[i].im && b2[i].re == b[i].re && b2[i].im == b[i].im)
          << what << ", n = " << n << ", element " << i;
  };
  // A pass again from a0, b0 with the threads of each phase in the reverse order: the same bits
  // as a, b.
  const auto reversed_gives_the_same = [&](const auto& ph, const char* what) {
    std::vector<C> a2 = a0, b2 = b0;
    std::fill(s.begin(), s.end(), C{Real(7), Real(7)});
    reversed = true;
    EXPECT_EQ(run(ph, a2, b2), double(n) * valid);
    reversed = false;
    same_bits(a2, b2, what);
  };
  reversed_gives_the_same(stage, "stage, threads reversed");

  // The stage again with a functor that reads ahead (as StageOfColumns: each_mode asks for a
  // position's factors one position of the thread early and hands them over with it), and with
  // the same functor asked at each position itself (kAhead false, as the kernels with the
  // budget's sums where reading ahead spilled): the same bits, each position given its own
  // factors.
  struct Factors {
    int c = -1, k = -1;
    Z ga, hb;
  };
  struct AheadFilter {
    const decltype(g)* ga;
    const decltype(h)* hb;
    std::vector<int>* asked;
    int columns;
    Factors ahead(int c, int k) const {
      (*asked)[std::size_t(k) * columns + c] += 1;
      return {c, k, (*ga)(c, k), (*hb)(c, k)};
    }
    Sum operator()(int c, int k, C& va, C& vb, const Factors& x) const {
      EXPECT_TRUE(x.c == c && x.k == k) << "position (" << c << ", " << k << ") given (" << x.c << ", " << x.k << ")";
      const Z za = Z(va.re, va.im) * x.ga, zb = Z(vb.re, vb.im) * x.hb;
      va = {Real(za.real()), Real(za.imag())};
      vb = {Real(zb.real()), Real(zb.imag())};
      return Sum{1};
    }
  };
  static_assert(column_fft::ReadsAhead<AheadFilter>::value && !column_fft::ReadsAhead<decltype(filter)>::value);
  const auto reading = [&](auto ahead) {
    constexpr bool kAhead = decltype(ahead)::value;
    std::vector<C> a2 = a0, b2 = b0;
    std::vector<int> asked(seen.size(), 0);
    const AheadFilter fn{&g, &h, &asked, columns};
    const column_fft::ColumnPhases<Real, Sum, AheadFilter, Layout, kAhead, kQuad> stage2{
        tile, column_fft::ColumnPass::Stage, fn};
    std::fill(s.begin(), s.end(), C{Real(7), Real(7)});
    EXPECT_EQ(run(stage2, a2, b2), double(n) * valid);
    for (int c = 0; c < columns; ++c)
      for (int k = 0; k < n; ++k) EXPECT_EQ(asked[std::size_t(k) * columns + c], c < valid ? 1 : 0) << c << " " << k;
    same_bits(a2, b2, kAhead ? "stage, reading ahead" : "stage, reading at each position");
  };
  reading(std::true_type{});
  reading(std::false_type{});

  // Forward: the functor reads each mode, the forward transform of the column there.
  a = a0;
  b = b0;
  err = 0;
  std::vector<C> spec_a(std::size_t(n) * columns), spec_b(spec_a.size());
  const auto store = [&](int c, int k, C& va, C& vb) {
    spec_a[std::size_t(k) * columns + c] = va;
    spec_b[std::size_t(k) * columns + c] = vb;
    return Sum{1};
  };
  const column_fft::ColumnPhases<Real, Sum, decltype(store), Layout, true, kQuad> forward{
      tile, column_fft::ColumnPass::Forward, store};
  EXPECT_EQ(run(forward, a, b), double(n) * valid);
  for (int c = 0; c < valid; ++c) {
    const std::vector<Z> fa = long_double_dft(column_of(a0, c), -1), fb = long_double_dft(column_of(b0, c), -1);
    double scale = 0;
    for (int k = 0; k < n; ++k) {
      const C za = spec_a[std::size_t(k) * columns + c], zb = spec_b[std::size_t(k) * columns + c];
      err = std::max({err, std::abs(Z(za.re, za.im) - fa[k]), std::abs(Z(zb.re, zb.im) - fb[k])});
      scale = std::max({scale, std::abs(fa[k]), std::abs(fb[k])});
    }
    EXPECT_LT(err / scale, tol) << "forward, n = " << n << ", column " << c;
  }

  // Inputs: the functor writes each mode (what the forward pass read, filtered), the inverse
  // transforms take it to y.
  err = 0;
  const auto give = [&](int c, int k, C& va, C& vb) {
    const Z za = Z(spec_a[std::size_t(k) * columns + c].re, spec_a[std::size_t(k) * columns + c].im) * g(c, k);
    const Z zb = Z(spec_b[std::size_t(k) * columns + c].re, spec_b[std::size_t(k) * columns + c].im) * h(c, k);
    va = {Real(za.real()), Real(za.imag())};
    vb = {Real(zb.real()), Real(zb.imag())};
    return Sum{1};
  };
  std::fill(s.begin(), s.end(), C{Real(7), Real(7)});  // garbage: every element is written first
  const column_fft::ColumnPhases<Real, Sum, decltype(give), Layout, true, kQuad> inputs{
      tile, column_fft::ColumnPass::Inputs, give};
  EXPECT_EQ(run(inputs, a, b), double(n) * valid);
  for (int c = 0; c < valid; ++c) {
    std::vector<Z> fa = long_double_dft(column_of(a0, c), -1), fb = long_double_dft(column_of(b0, c), -1);
    for (int k = 0; k < n; ++k) fa[k] *= g(c, k), fb[k] *= h(c, k);
    const double scale = std::max(compare(long_double_dft(fa, +1), a, c), compare(long_double_dft(fb, +1), b, c));
    EXPECT_LT(err / scale, tol) << "inputs, n = " << n << ", column " << c;
  }
  reversed_gives_the_same(inputs, "inputs, threads reversed");
}

TEST(ColumnFft, DifFrequencyIsAPermutation) {
  for (int m = 4; m <= 14; ++m) {
    std::vector<int> hit(std::size_t(1) << m, 0);
    for (int p = 0; p < (1 << m); ++p) hit[std::size_t(row_fft::dif_frequency(m, p))] += 1;
    EXPECT_EQ(std::count(hit.begin(), hit.end(), 1), 1 << m) << "m = " << m;
  }
  EXPECT_EQ(row_fft::dif_frequency(5, 16), 1);  // radix 2 then 16: position 16 is k = 1
  EXPECT_EQ(row_fft::dif_frequency(5, 1), 2);
  for (int m = 2; m <= 12; ++m) {  // radix 4
    std::vector<int> hit(std::size_t(1) << m, 0);
    for (int p = 0; p < (1 << m); ++p) hit[std::size_t(row_fft::dif_frequency(m, p, 2))] += 1;
    EXPECT_EQ(std::count(hit.begin(), hit.end(), 1), 1 << m) << "m = " << m << ", radix 4";
  }
  EXPECT_EQ(row_fft::dif_frequency(3, 4, 2), 1);  // radix 2 then 4: position 4 is k = 1
  // The digits by shifts against the digits by divisions by each stage's block length.
  for (int rb = 2; rb <= 4; ++rb)
    for (int m = rb; m <= 14; ++m)
      for (int p = 0; p < (1 << m); ++p) {
        int k = 0, weight = 1;
        for (int i = 0; i <= row_fft::stages_before_last(m, rb); ++i) {
          const int bits = row_fft::stage_bits_of(m, i, rb);
          k += ((p / (row_fft::stage_length_of(m, i, rb) >> bits)) % (1 << bits)) * weight;
          weight <<= bits;
        }
        ASSERT_EQ(row_fft::dif_frequency(m, p, rb), k) << "m = " << m << ", rb = " << rb << ", p = " << p;
      }
}

TEST(ColumnFft, HostEmulationMatchesTheDirectTransforms) {
  // Every radix sequence, tiles of one to 16 columns, a last tile past the kept columns.
  check_column_passes<double>(16, 4, 4, 1u, 1e-13);
  check_column_passes<double>(32, 8, 5, 2u, 1e-13);
  check_column_passes<double>(64, 16, 16, 3u, 1e-13);
  check_column_passes<double>(128, 16, 9, 4u, 1e-13);
  check_column_passes<double>(256, 8, 8, 5u, 1e-13);
  check_column_passes<double>(512, 4, 3, 6u, 1e-13);
  check_column_passes<double>(1024, 2, 2, 7u, 1e-13);
  check_column_passes<double>(2048, 1, 1, 8u, 1e-13);
  check_column_passes<float>(128, 8, 7, 9u, 2e-6);
  check_column_passes<float>(512, 2, 2, 10u, 2e-6);
  // The wide blocks (512 threads): more threads than butterflies in a column, or fewer.
  check_column_passes<double>(64, 4, 3, 11u, 1e-13, 512);
  check_column_passes<double>(4096, 1, 1, 12u, 1e-13, 512);
}

TEST(ColumnFft, HostEmulationPairOfBlocks) {
  // A tile over two blocks, one field each: a column or several, more threads than a column's
  // butterflies or fewer (the large grids' tiles: 2048 and 4096 points two columns, on 256 and
  // 512 threads, 8192 one; single's 4096 four and 8192 two, two butterflies a thread of 512).
  check_column_passes<double>(16, 1, 1, 60u, 1e-13, 256, 4, true);
  check_column_passes<double>(64, 4, 3, 61u, 1e-13, 256, 4, true);
  check_column_passes<double>(512, 2, 2, 62u, 1e-13, 16, 4, true);
  check_column_passes<double>(2048, 2, 1, 63u, 1e-13, 256, 4, true);
  check_column_passes<double>(4096, 1, 1, 64u, 1e-13, 256, 4, true);
  check_column_passes<double>(4096, 2, 2, 67u, 1e-13, 512, 4, true);
  check_column_passes<double>(8192, 1, 1, 65u, 1e-13, 512, 4, true);
  check_column_passes<float>(4096, 2, 2, 66u, 2e-6, 512, 4, true);
  check_column_passes<float>(4096, 4, 3, 68u, 2e-6, 512, 4, true);
  check_column_passes<float>(8192, 2, 2, 69u, 2e-6, 512, 4, true);
}

TEST(ColumnFft, HostEmulationSwizzled) {
  // The columns swizzled in shared memory, not padded (row_fft::Swizzled): double precision's
  // pairs of 4096 and 8192 points, which the GPU lays out so (ColumnShape::swizzled), and tiles of
  // every radix sequence, in a block or a pair.
  using Swz = row_fft::Swizzled;
  check_column_passes<double, Swz>(4096, 2, 2, 70u, 1e-13, 512, 4, true);
  check_column_passes<double, Swz>(8192, 1, 1, 71u, 1e-13, 512, 4, true);
  check_column_passes<double, Swz>(16, 4, 3, 72u, 1e-13);
  check_column_passes<double, Swz>(32, 2, 2, 73u, 1e-13, 256, 4, true);
  check_column_passes<double, Swz>(256, 8, 8, 74u, 1e-13);
  check_column_passes<double, Swz>(512, 4, 3, 75u, 1e-13, 256, 3);
  check_column_passes<float, Swz>(1024, 2, 2, 76u, 2e-6, 256, 4, true);
}

TEST(ColumnFft, HostEmulationQuadOfBlocks) {
  // A tile over four blocks, by field and the parity of y, the halves joined at each mode
  // (ColumnPhases kQuad): columns of 8192 and 16384 points as the GPU takes them
  // (ColumnShape::quad), in double two and one a tile, in single four and two; short columns in
  // both layouts, past the kept columns, and a thread several butterflies.
  using Swz = row_fft::Swizzled;
  using Pad = row_fft::Padded;
  check_column_passes<double, Swz, true>(8192, 2, 2, 100u, 1e-13, 512, 4, true);
  check_column_passes<double, Swz, true>(8192, 2, 1, 101u, 1e-13, 512, 4, true);
  check_column_passes<double, Pad, true>(64, 2, 2, 102u, 1e-13, 256, 4, true);
  check_column_passes<double, Pad, true>(1024, 4, 3, 103u, 1e-13, 64, 4, true);
  check_column_passes<float, Pad, true>(2048, 4, 4, 104u, 2e-6, 256, 4, true);
  check_column_passes<float, Swz, true>(8192, 4, 3, 105u, 2e-6, 512, 4, true);
  check_column_passes<double, Swz, true>(16384, 1, 1, 106u, 1e-13, 512, 4, true);
  check_column_passes<float, Swz, true>(16384, 2, 1, 107u, 2e-6, 512, 4, true);
}

// Both layouts put the points that a radix-16 (or smaller) stage's threads take at once on
// different banks: eight threads of 16-byte elements share the 32 banks (128 bytes) in a
// wavefront, sixteen of 8-byte ones; they take butterflies t0 .. t0 + 7 (15) of a column, and at
// each of its points their elements must lie in distinct 16-byte (8-byte) slots modulo 128 bytes.
// And each layout places the n points of a column at n distinct places below size(n).
template <class Layout>
void check_layout(int n, int element_bytes) {
  int m = 0;
  while ((1 << m) < n) ++m;
  std::vector<int> hits(std::size_t(Layout::size(n)), 0);
  for (int i = 0; i < n; ++i) {
    const int at = Layout::at(i);
    ASSERT_TRUE(at >= 0 && at < Layout::size(n)) << "n = " << n << ", i = " << i;
    ASSERT_EQ(++hits[std::size_t(at)], 1) << "n = " << n << ", i = " << i;
  }
  const int slots = 128 / element_bytes;  // a wavefront's threads, each a slot
  for (int i = 0; i < row_fft::stages_before_last(m) + 1; ++i) {
    const int bits = row_fft::stage_bits_of(m, i), R = 1 << bits, L = row_fft::stage_length_of(m, i), M = L / R;
    for (int t0 = 0; t0 < n / R; t0 += slots)
      for (int q = 0; q < R; ++q) {
        std::vector<int> bank(std::size_t(slots), 0);
        for (int t = t0; t < t0 + slots && t < n / R; ++t) {
          const int base = (t / M) * L + (t % M);
          ASSERT_EQ(++bank[std::size_t(Layout::at(base + M * q) % slots)], 1)
              << "n = " << n << ", stage " << i << ", butterfly " << t << ", point " << q;
        }
      }
  }
}

TEST(ColumnFft, LayoutsKeepAStagesPointsOnDifferentBanks) {
  for (int n : {16, 256, 2048, 4096, 8192}) {
    check_layout<row_fft::Padded>(n, 16);
    check_layout<row_fft::Swizzled>(n, 16);
    check_layout<row_fft::Padded>(n, 8);
    check_layout<row_fft::Swizzled>(n, 8);
  }
}

TEST(ColumnFft, HostEmulationRadixFour) {
  // Radix 4: more threads a column than radix 16's, or fewer than butterflies.
  check_column_passes<double>(8, 2, 2, 42u, 1e-13, 256, 2);
  check_column_passes<double>(32, 4, 3, 43u, 1e-13, 256, 2);
  check_column_passes<double>(128, 2, 2, 44u, 1e-13, 256, 2);
  check_column_passes<double>(256, 1, 1, 45u, 1e-13, 256, 2);
  check_column_passes<double>(512, 2, 1, 46u, 1e-13, 128, 2);
  check_column_passes<float>(256, 2, 2, 47u, 2e-6, 256, 2);
}

TEST(ColumnFft, HostEmulationRadixEight) {
  // Radix 8, which the columns of 512 points take (three stages of 8), a first stage of radix
  // 2 or 4 elsewhere; tiles of one to four columns, more threads than butterflies or fewer.
  for (int n : {8, 16, 32, 64, 128, 256}) check_column_passes<double>(n, 2, 2, 50u + n, 1e-13, 256, 3);
  check_column_passes<double>(512, 1, 1, 48u, 1e-13, 256, 3);
  check_column_passes<double>(512, 4, 3, 49u, 1e-13, 256, 3);
  check_column_passes<float>(512, 4, 4, 51u, 2e-6, 256, 3);
}

}  // namespace
}  // namespace cascade
