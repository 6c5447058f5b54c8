//! @file A run as Dedalus shapes one: a Solver, the handlers that write its output on their
//! schedules, a progress display and the stop criteria. The loop reads
//!
//!     while (!stop()) { step to the next output time; write what is due; report progress }
//!
//! Handlers: diagnostics, snapshots, spectra (a simulation-time interval each) and checkpoints
//! (an interval, a wall-clock interval, at the end and on a signal). Over MPI every rank runs
//! the loop in step; rank 0 alone writes, from fields the others help gather.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cascade/cfl.hpp"
#include "cascade/config.hpp"
#include "cascade/console.hpp"
#include "cascade/output.hpp"
#include "cascade/solver.hpp"

namespace cascade {

using SimClock = std::chrono::steady_clock;

//! When a handler writes: at the multiples of `every` units of simulation time (0: never), and
//! every `wall_every` seconds of wall time (0: never).
struct Schedule {
  double every = 0;
  double wall_every = 0;
  double next = std::numeric_limits<double>::infinity();  //!< the next multiple of `every`
  double last_wall = 0;                                   //!< when it last wrote on the wall clock
  void start(double t) { next = every > 0 ? next_multiple(t, every) : std::numeric_limits<double>::infinity(); }
  //! Due when the step landed on its time. Two schedules can name the same time with values a
  //! rounding apart (12 x 0.1 and 60 x 0.02): within a hair of `every` counts as the same
  //! time, so the steps never take a sliver of 1e-16 to reach the second value.
  bool due(double t) const { return every > 0 && std::abs(t - next) <= 1e-9 * every; }
  bool wall_due(double wall) const { return wall_every > 0 && wall - last_wall >= wall_every; }
};

//! "H:MM:SS", or "--:--:--" for a time not known.
std::string hms(double seconds);

//! What a handler sees when it may write: the state just after a step (or at the start).
template <class Real>
struct Moment {
  Moment(Solver<Real>& s, SimClock::time_point t0) : solver(s), start(t0) {}
  Solver<Real>& solver;
  SimClock::time_point start;      //!< when the run (or restart) began
  double dt = 0;                   //!< the step that ended here (0 at the start)
  const char* limit = "none";      //!< what bound it
  bool wall_due = false;           //!< a wall-clock schedule ran out (rank 0's clock, agreed)
  bool final = false;              //!< the end, a signal or time.max_steps
  std::optional<Diagnostics> row;  //!< the diagnostics row written here, if one was
  double wall() const { return std::chrono::duration<double>(SimClock::now() - start).count(); }
};

//! Something written on a schedule. The loop steps to the earliest next_time() of all
//! handlers, then calls write() on each one due, in the order they were added.
template <class Real>
class Handler {
 public:
  explicit Handler(Schedule s) : schedule(s) {}
  virtual ~Handler() = default;
  //! The output at the start of a new run (a restart has it from before).
  virtual void initial(Moment<Real>&) {}
  virtual bool due(const Moment<Real>& m) const {
    return schedule.due(m.solver.time()) || (schedule.wall_every > 0 && m.wall_due);
  }
  virtual void write(Moment<Real>& m) = 0;
  //! What it holds in memory, queued for its file: called by a checkpoint before its own
  //! file, so that a checkpoint's files agree with it.
  virtual void flush() {}
  //! At the end, on a signal, at time.max_steps.
  virtual void final(Moment<Real>&) {}
  Schedule schedule;
};

//! The progress display: in place on a terminal (a few times a second), a plain line every
//! print_every steps (and in log.txt); percent of t_end, ETA from the recent rate of
//! simulation time, steps a second.
class Progress {
 public:
  Progress(Console& console, double t_start, double t_end, long print_every, long step);
  //! The rates count from here (after the outputs at the start).
  void start(long step, double t);
  //! Time for a line in place on a terminal (rank 0's view; the loop agrees it over MPI).
  bool wants_live() const;
  //! Time for a periodic line (the same on every rank).
  bool wants_print(long step, double t) const;
  //! Steps until a periodic line is due (at least 1).
  long steps_to_print(long step) const { return std::max(1L, print_every_ - (step - print_step_)); }
  void report(const Diagnostics& d, const char* limit, bool periodic, long step, double t);

