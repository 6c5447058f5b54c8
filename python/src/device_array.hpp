//! @file DeviceArray: a view of a field in the solver's GPU memory, read by CuPy, PyTorch, JAX
//! and the like without a copy (__cuda_array_interface__ version 3, and DLPack where the build
//! found dlpack/dlpack.h). It holds a reference to its Simulation: the memory lives as long as
//! any view (or any array made from one) does.
#pragma once

#include <pybind11/pybind11.h>

#include "driver.hpp"

namespace cascade::python {

struct DeviceArray {
  DeviceField field;
  std::string name;  //!< vorticity or streamfunction
  py::object owner;  //!< the Simulation whose Driver owns the memory
};

//! The class cascade.DeviceArray in module `m`.
void bind_device_array(py::module_& m);

}  // namespace cascade::python
