//! @file `cascade run`: the command. It reads and checks every input (deck or checkpoint, the
//! run directory, its lock and run id, what a restart keeps), then makes the backend, the
//! solver and the run directory, hands the loop to a Simulation with its handlers
//! (simulation.hpp) and reports how it ended (exit 0, 3 on a signal, 128 + N before the start).
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
#include <optional>

#include "cascade/console.hpp"
#include "cascade/error.hpp"
#include "cascade/io.hpp"
#include "cascade/output.hpp"
#include "cascade/parallel.hpp"
#include "cascade/simulation.hpp"
#include "cascade/solver.hpp"
#include "cascade/version.hpp"

namespace cascade {

namespace {


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

}  // namespace

//! The backend of the run, announced (grid, backend, precision) and, on a GPU, refused with
//! one line when the fields would not fit in its free memory.
template <class Real>
std::unique_ptr<Backend<Real>> run_backend(const Config& c, const Grid& grid, BackendKind kind, const std::string& why,
                                           Console& console) {
  auto backend = make_backend<Real>(kind, grid, c.run.device, c.run.threads, c.run.fft_planning,
                                    c.run.exchange_chunks, c.ensemble.members);
  console.info(fmt::format("grid {} x {}, box {:.6g} x {:.6g}, dealias {}, nonlinear term {}, stepper {}", grid.nx,
                           grid.ny, grid.lx, grid.ly, grid.dealias == Dealias::None ? "none" : "2/3",
                           c.grid.nonlinear == NonlinearForm::Advective ? "advective" : "basdevant", c.time.stepper));
  console.info(fmt::format("backend: {} [{}], precision {}", backend->description(), why, to_string(c.run.precision)));

  // The memory the run needs, said before allocating it, and refused when the GPU lacks it.
  // Over MPI a rank holds its slab's share of the fields, or its members' (an ensemble).
  const Slab& part = backend->slab();
  const std::size_t need = std::size_t(double(Solver<Real>::required_bytes(c, part.members)) *
                                       double(part.rows) / double(grid.ny));
  std::size_t used = 0, total = 0;
  backend->device_memory(used, total);
  const double gib = 1073741824.0;
  if (kind == BackendKind::Cuda) {
    console.info(fmt::format("memory: the fields need {}{} ({:.0f} bytes a grid point), the FFT work area "
                             "{:.2f} GiB; {:.2f} of {:.2f} GiB free on the GPU",
                             human_bytes(double(need)),
                             part.members_split()   ? fmt::format(" on rank 0's GPU ({} members)", part.members)
                             : parallel::size() > 1 ? std::string(" on each GPU")
                                                    : std::string(),
                             double(need) / double(backend->slab().real_count(grid)), backend->fft_work_bytes() / gib,
                             (total - used) / gib, total / gib));
    // Room for the reductions' scratch and the CUDA context's own growth.
    const std::size_t margin = std::size_t(256) << 20;
    if (need + margin > total - used)
      throw InputError(fmt::format("grid {} x {}: the run needs {:.2f} GiB on the GPU but only {:.2f} GiB are free; "
                                   "use a smaller grid, run.precision: single, or time.stepper: rk3 (two registers)",
                                   grid.nx, grid.ny, (need + margin) / gib, (total - used) / gib));
  }
  return backend;
}

//! The solver's first state: the checkpoint's (resized spectrally when the grid differs), or
//! the deck's initial condition (initial.type file: the field read before anything was written).
template <class Real>
void start_state(Solver<Real>& solver, const Grid& grid, const CheckpointFile* from,
                 const std::optional<InitialField>& initial, Console& console) {
  if (!from) {
    solver.initialise(initial ? &*initial : nullptr);
    return;
  }
  solver.initialise();  // forcing and the like; the state is replaced next
  if (from->nx == grid.nx && from->ny == grid.ny) {
    // An ensemble's: every member's state, one after the other (read_checkpoint refuses to resize one).
    std::vector<Complex<Real>> hat(grid.spectral_size() * std::size_t(solver.members()));
    for (std::size_t k = 0; k < hat.size(); ++k) hat[k] = {Real(from->omega_hat[2 * k]), Real(from->omega_hat[2 * k + 1])};
    solver.set_vorticity_hat(hat);
  } else {
    console.info(fmt::format("resizing the state spectrally: {} x {} -> {} x {}", from->nx, from->ny, grid.nx, grid.ny));
    solver.set_vorticity_hat_resized(from->omega_hat, from->nx, from->ny);
  }
  solver.set_time(from->meta.time, from->meta.step, from->meta.dt);
  solver.set_budget(from->meta.budget);
  console.info(fmt::format("restart from t = {}, step {}", from->meta.time, from->meta.step));
}

//! Rank 0, once everything a run needs has been read and checked: the directory made, locked
//! and cleared (--overwrite), its id, log, resolved deck and output files begun.
void start_run_directory(const Config& c, const RunOptions& o, bool restart, std::optional<RunLock>& lock,
                         Console& console, DiagnosticsLog& diagnostics, SpectraLog& spectra, SnapshotSeries& snapshots) {
  const std::string& dir = c.output.directory;
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
  diagnostics.start();
  spectra.start();
  snapshots.start();
}

#define CASCADE_RUN_PARTS(Real)                                                                                \
  template std::unique_ptr<Backend<Real>> run_backend<Real>(const Config&, const Grid&, BackendKind,             \
                                                            const std::string&, Console&);                       \
  template void start_state<Real>(Solver<Real>&, const Grid&, const CheckpointFile*,                             \
                                  const std::optional<InitialField>&, Console&);
CASCADE_RUN_PARTS(float)
CASCADE_RUN_PARTS(double)
#undef CASCADE_RUN_PARTS

namespace {

//! The closing lines of a finished run: steps, time, memory, the files and how to plot them.
template <class Real>
void summary(const Config& c, Backend<Real>& backend, const Simulation<Real>& simulation, double t, long snapshots,
             const std::string& last_checkpoint, Console& console) {
  const double seconds = simulation.wall();
  const long steps = simulation.steps_taken();
  std::size_t used = 0, total = 0;
  backend.device_memory(used, total);
  struct rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  console.always(fmt::format("done: {} steps to t = {:.6g} in {} ({:.2f} s, {:.1f} steps/s)", steps, t, hms(seconds),
                             seconds, seconds > 0 ? steps / seconds : 0.0));
  console.always(fmt::format("memory: {}peak host {:.1f} MiB",
                             total ? fmt::format("GPU in use {:.2f} of {:.1f} GiB, ", used / 1073741824.0,
                                                 total / 1073741824.0)
                                   : std::string(),
                             ru.ru_maxrss / 1024.0));
  const std::string& dir = c.output.directory;
  console.always(fmt::format("wrote {}/: deck.yaml, log.txt, diagnostics.csv/.h5{}{}, checkpoints/{}", dir,
                             c.output.spectra_every > 0 ? ", spectra.h5" : "",
                             c.output.snapshot_every > 0 && parallel::root()
                                 ? fmt::format(", snapshots/ ({} in snapshots.xmf)", snapshots)
                                 : "",
                             base_name(last_checkpoint)));
  const std::string py = *kPython ? kPython : "python3";  // the interpreter CMake found with numpy and h5py
  if (c.ensemble.members > 1) {  // the plotting scripts draw one run
    console.always(fmt::format("read: postprocess/cascade_io.py open_run(\"{}\") (every file over its member "
                               "dimension); the plotting scripts draw single runs",
                               dir));
    return;
  }
  console.always(fmt::format("plot: {0} postprocess/plot_snapshot.py {1}; {0} postprocess/plot_spectra.py {1}; "
                             "{0} postprocess/plot_timeseries.py {1}",
                             py, dir));
}

template <class Real>
int run_with(Config c, const RunOptions& o, BackendKind kind, const std::string& why, const CheckpointFile* from,
             const std::optional<InitialField>& initial, Console& console, std::optional<RunLock>& lock, StopSignals& signals) {
  const bool restart = from != nullptr;
  const std::string dir = c.output.directory;
  // Over MPI every rank runs this function in step (parallel.hpp); rank 0 alone shows, logs
  // and writes, from fields the others help gather.
  const bool root = parallel::root();
  if (!root) console.mute();
  const Grid grid = c.make_grid();
  console.info(fmt::format("cascade run: {}", restart ? o.restart : c.source));
  auto backend = run_backend<Real>(c, grid, kind, why, console);
  const std::string where = backend->description();
  Solver<Real> solver(*backend, c);
  if (c.ensemble.members > 1)
    console.info(fmt::format("ensemble of {} members, stepped together{}; the progress lines show member 0 of {}",
                             c.ensemble.members,
                             backend->slab().members_split()
                                 ? fmt::format(" over {} MPI ranks (rank 0: members 0 to {}; a rank a block of "
                                               "members, whole grids)",
                                               parallel::size(), backend->slab().members - 1)
                                 : std::string(),
                             c.ensemble.members));
  start_state(solver, grid, from, initial, console);
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
  solver.prepare_graph();
  console.info("steps: " + solver.graph_note());

  // ---- the output directory: what a restart keeps is read and checked first; only when every
  // input has passed is anything written
  std::optional<DiagnosticsLog> diagnostics;
  std::optional<SpectraLog> spectra;
  std::optional<SnapshotSeries> snapshots;
  if (root) {
    diagnostics.emplace(dir, restart, solver.time(), c.ensemble.members);
    spectra.emplace(dir, restart, solver.time(), solver.shell_centres(), c.ensemble.members);
    snapshots.emplace(dir, grid, restart ? from->meta.snapshot_index : 0, c.ensemble.members);
  }
  if (const int sig = agreed_signal(signals)) return stopped_before_start(sig, console);
  if (root) start_run_directory(c, o, restart, lock, console, *diagnostics, *spectra, *snapshots);
  BackgroundWriter writer;

  // ---- the loop: handlers write the outputs on their schedules (simulation.hpp)
  RunFiles files{c, dir, where, diagnostics ? &*diagnostics : nullptr, spectra ? &*spectra : nullptr,
                 snapshots ? &*snapshots : nullptr, writer};
  Simulation<Real> simulation(solver, c, console, [&signals] { return signals.caught(); });
  auto last_good = std::make_shared<LastGoodCheckpoint>();
  simulation.add(diagnostics_handler<Real>(files, solver.steps()));
  if (c.output.snapshot_every > 0) simulation.add(snapshot_handler<Real>(files));
  if (c.output.spectra_every > 0) simulation.add(spectra_handler<Real>(files, solver.dk()));
  simulation.add(checkpoint_handler<Real>(files, simulation, last_good));
  StopReason stopped;
  try {
    stopped = simulation.run(!restart);
  } catch (const BlowUp& e) {
    try {
      writer.drain();
    } catch (const std::exception&) {
    }
    const std::string good = last_good->get().empty()
                                 ? (restart ? "the checkpoint it started from, " + o.restart
                                            : std::string("none was written (set output.checkpoint_every)"))
                                 : last_good->get();
    throw RunError(std::string(e.what()) + "; last good checkpoint: " + good);
  }
  writer.drain();
  if (stopped.kind == StopReason::Signal) {
    console.always(fmt::format("stopped by signal {} at t = {:.9g}, step {}; checkpoint written: {}", stopped.signal,
                               solver.time(), solver.steps(), last_good->get()));
    console.always(fmt::format("resume with: cascade run --restart {}", last_good->get()));
    return kExitStopped;
  }
  summary(c, *backend, simulation, solver.time(), snapshots ? snapshots->next_index() : 0, last_good->get(),
          console);
  return 0;
}

}  // namespace

std::optional<InitialField> check_run_inputs(const Config& c) {
  check_output_path(c.output.directory);
  if (c.initial.type == "file") return read_initial_field(c.initial.path);
  return std::nullopt;
}

void prepare_run(const RunOptions& o, RunInputs& in) {
  std::vector<std::string> overrides = o.overrides;
  if (!o.output.empty()) overrides.push_back("output.directory=" + o.output);
  Config& c = in.config;
  std::unique_ptr<CheckpointFile>& from = in.from;
  if (!o.restart.empty()) {
    from = std::make_unique<CheckpointFile>(read_checkpoint(o.restart, overrides));
    c = from->config;
    c.output.directory = restart_directory(o, c);
    if (c.run.precision != from->precision)
      in.notes.push_back(fmt::format("note: the checkpoint holds {} precision; continuing in {} (not bit-for-bit)",
                                     to_string(from->precision), to_string(c.run.precision)));
    if (c.time.t_end <= from->meta.time)
      throw InputError(fmt::format("time.t_end: expected a time after the checkpoint's t = {}, found {}",
                                   from->meta.time, c.time.t_end));
  } else {
    c = o.deck_text.empty() ? load_deck(o.deck, overrides) : parse_deck(o.deck_text, o.deck, overrides);
    in.initial = check_run_inputs(c);
  }
  const std::string dir = c.output.directory;
  std::optional<RunLock>& lock = in.lock;
  if (!o.files) {
    c.run_id = new_run_id();  // no directory: a new run whatever it started from
  } else if (parallel::root()) {  // over MPI, rank 0 alone looks at and writes the output directory
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
  in.kind = resolve_backend(o.backend.empty() ? c.run.backend : o.backend, in.why, c.ensemble.members);
}

int run_command(const RunOptions& o) {
  StopSignals signals;  // from the start: a signal during set-up is answered too
  const std::string openmp_note = cap_openmp_threads();
  RunInputs in;
  prepare_run(o, in);
  if (!openmp_note.empty()) in.notes.insert(in.notes.begin(), "note: " + openmp_note);
  Console console(o.quiet ? Console::Level::Quiet : o.verbose ? Console::Level::Verbose : Console::Level::Normal);
  for (const auto& n : in.notes) console.info(n);
  const Config& c = in.config;
  try {
    return c.run.precision == Precision::Single
               ? run_with<float>(c, o, in.kind, in.why, in.from.get(), in.initial, console, in.lock, signals)
               : run_with<double>(c, o, in.kind, in.why, in.from.get(), in.initial, console, in.lock, signals);
  } catch (const std::exception& e) {
    console.detail(std::string("error: ") + e.what());  // on screen main() prints it; here for log.txt
    throw;
  }
}

}  // namespace cascade
