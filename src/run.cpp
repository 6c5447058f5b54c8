//! @file `cascade run`: the main loop, which reads like the algorithm: step to the next output
//! time, record diagnostics there, print progress, until t_end.
#include "cascade/run.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "cascade/error.hpp"
#include "cascade/io.hpp"
#include "cascade/solver.hpp"

namespace cascade {

const char* const kDiagnosticsColumns =
    "step,t,dt,E,Z,P,max_u,cfl_limit,injection,dissipation,wall_seconds";

namespace {

using Clock = std::chrono::steady_clock;

//! Write a small text file atomically (temporary name, then rename).
void write_text_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw RunError("cannot write '" + tmp + "'");
    out << text;
    out.flush();
    if (!out) throw RunError("cannot write '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw RunError("cannot rename '" + tmp + "' to '" + path + "'");
  }
}

//! diagnostics.csv: a header, then a row per diagnostics time, flushed row by row so that a
//! killed run keeps every row it computed.
class DiagnosticsCsv {
 public:
  explicit DiagnosticsCsv(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "w")) {
    if (!file_) throw RunError("cannot write '" + path + "'");
    std::fprintf(file_, "%s\n", kDiagnosticsColumns);
    std::fflush(file_);
  }
  ~DiagnosticsCsv() {
    if (file_) std::fclose(file_);
  }
  void row(const Diagnostics& d, double wall) {
    const std::string line =
        fmt::format("{},{},{},{},{},{},{},{},{},{},{:.3f}\n", d.step, d.t, d.dt, d.energy, d.enstrophy,
                    d.palinstrophy, d.max_u, d.cfl_limit, d.injection, d.dissipation, wall);
    if (std::fputs(line.c_str(), file_) < 0 || std::fflush(file_) != 0)
      throw RunError("cannot write to '" + path_ + "'");
  }

 private:
  std::string path_;
  std::FILE* file_;
};

template <class Real>
int run_with(const Config& c, BackendKind kind, const std::string& why) {
  const Grid grid = c.make_grid();
  auto backend = make_backend<Real>(kind, grid, c.run.device, c.run.threads);
  fmt::print("cascade run: {}\n", c.source);
  fmt::print("grid {} x {}, box {:.6g} x {:.6g}, dealias {}, nonlinear term {}, stepper {}\n", grid.nx, grid.ny,
             grid.lx, grid.ly, grid.dealias == Dealias::None ? "none" : "2/3",
             c.grid.nonlinear == NonlinearForm::Advective ? "advective" : "basdevant", c.time.stepper);
  fmt::print("backend: {} [{}], precision {}\n", backend->description(), why, to_string(c.run.precision));

  make_directories(c.output.directory);
  write_text_atomically(c.output.directory + "/deck.yaml",
                        "# resolved deck, as run by cascade\n" + resolved_yaml(c));
  DiagnosticsCsv csv(c.output.directory + "/diagnostics.csv");

  Solver<Real> solver(*backend, c);
  solver.initialise();
  fmt::print("fields: {:.1f} MiB on the {}\n", solver.memory_bytes() / 1048576.0, to_string(kind));

  const auto start = Clock::now();
  auto wall = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const double t_end = c.time.t_end, every = c.output.diagnostics_every;

  Diagnostics d = solver.diagnose();
  csv.row(d, 0.0);
  auto print = [&](const Diagnostics& x, const char* limit, double rate) {
    fmt::print("step {:>8}  t {:<11.6g} dt {:<10.4g} ({:<6}) E {:<12.6g} Z {:<12.6g} max|u| {:<10.4g} {:>8.1f} steps/s\n",
               x.step, x.t, x.dt, limit, x.energy, x.enstrophy, x.max_u, rate);
    std::fflush(stdout);
  };
  print(d, "start", 0.0);

  double next_output = std::min(next_multiple(solver.time(), every), t_end);
  long steps_since_print = 0;
  auto print_clock = Clock::now();
  StepReport last;
  while (solver.time() < t_end) {
    last = solver.step(next_output);
    ++steps_since_print;
    const bool at_output = last.landed;
    const bool want_print = steps_since_print >= c.output.print_every;
    if (at_output || want_print) {
      d = solver.diagnose();
      d.dt = last.dt;
      d.cfl_limit = to_string(last.limit);
      if (at_output) csv.row(d, wall());
      if (want_print || solver.time() >= t_end) {
        const double secs = std::chrono::duration<double>(Clock::now() - print_clock).count();
        print(d, to_string(last.limit), secs > 0 ? steps_since_print / secs : 0.0);
        steps_since_print = 0;
        print_clock = Clock::now();
      }
    }
    if (at_output) next_output = std::min(next_multiple(solver.time(), every), t_end);
    if (c.time.max_steps > 0 && solver.steps() >= c.time.max_steps) {
      fmt::print("stopping at time.max_steps = {}\n", c.time.max_steps);
      break;
    }
  }
  const double seconds = wall();
  fmt::print("done: {} steps to t = {:.6g} in {:.2f} s ({:.1f} steps/s); E = {:.9g}, Z = {:.9g}\n",
             solver.steps(), solver.time(), seconds, seconds > 0 ? solver.steps() / seconds : 0.0, d.energy,
             d.enstrophy);
  fmt::print("wrote {}/deck.yaml, {}/diagnostics.csv\n", c.output.directory, c.output.directory);
  return 0;
}

}  // namespace

int run_command(const Config& c, const std::string& backend_request) {
  std::string why;
  const BackendKind kind = resolve_backend(backend_request.empty() ? c.run.backend : backend_request, why);
  return c.run.precision == Precision::Single ? run_with<float>(c, kind, why) : run_with<double>(c, kind, why);
}

}  // namespace cascade
