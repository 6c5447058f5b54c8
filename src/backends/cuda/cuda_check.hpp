//! @file Checks for CUDA runtime and cuFFT calls: a failure becomes a RunError naming call, file and line.
//!
//! Only for .cu translation units; include/ stays free of CUDA types.
#pragma once

#include <cuda_runtime.h>
#include <cufft.h>

#include "cascade/error.hpp"

namespace cascade {
const char* cufft_error_string(cufftResult r);
}

#define CASCADE_CUDA_CHECK(call)                                                               \
  do {                                                                                         \
    cudaError_t cascade_cuda_rc_ = (call);                                                     \
    if (cascade_cuda_rc_ != cudaSuccess)                                                       \
      ::cascade::fail_call("CUDA", #call, cudaGetErrorString(cascade_cuda_rc_), __FILE__,     \
                           __LINE__);                                                          \
  } while (0)

//! After a kernel launch: launch-configuration errors now; with CASCADE_SYNC_CHECK=1 in the
//! environment (debug mode) also a device synchronisation, so that faults name their kernel.
#define CASCADE_CUDA_CHECK_LAUNCH()                                                  \
  do {                                                                               \
    CASCADE_CUDA_CHECK(cudaPeekAtLastError());                                       \
    if (::cascade::cuda_sync_check_enabled()) CASCADE_CUDA_CHECK(cudaDeviceSynchronize()); \
  } while (0)

#define CASCADE_CUFFT_CHECK(call)                                                              \
  do {                                                                                         \
    cufftResult cascade_cufft_rc_ = (call);                                                    \
    if (cascade_cufft_rc_ != CUFFT_SUCCESS)                                                    \
      ::cascade::fail_call("cuFFT", #call, ::cascade::cufft_error_string(cascade_cufft_rc_),  \
                           __FILE__, __LINE__);                                                \
  } while (0)

namespace cascade {
bool cuda_sync_check_enabled();
}
