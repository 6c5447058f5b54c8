//! @file CUDA backend: cuFFT plans on one stream and one-line kernels over the kernels/ functors.
#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>
#include <dlfcn.h>
#if defined(CASCADE_HAVE_NCCL)
#include <nccl.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <vector>
#include <string>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "backend_impl.hpp"
#include "cascade/parallel.hpp"
#include "cascade/reduction.hpp"
#include "kernels/fft_callbacks.cuh"
#include "kernels/reduction.cuh"
#include "kernels/row_fft.cuh"
#include "cuda_check.hpp"
#include "fft_callbacks_fatbin.h"  // cascade_fft_callbacks: LTO-IR of src/fft_callbacks.cu

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

namespace {

//! Grid-stride loop over n items, each handed to the functor. Four blocks of 256 resident on
//! an SM at least (at most 64 registers a thread): the fused stage, memory-bound, compiled to 66
//! registers and three blocks, moved 75% of the peak DRAM bandwidth (ncu, H100, 4096^2).
template <int BLOCK, class Fn>
__global__ void __launch_bounds__(BLOCK, 4) for_each_kernel(std::size_t n, Fn f) {
  const std::size_t stride = std::size_t(BLOCK) * gridDim.x;
  for (std::size_t idx = std::size_t(blockIdx.x) * BLOCK + threadIdx.x; idx < n; idx += stride)
    f(idx);
}

//! The grid-stride loop of for_each_kernel, keeping the NaN-propagating maximum of what the
//! functor returns, the whole cascade in one launch: per thread, per block by warp shuffles,
//! then the block that finishes last combines the per-block partials (the reduction library's
//! fused completion, kernels/reduction.cuh finish_block) and writes the result to `result`
//! (mapped pinned host memory: no second kernel and no copy behind this one).
template <int BLOCK, class Real, class Fn>
__global__ void __launch_bounds__(BLOCK) for_each_max_kernel(std::size_t n, Fn f, Real* d_partials,
                                                             unsigned* d_ticket, Real* result) {
  const MaxOp<Real> op;
  Real acc = MaxOp<Real>::identity();
  const std::size_t stride = std::size_t(BLOCK) * gridDim.x;
  for (std::size_t idx = std::size_t(blockIdx.x) * BLOCK + threadIdx.x; idx < n; idx += stride)
    acc = op(acc, f(idx));
  acc = reduction_kernels::block_reduce_shuffle<BLOCK>(acc, op);
  reduction_kernels::finish_block<BLOCK, 4, true>(acc, blockIdx.x, gridDim.x, op, d_partials, d_ticket, result);
}

//! The evaluation row by row (kernels/row_fft.cuh): each block takes rows blockIdx.x,
//! blockIdx.x + gridDim.x, ... of the two spectra, in place, one row (or one part of one) in
//! dynamic shared memory at a time, with a sixteenth as many threads as the part has points;
//! the CFL maximum, where asked, completes as in for_each_max_kernel (the last block writes it
//! to `result`).
template <int THREADS, class Real>
__global__ void __launch_bounds__(THREADS, THREADS <= 512 ? 512 / THREADS : 1)  // <= 128 registers
    row_products_kernel(row_fft::RowPhases<Real> ph, Complex<Real>* a, Complex<Real>* b, int ny, int nxh, bool cfl,
                        Real* d_partials, unsigned* d_ticket, Real* result) {
  extern __shared__ __align__(16) unsigned char row_smem[];
  ph.s = reinterpret_cast<Complex<Real>*>(row_smem);
  ph.spill += std::size_t(blockIdx.x) * std::size_t(ph.split() - 1) * (std::size_t(1) << ph.m);
  const MaxOp<Real> op;
  Real acc = MaxOp<Real>::identity();
  const int phases = ph.count();
  for (int row = blockIdx.x; row < ny; row += gridDim.x) {
    Complex<Real>* ar = a + std::size_t(row) * std::size_t(nxh);
    Complex<Real>* br = b + std::size_t(row) * std::size_t(nxh);
    for (int p = 0; p < phases; ++p) {
      acc = op(acc, ph.run(p, threadIdx.x, THREADS, ar, br, ar, br));
      __syncthreads();
    }
  }
  if (!cfl) return;
  acc = reduction_kernels::block_reduce_shuffle<THREADS>(acc, op);
  reduction_kernels::finish_block<THREADS, 4, true>(acc, blockIdx.x, gridDim.x, op, d_partials, d_ticket, result);
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
  static constexpr cufftType c2c = CUFFT_Z2Z;
  // The callbacks of src/fft_callbacks.cu and their kinds.
  static constexpr const char* load_kept = "cascade_load_kept_z";
  static constexpr const char* store_kept = "cascade_store_kept_z";
  static constexpr const char* load_kept_columns = "cascade_load_kept_columns_z";
  static constexpr const char* store_kept_columns = "cascade_store_kept_columns_z";
  static constexpr const char* load_kept_full = "cascade_load_kept_full_z";
  static constexpr const char* store_kept_full = "cascade_store_kept_full_z";
  static constexpr const char* store_products = "cascade_store_products_z";
  static constexpr cufftXtCallbackType load_complex = CUFFT_CB_LD_COMPLEX_DOUBLE;
  static constexpr cufftXtCallbackType store_complex = CUFFT_CB_ST_COMPLEX_DOUBLE;
  static cufftResult exec_r2c(cufftHandle p, const double* in, Complex<double>* out) {
    return cufftExecD2Z(p, const_cast<double*>(in), reinterpret_cast<cufftDoubleComplex*>(out));
  }
  static cufftResult exec_c2r(cufftHandle p, Complex<double>* in, double* out) {
    return cufftExecZ2D(p, reinterpret_cast<cufftDoubleComplex*>(in), out);
  }
  static cufftResult exec_c2c(cufftHandle p, Complex<double>* data, int direction) {
    auto* d = reinterpret_cast<cufftDoubleComplex*>(data);
    return cufftExecZ2Z(p, d, d, direction);
  }
  static cufftResult exec_c2c(cufftHandle p, const Complex<double>* in, Complex<double>* out, int direction) {
    auto* i = reinterpret_cast<cufftDoubleComplex*>(const_cast<Complex<double>*>(in));
    return cufftExecZ2Z(p, i, reinterpret_cast<cufftDoubleComplex*>(out), direction);
  }
};
template <>
struct CufftTypes<float> {
  static constexpr cufftType r2c = CUFFT_R2C;
  static constexpr cufftType c2r = CUFFT_C2R;
  static constexpr cufftType c2c = CUFFT_C2C;
  static constexpr const char* load_kept = "cascade_load_kept_c";
  static constexpr const char* store_kept = "cascade_store_kept_c";
  static constexpr const char* load_kept_columns = "cascade_load_kept_columns_c";
  static constexpr const char* store_kept_columns = "cascade_store_kept_columns_c";
  static constexpr const char* load_kept_full = "cascade_load_kept_full_c";
  static constexpr const char* store_kept_full = "cascade_store_kept_full_c";
  static constexpr const char* store_products = "cascade_store_products_c";
  static constexpr cufftXtCallbackType load_complex = CUFFT_CB_LD_COMPLEX;
  static constexpr cufftXtCallbackType store_complex = CUFFT_CB_ST_COMPLEX;
  static cufftResult exec_r2c(cufftHandle p, const float* in, Complex<float>* out) {
    return cufftExecR2C(p, const_cast<float*>(in), reinterpret_cast<cufftComplex*>(out));
  }
  static cufftResult exec_c2r(cufftHandle p, Complex<float>* in, float* out) {
    return cufftExecC2R(p, reinterpret_cast<cufftComplex*>(in), out);
  }
  static cufftResult exec_c2c(cufftHandle p, Complex<float>* data, int direction) {
    auto* d = reinterpret_cast<cufftComplex*>(data);
    return cufftExecC2C(p, d, d, direction);
  }
  static cufftResult exec_c2c(cufftHandle p, const Complex<float>* in, Complex<float>* out, int direction) {
    auto* i = reinterpret_cast<cufftComplex*>(const_cast<Complex<float>*>(in));
    return cufftExecC2C(p, i, reinterpret_cast<cufftComplex*>(out), direction);
  }
};

template <class Real>
class CudaExec {
  using T = CufftTypes<Real>;
  using Cplx = Complex<Real>;

