//! @file The CUDA backend of one GPU in double precision (backend.cuh).
#include "backends/cuda/backend.cuh"

namespace cascade {
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(const Grid&, int, int, int, int);
}  // namespace cascade
