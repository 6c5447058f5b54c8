//! @file The handlers of a run (simulation.hpp): diagnostics, snapshots, spectra and
//! checkpoints, each writing through the output layer's files on its schedule.
#include <fmt/format.h>

#include "cascade/simulation.hpp"

namespace cascade {

std::string LastGoodCheckpoint::get() {
  std::lock_guard<std::mutex> lock(mutex_);
  return path_;
}

void LastGoodCheckpoint::set(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  path_ = path;
}

namespace {

template <class Real>
class DiagnosticsHandler : public Handler<Real> {
 public:
  DiagnosticsHandler(RunFiles& files, long first_step)
      : Handler<Real>({files.config.output.diagnostics_every}), files_(files), row_step_(first_step) {}

  // An ensemble's rows: one a member, member after member; the progress line shows member 0's.
  void initial(Moment<Real>& m) override {
    const std::vector<Diagnostics> rows = m.solver.diagnose_interval_members();
    if (files_.root())
      for (std::size_t b = 0; b < rows.size(); ++b) files_.diagnostics->append(rows[b], 0.0, int(b));
  }
  void write(Moment<Real>& m) override {
    std::vector<Diagnostics> rows = m.solver.diagnose_interval_members();
    const double now = m.wall();
    const long steps = m.solver.steps() - row_step_;
    for (std::size_t b = 0; b < rows.size(); ++b) {
      Diagnostics& d = rows[b];
      d.set_dt(m.dt);
      d.cfl_limit = m.limit;
      d.wall_per_step = steps > 0 ? (now - row_wall_) / steps : 0.0;
      if (files_.root()) files_.diagnostics->append(d, now, int(b));
    }
    row_step_ = m.solver.steps();
    row_wall_ = now;
    m.row = rows[0];
  }
  void flush() override {
    if (files_.root()) files_.writer.submit(files_.diagnostics->h5_task(files_.config, files_.backend));
  }

 private:
  RunFiles& files_;
  long row_step_;        //!< the step of the previous row
  double row_wall_ = 0;  //!< its wall time
};

template <class Real>
class SnapshotHandler : public Handler<Real> {
 public:
  explicit SnapshotHandler(RunFiles& files) : Handler<Real>({files.config.output.snapshot_every}), files_(files) {}
  void initial(Moment<Real>& m) override { write(m); }
  void write(Moment<Real>& m) override {
    std::vector<std::pair<std::string, std::vector<Real>>> fields;
    for (const auto& name : files_.config.output.fields) {
      if (name == "velocity") {
        fields.emplace_back("u", m.solver.field("u"));
        fields.emplace_back("v", m.solver.field("v"));
      } else {
        fields.emplace_back(name, m.solver.field(name));
      }
    }
    if (files_.root())
      files_.writer.submit(files_.snapshots->template task<Real>(files_.config, files_.backend, m.solver.time(),
                                                                 m.solver.steps(), m.dt, std::move(fields)));
  }

 private:
  RunFiles& files_;
};

template <class Real>
class SpectraHandler : public Handler<Real> {
 public:
  SpectraHandler(RunFiles& files, double dk)
      : Handler<Real>({files.config.output.spectra_every}), files_(files), dk_(dk) {}
  void initial(Moment<Real>& m) override { write(m); }
  void write(Moment<Real>& m) override {
    // Every member's spectra, one after the other (an ensemble's (member, k) row).
    typename Solver<Real>::Spectra all;
    for (const auto& sp : m.solver.spectra_members())
      for (auto [to, from] : {std::pair{&all.energy, &sp.energy}, std::pair{&all.enstrophy, &sp.enstrophy},
                              std::pair{&all.flux, &sp.flux}, std::pair{&all.flux_z, &sp.flux_z}})
        to->insert(to->end(), from->begin(), from->end());
    if (files_.root())
      files_.spectra->append(m.solver.time(), m.solver.steps(), all.energy, all.enstrophy, all.flux, all.flux_z);
  }
  void flush() override {
    if (files_.root()) files_.writer.submit(files_.spectra->h5_task(files_.config, files_.backend, dk_));
  }

