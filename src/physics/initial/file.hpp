//! @file initial.type file: the vorticity of a snapshot (/vorticity) or a checkpoint
//! (/state/omega_hat), read by the caller (read_initial_field, in the output layer: the solver
//! reads no files), resized spectrally when its grid differs.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "cascade/solver.hpp"

namespace cascade {

struct FileInitial {
  static constexpr std::array<const char*, 1> kTypes = {"file"};
  std::string path;

  static FileInitial from(const InitialConfig& ic, const Grid&) { return {ic.path}; }
  template <class Real>
  void apply(Solver<Real>& s, const InitialField* file) const {
    if (!file) throw RunError("initial.type file: the field of '" + path + "' was not read before initialise");
    const InitialField& f = *file;
    const Grid& g = s.backend().grid();
    if (f.spectral) {
      s.set_vorticity_hat_resized(f.values, f.nx, f.ny);
      return;
    }
    if (f.nx == g.nx && f.ny == g.ny) {
      s.set_vorticity(std::vector<Real>(f.values.begin(), f.values.end()));
      return;
    }
    // Transform on the source grid (CPU, double), then pad or truncate the spectrum.
    auto src = make_cpu_backend<double>(Grid(f.nx, f.ny, g.lx, g.ly, g.dealias), 0);
    Buffer<double> phys = src->real_field();
    Buffer<Complex<double>> hat = src->spectral_field();
    src->from_host(f.values, phys);
    src->forward(phys, hat);
    std::vector<Complex<double>> h;
    src->to_host(hat, h);
    std::vector<double> flat(2 * h.size());
    for (std::size_t k = 0; k < h.size(); ++k) {
      flat[2 * k] = h[k].re;
      flat[2 * k + 1] = h[k].im;
    }
    s.set_vorticity_hat_resized(flat, f.nx, f.ny);
  }
};

}  // namespace cascade
