//! @file The CUDA backend of one GPU: BackendImpl over CudaExec (src/backends/cuda/exec.cuh).
#include "backends/cuda/exec.cuh"

namespace cascade {

template <class Real>
std::unique_ptr<Backend<Real>> make_cuda_backend(const Grid& grid, int device, int members, int first_member,
                                                 int batch) {
  auto b = std::make_unique<BackendImpl<Real, CudaExec<Real>>>(grid, device, members);
  if (batch > 0) b->hold_members(first_member, batch);
  return b;
}

template std::unique_ptr<Backend<float>> make_cuda_backend<float>(const Grid&, int, int, int, int);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(const Grid&, int, int, int, int);

}  // namespace cascade
