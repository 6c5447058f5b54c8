//! @file The CUDA backend of one GPU: BackendImpl over CudaExec (src/backends/cuda/exec.cuh).
#include "backends/cuda/exec.cuh"

namespace cascade {

template <class Real>
std::unique_ptr<Backend<Real>> make_cuda_backend(const Grid& grid, int device, int members) {
  return std::make_unique<BackendImpl<Real, CudaExec<Real>>>(grid, device, members);
}

template std::unique_ptr<Backend<float>> make_cuda_backend<float>(const Grid&, int, int);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(const Grid&, int, int);

}  // namespace cascade
