//! @file The run behind a Python `cascade.Simulation`: the parts of `cascade run` (run.hpp:
//! prepare_run, run_backend, start_state, start_run_directory) and its loop (simulation.hpp),
//! driven a call at a time. Driver is the precision-free face the bindings (module.cpp) see.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "cascade/console.hpp"
#include "cascade/run.hpp"

namespace cascade::python {

namespace py = pybind11;

//! A physical field in device memory that the Driver owns (DeviceArray views it).
struct DeviceField {
  void* data = nullptr;
  int ny = 0, nx = 0;
  int bytes = 8;    //!< of an element: 4 (single) or 8 (double)
  int device = 0;   //!< the CUDA device ordinal
};

class Driver {
 public:
  virtual ~Driver() = default;
  //! Steps until `until` (landing on it), at most `max_steps` (0: any number); the deck's
  //! output times and time.t_end are landed on, as `cascade run` lands on them. `display`: the
  //! progress lines of the command (run) or none (step). Returns the steps taken. The GIL is
  //! released while stepping and taken back between steps to look for signals: a Python
  //! exception from a signal handler (KeyboardInterrupt) stops the loop after its step, the
  //! final outputs are written and the exception is raised.
  virtual long advance(double until, long max_steps, bool display) = 0;
  virtual double time() const = 0;
  virtual double last_dt() const = 0;
  virtual long steps() const = 0;
  virtual const Config& config() const = 0;
  virtual std::string backend() const = 0;
  virtual bool on_gpu() const = 0;
  virtual bool writes_files() const = 0;
  //! A physical field (vorticity, streamfunction, u, v) as a new numpy array (ny, nx).
  virtual py::array field(const std::string& name) = 0;
  virtual void set_vorticity(const py::object& omega) = 0;
  //! The diagnostics row of the state now (instantaneous budget rates).
  virtual py::dict diagnostics() = 0;
  //! A checkpoint of the state now at `path` (written before returning).
  virtual void checkpoint(const std::string& path) = 0;
  //! The field computed on the device into this Driver's buffer of that name (overwritten by
  //! the next call for the same name), the device synchronised.
  virtual DeviceField device_field(const std::string& name) = 0;
  //! The final outputs (a checkpoint, diagnostics.h5, spectra.h5) where the state moved since
  //! the last ones, every write finished, the run directory's lock released.
  virtual void close() = 0;
};

//! Reads and checks the inputs as `cascade run` does (prepare_run), then makes the backend, the
//! solver in its first state and, when options.files, the run directory.
std::unique_ptr<Driver> make_driver(const RunOptions& options, Console::Level level);

}  // namespace cascade::python
