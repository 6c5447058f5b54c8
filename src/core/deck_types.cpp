//! @file The forcing and initial-condition types, declared once: {word, keys it reads, its own
//! checks, its text in input/README.md}. The checks run after each key's own (src/core/config.cpp),
//! with the grid already valid; each names one key and gives one message.
#include "core/deck_types.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/deck_reader.hpp"

namespace cascade::deck {
namespace {

std::string num(double x) { return fmt::format("{}", x); }

// ---------------------------------------------------------------- forcing

void check_kolmogorov(const Config& c, const Locator& loc) {
  const ForcingConfig& f = c.forcing;
  check(std::isfinite(f.amplitude), loc, c, "forcing.amplitude", "a finite number", num(f.amplitude));
  check(f.wavenumber >= 1 && two_thirds_keeps(f.wavenumber, c.grid.ny), loc, c, "forcing.wavenumber",
        fmt::format("an integer in [1, {}] (below ny/3: kept by the 2/3 rule)", two_thirds_band(c.grid.ny)),
        std::to_string(f.wavenumber));
}

//! The forced shell of ring and ring-steady.
void check_shell(const Config& c, const Locator& loc) {
  const GridConfig& g = c.grid;
  const ForcingConfig& f = c.forcing;
  // The largest |k| the 2/3 rule keeps along both axes: a ring inside it is fully resolved.
  const double kmax = std::min(2 * M_PI / g.lx * two_thirds_band(g.nx), 2 * M_PI / g.ly * two_thirds_band(g.ny));
  check(std::isfinite(f.k_f) && f.k_f > 0, loc, c, "forcing.k_f", "a positive wavenumber", num(f.k_f));
  check(std::isfinite(f.dk) && f.dk > 0 && f.dk < f.k_f, loc, c, "forcing.dk", "a half-width in (0, k_f)",
        num(f.dk));
  check(f.k_f + f.dk <= kmax, loc, c, "forcing.k_f",
        fmt::format("a shell k_f + dk inside the dealiased band (<= {:.4g})", kmax), num(f.k_f));
}

void check_ring(const Config& c, const Locator& loc) {
  check_shell(c, loc);
  const double e = c.forcing.epsilon;
  check(std::isfinite(e) && e > 0, loc, c, "forcing.epsilon", "a positive injection rate", num(e));
}

void check_ring_steady(const Config& c, const Locator& loc) {
  check_shell(c, loc);
  const double a = c.forcing.amplitude;
  check(std::isfinite(a) && a > 0, loc, c, "forcing.amplitude", "a positive rms force", num(a));
}

// ---------------------------------------------------------------- initial conditions

//! gaussian and lamb-dipole: one structure of size `radius` at (x0, y0).
void check_one_structure(const Config& c, const Locator& loc) {
  const InitialConfig& ic = c.initial;
  check(std::isfinite(ic.radius) && ic.radius > 0 && 2 * ic.radius < std::min(c.grid.lx, c.grid.ly), loc, c,
        "initial.radius", "a positive radius below half the box", num(ic.radius));
  check(std::isfinite(ic.amplitude) && std::isfinite(ic.speed), loc, c, "initial.amplitude",
        "finite amplitude and speed", num(ic.amplitude));
}

void check_vortices(const Config& c, const Locator& loc) {
  check(!c.initial.vortices.empty(), loc, c, "initial.vortices", "a non-empty list of vortices", "none");
}

void check_file(const Config& c, const Locator& loc) {
  check(!c.initial.path.empty(), loc, c, "initial.path", "the path of a snapshot or checkpoint", "nothing");
}

void check_random(const Config& c, const Locator& loc) {
  const InitialConfig& ic = c.initial;
  check(std::isfinite(ic.k0) && ic.k0 > 0, loc, c, "initial.k0", "a positive wavenumber", num(ic.k0));
  check(std::isfinite(ic.energy) && ic.energy > 0, loc, c, "initial.energy", "a positive energy", num(ic.energy));
}

void check_taylor_green(const Config& c, const Locator& loc) {
  const InitialConfig& ic = c.initial;
  const int band = two_thirds_band(std::min(c.grid.nx, c.grid.ny));
  check(std::isfinite(ic.amplitude), loc, c, "initial.amplitude", "a finite number", num(ic.amplitude));
  check(ic.mode >= 1 && ic.mode <= band, loc, c, "initial.mode",
        fmt::format("an integer in [1, {}] (below min(nx, ny)/3)", band), std::to_string(ic.mode));
}

}  // namespace

const std::vector<DeckType>& forcing_types() {
  static const std::vector<DeckType> types = {
      {"none", {}, nullptr, "`none`"},
      {"kolmogorov", {"amplitude", "wavenumber"}, check_kolmogorov,
       "`kolmogorov` (the body force chi sin(k_f y) in x, i.e. the vorticity forcing −chi k_f cos(k_f y); laminar "
       "state u = chi/(nu k_f² + mu) sin(k_f y))"},
      {"ring", {"epsilon", "k_f", "dk", "seed"}, check_ring,
       "`ring` (white in time in the shell \\|k − k_f\\| < dk: every forced mode carries the same energy, random "
       "phases drawn each step from a counter-based generator keyed by (seed, step, mode) — the same on CPU and GPU, "
       "continued exactly by a restart; held fixed across the stages of a step and scaled by 1/sqrt(dt), so the mean "
       "injection is epsilon whatever the step)"},
      {"ring-steady", {"amplitude", "k_f", "dk", "seed"}, check_ring_steady,
       "`ring-steady` (the same shell with fixed random phases, steady in time)"},
  };
  return types;
}

const std::vector<DeckType>& initial_types() {
  static const std::vector<DeckType> types = {
      {"random", {"seed", "k0", "energy"}, check_random,
       "`random` (McWilliams 1984: \\|psi_hat\\|² ∝ [k² (1 + (k/k0)⁴/3)]⁻¹, so the shell spectrum E(k) ∝ k/(1 + "
       "(k/k0)⁴/3) peaks at k0 and falls as k⁻³; exact amplitudes, random phases)"},
      {"taylor-green", {"amplitude", "mode"}, check_taylor_green,
       "`taylor-green` (psi = A sin(m kx0 x) sin(m ky0 y))"},
      {"vortices", {"vortices"}, check_vortices, "`vortices` (the list below)"},
      {"gaussian", {"amplitude", "radius", "x0", "y0"}, check_one_structure,
       "`gaussian` (one Gaussian vortex: peak `amplitude`, width `radius` at (`x0`, `y0`))"},
      {"lamb-dipole", {"radius", "speed", "x0", "y0"}, check_one_structure,
       "`lamb-dipole` (the Lamb–Chaplygin dipole of radius `radius` at (`x0`, `y0`) moving along +x at `speed`)"},
      {"file", {"path"}, check_file,
       "`file` (the vorticity of a snapshot or checkpoint at `path`, resized spectrally when its grid differs)"},
      {"zero", {}, nullptr, "`zero`"},
  };
  return types;
}

std::vector<std::string> type_names(const std::vector<DeckType>& types) {
  std::vector<std::string> names;
  for (const auto& t : types) names.push_back(t.name);
  return names;
}

std::string type_docs(const std::vector<DeckType>& types, const std::string& separator) {
  std::string s;
  for (const auto& t : types) s += (s.empty() ? "" : separator) + t.doc;
  return s;
}

void check_type(const std::vector<DeckType>& types, const std::string& name, const Config& c, const Locator& loc) {
  for (const auto& t : types)
    if (t.name == name && t.check) t.check(c, loc);
}

}  // namespace cascade::deck
