//! @file CUDA device queries and error names (no kernels): what `cascade info` and the backend
//! factory ask of the runtime.
#include <cuda_runtime.h>
#include <cufft.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cascade/backend.hpp"
#include "backends/cuda/cuda_check.hpp"

namespace cascade {

const char* cufft_error_string(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED (out of device memory)";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "unknown cuFFT error";
  }
}

bool cuda_sync_check_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("CASCADE_SYNC_CHECK");
    return v && *v && std::string(v) != "0";
  }();
  return enabled;
}

int cuda_device_count(std::string* error) {
  int n = 0;
  const cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess) {
    // Without a driver the runtime says "driver version is insufficient": say what is missing.
    // The runtime loads libcuda.so.1 when it finds one, so it is loaded iff a driver exists.
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (driver) dlclose(driver);
    const bool no_driver = !driver && (rc == cudaErrorInsufficientDriver || rc == cudaErrorNoDevice);
    if (error) *error = no_driver ? std::string("no NVIDIA driver or GPU found")
                                  : std::string("no CUDA device: ") + cudaGetErrorString(rc);
    cudaGetLastError();  // clear the sticky-free error so later queries start clean
    return 0;
  }
  if (n == 0 && error) *error = "no CUDA device present";
  return n;
}

std::vector<CudaDeviceInfo> cuda_devices() {
  std::vector<CudaDeviceInfo> out;
  const int n = cuda_device_count();
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p{};
    CASCADE_CUDA_CHECK(cudaGetDeviceProperties(&p, d));
    CASCADE_CUDA_CHECK(cudaSetDevice(d));
    std::size_t free_b = 0, total_b = 0;
    CASCADE_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    out.push_back({d, p.name, p.major, p.minor, p.multiProcessorCount, total_b, free_b,
                   std::size_t(p.l2CacheSize)});
  }
  return out;
}

void device_free(void* p) noexcept {
  const cudaError_t rc = cudaFree(p);
  if (rc != cudaSuccess) std::fprintf(stderr, "cascade: cudaFree failed: %s\n", cudaGetErrorString(rc));
}

}  // namespace cascade
