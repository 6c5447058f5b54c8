//! @file RowKernelEval: Basdevant's evaluation row by row (kernels/row_fft.cuh) between the
//! pruned transforms' passes over the kept columns.
#pragma once

#include <cuda_runtime.h>
#include <cuda/ptx>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <string>
#include <vector>

#include "cascade/error.hpp"
#include "kernels/reduction.cuh"
#include "kernels/row_fft.cuh"
#include "backends/cuda/pruned_eval.cuh"
#include "backends/cuda/chained.cuh"
#include "backends/cuda/cuda_check.hpp"

namespace cascade {
namespace cuda_launch {

//! Threads a row of the row kernel's transform of 2^m points in stages of radix 2^rb: one a
//! butterfly (a sixteenth of the points, or a quarter), at least one, at most the block's.
__host__ __device__ constexpr int row_threads(int threads, int m, int rb = 4) {
  return ((1 << m) >> rb) < 1 ? 1 : ((1 << m) >> rb) > threads ? threads : ((1 << m) >> rb);
}

//! Blocks a multiprocessor keeps at once, which bounds the registers a thread: 512 threads in
//! all (<= 128 registers), but six blocks of 128 for short rows in single precision (<= 80;
//! with the column kernel's three blocks, 128² × 1024 went from 536,000 to 569,000
//! member-steps/s and 256² × 256 from 122,500 to 128,500, H100), and in single precision 768
//! threads for rows of 4096 points (<= 85 registers: the kernel takes 80, no spills) and 1024 for
//! rows of 8192 (<= 64: 88 bytes of spills a thread), where 512 threads left the multiprocessor
//! waiting on its loads (H100: 4096^2 2.29 -> 2.18 ms a step, 8192^2 11.5 -> 11.0).
template <int THREADS, bool kGrouped, class Real, int M = 0>
constexpr int row_blocks_per_sm() {
  if (kGrouped && THREADS == 128 && sizeof(Real) == 4) return 6;
  if (!kGrouped && sizeof(Real) == 4 && M == 12) return 3;
  if (!kGrouped && sizeof(Real) == 4 && M == 13) return 2;
  return THREADS <= 512 ? 512 / THREADS : 1;
}

//! Columns a thread of the row kernel loads before placing them (RowPhases::flight): two
//! where four spill (rows of 1024 to 8192 points in double, 8192 in single, whose blocks bound
//! them to 128 and 64 registers: `ptxas -v`, sm_90, 112 and 132 bytes of spills a thread with
//! four, at most 8 and 88 with two), four elsewhere. H100, a step: double 1024^2 0.253 -> 0.246
//! ms, 2048^2 0.948 -> 0.938, 4096^2 and 8192^2 even; single 8192^2 11.0 -> 10.8 (single 4096^2
//! with two: 2.12 -> 2.15, not taken). It applies where the load is a phase of its own: a
//! folded load (folds_row_load) reads each butterfly's points instead.
template <bool kGrouped, class Real, int M>
constexpr int row_loads_in_flight() {
  return !kGrouped && M >= 10 && (sizeof(Real) == 8 || M == 13) ? 2 : 4;
}

//! Whether the row kernel of rows of 2^m points (m > 0: a constant length, one part; `staged`:
//! RowStaging's) folds its load into the first inverse stage (RowPhases::fold): one phase, one
//! pass over shared memory and one barrier fewer a row, and no zeros written for the removed
//! columns. Where it measured faster: rows of 256 to 1024 points, single precision's 2048, and
//! staged rows. H200, one device call, three rounds, ms a step (launched by the host, or on the
//! device), main against every constant length folded: staged, double 4096^2 2.622-2.659 ->
//! 2.569-2.575 (device 2.619-2.622 -> 2.556-2.560), 8192^2 14.34-14.37 -> 13.90-13.96, single
//! 8192^2 8.604-8.614 -> 8.442-8.466; single 2048^2 on the device 0.4622-0.4625 -> 0.4572-0.4582;
//! 512^2 in double 0.0759-0.0761 -> 0.0749-0.0752, 256^2 x 256 in double 166,300-168,000 ->
//! 171,200-173,300 member-steps/s, 512^2 x 64 +2%; 1024^2 and 256^2 even. Not folded where it
//! lost: 128^2 (device 0.0363 -> 0.0381 in double, 0.0327 -> 0.0343 in single), double
//! precision's rows of 2048 read from global memory (device 0.6241-0.6256 -> 0.6284-0.6288; 24
//! bytes of spills, ptxas), single precision's 4096 (1.7432-1.7449 -> 1.7532-1.7537); nor
//! double precision's longer rows unstaged (compute capability 8.0), which spilled as 2048's.
template <class Real>
constexpr bool folds_row_load(int m, bool staged) {
  return m >= 8 && (staged || m <= 10 || (std::is_same_v<Real, float> && m == 11));
}

//! Whether the row kernel of rows of 2^m points (m > 0: a constant length, one part) folds its
//! store into the last forward stage (RowPhases::fold_store): one phase, one pass over shared
//! memory and one barrier fewer a row. H200, one device call each, three rounds, ms a step
//! launched by the host (on the device), the build before against the fold:
//! - where that stage's radix is below the others' (a thread the pair of its butterflies: rows
//!   of 128 points, 1024, 2048 and 8192): double 1024^2 0.252-0.256 (0.2263-0.2271) ->
//!   0.241-0.244 (0.2188-0.2191), 2048^2 (0.6237-0.6245) -> (0.6124-0.6126), 8192^2
//!   13.77-13.80 -> 13.49-13.50; single 1024^2 (0.1665-0.1675) -> (0.1645-0.1649), 2048^2
//!   (0.4504-0.4522) -> (0.4454-0.4456), 8192^2 8.238-8.243 -> 8.010-8.024; 128^2 x 1024 in
//!   single 998,000-1,006,000 -> 1,050,000-1,062,000 member-steps/s; the rest even;
//! - where it has their radix (a butterfly a thread, the partners exchanged by shuffles: rows of
//!   512 and 4096 points): 4096^2 in double 2.560-2.567 (2.5455-2.5485) -> 2.525-2.547
//!   (2.5128-2.5145), in single 1.786-1.805 (1.7777-1.7820) -> 1.735-1.739 (1.7193-1.7226),
//!   512^2 x 64 in double 34,980-35,260 -> 35,650-35,840 member-steps/s; the rows of 256 points
//!   lost and keep the store apart (256^2 on the device 0.0403-0.0408 -> 0.0410-0.0411 ms in
//!   single, 0.0446-0.0449 -> 0.0448-0.0450 in double, 256^2 x 256 in double 0.4% fewer
//!   member-steps/s).
constexpr bool folds_row_store(int m, int rb) {
  return m > 0 && m != 8 && row_fft::stages_before_last(m, rb) > 0;
}

//! phase(0), phase(1), ... of a row: `phases` of them, or for rows of a constant length (M > 0)
//! RowPhases::count of one part, a constant, the loop unrolled.
template <int M, int RB, bool kFold, bool kFoldStore, class Phase>
__device__ inline void run_row_phases(const Phase& phase, int phases) {
  if constexpr (M > 0) {
    constexpr int kPhases = row_fft::part_phases_of(M, RB, kFold, kFoldStore);
#pragma unroll
    for (int p = 0; p < kPhases; ++p) phase(p);
  } else {
    for (int p = 0; p < phases; ++p) phase(p);
  }
}

//! A row's kept columns of both fields copied into shared memory ahead of the row (kStaged in
//! row_products_kernel): the block's thread 0 starts the copies of the next row (two bulk
//! copies, cp.async.bulk, compute capability 9.0) once the load phase has read the staged row,
//! and they complete on an mbarrier while the row transforms; the next load phase reads shared
//! memory, not global memory. A field's copy starts at the 16-byte boundary at or before its
//! row (single precision's rows of nx/2 + 1 are 8-byte aligned) and ends at one past its kept
//! columns, rounded up to 16 bytes, inside the row.
template <class Real>
struct RowStaging {
  //! Bytes of shared memory a field's staged row takes.
  __host__ __device__ static constexpr std::size_t field_bytes(int kept) {
    return ((std::size_t(kept) + 1) * sizeof(Complex<Real>) + 15) / 16 * 16;
  }
  //! Bytes of shared memory the staging takes after the row's: both fields and the mbarrier.
  __host__ __device__ static constexpr std::size_t bytes(int kept) { return 2 * field_bytes(kept) + 16; }

