//! @file The cascade Python module (_cascade, imported by python/cascade/__init__.py):
//! Simulation, DeviceArray and the exceptions (docs/python.md).
#include <fmt/format.h>
#include <pybind11/stl.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <limits>

#include "cascade/backend.hpp"
#include "cascade/error.hpp"
#include "cascade/version.hpp"
#include "device_array.hpp"
#include "driver.hpp"

namespace cascade::python {

namespace {

//! A Python value as YAML: dicts (decks and their sections), lists, and scalars written as the
//! deck reader reads them (a float by its shortest exact repr, inf and nan as .inf and .nan).
YAML::Node to_yaml(const py::handle& value, const std::string& where) {
  if (py::isinstance<py::dict>(value)) {
    YAML::Node node(YAML::NodeType::Map);
    for (const auto& item : py::reinterpret_borrow<py::dict>(value)) {
      const std::string key = py::str(item.first);
      node[key] = to_yaml(item.second, where.empty() ? key : where + "." + key);
    }
    return node;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    YAML::Node node(YAML::NodeType::Sequence);
    for (const auto& item : value) node.push_back(to_yaml(item, where + "[]"));
    return node;
  }
  if (value.is_none()) return YAML::Node(YAML::NodeType::Null);
  if (py::isinstance<py::bool_>(value)) return YAML::Node(value.cast<bool>() ? "true" : "false");
  if (py::isinstance<py::float_>(value)) {
    const double x = value.cast<double>();
    if (std::isnan(x)) return YAML::Node(".nan");
    if (std::isinf(x)) return YAML::Node(x > 0 ? ".inf" : "-.inf");
    return YAML::Node(std::string(py::repr(value)));
  }
  if (py::isinstance<py::int_>(value) || py::isinstance<py::str>(value)) return YAML::Node(std::string(py::str(value)));
  if (py::hasattr(value, "__fspath__")) return YAML::Node(std::string(py::str(value.attr("__fspath__")())));
  if (py::hasattr(value, "item"))  // numpy scalars
    return to_yaml(value.attr("item")(), where);
  throw InputError(fmt::format("{}: a deck value must be a number, string, bool, list or dict, found {}",
                               where.empty() ? "deck" : where, std::string(py::str(py::type::of(value).attr("__name__")))));
}

std::string yaml_text(const YAML::Node& node, bool flow) {
  YAML::Emitter out;
  if (flow) out << YAML::Flow;
  out << node;
  return out.c_str();
}

//! `set`: a dict {"grid.nx": 512} or a list of "grid.nx=512"; a str value is YAML text, as
//! after --set on the command line.
std::vector<std::string> overrides_of(const py::object& set) {
  std::vector<std::string> out;
  if (set.is_none()) return out;
  if (py::isinstance<py::dict>(set)) {
    for (const auto& item : py::reinterpret_borrow<py::dict>(set)) {
      const std::string key = py::str(item.first);
      const std::string value = py::isinstance<py::str>(item.second) ? std::string(py::str(item.second))
                                                                      : yaml_text(to_yaml(item.second, key), true);
      out.push_back(key + "=" + value);
    }
    return out;
  }
  if (py::isinstance<py::str>(set)) return {set.cast<std::string>()};
  for (const auto& item : set) out.push_back(py::str(item));
  return out;
}

std::string path_of(const py::object& p) { return py::str(py::module_::import("os").attr("fspath")(p)); }

//! output: None or False, no files; True, the deck's output.directory (a checkpoint's run);
//! a path, that directory (--output).
void set_output(RunOptions& o, const py::object& output) {
  if (output.is_none() || (py::isinstance<py::bool_>(output) && !output.cast<bool>())) {
    o.files = false;
  } else if (!py::isinstance<py::bool_>(output)) {
    o.output = path_of(output);
    if (o.output.empty()) throw InputError("output: expected None, True or a directory, found ''");
  }
}

Console::Level level_of(bool quiet, bool verbose) {
  return verbose ? Console::Level::Verbose : quiet ? Console::Level::Quiet : Console::Level::Normal;
}

//! The Python Simulation: a Driver (driver.hpp), made from a deck or a checkpoint.
struct Simulation {
  std::unique_ptr<Driver> driver;
  bool busy = false;  //!< a call is using the solver (read and set with the GIL held)

