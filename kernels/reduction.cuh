//! @file Reduction kernels: column kernel, vectorised grid-stride kernel, single-block finalize,
//! and the read-only reference kernel of the benchmark. Only __global__ entry points and
//! __device__ helpers; sizing, scratch and launches live in src/reduction_cuda.cu.
//!
//! Every kernel is generic over
//!   - the element type Real (float, double),
//!   - the operation Op (MaxOp, MinOp, SumOp: kernels/reduction_ops.cuh),
//!   - the Source of the reduced value: OneArray{a, f} reduces f(a[i]), TwoArrays{a, b, f}
//!     reduces f(a[i], b[i]) (the CFL speed from u and v, never materialised).
//!
//! Completion of a multi-block launch (finish_block), chosen at compile time by FUSED:
//!   - one block:  the block writes the result itself (single-block path, no second pass);
//!   - FUSED:      each block writes its partial, then takes a ticket (threadfence + atomicAdd);
//!                 the block that draws the last ticket reduces all partials and writes the
//!                 result, and resets the ticket to 0 for the next launch ("last block
//!                 finishes", CUDA sample threadFenceReduction). One launch instead of two.
//!   - otherwise:  each block writes its partial; the host either launches finalize_kernel
//!                 (one block) or copies the partials back and combines them itself.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/reduction_ops.cuh"

namespace cascade {
namespace reduction_kernels {

// ------------------------------------------------------------------ loads

//! The 16-byte vector of each element type.
template <class Real>
struct Vec16;
template <>
struct Vec16<float> {
  using type = float4;
  static constexpr int kWidth = 4;
};
template <>
struct Vec16<double> {
  using type = double2;
  static constexpr int kWidth = 2;
};

//! W consecutive elements as loaded (before the transform).
template <class Real, int W>
struct Packet {
  Real v[W];
};

__device__ __forceinline__ void unpack(const float4& x, float* v) {
  v[0] = x.x;
  v[1] = x.y;
  v[2] = x.z;
  v[3] = x.w;
}
__device__ __forceinline__ void unpack(const double2& x, double* v) {
  v[0] = x.x;
  v[1] = x.y;
}

//! Load W elements at p: W == 1 a scalar load, W == Vec16 width one 16-byte load (p must be
//! 16-byte aligned; the dispatch guarantees it). Read-only path (__ldg).
template <int W, class Real>
__device__ __forceinline__ Packet<Real, W> load_packet(const Real* p) {
  Packet<Real, W> out;
  if constexpr (W == 1) {
    out.v[0] = __ldg(p);
  } else {
    static_assert(W == Vec16<Real>::kWidth, "vector loads are 16 bytes");
    const auto x = __ldg(reinterpret_cast<const typename Vec16<Real>::type*>(p));
    unpack(x, out.v);
  }
  return out;
}

// ------------------------------------------------------------------ sources

//! Reduces f(a[i]).
template <class Real, class Transform>
struct OneArray {
  using value_type = Real;
  const Real* a;
  Transform f;

  template <int W>
  struct Raw {
    Packet<Real, W> a;
  };
  template <int W>
  __device__ __forceinline__ Raw<W> load(std::size_t i) const {
    return Raw<W>{load_packet<W>(a + i)};
  }
  template <int W, class Op>
  __device__ __forceinline__ Real fold(const Raw<W>& r, Op op) const {
    Real x = f(r.a.v[0]);
#pragma unroll
    for (int k = 1; k < W; ++k) x = op(x, f(r.a.v[k]));
    return x;
  }
};

//! Reduces f(a[i], b[i]) (e.g. CflSpeed of u and v).
template <class Real, class Transform>
struct TwoArrays {
  using value_type = Real;
  const Real* a;
  const Real* b;
  Transform f;