  unsigned char* at;  //!< field a's staged row, then b's, then the mbarrier
  std::size_t field;  //!< field_bytes(kept)

  __device__ std::uint64_t* barrier() const { return reinterpret_cast<std::uint64_t*>(at + 2 * field); }
  //! Where column 0 of a row starting at `row` (global memory) is in the staged copy of field f.
  __device__ const Complex<Real>* column0(int f, const Complex<Real>* row) const {
    return reinterpret_cast<const Complex<Real>*>(at + f * field + (reinterpret_cast<std::uintptr_t>(row) & 15));
  }
  //! Thread 0, once: the mbarrier, for one arrival a phase (the thread's, with the bytes).
  __device__ void init() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cuda::ptx::mbarrier_init(barrier(), 1);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
#endif
  }
  //! Thread 0: start the copies of the kept columns of the rows ar, br, after every thread's
  //! reads of the last staged row (a barrier before it).
  __device__ void fetch(const Complex<Real>* ar, const Complex<Real>* br, int kept) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const Complex<Real>* rows[2] = {ar, br};
    std::uint32_t size[2];
    const unsigned char* from[2];
    for (int f = 0; f < 2; ++f) {
      const auto start = reinterpret_cast<std::uintptr_t>(rows[f]);
      from[f] = reinterpret_cast<const unsigned char*>(start & ~std::uintptr_t(15));
      size[f] = std::uint32_t(((start & 15) + std::size_t(kept) * sizeof(Complex<Real>) + 15) / 16 * 16);
    }
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);  // the reads before the async writes
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                         barrier(), size[0] + size[1]);
    for (int f = 0; f < 2; ++f)
      cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, at + f * field, from[f], size[f],
                               barrier());