  Driver& d() const { return *driver; }

  //! One call at a time: the GIL is released while the solver works, so another thread (or a
  //! signal handler between steps) could come in; it is refused instead.
  struct Use {
    explicit Use(Simulation& s) : s_(s) {
      if (s_.busy) throw RunError("this Simulation is busy with a call from another thread or a signal handler");
      s_.busy = true;
    }
    ~Use() { s_.busy = false; }
    Simulation& s_;
  };

  static std::unique_ptr<Simulation> make(RunOptions o, bool quiet, bool verbose) {
    auto s = std::make_unique<Simulation>();
    py::gil_scoped_release release;  // planning and reading may take a while
    s->driver = make_driver(o, level_of(quiet, verbose));
    return s;
  }

  static std::unique_ptr<Simulation> from_deck(const py::object& deck, const py::object& set, const py::object& backend,
                                               const py::object& output, bool overwrite, bool quiet, bool verbose) {
    RunOptions o;
    if (py::isinstance<py::dict>(deck)) {
      o.deck = "<dict>";
      o.deck_text = yaml_text(to_yaml(deck, ""), false) + "\n";
    } else {
      o.deck = path_of(deck);
    }
    o.overrides = overrides_of(set);
    if (!backend.is_none()) o.backend = backend.cast<std::string>();
    set_output(o, output);
    o.overwrite = overwrite;
    return make(o, quiet, verbose);
  }

  static std::unique_ptr<Simulation> restart(const py::object& checkpoint, const py::object& set,
                                             const py::object& backend, const py::object& output, bool quiet,
                                             bool verbose) {
    RunOptions o;
    o.restart = path_of(checkpoint);
    o.overrides = overrides_of(set);
    if (!backend.is_none()) o.backend = backend.cast<std::string>();
    set_output(o, output);
    return make(o, quiet, verbose);
  }

  long run(const py::object& until) {
    const double t = d().time();
    const double end = until.is_none() ? d().config().time.t_end : until.cast<double>();
    if (std::isnan(end) || end < t)
      throw py::value_error(fmt::format("run: until: expected a time at or after t = {}, found {}", t, end));
    Use use(*this);
    py::gil_scoped_release release;
    return d().advance(end, 0, true);
  }

  long step(long n) {
    if (n < 0) throw py::value_error(fmt::format("step: expected a number of steps >= 0, found {}", n));
    if (n == 0) return 0;
    Use use(*this);
    py::gil_scoped_release release;
    return d().advance(std::numeric_limits<double>::infinity(), n, false);
  }

  py::object field(const py::object& self, const std::string& name, bool device) {
    Use use(*this);
    if (!device) return d().field(name);
    if (!d().on_gpu())
      throw py::value_error(fmt::format("{}(device=True): this Simulation runs on the CPU ({}): its fields are host "
                                        "memory; call {}() for a numpy array, or use backend='cuda'",
                                        name, d().backend(), name));
    DeviceArray view{d().device_field(name), name, self};
    return py::cast(std::move(view));
  }
};

//! The exceptions, as one line each (the messages of the command line).
PyObject* g_deck_error = nullptr;
PyObject* g_run_error = nullptr;
PyObject* g_blow_up = nullptr;

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const BlowUp& e) {
    PyErr_SetString(g_blow_up, one_line(e.what()).c_str());
  } catch (const RunError& e) {
    PyErr_SetString(g_run_error, one_line(e.what()).c_str());
  } catch (const InputError& e) {
    PyErr_SetString(g_deck_error, one_line(e.what()).c_str());
  }
}

PyObject* new_exception(py::module_& m, const char* name, PyObject* base, const char* doc) {
  PyObject* type = PyErr_NewExceptionWithDoc((std::string("cascade.") + name).c_str(), doc, base, nullptr);
  if (!type) throw py::error_already_set();
  m.add_object(name, py::handle(type));  // the module keeps a reference; so does this file, for good
  return type;
}

}  // namespace

}  // namespace cascade::python