  template <int W>
  struct Raw {
    Packet<Real, W> a;
    Packet<Real, W> b;
  };
  template <int W>
  __device__ __forceinline__ Raw<W> load(std::size_t i) const {
    return Raw<W>{load_packet<W>(a + i), load_packet<W>(b + i)};
  }
  template <int W, class Op>
  __device__ __forceinline__ Real fold(const Raw<W>& r, Op op) const {
    Real x = f(r.a.v[0], r.b.v[0]);
#pragma unroll
    for (int k = 1; k < W; ++k) x = op(x, f(r.a.v[k], r.b.v[k]));
    return x;
  }
};

// ------------------------------------------------------------------ warp and block reductions

//! Butterfly-free shuffle-down tree over a full warp; the result is valid in lane 0.
template <class Real, class Op>
__device__ __forceinline__ Real warp_reduce(Real v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

//! Block reduction by warp shuffles: each warp reduces to lane 0, warp 0 reduces the warp
//! values. Valid in thread 0. Callers that use it twice in one kernel separate the two calls
//! by a __syncthreads() (the warp-value array is reused).
template <int BLOCK, class Real, class Op>
__device__ __forceinline__ Real block_reduce_shuffle(Real v, Op op) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "block size must be a multiple of 32, <= 1024");
  constexpr int kWarps = BLOCK / 32;
  __shared__ Real warp_values[kWarps];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  v = warp_reduce(v, op);
  if (lane == 0) warp_values[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? warp_values[lane] : Op::identity();
    v = warp_reduce(v, op);
  }
  return v;
}

//! Block reduction as on the design card: a shared-memory tree down to 64 values, then warp
//! shuffles for the last 32 (no __syncthreads inside one warp). Valid in thread 0.
template <int BLOCK, class Real, class Op>
__device__ __forceinline__ Real block_reduce_tree(Real v, Op op) {
  static_assert(BLOCK >= 64 && (BLOCK & (BLOCK - 1)) == 0, "tree needs a power-of-two block >= 64");
  __shared__ Real s[BLOCK];
  const int t = threadIdx.x;
  s[t] = v;
  __syncthreads();
#pragma unroll
  for (int half = BLOCK / 2; half > 32; half >>= 1) {
    if (t < half) s[t] = op(s[t], s[t + half]);
    __syncthreads();
  }
  if (t < 32) {
    v = op(s[t], s[t + 32]);
    v = warp_reduce(v, op);
  }
  return v;
}

//! Reduce `count` partials with one block (UNROLL loads in flight per thread). The partials were
//! written by other blocks of this launch (fused path) or by an earlier kernel: __ldcg reads
//! them at L2, the point of coherence, never from a possibly stale L1 line.
template <int BLOCK, int UNROLL, class Real, class Op>
__device__ __forceinline__ Real reduce_partials_in_block(const Real* d_partials, unsigned count,
                                                         Op op) {
  Real acc[UNROLL];
#pragma unroll
  for (int k = 0; k < UNROLL; ++k) acc[k] = Op::identity();
  for (unsigned base = threadIdx.x; base < count; base += unsigned(UNROLL) * BLOCK) {
    Real x[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
      const unsigned i = base + unsigned(k) * BLOCK;
      x[k] = __ldcg(d_partials + (i < count ? i : base));  // no branch: all in flight
      if (i >= count) x[k] = Op::identity();
    }
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) acc[k] = op(acc[k], x[k]);
  }
#pragma unroll
  for (int k = 1; k < UNROLL; ++k) acc[0] = op(acc[0], acc[k]);
  return block_reduce_shuffle<BLOCK>(acc[0], op);
}

//! Completion of one block whose reduced value is `block_value` (valid in thread 0).
//! d_result may be null only when !FUSED (host combine): the single block then writes
//! d_partials[0]. See the file comment for the three cases.
template <int BLOCK, int FINAL_UNROLL, bool FUSED, class Real, class Op>
__device__ __forceinline__ void finish_block(Real block_value, unsigned block_index,
                                             unsigned num_blocks, Op op, Real* d_partials,
                                             unsigned* d_ticket, Real* d_result) {
  if (num_blocks == 1) {  // single-block path: this block has seen every element
    if (threadIdx.x == 0) *(d_result != nullptr ? d_result : d_partials) = block_value;
    return;
  }
  if constexpr (!FUSED) {
    if (threadIdx.x == 0) d_partials[block_index] = block_value;
  } else {
    __shared__ bool is_last;
    if (threadIdx.x == 0) {
      d_partials[block_index] = block_value;
      __threadfence();  // release: the partial is visible device-wide before the ticket is taken
      const unsigned ticket = atomicAdd(d_ticket, 1u);
      is_last = ticket == num_blocks - 1;
    }
    __syncthreads();  // also separates the two uses of block_reduce_shuffle's shared array
    if (!is_last) return;
    __threadfence();  // acquire: partial reads are ordered after observing the last ticket
    const Real total = reduce_partials_in_block<BLOCK, FINAL_UNROLL>(d_partials, num_blocks, op);
    if (threadIdx.x == 0) {
      *d_result = total;
      atomicExch(d_ticket, 0u);  // every launch leaves the ticket at 0 for the next one
    }
  }
}

// ------------------------------------------------------------------ flat (vectorised) kernel

