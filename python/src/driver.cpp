//! @file RunDriver<Real>: a run made by the parts of `cascade run` (run.hpp) and stepped by its
//! loop (simulation.hpp, a Simulation a call), for the Python module.
//!
//! Each call (run, step) hands the steps to a new cascade::Simulation with the command's
//! handlers (diagnostics, snapshots, spectra, checkpoints) on this run's files: the steps land
//! on the deck's output times and on time.t_end as the command's do, so the states are the
//! command's bit for bit. Without files (output=None) the handlers run as on an MPI rank that
//! writes nothing (RunFiles without logs): the same steps, nothing on disk.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "cascade/io.hpp"
#include "cascade/output.hpp"
#include "cascade/simulation.hpp"
#include "driver.hpp"

#if defined(CASCADE_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace cascade::python {

namespace {

//! The checkpoint handler of one call, forwarded, but for its final checkpoint (written by the
//! loop's end), which only `open()` lets through: the run reached time.t_end, a signal stopped
//! it, or the Simulation is closed. The loop reads and restarts this handler's schedule; the
//! inner handler gets it before it decides or writes, and gives it back (its wall clock).
template <class Real>
class FinalGate : public Handler<Real> {
 public:
  FinalGate(std::unique_ptr<Handler<Real>> inner, std::function<bool()> open)
      : Handler<Real>(inner->schedule), inner_(std::move(inner)), open_(std::move(open)) {}
  void initial(Moment<Real>& m) override { inner_->initial(m); }
  bool due(const Moment<Real>& m) const override {
    inner_->schedule = this->schedule;
    return inner_->due(m);
  }
  void write(Moment<Real>& m) override {
    inner_->schedule = this->schedule;
    inner_->write(m);
    this->schedule = inner_->schedule;
  }
  void flush() override { inner_->flush(); }
  void final(Moment<Real>& m) override {
    if (open_()) inner_->final(m);
  }

 private:
  std::unique_ptr<Handler<Real>> inner_;
  std::function<bool()> open_;
};

//! The backend's GPU made current on this thread for a call (Python threads, and other
//! libraries, may have made another one current), the caller's given back after it.
class DeviceScope {
 public:
  DeviceScope(bool gpu, int device) {
#if defined(CASCADE_HAVE_CUDA)
    if (gpu && cudaGetDevice(&previous_) == cudaSuccess && previous_ != device && cudaSetDevice(device) == cudaSuccess)
      restore_ = true;
#else
    (void)gpu, (void)device;
#endif
  }
  ~DeviceScope() {
#if defined(CASCADE_HAVE_CUDA)
    if (restore_) cudaSetDevice(previous_);
#endif
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
  bool restore_ = false;
};

template <class Real>
py::array to_numpy(std::vector<Real>&& values, int ny, int nx) {
  auto* owned = new std::vector<Real>(std::move(values));
  py::capsule free_it(owned, [](void* p) { delete static_cast<std::vector<Real>*>(p); });
  return py::array_t<Real>({py::ssize_t(ny), py::ssize_t(nx)}, owned->data(), free_it);
}

const char* const kFields[] = {"vorticity", "streamfunction", "u", "v"};

void check_field_name(const std::string& name) {
  if (std::find(std::begin(kFields), std::end(kFields), name) == std::end(kFields))
    throw py::value_error("field: expected vorticity, streamfunction, u or v, found '" + escaped(name) + "'");
}

template <class Real>
class RunDriver final : public Driver {
 public:
  using Cplx = Complex<Real>;