PYBIND11_MODULE(_cascade, m) {
  using namespace cascade::python;
  namespace c = cascade;
  m.doc() = "cascade's solver driven from Python: Simulation (docs/python.md)";
  m.attr("__version__") = c::kVersion;
  g_deck_error = new_exception(m, "DeckError", PyExc_ValueError,
                               "A bad deck, override, checkpoint or output directory (the command's exit code 2).");
  g_run_error = new_exception(m, "RunError", PyExc_RuntimeError, "The run failed (the command's exit code 1).");
  g_blow_up = new_exception(m, "BlowUp", g_run_error, "The run blew up: a non-finite velocity or a step below dt_min.");
  py::register_exception_translator(&translate);

  m.def("cuda_unavailable_reason", &c::cuda_unavailable_reason,
        "Why backend='cuda' cannot run here ('' when it can).");
  bind_device_array(m);

  using S = Simulation;
  py::class_<S>(m, "Simulation", "A run of a deck (cascade run), stepped from Python (docs/python.md).")
      .def(py::init(&S::from_deck), py::arg("deck"), py::kw_only(), py::arg("set") = py::none(),
           py::arg("backend") = py::none(), py::arg("output") = py::none(), py::arg("overwrite") = false,
           py::arg("quiet") = true, py::arg("verbose") = false)
      .def_static("restart", &S::restart, py::arg("checkpoint"), py::kw_only(), py::arg("set") = py::none(),
                  py::arg("backend") = py::none(), py::arg("output") = py::none(), py::arg("quiet") = true,
                  py::arg("verbose") = false, "A Simulation continuing from a checkpoint, as cascade run --restart.")
      .def("run", &S::run, py::arg("until") = py::none(),
           "Step to `until` (default time.t_end), landing on it; returns the steps taken.")
      .def("step", &S::step, py::arg("n") = 1, "Take n steps; returns n.")
      .def_property_readonly("t", [](const S& s) { return s.d().time(); })
      .def_property_readonly("dt", [](const S& s) { return s.d().last_dt(); })
      .def_property_readonly("step_count", [](const S& s) { return s.d().steps(); })
      .def_property_readonly("shape", [](const S& s) { return py::make_tuple(s.d().config().grid.ny, s.d().config().grid.nx); })
      .def_property_readonly("precision", [](const S& s) { return std::string(c::to_string(s.d().config().run.precision)); })
      .def_property_readonly("backend", [](const S& s) { return s.d().backend(); })
      .def_property_readonly("on_gpu", [](const S& s) { return s.d().on_gpu(); })
      .def_property_readonly("output", [](const S& s) -> py::object {
        return s.d().writes_files() ? py::object(py::str(s.d().config().output.directory)) : py::none();
      })
      .def_property_readonly("run_id", [](const S& s) { return s.d().config().run_id; })
      .def_property_readonly("deck", [](const S& s) { return c::resolved_yaml(s.d().config()); },
                             "The resolved deck (YAML), as deck.yaml holds it.")
      .def("vorticity", [](py::object self, bool device) { return self.cast<S&>().field(self, "vorticity", device); },
           py::arg("device") = false)
      .def("streamfunction",
           [](py::object self, bool device) { return self.cast<S&>().field(self, "streamfunction", device); },
           py::arg("device") = false)
      .def("field", [](py::object self, const std::string& name) { return self.cast<S&>().field(self, name, false); },
           py::arg("name"), "vorticity, streamfunction, u or v as a numpy array (ny, nx).")
      .def("set_vorticity", [](S& s, const py::object& omega) { S::Use use(s); s.d().set_vorticity(omega); },
           py::arg("omega"))
      .def("diagnostics", [](S& s) { S::Use use(s); return s.d().diagnostics(); })
      .def("checkpoint", [](S& s, const py::object& path) { S::Use use(s); s.d().checkpoint(path_of(path)); },
           py::arg("path"))
      .def("close", [](S& s) { S::Use use(s); s.d().close(); })
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](S& s, const py::args&) { S::Use use(s); s.d().close(); })
      .def("__repr__", [](const S& s) {
        return fmt::format("<cascade.Simulation {} x {} {} on {}: t = {:.6g}, step {}>", s.d().config().grid.nx,
                           s.d().config().grid.ny, c::to_string(s.d().config().run.precision), s.d().backend(),
                           s.d().time(), s.d().steps());
      });
}
