//! @file CudaExec: the executor of one GPU (BackendImpl, src/backends/backend_impl.hpp): allocation,
//! copies, grid-stride loops and their reductions on one stream, cuFFT's plain 2D plans, and the
//! evaluator of the step plan's strategy (plain_eval, pruned_eval, row_kernel_eval,
//! complex_pair_eval).
#pragma once

#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "cascade/step_plan.hpp"
#include "kernels/fft_callbacks.cuh"
#include "backends/backend_impl.hpp"
#include "backends/cuda/column_kernel_eval.cuh"
#include "backends/cuda/complex_pair_eval.cuh"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/plain_eval.cuh"
#include "backends/cuda/pruned_eval.cuh"
#include "backends/cuda/row_kernel_eval.cuh"
#include "backends/cuda/step_graph.cuh"
#include "backends/cuda/cuda_check.hpp"

namespace cascade {

//! cudaFree as a Buffer's deleter (src/backends/cuda/device.cu).
void device_free(void* p) noexcept;

template <class Real>
class CudaExec {
  using T = CufftTypes<Real>;
  using Cplx = Complex<Real>;

 public:
  static constexpr BackendKind kKind = BackendKind::Cuda;
  static constexpr bool kCanFuse = true;    //!< prepare_plan: kernels/fft_callbacks.cuh
  static constexpr bool kRowFused = false;  //!< the CPU's evaluation row by row
  static constexpr bool kCanGraph = true;   //!< the step on the device (step_graph.cuh)
  //! Steps an iteration of the graph's loop where a step is small (steps_per_iteration): a
  //! while loop's iteration costs some 3.6 us on an H100 (docs/performance.md, "What the step's
  //! launches cost").
  static constexpr int kStepsPerIteration = 4;
  static constexpr std::size_t kFewPoints = std::size_t(512) * 512;

  //! `members`: the fields of an ensemble each buffer holds, transformed as one batch.
  CudaExec(const Grid& grid, int device, int members = 1) : CudaExec(grid, device, true, members) {}

