//! @file CUDA backend: cuFFT plans on one stream and one-line kernels over the kernels/ functors.
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "backend_impl.hpp"
#include "cuda_check.hpp"

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
    if (error) *error = cudaGetErrorString(rc);
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

namespace {

//! Grid-stride loop over n items, each handed to the functor.
template <class Fn>
__global__ void for_each_kernel(std::size_t n, Fn f) {
  const std::size_t stride = std::size_t(blockDim.x) * gridDim.x;
  for (std::size_t idx = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < n; idx += stride)
    f(idx);
}

void device_free(void* p) noexcept {
  const cudaError_t rc = cudaFree(p);
  if (rc != cudaSuccess) std::fprintf(stderr, "cascade: cudaFree failed: %s\n", cudaGetErrorString(rc));
}

template <class Real>
struct CufftTypes;
template <>
struct CufftTypes<double> {
  static constexpr cufftType r2c = CUFFT_D2Z;
  static constexpr cufftType c2r = CUFFT_Z2D;
  static cufftResult exec_r2c(cufftHandle p, const double* in, Complex<double>* out) {
    return cufftExecD2Z(p, const_cast<double*>(in), reinterpret_cast<cufftDoubleComplex*>(out));
  }
  static cufftResult exec_c2r(cufftHandle p, Complex<double>* in, double* out) {
    return cufftExecZ2D(p, reinterpret_cast<cufftDoubleComplex*>(in), out);
  }
};
template <>
struct CufftTypes<float> {
  static constexpr cufftType r2c = CUFFT_R2C;
  static constexpr cufftType c2r = CUFFT_C2R;
  static cufftResult exec_r2c(cufftHandle p, const float* in, Complex<float>* out) {
    return cufftExecR2C(p, const_cast<float*>(in), reinterpret_cast<cufftComplex*>(out));
  }
  static cufftResult exec_c2r(cufftHandle p, Complex<float>* in, float* out) {
    return cufftExecC2R(p, reinterpret_cast<cufftComplex*>(in), out);
  }
};

template <class Real>
class CudaExec {
  using T = CufftTypes<Real>;
  using Cplx = Complex<Real>;

 public:
  static constexpr BackendKind kKind = BackendKind::Cuda;

  CudaExec(const Grid& grid, int device) : device_(device) {
    std::string why;
    const int count = cuda_device_count(&why);
    if (count == 0) throw RunError("CUDA backend: " + why);
    if (device < 0 || device >= count)
      throw InputError("run.device: expected a CUDA device index in [0, " + std::to_string(count - 1) +
                       "], found " + std::to_string(device));
    CASCADE_CUDA_CHECK(cudaSetDevice(device));
    CASCADE_CUDA_CHECK(cudaGetDeviceProperties(&prop_, device));
    CASCADE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    // One plan per direction, made once; the transforms run on the backend's stream.
    CASCADE_CUFFT_CHECK(cufftCreate(&forward_));
    CASCADE_CUFFT_CHECK(cufftCreate(&inverse_));
    std::size_t work = 0;
    CASCADE_CUFFT_CHECK(cufftMakePlan2d(forward_, grid.ny, grid.nx, T::r2c, &work));
    CASCADE_CUFFT_CHECK(cufftMakePlan2d(inverse_, grid.ny, grid.nx, T::c2r, &work));
    CASCADE_CUFFT_CHECK(cufftSetStream(forward_, stream_));
    CASCADE_CUFFT_CHECK(cufftSetStream(inverse_, stream_));
    blocks_cap_ = prop_.multiProcessorCount * 16;
  }
  ~CudaExec() {
    if (forward_) cufftDestroy(forward_);
    if (inverse_) cufftDestroy(inverse_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  CudaExec(const CudaExec&) = delete;
  CudaExec& operator=(const CudaExec&) = delete;

  std::string description() const {
    return std::string("cuda (") + prop_.name + ", device " + std::to_string(device_) + ", cc " +
           std::to_string(prop_.major) + "." + std::to_string(prop_.minor) + ")";
  }

  template <class U>
  Buffer<U> alloc(std::size_t n) const {
    void* p = nullptr;
    const std::size_t bytes = std::max<std::size_t>(n * sizeof(U), 1);
    const cudaError_t rc = cudaMalloc(&p, bytes);
    if (rc != cudaSuccess) {
      cudaGetLastError();
      std::size_t free_b = 0, total_b = 0;
      cudaMemGetInfo(&free_b, &total_b);
      throw RunError("out of GPU memory: needed " + std::to_string(bytes) + " bytes, " +
                     std::to_string(free_b) + " free of " + std::to_string(total_b));
    }
    Buffer<U> b(static_cast<U*>(p), n, MemorySpace::Device, &device_free);
    CASCADE_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream_));
    return b;
  }
  template <class U>
  void copy_to_host(const U* d_src, U* dst, std::size_t n) const {
    if (!n) return;
    CASCADE_CUDA_CHECK(cudaMemcpyAsync(dst, d_src, n * sizeof(U), cudaMemcpyDeviceToHost, stream_));
    CASCADE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  template <class U>
  void copy_from_host(const U* src, U* d_dst, std::size_t n) const {
    if (!n) return;
    CASCADE_CUDA_CHECK(cudaMemcpyAsync(d_dst, src, n * sizeof(U), cudaMemcpyHostToDevice, stream_));
    // The host vector may be freed or changed right after this call returns.
    CASCADE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void synchronize() const { CASCADE_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  template <class Fn>
  void for_each(std::size_t n, const Fn& f) const {
    if (!n) return;
    constexpr int kThreads = 256;
    const std::size_t want = (n + kThreads - 1) / kThreads;
    const int blocks = static_cast<int>(std::min<std::size_t>(want, std::size_t(blocks_cap_)));
    for_each_kernel<<<blocks, kThreads, 0, stream_>>>(n, f);
    CASCADE_CUDA_CHECK_LAUNCH();
  }

  void forward(const Real* d_in, Cplx* d_out) const {
    CASCADE_CUFFT_CHECK(T::exec_r2c(forward_, d_in, d_out));
  }
  void inverse(Cplx* d_in, Real* d_out) const {
    CASCADE_CUFFT_CHECK(T::exec_c2r(inverse_, d_in, d_out));
  }

 private:
  int device_;
  cudaDeviceProp prop_{};
  cudaStream_t stream_ = nullptr;
  cufftHandle forward_ = 0;
  cufftHandle inverse_ = 0;
  int blocks_cap_ = 1024;
};

}  // namespace

template <class Real>
std::unique_ptr<Backend<Real>> make_cuda_backend(const Grid& grid, int device) {
  return std::make_unique<BackendImpl<Real, CudaExec<Real>>>(grid, device);
}

template std::unique_ptr<Backend<float>> make_cuda_backend<float>(const Grid&, int);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(const Grid&, int);

}  // namespace cascade
