//! @file FFT round trip and spectral derivatives of sin/cos products, on every backend.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include "backend_cases.hpp"

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