 protected:
  //! `whole_plans`: make the 2D plans of the whole grid (a slab executor makes its own).
  CudaExec(const Grid& grid, int device, bool whole_plans, int members = 1)
      : device_(device), whole_(Slab::whole(grid, members)), nx_(grid.nx), ny_(grid.ny), members_(members) {
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
    blocks_cap_ = prop_.multiProcessorCount * reduction_policy::Fused::kBlocksPerSm;
    // Scratch of the fused max passes: one partial per block, the cascade's scratch, a result.
    CASCADE_CUDA_CHECK(cudaMalloc(&d_partials_, sizeof(Real) * blocks_cap_));
    // The budget: per-block partial sums of the first fused stage (each member's blocks), and
    // the six integrals of each member.
    CASCADE_CUDA_CHECK(cudaMalloc(&d_sum_partials_, sizeof(SpectralSums) * (blocks_cap_ + std::size_t(members))));
    CASCADE_CUDA_CHECK(cudaMalloc(&d_budget_, 6 * sizeof(double) * std::size_t(members)));
    CASCADE_CUDA_CHECK(cudaMemset(d_budget_, 0, 6 * sizeof(double) * std::size_t(members)));
    CASCADE_CUDA_CHECK(cudaMalloc(&d_ticket_, sizeof(unsigned)));
    CASCADE_CUDA_CHECK(cudaMemset(d_ticket_, 0, sizeof(unsigned)));
    // The CFL maximum comes back through mapped pinned memory, which the kernel writes, and an
    // event (for_each_max_async).
    CASCADE_CUDA_CHECK(cudaHostAlloc(&h_max_, sizeof(Real), cudaHostAllocMapped));
    CASCADE_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&d_max_), h_max_, 0));
    CASCADE_CUDA_CHECK(cudaEventCreateWithFlags(&max_ready_, cudaEventDisableTiming));
    chain_ = cuda_launch::runs_sm90_code(step_graph_kernels::step_clock_kernel<Real>, prop_);
    graph_.set_chained(chain_);
  }

  //! One 2D plan per direction (of every member: one batch), made once, sharing one work area
  //! (auto-allocation off): at the largest grids a second work area would cost as much as a
  //! field. They run on the stream.
  void make_whole_plans(const Grid& grid) {
    CASCADE_CUFFT_CHECK(cufftCreate(&forward_));
    CASCADE_CUFFT_CHECK(cufftCreate(&inverse_));
    CASCADE_CUFFT_CHECK(cufftSetAutoAllocation(forward_, 0));
    CASCADE_CUFFT_CHECK(cufftSetAutoAllocation(inverse_, 0));
    std::size_t work_f = 0, work_i = 0;
    if (members_ == 1) {
      CASCADE_CUFFT_CHECK(cufftMakePlan2d(forward_, grid.ny, grid.nx, T::r2c, &work_f));
      CASCADE_CUFFT_CHECK(cufftMakePlan2d(inverse_, grid.ny, grid.nx, T::c2r, &work_i));
    } else {
      long long dims[2] = {grid.ny, grid.nx};
      const long long real = (long long)grid.size(), spectral = (long long)grid.spectral_size();
      CASCADE_CUFFT_CHECK(cufftMakePlanMany64(forward_, 2, dims, nullptr, 1, real, nullptr, 1, spectral, T::r2c,
                                              members_, &work_f));
      CASCADE_CUFFT_CHECK(cufftMakePlanMany64(inverse_, 2, dims, nullptr, 1, spectral, nullptr, 1, real, T::c2r,
                                              members_, &work_i));
    }
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
    destroy_step_plans();
    if (d_cb_) cudaFree(d_cb_);
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
  //! While the step is being recorded (StepGraph) the maximum goes to device memory, where the
  //! step's clock reads it, and no event is recorded.
  template <class Fn>
  void for_each_max_async(std::size_t n, const Fn& f) {
    reduction_kernels::launch_max_for_each(n, f, blocks_cap_, d_partials_, d_ticket_, max_out(), stream_);
    CASCADE_CUDA_CHECK_LAUNCH();
    if (!graph_.recording()) CASCADE_CUDA_CHECK(cudaEventRecord(max_ready_, stream_));
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
  //! budget integrals on the device: two kernels (one in a recorded step), no host synchronisation.
  //! Each member's indices (n / members of them) go to their own blocks (a grid row a member)
  //! and integrals.
  //! `dw`: the weights in device memory instead (a fused stage's: the step clock's); in a step
  //! being recorded, the sum of the partials is then left to the next clock (StepGraph::defer_budget).
  template <class Fn>
  void sum_into_budget(std::size_t n, const Fn& f, const BudgetWeights& w, const BudgetWeights* dw = nullptr) {
    constexpr int kThreads = cuda_launch::kBudgetThreads;
    const std::size_t per = n / std::size_t(members_);
    const std::size_t want = (per + kThreads - 1) / kThreads;
    const std::size_t cap = std::max<std::size_t>(1, std::size_t(blocks_cap_) / std::size_t(members_));
    const int blocks = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(want, cap)));
    const dim3 grid{unsigned(blocks), unsigned(members_)};
    cuda_launch::for_each_sum_kernel<kThreads, SpectralSums><<<grid, kThreads, 0, stream_>>>(per, f, d_sum_partials_);
    CASCADE_CUDA_CHECK_LAUNCH();
    if (graph_.recording() && dw == graph_.weights()) return graph_.defer_budget(d_sum_partials_, blocks, d_budget_);
    cuda_launch::budget_finish_kernel<kThreads><<<members_, kThreads, 0, stream_>>>(
        d_sum_partials_, blocks, w, dw, d_budget_);
    CASCADE_CUDA_CHECK_LAUNCH();
  }
  void budget_integrals(double* out) { copy_to_host(d_budget_, out, 6 * std::size_t(members_)); }
  void set_budget_integrals(const double* in) { copy_from_host(in, d_budget_, 6 * std::size_t(members_)); }

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
    cuda_launch::histogram4_kernel<<<blocks, kThreads, shared_bins ? bytes : 0, stream_>>>(n, f, bins, shared_bins,
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
                                                          cuda_launch::AddOp{}, f, R{}, stream_));
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
    CASCADE_CUDA_CHECK(cub::DeviceReduce::TransformReduce(d_temp, temp_bytes, first, d_out, n, cuda_launch::AddOp{}, f, R{},
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
    cuda_launch::for_each_kernel<kThreads><<<blocks, kThreads, 0, stream_>>>(n, f);
    CASCADE_CUDA_CHECK_LAUNCH();
  }

  void forward(const Real* d_in, Cplx* d_out) const {
    CASCADE_CUFFT_CHECK(T::exec_r2c(forward_, d_in, d_out));
  }
  void inverse(Cplx* d_in, Real* d_out) const {
    CASCADE_CUFFT_CHECK(T::exec_c2r(inverse_, d_in, d_out));
  }

  // ---- the step's own transforms: the evaluator of the step plan's strategy

  //! What plan_step needs to know of this GPU (include/cascade/step_plan.hpp): the row kernel's
  //! shared memory against a block's, and whether a complex plan's work area would fit.
  StepDevice step_device() const {
    StepDevice d;
    d.kind = StepDevice::Kind::Cuda;
    d.row_shared_bytes = RowKernelEval<Real>::shared_bytes(nx_);
    d.column_pairs = ColumnKernelEval<Real>::can_pair(prop_);
    d.column_shared_bytes = ColumnKernelEval<Real>::least_shared_bytes(ny_, d.column_pairs);
    d.shared_optin_bytes = prop_.sharedMemPerBlockOptin;
    std::size_t total = 0;
    CASCADE_CUDA_CHECK(cudaMemGetInfo(&d.free_bytes, &total));
    d.work_bytes = work_bytes_;
    std::size_t need = 0;
    int dims[2] = {ny_, nx_};
    if (cufftEstimateMany(2, dims, nullptr, 1, ny_ * nx_, nullptr, 1, ny_ * nx_, T::c2c, members_, &need) == CUFFT_SUCCESS)
      d.complex_work_bytes = std::max<std::size_t>(need, 1);
    return d;
  }
  //! Carry out a step plan, once (Backend::prepare_step): its evaluator's plans, all sharing the
  //! work area of the plain plans (grown if they need more; cuFFT links the callbacks into its
  //! kernels here, nvJitLink, under a second a plan). Where cuFFT refuses them, the plain
  //! transforms run, one field at a time, and the plan returned says why.
  StepPlan prepare_plan(StepPlan plan, const SpectralShape<Real>& shape, const DealiasMask<Real>& mask) {
    strategy_ = plan.strategy;
    pairs_ = plan.batched;
    fused_level_ = plan.callbacks == CallbackLevel::All ? 2 : plan.callbacks == CallbackLevel::Store ? 1 : 0;
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
  bool has_packed() const { return strategy_ == StepStrategy::ComplexPairs; }
  void packed_inverse(const Cplx* p, Cplx* z) const { complex_pairs_.inverse(p, z); }
  void packed_forward(const Cplx* z, Cplx* p) const { complex_pairs_.forward(z, p); }
  //! Whether Basdevant's evaluation runs row by row (step_row_products).
  bool has_row_products() const { return strategy_ == StepStrategy::Rows || has_columns(); }
  //! Basdevant's evaluation row by row (RowKernelEval::run, between the pruned passes over the
  //! columns; or the row kernel alone, between the column kernel's passes); max_result() then
  //! waits for the row kernel alone.
  void step_row_products(Cplx* a, Cplx* b, bool cfl, const CflSpeed<Real>& speed) {
    const auto after = [&] {
      if (cfl && !graph_.recording()) CASCADE_CUDA_CHECK(cudaEventRecord(max_ready_, stream_));
    };
    const MaxTarget<Real> max{d_partials_, d_ticket_, max_out()};
    if (!has_columns()) return rows_.run(pruned_, a, b, cfl, speed, max, chained(), stream_, after);
    rows_.products(a, b, columns_.ld(), cfl, speed, max, chained(), stream_);
    after();
  }
  //! Whether the passes over the columns are the column kernel's, with the fused stage in them
  //! (StepStrategy::RowsColumns): then the work fields hold y in physical space between the
  //! step's operations (column_inputs, column_stage, column_forward).
  bool has_columns() const { return strategy_ == StepStrategy::RowsColumns; }
  void column_inputs(const InputsOfColumns<Real>& op, Cplx* a, Cplx* b) {
    columns_.inputs(op, a, b, chained(), stream_);
  }
  //! Stage `stage` over the columns, its numbers from the step's clock; with op.with_sums the
  //! budget's sums weighted by the clock's weights into the integrals (budget_finish_kernel, or
  //! in a step being recorded the next clock: StepGraph::defer_budget): in the column kernel, or
  //! where its tiles are split over blocks (sums_apart) in a pass over S of their own before it.
  void column_stage(const StageOfColumns<Real>& op, Cplx* a, Cplx* b, int stage, const LinearCoefficients* each) {
    constexpr int kThreads = cuda_launch::kBudgetThreads;
    const bool apart = op.with_sums && columns_.sums_apart();
    const SpectralSums* partials = columns_.partials();
    int count = columns_.blocks();  // the partials of each member
    if (apart) {
      count = std::max(1, std::min(ny_, blocks_cap_ / members_));
      cuda_launch::row_sum_kernel<kThreads, SpectralSums><<<dim3(count, members_), kThreads, 0, stream_>>>(
          ny_, columns_.kept(), KeptSums<Real>{op.stage.mask, op.sums}, graph_.clock(), each, d_sum_partials_);
      CASCADE_CUDA_CHECK_LAUNCH();
      partials = d_sum_partials_;
    }
    StageOfColumns<Real> run = op;
    run.with_sums = op.with_sums && !apart;
    run.shape = op.stage.shape();
    columns_.stage(run, a, b, graph_.clock(), stage, each, chained(), stream_);
    if (!op.with_sums) return;
    if (graph_.recording()) return graph_.defer_budget(partials, count, d_budget_);
    cuda_launch::budget_finish_kernel<kThreads><<<members_, kThreads, 0, stream_>>>(partials, count, BudgetWeights{},
                                                                                 graph_.weights(), d_budget_);
    CASCADE_CUDA_CHECK_LAUNCH();
  }
  //! The forward passes alone, the products left as half spectra in a, b: from copies of their
  //! rows of ColumnKernelEval::ld() in scratch (two buffers of members ny ld complex numbers at
  //! least: u, v), or in place where those rows are nx/2 + 1 long.
  void column_forward(Cplx* a, Cplx* b, Cplx* scratch_a, Cplx* scratch_b) {
    if (columns_.ld() == nx_ / 2 + 1) return columns_.forward(a, b, a, b, stream_);
    const std::size_t bytes = sizeof(Cplx) * std::size_t(members_) * std::size_t(ny_) * std::size_t(columns_.ld());
    CASCADE_CUDA_CHECK(cudaMemcpyAsync(scratch_a, a, bytes, cudaMemcpyDeviceToDevice, stream_));
    CASCADE_CUDA_CHECK(cudaMemcpyAsync(scratch_b, b, bytes, cudaMemcpyDeviceToDevice, stream_));
    columns_.forward(scratch_a, scratch_b, a, b, stream_);
  }

  // ---- the step on the device (step_graph.cuh; Backend::capture_step_graph, run_step_graph)

  //! "" where the step can be recorded as a graph that chooses its own dt; else why not.
  std::string graph_unavailable() const {
    if (cuda_sync_check_enabled()) return "CASCADE_SYNC_CHECK synchronises after every kernel";
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    if (std::min(runtime, driver) < 12040) return "the CUDA driver predates conditional graph nodes (12.4)";
    return "";
  }
  //! Returns the steps an iteration of its loop (steps_per_iteration).
  int capture_graph(const StepRule& rule, const std::function<void()>& inputs,
                    const std::function<void()>& evaluation, const std::function<void()>& stages) {
    const int steps = steps_per_iteration();
    graph_.record(stream_, rule, inputs, evaluation, stages, steps, members_);
    return steps;
  }
  //! Steps an iteration of the graph's loop: kStepsPerIteration for rows and columns of at most
  //! kFewPoints points in all (every member's), whose step costs its launches; else one. Once
  //! the clock has ended a launch, the iteration's later steps change neither the state nor the
  //! budget (the column kernel and the white noise's draw read the clock's go, the budget's last
  //! kernel then adds zeros), but their row kernels still transform the work fields, which the
  //! next step makes again: at most kStepsPerIteration - 1 steps' rows a launch for nothing.
  int steps_per_iteration() const {
    const std::size_t points = std::size_t(nx_) * std::size_t(ny_) * std::size_t(members_);
    return has_columns() && points <= kFewPoints ? kStepsPerIteration : 1;
  }
  long run_graph(StepClock& k, double t_output, long max_steps) { return graph_.run(stream_, k, t_output, max_steps); }
  void drop_graph() { graph_.destroy(); }
  //! The device clock the fused stages read their h-dependent numbers from (the budget's
  //! last kernel its weights), in a step the host chose as in one the device chose.
  const StepClock* step_clock() { return graph_.clock(); }
  const BudgetWeights* step_weights() { return graph_.weights(); }
  bool recording() const { return graph_.recording(); }
  void set_clock(const StepClock& k) { graph_.set_clock(stream_, k); }
  //! Stage i of a step the host chose: the clock made to hold these numbers (StepGraph).
  void ensure_stage(int i, double h, double hb, double ha, const BudgetWeights* w) {
    graph_.ensure_stage(stream_, i, h, hb, ha, w);
  }
  //! The step's transforms of one field (the inverse overwrites its input), and of a pair of
  //! fields, each followed by the other in one allocation (has_pairs()).
  void step_forward(const Real* d_in, Cplx* d_out) const {
    if (pruned()) return pruned_.forward(d_in, d_out);
    plain_.forward(forward_, d_in, d_out);
  }
  void step_inverse(Cplx* d_in, Real* d_out) const {
    if (pruned()) return pruned_.inverse(d_in, d_out);
    plain_.inverse(inverse_, d_in, d_out);
  }
  void step_forward_pair(const Real* d_in, Cplx* d_out) const {
    if (pruned()) return pruned_.forward_pair(d_in, d_out);
    plain_.forward_pair(d_in, d_out);
  }
  void step_inverse_pair(Cplx* d_in, Real* d_out) const {
    if (pruned()) return pruned_.inverse_pair(d_in, d_out);
    plain_.inverse_pair(d_in, d_out);
  }

 protected:
  using Params = TransformCallbackParams<Real>;

  //! Where the CFL maximum goes: pinned host memory (max_result reads it), or, while the step is
  //! being recorded, the step clock's device memory.
  Real* max_out() const { return graph_.recording() ? graph_.max_slot() : d_max_; }
  //! Whether the step's own kernels are launched chained now: while the step is being recorded,
  //! on a device and build that allow it (chained.cuh).
  bool chained() const { return chain_ && graph_.recording(); }

  //! Pruned transforms: their own, or around the row kernel.
  bool pruned() const { return strategy_ == StepStrategy::Pruned || strategy_ == StepStrategy::Rows; }

  //! The plans of the strategy's evaluator (and the callbacks' parameters); on failure none of
  //! them, the plain transforms, and what failed.
  bool make_step_plans(const SpectralShape<Real>& shape, const DealiasMask<Real>& mask, std::string& failed) {
    if (fused_level_ > 0) {
      CASCADE_CUDA_CHECK(cudaMalloc(&d_cb_, sizeof(Params)));
      const Params params{shape, mask, 1.0 / double(nx_)};
      CASCADE_CUDA_CHECK(cudaMemcpy(d_cb_, &params, sizeof(Params), cudaMemcpyHostToDevice));
    }
    cb_info_[0] = d_cb_;  // cuFFT may keep the pointer to it: a member, alive with the plans
    PlanMaker<Real> m{cb_info_};
    if (strategy_ == StepStrategy::ComplexPairs) complex_pairs_.make(m, ny_, nx_, fused_level_, members_);
    else if (pruned()) pruned_.make(m, ny_, nx_, fused_level_, pairs_);
    else if (!has_columns()) plain_.make(m, ny_, nx_, fused_level_, pairs_, members_);  // rows and columns: no cuFFT
    if (m.ok() && m.need > work_bytes_) grow_work_area(m);
    set_work_area(m, plain_.handles());
    set_work_area(m, pruned_.handles());
    set_work_area(m, complex_pairs_.handles());
    if (!m.ok()) {
      destroy_step_plans();
      strategy_ = StepStrategy::Plain;
      fused_level_ = 0;
      pairs_ = false;
      failed = m.failed + ": " + cufft_error_string(m.r);
      return false;
    }
    if (pruned()) pruned_.share(stream_, d_work_);
    const bool stage = RowKernelEval<Real>::can_stage(prop_), pair = RowKernelEval<Real>::can_pair(prop_);
    if (strategy_ == StepStrategy::Rows) rows_.make(nx_, ny_, prop_.multiProcessorCount, blocks_cap_, 1, stage, pair);
    if (strategy_ == StepStrategy::RowsColumns) {  // every member's rows, and columns
      rows_.make(nx_, ny_ * members_, prop_.multiProcessorCount, blocks_cap_, members_, stage, pair);
      columns_.make(nx_, ny_, two_thirds_band(nx_) + 1, members_, prop_.sharedMemPerBlockOptin,
                    prop_.multiProcessorCount, ColumnKernelEval<Real>::can_pair(prop_));
    }
    return true;
  }
  //! One work area for every plan, grown to the largest need.
  void grow_work_area(PlanMaker<Real>& m) {
    void* grown = nullptr;
    if (cudaMalloc(&grown, m.need) != cudaSuccess) {
      cudaGetLastError();
      m.r = CUFFT_ALLOC_FAILED;
      m.failed = "work area of " + std::to_string(m.need) + " bytes";
      return;
    }
    CASCADE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (d_work_) CASCADE_CUDA_CHECK(cudaFree(d_work_));
    d_work_ = grown;
    work_bytes_ = m.need;
    if (forward_) CASCADE_CUFFT_CHECK(cufftSetWorkArea(forward_, d_work_));
    if (inverse_) CASCADE_CUFFT_CHECK(cufftSetWorkArea(inverse_, d_work_));
  }
  template <std::size_t N>
  void set_work_area(PlanMaker<Real>& m, cufftHandle* const (&handles)[N]) {
    for (cufftHandle* p : handles) {
      if (!*p || !m.ok()) continue;
      m.check(cufftSetWorkArea(*p, d_work_), "work area or stream");
      m.check(cufftSetStream(*p, stream_), "work area or stream");
    }
  }
  void destroy_step_plans() {
    plain_.destroy();
    pruned_.destroy();
    complex_pairs_.destroy();
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
  int members_ = 1;  //!< the fields of an ensemble a buffer holds (one batch)
  // The step plan's evaluators (prepare_plan): each owns its plans (and buffers).
  StepStrategy strategy_ = StepStrategy::Plain;
  int fused_level_ = 0;
  bool pairs_ = false;
  Params* d_cb_ = nullptr;        //!< the callbacks' parameters
  void* cb_info_[1] = {nullptr};  //!< the callbacks' caller info: d_cb_
  PlainEval<Real> plain_;
  PrunedEval<Real> pruned_;
  RowKernelEval<Real> rows_;
  ColumnKernelEval<Real> columns_;
  ComplexPairEval<Real> complex_pairs_;
  StepGraph<Real> graph_;  //!< the step on the device, once recorded
  bool chain_ = false;     //!< the device and build can launch the step's kernels chained
};

}  // namespace cascade