//! How a flat range of n elements is cut for 16-byte loads. When the sources share their
//! offset modulo 16 bytes: `head` scalar elements up to the first 16-byte boundary (< W),
//! `nvec` vectors of W elements, `tail` scalar elements after them (< W); scalar_n = 0.
//! Otherwise (sources misaligned relative to each other): scalar_n = n, all others 0.
struct FlatRange {
  std::size_t head;
  std::size_t nvec;
  std::size_t tail;
  std::size_t scalar_n;
};

//! Accumulate `units` units of W elements starting at element `first`, grid-strided: unit u is
//! read by thread u mod stride. UNROLL loads are issued before any is used, so each thread keeps
//! UNROLL x 16 bytes in flight and the loop ends with no serial remainder. The loads are not
//! branched on: an out-of-range slot re-reads the unit `base` (valid, cached) and is not folded.
template <int W, int UNROLL, class Source, class Op, class Real>
__device__ __forceinline__ void accumulate_strided(const Source& src, Op op, std::size_t first,
                                                   std::size_t units, std::size_t tid,
                                                   std::size_t stride, Real (&acc)[UNROLL]) {
  using Raw = typename Source::template Raw<W>;
  for (std::size_t base = tid; base < units; base += std::size_t(UNROLL) * stride) {
    Raw raw[UNROLL];
    bool ok[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
      const std::size_t u = base + std::size_t(k) * stride;
      ok[k] = u < units;
      raw[k] = src.template load<W>(first + (ok[k] ? u : base) * W);  // no branch: all in flight
    }
#pragma unroll
    for (int k = 0; k < UNROLL; ++k)
      if (ok[k]) acc[k] = op(acc[k], src.template fold<W>(raw[k], op));
  }
}

//! Bandwidth-bound reduction: grid-stride over 16-byte vectors with UNROLL accumulators,
//! scalar head/tail, warp-shuffle block reduction, then finish_block.
template <int BLOCK, int UNROLL, int FINAL_UNROLL, bool FUSED, class Source, class Op>
__global__ void __launch_bounds__(BLOCK)
    reduce_flat_kernel(Source src, Op op, FlatRange range,
                       typename Source::value_type* d_partials, unsigned* d_ticket,
                       typename Source::value_type* d_result) {
  using Real = typename Source::value_type;
  constexpr int W = Vec16<Real>::kWidth;
  const std::size_t tid = std::size_t(blockIdx.x) * BLOCK + threadIdx.x;
  const std::size_t stride = std::size_t(gridDim.x) * BLOCK;

  Real acc[UNROLL];
#pragma unroll
  for (int k = 0; k < UNROLL; ++k) acc[k] = Op::identity();

  // Head and tail (< W elements each) are loaded before the main loop and used after it, so
  // their latency overlaps the vector loads instead of adding a round trip.
  using Raw1 = typename Source::template Raw<1>;
  const std::size_t tail_first = range.head + range.nvec * W;
  const bool has_head = tid < range.head;
  const bool has_tail = tid < range.tail;
  Raw1 head_raw{}, tail_raw{};
  if (has_head) head_raw = src.template load<1>(tid);
  if (has_tail) tail_raw = src.template load<1>(tail_first + tid);

  accumulate_strided<1, UNROLL>(src, op, 0, range.scalar_n, tid, stride, acc);  // fallback only
  accumulate_strided<W, UNROLL>(src, op, range.head, range.nvec, tid, stride, acc);

  if (has_head) acc[0] = op(acc[0], src.template fold<1>(head_raw, op));
  if (has_tail) acc[0] = op(acc[0], src.template fold<1>(tail_raw, op));
#pragma unroll
  for (int k = 1; k < UNROLL; ++k) acc[0] = op(acc[0], acc[k]);

  const Real block_value = block_reduce_shuffle<BLOCK>(acc[0], op);
  finish_block<BLOCK, FINAL_UNROLL, FUSED>(block_value, blockIdx.x, gridDim.x, op, d_partials,
                                           d_ticket, d_result);
}

// ------------------------------------------------------------------ column kernel