 public:
  static constexpr BackendKind kKind = BackendKind::Cuda;
  static constexpr bool kCanFuse = true;    //!< prepare_plan: kernels/fft_callbacks.cuh
  static constexpr bool kRowFused = false;  //!< the CPU's evaluation row by row

  CudaExec(const Grid& grid, int device) : CudaExec(grid, device, true) {}

 protected:
  //! `whole_plans`: make the 2D plans of the whole grid (a slab executor makes its own).
  CudaExec(const Grid& grid, int device, bool whole_plans)
      : device_(device), whole_(Slab::whole(grid)), nx_(grid.nx), ny_(grid.ny) {
    std::string why;
    const int count = cuda_device_count(&why);
    if (count == 0) throw RunError("CUDA backend: " + why);
    if (device < 0 || device >= count)
      throw InputError("run.device: expected a CUDA device index in [0, " + std::to_string(count - 1) +
                       "], found " + std::to_string(device));
    CASCADE_CUDA_CHECK(cudaSetDevice(device));
    CASCADE_CUDA_CHECK(cudaGetDeviceProperties(&prop_, device));
    CASCADE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    if (whole_plans) make_whole_plans(grid);
    blocks_cap_ = prop_.multiProcessorCount * 16;
    // Scratch of the fused max passes: one partial per block, the cascade's scratch, a result.
    CASCADE_CUDA_CHECK(cudaMalloc(&d_partials_, sizeof(Real) * blocks_cap_));
    // The budget: per-block partial sums of the first fused stage, and the six integrals.
    CASCADE_CUDA_CHECK(cudaMalloc(&d_sum_partials_, sizeof(SpectralSums) * blocks_cap_));
    CASCADE_CUDA_CHECK(cudaMalloc(&d_budget_, 6 * sizeof(double)));
    CASCADE_CUDA_CHECK(cudaMemset(d_budget_, 0, 6 * sizeof(double)));
    CASCADE_CUDA_CHECK(cudaMalloc(&d_ticket_, sizeof(unsigned)));
    CASCADE_CUDA_CHECK(cudaMemset(d_ticket_, 0, sizeof(unsigned)));
    // The CFL maximum comes back through mapped pinned memory, which the kernel writes, and an
    // event (for_each_max_async).
    CASCADE_CUDA_CHECK(cudaHostAlloc(&h_max_, sizeof(Real), cudaHostAllocMapped));
    CASCADE_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&d_max_), h_max_, 0));
    CASCADE_CUDA_CHECK(cudaEventCreateWithFlags(&max_ready_, cudaEventDisableTiming));
  }

  //! One 2D plan per direction, made once, sharing one work area (auto-allocation off): at the
  //! largest grids a second work area would cost as much as a field. They run on the stream.
  void make_whole_plans(const Grid& grid) {
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
  }

 public:
  ~CudaExec() {
    if (d_partials_) cudaFree(d_partials_);
    if (d_sum_partials_) cudaFree(d_sum_partials_);
    if (d_budget_) cudaFree(d_budget_);
    if (d_ticket_) cudaFree(d_ticket_);
    if (d_sum_temp_) cudaFree(d_sum_temp_);
    if (d_bins_) cudaFree(d_bins_);
    if (d_work_) cudaFree(d_work_);
    if (forward_) cufftDestroy(forward_);
    if (inverse_) cufftDestroy(inverse_);
    destroy_fused_plans();
    if (d_cb_) cudaFree(d_cb_);
    if (d_row_twiddles_) cudaFree(d_row_twiddles_);
    if (d_row_spill_) cudaFree(d_row_spill_);
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
  //! data: the maximum is fused into the kernel that does the work, down to the one number,
  //! which the kernel writes to pinned host memory), and max_result() waits for that kernel
  //! alone: work queued after this call keeps the device busy while the host waits.
  template <class Fn>
  void for_each_max_async(std::size_t n, const Fn& f) {
    constexpr int kThreads = 256;
    const std::size_t want = (n + kThreads - 1) / kThreads;
    const int blocks = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(want, blocks_cap_)));
    for_each_max_kernel<kThreads, Real><<<blocks, kThreads, 0, stream_>>>(n, f, d_partials_, d_ticket_, d_max_);
    CASCADE_CUDA_CHECK_LAUNCH();
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
    for_each_kernel<kThreads><<<blocks, kThreads, 0, stream_>>>(n, f);
    CASCADE_CUDA_CHECK_LAUNCH();
  }

  void forward(const Real* d_in, Cplx* d_out) const {
    CASCADE_CUFFT_CHECK(T::exec_r2c(forward_, d_in, d_out));
  }
  void inverse(Cplx* d_in, Real* d_out) const {
    CASCADE_CUFFT_CHECK(T::exec_c2r(inverse_, d_in, d_out));
  }

  // ---- the step's own transforms: pruned, batched pairs, callbacks (kernels/fft_callbacks.cuh)

  //! What plan_step needs to know of this GPU (include/cascade/step_plan.hpp): the row kernel's
  //! shared memory against a block's, and whether a complex plan's work area would fit.
  StepDevice step_device() const {
    StepDevice d;
    d.kind = StepDevice::Kind::Cuda;
    d.row_shared_bytes = sizeof(Cplx) * std::size_t(row_fft::padded_size(1 << row_log2()));
    d.shared_optin_bytes = prop_.sharedMemPerBlockOptin;
    std::size_t total = 0;
    CASCADE_CUDA_CHECK(cudaMemGetInfo(&d.free_bytes, &total));
    d.work_bytes = work_bytes_;
    std::size_t need = 0;
    if (cufftEstimate2d(ny_, nx_, T::c2c, &need) == CUFFT_SUCCESS) d.complex_work_bytes = std::max<std::size_t>(need, 1);
    return d;
  }
  //! Carry out a step plan, once (Backend::prepare_step): make its plans (all sharing the work
  //! area of the plain plans, grown if they need more; cuFFT links the callbacks into its
  //! kernels here, nvJitLink, under a second a plan). Where cuFFT refuses them, the plain
  //! transforms run, one field at a time, and the plan returned says why.
  //!   - pruned transforms (StepStrategy::Pruned, and Rows around the row kernel): under the
  //!     2/3 rule a third of the half spectrum's columns (kx > nx/3) is zero on the way in and
  //!     unused on the way out, so each 2D transform is made of two batched 1D passes, the rows
  //!     (all of them) and the columns the dealiasing keeps. The removed columns of a forward's
  //!     output hold the rows' pass alone, the removed rows of its kept columns are not masked:
  //!     the fused stage reads the kept modes alone, and writes zeros at the others for the
  //!     inverse (as at callback level store);
  //!   - callbacks (CallbackLevel): a forward that stores the kept modes alone and, at level
  //!     all, an inverse that loads them alone (then the fused stage leaves the removed modes
  //!     alone); in a pruned transform, the passes over the rows store or load the kept columns
  //!     alone, those over the columns the kept modes;
  //!   - batched pairs: two fields in one plan (for pruned transforms, in the rows' pass; the
  //!     columns' pass runs once a field).
  StepPlan prepare_plan(StepPlan plan, const SpectralShape<Real>& shape, const DealiasMask<Real>& mask) {
    pruned_ = plan.strategy == StepStrategy::Pruned || plan.strategy == StepStrategy::Rows;
    rows_ = plan.strategy == StepStrategy::Rows;
    packed_ = plan.strategy == StepStrategy::ComplexPairs;
    pairs_ = plan.batched;
    fused_level_ = plan.callbacks == CallbackLevel::All ? 2 : plan.callbacks == CallbackLevel::Store ? 1 : 0;
    rows_log2_ = row_log2();
    if (!plan.fused()) return plan;
    std::string failed;
    if (make_step_plans(shape, mask, failed)) return plan;
    const std::string why = "unavailable (" + failed + ")";
    std::fprintf(stderr, "cascade: the step's cuFFT plans are %s; it runs on the plain transforms\n", why.c_str());
    return {StepStrategy::Plain, CallbackLevel::Off, false, plan.why + "; the plan's cuFFT plans " + why};
  }
  //! 0: plain transforms; 1: the forward stores the kept modes alone; 2: the inverse loads
  //! them alone too (and the fused stage leaves the removed modes alone).
  int fused_level() const { return fused_level_; }
  bool has_pairs() const { return pairs_; }

  //! Whether Basdevant's evaluation runs as complex pairs (packed_inverse, packed_forward).
  bool has_packed() const { return packed_; }
  //! The complex pair's inverse transform: from the full spectrum p of u + i v (a spectral
  //! pair's memory), out of place, straight to Basdevant's products u v + i (v^2 - u^2) in z (a
  //! real pair's memory; a store callback forms them as the transform stores u + i v: they
  //! take no pass of their own); and the forward transform back.
  void packed_inverse(const Cplx* p, Cplx* z) const {
    CASCADE_CUFFT_CHECK(T::exec_c2c(pair_inverse_, p, z, CUFFT_INVERSE));
  }
  void packed_forward(const Cplx* z, Cplx* p) const {
    CASCADE_CUFFT_CHECK(T::exec_c2c(pair_forward_, z, p, CUFFT_FORWARD));
  }

 private:
  //! The plans of the plan prepare_plan carries out (and the callbacks' parameters); on failure
  //! none of them, the flags of the plain transforms, and what failed.
  bool make_step_plans(const SpectralShape<Real>& shape, const DealiasMask<Real>& mask, std::string& failed) {
    if (fused_level_ > 0) {
      CASCADE_CUDA_CHECK(cudaMalloc(&d_cb_, sizeof(Params)));
      const Params params{shape, mask, std::size_t(ny_) * std::size_t(nx_ / 2 + 1), 1.0 / double(nx_)};
      CASCADE_CUDA_CHECK(cudaMemcpy(d_cb_, &params, sizeof(Params), cudaMemcpyHostToDevice));
    }
    const cufftResult r = make_fused_plans(failed);
    if (r != CUFFT_SUCCESS) {
      destroy_fused_plans();
      pruned_ = false;
      fused_level_ = 0;
      pairs_ = false;
      rows_ = false;
      packed_ = false;
      failed += std::string(": ") + cufft_error_string(r);
      return false;
    }
    if (rows_) prepare_rows();
    return true;
  }

 public:
  //! Whether Basdevant's evaluation runs row by row (step_row_products).
  bool has_row_products() const { return rows_; }
  //! Basdevant's evaluation between the spectra a, b of u and v (scaled for the inverse) and
  //! those of u v and v^2 - u^2, in place: the pruned inverse transforms' passes over the kept
  //! columns, the row kernel (kernels/row_fft.cuh: the passes over the rows and the products,
  //! with the CFL maximum where `cfl`; max_result() then waits for that kernel alone), and the
  //! forward transforms' passes over the kept columns.
  void step_row_products(Cplx* a, Cplx* b, bool cfl, const CflSpeed<Real>& speed) {
    CASCADE_CUFFT_CHECK(T::exec_c2c(columns_inverse_, a, CUFFT_INVERSE));
    CASCADE_CUFFT_CHECK(T::exec_c2c(columns_inverse_, b, CUFFT_INVERSE));
    const row_fft::RowPhases<Real> ph{nx_, rows_log2_, (nx_ - 1) / 3 + 1, nullptr, d_row_twiddles_, speed,
                                      d_row_spill_};
    switch (rows_log2_) {
      case 4: case 5: case 6: case 7: case 8: case 9: launch_rows<32>(ph, a, b, cfl); break;
      case 10: launch_rows<64>(ph, a, b, cfl); break;
      case 11: launch_rows<128>(ph, a, b, cfl); break;
      case 12: launch_rows<256>(ph, a, b, cfl); break;
      default: launch_rows<512>(ph, a, b, cfl); break;
    }
    if (cfl) CASCADE_CUDA_CHECK(cudaEventRecord(max_ready_, stream_));
    CASCADE_CUFFT_CHECK(T::exec_c2c(columns_forward_, a, CUFFT_FORWARD));
    CASCADE_CUFFT_CHECK(T::exec_c2c(columns_forward_, b, CUFFT_FORWARD));
  }

  //! The step's forward transform (of products): kept modes stored alone from level 1; or
  //! pruned: the rows, then the kept columns in place.
  void step_forward(const Real* d_in, Cplx* d_out) const {
    if (pruned_) {
      CASCADE_CUFFT_CHECK(T::exec_r2c(rows_r2c_, d_in, d_out));
      CASCADE_CUFFT_CHECK(T::exec_c2c(columns_forward_, d_out, CUFFT_FORWARD));
      return;
    }
    CASCADE_CUFFT_CHECK(T::exec_r2c(fused_level_ >= 1 ? forward_kept_ : forward_, d_in, d_out));
  }
  //! The step's inverse transform (of an evaluation's inputs, which it overwrites): kept modes
  //! loaded alone at level 2; or pruned: the kept columns in place, then the rows.
  void step_inverse(Cplx* d_in, Real* d_out) const {
    if (pruned_) {
      CASCADE_CUFFT_CHECK(T::exec_c2c(columns_inverse_, d_in, CUFFT_INVERSE));
      CASCADE_CUFFT_CHECK(T::exec_c2r(rows_c2r_, d_in, d_out));
      return;
    }
    CASCADE_CUFFT_CHECK(T::exec_c2r(fused_level_ >= 2 ? inverse_kept_ : inverse_, d_in, d_out));
  }
  //! The same for a pair of fields, each followed by the other in one allocation (has_pairs()).
  void step_forward_pair(const Real* d_in, Cplx* d_out) const {
    if (pruned_) {
      CASCADE_CUFFT_CHECK(T::exec_r2c(rows_r2c_pair_, d_in, d_out));
      CASCADE_CUFFT_CHECK(T::exec_c2c(columns_forward_, d_out, CUFFT_FORWARD));
      CASCADE_CUFFT_CHECK(T::exec_c2c(columns_forward_, d_out + spectral_size(), CUFFT_FORWARD));
      return;
    }
    CASCADE_CUFFT_CHECK(T::exec_r2c(forward_pair_, d_in, d_out));
  }
  void step_inverse_pair(Cplx* d_in, Real* d_out) const {
    if (pruned_) {
      CASCADE_CUFFT_CHECK(T::exec_c2c(columns_inverse_, d_in, CUFFT_INVERSE));
      CASCADE_CUFFT_CHECK(T::exec_c2c(columns_inverse_, d_in + spectral_size(), CUFFT_INVERSE));
      CASCADE_CUFFT_CHECK(T::exec_c2r(rows_c2r_pair_, d_in, d_out));
      return;
    }
    CASCADE_CUFFT_CHECK(T::exec_c2r(inverse_pair_, d_in, d_out));
  }

 protected:
  using Params = TransformCallbackParams<Real>;

  std::size_t spectral_size() const { return std::size_t(ny_) * std::size_t(nx_ / 2 + 1); }

  //! log2 of the row kernel's transform: nx's, or the largest part it does in shared memory.
  int row_log2() const {
    int m = 0;
    while ((1 << m) < nx_ && m < 30) ++m;
    return std::min(m, kRowLog2Max);
  }
  //! The row kernel's twiddle table exp(2 pi i k / nx), its shared memory and its grid: as many
  //! blocks as fit on the GPU at once (each loops over rows), no more than there are rows.
  void prepare_rows() {
    std::vector<Cplx> tw(nx_);
    const double two_pi = 2 * 3.14159265358979323846;
    for (int k = 0; k < nx_; ++k)
      tw[k] = {Real(std::cos(two_pi * k / nx_)), Real(std::sin(two_pi * k / nx_))};
    CASCADE_CUDA_CHECK(cudaMalloc(&d_row_twiddles_, sizeof(Cplx) * tw.size()));
    CASCADE_CUDA_CHECK(cudaMemcpy(d_row_twiddles_, tw.data(), sizeof(Cplx) * tw.size(), cudaMemcpyHostToDevice));
    rows_smem_ = sizeof(Cplx) * std::size_t(row_fft::padded_size(1 << rows_log2_));
    switch (rows_log2_) {
      case 4: case 5: case 6: case 7: case 8: case 9: size_rows<32>(); break;
      case 10: size_rows<64>(); break;
      case 11: size_rows<128>(); break;
      case 12: size_rows<256>(); break;
      default: size_rows<512>(); break;
    }
    const std::size_t split = std::size_t(nx_) >> rows_log2_;
    if (split > 1) {  // each block's parts of a row but the last (RowPhases)
      const std::size_t bytes = sizeof(Cplx) * std::size_t(rows_blocks_) * (split - 1) << rows_log2_;
      if (cudaMalloc(&d_row_spill_, bytes) != cudaSuccess) {
        cudaGetLastError();
        throw RunError("out of GPU memory for the row kernel's spill area (" + std::to_string(bytes) + " bytes)");
      }
    }
  }
  template <int THREADS>
  void size_rows() {
    auto* kernel = row_products_kernel<THREADS, Real>;
    CASCADE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(rows_smem_)));
    int per_sm = 0;
    CASCADE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, rows_smem_));
    rows_blocks_ = std::max(1, std::min({ny_, std::max(per_sm, 1) * prop_.multiProcessorCount, blocks_cap_}));
  }
  template <int THREADS>
  void launch_rows(const row_fft::RowPhases<Real>& ph, Cplx* a, Cplx* b, bool cfl) {
    row_products_kernel<THREADS, Real><<<rows_blocks_, THREADS, rows_smem_, stream_>>>(
        ph, a, b, ny_, nx_ / 2 + 1, cfl, d_partials_, d_ticket_, d_max_);
    CASCADE_CUDA_CHECK_LAUNCH();
  }
  cufftResult make_fused_plans(std::string& failed) {
    cb_info_[0] = d_cb_;  // cuFFT may keep the pointer to it: a member, alive with the plans
    const std::size_t spectral = spectral_size();
    const std::size_t real = std::size_t(ny_) * std::size_t(nx_);
    cufftResult r = CUFFT_SUCCESS;
    std::size_t need = 0;
    auto check = [&](cufftResult rc, const char* what) {
      if (r == CUFFT_SUCCESS && rc != CUFFT_SUCCESS) {
        r = rc;
        failed = what;
      }
    };
    // One 2D plan: forward (R2C) or inverse (C2R), of `batch` fields, with the callback the
    // level gives (none at level 0; for the inverse, none below level 2).
    auto plan = [&](cufftHandle& p, bool forward, int batch) {
      if (r != CUFFT_SUCCESS) return;
      const char* what = forward ? "forward plan" : "inverse plan";
      check(cufftCreate(&p), what);
      check(cufftSetAutoAllocation(p, 0), what);
      const bool callback = forward ? fused_level_ >= 1 : fused_level_ >= 2;
      if (callback)
        check(cufftXtSetJITCallback(p, forward ? T::store_kept : T::load_kept, cascade_fft_callbacks,
                                    sizeof(cascade_fft_callbacks), forward ? T::store_complex : T::load_complex,
                                    cb_info_),
              what);
      long long dims[2] = {ny_, nx_};
      std::size_t work = 0;
      const long long in_dist = forward ? (long long)real : (long long)spectral;
      const long long out_dist = forward ? (long long)spectral : (long long)real;
      // 64-bit: the distances of the largest grids pass 2^31 elements.
      check(cufftMakePlanMany64(p, 2, dims, nullptr, 1, in_dist, nullptr, 1, out_dist, forward ? T::r2c : T::c2r,
                                batch, &work),
            what);
      need = std::max(need, work);
    };
    // One 1D plan of a pruned transform: `count` transforms of length n, elements `stride`
    // apart, transforms `dist` apart (the same in and out).
    // With a callback (`callback` null: none), a load callback where `load`.
    auto plan_1d = [&](cufftHandle& p, cufftType type, long long n, long long in_stride, long long in_dist,
                       long long out_stride, long long out_dist, long long count, const char* callback, bool load,
                       const char* what) {
      if (r != CUFFT_SUCCESS) return;
      check(cufftCreate(&p), what);
      check(cufftSetAutoAllocation(p, 0), what);
      if (callback)
        check(cufftXtSetJITCallback(p, callback, cascade_fft_callbacks, sizeof(cascade_fft_callbacks),
                                    load ? T::load_complex : T::store_complex, cb_info_),
              what);
      long long dims[1] = {n};
      // The embeddings only need to be given for the strides to count; a 1D transform reads
      // n elements `stride` apart whatever they say.
      long long embed[1] = {n};
      std::size_t work = 0;
      check(cufftMakePlanMany64(p, 1, dims, embed, in_stride, in_dist, embed, out_stride, out_dist, type, count,
                                &work),
            what);
      need = std::max(need, work);
    };
    // A complex pair's 2D plan: the inverse with a load callback at level 2 and the store
    // callback of the products, the forward with a store callback from level 1 (a plan of each
    // direction, as the callbacks differ).
    auto pair_plan = [&](cufftHandle& p, bool forward) {
      if (r != CUFFT_SUCCESS) return;
      const char* what = forward ? "complex pair forward plan" : "complex pair inverse plan";
      check(cufftCreate(&p), what);
      check(cufftSetAutoAllocation(p, 0), what);
      if (forward ? fused_level_ >= 1 : fused_level_ >= 2)
        check(cufftXtSetJITCallback(p, forward ? T::store_kept_full : T::load_kept_full, cascade_fft_callbacks,
                                    sizeof(cascade_fft_callbacks), forward ? T::store_complex : T::load_complex,
                                    cb_info_),
              what);
      if (!forward)
        check(cufftXtSetJITCallback(p, T::store_products, cascade_fft_callbacks, sizeof(cascade_fft_callbacks),
                                    T::store_complex, cb_info_),
              what);
      std::size_t work = 0;
      check(cufftMakePlan2d(p, ny_, nx_, T::c2c, &work), what);
      need = std::max(need, work);
    };
    if (packed_) {
      pair_plan(pair_inverse_, false);
      pair_plan(pair_forward_, true);
    }
    if (pruned_) {
      const long long nxh = nx_ / 2 + 1, nx = nx_;
      const long long kept_columns = (nx_ - 1) / 3 + 1;  // kx = 0 .. kx with 3 kx < nx (DealiasMask)
      const long long fields = pairs_ ? 2 : 1;
      // The level's callbacks: stores from level 1, loads at level 2.
      const char* store_rows = fused_level_ >= 1 ? T::store_kept_columns : nullptr;
      const char* load_rows = fused_level_ >= 2 ? T::load_kept_columns : nullptr;
      const char* store_columns = fused_level_ >= 1 ? T::store_kept : nullptr;
      const char* load_columns = fused_level_ >= 2 ? T::load_kept : nullptr;
      plan_1d(rows_r2c_, T::r2c, nx, 1, nx, 1, nxh, ny_, store_rows, false, "pruned forward rows plan");
      plan_1d(rows_c2r_, T::c2r, nx, 1, nxh, 1, nx, ny_, load_rows, true, "pruned inverse rows plan");
      if (pairs_) {
        plan_1d(rows_r2c_pair_, T::r2c, nx, 1, nx, 1, nxh, fields * ny_, store_rows, false,
                "pruned forward rows plan (pairs)");
        plan_1d(rows_c2r_pair_, T::c2r, nx, 1, nxh, 1, nx, fields * ny_, load_rows, true,
                "pruned inverse rows plan (pairs)");
      }
      plan_1d(columns_forward_, T::c2c, ny_, nxh, 1, nxh, 1, kept_columns, store_columns, false,
              "pruned forward columns plan");
      plan_1d(columns_inverse_, T::c2c, ny_, nxh, 1, nxh, 1, kept_columns, load_columns, true,
              "pruned inverse columns plan");
    } else {
      if (fused_level_ >= 1) plan(forward_kept_, true, 1);
      if (fused_level_ >= 2) plan(inverse_kept_, false, 1);
      if (pairs_) {
        plan(forward_pair_, true, 2);
        plan(inverse_pair_, false, 2);
      }
    }
    if (r != CUFFT_SUCCESS) return r;
    if (need > work_bytes_) {  // one work area for every plan, grown to the largest need
      void* grown = nullptr;
      if (cudaMalloc(&grown, need) != cudaSuccess) {
        cudaGetLastError();
        failed = "work area of " + std::to_string(need) + " bytes";
        return CUFFT_ALLOC_FAILED;
      }
      CASCADE_CUDA_CHECK(cudaStreamSynchronize(stream_));
      if (d_work_) CASCADE_CUDA_CHECK(cudaFree(d_work_));
      d_work_ = grown;
      work_bytes_ = need;
      if (forward_) CASCADE_CUFFT_CHECK(cufftSetWorkArea(forward_, d_work_));
      if (inverse_) CASCADE_CUFFT_CHECK(cufftSetWorkArea(inverse_, d_work_));
    }
    for (cufftHandle p : {forward_kept_, inverse_kept_, forward_pair_, inverse_pair_, rows_r2c_, rows_c2r_,
                          rows_r2c_pair_, rows_c2r_pair_, columns_forward_, columns_inverse_, pair_inverse_,
                          pair_forward_}) {
      if (!p) continue;
      if (r == CUFFT_SUCCESS) r = cufftSetWorkArea(p, d_work_);
      if (r == CUFFT_SUCCESS) r = cufftSetStream(p, stream_);
      if (r != CUFFT_SUCCESS) failed = "work area or stream";
    }
    return r;
  }
  void destroy_fused_plans() {
    for (cufftHandle* p : {&forward_kept_, &inverse_kept_, &forward_pair_, &inverse_pair_, &rows_r2c_, &rows_c2r_,
                           &rows_r2c_pair_, &rows_c2r_pair_, &columns_forward_, &columns_inverse_, &pair_inverse_,
                           &pair_forward_}) {
      if (*p) cufftDestroy(*p);
      *p = 0;
    }
  }

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
  unsigned* d_ticket_ = nullptr;  //!< the maximum's last-block ticket (0 between launches)
  Real* h_max_ = nullptr;          //!< pinned, mapped: the maximum
  Real* d_max_ = nullptr;          //!< its device address
  cudaEvent_t max_ready_ = nullptr;
  void* d_sum_temp_ = nullptr;
  std::size_t sum_temp_bytes_ = 0;
  void* d_bins_ = nullptr;
  std::size_t bins_bytes_ = 0;
  void* d_work_ = nullptr;  //!< cuFFT work area shared by every plan
  std::size_t work_bytes_ = 0;
  int nx_ = 0, ny_ = 0;
  // The fused transforms (prepare_plan).
  cufftHandle forward_kept_ = 0;  //!< one field, level >= 1
  cufftHandle inverse_kept_ = 0;  //!< one field, level 2
  cufftHandle forward_pair_ = 0;  //!< two fields, with the level's callback
  cufftHandle inverse_pair_ = 0;
  bool pairs_ = false;
  Params* d_cb_ = nullptr;        //!< the callbacks' parameters
  void* cb_info_[1] = {nullptr};  //!< the callbacks' caller info: d_cb_
  // Pruned transforms (prepare_plan): rows (one field, a pair) and the kept columns.
  cufftHandle rows_r2c_ = 0;
  cufftHandle rows_c2r_ = 0;
  cufftHandle rows_r2c_pair_ = 0;
  cufftHandle rows_c2r_pair_ = 0;
  cufftHandle columns_forward_ = 0;  //!< in place
  cufftHandle columns_inverse_ = 0;
  bool pruned_ = false;
  // The evaluation row by row (prepare_rows).
  bool rows_ = false;
  int rows_log2_ = 0;
  std::size_t rows_smem_ = 0;
  int rows_blocks_ = 1;
  Cplx* d_row_twiddles_ = nullptr;
  Cplx* d_row_spill_ = nullptr;
  //! The longest transform the row kernel does in shared memory: 2^13 points (139 KiB in
  //! double); longer rows go in parts (RowPhases).
  static constexpr int kRowLog2Max = 13;
  // Complex pairs (prepare_plan): complex 2D plans of the whole grid, a direction each.
  cufftHandle pair_inverse_ = 0;  //!< stores u v + i (v^2 - u^2) (a store callback)
  cufftHandle pair_forward_ = 0;
  bool packed_ = false;
  int fused_level_ = 0;
};