#else
    __trap();  // launched only where can_stage holds
#endif
  }
  //! Every thread: wait for the copies of the phase `parity` (0 for a block's first row, then
  //! alternating).
  __device__ void wait(unsigned parity) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    while (!cuda::ptx::mbarrier_try_wait_parity(barrier(), parity)) {
    }
#endif
  }
};

//! Whether rows of 2^m points (one part) are staged (RowStaging): where a row takes 64 KiB of
//! shared memory or more (4096 points and 8192 in double, 8192 in single), so that a
//! multiprocessor holds one or two rows, whose loads had little to hide behind. H200, ms a step
//! launched by the host, without staging against with: double 4096^2 2.79-2.82 against
//! 2.69-2.72, 8192^2 14.9-15.2 against 14.4-14.7; single 8192^2 8.87-8.97 against 8.77-8.90.
//! Shorter rows gained nothing (single 4096^2 lost 0.3-0.6%, 2048^2 was even).
//! Whether the row kernels' stages take their radix-16 factors from the table's sections
//! (RowPhases::stage_table, row_fft::stage_factors): in single precision, whose butterflies load
//! w^4, w^8 and w^12 as well as w. The single 8192-point row kernel took 712 -> 642 us with them
//! (ncu, median of 8 launches; single 8192^2 6.83-6.86 -> 6.55-6.56 ms a step, H200, three rounds);
//! in double, whose butterflies load w alone and square it, that kernel took 1,050 us with them
//! against 1,020 without.
template <class Real>
constexpr bool row_stage_table() {
  return sizeof(Real) == sizeof(float);
}

template <class Real>
constexpr bool staged_rows(int m) {
  return m <= 13 && (sizeof(Complex<Real>) << m) >= (std::size_t(1) << 16);
}

