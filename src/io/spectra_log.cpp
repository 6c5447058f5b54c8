//! @file spectra.h5: the shell spectra and fluxes over time (docs/output-format.md, Spectra),
//! kept across a restart and set aside when a restart resizes the grid.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cascade/error.hpp"
#include "cascade/io.hpp"
#include "cascade/output.hpp"
#include "io/output_files.hpp"

namespace cascade {

using namespace output_files;

// ---------------------------------------------------------------- spectra

SpectraLog::SpectraLog(const std::string& dir, bool restart, double t_keep, const std::vector<double>& k,
                       int members)
    : path_(dir + "/spectra.h5"), k_(k), members_(members) {
  if (!restart || !exists(path_)) return;
  H5Reader r(path_);
  const auto t = r.read_double("/t");
  const auto step = r.read_int("/step");
  const auto e = r.read_double("/E");
  const auto z = r.read_double("/Z");
  const auto pe = r.has("/Pi") ? r.read_double("/Pi") : std::vector<double>(e.size(), 0.0);
  const auto pz = r.has("/Pi_Z") ? r.read_double("/Pi_Z") : std::vector<double>(e.size(), 0.0);
  const auto kk = r.read_double("/k");
  if (kk.size() != k_.size() || kk != k_) {
    // A resized restart: start() keeps the earlier series under its own name; a new one starts.
    set_aside_ = fmt::format("{}/spectra_until_t{}.h5", dir, t_keep);
    return;
  }
  // A row: every member's spectrum (an ensemble's (t, member, k)).
  const std::size_t n = k_.size() * std::size_t(members);
  const std::size_t rows = t.size();
  const auto shape = r.shape("/E");
  if (members > 1 && (shape.size() != 3 || shape[1] != std::uint64_t(members)))
    throw InputError(fmt::format("{}: /E is not (t, member, k) with {} members: not this ensemble's", path_, members));
  if (step.size() != rows || e.size() != rows * n || z.size() != rows * n || pe.size() != rows * n ||
      pz.size() != rows * n)
    throw InputError(fmt::format("{}: its datasets disagree in length ({} times, {} steps, {} x {} spectra): "
                                 "corrupt or edited",
                                 path_, rows, step.size(), e.size(), n));
  for (std::size_t row = 0; row < t.size() && t[row] <= t_keep; ++row) {
    t_.push_back(t[row]);
    step_.push_back(step[row]);
    energy_.insert(energy_.end(), e.begin() + row * n, e.begin() + (row + 1) * n);
    enstrophy_.insert(enstrophy_.end(), z.begin() + row * n, z.begin() + (row + 1) * n);
    flux_.insert(flux_.end(), pe.begin() + row * n, pe.begin() + (row + 1) * n);
    flux_z_.insert(flux_z_.end(), pz.begin() + row * n, pz.begin() + (row + 1) * n);
  }
}

void SpectraLog::start() {
  if (set_aside_.empty()) return;
  if (std::rename(path_.c_str(), set_aside_.c_str()) != 0)
    throw RunError("cannot rename '" + path_ + "' to '" + set_aside_ + "': " + std::strerror(errno));
}

void SpectraLog::append(double t, long step, const std::vector<double>& e, const std::vector<double>& z,
                        const std::vector<double>& pe, const std::vector<double>& pz) {
  t_.push_back(t);
  step_.push_back(step);
  energy_.insert(energy_.end(), e.begin(), e.end());
  enstrophy_.insert(enstrophy_.end(), z.begin(), z.end());
  flux_.insert(flux_.end(), pe.begin(), pe.end());
  flux_z_.insert(flux_z_.end(), pz.begin(), pz.end());
}

std::function<void()> SpectraLog::h5_task(const Config& config, const std::string& backend, double dk) {
  const H5Writer::Mode mode = fresh_ ? H5Writer::Mode::Create : H5Writer::Mode::Append;
  const bool with_k = fresh_;
  fresh_ = false;
  const int members = members_;
  auto task = [=, path = path_, k = k_, t = std::move(t_), step = std::move(step_), e = std::move(energy_),
               z = std::move(enstrophy_), pe = std::move(flux_), pz = std::move(flux_z_)] {
    H5Writer f(path, mode);
    write_provenance(f, config, backend);
    f.attribute("dk", dk);
    if (with_k && members > 1) write_member_coordinate(f, "/member", members);
    if (with_k) f.coordinate("/k", k, "1/length", "shell centres: shell s holds s dk - dk/2 <= |k| < s dk + dk/2");
    // A row of a spectrum: (k), or an ensemble's (member, k).
    const std::vector<std::uint64_t> row = members > 1 ? std::vector<std::uint64_t>{std::uint64_t(members), k.size()}
                                                       : std::vector<std::uint64_t>{k.size()};
    const std::string shape = members > 1 ? "(time, member, k)" : "(time, k)";
    f.append_series("/t", t, 1, "time", "simulation time of each spectrum");
    f.append_series("/step", step, "1", "time step number of each spectrum");
    f.append_series("/E", e, row, "length^3/time^2",
                    "shell energy spectrum E(k) " + shape + ": sum over a shell / dk, so that sum E dk = E");
    f.append_series("/Z", z, row, "length/time^2",
                    "shell enstrophy spectrum Z(k) " + shape + ": sum over a shell / dk, so that sum Z dk = Z");
    f.append_series("/Pi", pe, row, "length^2/time^3",
                    "energy flux through k by the nonlinear term " + shape +
                        ": minus its transfer summed over shells <= k");
    f.append_series("/Pi_Z", pz, row, "1/time^3", "enstrophy flux through k by the nonlinear term " + shape);
    // netCDF dimensions: t (unlimited, the rows) and k (the shells).
    f.coordinate("/t");
    f.dimensions("/step", {"/t"});
    for (const char* name : {"/E", "/Z", "/Pi", "/Pi_Z"})
      f.dimensions(name, members > 1 ? std::vector<std::string>{"/t", "/member", "/k"}
                                     : std::vector<std::string>{"/t", "/k"});
    f.close();
  };
  // The moved-from rows are empty: the log holds only what the next task will add.
  t_.clear();
  step_.clear();
  energy_.clear();
  enstrophy_.clear();
  flux_.clear();
  flux_z_.clear();
  return task;
}

}  // namespace cascade