#if defined(CASCADE_HAVE_NCCL)
// ---------------------------------------------------------------- slabs over GPUs (NCCL)

#define CASCADE_NCCL_CHECK(call)                                                                         \
  do {                                                                                                   \
    const ncclResult_t rc_ = (call);                                                                     \
    if (rc_ != ncclSuccess) fail_call("NCCL", #call, ncclGetErrorString(rc_), __FILE__, __LINE__);       \
  } while (0)

template <class Real>
struct CufftC2C;
template <>
struct CufftC2C<double> {
  static constexpr cufftType type = CUFFT_Z2Z;
  static constexpr ncclDataType_t nccl = ncclDouble;
  static cufftResult exec(cufftHandle p, Complex<double>* in, Complex<double>* out, int dir) {
    return cufftExecZ2Z(p, reinterpret_cast<cufftDoubleComplex*>(in), reinterpret_cast<cufftDoubleComplex*>(out), dir);
  }
};
template <>
struct CufftC2C<float> {
  static constexpr cufftType type = CUFFT_C2C;
  static constexpr ncclDataType_t nccl = ncclFloat;
  static cufftResult exec(cufftHandle p, Complex<float>* in, Complex<float>* out, int dir) {
    return cufftExecC2C(p, reinterpret_cast<cufftComplex*>(in), reinterpret_cast<cufftComplex*>(out), dir);
  }
};

//! The layout of the exchange between the rows of the x transforms ([rows][nxh] on each rank)
//! and the columns of the y transforms ([cols][ny]): in the exchange buffer, the block for (or
//! from) rank r of a rank holding `rows` rows is [cols_r][rows] at offset rows * i0_r, and the
//! block from (or for) rank s of a rank holding `cols` columns is [cols][rows_s] at cols * j0_s.
//! FFTW's block distribution (Slab::of_rank): rank = index / block.
template <class Real>
struct SlabExchange {
  int ny, nxh;
  int br, bc;      //!< row and column block sizes
  int rows, cols;  //!< this rank's
  int j0, i0;
  CASCADE_HD int row_rank(int j) const { return j / br; }
  CASCADE_HD int col_rank(int i) const { return i / bc; }
  CASCADE_HD int rows_of(int s) const { return ny - s * br < br ? ny - s * br : br; }
  CASCADE_HD int cols_of(int r) const { return nxh - r * bc < bc ? nxh - r * bc : bc; }
  //! Where element (row jj of mine, column i) of the x-transformed rows goes to / comes from.
  CASCADE_HD std::size_t row_side(int jj, int i) const {
    const int r = col_rank(i);
    return std::size_t(rows) * std::size_t(r * bc) + std::size_t(i - r * bc) * std::size_t(rows) + std::size_t(jj);
  }
  //! Where element (column c of mine, row j) of the y-transformed columns comes from / goes to.
  CASCADE_HD std::size_t col_side(int c, int j) const {
    const int s = row_rank(j);
    return std::size_t(cols) * std::size_t(s * br) + std::size_t(c) * std::size_t(rows_of(s)) + std::size_t(j - s * br);
  }
};

//! rows [rows][nxh] -> exchange buffer (before the all-to-all of a forward transform), and back.
template <class Real>
struct RowsToExchange {
  SlabExchange<Real> x;
  const Complex<Real>* rows;
  Complex<Real>* buf;
  CASCADE_HD void operator()(std::size_t idx) const {
    const int jj = int(idx / std::size_t(x.nxh)), i = int(idx - std::size_t(jj) * std::size_t(x.nxh));
    buf[x.row_side(jj, i)] = rows[idx];
  }
};
template <class Real>
struct ExchangeToRows {
  SlabExchange<Real> x;
  const Complex<Real>* buf;
  Complex<Real>* rows;
  CASCADE_HD void operator()(std::size_t idx) const {
    const int jj = int(idx / std::size_t(x.nxh)), i = int(idx - std::size_t(jj) * std::size_t(x.nxh));
    rows[idx] = buf[x.row_side(jj, i)];
  }
};
//! exchange buffer -> columns [cols][ny] (after the all-to-all of a forward transform), and back.
template <class Real>
struct ExchangeToColumns {
  SlabExchange<Real> x;
  const Complex<Real>* buf;
  Complex<Real>* columns;
  CASCADE_HD void operator()(std::size_t idx) const {
    const int c = int(idx / std::size_t(x.ny)), j = int(idx - std::size_t(c) * std::size_t(x.ny));
    columns[idx] = buf[x.col_side(c, j)];
  }
};
template <class Real>
struct ColumnsToExchange {
  SlabExchange<Real> x;
  const Complex<Real>* columns;
  Complex<Real>* buf;
  CASCADE_HD void operator()(std::size_t idx) const {
    const int c = int(idx / std::size_t(x.ny)), j = int(idx - std::size_t(c) * std::size_t(x.ny));
    buf[x.col_side(c, j)] = columns[idx];
  }
};

//! The executor of one MPI rank of a slab-decomposed run on GPUs, one GPU a rank: the slab of
//! Slab::of_rank, and 2D transforms made of batched 1D cuFFT transforms (x: R2C/C2R over this
//! rank's rows; y: C2C over its kx columns) around one NCCL all-to-all (grouped send/receive
//! pairs on the backend's stream: nothing waits on the host). The loops and the device side of
//! the reductions are CudaExec's; the ranks' results are combined in rank order on the host.
template <class Real>
class CudaSlabExec : public CudaExec<Real> {
  using Base = CudaExec<Real>;
  using T = CufftTypes<Real>;
  using Z = CufftC2C<Real>;
  using Cplx = Complex<Real>;

 public:
  //! The slab transforms are batched 1D plans around an exchange: no fused transforms (the
  //! callbacks' offsets would be those of the 1D plans, not modes).
  static constexpr bool kCanFuse = false;
  CudaSlabExec(const Grid& grid, int device)
      : Base(grid, device, false), ranks_(parallel::size()), rank_(parallel::rank()) {
    require_slabs_fit(grid, ranks_);
    slab_ = Slab::of_rank(grid, rank_, ranks_);
    x_ = SlabExchange<Real>{grid.ny, grid.nxh(), (grid.ny + ranks_ - 1) / ranks_, (grid.nxh() + ranks_ - 1) / ranks_,
                            slab_.rows, slab_.cols, slab_.j0, slab_.i0};
    // Batched 1D plans sharing one work area: x over this rank's rows, y over its columns.
    int nx = grid.nx, ny = grid.ny, nxh = grid.nxh();
    std::size_t w[3] = {0, 0, 0};
    for (cufftHandle* p : {&x_forward_, &x_inverse_, &y_plan_}) {
      CASCADE_CUFFT_CHECK(cufftCreate(p));
      CASCADE_CUFFT_CHECK(cufftSetAutoAllocation(*p, 0));
    }
    CASCADE_CUFFT_CHECK(cufftMakePlanMany(x_forward_, 1, &nx, &nx, 1, nx, &nxh, 1, nxh, T::r2c, slab_.rows, &w[0]));
    CASCADE_CUFFT_CHECK(cufftMakePlanMany(x_inverse_, 1, &nx, &nxh, 1, nxh, &nx, 1, nx, T::c2r, slab_.rows, &w[1]));
    CASCADE_CUFFT_CHECK(cufftMakePlanMany(y_plan_, 1, &ny, &ny, 1, ny, &ny, 1, ny, Z::type, slab_.cols, &w[2]));
    this->work_bytes_ = std::max<std::size_t>({w[0], w[1], w[2], std::size_t(1)});
    if (cudaMalloc(&this->d_work_, this->work_bytes_) != cudaSuccess) {
      cudaGetLastError();
      throw RunError("out of GPU memory for the FFT work area (" + std::to_string(this->work_bytes_) + " bytes)");
    }
    for (cufftHandle p : {x_forward_, x_inverse_, y_plan_}) {
      CASCADE_CUFFT_CHECK(cufftSetWorkArea(p, this->d_work_));
      CASCADE_CUFFT_CHECK(cufftSetStream(p, this->stream_));
    }
    const std::size_t row_elems = std::size_t(slab_.rows) * std::size_t(nxh);
    const std::size_t col_elems = std::size_t(slab_.cols) * std::size_t(ny);
    exchange_elems_ = std::max(row_elems, col_elems);
    rows_ = this->template alloc<Cplx>(row_elems);
    send_ = this->template alloc<Cplx>(exchange_elems_);
    recv_ = this->template alloc<Cplx>(exchange_elems_);
    // NCCL: rank 0's id to everyone over MPI. NVLink multicast (NVLS) stays off: the shared
    // GPU hosts require it, and an all-to-all does not use it.
    ::setenv("NCCL_NVLS_ENABLE", "0", 1);
    CASCADE_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    CASCADE_CUDA_CHECK(cudaEventCreateWithFlags(&packed_, cudaEventDisableTiming));
    CASCADE_CUDA_CHECK(cudaEventCreateWithFlags(&copied_, cudaEventDisableTiming));
    ncclUniqueId id;
    if (rank_ == 0) CASCADE_NCCL_CHECK(ncclGetUniqueId(&id));
    parallel::broadcast(&id, sizeof(id), 0);
    CASCADE_NCCL_CHECK(ncclCommInitRank(&comm_, ranks_, id, rank_));
    // CASCADE_EXCHANGE_TIMING=1: time each all-to-all with events (the host waits for each, so
    // the run slows a little) and say on exit what they took.
    const char* t = std::getenv("CASCADE_EXCHANGE_TIMING");
    if (t && *t && std::string(t) != "0") {
      CASCADE_CUDA_CHECK(cudaEventCreate(&t0_));
      CASCADE_CUDA_CHECK(cudaEventCreate(&t1_));
    }
  }
  ~CudaSlabExec() {
    if (t0_ && exchanges_ > 0 && rank_ == 0)
      std::fprintf(stderr, "cascade: rank 0: %ld all-to-all exchanges, %.3f ms each on average (%.3f s in all)\n",
                   exchanges_, exchange_ms_ / double(exchanges_), exchange_ms_ / 1000);
    if (t0_) cudaEventDestroy(t0_);
    if (t1_) cudaEventDestroy(t1_);
    if (packed_) cudaEventDestroy(packed_);
    if (copied_) cudaEventDestroy(copied_);
    if (side_) cudaStreamDestroy(side_);
    if (comm_) ncclCommDestroy(comm_);
    for (cufftHandle p : {x_forward_, x_inverse_, y_plan_})
      if (p) cufftDestroy(p);
  }
  CudaSlabExec(const CudaSlabExec&) = delete;
  CudaSlabExec& operator=(const CudaSlabExec&) = delete;

  std::string description() const {
    int nccl = 0;
    ncclGetVersion(&nccl);
    return Base::description().substr(0, Base::description().size() - 1) + ", " + std::to_string(ranks_) +
           " ranks over NCCL " + std::to_string(nccl / 10000) + "." + std::to_string(nccl / 100 % 100) + ")";
  }
  Slab slab() const { return slab_; }
  //! The cuFFT work area and the exchange's three buffers.
  std::size_t fft_work_bytes() const {
    return this->work_bytes_ + (rows_.size() + send_.size() + recv_.size()) * sizeof(Cplx);
  }

  void forward(const Real* d_in, Cplx* d_out) {
    CASCADE_CUFFT_CHECK(T::exec_r2c(x_forward_, d_in, rows_.data()));
    this->for_each(rows_.size(), RowsToExchange<Real>{x_, rows_.data(), send_.data()});
    all_to_all(/*to_columns=*/true);
    const std::size_t n = std::size_t(slab_.cols) * std::size_t(x_.ny);
    this->for_each(n, ExchangeToColumns<Real>{x_, recv_.data(), d_out});
    CASCADE_CUFFT_CHECK(Z::exec(y_plan_, d_out, d_out, CUFFT_FORWARD));
  }
  void inverse(Cplx* d_in, Real* d_out) {
    CASCADE_CUFFT_CHECK(Z::exec(y_plan_, d_in, d_in, CUFFT_INVERSE));  // d_in may be overwritten
    const std::size_t n = std::size_t(slab_.cols) * std::size_t(x_.ny);
    this->for_each(n, ColumnsToExchange<Real>{x_, d_in, send_.data()});
    all_to_all(/*to_columns=*/false);
    this->for_each(rows_.size(), ExchangeToRows<Real>{x_, recv_.data(), rows_.data()});
    CASCADE_CUFFT_CHECK(T::exec_c2r(x_inverse_, rows_.data(), d_out));
  }

  // ---- reductions: this GPU's (CudaExec), then every rank's, combined in rank order
  Real max_result() const {
    const double mine = double(Base::max_result());
    std::vector<double> all(static_cast<std::size_t>(ranks_));
    parallel::allgather(&mine, sizeof(double), all.data());
    const MaxOp<double> op;
    double result = MaxOp<double>::identity();
    for (double v : all) result = op(result, v);
    return Real(result);
  }
  template <class Fn>
  Real for_each_max(std::size_t n, const Fn& f) {
    this->for_each_max_async(n, f);
    return max_result();
  }
  template <class Fn>
  auto transform_sum(std::size_t n, const Fn& f) -> decltype(f(std::size_t(0))) {
    using R = decltype(f(std::size_t(0)));
    const R mine = Base::transform_sum(n, f);
    std::vector<R> all(static_cast<std::size_t>(ranks_));
    parallel::allgather(&mine, sizeof(R), all.data());
    R result{};
    for (const R& p : all) result = result + p;
    return result;
  }
  template <class Fn>
  void histogram4(std::size_t n, const Fn& f, int bins, std::vector<double> (&out)[4]) {
    Base::histogram4(n, f, bins, out);
    for (auto& h : out) parallel::sum_in_rank_order(h.data(), bins);
  }
  void budget_integrals(double (&out)[6]) {
    Base::budget_integrals(out);
    parallel::sum_in_rank_order(out, 6);
  }
  void set_budget_integrals(const double (&in)[6]) {
    const double zero[6] = {0, 0, 0, 0, 0, 0};
    Base::set_budget_integrals(parallel::root() ? in : zero);
  }

 private:
  //! The transpose: every rank sends each other rank its block of send_ and receives theirs
  //! into recv_ (to_columns: rows -> columns, a forward transform; else back).
  void all_to_all(bool to_columns) {
    if (t0_) CASCADE_CUDA_CHECK(cudaEventRecord(t0_, this->stream_));
    const Cplx* self_src = nullptr;  // set in the loop (every rank has a block of its own)
    Cplx* self_dst = nullptr;
    std::size_t self_n = 0;
    CASCADE_NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < ranks_; ++r) {
      // Blocks on the row side: [cols_r][rows] at rows * i0_r; on the column side:
      // [cols][rows_r] at cols * j0_r.
      const std::size_t row_off = std::size_t(slab_.rows) * std::size_t(r * x_.bc);
      const std::size_t row_n = std::size_t(slab_.rows) * std::size_t(x_.cols_of(r));
      const std::size_t col_off = std::size_t(slab_.cols) * std::size_t(r * x_.br);
      const std::size_t col_n = std::size_t(slab_.cols) * std::size_t(x_.rows_of(r));
      const std::size_t send_off = to_columns ? row_off : col_off, send_n = to_columns ? row_n : col_n;
      const std::size_t recv_off = to_columns ? col_off : row_off, recv_n = to_columns ? col_n : row_n;
      if (r == rank_) {  // this rank's own block: a copy on the GPU, not through NCCL
        self_src = send_.data() + send_off;
        self_dst = recv_.data() + recv_off;
        self_n = send_n;
        continue;
      }
      CASCADE_NCCL_CHECK(ncclSend(send_.data() + send_off, 2 * send_n, Z::nccl, r, comm_, this->stream_));
      CASCADE_NCCL_CHECK(ncclRecv(recv_.data() + recv_off, 2 * recv_n, Z::nccl, r, comm_, this->stream_));
    }
    // The own block is copied on a second stream while NCCL moves the others.
    CASCADE_CUDA_CHECK(cudaEventRecord(packed_, this->stream_));
    CASCADE_CUDA_CHECK(cudaStreamWaitEvent(side_, packed_, 0));
    CASCADE_CUDA_CHECK(cudaMemcpyAsync(self_dst, self_src, self_n * sizeof(Cplx), cudaMemcpyDeviceToDevice, side_));
    CASCADE_CUDA_CHECK(cudaEventRecord(copied_, side_));
    CASCADE_NCCL_CHECK(ncclGroupEnd());
    CASCADE_CUDA_CHECK(cudaStreamWaitEvent(this->stream_, copied_, 0));
    if (t0_) {
      CASCADE_CUDA_CHECK(cudaEventRecord(t1_, this->stream_));
      CASCADE_CUDA_CHECK(cudaEventSynchronize(t1_));
      float ms = 0;
      CASCADE_CUDA_CHECK(cudaEventElapsedTime(&ms, t0_, t1_));
      exchange_ms_ += ms;
      ++exchanges_;
    }
  }

  int ranks_, rank_;
  Slab slab_;
  SlabExchange<Real> x_{};
  cufftHandle x_forward_ = 0, x_inverse_ = 0, y_plan_ = 0;
  std::size_t exchange_elems_ = 0;
  Buffer<Cplx> rows_, send_, recv_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t side_ = nullptr;  //!< the copy of the own block, beside NCCL's transfers
  cudaEvent_t packed_ = nullptr, copied_ = nullptr;
  cudaEvent_t t0_ = nullptr, t1_ = nullptr;  //!< CASCADE_EXCHANGE_TIMING
  double exchange_ms_ = 0;
  long exchanges_ = 0;
};
#endif  // CASCADE_HAVE_NCCL

}  // namespace

