//! @file The CUDA backend of one GPU: BackendImpl over CudaExec (src/backends/cuda/exec.cuh),
//! instantiated once a precision, each in a translation unit of its own (backend_single.cu,
//! backend_double.cu), so that the two, which hold nearly all of the build's kernels, compile
//! side by side.
#pragma once

#include "backends/cuda/exec.cuh"

namespace cascade {

template <class Real>
std::unique_ptr<Backend<Real>> make_cuda_backend(const Grid& grid, int device, int members, int first_member,
                                                 int batch) {
  auto b = std::make_unique<BackendImpl<Real, CudaExec<Real>>>(grid, device, members);
  if (batch > 0) b->hold_members(first_member, batch);
  return b;
}

}  // namespace cascade
