//! @file FFT round trip and spectral derivatives of sin/cos products, on every backend.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include "backend_cases.hpp"
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
template <class Real>
void check_row_products(int n, unsigned seed, double tol, int split = 1) {
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
  std::vector<C> tw(n), s(row_fft::padded_size(len), C{Real(7), Real(7)});  // garbage: the load zeroes
  std::vector<C> spill(std::size_t(split - 1) * len + 1);
  for (int k = 0; k < n; ++k) tw[k] = {Real(std::cos(two_pi * k / n)), Real(std::sin(two_pi * k / n))};
  int m_len = 0;
  while ((1 << m_len) < len) ++m_len;
  row_fft::RowPhases<Real> ph{n, m_len, kept, s.data(), tw.data(), speed, spill.data()};
  ASSERT_EQ(ph.split(), split);
  std::vector<C> a_out = a, b_out = b;  // in place, as on the GPU
  const int threads = len / 16;
  Real rate = MaxOp<Real>::identity();
  for (int p = 0; p < ph.count(); ++p)
    for (int t = 0; t < threads; ++t)
      rate = MaxOp<Real>()(rate, ph.run(p, t, threads, a_out.data(), b_out.data(), a_out.data(), b_out.data()));

  double err = 0;
  for (int k = 0; k < kept; ++k) {
    err = std::max(err, double(std::abs(std::complex<long double>(a_out[k].re, a_out[k].im) - p_ref[k])));
    err = std::max(err, double(std::abs(std::complex<long double>(b_out[k].re, b_out[k].im) - q_ref[k])));
  }
  EXPECT_LT(err / double(scale), tol) << "n = " << n << ", split " << split;
  EXPECT_GT(scale, 1.0L);  // the products are not trivially zero
  EXPECT_NEAR(double(rate), double(rate_ref), tol * double(rate_ref)) << "n = " << n << ", split " << split;
}

TEST(RowFft, HostEmulationMatchesTheDirectTransforms) {
  // Every radix sequence: a first stage of radix 16 (16, 256, 4096), 2, 4 or 8.
  for (int n : {16, 32, 64, 128, 256, 512, 1024, 2048, 4096}) check_row_products<double>(n, 11u + n, 1e-13);
  for (int n : {64, 512, 2048}) check_row_products<float>(n, 5u + n, 2e-6);
}

TEST(RowFft, HostEmulationSplitRows) {
  // Rows longer than the transform in shared memory: in 2 or 4 parts.
  for (int split : {2, 4})
    for (int n : {64, 512, 2048}) check_row_products<double>(n, 17u + n + split, 1e-13, split);
  check_row_products<float>(1024, 19u, 2e-6, 4);
}

TEST(RowFft, HostEmulationLargestRows) {
  check_row_products<double>(8192, 3u, 1e-13);
  check_row_products<double>(16384, 4u, 1e-13, 2);
  check_row_products<float>(16384, 5u, 4e-6);
}

}  // namespace
}  // namespace cascade
