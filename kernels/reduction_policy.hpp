//! @file Launch policies of the cascaded max-reduction (kernels/reduction.cuh), as data, with
//! the measurements they stand on. Each setting is the one measured; none was swept against
//! others. When `cascade bench reduction` (or `cascade bench step` for the fused variant) is run
//! again on new hardware or with a changed setting, replace the row: GPU, date, command, result.
#pragma once

namespace cascade::reduction_policy {

//! The fused variant (max_for_each_kernel, and the row kernel's fused_block_max): the solver's
//! CFL maximum, inside the kernel that forms the products.
//!   tpb_256.bps_16.final_unroll_4   NVIDIA H100 80GB, 2026-11-23, `cascade bench step
//!                                   --repeats 30`: the maximum and the wait for it add
//!                                   -0.2..1.9% to a step, 1024^2 .. 32768^2 (docs/performance.md)
struct Fused {
  static constexpr int kThreads = 256;      //!< threads a block
  static constexpr int kBlocksPerSm = 16;   //!< blocks at most, a multiprocessor (the partials' capacity)
  static constexpr int kFinalUnroll = 4;    //!< partials in flight a thread of the last block
};

//! The column variant (max_columns_kernel): a thread per 16-byte group of adjacent columns
//! (one column where the width or the alignment does not allow it), row chunks over gridDim.y.
//!   tpb_256.rows_4.16B.auto_chunks  NVIDIA H200, 2026-11-22, `cascade bench reduction`
//!                                   (L2 flushed, median of 20), % of a read-only kernel:
//!                                   91% 4096^2 float, 98% 16384^2 float, 93% 4096^2 double,
//!                                   87-98% 16384^2 double
//!   tpb_256.rows_4.1_column.1_chunk 4-12% (the card's literal kernel, one thread a column down
//!                                   every row: too few loads in flight), hence the chunks and
//!                                   the 16-byte groups
struct Columns {
  static constexpr int kThreads = 256;        //!< threads a block (power of two, >= 64: the tree)
  static constexpr int kRowUnroll = 4;        //!< rows in flight a thread
  static constexpr int kMinRowsPerChunk = 4;  //!< automatic chunks never hold fewer rows
  static constexpr int kWaves = 1;            //!< chunks target kWaves x SMs x occupancy blocks
  static constexpr int kMaxChunks = 65535;    //!< gridDim.y's limit
};

//! The column variant's second pass (max_partials_kernel): one block over at most a few
//! thousand partials; measured within the column rows above.
struct SecondPass {
  static constexpr int kThreads = 256;
  static constexpr int kUnroll = 4;
};

}  // namespace cascade::reduction_policy