  RunDriver(std::unique_ptr<RunInputs> inputs, const RunOptions& options, Console::Level level)
      : in_(std::move(inputs)), options_(options), console_(level), muted_(Console::Level::Quiet) {
    muted_.mute();
    const Config& c = in_->config;
    const bool restart = in_->from != nullptr;
    for (const auto& n : in_->notes) console_.info(n);
    const Grid grid = c.make_grid();
    console_.info(fmt::format("cascade (Python): {}", restart ? options_.restart : c.source));
    backend_ = run_backend<Real>(c, grid, in_->kind, in_->why, console_);
    DeviceScope scope(on_gpu(), c.run.device);
    solver_ = std::make_unique<Solver<Real>>(*backend_, c);
    start_state(*solver_, grid, in_->from.get(), in_->initial, console_);
    console_.info("step transforms: " + describe(backend_->step_plan()));
    if (options_.files) {
      const std::string& dir = c.output.directory;
      diagnostics_.emplace(dir, restart, solver_->time());
      spectra_.emplace(dir, restart, solver_->time(), solver_->shell_centres());
      snapshots_.emplace(dir, grid, restart ? in_->from->meta.snapshot_index : 0);
      start_run_directory(c, options_, restart, in_->lock, console_, *diagnostics_, *spectra_, *snapshots_);
    }
    files_ = std::make_unique<RunFiles>(RunFiles{c, c.output.directory, backend_->description(),
                                                 diagnostics_ ? &*diagnostics_ : nullptr,
                                                 spectra_ ? &*spectra_ : nullptr,
                                                 snapshots_ ? &*snapshots_ : nullptr, writer_});
    fresh_ = !restart;
    in_->from.reset();  // in the solver now
    in_->initial.reset();
  }

  ~RunDriver() override {
    try {
      close();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cascade: closing the simulation: %s\n", one_line(e.what()).c_str());
    }
  }

  long advance(double until, long max_steps, bool display) override {
    if (closed_) throw RunError("this Simulation is closed: it takes no more steps");
    const double t_end = in_->config.time.t_end;
    const long first = solver_->steps();
    DeviceScope scope(on_gpu(), in_->config.run.device);
    for (;;) {
      const long taken = solver_->steps() - first;
      if (solver_->time() >= until || (max_steps > 0 && taken >= max_steps)) break;
      // Before time.t_end the steps go to it first: they land on it, and the final outputs
      // are written there, as the command's.
      const double end = solver_->time() < t_end ? std::min(until, t_end) : until;
      one_call(end, max_steps > 0 ? max_steps - taken : 0, display);
      if (interrupt_) {
        signal_ = 0;
        py::error_already_set e = std::move(*interrupt_);
        interrupt_.reset();
        throw e;
      }
    }
    return solver_->steps() - first;
  }

  double time() const override { return solver_->time(); }
  double last_dt() const override { return solver_->last_dt(); }
  long steps() const override { return solver_->steps(); }
  const Config& config() const override { return in_->config; }
  std::string backend() const override { return files_->backend; }
  bool on_gpu() const override { return backend_->kind() == BackendKind::Cuda; }
  bool writes_files() const override { return options_.files; }

  py::array field(const std::string& name) override {
    check_field_name(name);
    std::vector<Real> values;
    {
      py::gil_scoped_release release;
      DeviceScope scope(on_gpu(), in_->config.run.device);
      values = solver_->field(name);
    }
    return to_numpy(std::move(values), in_->config.grid.ny, in_->config.grid.nx);
  }

  void set_vorticity(const py::object& omega) override {
    const int ny = in_->config.grid.ny, nx = in_->config.grid.nx;
    auto a = py::array_t<Real, py::array::c_style | py::array::forcecast>::ensure(omega);
    if (!a) throw py::value_error("set_vorticity: expected an array of numbers");
    if (a.ndim() != 2 || a.shape(0) != ny || a.shape(1) != nx)
      throw py::value_error(fmt::format("set_vorticity: expected an array of shape (ny, nx) = ({}, {}), found {}", ny,
                                        nx, std::string(py::str(a.attr("shape")))));
    std::vector<Real> values(a.data(), a.data() + a.size());
    if (!std::all_of(values.begin(), values.end(), [](Real v) { return std::isfinite(v); }))
      throw py::value_error("set_vorticity: the array holds values that are not finite (NaN or infinite)");
    py::gil_scoped_release release;
    DeviceScope scope(on_gpu(), in_->config.run.device);
    solver_->set_vorticity(values);
  }

