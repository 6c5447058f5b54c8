//! @file CUDA backend: cuFFT plans on one stream and one-line kernels over the kernels/ functors.
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "backend_impl.hpp"
#include "cascade/reduction.hpp"
#include "kernels/reduction.cuh"
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

//! The grid-stride loop of for_each_kernel, keeping the NaN-propagating maximum of what the
//! functor returns: the first level of the cascade (per thread, then per block by warp
//! shuffles); the per-block partials are then combined by reduce_device.
template <int BLOCK, class Real, class Fn>
__global__ void __launch_bounds__(BLOCK) for_each_max_kernel(std::size_t n, Fn f, Real* d_partials) {
  const MaxOp<Real> op;
  Real acc = MaxOp<Real>::identity();
  const std::size_t stride = std::size_t(BLOCK) * gridDim.x;
  for (std::size_t idx = std::size_t(blockIdx.x) * BLOCK + threadIdx.x; idx < n; idx += stride)
    acc = op(acc, f(idx));
  acc = reduction_kernels::block_reduce_shuffle<BLOCK>(acc, op);
  if (threadIdx.x == 0) d_partials[blockIdx.x] = acc;
}

struct AddOp {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const {
    return a + b;
  }
};

//! The grid-stride loop of for_each_kernel, summing what the functor returns (R, a struct of
//! doubles) per block; the partials are summed in a fixed order by budget_finish_kernel, so
//! that the result is the same from run to run (a restart stays bit for bit).
template <int BLOCK, class R, class Fn>
__global__ void __launch_bounds__(BLOCK) for_each_sum_kernel(std::size_t n, Fn f, R* d_partials) {
  R acc{};
  const std::size_t stride = std::size_t(BLOCK) * gridDim.x;
  for (std::size_t idx = std::size_t(blockIdx.x) * BLOCK + threadIdx.x; idx < n; idx += stride)
    acc = acc + f(idx);
  using Reduce = cub::BlockReduce<R, BLOCK>;
  __shared__ typename Reduce::TempStorage temp;
  const R total = Reduce(temp).Reduce(acc, AddOp{});
  if (threadIdx.x == 0) d_partials[blockIdx.x] = total;
}

//! One block: the sum of the per-block partials, weighted into the budget integrals.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) budget_finish_kernel(const SpectralSums* d_partials, int count,
                                                              BudgetWeights w, double* d_integrals) {
  SpectralSums acc{};
  for (int i = threadIdx.x; i < count; i += BLOCK) acc = acc + d_partials[i];
  using Reduce = cub::BlockReduce<SpectralSums, BLOCK>;
  __shared__ typename Reduce::TempStorage temp;
  const SpectralSums total = Reduce(temp).Reduce(acc, AddOp{});
  if (threadIdx.x == 0) accumulate_budget(d_integrals, total, w);
}

