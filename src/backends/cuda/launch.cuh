//! @file The grid-stride kernels of the CUDA executor: a functor over every index, with its
//! results' maximum (fused to the last block), their sum (in a fixed order), or four histograms.
#pragma once

#include <cub/block/block_reduce.cuh>

#include "cascade/reduction.hpp"
#include "backends/cuda/chained.cuh"
#include "kernels/reduction.cuh"
#include "cascade/coefficients.hpp"
#include "cascade/step_clock.hpp"
#include "kernels/reduction_ops.cuh"

namespace cascade {
namespace cuda_launch {

//! Grid-stride loop over n items, each handed to the functor. Four blocks of 256 resident on
//! an SM at least (at most 64 registers a thread): the fused stage, memory-bound, compiled to 66
//! registers and three blocks, moved 75% of the peak DRAM bandwidth (ncu, H100, 4096^2).
template <int BLOCK, class Fn>
__global__ void __launch_bounds__(BLOCK, 4) for_each_kernel(std::size_t n, Fn f) {
  const std::size_t stride = std::size_t(BLOCK) * gridDim.x;
  for (std::size_t idx = std::size_t(blockIdx.x) * BLOCK + threadIdx.x; idx < n; idx += stride)
    f(idx);
}

//! The evaluation row by row (kernels/row_fft.cuh): each block takes rows blockIdx.x,
//! blockIdx.x + gridDim.x, ... of the two spectra, in place, one row (or one part of one) in
//! dynamic shared memory at a time, with a sixteenth as many threads as the part has points;
//! the CFL maximum, where asked, completes as the fused maximum does (kernels/reduction.cuh: the
//! last block writes it to `result`).

struct AddOp {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const {
    return a + b;
  }
};

//! The block's sum of each thread's `acc`, to its partial d_partials[blockIdx.y][blockIdx.x]
//! (a grid row of blocks a member), which budget_finish_kernel adds up.
template <int BLOCK, class R>
__device__ __forceinline__ void store_block_partial(const R& acc, R* d_partials) {
  using Reduce = cub::BlockReduce<R, BLOCK>;
  __shared__ typename Reduce::TempStorage temp;
  const R total = Reduce(temp).Reduce(acc, AddOp{});
  if (threadIdx.x == 0) d_partials[std::size_t(blockIdx.y) * gridDim.x + blockIdx.x] = total;
}

//! The grid-stride loop of for_each_kernel, summing what the functor returns (R, a struct of
//! doubles) per block; the partials are summed in a fixed order by budget_finish_kernel, so
//! that the result is the same from run to run (a restart stays bit for bit). A grid row of
//! blocks a member (blockIdx.y): row m sums the n indices of member m's field.
template <int BLOCK, class R, class Fn>
__global__ void __launch_bounds__(BLOCK) for_each_sum_kernel(std::size_t n, Fn f, R* d_partials) {
  R acc{};
  const std::size_t first = std::size_t(blockIdx.y) * n;
  const std::size_t stride = std::size_t(BLOCK) * gridDim.x;
  for (std::size_t idx = std::size_t(blockIdx.x) * BLOCK + threadIdx.x; idx < n; idx += stride)
    acc = acc + f(first + idx);
  store_block_partial<BLOCK>(acc, d_partials);
}

//! The sums f.at(i, j, member) at the modes i < columns of the rows j < rows of each member
//! (blockIdx.y; its coefficients each[member] where `each` is given): rows blockIdx.x,
//! blockIdx.x + gridDim.x, ..., the threads along a row, summed per block as for_each_sum_kernel
//! does. No flat index is split into (i, j) (a 64-bit integer through double and back, a mode),
//! and the columns past `columns` and the rows without a kept mode (f.row_kept) are not
//! visited. A step not taken (the clock's go) adds nothing.
template <int BLOCK, class R, class Fn>
__global__ void __launch_bounds__(BLOCK) row_sum_kernel(int rows, int columns, Fn f, const StepClock* clock,
                                                        const LinearCoefficients* each, R* d_partials) {
  R acc{};
  if (!clock || clock->go) {
    if (each) f.set_linear(each[blockIdx.y]);
    for (int j = blockIdx.x; j < rows; j += gridDim.x) {
      if (!f.row_kept(j)) continue;
      for (int i = threadIdx.x; i < columns; i += BLOCK) acc = acc + f.at(i, j, int(blockIdx.y));
    }
  }
  store_block_partial<BLOCK>(acc, d_partials);
}

//! The threads of a block that adds up a member's budget partials: budget_finish_kernel's and
//! the step clock's, which adds up the step before it on the device (step_graph.cuh), so that
//! both sum in one order and give the same bits.
constexpr int kBudgetThreads = 256;

//! Block blockIdx.x: the sum of member blockIdx.x's `count` per-block partials, weighted into
//! its six budget integrals by thread 0 with the weights `w`, or those at `dw` where given (read
//! after the sum).
template <int BLOCK>
__device__ __forceinline__ void finish_member_budget(const SpectralSums* d_partials, int count, BudgetWeights w,
                                                     const BudgetWeights* dw, double* d_integrals) {
  const SpectralSums* mine = d_partials + std::size_t(blockIdx.x) * count;
  SpectralSums acc{};
  for (int i = threadIdx.x; i < count; i += BLOCK) acc = acc + mine[i];
  using Reduce = cub::BlockReduce<SpectralSums, BLOCK>;
  __shared__ typename Reduce::TempStorage temp;
  const SpectralSums total = Reduce(temp).Reduce(acc, AddOp{});
  if (threadIdx.x == 0) accumulate_budget(d_integrals + 6 * std::size_t(blockIdx.x), total, dw ? *dw : w);
}

//! A block a member (blockIdx.x): the sum of its `count` per-block partials, weighted into its
//! six budget integrals with the weights `w`, or those at `dw` where given (a step the host
//! chose on a device that can record the step: its clock's).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) budget_finish_kernel(const SpectralSums* d_partials, int count,
                                                              BudgetWeights w, const BudgetWeights* dw,
                                                              double* d_integrals) {
  finish_member_budget<BLOCK>(d_partials, count, w, dw, d_integrals);
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


}  // namespace cuda_launch
}  // namespace cascade