//! kGrouped: rows of 16 THREADS points or fewer, a group of threads a row and several rows a
//! block at once, each in its own part of shared memory (RowKernelEval::rows_at_once); else a
//! row a block, the loops' stride the constant THREADS (a runtime stride, tried, cost 3-10% a
//! step from 1024^2 to 8192^2).
//! M > 0 (rows of 2^M points, grouped below 2^10, one part from 2^10 to 2^13): the row's
//! length, its kept columns and its phases are constants, so that the index arithmetic and the
//! dispatch between phases are compiled away (a small grid's step is one warp's chain of
//! instructions: docs/gpu-step.md; a large grid's row kernel is a thread's one butterfly a
//! phase, for which the same held: 1-4% a step from 1024^2 to 8192^2).
//! RB: log2 of the stages' radix (4, or 2 or 3 for grouped rows of a constant length).
//! kStaged (rows of one part, staged_rows(M)): the next row's kept columns copied into shared
//! memory after the row's, while the row transforms (RowStaging).
//! Launched chained (chained.cuh) in the step on the device (StepGraph); a staged kernel lets
//! the next one launch only at its end.
template <int THREADS, bool kGrouped, class Real, int M = 0, int RB = 4, bool kStaged = false>
__global__ void __launch_bounds__(THREADS, row_blocks_per_sm<THREADS, kGrouped, Real, M>())
    row_products_kernel(row_fft::RowPhases<Real> ph, Complex<Real>* a, Complex<Real>* b, int ny, int ld, bool cfl,
                        Real* d_partials, unsigned* d_ticket, Real* result) {
  extern __shared__ __align__(16) unsigned char row_smem[];
  wait_for_previous();
  // A staged kernel lets the next kernel of a chain launch at its end: let launch here, the
  // step on the device got slower (H200, 4096^2 double 2.77 ms unstaged, 2.95 staged and let
  // launch here, 2.68 staged and let launch at its end; 8192^2 15.45, 16.6, 14.93). Our reading:
  // the next kernel's blocks started on multiprocessors configured for the staged kernel's
  // shared memory, with L1 shrunk.
  if constexpr (!kStaged) let_next_launch();
  static_assert(M == 0 || kGrouped == (M < 10), "rows of a constant length below 1024 points are grouped");
  static_assert(RB == 4 || (M > 0 && kGrouped), "radix 4 and 8 are for grouped rows of a constant length");
  static_assert(!kStaged || (M > 0 && !kGrouped && staged_rows<Real>(M)), "staged rows are rows of one part, a block's");
  ph.flight = row_loads_in_flight<kGrouped, Real, M>();
  if constexpr (M > 0) {
    ph.n = 1 << M;
    ph.m = M;
    ph.kept = two_thirds_band(1 << M) + 1;
    ph.rb = RB;
  }
  constexpr bool kFold = folds_row_load<Real>(M, kStaged);
  constexpr bool kFoldStore = folds_row_store(M, RB);
  ph.fold = kFold;
  ph.fold_store = kFoldStore;
  ph.stage_table = row_stage_table<Real>();
  ph.spill += std::size_t(blockIdx.x) * std::size_t(ph.split() - 1) * (std::size_t(1) << ph.m);
  const MaxOp<Real> op;
  Real acc = MaxOp<Real>::identity();
  const int phases = ph.count();
  const auto row_of = [ld](Complex<Real>* f, int row) { return f + std::size_t(row) * std::size_t(ld); };
  if constexpr (kGrouped) {
    const int per = row_threads(THREADS, ph.m, RB), group = threadIdx.x / per, groups = THREADS / per;
    ph.s = reinterpret_cast<Complex<Real>*>(row_smem) + std::size_t(group) * row_fft::Padded::size(1 << ph.m);
    // Every group runs the same phases (barriers for all); a group past the last row idles.
    for (int first = blockIdx.x * groups; first < ny; first += gridDim.x * groups) {
      const int row = first + group;
      Complex<Real>* ar = row_of(a, row < ny ? row : 0);
      Complex<Real>* br = row_of(b, row < ny ? row : 0);
      const auto phase = [&](int p) {
        if (row < ny) acc = op(acc, ph.run(p, threadIdx.x % per, per, ar, br, ar, br));
        __syncthreads();
      };
      run_row_phases<M, RB, kFold, kFoldStore>(phase, phases);
    }
  } else {
    ph.s = reinterpret_cast<Complex<Real>*>(row_smem);
    if constexpr (kStaged) {
      const RowStaging<Real> staged{row_smem + sizeof(Complex<Real>) * row_fft::Padded::size(1 << M),
                                    RowStaging<Real>::field_bytes(ph.kept)};
      if (threadIdx.x == 0) {
        staged.init();
        staged.fetch(row_of(a, blockIdx.x), row_of(b, blockIdx.x), ph.kept);  // the grid has no block without a row
      }
      __syncthreads();
      unsigned parity = 0;
      for (int row = blockIdx.x; row < ny; row += gridDim.x, parity ^= 1) {
        Complex<Real>* ar = row_of(a, row);
        Complex<Real>* br = row_of(b, row);
        const Complex<Real>* ai = staged.column0(0, ar);
        const Complex<Real>* bi = staged.column0(1, br);
        const int next = row + gridDim.x;
        const auto phase = [&](int p) {
          if (p == 0) staged.wait(parity);
          acc = op(acc, ph.run(p, threadIdx.x, THREADS, ai, bi, ar, br));
          __syncthreads();
          if (p == 0 && threadIdx.x == 0 && next < ny) staged.fetch(row_of(a, next), row_of(b, next), ph.kept);
        };
        run_row_phases<M, RB, kFold, kFoldStore>(phase, phases);
      }
    } else {
      for (int row = blockIdx.x; row < ny; row += gridDim.x) {
        Complex<Real>* ar = row_of(a, row);
        Complex<Real>* br = row_of(b, row);
        const auto phase = [&](int p) {
          acc = op(acc, ph.run(p, threadIdx.x, THREADS, ar, br, ar, br));
          __syncthreads();
        };
        run_row_phases<M, RB, kFold, kFoldStore>(phase, phases);
      }
    }
  }
  if (!cfl) return;
  reduction_kernels::fused_block_max<THREADS>(acc, d_partials, d_ticket, result);
}