 private:
  RunFiles& files_;
  double dk_;  //!< the shells' width, in spectra.h5's attributes
};

template <class Real>
class CheckpointHandler : public Handler<Real> {
 public:
  CheckpointHandler(RunFiles& files, Simulation<Real>& simulation, std::shared_ptr<LastGoodCheckpoint> last_good)
      : Handler<Real>({files.config.output.checkpoint_every, files.config.output.checkpoint_wall_seconds}),
        files_(files),
        simulation_(simulation),
        last_good_(std::move(last_good)) {}
  //! On its schedules, but not at t_end: the final checkpoint is written once, by final().
  bool due(const Moment<Real>& m) const override {
    return Handler<Real>::due(m) && m.solver.time() < files_.config.time.t_end;
  }
  void write(Moment<Real>& m) override {
    Solver<Real>& s = m.solver;
    CheckpointMeta meta;
    meta.time = s.time();
    meta.step = s.steps();
    meta.dt = s.last_dt();
    meta.snapshot_index = files_.snapshots ? files_.snapshots->next_index() : 0;
    meta.stepper = files_.config.time.stepper;
    meta.seed = files_.config.forcing.seed;
    meta.budget = s.budget();
    this->schedule.last_wall = m.wall();
    // The state is copied to the host here (gathered on every rank: a collective); the file is
    // written while the run goes on, after the files of the other handlers.
    auto state = s.vorticity_hat();
    if (!files_.root()) return;
    const std::string path = checkpoint_path(files_.dir, s.steps());
    simulation_.flush();
    files_.writer.submit(checkpoint_task<Real>(path, files_.config, files_.backend, std::move(state), meta));
    files_.writer.submit(
        [dir = files_.dir, keep = files_.config.output.keep_checkpoints, path, last_good = last_good_, now = s.steps()] {
          last_good->set(path);  // only once it is on disk under its name
          prune_checkpoints(dir, keep, now);
        });
  }
  //! The end, a signal or time.max_steps: always leave a checkpoint.
  void final(Moment<Real>& m) override { write(m); }

 private:
  RunFiles& files_;
  Simulation<Real>& simulation_;
  std::shared_ptr<LastGoodCheckpoint> last_good_;
};

}  // namespace

template <class Real>
std::unique_ptr<Handler<Real>> diagnostics_handler(RunFiles& files, long first_step) {
  return std::make_unique<DiagnosticsHandler<Real>>(files, first_step);
}
template <class Real>
std::unique_ptr<Handler<Real>> snapshot_handler(RunFiles& files) {
  return std::make_unique<SnapshotHandler<Real>>(files);
}
template <class Real>
std::unique_ptr<Handler<Real>> spectra_handler(RunFiles& files, double dk) {
  return std::make_unique<SpectraHandler<Real>>(files, dk);
}
template <class Real>
std::unique_ptr<Handler<Real>> checkpoint_handler(RunFiles& files, Simulation<Real>& simulation,
                                                  std::shared_ptr<LastGoodCheckpoint> last_good) {
  return std::make_unique<CheckpointHandler<Real>>(files, simulation, std::move(last_good));
}

#define CASCADE_HANDLERS(Real)                                                                                  \
  template std::unique_ptr<Handler<Real>> diagnostics_handler<Real>(RunFiles&, long);                           \
  template std::unique_ptr<Handler<Real>> snapshot_handler<Real>(RunFiles&);                                    \
  template std::unique_ptr<Handler<Real>> spectra_handler<Real>(RunFiles&, double);                             \
  template std::unique_ptr<Handler<Real>> checkpoint_handler<Real>(RunFiles&, Simulation<Real>&,                \
                                                                   std::shared_ptr<LastGoodCheckpoint>);
CASCADE_HANDLERS(float)
CASCADE_HANDLERS(double)
#undef CASCADE_HANDLERS

}  // namespace cascade
