//! @file The CUDA backend of one GPU in single precision (backend.cuh).
#include "backends/cuda/backend.cuh"

namespace cascade {
template std::unique_ptr<Backend<float>> make_cuda_backend<float>(const Grid&, int, int, int, int);
}  // namespace cascade