//! Four histograms of f(idx) = {bin, v[4]}: per-block bins in shared memory when they fit,
//! then one atomicAdd per bin and block into the global bins (4 x bins doubles).
template <class Fn>
__global__ void histogram4_kernel(std::size_t n, Fn f, int bins, bool shared_bins, double* d_bins) {
  extern __shared__ double s_bins[];
  if (shared_bins)
    for (int k = threadIdx.x; k < 4 * bins; k += blockDim.x) s_bins[k] = 0.0;
  __syncthreads();
  double* target = shared_bins ? s_bins : d_bins;
  const std::size_t stride = std::size_t(blockDim.x) * gridDim.x;
  for (std::size_t idx = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < n; idx += stride) {
    const auto c = f(idx);
    if (c.bin >= 0 && c.bin < bins)
      for (int q = 0; q < 4; ++q)
        if (c.v[q] != 0.0) atomicAdd(&target[q * bins + c.bin], c.v[q]);
  }
  if (!shared_bins) return;
  __syncthreads();
  for (int k = threadIdx.x; k < 4 * bins; k += blockDim.x)
    if (s_bins[k] != 0.0) atomicAdd(&d_bins[k], s_bins[k]);
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

  CudaExec(const Grid& grid, int device) : device_(device), whole_(Slab::whole(grid)) {
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
    // One plan per direction, made once, sharing one work area (auto-allocation off): at the
    // largest grids a second work area would cost as much as a field.
    CASCADE_CUFFT_CHECK(cufftCreate(&forward_));
    CASCADE_CUFFT_CHECK(cufftCreate(&inverse_));
    CASCADE_CUFFT_CHECK(cufftSetAutoAllocation(forward_, 0));
    CASCADE_CUFFT_CHECK(cufftSetAutoAllocation(inverse_, 0));
    std::size_t work_f = 0, work_i = 0;
    CASCADE_CUFFT_CHECK(cufftMakePlan2d(forward_, grid.ny, grid.nx, T::r2c, &work_f));
    CASCADE_CUFFT_CHECK(cufftMakePlan2d(inverse_, grid.ny, grid.nx, T::c2r, &work_i));
    work_bytes_ = std::max<std::size_t>(std::max(work_f, work_i), 1);
    if (cudaMalloc(&d_work_, work_bytes_) != cudaSuccess) {
      cudaGetLastError();
      throw RunError("out of GPU memory for the FFT work area (" + std::to_string(work_bytes_) + " bytes)");
    }
    CASCADE_CUFFT_CHECK(cufftSetWorkArea(forward_, d_work_));
    CASCADE_CUFFT_CHECK(cufftSetWorkArea(inverse_, d_work_));
    CASCADE_CUFFT_CHECK(cufftSetStream(forward_, stream_));
    CASCADE_CUFFT_CHECK(cufftSetStream(inverse_, stream_));
    blocks_cap_ = prop_.multiProcessorCount * 16;
    // Scratch of the fused max passes: one partial per block, the cascade's scratch, a result.
    CASCADE_CUDA_CHECK(cudaMalloc(&d_partials_, sizeof(Real) * blocks_cap_));
    // The budget: per-block partial sums of the first fused stage, and the six integrals.
    CASCADE_CUDA_CHECK(cudaMalloc(&d_sum_partials_, sizeof(SpectralSums) * blocks_cap_));
    CASCADE_CUDA_CHECK(cudaMalloc(&d_budget_, 6 * sizeof(double)));
    CASCADE_CUDA_CHECK(cudaMemset(d_budget_, 0, 6 * sizeof(double)));
    scratch_bytes_ = reduction_scratch_bytes<Real>();
    CASCADE_CUDA_CHECK(cudaMalloc(&d_scratch_, scratch_bytes_ + sizeof(Real)));
    CASCADE_CUDA_CHECK(cudaMemset(d_scratch_, 0, scratch_bytes_ + sizeof(Real)));
    d_result_ = reinterpret_cast<Real*>(static_cast<char*>(d_scratch_) + scratch_bytes_);
    // The CFL maximum comes back through pinned memory and an event (for_each_max_async).
    CASCADE_CUDA_CHECK(cudaMallocHost(&h_max_, sizeof(Real)));
    CASCADE_CUDA_CHECK(cudaEventCreateWithFlags(&max_ready_, cudaEventDisableTiming));
  }
  ~CudaExec() {
    if (d_partials_) cudaFree(d_partials_);
    if (d_sum_partials_) cudaFree(d_sum_partials_);
    if (d_budget_) cudaFree(d_budget_);
    if (d_scratch_) cudaFree(d_scratch_);
    if (d_sum_temp_) cudaFree(d_sum_temp_);
    if (d_bins_) cudaFree(d_bins_);
    if (d_work_) cudaFree(d_work_);
    if (forward_) cufftDestroy(forward_);
    if (inverse_) cufftDestroy(inverse_);
    if (max_ready_) cudaEventDestroy(max_ready_);
    if (h_max_) cudaFreeHost(h_max_);
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
  std::size_t fft_work_bytes() const { return work_bytes_; }
  Slab slab() const { return whole_; }
  void device_memory(std::size_t& used, std::size_t& total) const {
    std::size_t free_b = 0;
    CASCADE_CUDA_CHECK(cudaMemGetInfo(&free_b, &total));
    used = total - free_b;
  }

  //! Apply f to every index; the NaN-propagating maximum of its results (one pass over the
  //! data: the maximum is fused into the kernel that does the work) is copied to pinned host
  //! memory behind it, and max_result() waits for that copy alone: work queued after this
  //! call keeps the device busy while the host waits.
  template <class Fn>
  void for_each_max_async(std::size_t n, const Fn& f) {
    constexpr int kThreads = 256;
    const std::size_t want = (n + kThreads - 1) / kThreads;
    const int blocks = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(want, blocks_cap_)));
    for_each_max_kernel<kThreads, Real><<<blocks, kThreads, 0, stream_>>>(n, f, d_partials_);
    CASCADE_CUDA_CHECK_LAUNCH();
    std::size_t bytes = scratch_bytes_;
    reduce_device<Real>(d_scratch_, bytes, ReduceOp::Max, d_partials_, std::size_t(blocks), d_result_,
                        Combine::Fused, stream_);
    CASCADE_CUDA_CHECK(cudaMemcpyAsync(h_max_, d_result_, sizeof(Real), cudaMemcpyDeviceToHost, stream_));
    CASCADE_CUDA_CHECK(cudaEventRecord(max_ready_, stream_));
  }
  Real max_result() const {
    CASCADE_CUDA_CHECK(cudaEventSynchronize(max_ready_));
    return *h_max_;
  }
  template <class Fn>
  Real for_each_max(std::size_t n, const Fn& f) {
    for_each_max_async(n, f);
    return max_result();
  }

  //! Apply f to every index and add the weighted sum of what it returns (SpectralSums) to the
  //! budget integrals on the device: two kernels, no host synchronisation.
  template <class Fn>
  void sum_into_budget(std::size_t n, const Fn& f, const BudgetWeights& w) {
    constexpr int kThreads = 256;
    const std::size_t want = (n + kThreads - 1) / kThreads;
    const int blocks = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(want, blocks_cap_)));
    for_each_sum_kernel<kThreads, SpectralSums><<<blocks, kThreads, 0, stream_>>>(n, f, d_sum_partials_);
    CASCADE_CUDA_CHECK_LAUNCH();
    budget_finish_kernel<kThreads><<<1, kThreads, 0, stream_>>>(d_sum_partials_, blocks, w, d_budget_);
    CASCADE_CUDA_CHECK_LAUNCH();
  }
  void budget_integrals(double (&out)[6]) { copy_to_host(d_budget_, out, 6); }
  void set_budget_integrals(const double (&in)[6]) { copy_from_host(in, d_budget_, 6); }

  //! Four histograms of f(idx) = {bin, v[4]}, summed in double on the device.
  template <class Fn>
  void histogram4(std::size_t n, const Fn& f, int bins, std::vector<double> (&out)[4]) {
    const std::size_t bytes = 4 * std::size_t(bins) * sizeof(double);
    if (bytes > bins_bytes_) {  // grows once, then reused
      if (d_bins_) CASCADE_CUDA_CHECK(cudaFree(d_bins_));
      d_bins_ = nullptr;
      CASCADE_CUDA_CHECK(cudaMalloc(&d_bins_, bytes));
      bins_bytes_ = bytes;
    }
    CASCADE_CUDA_CHECK(cudaMemsetAsync(d_bins_, 0, bytes, stream_));
    constexpr int kThreads = 256;
    const bool shared_bins = bytes <= 48 * 1024;
    const std::size_t want = (n + kThreads - 1) / kThreads;
    const int blocks = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(want, blocks_cap_)));
    histogram4_kernel<<<blocks, kThreads, shared_bins ? bytes : 0, stream_>>>(n, f, bins, shared_bins,
                                                                               static_cast<double*>(d_bins_));
    CASCADE_CUDA_CHECK_LAUNCH();
    std::vector<double> host(4 * std::size_t(bins));
    copy_to_host(static_cast<double*>(d_bins_), host.data(), host.size());
    for (int q = 0; q < 4; ++q) out[q].assign(host.begin() + std::size_t(q) * bins, host.begin() + std::size_t(q + 1) * bins);
  }

  //! Sum of f(idx) over every index (CUB TransformReduce over a counting iterator).
  template <class Fn>
  auto transform_sum(std::size_t n, const Fn& f) -> decltype(f(std::size_t(0))) {
    using R = decltype(f(std::size_t(0)));
    const thrust::counting_iterator<std::size_t> first(0);
    std::size_t bytes = 0;
    CASCADE_CUDA_CHECK(cub::DeviceReduce::TransformReduce(nullptr, bytes, first, static_cast<R*>(nullptr), n,
                                                          AddOp{}, f, R{}, stream_));
    bytes += sizeof(R) + 256;
    if (bytes > sum_temp_bytes_) {  // grows once, then reused
      if (d_sum_temp_) CASCADE_CUDA_CHECK(cudaFree(d_sum_temp_));
      d_sum_temp_ = nullptr;
      CASCADE_CUDA_CHECK(cudaMalloc(&d_sum_temp_, bytes));
      sum_temp_bytes_ = bytes;
    }
    R* d_out = static_cast<R*>(d_sum_temp_);
    void* d_temp = static_cast<char*>(d_sum_temp_) + 256;
    std::size_t temp_bytes = sum_temp_bytes_ - 256;
    CASCADE_CUDA_CHECK(cub::DeviceReduce::TransformReduce(d_temp, temp_bytes, first, d_out, n, AddOp{}, f, R{},
                                                          stream_));
    R result;
    copy_to_host(d_out, &result, 1);
    return result;
  }

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
  Slab whole_;  //!< one GPU holds the whole grid
  cudaDeviceProp prop_{};
  cudaStream_t stream_ = nullptr;
  cufftHandle forward_ = 0;
  cufftHandle inverse_ = 0;
  int blocks_cap_ = 1024;
  Real* d_partials_ = nullptr;
  SpectralSums* d_sum_partials_ = nullptr;
  double* d_budget_ = nullptr;
  void* d_scratch_ = nullptr;
  std::size_t scratch_bytes_ = 0;
  Real* d_result_ = nullptr;
  Real* h_max_ = nullptr;          //!< pinned
  cudaEvent_t max_ready_ = nullptr;
  void* d_sum_temp_ = nullptr;
  std::size_t sum_temp_bytes_ = 0;
  void* d_bins_ = nullptr;
  std::size_t bins_bytes_ = 0;
  void* d_work_ = nullptr;  //!< cuFFT work area shared by both plans
  std::size_t work_bytes_ = 0;
};

}  // namespace

template <class Real>
std::unique_ptr<Backend<Real>> make_cuda_backend(const Grid& grid, int device) {
  return std::make_unique<BackendImpl<Real, CudaExec<Real>>>(grid, device);
}

template std::unique_ptr<Backend<float>> make_cuda_backend<float>(const Grid&, int);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(const Grid&, int);

}  // namespace cascade
