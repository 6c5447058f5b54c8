//! @file checkpoints/ckpt_NNNNNN.h5 (docs/output-format.md, Checkpoints): written, pruned, read
//! back and verified (seal, checksum, every value checked as a deck value is); and the
//! initial field of initial.type file, read from a snapshot or a checkpoint.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <sys/stat.h>
#include <unistd.h>

#include "cascade/error.hpp"
#include "cascade/io.hpp"
#include "cascade/output.hpp"
#include "io/output_files.hpp"

namespace cascade {

using namespace output_files;

// ---------------------------------------------------------------- checkpoints

std::string checkpoint_path(const std::string& dir, long step) {
  return fmt::format("{}/checkpoints/ckpt_{:06d}.h5", dir, step);
}

namespace {
//! The checksum covers the state's bytes and the scalars a restart depends on (and, for an
//! ensemble, its members' budget integrals).
std::string state_checksum(const void* data, std::size_t bytes, const CheckpointMeta& m) {
  std::uint64_t h = checksum64(data, bytes);
  const double scalars[3] = {m.time, m.dt, double(m.step)};
  h = checksum64(scalars, sizeof(scalars), h);
  if (!m.budget.members.empty())
    h = checksum64(m.budget.members.data(), m.budget.members.size() * sizeof(double), h);
  return fmt::format("fnv1a64w:{:016x}", h);
}

const char* const kBudgetNames[BudgetState::kTerms] = {"diss_nu", "diss_mu", "diss_alpha", "diss_z", "inj", "inj_z"};

std::vector<long long> counting(int n) {
  std::vector<long long> v(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) v[std::size_t(k)] = k;
  return v;
}
}  // namespace

void write_member_coordinate(H5Writer& f, const std::string& name, int members) {
  f.integer_coordinate(name, counting(members), "1",
                       "ensemble member b: its deck has the seeds + b and ensemble.vary's b-th values");
}

template <class Real>
std::function<void()> checkpoint_task(const std::string& path, const Config& config, const std::string& backend,
                                      std::vector<Complex<Real>> omega_hat, const CheckpointMeta& meta) {
  return [=, hat = std::move(omega_hat)] {
    const Grid g = config.make_grid();
    const int members = config.ensemble.members;
    H5Writer f(path);
    write_provenance(f, config, backend);
    f.attribute("time", meta.time);
    f.attribute("step", static_cast<long long>(meta.step));
    f.attribute("dt", meta.dt);
    f.attribute("snapshot_index", static_cast<long long>(meta.snapshot_index));
    f.attribute("nx", static_cast<long long>(g.nx));
    f.attribute("ny", static_cast<long long>(g.ny));
    f.group("/state");
    // An ensemble's state: every member's, (member, ky, kx, part).
    std::vector<std::uint64_t> shape{std::uint64_t(g.ny), std::uint64_t(g.nxh()), 2};
    if (members > 1) shape.insert(shape.begin(), std::uint64_t(members));
    f.write("/state/omega_hat", reinterpret_cast<const Real*>(hat.data()), shape,
            "1/time (times nx ny: unnormalised DFT)",
            members > 1 ? "exact spectral state: the unnormalised real-to-complex DFT of omega, (member, ky, kx, re/im)"
                        : "exact spectral state: the unnormalised real-to-complex DFT of omega, (ky, kx, re/im)");
    // netCDF dimensions: the wavenumbers of the rows and columns, in the DFT's order.
    std::vector<double> ky(static_cast<std::size_t>(g.ny)), kx(static_cast<std::size_t>(g.nxh()));
    for (int j = 0; j < g.ny; ++j) ky[std::size_t(j)] = g.ky(j);
    for (int i = 0; i < g.nxh(); ++i) kx[std::size_t(i)] = g.kx(i);
    if (members > 1) write_member_coordinate(f, "/state/member", members);
    f.coordinate("/state/ky", ky, "1/length",
                 "wavenumber ky of the rows, in the DFT's order (0, 1, ..., ny/2, 1 - ny/2, ..., -1 times 2 pi/ly)");
    f.coordinate("/state/kx", kx, "1/length", "wavenumber kx >= 0 of the columns");
    f.coordinate("/state/part", {0.0, 1.0}, "1", "0: real part, 1: imaginary part");
    if (members > 1)
      f.dimensions("/state/omega_hat", {"/state/member", "/state/ky", "/state/kx", "/state/part"});
    else
      f.dimensions("/state/omega_hat", {"/state/ky", "/state/kx", "/state/part"});
    f.group("/stepper");
    f.attribute("name", meta.stepper, "/stepper");
    f.attribute("dt_previous", meta.dt, "/stepper");
    f.group("/rng");
    f.attribute("seed", meta.seed, "/rng");
    f.attribute("counter", static_cast<long long>(meta.step), "/rng");
    f.group("/budget");
    for (int q = 0; q < BudgetState::kTerms; ++q) f.attribute(kBudgetNames[q], meta.budget.integral[q], "/budget");
    f.attribute("interval", meta.budget.interval, "/budget");
    f.attribute("last_dt", meta.budget.last_dt, "/budget");
    f.attribute("open", static_cast<long long>(meta.budget.open), "/budget");
    if (members > 1) {
      // Each member's integrals (the attributes above are member 0's).
      write_member_coordinate(f, "/budget/member", members);
      std::string terms = "budget term:";
      for (int q = 0; q < BudgetState::kTerms; ++q) terms += fmt::format("{} {} {}", q ? "," : "", q, kBudgetNames[q]);
      f.integer_coordinate("/budget/term", counting(BudgetState::kTerms), "1", terms);
      f.write("/budget/members", meta.budget.members.data(),
              {std::uint64_t(members), std::uint64_t(BudgetState::kTerms)}, "(as each term)",
              "each member's budget integrals of the open interval, (member, term)");
      f.dimensions("/budget/members", {"/budget/member", "/budget/term"});
    }
    f.attribute("generator", std::string("counter-based: SplitMix64 mix of (seed, step, mode)"), "/rng");
    f.attribute("checksum", state_checksum(hat.data(), hat.size() * sizeof(Complex<Real>), meta));
    f.close();
  };
}

template std::function<void()> checkpoint_task<float>(const std::string&, const Config&, const std::string&,
                                                      std::vector<Complex<float>>, const CheckpointMeta&);
template std::function<void()> checkpoint_task<double>(const std::string&, const Config&, const std::string&,
                                                       std::vector<Complex<double>>, const CheckpointMeta&);

void prune_checkpoints(const std::string& dir, int keep, long now) {
  std::vector<std::pair<long, std::string>> found;
  for (const auto& name : list_dir(dir + "/checkpoints")) {
    const long step = numbered(name, "ckpt_");
    if (step > now) std::remove((dir + "/checkpoints/" + name).c_str());
    else if (step >= 0) found.emplace_back(step, dir + "/checkpoints/" + name);
  }
  std::sort(found.begin(), found.end());
  for (std::size_t i = 0; i + keep < found.size(); ++i) std::remove(found[i].second.c_str());
}

CheckpointFile read_checkpoint(const std::string& path, const std::vector<std::string>& overrides) {
  H5Reader r(path, Seal::Required);
  CheckpointFile c;
  c.path = path;
  for (const char* a : {"time", "step", "dt", "checksum", "deck_resolved", "precision", "nx", "ny"})
    if (!r.has_attribute(a)) throw InputError(path + ": not a cascade checkpoint (no attribute '" + a + "')");
  if (!r.has("/state/omega_hat")) throw InputError(path + ": missing dataset /state/omega_hat");
  c.meta.time = r.attr_double("time");
  c.meta.step = static_cast<long>(r.attr_int("step"));
  c.meta.dt = r.attr_double("dt");
  c.meta.snapshot_index = r.has_attribute("snapshot_index") ? static_cast<long>(r.attr_int("snapshot_index")) : 0;
  c.meta.stepper = r.has_attribute("name", "/stepper") ? r.attr_string("name", "/stepper") : "";
  c.meta.seed = r.has_attribute("seed", "/rng") ? r.attr_int("seed", "/rng") : 0;
  if (r.has("/budget")) {
    for (int q = 0; q < BudgetState::kTerms; ++q)
      c.meta.budget.integral[q] = r.attr_double(kBudgetNames[q], "/budget");
    c.meta.budget.interval = r.attr_double("interval", "/budget");
    c.meta.budget.last_dt = r.attr_double("last_dt", "/budget");
    c.meta.budget.open = r.attr_int("open", "/budget") != 0;
  }
  // The seal proves the bytes are those cascade wrote, not that they make sense (a file edited
  // and re-sealed, or written by a buggy tool): every value is checked as a deck value is.
  const long long nx = r.attr_int("nx"), ny = r.attr_int("ny");
  auto bad = [&](const std::string& what, const std::string& expected, const std::string& found) {
    throw InputError(fmt::format("{}: attribute {}: expected {}, found {}", path, what, expected, found));
  };
  if (nx < 4 || nx > (1 << 20) || nx % 2 || ny < 4 || ny > (1 << 20) || ny % 2)
    bad("nx, ny", "even sizes in [4, 1048576]", fmt::format("{} x {}", nx, ny));
  c.nx = static_cast<int>(nx);
  c.ny = static_cast<int>(ny);
  const CheckpointMeta& m = c.meta;
  if (!std::isfinite(m.time) || m.time < 0) bad("time", "a finite time >= 0", fmt::format("{}", m.time));
  if (m.step < 0) bad("step", "a step number >= 0", std::to_string(m.step));
  if ((m.step == 0) != (m.time == 0))
    bad("step", "step 0 exactly at t = 0", fmt::format("step {} at t = {}", m.step, m.time));
  if (!std::isfinite(m.dt) || m.dt < 0 || m.dt > m.time)
    bad("dt", "a step size in [0, time]", fmt::format("{}", m.dt));
  // At most one snapshot a step, plus the one at the start.
  if (m.snapshot_index < 0 || m.snapshot_index > m.step + 1)
    bad("snapshot_index", fmt::format("a snapshot count in [0, step + 1 = {}]", m.step + 1),
        std::to_string(m.snapshot_index));
  if (m.seed < 0 || m.seed > std::numeric_limits<int>::max()) bad("/rng seed", "an integer >= 0", std::to_string(m.seed));
  if (!m.stepper.empty() && m.stepper != "rk4" && m.stepper != "rk3")
    bad("/stepper name", "rk4 or rk3", "'" + m.stepper + "'");
  for (int q = 0; q < BudgetState::kTerms; ++q)
    if (!std::isfinite(m.budget.integral[q])) bad("/budget", "finite integrals", fmt::format("{}", m.budget.integral[q]));
  if (!std::isfinite(m.budget.interval) || m.budget.interval < 0 || !std::isfinite(m.budget.last_dt) ||
      m.budget.last_dt < 0)
    bad("/budget", "a finite interval and last step >= 0",
        fmt::format("{} and {}", m.budget.interval, m.budget.last_dt));
  if (r.has_attribute("run_id")) {
    c.run_id = r.attr_string("run_id");
    if (c.run_id.size() != 32 || c.run_id.find_first_not_of("0123456789abcdef") != std::string::npos)
      bad("run_id", "32 hex digits", "'" + c.run_id.substr(0, 64) + "'");
  }
  const std::string precision = r.attr_string("precision");
  if (precision != "double" && precision != "single")
    throw InputError(path + ": attribute precision is '" + precision + "', expected double or single");
  c.precision = precision == "single" ? Precision::Single : Precision::Double;
  const int want_bytes = c.precision == Precision::Single ? 4 : 8;
  const int bytes = r.float_size("/state/omega_hat");
  if (bytes != want_bytes)
    throw InputError(fmt::format("{}: /state/omega_hat holds {}-byte values but the checkpoint says precision {}",
                                 path, bytes, precision));
  auto shape = r.shape("/state/omega_hat");
  // An ensemble's state: (member, ky, kx, part).
  if (shape.size() == 4) {
    if (shape[0] < 2 || shape[0] > 65535)
      throw InputError(fmt::format("{}: /state/omega_hat holds {} members; expected 2 to 65535 (an ensemble) or a "
                                   "(ky, kx, part) state",
                                   path, shape[0]));
    c.members = int(shape[0]);
    shape.erase(shape.begin());
  }
  if (c.nx < 4 || c.ny < 4 || shape.size() != 3 || shape[0] != std::uint64_t(c.ny) ||
      shape[1] != std::uint64_t(c.nx / 2 + 1) || shape[2] != 2)
    throw InputError(fmt::format("{}: /state/omega_hat has shape ({}) but the checkpoint's grid is {} x {} "
                                 "(expected ({}, {}, 2))",
                                 path, fmt::join(r.shape("/state/omega_hat"), ", "), c.nx, c.ny, c.ny, c.nx / 2 + 1));
  if (c.members > 1) {
    const std::vector<std::uint64_t> want{std::uint64_t(c.members), std::uint64_t(BudgetState::kTerms)};
    if (!r.has("/budget/members") || r.shape("/budget/members") != want)
      throw InputError(fmt::format("{}: an ensemble of {} members needs /budget/members of shape ({}, {})", path,
                                   c.members, c.members, BudgetState::kTerms));
    c.meta.budget.members = r.read_double("/budget/members");
    for (double x : c.meta.budget.members)
      if (!std::isfinite(x)) bad("/budget/members", "finite integrals", fmt::format("{}", x));
    std::copy_n(c.meta.budget.members.begin(), BudgetState::kTerms, c.meta.budget.integral);
  }
  // Verify the checksum on the data in its stored precision.
  std::string sum;
  if (c.precision == Precision::Single) {
    const auto v = r.read_float("/state/omega_hat");
    sum = state_checksum(v.data(), v.size() * sizeof(float), c.meta);
    c.omega_hat.assign(v.begin(), v.end());
  } else {
    c.omega_hat = r.read_double("/state/omega_hat");
    sum = state_checksum(c.omega_hat.data(), c.omega_hat.size() * sizeof(double), c.meta);
  }
  const std::string stored = r.attr_string("checksum");
  if (sum != stored)
    throw InputError(path + ": checksum mismatch (stored " + stored + ", computed " + sum +
                     "): the file is corrupt");
  c.config = parse_deck(r.attr_string("deck_resolved"), path + " (deck)", overrides);
  if (c.config.ensemble.members != c.members)
    throw InputError(fmt::format("{}: the state holds {} member{} but the deck asks for ensemble.members {}", path,
                                 c.members, c.members == 1 ? "" : "s", c.config.ensemble.members));
  // A different grid is a spectral resize, done only when asked for with --set grid.nx/ny.
  bool resize_asked = false;
  for (const auto& o : overrides) resize_asked = resize_asked || starts_with(o, "grid.nx=") || starts_with(o, "grid.ny=");
  if ((c.config.grid.nx != c.nx || c.config.grid.ny != c.ny) && !resize_asked)
    throw InputError(fmt::format("{}: the state is {} x {} but the deck asks for {} x {}; to resize, set both "
                                 "grid.nx and grid.ny with --set",
                                 path, c.nx, c.ny, c.config.grid.nx, c.config.grid.ny));
  if ((c.config.grid.nx != c.nx || c.config.grid.ny != c.ny) && c.members > 1)
    throw InputError(fmt::format("{}: an ensemble's state is not resized; take a member out with cascade extract "
                                 "and resize that",
                                 path));
  return c;
}

void extract_member(const std::string& path, int member, const std::string& output) {
  const CheckpointFile c = read_checkpoint(path, {});
  if (c.members < 2)
    throw InputError(fmt::format("{}: not an ensemble's checkpoint (it holds one member): nothing to extract", path));
  if (member < 0 || member >= c.members)
    throw InputError(fmt::format("--member: expected a member in [0, {}] of {}, found {}", c.members - 1, path,
                                 member));
  struct stat st{};
  if (::lstat(output.c_str(), &st) == 0)
    throw InputError(fmt::format("--output: '{}' exists; name a new file", output));
  const auto slash = output.find_last_of('/');
  const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : output.substr(0, slash);
  if (::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || ::access(folder.c_str(), W_OK) != 0)
    throw InputError(fmt::format("--output: '{}' is not a folder this process can write in", folder));
  std::string backend;
  {
    H5Reader r(path, Seal::Required);
    backend = r.has_attribute("backend") ? r.attr_string("backend") : std::string();
  }
  // The member's own deck (members 1, its seeds and varied values), no run id: a restart from
  // it into a new directory is a new single run.
  Config config = member_config(c.config, member);
  config.run_id.clear();
  CheckpointMeta meta = c.meta;
  std::copy_n(c.meta.budget.members.begin() + std::ptrdiff_t(BudgetState::kTerms) * member, BudgetState::kTerms,
              meta.budget.integral);
  meta.budget.members.clear();
  meta.seed = config.forcing.seed;
  const std::size_t size = c.omega_hat.size() / std::size_t(c.members) / 2, first = size * std::size_t(member);
  const auto task = [&](auto zero) {
    using Real = decltype(zero);
    std::vector<Complex<Real>> hat(size);
    for (std::size_t k = 0; k < size; ++k)
      hat[k] = {Real(c.omega_hat[2 * (first + k)]), Real(c.omega_hat[2 * (first + k) + 1])};
    return checkpoint_task<Real>(output, config, backend, std::move(hat), meta);
  };
  config.run.precision = c.precision;  // the state as stored, bit for bit
  (c.precision == Precision::Single ? task(0.0f) : task(0.0))();
}

InitialField read_initial_field(const std::string& path) {
  InitialField f;
  bool checkpoint = false;
  {
    H5Reader probe(path);
    checkpoint = probe.has("/state/omega_hat");
    if (!checkpoint && !probe.has("/vorticity"))
      throw InputError(path + ": initial.path: expected a snapshot (/vorticity) or a checkpoint (/state/omega_hat)");
  }
  if (checkpoint) {
    CheckpointFile c = read_checkpoint(path, {});
    if (c.members > 1)
      throw InputError(fmt::format("{}: initial.path: the checkpoint holds an ensemble of {} members; take one out "
                                   "with cascade extract",
                                   path, c.members));
    f.spectral = true;
    f.nx = c.nx;
    f.ny = c.ny;
    f.values = std::move(c.omega_hat);
  } else {
    H5Reader r(path);
    // (t, y, x) with t of length 1; (y, x) in snapshots written before the t dimension.
    auto shape = r.shape("/vorticity");
    if (shape.size() == 3 && shape[0] == 1) shape.erase(shape.begin());
    if (shape.size() != 2 || shape[0] < 4 || shape[1] < 4 || shape[0] % 2 || shape[1] % 2 ||
        shape[0] > (1u << 20) || shape[1] > (1u << 20))
      throw InputError(path + ": /vorticity: expected an even-sized (ny, nx) or (1, ny, nx) field, 4 to 2^20 a side");
    f.ny = int(shape[0]);
    f.nx = int(shape[1]);
    f.values = r.read_double("/vorticity");
  }
  for (std::size_t k = 0; k < f.values.size(); ++k)
    if (!std::isfinite(f.values[k]))
      throw InputError(fmt::format("{}: initial.path: the vorticity is not finite ({} at {} {})", path, f.values[k],
                                   f.spectral ? "spectral value" : "point", f.spectral ? k / 2 : k));
  return f;
}

}  // namespace cascade