  py::dict diagnostics() override {
    Diagnostics d;
    {
      py::gil_scoped_release release;
      DeviceScope scope(on_gpu(), in_->config.run.device);
      d = solver_->diagnose();
    }
    d.set_dt(solver_->last_dt());
    DiagnosticsRow row{d, 0.0, {}};
    py::dict out;
    // The columns of diagnostics.csv, but what bound dt and the wall-clock ones (unit s).
    for (const auto& column : diagnostics_schema()) {
      if (column.type == DiagnosticsColumn::Type::Step) out[column.name.c_str()] = d.step;
      else if (column.type == DiagnosticsColumn::Type::Real && column.unit != "s")
        out[column.name.c_str()] = column.value(row);
    }
    return out;
  }

  void checkpoint(const std::string& path) override {
    py::gil_scoped_release release;
    DeviceScope scope(on_gpu(), in_->config.run.device);
    const Config& c = in_->config;
    const auto slash = path.find_last_of('/');
    if (slash != std::string::npos && slash > 0) make_directories(path.substr(0, slash));
    CheckpointMeta meta;
    meta.time = solver_->time();
    meta.step = solver_->steps();
    meta.dt = solver_->last_dt();
    meta.snapshot_index = snapshots_ ? snapshots_->next_index() : 0;
    meta.stepper = c.time.stepper;
    meta.seed = c.forcing.seed;
    meta.budget = solver_->budget();
    checkpoint_task<Real>(path, c, files_->backend, solver_->vorticity_hat(), meta)();
  }

  DeviceField device_field(const std::string& name) override {
#if defined(CASCADE_HAVE_CUDA)
    py::gil_scoped_release release;
    DeviceScope scope(on_gpu(), in_->config.run.device);
    // Whatever readers of the buffer's last contents queued (on any stream) is done first.
    if (cudaDeviceSynchronize() != cudaSuccess) throw RunError("device view: cudaDeviceSynchronize failed");
    if (!scratch_hat_) scratch_hat_ = backend_->spectral_field();
    auto it = device_.find(name);
    if (it == device_.end()) it = device_.emplace(name, backend_->real_field()).first;
    // As Solver::field computes them: the same operations, so the same values bit for bit.
    if (name == "vorticity")
      backend_->scale(solver_->state(), *scratch_hat_, Real(1.0 / double(backend_->grid().size())));
    else if (name == "streamfunction")
      backend_->streamfunction_hat(solver_->state(), *scratch_hat_);
    else
      throw py::value_error("device=True: views exist of vorticity and streamfunction, not '" + escaped(name) + "'");
    backend_->inverse(*scratch_hat_, it->second);
    backend_->synchronize();
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, it->second.data()) != cudaSuccess)
      throw RunError("device view: cudaPointerGetAttributes failed");
    return DeviceField{it->second.data(), in_->config.grid.ny, in_->config.grid.nx, int(sizeof(Real)),
                       attributes.device};
#else
    (void)name;
    throw RunError("device=True: this cascade was built without CUDA");
#endif
  }

  void close() override {
    if (closed_) return;
    if (options_.files && !fresh_ && solver_->steps() != final_step_) {
      closing_ = true;  // the final outputs, by a call of no steps
      DeviceScope scope(on_gpu(), in_->config.run.device);
      one_call(solver_->time(), 0, false);
      closing_ = false;
    }
    closed_ = true;
    writer_.drain();
    in_->lock.reset();
  }