//! Rows of 2^(M + 1) points, each over a pair of blocks (a cluster of two, compute capability 9.0
//! and later; blockIdx.x: 2 pair + part), each block doing one part of 2^M points
//! (RowPhases::run_pair, its length and phases constants); the pairs loop over the rows, the
//! store reading the partner's part between two barriers of the pair. A kernel of its own: as a
//! parameter of row_products_kernel, with the part a member of RowPhases, the one-part kernels'
//! PTX changed and a step at 4096^2 in double lost 2.8%; apart, their PTX is as before (H200,
//! docs/performance.md). One block of 512 threads a multiprocessor (a part takes 139 KiB in
//! double). Launched as row_products_kernel is.
template <class Real, int M>
__global__ void __launch_bounds__(512, 1)
    row_pair_kernel(row_fft::RowPhases<Real> ph, Complex<Real>* a, Complex<Real>* b, int ny, int ld, bool cfl,
                    Real* d_partials, unsigned* d_ticket, Real* result) {
  extern __shared__ __align__(16) unsigned char row_smem[];
  wait_for_previous();
  let_next_launch();
  constexpr int kThreads = 512, kRb = 4;
  ph.n = 1 << (M + 1);
  ph.m = M;
  ph.kept = two_thirds_band(ph.n) + 1;
  ph.rb = kRb;
  ph.stage_table = row_stage_table<Real>();
  ph.s = reinterpret_cast<Complex<Real>*>(row_smem);
  int part = 0;
  const Complex<Real>* partner = nullptr;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const auto pair = cooperative_groups::this_cluster();
  part = int(pair.block_rank());
  partner = pair.map_shared_rank(ph.s, part ^ 1);
#endif
  const MaxOp<Real> op;
  Real acc = MaxOp<Real>::identity();
  // The barriers around the store are the pair's: the partner's part done before it is read,
  // and read before the next row's load overwrites it.
  constexpr int kPhases = row_fft::part_phases_of(M, kRb, false, false), kStore = kPhases - 1;
  for (int row = blockIdx.x >> 1; row < ny; row += gridDim.x >> 1) {
    Complex<Real>* ar = a + std::size_t(row) * std::size_t(ld);
    Complex<Real>* br = b + std::size_t(row) * std::size_t(ld);
#pragma unroll
    for (int p = 0; p < kPhases; ++p) {
      acc = op(acc, ph.run_pair(p, part, partner, threadIdx.x, kThreads, ar, br, ar, br));
      if (p >= kStore - 1) pair_barrier();
      else __syncthreads();
    }
  }
  if (!cfl) return;
  reduction_kernels::fused_block_max<kThreads>(acc, d_partials, d_ticket, result);
}

}  // namespace cuda_launch

//! A table in device memory, freed by the caller with cudaFree.
template <class Real>
Complex<Real>* device_table(const std::vector<Complex<Real>>& tw) {
  Complex<Real>* d = nullptr;
  CASCADE_CUDA_CHECK(cudaMalloc(&d, sizeof(Complex<Real>) * tw.size()));
  CASCADE_CUDA_CHECK(cudaMemcpy(d, tw.data(), sizeof(Complex<Real>) * tw.size(), cudaMemcpyHostToDevice));
  return d;
}
//! The table exp(2 pi i k / n), k < n, in device memory (the row and column kernels'), with the
//! radix-16 stages' sections after it where `sections` (row_fft::twiddle_table).
template <class Real>
Complex<Real>* device_twiddles(int n, bool sections = false) {
  return device_table(row_fft::twiddle_table<Real>(n, sections));
}

//! Where a kernel's CFL maximum goes: per-block partials, the last block's ticket, the result
//! (mapped pinned host memory), as the executor's for_each_max_async.
template <class Real>
struct MaxTarget {
  Real* partials;
  unsigned* ticket;
  Real* result;
};

//! The row kernel's twiddle table, spill area (rows longer than its transform in shared memory
//! go in parts), shared memory and grid; the column passes are the pruned transforms'.
template <class Real>
class RowKernelEval {
  using Cplx = Complex<Real>;

 public:
  //! The longest transform the row kernel does in shared memory: 2^13 points (139 KiB in
  //! double); longer rows go in parts (RowPhases), rows of 2^14 over pairs of blocks where they
  //! can (can_pair).
  static constexpr int kLog2Max = 13;
  //! log2 of the row kernel's transform for rows of nx points: nx's, or the largest part.
  static int log2_for(int nx) {
    int m = 0;
    while ((1 << m) < nx && m < 30) ++m;
    return std::min(m, kLog2Max);
  }
  //! Threads a block for rows of 2^m points (m = log2_for(nx)): 128 up to 512 points (a group of
  //! a sixteenth as many a row, several rows at once), then a sixteenth as many as the points.
  static int threads_for(int m) { return m <= 9 ? 128 : m == 10 ? 64 : m == 11 ? 128 : m == 12 ? 256 : 512; }
  //! Rows a block of `threads` (threads_for's, where not given) transforms at once.
  static int rows_at_once(int m, int threads = 0, int rb = 4) {
    const int t = threads ? threads : threads_for(m);
    return t / cuda_launch::row_threads(t, m, rb);
  }
  //! The shared memory a block needs for rows of nx points.
  static std::size_t shared_bytes(int nx) {
    const int m = log2_for(nx);
    return sizeof(Cplx) * std::size_t(rows_at_once(m)) * std::size_t(row_fft::Padded::size(1 << m));
  }

