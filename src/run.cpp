//! @file `cascade run`: the main loop, which reads like the algorithm: step to the next output
//! time, write what is due there, print progress, until t_end; checkpoints on a schedule, on
//! a signal and at the end; restart from a checkpoint continues the same output directory.
#include "cascade/run.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>

#include "cascade/console.hpp"
#include "cascade/error.hpp"
#include "cascade/io.hpp"
#include "cascade/output.hpp"
#include "cascade/parallel.hpp"
#include "cascade/solver.hpp"
#include "cascade/version.hpp"

namespace cascade {

const char* const kDiagnosticsColumns =
    "step,t,dt,E,Z,P,max_u,cfl_limit,injection,dissipation,wall_seconds,"
    "dissipation_nu,dissipation_mu,dissipation_alpha,injection_Z,dissipation_Z,wall_per_step";

namespace {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------- signals

std::atomic<int> g_signal{0};

extern "C" void on_stop_signal(int sig) { g_signal.store(sig); }

//! SIGINT/SIGTERM set a flag, from the moment `cascade run` starts: before the first step the
//! run stops with one line and nothing written (128 + signal); after it, the run finishes its
//! step, writes a checkpoint and exits kExitStopped.
class StopSignals {
 public:
  StopSignals() {
    g_signal.store(0);
    struct sigaction sa{};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  int caught() const { return g_signal.load(); }

 private:
  struct sigaction old_int_{}, old_term_{};
};

// ---------------------------------------------------------------- schedules

//! An output every `every` units of simulation time (0: never), at the multiples of `every`.
struct Schedule {
  double every = 0;
  double next = std::numeric_limits<double>::infinity();
  void start(double t) { next = every > 0 ? next_multiple(t, every) : std::numeric_limits<double>::infinity(); }
  //! Due when the step landed on its time. Two schedules can name the same time with values a
  //! rounding apart (12 x 0.1 and 60 x 0.02): within a hair of `every` counts as the same
  //! time, so the steps never take a sliver of 1e-16 to reach the second value.
  bool due(double t) const { return every > 0 && std::abs(t - next) <= 1e-9 * every; }
};

std::string parent_dir(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

//! The run directory of a checkpoint: --output, else the folder above checkpoints/, else the
//! deck's output.directory.
std::string restart_directory(const RunOptions& o, const Config& c) {
  if (!o.output.empty()) return o.output;
  const std::string parent = parent_dir(o.restart);
  if (base_name(parent) == "checkpoints") return parent_dir(parent);
  return c.output.directory;
}

// ---------------------------------------------------------------- the run

std::string hms(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--:--";
  const long s = static_cast<long>(seconds + 0.5);
  return fmt::format("{}:{:02d}:{:02d}", s / 3600, int(s / 60 % 60), int(s % 60));
}

//! Where a checkpoint's run lives: the folder above its checkpoints/ folder, or "".
std::string run_of_checkpoint(const std::string& path) {
  const std::string parent = parent_dir(path);
  return base_name(parent) == "checkpoints" ? parent_dir(parent) : std::string();
}

bool same_directory(const std::string& a, const std::string& b) {
  struct stat sa{}, sb{};
  return !a.empty() && ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

//! A signal that came before anything was computed or written: one line, nothing on disk.
int stopped_before_start(int sig, Console& console) {
  console.always(fmt::format("stopped by signal {} before the run began: nothing was computed and nothing written; "
                             "run the same command again",
                             sig));
  return 128 + sig;
}

int agreed_signal(const StopSignals& signals) {
  int caught[1] = {signals.caught()};
  if (parallel::size() > 1) parallel::agree_max(caught, 1);
  return caught[0];
}

template <class Real>
int run_with(Config c, const RunOptions& o, BackendKind kind, const std::string& why, const CheckpointFile* from,
             Console& console, std::optional<RunLock>& lock, StopSignals& signals) {
  const bool restart = from != nullptr;
  const std::string dir = c.output.directory;
  // Over MPI every rank runs this function in step (parallel.hpp); rank 0 alone shows, logs
  // and writes, from fields the others help gather.
  const bool root = parallel::root();
  if (!root) console.mute();
  const Grid grid = c.make_grid();
  console.info(fmt::format("cascade run: {}", restart ? o.restart : c.source));
  auto backend = make_backend<Real>(kind, grid, c.run.device, c.run.threads, c.run.fft_planning);
  const std::string where = backend->description();
  console.info(fmt::format("grid {} x {}, box {:.6g} x {:.6g}, dealias {}, nonlinear term {}, stepper {}", grid.nx,
                           grid.ny, grid.lx, grid.ly, grid.dealias == Dealias::None ? "none" : "2/3",
                           c.grid.nonlinear == NonlinearForm::Advective ? "advective" : "basdevant", c.time.stepper));
  console.info(fmt::format("backend: {} [{}], precision {}", where, why, to_string(c.run.precision)));

  // The memory the run needs, said before allocating it, and refused when the GPU lacks it.
  {
    // Over MPI a rank holds its slab's share of the fields.
    const std::size_t need = std::size_t(double(Solver<Real>::required_bytes(c)) *
                                         double(backend->slab().rows) / double(grid.ny));
    std::size_t used = 0, total = 0;
    backend->device_memory(used, total);
    const double gib = 1073741824.0;
    if (kind == BackendKind::Cuda) {
      console.info(fmt::format("memory: the fields need {}{} ({:.0f} bytes a grid point), the FFT work area "
                               "{:.2f} GiB; {:.2f} of {:.2f} GiB free on the GPU",
                               human_bytes(double(need)), parallel::size() > 1 ? " on each GPU" : "",
                               double(need) / double(backend->slab().real_count(grid)), backend->fft_work_bytes() / gib,
                               (total - used) / gib, total / gib));
      // Room for the reductions' scratch and the CUDA context's own growth.
      const std::size_t margin = std::size_t(256) << 20;
      if (need + margin > total - used)
        throw InputError(fmt::format("grid {} x {}: the run needs {:.2f} GiB on the GPU but only {:.2f} GiB are free; "
                                     "use a smaller grid, run.precision: single, or time.stepper: rk3 (two registers)",
                                     grid.nx, grid.ny, (need + margin) / gib, (total - used) / gib));
    }
  }
  Solver<Real> solver(*backend, c);
  if (restart) {
    solver.initialise();  // forcing and the like; the state is replaced next
    if (from->nx == grid.nx && from->ny == grid.ny) {
      std::vector<Complex<Real>> hat(grid.spectral_size());
      for (std::size_t k = 0; k < hat.size(); ++k)
        hat[k] = {Real(from->omega_hat[2 * k]), Real(from->omega_hat[2 * k + 1])};
      solver.set_vorticity_hat(hat);
    } else {
      console.info(fmt::format("resizing the state spectrally: {} x {} -> {} x {}", from->nx, from->ny, grid.nx, grid.ny));
      solver.set_vorticity_hat_resized(from->omega_hat, from->nx, from->ny);
    }
    solver.set_time(from->meta.time, from->meta.step, from->meta.dt);
    solver.set_budget(from->meta.budget);
    console.info(fmt::format("restart from t = {}, step {}", from->meta.time, from->meta.step));
  } else {
    solver.initialise();
  }
  if (kind != BackendKind::Cuda)  // the GPU's line came before allocating
    console.info(fmt::format("memory: the fields take {}{}", human_bytes(double(solver.memory_bytes())),
                             parallel::size() > 1 ? " on each rank" : ""));
  // What the backend made of its step transforms (the GPU: pruned, batched pairs, cuFFT
  // callbacks; the CPU: row by row or not; the MPI slabs: none of their own) and why.
  // The GPU's FFT work area may have grown for them (the complex pairs' is twice the real one's).
  console.info("step transforms: " + describe(backend->step_plan()) +
               (kind == BackendKind::Cuda
                    ? fmt::format("; FFT work area {:.2f} GiB", backend->fft_work_bytes() / 1073741824.0)
                    : std::string()));

  // ---- the output directory: what a restart keeps is read and checked first; only when every
  // input has passed is anything written
  std::optional<DiagnosticsLog> diagnostics;
  std::optional<SpectraLog> spectra;
  std::optional<SnapshotSeries> snapshots;
  if (root) {
    diagnostics.emplace(dir, restart, solver.time());
    spectra.emplace(dir, restart, solver.time(), solver.shell_centres());
    snapshots.emplace(dir, grid, restart ? from->meta.snapshot_index : 0);
  }
  if (const int sig = agreed_signal(signals)) return stopped_before_start(sig, console);
  if (root) {
    make_directories(dir);
    if (!lock) {
      // A new directory, locked as soon as it exists; a run that made it in the meantime wins.
      lock.emplace(dir);
      if (holds_run(dir) && !o.overwrite)
        throw InputError("output.directory: '" + dir + "' already holds a run's output (another run started there "
                         "meanwhile); choose another directory");
    }
    if (!restart && o.overwrite) clear_run(dir);
    remove_stale_temporaries(dir);
    write_run_id(dir, c.run_id);
    console.open_log(dir + "/log.txt");
    write_text_atomically(dir + "/deck.yaml", "# resolved deck, as run by cascade\n" + resolved_yaml(c));
    make_directories(dir + "/checkpoints");
    diagnostics->start();
    spectra->start();
    snapshots->start();
  }
  BackgroundWriter writer;

  const auto start = Clock::now();
  auto wall = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  // The newest checkpoint known to be complete on disk under its name (set by the writer).
  struct LastGood {
    std::mutex mutex;
    std::string path;
  };
  auto last_good = std::make_shared<LastGood>();
  auto last_checkpoint = [&] {
    std::lock_guard<std::mutex> lock(last_good->mutex);
    return last_good->path;
  };
  double last_checkpoint_time = 0;

  auto write_snapshot = [&](double dt) {
    std::vector<std::pair<std::string, std::vector<Real>>> fields;
    for (const auto& name : c.output.fields) {
      if (name == "velocity") {
        fields.emplace_back("u", solver.field("u"));
        fields.emplace_back("v", solver.field("v"));
      } else {
        fields.emplace_back(name, solver.field(name));
      }
    }
    if (root) writer.submit(snapshots->task<Real>(c, where, solver.time(), solver.steps(), dt, std::move(fields)));
  };
  auto write_spectra_row = [&] {
    const auto sp = solver.spectra();
    if (root) spectra->append(solver.time(), solver.steps(), sp.energy, sp.enstrophy, sp.flux, sp.flux_z);
  };
  auto write_checkpoint = [&] {
    CheckpointMeta m;
    m.time = solver.time();
    m.step = solver.steps();
    m.dt = solver.last_dt();
    m.snapshot_index = root ? snapshots->next_index() : 0;
    m.stepper = c.time.stepper;
    m.seed = c.forcing.seed;
    m.budget = solver.budget();
    last_checkpoint_time = wall();
    // The state is copied to the host here (gathered on every rank: a collective); the file is
    // written while the run goes on.
    auto state = solver.vorticity_hat();
    if (!root) return;
    const std::string path = checkpoint_path(dir, solver.steps());
    writer.submit(diagnostics->h5_task(c, where));
    if (c.output.spectra_every > 0) writer.submit(spectra->h5_task(c, where, solver.dk()));
    writer.submit(checkpoint_task<Real>(path, c, where, std::move(state), m));
    writer.submit([dir, keep = c.output.keep_checkpoints, path, last_good, now = solver.steps()] {
      {
        std::lock_guard<std::mutex> guard(last_good->mutex);
        last_good->path = path;  // only once it is on disk under its name
      }
      prune_checkpoints(dir, keep, now);
    });
  };

  // ---- outputs at the start (a restart has them from before)
  if (!restart) {
    Diagnostics d = solver.diagnose_interval();
    if (root) diagnostics->append(d, 0.0);
    if (c.output.snapshot_every > 0) write_snapshot(0.0);
    if (c.output.spectra_every > 0) write_spectra_row();
  }
  Schedule diag{c.output.diagnostics_every}, snap{c.output.snapshot_every}, spec{c.output.spectra_every},
      ckpt{c.output.checkpoint_every};
  for (Schedule* s : {&diag, &snap, &spec, &ckpt}) s->start(solver.time());

  // Progress: in place on a terminal (a few times a second), a plain line every print_every
  // steps (and in log.txt). Percent of t_end, ETA from the recent rate of simulation time.
  const double t_start = solver.time();
  auto progress = [&](const Diagnostics& x, const char* limit, double steps_per_s, double t_per_s, bool periodic) {
    const double frac = (x.t - t_start) / std::max(c.time.t_end - t_start, 1e-300);
    const double eta = t_per_s > 0 ? (c.time.t_end - x.t) / t_per_s : NAN;
    console.progress(fmt::format("[{:5.1f}%] step {:>8}  t {:<10.5g} dt {:<9.3g} ({:<6}) E {:<11.5g} Z {:<11.5g} "
                                 "max|u| {:<9.4g} {:>8.1f} steps/s  ETA {}",
                                 100 * frac, x.step, x.t, x.dt, limit, x.energy, x.enstrophy, x.max_u, steps_per_s,
                                 hms(eta)),
                     periodic);
  };
  const double t_end = c.time.t_end;
  long steps_since_print = 0;
  auto print_clock = Clock::now();
  double print_t = solver.time();
  auto live_clock = Clock::now();
  const long first_step = solver.steps();
  long steps_since_row = 0;
  double last_row_wall = 0;
  StepReport last;
  int stopped_by = 0;
  try {
    while (solver.time() < t_end) {
      const double next_output = std::min({diag.next, snap.next, spec.next, ckpt.next, t_end});
      last = solver.step(next_output);
      ++steps_since_print;
      const double t = solver.time();
      const bool want_print = steps_since_print >= c.output.print_every || t >= t_end;
      // On a terminal the line is refreshed about four times a second.
      bool want_live = console.terminal() && console.level() != Console::Level::Quiet &&
                       std::chrono::duration<double>(Clock::now() - live_clock).count() > 0.25;
      bool wall_due = c.output.checkpoint_wall_seconds > 0 &&
                      wall() - last_checkpoint_time >= c.output.checkpoint_wall_seconds;
      int caught = signals.caught();
      if (parallel::size() > 1) {
        // What the clock and the signals say can differ between ranks: rank 0's clock decides,
        // a signal on any rank stops them all, at the same step.
        int agreed[3] = {root && want_live, root && wall_due, caught};
        parallel::agree_max(agreed, 3);
        want_live = agreed[0] != 0;
        wall_due = agreed[1] != 0;
        caught = agreed[2];
      }
      ++steps_since_row;
      if (diag.due(t) || want_print || want_live) {
        Diagnostics d = diag.due(t) ? solver.diagnose_interval() : solver.diagnose();
        d.dt = last.dt;
        d.cfl_limit = to_string(last.limit);
        if (diag.due(t)) {
          const double now = wall();
          d.wall_per_step = steps_since_row > 0 ? (now - last_row_wall) / steps_since_row : 0.0;
          if (root) diagnostics->append(d, now);
          steps_since_row = 0;
          last_row_wall = now;
        }
        if (want_print || want_live) {
          const double secs = std::chrono::duration<double>(Clock::now() - print_clock).count();
          progress(d, to_string(last.limit), secs > 0 ? steps_since_print / secs : 0.0,
                   secs > 0 ? (t - print_t) / secs : 0.0, want_print);
          live_clock = Clock::now();
          if (want_print) {
            steps_since_print = 0;
            print_clock = Clock::now();
            print_t = t;
          }
        }
      }
      if (snap.due(t)) write_snapshot(last.dt);
      if (spec.due(t)) write_spectra_row();
      if ((ckpt.due(t) || wall_due) && t < t_end) write_checkpoint();
      for (Schedule* s : {&diag, &snap, &spec, &ckpt})
        if (s->due(t)) s->start(t);
      if ((stopped_by = caught)) break;
      if (c.time.max_steps > 0 && solver.steps() - first_step >= c.time.max_steps) {
        console.info(fmt::format("stopping at time.max_steps = {}", c.time.max_steps));
        break;
      }
    }
  } catch (const BlowUp& e) {
    try {
      writer.drain();
    } catch (const std::exception&) {
    }
    const std::string good = last_checkpoint().empty()
                                 ? (restart ? "the checkpoint it started from, " + o.restart
                                            : std::string("none was written (set output.checkpoint_every)"))
                                 : last_checkpoint();
    throw RunError(std::string(e.what()) + "; last good checkpoint: " + good);
  }
  write_checkpoint();  // the end, a signal or max_steps: always leave a checkpoint
  writer.drain();
  const double seconds = wall();
  const long steps = solver.steps() - first_step;
  if (stopped_by) {
    console.always(fmt::format("stopped by signal {} at t = {:.9g}, step {}; checkpoint written: {}", stopped_by,
                               solver.time(), solver.steps(), last_checkpoint()));
    console.always(fmt::format("resume with: cascade run --restart {}", last_checkpoint()));
    return kExitStopped;
  }
  // ---- the summary
  std::size_t used = 0, total = 0;
  backend->device_memory(used, total);
  struct rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  console.always(fmt::format("done: {} steps to t = {:.6g} in {} ({:.2f} s, {:.1f} steps/s)", steps, solver.time(),
                             hms(seconds), seconds, seconds > 0 ? steps / seconds : 0.0));
  console.always(fmt::format("memory: {}peak host {:.1f} MiB",
                             total ? fmt::format("GPU in use {:.2f} of {:.1f} GiB, ", used / 1073741824.0,
                                                 total / 1073741824.0)
                                   : std::string(),
                             ru.ru_maxrss / 1024.0));
  console.always(fmt::format("wrote {}/: deck.yaml, log.txt, diagnostics.csv/.h5{}{}, checkpoints/{}", dir,
                             c.output.spectra_every > 0 ? ", spectra.h5" : "",
                             c.output.snapshot_every > 0 && root
                                 ? fmt::format(", snapshots/ ({} in snapshots.xmf)", snapshots->next_index())
                                 : "",
                             base_name(last_checkpoint())));
  const std::string py = *kPython ? kPython : "python3";  // the interpreter CMake found with numpy and h5py
  console.always(fmt::format("plot: {0} postprocess/plot_snapshot.py {1}; {0} postprocess/plot_spectra.py {1}; "
                             "{0} postprocess/plot_timeseries.py {1}",
                             py, dir));
  return 0;
}

}  // namespace

void check_run_inputs(const Config& c) {
  check_output_path(c.output.directory);
  if (c.initial.type == "file") read_initial_field(c.initial.path);
}

int run_command(const RunOptions& o) {
  StopSignals signals;  // from the start: a signal during set-up is answered too
  const std::string openmp_note = cap_openmp_threads();
  std::vector<std::string> overrides = o.overrides;
  if (!o.output.empty()) overrides.push_back("output.directory=" + o.output);
  std::vector<std::string> notes;
  if (!openmp_note.empty()) notes.push_back("note: " + openmp_note);
  Config c;
  std::unique_ptr<CheckpointFile> from;
  if (!o.restart.empty()) {
    from = std::make_unique<CheckpointFile>(read_checkpoint(o.restart, overrides));
    c = from->config;
    c.output.directory = restart_directory(o, c);
    if (c.run.precision != from->precision)
      notes.push_back(fmt::format("note: the checkpoint holds {} precision; continuing in {} (not bit-for-bit)",
                                  to_string(from->precision), to_string(c.run.precision)));
    if (c.time.t_end <= from->meta.time)
      throw InputError(fmt::format("time.t_end: expected a time after the checkpoint's t = {}, found {}",
                                   from->meta.time, c.time.t_end));
  } else {
    c = load_deck(o.deck, overrides);
    check_run_inputs(c);
  }
  const std::string dir = c.output.directory;
  std::optional<RunLock> lock;
  if (parallel::root()) {  // over MPI, rank 0 alone looks at and writes the output directory
    check_output_directory(dir);  // without creating anything: a rejected run leaves no trace
    struct stat st{};
    const bool dir_exists = ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    // An existing directory is locked before anything in it is read, and for the whole run.
    if (dir_exists) lock.emplace(dir);
    const bool holds = dir_exists && holds_run(dir);
    if (!from) {
      if (holds && !o.overwrite)
        throw InputError("output.directory: '" + dir +
                         "' already holds a run's output; continue it with --restart CHECKPOINT, choose another "
                         "directory, or replace it with --overwrite");
      c.run_id = new_run_id();
    } else if (holds) {
      // A checkpoint continues its own run only: one copied elsewhere and restarted must not
      // merge into whatever run the directory holds.
      const std::string held = read_run_id(dir);
      const bool same = !held.empty() && !from->run_id.empty() ? held == from->run_id
                                                               : same_directory(run_of_checkpoint(o.restart), dir);
      if (!same)
        throw InputError(fmt::format(
            "--restart: '{}' belongs to {} but '{}' holds {}; to continue it there would mix two runs: name a new "
            "directory with --output",
            o.restart, from->run_id.empty() ? std::string("a run written before run ids") : "run " + from->run_id,
            dir, held.empty() ? std::string("another run") : "run " + held));
      c.run_id = !held.empty() ? held : !from->run_id.empty() ? from->run_id : new_run_id();
    } else {
      c.run_id = new_run_id();  // continued into a new directory: a new run from that state
    }
  }
  std::string why;
  const BackendKind kind = resolve_backend(o.backend.empty() ? c.run.backend : o.backend, why);
  Console console(o.quiet ? Console::Level::Quiet : o.verbose ? Console::Level::Verbose : Console::Level::Normal);
  for (const auto& n : notes) console.info(n);
  try {
    return c.run.precision == Precision::Single ? run_with<float>(c, o, kind, why, from.get(), console, lock, signals)
                                                : run_with<double>(c, o, kind, why, from.get(), console, lock, signals);
  } catch (const std::exception& e) {
    console.detail(std::string("error: ") + e.what());  // on screen main() prints it; here for log.txt
    throw;
  }
}

}  // namespace cascade
