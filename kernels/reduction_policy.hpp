//! @file Launch policies of the reductions (kernels/reduction.cuh), as data.
//!
//! Provenance. These are design-time choices, not yet tuned on hardware; replace the notes with
//! measured rows from `cascade bench reduction` (CUB style: "// tpb_256.unroll_4  3050 GB/s ...")
//! when the numbers change. The reasoning behind the starting points (H100 SXM, 132 SMs,
//! ~3.35 TB/s HBM3, ~50 MB L2):
//!  - Bytes in flight. Saturating HBM needs roughly bandwidth x latency ~ 3.3 TB/s x ~0.8 us
//!    ~ 2.6 MB outstanding, ~20 KB per SM. 256 threads x 4 independent 16-byte loads = 16 KB per
//!    block; with several blocks resident per SM this is a comfortable margin, while keeping
//!    registers low enough (< 64/thread) for >= 4 blocks of 256 per SM.
//!  - One wave. The flat kernel is a grid-stride loop over exactly (resident blocks) =
//!    SMs x occupancy blocks (cudaOccupancyMaxActiveBlocksPerMultiprocessor), or fewer when the
//!    input is small (every thread then gets one unrolled iteration). More blocks only add
//!    partials; fewer leave bandwidth unused.
//!  - Columns. The column kernel's row chunks are chosen so that (column blocks x chunks) is
//!    about one wave too, but never fewer than kMinRowsPerChunk rows per chunk (below that the
//!    block reduction costs as much as the loads).
//!  - Float and double use the same numbers: both move 16 bytes per vector load.
#pragma once

namespace cascade::reduction_policy {

//! Flat (bandwidth-bound) kernel: grid-stride, 16-byte vector loads, kUnroll accumulators.
struct Flat {
  static constexpr int kThreads = 256;  //!< threads per block (multiple of 32, power of two)
  static constexpr int kUnroll = 4;     //!< independent 16-byte loads (accumulators) per thread
  static constexpr int kWaves = 1;      //!< grid = kWaves x SMs x occupancy (at most)
};

//! Column kernel: one thread per column (or per 16-byte group of adjacent columns), serial over
//! the rows of its chunk, kRowUnroll rows in flight per thread.
struct Columns {
  static constexpr int kThreads = 256;        //!< threads per block (power of two, >= 64)
  static constexpr int kRowUnroll = 4;        //!< independent row loads per thread
  static constexpr int kMinRowsPerChunk = 4;  //!< automatic chunking never goes below this
  static constexpr int kWaves = 1;            //!< automatic chunks target kWaves x SMs x occupancy blocks
  static constexpr int kMaxChunks = 65535;    //!< gridDim.y limit
};

//! Single-block finalize (two-pass combine) and the fused last block's pass over the partials.
struct Finalize {
  static constexpr int kThreads = 256;  //!< partials are at most a few thousand values
  static constexpr int kUnroll = 4;
};

}  // namespace cascade::reduction_policy