  //! Whether this build can stage rows (RowStaging) on the device `prop` describes: bulk copies
  //! and mbarriers (compute capability 9.0 and later), and the staged kernels compiled for them.
  static bool can_stage(const cudaDeviceProp& prop) {
    return cuda_launch::runs_sm90_code(cuda_launch::row_products_kernel<512, false, Real, 13, 4, true>, prop);
  }
  //! Whether this build can run rows of 2^14 points over pairs of blocks (clusters, compute
  //! capability 9.0 and later) on the device `prop` describes.
  static bool can_pair(const cudaDeviceProp& prop) {
    return cuda_launch::runs_sm90_code(kPairKernel, prop);
  }

  RowKernelEval() = default;
  RowKernelEval(const RowKernelEval&) = delete;
  RowKernelEval& operator=(const RowKernelEval&) = delete;
  ~RowKernelEval() {
    if (twiddles_) cudaFree(twiddles_);
    if (spill_) cudaFree(spill_);
  }

  //! The twiddle table exp(2 pi i k / nx), the shared memory and the grid: as many blocks as
  //! fit on the GPU at once (each loops over rows), no more than there are rows or `blocks_cap`.
  //! `ny`: the rows of every field (an ensemble's members' rows run on), of `members` fields.
  //! `stage` (can_stage): rows of one part are staged (RowStaging) where staged_rows says and
  //! the staging costs no block a multiprocessor. `pair` (can_pair): rows of 2^14 points go over
  //! pairs of blocks, a part each, not in two parts a block.
  void make(int nx, int ny, int sms, int blocks_cap, int members = 1, bool stage = false, bool pair = false) {
    nx_ = nx;
    ny_ = ny;
    log2_ = log2_for(nx);
    pair_ = pair && log2_ == kLog2Max && nx_ == 2 << log2_;
    twiddles_ = device_twiddles<Real>(nx_, cuda_launch::row_stage_table<Real>());
    // Short rows and few of them (a single run's small grid): narrow blocks (32 threads in
    // radix 16), fewer rows a block and more blocks, which hide each other's latency (256^2:
    // 128 blocks, not 32).
    narrow_ = log2_ <= 9 && ny_ < 4 * sms * rows_at_once(log2_);
    // One field's rows of a constant length: radix 4, a thread for each four points, so that
    // each thread's chain is shorter (H100, rk4, a step on the device, rows and columns both in
    // radix 4 against radix 16: 256^2 0.0530 against 0.0606 ms in double, 0.0499 against 0.0567
    // in single). An ensemble's rows keep radix 16, whose fewer phases won wherever measured
    // (256^2 x 256: 112,500 against 91,800 member-steps/s; 256^2 x 16 75,000 against 60,000;
    // with these rows alone in radix 4, 256^2 x 4 lost 8% and 128^2 x 64 in single 15%).
    // Rows of 512 points take radix 8, one field's or an ensemble's: three stages of 8 (the
    // last the pass in registers), as many as radix 16's (2, 16, 16) with shorter chains. H100,
    // double: 512² 0.098 ms a step against radix 4's 0.102; 512² × 16 members 20,500–20,700
    // against 20,000 member-steps/s with radix 16 (128² and 256² lost with radix 8).
    rb_ = log2_ == 9 ? 3 : members == 1 && narrow_ && log2_ >= 7 && log2_ <= 8 ? 2 : 4;
    // Narrow blocks: a row's threads (a quarter of its points in radix 4, an eighth in radix
    // 8), 32 at least.
    narrow_threads_ = rb_ != 4 ? std::max(32, std::min(128, (1 << log2_) >> rb_)) : 32;
    smem_ = sizeof(Cplx) * std::size_t(rows_at_once(log2_, narrow_ ? narrow_threads_ : 0, rb_)) *
            std::size_t(row_fft::Padded::size(1 << log2_));
    stage = stage && nx_ == 1 << log2_ && cuda_launch::staged_rows<Real>(log2_);
    switch (log2_) {
      case 4: case 5: case 6: case 7: case 8: case 9:
        if (!narrow_) size<128>(sms, blocks_cap, stage);
        else if (narrow_threads_ == 64) size<64>(sms, blocks_cap, stage);
        else if (narrow_threads_ == 128) size<128>(sms, blocks_cap, stage);
        else size<32>(sms, blocks_cap, stage);
        break;
      case 10: size<64>(sms, blocks_cap, stage); break;
      case 11: size<128>(sms, blocks_cap, stage); break;
      case 12: size<256>(sms, blocks_cap, stage); break;
      default: size<512>(sms, blocks_cap, stage); break;
    }
    const std::size_t split = std::size_t(nx_) >> log2_;
    if (split > 1 && !pair_) {  // each block's parts of a row but the last (RowPhases)
      const std::size_t bytes = sizeof(Cplx) * std::size_t(blocks_) * (split - 1) << log2_;
      if (cudaMalloc(&spill_, bytes) != cudaSuccess) {
        cudaGetLastError();
        throw RunError("out of GPU memory for the row kernel's spill area (" + std::to_string(bytes) + " bytes)");
      }
    }
  }