//! Column reduction of an n1 x n2 row-major array (element (r, c) at r*n2 + c). Thread x of
//! block (bx, by) owns columns c0 .. c0+W-1, c0 = (bx*BLOCK + x)*W (W adjacent columns read
//! by one 16-byte load, or W = 1), and walks the rows of chunk by serially, ROW_UNROLL rows in
//! flight: a warp reads 32*W consecutive elements of one row per load (coalesced). Its value
//! stays in registers; the block then reduces in shared memory (tree + last-warp shuffles)
//! and finish_block writes one partial per block (partial index by*gridDim.x + bx).
//! Requires n2 % W == 0 and a 16-byte aligned source when W > 1 (the dispatch checks).
template <int BLOCK, int W, int ROW_UNROLL, int FINAL_UNROLL, bool FUSED, class Source, class Op>
__global__ void __launch_bounds__(BLOCK)
    reduce_columns_kernel(Source src, Op op, std::size_t n1, std::size_t n2,
                          std::size_t rows_per_chunk, typename Source::value_type* d_partials,
                          unsigned* d_ticket, typename Source::value_type* d_result) {
  using Real = typename Source::value_type;
  using Raw = typename Source::template Raw<W>;
  const std::size_t c0 = (std::size_t(blockIdx.x) * BLOCK + threadIdx.x) * W;
  const std::size_t r_begin = std::size_t(blockIdx.y) * rows_per_chunk;
  const std::size_t r_end = r_begin + rows_per_chunk < n1 ? r_begin + rows_per_chunk : n1;

  Real acc[ROW_UNROLL];
#pragma unroll
  for (int k = 0; k < ROW_UNROLL; ++k) acc[k] = Op::identity();
  if (c0 < n2) {
    for (std::size_t r = r_begin; r < r_end; r += ROW_UNROLL) {
      Raw raw[ROW_UNROLL];
      bool ok[ROW_UNROLL];
#pragma unroll
      for (int k = 0; k < ROW_UNROLL; ++k) {
        ok[k] = r + k < r_end;
        raw[k] = src.template load<W>((ok[k] ? r + k : r) * n2 + c0);  // no branch: all in flight
      }
#pragma unroll
      for (int k = 0; k < ROW_UNROLL; ++k)
        if (ok[k]) acc[k] = op(acc[k], src.template fold<W>(raw[k], op));
    }
  }
#pragma unroll
  for (int k = 1; k < ROW_UNROLL; ++k) acc[0] = op(acc[0], acc[k]);

  const Real block_value = block_reduce_tree<BLOCK>(acc[0], op);
  finish_block<BLOCK, FINAL_UNROLL, FUSED>(block_value, blockIdx.y * gridDim.x + blockIdx.x,
                                           gridDim.x * gridDim.y, op, d_partials, d_ticket,
                                           d_result);
}

// ------------------------------------------------------------------ second pass

//! Two-pass combine: one block reduces `count` partials and writes the result.
template <int BLOCK, int UNROLL, class Real, class Op>
__global__ void __launch_bounds__(BLOCK)
    finalize_kernel(const Real* d_partials, unsigned count, Op op, Real* d_result) {
  const Real total = reduce_partials_in_block<BLOCK, UNROLL>(d_partials, count, op);
  if (threadIdx.x == 0) *d_result = total;
}

// ------------------------------------------------------------------ benchmark helpers

//! Read-only reference: reads nvec 16-byte vectors of d_a (aligned) exactly like
//! reduce_flat_kernel's main loop and writes only if an element equals `sentinel` (a value the
//! data never holds), so the loads cannot be optimised away and nothing is written.
template <int BLOCK, int UNROLL, class Real>
__global__ void __launch_bounds__(BLOCK)
    read_reference_kernel(const Real* d_a, std::size_t nvec, Real sentinel, Real* d_sink) {
  constexpr int W = Vec16<Real>::kWidth;
  const std::size_t tid = std::size_t(blockIdx.x) * BLOCK + threadIdx.x;
  const std::size_t stride = std::size_t(gridDim.x) * BLOCK;
  for (std::size_t base = tid; base < nvec; base += std::size_t(UNROLL) * stride) {
    Packet<Real, W> p[UNROLL];
    bool ok[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
      const std::size_t u = base + std::size_t(k) * stride;
      ok[k] = u < nvec;
      p[k] = load_packet<W>(d_a + (ok[k] ? u : base) * W);
    }
#pragma unroll
    for (int k = 0; k < UNROLL; ++k)
#pragma unroll
      for (int j = 0; j < W; ++j)
        if (ok[k] && p[k].v[j] == sentinel) *d_sink = p[k].v[j];
  }
}

//! splitmix64: a stateless hash, so element i gets the same value on any launch shape.
__device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

//! Benchmark data: d_a[i] uniform in [lo, hi) from hash(seed, i).
template <class Real>
__global__ void fill_uniform_kernel(Real* d_a, std::size_t n, std::uint64_t seed, double lo,
                                    double hi) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double u = double(splitmix64(seed * 0x100000001B3ull + i) >> 11) * 0x1.0p-53;
    d_a[i] = static_cast<Real>(lo + (hi - lo) * u);
  }
}

}  // namespace reduction_kernels
}  // namespace cascade
