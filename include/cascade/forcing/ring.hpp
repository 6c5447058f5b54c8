//! @file forcing.type ring and ring-steady: a shell ||k| - k_f| < dk of modes with |F| ~ |k|, each
//! carrying the same energy, with random phases (fields/ring.hpp).
//!   - ring: white in time, drawn afresh each step (keyed by the step) with |F| ~ 1/sqrt(dt),
//!     so that the mean energy injection is forcing.epsilon whatever the step;
//!   - ring-steady: one draw (step 0) held fixed, scaled to the rms force forcing.amplitude.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cascade/config.hpp"
#include "cascade/error.hpp"
#include "cascade/fields.hpp"

namespace cascade {

struct RingForcing {
  static constexpr std::array<const char*, 2> kTypes = {"ring", "ring-steady"};
  bool white = true;
  double k_f = 0, dk = 0;
  double amp = 0;  //!< |F| / |k| (white noise: times sqrt(dt))
  std::uint64_t seed = 0;

  static RingForcing from(const ForcingConfig& f, const Grid& g) {
    // Sum of the half-spectrum weights over the forced shell (2 off the kx = 0 column), over the
    // modes the dealiasing keeps.
    double weight = 0;
    const double kx0 = 2 * M_PI / g.lx, ky0 = 2 * M_PI / g.ly;
    const int imax = std::min(g.nx / 2, int((f.k_f + f.dk) / kx0) + 1);
    const int nmax = std::min(g.ny / 2, int((f.k_f + f.dk) / ky0) + 1);
    for (int n = -nmax; n <= nmax; ++n)
      for (int i = 0; i <= imax; ++i) {
        const double k = std::hypot(kx0 * i, ky0 * n);
        const bool kept = g.dealias == Dealias::None ||
                          (two_thirds_keeps(i, g.nx) && two_thirds_keeps(std::abs(n), g.ny));
        if (RingModes<double>::in_ring(k, f.k_f, f.dk) && kept && 2 * i != g.nx && 2 * std::abs(n) != g.ny)
          weight += i == 0 ? 1.0 : 2.0;
      }
    if (weight == 0) throw InputError("forcing.k_f: the shell |k - k_f| < dk holds no mode of this grid");
    const double n = double(g.size());
    RingForcing r;
    r.white = f.type == "ring";
    r.k_f = f.k_f;
    r.dk = f.dk;
    r.seed = static_cast<std::uint64_t>(f.seed);
    // ring: mean injection (dt/2)|F|^2_E = epsilon with |F_hat| = amp |k| / sqrt(dt) on each
    // mode, amp^2 weight / (2 N^2) = epsilon. ring-steady: <|f|^2> = |F|^2_E = amp^2 weight / N^2
    // = amplitude^2.
    r.amp = r.white ? std::sqrt(2 * f.epsilon / weight) * n : f.amplitude * n / std::sqrt(weight);
    return r;
  }
  bool white_noise() const { return white; }
  //! White noise: the field every step's draw is made from (RingModes::at_step, on the host or
  //! on the device); ring-steady: its field.
  template <class Real>
  RingModes<Real> base_field(const Grid& g) const {
    return RingModes<Real>{k_f, dk, amp, seed, 0, g.ny};
  }
  template <class Real>
  FieldSpec<Real> field(const Grid& g, long step, double h) const {
    if (!white) return base_field<Real>(g);
    return base_field<Real>(g).at_step(static_cast<std::uint64_t>(step), h);
  }
};

}  // namespace cascade