  //! Basdevant's evaluation between the spectra a, b of u and v (scaled for the inverse) and
  //! those of u v and v^2 - u^2, in place: the pruned inverse transforms' passes over the kept
  //! columns, the row kernel (the passes over the rows and the products, with the CFL maximum
  //! into `max` where `cfl`), and the forward transforms' passes over the kept columns; `after`
  //! runs between the kernel and the forward passes (the executor records the maximum's event).
  template <class After>
  void run(const PrunedEval<Real>& pruned, Cplx* a, Cplx* b, bool cfl, const CflSpeed<Real>& speed,
           const MaxTarget<Real>& max, bool chained, cudaStream_t stream, const After& after) const {
    pruned.columns_inverse(a, b);
    products(a, b, nx_ / 2 + 1, cfl, speed, max, chained, stream);
    after();
    pruned.columns_forward(a, b);
  }
  //! The row kernel alone: a, b hold every row's kept columns with y in physical space (the
  //! column passes' or the column kernel's, column_kernel_eval.cuh), rows of ld complex numbers
  //! (nx/2 + 1 between cuFFT's passes, ColumnKernelEval::ld() between the column kernel's), in
  //! place; `chained`: launched chained (chained.cuh), as in the step on the device.
  void products(Cplx* a, Cplx* b, int ld, bool cfl, const CflSpeed<Real>& speed, const MaxTarget<Real>& max,
                bool chained, cudaStream_t stream) const {
    const row_fft::RowPhases<Real> ph{nx_, log2_, two_thirds_band(nx_) + 1, nullptr, twiddles_, speed, spill_};
    switch (log2_) {
      case 4: case 5: case 6: case 7: case 8: case 9:
        if (!narrow_) launch<128>(ph, a, b, ld, cfl, max, chained, stream);
        else if (narrow_threads_ == 64) launch<64>(ph, a, b, ld, cfl, max, chained, stream);
        else if (narrow_threads_ == 128) launch<128>(ph, a, b, ld, cfl, max, chained, stream);
        else launch<32>(ph, a, b, ld, cfl, max, chained, stream);
        break;
      case 10: launch<64>(ph, a, b, ld, cfl, max, chained, stream); break;
      case 11: launch<128>(ph, a, b, ld, cfl, max, chained, stream); break;
      case 12: launch<256>(ph, a, b, ld, cfl, max, chained, stream); break;
      default: launch<512>(ph, a, b, ld, cfl, max, chained, stream); break;
    }
  }

