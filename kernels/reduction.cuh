//! @file The cascaded max-reduction on the GPU: its two variants, the device helpers they share,
//! and the launch of the fused one. The solver's CFL maximum (src/backends/cuda/launch.cuh) and
//! `cascade bench reduction` (through src/backends/cuda/reduction_cuda.cu, include/cascade/reduction.hpp) use
//! these and no other reduction kernels. Launch sizes: kernels/reduction_policy.hpp.
//!
//! Fused (max_for_each_kernel; fused_block_max for kernels of their own, as the row kernel):
//!   1. each thread folds f(idx) over a grid-stride range of indices; f may do other work on the
//!      way (the solver's product kernels write uv and v^2 - u^2 and return the CFL speed), so
//!      the maximum costs no pass of its own;
//!   2. each block reduces its threads' values by warp shuffles;
//!   3. each block writes its partial and takes a ticket (threadfence + atomicAdd); the block
//!      that draws the last ticket reduces all partials, writes the result and resets the ticket
//!      to 0 ("last block finishes", CUDA sample threadFenceReduction): one launch. A launch of
//!      one block writes its value itself.
//! Column (max_columns_kernel), the design card's kernel over an n1 x n2 row-major array:
//!   1. each thread walks down the rows of its row chunk serially, in one column or a 16-byte
//!      group of adjacent columns (a warp reads one row's consecutive elements: coalesced);
//!   2. each block reduces in a shared-memory tree, the last warp by shuffles;
//!   3. each block writes one partial; the final combine is a second pass (max_partials_kernel,
//!      one block) or the host's (src/backends/cuda/reduction_cuda.cu).
//!
//! Max only, NaN-propagating at every level (MaxOp, kernels/reduction_ops.cuh); identity -inf.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/reduction_ops.cuh"
#include "kernels/reduction_policy.hpp"

namespace cascade {
namespace reduction_kernels {

namespace policy = reduction_policy;

// ------------------------------------------------------------------ warp and block reductions

//! Shuffle-down tree over a full warp; the result is valid in lane 0.
template <class Real>
__device__ __forceinline__ Real warp_max(Real v) {
  const MaxOp<Real> op;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

//! Block maximum by warp shuffles: each warp to lane 0, then warp 0 over the warp values.
//! Valid in thread 0. Two uses in one kernel need a __syncthreads() between them.
template <int BLOCK, class Real>
__device__ __forceinline__ Real block_max_shuffle(Real v) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "block size must be a multiple of 32, <= 1024");
  constexpr int kWarps = BLOCK / 32;
  __shared__ Real warp_values[kWarps];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  v = warp_max(v);
  if (lane == 0) warp_values[warp] = v;
  __syncthreads();
  if (warp == 0) v = warp_max(lane < kWarps ? warp_values[lane] : MaxOp<Real>::identity());
  return v;
}

//! Block maximum as on the design card: a shared-memory tree down to 64 values, then warp
//! shuffles for the last 32 (no __syncthreads inside one warp). Valid in thread 0.
template <int BLOCK, class Real>
__device__ __forceinline__ Real block_max_tree(Real v) {
  static_assert(BLOCK >= 64 && (BLOCK & (BLOCK - 1)) == 0, "tree needs a power-of-two block >= 64");
  const MaxOp<Real> op;
  __shared__ Real s[BLOCK];
  const int t = threadIdx.x;
  s[t] = v;
  __syncthreads();
#pragma unroll
  for (int half = BLOCK / 2; half > 32; half >>= 1) {
    if (t < half) s[t] = op(s[t], s[t + half]);
    __syncthreads();
  }
  if (t < 32) v = warp_max(op(s[t], s[t + 32]));
  return v;
}

//! The maximum of `count` partials by one block, UNROLL loads in flight a thread. The partials
//! were written by other blocks of this launch or by an earlier kernel: __ldcg reads them at
//! L2, the point of coherence, never from a possibly stale L1 line. Valid in thread 0.
template <int BLOCK, int UNROLL, class Real>
__device__ __forceinline__ Real max_of_partials(const Real* d_partials, unsigned count) {
  const MaxOp<Real> op;
  Real acc[UNROLL];
#pragma unroll
  for (int k = 0; k < UNROLL; ++k) acc[k] = MaxOp<Real>::identity();
  for (unsigned base = threadIdx.x; base < count; base += unsigned(UNROLL) * BLOCK) {
    Real x[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
      const unsigned i = base + unsigned(k) * BLOCK;
      x[k] = __ldcg(d_partials + (i < count ? i : base));  // no branch: all in flight
      if (i >= count) x[k] = MaxOp<Real>::identity();
    }
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) acc[k] = op(acc[k], x[k]);
  }
#pragma unroll
  for (int k = 1; k < UNROLL; ++k) acc[0] = op(acc[0], acc[k]);
  return block_max_shuffle<BLOCK>(acc[0]);
}

