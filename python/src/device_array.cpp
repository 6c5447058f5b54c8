//! @file cascade.DeviceArray (device_array.hpp): the two protocols over one device field.
//!
//! The field is complete when the view is made (Driver::device_field synchronises the solver's
//! stream), so a consumer on any stream may read it at once: the interface's `stream` is None
//! ("no synchronisation needed") and __dlpack__ accepts whatever stream it is given.
#include "device_array.hpp"

#include <fmt/format.h>

#include <cstdint>

#if defined(CASCADE_HAVE_DLPACK)
#include <dlpack/dlpack.h>
#endif

namespace cascade::python {

namespace {

std::string typestr(const DeviceField& f) { return f.bytes == 4 ? "<f4" : "<f8"; }

py::dict cuda_array_interface(const DeviceArray& a) {
  py::dict out;
  out["shape"] = py::make_tuple(a.field.ny, a.field.nx);
  out["typestr"] = typestr(a.field);
  out["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(a.field.data), false);
  out["version"] = 3;
  out["strides"] = py::none();  // C-contiguous
  out["stream"] = py::none();   // complete already: no synchronisation needed
  return out;
}

#if defined(CASCADE_HAVE_DLPACK)
//! The capsule's tensor and what keeps its memory alive: a reference to the view.
struct DlpackTensor {
  DLManagedTensor managed{};
  std::int64_t shape[2] = {0, 0};
  std::int64_t strides[2] = {0, 1};
  PyObject* view = nullptr;
};

//! Called by the consumer when it is done with the tensor (from any thread).
void release_tensor(DLManagedTensor* managed) {
  auto* t = static_cast<DlpackTensor*>(managed->manager_ctx);
  if (Py_IsInitialized()) {
    const PyGILState_STATE gil = PyGILState_Ensure();
    Py_XDECREF(t->view);
    PyGILState_Release(gil);
  }
  delete t;
}

//! A capsule no consumer took (still named "dltensor") releases its tensor itself.
void release_capsule(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed && managed->deleter) managed->deleter(managed);
}

py::object dlpack(const py::object& self, const py::object& stream, const py::object& max_version,
                  const py::object& dl_device, const py::object& copy) {
  (void)stream, (void)max_version;  // any stream: the data is complete; a version 0 capsule for every consumer
  const DeviceArray& a = self.cast<const DeviceArray&>();
  if (!copy.is_none() && copy.cast<bool>())
    throw py::buffer_error("cascade.DeviceArray.__dlpack__: copy=True: a view does not copy (copy the array you make)");
  if (!dl_device.is_none()) {
    const auto wanted = dl_device.cast<std::pair<int, int>>();
    if (wanted.first != kDLCUDA || wanted.second != a.field.device)
      throw py::buffer_error(fmt::format("cascade.DeviceArray.__dlpack__: the data is on CUDA device {}, not on "
                                         "device ({}, {})",
                                         a.field.device, wanted.first, wanted.second));
  }
  auto* t = new DlpackTensor;
  t->shape[0] = a.field.ny;
  t->shape[1] = a.field.nx;
  t->strides[0] = a.field.nx;
  DLTensor& d = t->managed.dl_tensor;
  d.data = a.field.data;
  d.device = DLDevice{kDLCUDA, a.field.device};
  d.ndim = 2;
  d.dtype = DLDataType{kDLFloat, std::uint8_t(8 * a.field.bytes), 1};
  d.shape = t->shape;
  d.strides = t->strides;
  d.byte_offset = 0;
  t->managed.manager_ctx = t;
  t->managed.deleter = release_tensor;
  t->view = self.inc_ref().ptr();
  PyObject* capsule = PyCapsule_New(&t->managed, "dltensor", release_capsule);
  if (!capsule) {
    release_tensor(&t->managed);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(capsule);
}
#endif

}  // namespace

void bind_device_array(py::module_& m) {
  auto cls = py::class_<DeviceArray>(m, "DeviceArray", R"doc(
A field in the solver's GPU memory, for CuPy, PyTorch, JAX (zero copy).

Made by Simulation.vorticity(device=True) and streamfunction(device=True). It exposes
__cuda_array_interface__ (version 3; stream None: the data is complete when the view is made)
and, where cascade was built with dlpack/dlpack.h, __dlpack__ and __dlpack_device__.
The memory is a buffer of the Simulation (one a field name), kept alive by this view and the
arrays made from it; the next call of the same method overwrites it in place, steps do not.
Copy what you keep (cupy.array(view), torch.from_dlpack(view).clone()).)doc");
  cls.def_property_readonly("__cuda_array_interface__", &cuda_array_interface)
      .def_property_readonly("shape", [](const DeviceArray& a) { return py::make_tuple(a.field.ny, a.field.nx); })
      .def_property_readonly("dtype", [](const DeviceArray& a) { return py::dtype(typestr(a.field)); })
      .def_property_readonly("ptr", [](const DeviceArray& a) { return reinterpret_cast<std::uintptr_t>(a.field.data); })
      .def_property_readonly("device", [](const DeviceArray& a) { return a.field.device; })
      .def_property_readonly("name", [](const DeviceArray& a) { return a.name; })
      .def_property_readonly("simulation", [](const DeviceArray& a) { return a.owner; })
      .def("__repr__", [](const DeviceArray& a) {
        return fmt::format("<cascade.DeviceArray {} ({}, {}) {} on CUDA device {}>", a.name, a.field.ny, a.field.nx,
                           typestr(a.field), a.field.device);
      });
#if defined(CASCADE_HAVE_DLPACK)
  cls.def("__dlpack__", &dlpack, py::kw_only(), py::arg("stream") = py::none(),
          py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
          "A DLPack capsule of the field (no copy); any stream: the data is complete.")
      .def("__dlpack_device__", [](const DeviceArray& a) { return py::make_tuple(int(kDLCUDA), a.field.device); });
  m.attr("HAVE_DLPACK") = true;
#else
  m.attr("HAVE_DLPACK") = false;
#endif
}

}  // namespace cascade::python