 private:
  //! The row kernel for rows of 2^log2_ points in the blocks make() gives them: of a constant
  //! length from 2^7 to 2^9 (the grouped rows of small grids; radix 16: 32 threads where narrow,
  //! else 128; radix 4: a row's quarter of its points, 32 or 64; radix 8 at 2^9: 64 or 128) and
  //! from 2^10 to 2^13 (a row a block of threads_for's), else the length read at run time (rows
  //! of 16 to 64 points, and rows in parts). Only those are compiled.
  //! `staged`: the kernel with RowStaging (rows of one part, staged_rows).
  template <int THREADS>
  auto kernel_for(bool staged) const {
    using Kernel = decltype(&cuda_launch::row_products_kernel<THREADS, true, Real>);
    const bool whole = nx_ == 1 << log2_;  // one part
    const auto one_part = [staged](auto m) {
      constexpr int M = decltype(m)::value;
      if constexpr (cuda_launch::staged_rows<Real>(M))
        if (staged) return Kernel(cuda_launch::row_products_kernel<THREADS, false, Real, M, 4, true>);
      return Kernel(cuda_launch::row_products_kernel<THREADS, false, Real, M>);
    };
    if constexpr (THREADS >= 256) {
      if constexpr (THREADS == 256) if (log2_ == 12 && whole) return one_part(std::integral_constant<int, 12>{});
      if constexpr (THREADS == 512) {
        if (pair_) return Kernel(kPairKernel);
        if (log2_ == 13 && whole) return one_part(std::integral_constant<int, 13>{});
        if (log2_ == 13) return Kernel(cuda_launch::row_products_kernel<512, false, Real>);
      }
    } else {
      if (log2_ > 9) {
        if constexpr (THREADS == 64) if (log2_ == 10 && whole) return one_part(std::integral_constant<int, 10>{});
        if constexpr (THREADS == 128) if (log2_ == 11 && whole) return one_part(std::integral_constant<int, 11>{});
      } else if (rb_ == 3) {
        if constexpr (THREADS == 64) if (log2_ == 9) return Kernel(cuda_launch::row_products_kernel<64, true, Real, 9, 3>);
        if constexpr (THREADS == 128) if (log2_ == 9) return Kernel(cuda_launch::row_products_kernel<128, true, Real, 9, 3>);
      } else if (rb_ == 2) {
        if constexpr (THREADS == 32) if (log2_ == 7) return Kernel(cuda_launch::row_products_kernel<32, true, Real, 7, 2>);
        if constexpr (THREADS == 64) if (log2_ == 8) return Kernel(cuda_launch::row_products_kernel<64, true, Real, 8, 2>);
      } else {
        if constexpr (THREADS == 32 || THREADS == 128) {
          switch (log2_) {
            case 7: return Kernel(cuda_launch::row_products_kernel<THREADS, true, Real, 7>);
            case 8: return Kernel(cuda_launch::row_products_kernel<THREADS, true, Real, 8>);
            case 9: return Kernel(cuda_launch::row_products_kernel<THREADS, true, Real, 9>);
            default: break;
          }
        }
        if constexpr (THREADS == 32 || THREADS == 128)
          if (log2_ < 7) return Kernel(cuda_launch::row_products_kernel<THREADS, true, Real>);
      }
    }
    throw RunError("the row kernel has no blocks of " + std::to_string(THREADS) + " threads in radix " +
                   std::to_string(1 << rb_) + " for rows of " + std::to_string(nx_) + " points");
  }
  //! The grid, and staged_smem_ where `stage` and the staging costs no block a multiprocessor.
  template <int THREADS>
  void size(int sms, int blocks_cap, bool stage) {
    const auto blocks_per_sm = [&](bool staged, std::size_t smem) {
      auto* kernel = kernel_for<THREADS>(staged);
      int per_sm = 0;
      const cudaError_t set = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
      if (staged && set != cudaSuccess) {  // more than a block may take: not staged
        cudaGetLastError();
        return 0;
      }
      CASCADE_CUDA_CHECK(set);
      CASCADE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, smem));
      return per_sm;
    };
    const int per_sm = blocks_per_sm(false, smem_);
    staged_smem_ = 0;
    if (stage) {
      const std::size_t staged = smem_ + cuda_launch::RowStaging<Real>::bytes(two_thirds_band(nx_) + 1);
      if (blocks_per_sm(true, staged) >= std::max(per_sm, 1)) staged_smem_ = staged;
    }
    const int at_once = rows_at_once(log2_, THREADS, rb_), rows = (ny_ + at_once - 1) / at_once;  // blocks with work
    blocks_ = std::max(1, std::min({rows, std::max(per_sm, 1) * sms, blocks_cap}));
    if (pair_) {  // as many pairs as run at once (the pairs loop over the rows), a row each at least
      cudaLaunchConfig_t config{};
      cudaLaunchAttribute cluster{};
      cluster.id = cudaLaunchAttributeClusterDimension;
      cluster.val.clusterDim.x = 2;
      cluster.val.clusterDim.y = 1;
      cluster.val.clusterDim.z = 1;
      config.gridDim = dim3(unsigned(2 * sms));
      config.blockDim = dim3(THREADS);
      config.dynamicSmemBytes = smem_;
      config.attrs = &cluster;
      config.numAttrs = 1;
      int pairs = 0;
      CASCADE_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&pairs, kPairKernel, &config));
      blocks_ = 2 * std::max(1, std::min({ny_, pairs, blocks_cap / 2}));
    }
  }
  template <int THREADS>
  void launch(const row_fft::RowPhases<Real>& ph, Cplx* a, Cplx* b, int ld, bool cfl, const MaxTarget<Real>& max,
              bool chained, cudaStream_t stream) const {
    const bool staged = staged_smem_ != 0;
    cuda_launch::launch_clustered(chained, pair_ ? 2 : 1, kernel_for<THREADS>(staged), dim3(blocks_), dim3(THREADS),
                                  staged ? staged_smem_ : smem_, stream, ph, a, b, ny_, ld, cfl, max.partials,
                                  max.ticket, max.result);
    CASCADE_CUDA_CHECK_LAUNCH();
  }

  //! Rows of 2^14 points over a pair of blocks.
  static constexpr auto kPairKernel = &cuda_launch::row_pair_kernel<Real, kLog2Max>;

  int nx_ = 0, ny_ = 0, log2_ = 0;
  bool pair_ = false;    //!< rows of 2^14 points over pairs of blocks (make)
  bool narrow_ = false;  //!< blocks of a row's threads (32 at least) for short rows (make)
  int narrow_threads_ = 32;  //!< threads a narrow block (a row's: radix 4 and 8 take more)
  int rb_ = 4;               //!< log2 of the radix of the stages of rows of a constant length
  std::size_t smem_ = 0;
  std::size_t staged_smem_ = 0;  //!< the shared memory a block of staged rows: 0 where not staged (size)
  int blocks_ = 1;
  Cplx* twiddles_ = nullptr;
  Cplx* spill_ = nullptr;
};

}  // namespace cascade