 private:
  Console& console_;
  double t_start_, t_end_;
  long print_every_;
  long print_step_;
  SimClock::time_point print_clock_, live_clock_;
  double print_t_;
};

//! Why the loop stopped.
struct StopReason {
  enum Kind { End, Signal, MaxSteps } kind = End;
  int signal = 0;
};

template <class Real>
class Simulation {
 public:
  //! `signal`: the signal caught so far (0: none), read once a step and agreed over MPI.
  Simulation(Solver<Real>& solver, const Config& config, Console& console, std::function<int()> signal);
  void add(std::unique_ptr<Handler<Real>> handler) { handlers_.push_back(std::move(handler)); }
  //! Runs to t_end, a signal or time.max_steps (`fresh`: a new run, whose handlers write their
  //! output at the start), then lets every handler write its final output.
  StopReason run(bool fresh);
  double wall() const { return std::chrono::duration<double>(SimClock::now() - start_).count(); }
  long steps_taken() const { return solver_.steps() - first_step_; }
  //! Every handler's memory queued for its file (a checkpoint's first act).
  void flush();

 private:
  bool stop();
  Moment<Real> step();
  Moment<Real> moment() { return Moment<Real>(solver_, start_); }

  Solver<Real>& solver_;
  const Config& config_;
  Console& console_;
  std::function<int()> signal_;
  std::vector<std::unique_ptr<Handler<Real>>> handlers_;
  SimClock::time_point start_;
  long first_step_;
  Progress progress_;
  bool live_ = false;  //!< this step's progress line in place is due (agreed)
  StopReason reason_;
  //! Steps the device takes in one launch where the step runs there (Solver::graphed): as many
  //! as fill about kChunkSeconds, at most kChunkSteps, so that the clocks and signals are read
  //! as often as a few times a second.
  static constexpr long kChunkSteps = 256;
  static constexpr double kChunkSeconds = 0.05;
  long chunk_ = 4;
};

// ---------------------------------------------------------------- the handlers

//! The checkpoints' record of the newest one complete on disk under its name (set from the
//! background writer), for the message of a run that blows up.
struct LastGoodCheckpoint {
  std::string get();
  void set(const std::string& path);

 private:
  std::mutex mutex_;
  std::string path_;
};

//! What the handlers of one run share: its deck, its output folder and files (rank 0 only:
//! null on the others), the backend's name for provenance, and the background writer.
struct RunFiles {
  const Config& config;
  std::string dir, backend;
  DiagnosticsLog* diagnostics = nullptr;
  SpectraLog* spectra = nullptr;
  SnapshotSeries* snapshots = nullptr;
  BackgroundWriter& writer;
  bool root() const { return diagnostics != nullptr; }
};

//! A row of diagnostics.csv every output.diagnostics_every (and one at the start).
template <class Real>
std::unique_ptr<Handler<Real>> diagnostics_handler(RunFiles& files, long first_step);
//! A snapshot every output.snapshot_every (and one at the start).
template <class Real>
std::unique_ptr<Handler<Real>> snapshot_handler(RunFiles& files);
//! A row of spectra every output.spectra_every (and one at the start).
template <class Real>
std::unique_ptr<Handler<Real>> spectra_handler(RunFiles& files, double dk);
//! A checkpoint every output.checkpoint_every, every output.checkpoint_wall_seconds, and at
//! the end; before it, every handler's file is brought up to date (Simulation::flush).
template <class Real>
std::unique_ptr<Handler<Real>> checkpoint_handler(RunFiles& files, Simulation<Real>& simulation,
                                                  std::shared_ptr<LastGoodCheckpoint> last_good);

}  // namespace cascade