template <class Real>
std::unique_ptr<Backend<Real>> make_cuda_slab_backend(const Grid& grid) {
#if defined(CASCADE_HAVE_NCCL)
  // One rank per GPU: the ranks on a machine take its GPUs in order.
  const int count = cuda_device_count();
  const int local = parallel::rank_on_this_node(), here = parallel::ranks_on_this_node();
  if (count > 0 && here > count)
    throw InputError("run.backend: cuda with " + std::to_string(here) + " MPI ranks on this machine but " +
                     std::to_string(count) + " GPU" + (count == 1 ? "" : "s") + ": start one rank per GPU");
  return std::make_unique<BackendImpl<Real, CudaSlabExec<Real>>>(grid, count > 0 ? local % count : 0);
#else
  (void)grid;
  throw InputError("run.backend: cuda over several MPI ranks needs NCCL, which this cascade was built without");
#endif
}

template std::unique_ptr<Backend<float>> make_cuda_slab_backend<float>(const Grid&);
template std::unique_ptr<Backend<double>> make_cuda_slab_backend<double>(const Grid&);

template <class Real>
std::unique_ptr<Backend<Real>> make_cuda_backend(const Grid& grid, int device) {
  return std::make_unique<BackendImpl<Real, CudaExec<Real>>>(grid, device);
}

template std::unique_ptr<Backend<float>> make_cuda_backend<float>(const Grid&, int);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(const Grid&, int);

}  // namespace cascade