// ------------------------------------------------------------------ fused variant

//! Whether this block is the last of the launch's gridDim.x blocks to take a ticket from
//! *d_ticket ("last block finishes"): every thread of the block must call it, and every thread
//! gets the answer. Thread 0's accesses before the call (a partial written, shared values read)
//! are visible device-wide before its ticket is taken. Resetting the ticket is the caller's.
__device__ __forceinline__ bool last_block_to_arrive(unsigned* d_ticket) {
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    __threadfence();  // release: what this block did is visible before its ticket is taken
    is_last = atomicAdd(d_ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  return is_last;
}

//! Steps 2 and 3 of the fused variant for a block whose threads hold `acc`: every thread of the
//! block must call it. d_ticket is 0 before the launch and 0 after it; d_partials holds one
//! value per block of the launch.
template <int BLOCK, class Real>
__device__ __forceinline__ void fused_block_max(Real acc, Real* d_partials, unsigned* d_ticket,
                                                Real* d_result) {
  const Real block_value = block_max_shuffle<BLOCK>(acc);
  const unsigned blocks = gridDim.x;
  if (blocks == 1) {  // this block has seen every index
    if (threadIdx.x == 0) *d_result = block_value;
    return;
  }
  if (threadIdx.x == 0) d_partials[blockIdx.x] = block_value;
  // its __syncthreads also separates the two uses of block_max_shuffle's shared array
  if (!last_block_to_arrive(d_ticket)) return;
  __threadfence();  // acquire: the partials are read after the last ticket was seen
  const Real total = max_of_partials<BLOCK, policy::Fused::kFinalUnroll>(d_partials, blocks);
  if (threadIdx.x == 0) {
    *d_result = total;
    atomicExch(d_ticket, 0u);  // every launch leaves the ticket at 0 for the next one
  }
}

//! The fused variant: max over idx in [0, n) of f(idx), f's other work done on the way.
template <int BLOCK, class Real, class Fn>
__global__ void __launch_bounds__(BLOCK) max_for_each_kernel(std::size_t n, Fn f, Real* d_partials,
                                                             unsigned* d_ticket, Real* d_result) {
  const MaxOp<Real> op;
  Real acc = MaxOp<Real>::identity();
  const std::size_t stride = std::size_t(BLOCK) * gridDim.x;
  for (std::size_t idx = std::size_t(blockIdx.x) * BLOCK + threadIdx.x; idx < n; idx += stride)
    acc = op(acc, f(idx));
  fused_block_max<BLOCK>(acc, d_partials, d_ticket, d_result);
}

//! Launches max_for_each_kernel on `stream`: one block per kThreads indices, at most max_blocks
//! (the partials' capacity; policy: kBlocksPerSm x SMs), at least one. The caller checks the
//! launch (CASCADE_CUDA_CHECK_LAUNCH).
template <class Real, class Fn>
void launch_max_for_each(std::size_t n, const Fn& f, std::size_t max_blocks, Real* d_partials,
                         unsigned* d_ticket, Real* d_result, cudaStream_t stream) {
  constexpr int kThreads = policy::Fused::kThreads;
  const std::size_t want = (n + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(std::max<std::size_t>(1, std::min(want, max_blocks)));
  max_for_each_kernel<kThreads, Real><<<blocks, kThreads, 0, stream>>>(n, f, d_partials, d_ticket,
                                                                       d_result);
}

// ------------------------------------------------------------------ sources

//! W consecutive elements as loaded.
template <class Real, int W>
struct Packet {
  Real v[W];
};

//! The 16-byte vector of each element type.
template <class Real>
struct Vec16;
template <>
struct Vec16<float> {
  using type = float4;
  static constexpr int kWidth = 4;
  __device__ static void unpack(const float4& x, float* v) { v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w; }
};
template <>
struct Vec16<double> {
  using type = double2;
  static constexpr int kWidth = 2;
  __device__ static void unpack(const double2& x, double* v) { v[0] = x.x, v[1] = x.y; }
};

//! W elements at p, read-only path: W == 1 a scalar load, W == Vec16 width one 16-byte load
//! (p 16-byte aligned: the dispatch checks).
template <int W, class Real>
__device__ __forceinline__ Packet<Real, W> load_packet(const Real* p) {
  Packet<Real, W> out;
  if constexpr (W == 1) {
    out.v[0] = __ldg(p);
  } else {
    static_assert(W == Vec16<Real>::kWidth, "vector loads are 16 bytes");
    Vec16<Real>::unpack(__ldg(reinterpret_cast<const typename Vec16<Real>::type*>(p)), out.v);
  }
  return out;
}

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

//! The values a[i] of one array: f(idx) for the fused variant, packets for the column kernel.
template <class Real>
struct ArraySource {
  using value_type = Real;
  const Real* a;

  CASCADE_HD Real operator()(std::size_t i) const { return a[i]; }
  bool aligned() const { return aligned16(a); }
  template <int W>
  __device__ __forceinline__ Real max_at(std::size_t i) const {
    const auto p = load_packet<W>(a + i);
    Real x = p.v[0];
#pragma unroll
    for (int k = 1; k < W; ++k) x = MaxOp<Real>()(x, p.v[k]);
    return x;
  }
};

//! The CFL speed |u_i| inv_dx + |v_i| inv_dy of two arrays, never stored.
template <class Real>
struct CflSource {
  using value_type = Real;
  const Real* u;
  const Real* v;
  CflSpeed<Real> speed;

  CASCADE_HD Real operator()(std::size_t i) const { return speed(u[i], v[i]); }
  bool aligned() const { return aligned16(u) && aligned16(v); }
  template <int W>
  __device__ __forceinline__ Real max_at(std::size_t i) const {
    const auto pu = load_packet<W>(u + i);
    const auto pv = load_packet<W>(v + i);
    Real x = speed(pu.v[0], pv.v[0]);
#pragma unroll
    for (int k = 1; k < W; ++k) x = MaxOp<Real>()(x, speed(pu.v[k], pv.v[k]));
    return x;
  }
};

// ------------------------------------------------------------------ column variant

//! Column kernel. Thread x of block (bx, by) owns columns c0 .. c0+W-1, c0 = (bx*BLOCK + x)*W,
//! and walks rows [by*rows_per_chunk, (by+1)*rows_per_chunk) serially, ROW_UNROLL rows in
//! flight. Writes one partial per block at by*gridDim.x + bx. Requires n2 % W == 0.
template <int BLOCK, int W, int ROW_UNROLL, class Source>
__global__ void __launch_bounds__(BLOCK)
    max_columns_kernel(Source src, std::size_t n1, std::size_t n2, std::size_t rows_per_chunk,
                       typename Source::value_type* d_partials) {
  using Real = typename Source::value_type;
  const MaxOp<Real> op;
  const std::size_t c0 = (std::size_t(blockIdx.x) * BLOCK + threadIdx.x) * W;
  const std::size_t r_begin = std::size_t(blockIdx.y) * rows_per_chunk;
  const std::size_t r_end = std::min(r_begin + rows_per_chunk, n1);

  Real acc[ROW_UNROLL];
#pragma unroll
  for (int k = 0; k < ROW_UNROLL; ++k) acc[k] = MaxOp<Real>::identity();
  if (c0 < n2) {
    for (std::size_t r = r_begin; r < r_end; r += ROW_UNROLL) {
      Real x[ROW_UNROLL];
#pragma unroll
      for (int k = 0; k < ROW_UNROLL; ++k)  // no branch on the loads: all in flight
        x[k] = src.template max_at<W>((r + k < r_end ? r + k : r) * n2 + c0);
#pragma unroll
      for (int k = 0; k < ROW_UNROLL; ++k)
        if (r + k < r_end) acc[k] = op(acc[k], x[k]);
    }
  }
#pragma unroll
  for (int k = 1; k < ROW_UNROLL; ++k) acc[0] = op(acc[0], acc[k]);
  const Real block_value = block_max_tree<BLOCK>(acc[0]);
  if (threadIdx.x == 0) d_partials[std::size_t(blockIdx.y) * gridDim.x + blockIdx.x] = block_value;
}

//! The column variant's second pass: one block reduces `count` partials into *d_result.
template <int BLOCK, class Real>
__global__ void __launch_bounds__(BLOCK)
    max_partials_kernel(const Real* d_partials, unsigned count, Real* d_result) {
  const Real total = max_of_partials<BLOCK, policy::SecondPass::kUnroll>(d_partials, count);
  if (threadIdx.x == 0) *d_result = total;
}

}  // namespace reduction_kernels
}  // namespace cascade