 private:
  //! One cascade::Simulation, from now to `end` (at most `max_steps` steps; 0: any number).
  void one_call(double end, long max_steps, bool display) {
    const Config& c = in_->config;
    Config call = c;
    call.time.t_end = end;
    call.time.max_steps = max_steps;
    Simulation<Real> loop(*solver_, call, display ? console_ : muted_, [this] { return poll_signal(); });
    RunFiles& files = *files_;
    loop.add(diagnostics_handler<Real>(files, solver_->steps()));
    if (c.output.snapshot_every > 0) loop.add(snapshot_handler<Real>(files));
    if (c.output.spectra_every > 0) loop.add(spectra_handler<Real>(files, solver_->dk()));
    loop.add(std::make_unique<FinalGate<Real>>(checkpoint_handler<Real>(files, loop, last_good_),
                                               [this, end] { return final_due(end); }));
    const bool fresh = fresh_;
    fresh_ = false;
    try {
      loop.run(fresh);
    } catch (const BlowUp& e) {
      try {
        writer_.drain();
      } catch (const std::exception&) {
      }
      if (!options_.files) throw;
      const std::string good = last_good_->get();
      throw BlowUp(std::string(e.what()) + "; last good checkpoint: " +
                   (good.empty() ? std::string("none was written (set output.checkpoint_every)") : good));
    }
    writer_.drain();
  }

  //! Whether the call that ends now writes the final outputs: at time.t_end, on a signal, at
  //! close(); once a step.
  bool final_due(double end) {
    const bool due = signal_ != 0 || closing_ || (end == in_->config.time.t_end && solver_->time() >= end);
    if (!due || solver_->steps() == final_step_) return false;
    final_step_ = solver_->steps();
    return true;
  }

  //! Between steps (the GIL released): Python's signal handlers run; the exception one raises
  //! (KeyboardInterrupt on Ctrl-C) is kept, and the loop stops as on a signal.
  int poll_signal() {
    if (signal_ != 0 || closing_) return signal_;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      interrupt_.emplace();  // fetches the exception
      signal_ = SIGINT;
    }
    return signal_;
  }

  std::unique_ptr<RunInputs> in_;  // the deck, the run directory's lock
  RunOptions options_;
  Console console_, muted_;
  std::unique_ptr<Backend<Real>> backend_;
  std::unique_ptr<Solver<Real>> solver_;
  std::optional<DiagnosticsLog> diagnostics_;
  std::optional<SpectraLog> spectra_;
  std::optional<SnapshotSeries> snapshots_;
  BackgroundWriter writer_;
  std::unique_ptr<RunFiles> files_;
  std::shared_ptr<LastGoodCheckpoint> last_good_ = std::make_shared<LastGoodCheckpoint>();
  bool fresh_ = true;      //!< a new run whose outputs at the start are still to be written
  bool closing_ = false;
  bool closed_ = false;
  long final_step_ = -1;   //!< the step of the last final outputs
  int signal_ = 0;
  std::optional<py::error_already_set> interrupt_;
  std::optional<Buffer<Cplx>> scratch_hat_;         //!< device views: the spectral field
  std::map<std::string, Buffer<Real>> device_;      //!< device views: a physical field a name
};

}  // namespace

std::unique_ptr<Driver> make_driver(const RunOptions& options, Console::Level level) {
  const std::string openmp_note = cap_openmp_threads();
  auto inputs = std::make_unique<RunInputs>();
  prepare_run(options, *inputs);
  // The module's fields, views and diagnostics are one member's: an ensemble runs from the
  // command line (its run directory: docs/output-format.md).
  if (inputs->config.ensemble.members > 1)
    throw InputError(fmt::format("ensemble.members: the Python module runs one member, found {}; run an ensemble "
                                 "with cascade run, or one member of it with its own deck",
                                 inputs->config.ensemble.members));
  if (!openmp_note.empty()) inputs->notes.insert(inputs->notes.begin(), "note: " + openmp_note);
  if (inputs->config.run.precision == Precision::Single)
    return std::make_unique<RunDriver<float>>(std::move(inputs), options, level);
  return std::make_unique<RunDriver<double>>(std::move(inputs), options, level);
}

}  // namespace cascade::python
