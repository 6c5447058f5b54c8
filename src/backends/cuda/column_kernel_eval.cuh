//! @file ColumnKernelEval: the passes over the kept columns with the spectral stage between
//! them (kernels/column_fft.cuh), which with the row kernel (row_kernel_eval.cuh) make Basdevant's
//! evaluation and stage without cuFFT (StepStrategy::RowsColumns).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>

#include "cascade/error.hpp"
#include "cascade/step_clock.hpp"
#include "kernels/column_fft.cuh"
#include "kernels/ns_stage.cuh"
#include "backends/cuda/chained.cuh"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/row_kernel_eval.cuh"

namespace cascade {
namespace cuda_launch {

//! How a column kernel is compiled, by precision (Real), a pair's tile or a block's (pair),
//! the columns' length 2^m (0: read at run time) and whether its pass takes the budget's sums
//! (sums): one table, read by the kernel at compile time and by the host (the tile's shared
//! memory) at run time. Each rule is what measured fastest; the measurements are H200, one
//! device call each, docs/performance.md.
struct ColumnShape {
  //! The tile's columns lie in shared memory swizzled (row_fft::Swizzled), not padded: double
  //! precision's pairs of 4096 and 8192 points, whose tile then takes 128 KiB where it took 136
  //! and leaves L1 a larger share of the multiprocessor's memory, and the quads of both
  //! precisions. Those pairs alone swizzled against main: a step at 4096^2 in double
  //! 2.693-2.696 -> 2.638-2.639 ms (the step on the device), 8192^2 14.537-14.540 ->
  //! 14.409-14.418 (launched by the host), the rest even. Every column kernel swizzled, 2048^2's
  //! pairs lost 4% and 128^2 x 1024 in single 3.6%. Single precision's quads swizzled and loaded
  //! through registers, no longer as copies into shared memory (cp.async) in a phase of their
  //! own as its pairs of 8192 points were: 8192^2 7.627-7.663 -> 7.452-7.477 ms a step (padded
  //! and through registers 7.500-7.548, swizzled and copied 7.600-7.622; H200, "Single
  //! precision's columns of 8192 points over four blocks").
  bool swizzled;
  //! The phases are folded (run_phases: each phase's number a constant), not run as a loop: all
  //! but double precision's pairs of 4096 points, which loop, as they did before the fold.
  //! Folded, the stage kernels of double precision's pairs of 4096 and 8192 points spilled 160
  //! and 208 bytes (ptxas), and the step took 2.90-2.92 ms at 4096^2 against 2.83-2.85 looping,
  //! 15.50-15.52 at 8192^2 against 15.27-15.35; 2048^2's pairs and every smaller kernel gain from
  //! the fold, and so do single precision's pairs, which do not spill folded (rows and columns
  //! 4096^2 2.00 against 2.07 ms, 8192^2 11.16 against 11.47). Double precision's quads, once
  //! their stage took no sums (sums_apart), folded: 8192^2 12.00 -> 11.35-11.40 ms a step;
  //! its pairs of 4096 points folded lost (2.50-2.51 -> 2.59; H200, "The budget's sums in a
  //! pass of their own").
  bool folded;
  //! What the stage reads at a mode is asked for early (StageOfColumns::ahead): one position
  //! ahead (ColumnTile::each_mode) without the budget's sums in every kernel, with them in
  //! single precision's pairs (double precision's of 4096 points and the quads take their sums
  //! apart: sums_apart); in a quad (each_mode_quad) at the position before its values in shared
  //! memory are read, single precision's quads, where double precision's read after their
  //! halves are joined (reading before the shared memory against after the join: single 8192^2
  //! 2% faster, double 0.4% slower; one position ahead, both slower: H200, "Single precision's
  //! columns of 8192 points over four blocks"). In the other stage kernels with the sums,
  //! reading ahead spilled (ptxas: double precision's 2048-point pairs 166 bytes, tiles of a
  //! block 54 to 554) and they read at the position: 2048^2 in double 1.4% faster, 128^2 x 1024
  //! in single 3-4%, 512^2 x 64 in double 1.2%, 512^2 in double 1% on the device; at the
  //! position the pairs of 8192 points (before the quads) lost 0.7% in double, single
  //! precision's pairs 1% (three rounds: "The budget's sums in the column kernel").
  bool ahead;
  //! A tile of a sector's columns (two in double, four in single) over a cluster of four blocks,
  //! by field and the parity of y (column_fft::ColumnPhases kQuad): the pairs of 8192 points,
  //! whose column of a field fills a block (in double; in single, two columns do), so that a
  //! pair's tile was one column (two) and every row was read and written half a sector at a
  //! time. Each block of the four holds the tile's columns of half the points (their rows
  //! y = 2t + parity) and transforms them; the halves are joined at each mode. 8192^2 in double
  //! 13.50-13.53 -> 12.46-12.51 ms a step (launched by the host; the stage kernel 2,228 -> 1,900
  //! us), in single 8.09-8.12 -> 7.28-7.29, though 30 clusters of four run at once on an H200,
  //! 120 of its 132 multiprocessors (docs/performance.md, "Columns of 8192 points over four
  //! blocks" and the section after it). And the columns of 16384 points, whose column of a field
  //! fills two blocks in double: a tile as many columns as a block of the four holds, one in
  //! double and two in single (16 bytes of a row); with the rows over pairs of blocks, 16384^2 in
  //! double 85.26-85.40 ms a step with complex pairs -> 62.90-63.15 (docs/performance.md,
  //! "Columns of 16384 points over quads, rows over pairs of blocks").
  bool quad;
  //! The budget's sums are not the stage kernel's but a pass over S of their own before it
  //! (ColumnKernelEval::sums_apart, cuda_launch::row_sum_kernel): the pairs of 8192 and 16384
  //! points (quads) and double precision's of 4096, whose stage kernels with the sums held 128
  //! registers and spilled. 8192^2 in double 12.51-12.55 -> 12.00 ms a step, in single
  //! 7.28-7.29 -> 7.22-7.23, 4096^2 in double 2.53-2.55 -> 2.50-2.51; the pass lost where the
  //! sums cost the stage kernel less: 2048^2 in both precisions (double 0.616 -> 0.621 ms on the
  //! device, single 0.447 -> 0.455) and single precision's 4096^2 (1.744 -> 1.758; H200, "The
  //! budget's sums in a pass of their own").
  bool sums_apart;
  //! The stage's propagators at a mode are computed with its reads (StageOfColumns::
  //! early_propagators: after they are asked for, while they are on their way), not in the
  //! stage's arithmetic after them: single precision's pairs of a constant length and its quads.
  //! With dif_frequency's constant count, 8192^2 7.16 -> 6.95-6.96 ms a step (the column stage
  //! kernel 1,013 -> 963 us), 4096^2 1.73 -> 1.69. In double precision they gained 0.6% at most
  //! alone, and with dif_frequency's constant count lost 5% at 4096^2 and 0.8% at 8192^2 (H200,
  //! "The stage's arithmetic at a mode; its propagators with its reads").
  bool early_propagators;
  //! The stage's phase of each mode is compiled for each of the stage's shapes (StageOfColumns::
  //! with_shape, kStageShapes: the stages of rk4 and rk3), and runs the one its stage has:
  //! single precision's pairs and quads, double precision's quads (columns of 8192 and 16384
  //! points). The single 8192^2 stage kernel executed 349 million warp instructions where it
  //! executed 394 (double 398 against 462) and took 944 us against 970: 8192^2 6.98 -> 6.90 ms a
  //! step, 4096^2 1.70 -> 1.64, 2048^2 0.46 -> 0.45; double 8192^2 11.21 -> 11.10, 16384^2 even.
  //! Double precision's pairs lost with it (2048^2 0.631 -> 0.654, 4096^2 2.487 -> 2.610): their
  //! stage kernels' stack went to 112 and 144 bytes. Each shape is another copy of the phase in the
  //! kernel, so the kernels of shorter columns, whose steps are their launches, keep one (with
  //! every kernel compiled for the shapes, the backend took 2.7 times as long to compile; H200,
  //! docs/performance.md, "The stage compiled for its shape").
  bool shaped;
};
template <class Real>
constexpr ColumnShape column_shape(bool pair, int m, bool sums) {
  constexpr bool kDouble = std::is_same_v<Real, double>;
  const bool long_pair = pair && (m == 12 || m == 13), quad = pair && (m == 13 || m == 14);
  return {(kDouble && long_pair) || quad,
          !(kDouble && pair && m == 12),
          !(kDouble && quad) && (!sums || (pair && !kDouble)),
          quad,
          quad || (kDouble && pair && m == 12),
          !kDouble && pair && m >= 11 && m <= 14,
          pair && m >= 11 && (!kDouble || quad)};
}
//! The layout of the columns of column_kernel<..., M, RB, kPair> in shared memory.
template <class Real, bool kPair, int M>
using ColumnLayout =
    std::conditional_t<column_shape<Real>(kPair, M, false).swizzled, row_fft::Swizzled, row_fft::Padded>;
//! Blocks a multiprocessor keeps at once, which bounds the registers a thread: in double two
//! blocks of 256 threads (<= 128 registers; three spill, 256² × 256 lost 15%), in single three
//! (<= 85; 128² × 1024 went from 492,000 to 536,000 member-steps/s, H100), blocks of 512 one.
//! Radix 4 (RB = 2), taken only where every tile has a multiprocessor of its own: one, so that
//! its stage with the budget's sums (144 registers in double) does not spill. Radix 8 (RB = 3,
//! columns of 512 points) as radix 16: its stage with the sums takes 126 registers in double.
template <int THREADS, class Real, int RB = 4>
constexpr int column_blocks_per_sm() {
  if (RB == 2) return 1;
  return THREADS <= 256 ? (sizeof(Real) == 4 ? 3 : 2) : 1;
}

//! Phase p of a column pass (column_kernel), then the barrier. Only the phase of each mode
//! (`modes`) sums anything: its sums are added up over the block at once (to
//! partials[member][block]), so that they hold no registers through the other phases. In a
//! pair (kPair) the phase of each mode reads and writes the partner's shared memory: the
//! barriers before and after it are the pair's.
template <int THREADS, bool kSums, bool kPair, class Phases, class Real>
__device__ __forceinline__ void run_phase(const Phases& ph, int p, int modes, Complex<Real>* a, Complex<Real>* b,
                                          SpectralSums* partials, int member) {
  if (kPair && p == 0 && modes == 0) pair_barrier();  // both running before the partner's memory is touched
  if (p != modes) {
    ph.run(p, threadIdx.x, THREADS, a, b);
  } else if constexpr (kSums) {
    const SpectralSums mine = ph.run(p, threadIdx.x, THREADS, a, b);
    using Reduce = cub::BlockReduce<SpectralSums, THREADS>;
    __shared__ typename Reduce::TempStorage temp;
    const SpectralSums total = Reduce(temp).Reduce(mine, AddOp{});
    if (threadIdx.x == 0) partials[std::size_t(member) * gridDim.x + blockIdx.x] = total;
  } else {
    ph.run(p, threadIdx.x, THREADS, a, b);
  }
  if (kPair && (p == modes || p + 1 == modes)) pair_barrier();
  else __syncthreads();
}

//! The phases P... of a pass, one after the other, each's number a constant where it is inlined
//! (run_phase and the phases' code are inlined), so that each stage is compiled for its own
//! radix, length and twiddles. A loop with #pragma unroll did so only while its body stayed below
//! the compiler's size limit: the 256^2 double stage's kernel (radix 4, nine phases) grew past
//! it with the reads ahead (column_fft.cuh each_mode), ran its phases as a loop, and executed
//! 924,000 instructions where it had 528,000 (8.8 -> 11.8 us, ncu, H200); the long columns'
//! pair kernels had always run theirs as one.
template <int THREADS, bool kSums, bool kPair, int kModes, class Phases, class Real, int... P>
__device__ __forceinline__ void run_phases(std::integer_sequence<int, P...>, const Phases& ph, Complex<Real>* a,
                                           Complex<Real>* b, SpectralSums* partials, int member) {
  (run_phase<THREADS, kSums, kPair>(ph, P, kModes, a, b, partials, member), ...);
}

//! One tile a block (blockIdx.x: the tile, blockIdx.y: the member), the phases of the pass with
//! a barrier after each. Op: the functor at each mode (StageOfColumns, InputsOfColumns,
//! StoreColumns), given its member's first index in the state (state_size: a member's modes)
//! and the tile's first column here; a member's work fields start work_size (ny rows of
//! tile.ld) apart. A stage reads its h-dependent numbers from the step's clock (as Clocked
//! does: a step not taken writes nothing and adds nothing) and, in an ensemble whose members
//! differ, its member's coefficients; with kSums the budget's sums of the block go to
//! partials[member][tile] (budget_finish_kernel adds them up).
//! Launched chained (chained.cuh) in the step on the device.
//! M > 0: columns of 2^M points, the pass the one Op makes: the column's length and the phases
//! are constants, so that the index arithmetic and the dispatch between phases are compiled away.
//! RB: log2 of the stages' radix (4, or 2 or 3 for columns of a constant length).
//! kPair: a tile over a pair of blocks, a cluster of two (blockIdx.x: 2 tile + field), each
//! holding one field's columns (column_fft::ColumnTile::field), or where column_shape says quad
//! over four (blockIdx.x: 4 tile + field + 2 parity), each holding one field's rows y = 2t +
//! parity (column_fft::ColumnTile::parity); launched with its cluster dimension
//! (ColumnKernelEval::launch), on compute capability 9.0 and later alone.
template <int THREADS, bool kSums, class Real, class Op, int M = 0, int RB = 4, bool kPair = false>
__global__ void __launch_bounds__(THREADS, column_blocks_per_sm<THREADS, Real, RB>())
    column_kernel(column_fft::ColumnTile<Real> described, int kept, Op op, Complex<Real>* a, Complex<Real>* b,
                  std::size_t work_size, std::size_t state_size, const StepClock* clock, int stage,
                  const LinearCoefficients* each, SpectralSums* partials) {
  extern __shared__ __align__(16) unsigned char column_smem[];
  using Layout = ColumnLayout<Real, kPair, M>;
  column_fft::ColumnTile<Real, Layout> tile = described.template in_layout<Layout>();
  wait_for_previous();
  let_next_launch();
  using R = std::conditional_t<kSums, SpectralSums, column_fft::NoSums>;
  constexpr column_fft::ColumnPass kPass = std::is_same_v<Op, StageOfColumns<Real>>    ? column_fft::ColumnPass::Stage
                                           : std::is_same_v<Op, InputsOfColumns<Real>> ? column_fft::ColumnPass::Inputs
                                                                                       : column_fft::ColumnPass::Forward;
  static_assert(RB == 4 || M > 0, "radix 4 and 8 are for columns of a constant length");
  tile.rb = RB;
  if constexpr (!kPair) tile.field = -1;  // a constant: the pair's branches compiled away
  constexpr ColumnShape kShape = column_shape<Real>(kPair, M, kSums);
  static_assert(!(kSums && kShape.sums_apart), "this stage's sums are a pass of their own (ColumnShape::sums_apart)");
  constexpr int kM = kShape.quad ? M - 1 : M;  // a quad's blocks transform half columns
  if constexpr (M > 0) {
    tile.n = 1 << kM;
    tile.m = kM;
  }
  const int member = blockIdx.y;
  const bool go = !clock || clock->go;
  if (go) {
    tile.s = reinterpret_cast<Complex<Real>*>(column_smem);
    int index = blockIdx.x;  // the tile
    if constexpr (kPair) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      const auto pair = cooperative_groups::this_cluster();
      if constexpr (kShape.quad) {
        const int r = int(pair.block_rank());
        tile.field = r & 1;
        tile.parity = r >> 1;
        for (int q = 0; q < 4; ++q) tile.quad[q] = pair.map_shared_rank(tile.s, q);
      } else {
        tile.field = int(pair.block_rank());
        tile.partner = pair.map_shared_rank(tile.s, tile.field ^ 1);
      }
#endif
      index = blockIdx.x >> (kShape.quad ? 2 : 1);
    }
    tile.first_column = index * tile.columns;
    tile.valid = min(tile.columns, kept - tile.first_column);
    op.base = std::size_t(member) * state_size;
    op.first_column = tile.first_column;
    if constexpr (std::is_same_v<Op, StageOfColumns<Real>>) {
      if (each) op.set_linear(each[member]);
      if (clock) op.set_step(clock->h, clock->hb[stage], clock->ha[stage]);
      op.early_propagators = kShape.early_propagators;
    }
    Complex<Real>* am = a + std::size_t(member) * work_size;
    Complex<Real>* bm = b + std::size_t(member) * work_size;
    if constexpr (kShape.quad) {  // the rows y = 2t + parity
      am += std::size_t(tile.parity) * std::size_t(tile.ld);
      bm += std::size_t(tile.parity) * std::size_t(tile.ld);
      tile.ld *= 2;
    }
    using Phases = column_fft::ColumnPhases<Real, R, Op, Layout, kShape.ahead, kShape.quad, kShape.shaped>;
    const Phases ph{tile, kPass, op};
    if constexpr (M > 0) {  // the phases' count and the modes' phase as constants
      constexpr int kStages = row_fft::stages_before_last(kM, RB) + 1;
      constexpr int kPhases = Phases::phases(kPass, kStages), kModes = Phases::mode_phase(kPass, kStages);
      if constexpr (kShape.folded) {
        run_phases<THREADS, kSums, kPair, kModes>(std::make_integer_sequence<int, kPhases>{}, ph, am, bm, partials,
                                                  member);
      } else {
#pragma unroll 1
        for (int p = 0; p < kPhases; ++p) run_phase<THREADS, kSums, kPair>(ph, p, kModes, am, bm, partials, member);
      }
    } else {
      const int modes = ph.mode_phase();
      for (int p = 0; p < ph.count(); ++p) run_phase<THREADS, kSums, kPair>(ph, p, modes, am, bm, partials, member);
    }
  } else if constexpr (kSums) {  // a step not taken: adds nothing
    if (threadIdx.x == 0) partials[std::size_t(member) * gridDim.x + blockIdx.x] = SpectralSums{};
  }
}

}  // namespace cuda_launch

//! The column passes' twiddles, tiles and budget partials for one grid (every member of an
//! ensemble: a row of blocks each).
template <class Real>
class ColumnKernelEval {
  using Cplx = Complex<Real>;

 public:
  //! Threads a block: 256, or 512 where the tile's columns have butterflies for as many.
  static constexpr int kThreads = 256, kWide = 512;
  //! Columns of this many points and more split a tile over a pair of blocks where they can
  //! (can_pair). H200, 2026-11-28, ms a step of rows and columns, without pairs against with
  //! them (and whole sectors, make): double 2048^2 0.898-0.907 against 0.822-0.829, 4096^2
  //! 3.67-3.69 against 3.23-3.26; single 2048^2 0.682-0.689 against 0.632-0.634, 4096^2
  //! 2.91-2.92 against 2.48. At 1024^2 pairs lost without whole sectors (double 0.295-0.296
  //! against 0.305-0.312) and won with them (0.279-0.287; single 0.221-0.224 against
  //! 0.214-0.216), measured once and not taken: the row products, 0.251-0.256, win there.
  static constexpr int kPairFrom = 2048;
  //! The shared memory a tile of `columns` columns of ny points takes (both fields), padded or
  //! `swizzled` (column_shape).
  static std::size_t shared_bytes(int ny, int columns = 1, bool swizzled = false) {
    const int stride = swizzled ? column_fft::column_stride<row_fft::Swizzled>(ny) : column_fft::column_stride(ny);
    return sizeof(Cplx) * 2 * std::size_t(columns) * std::size_t(stride);
  }
  //! The least shared memory a block needs: a column of both fields, or of one where tiles can
  //! be split over pairs of blocks (`pairs`: can_pair), or half of one where they go over quads
  //! (ColumnShape::quad: columns of 8192 and 16384 points).
  static std::size_t least_shared_bytes(int ny, bool pairs) {
    int m = 0;
    while ((1 << m) < ny) ++m;
    if (pairs && (1 << m) == ny && cuda_launch::column_shape<Real>(true, m, false).quad)
      return shared_bytes(ny / 2, 1, true) / 2;
    return shared_bytes(ny) / (pairs ? 2 : 1);
  }
  //! Whether this build can split tiles over pairs of blocks on the device `prop` describes:
  //! clusters (compute capability 9.0 and later), and the pair kernels compiled for them.
  static bool can_pair(const cudaDeviceProp& prop) {
    auto* const kernel = cuda_launch::column_kernel<kThreads, false, Real, InputsOfColumns<Real>, 0, 4, true>;
    return cuda_launch::runs_sm90_code(kernel, prop);
  }

  ColumnKernelEval() = default;
  ColumnKernelEval(const ColumnKernelEval&) = delete;
  ColumnKernelEval& operator=(const ColumnKernelEval&) = delete;
  ~ColumnKernelEval() {
    if (twiddles_) cudaFree(twiddles_);
    if (half_twiddles_) cudaFree(half_twiddles_);
    if (join_twiddles_) cudaFree(join_twiddles_);
    if (partials_) cudaFree(partials_);
  }

  //! Tiles over the `kept` columns of `members` fields: as many columns as give every
  //! multiprocessor two blocks at least, keep two blocks' shared memory on one and leave no
  //! more than an eighth of the last tile's columns past the kept ones (at most 32; at least
  //! one, then of the GPU's largest). `pairs` (can_pair): a tile may be split over a pair of
  //! blocks, one field each, which it is for columns of kPairFrom points and more (and wherever
  //! a column of both fields would not fit a block); a pair's tile then takes as many columns
  //! as make a row's 32 bytes where a block can hold them.
  void make(int nx, int ny, int kept, int members, std::size_t shared_optin, int sms, bool pairs) {
    nx_ = nx;
    ny_ = ny;
    m_ = 0;
    while ((1 << m_) < ny) ++m_;
    kept_ = kept;
    members_ = members;
    if (kept > nx / 2) throw RunError("the column kernel keeps at most nx/2 columns");
    twiddles_ = device_twiddles<Real>(ny);
    pair_ = pairs && (ny >= kPairFrom || shared_bytes(ny) > shared_optin);
    ld_ = pair_ || members_ > 1 ? work_row(kept) : nx / 2 + 1;
    const auto bytes = [&](int c) { return shared_bytes(ny, c) / (pair_ ? 2 : 1); };  // a block's
    const std::size_t target = std::min<std::size_t>(shared_optin / 2, 100 * 1024);
    columns_ = 1;
    const auto launched = [&](int c) { return std::size_t(members_) * std::size_t((kept_ + c - 1) / c); };
    // Past the kept columns, a tile's columns are transformed for nothing: an eighth at most.
    const auto wasted = [&](int c) { return 8 * (std::size_t((kept_ + c - 1) / c) * c - kept_) > std::size_t(kept_); };
    // A pair's block takes columns up to a butterfly a thread of kThreads.
    const auto room = [&](int c) { return !pair_ || c * (ny / 16) <= kThreads; };
    while (columns_ < 32 && columns_ < kept_ && bytes(2 * columns_) <= target && room(2 * columns_) &&
           launched(2 * columns_) >= 2 * std::size_t(sms) && !wasted(2 * columns_))
      columns_ *= 2;
    // A pair's tile: the columns of a 32-byte sector of each row (two in double, four in single),
    // where a block's shared memory and two butterflies a thread of kWide allow it, so that its
    // loads and stores take whole sectors: 4096^2 in double 3.60-3.64 -> 3.23-3.26 ms a step
    // (one column on 256 threads a block -> two on 512; H200, 2026-11-28); single 4096^2
    // 2.68 -> 2.48, but 2048^2 0.603-0.609 -> 0.632-0.634. Two butterflies a thread (the stages
    // loop over the block's columns) give single precision's 4096 points four columns and 8192
    // two, where one butterfly gave two and one: 2.03-2.04 -> 1.85-1.87 ms at 4096^2, 11.31-11.33
    // -> 9.18 at 8192^2 (H200, 2026-11-28). Double's tiles are as before (shared memory).
    if (pair_)
      while (columns_ * sizeof(Cplx) < 32 && columns_ < kept_ && bytes(2 * columns_) <= shared_optin &&
             2 * columns_ * (ny / 16) <= 2 * kWide && !wasted(2 * columns_))
        columns_ *= 2;
    // A quad (ColumnShape::quad): tiles of a sector's columns, a block's of half the points,
    // or as many as a block holds (columns of 16384 points: one in double, two in single).
    quad_ = pair_ && cuda_launch::column_shape<Real>(true, m_, false).quad;
    if (quad_) {
      columns_ = int(32 / sizeof(Cplx));
      while (columns_ > 1 && shared_bytes(ny / 2, columns_, true) / 2 > shared_optin) columns_ /= 2;
      half_twiddles_ = device_twiddles<Real>(ny / 2);
    }
    const int points = quad_ ? ny / 2 : ny;  // a block's column
    wide_ = (pair_ ? 1 : 2) * columns_ * (points / 16) >= kWide;
    // The tiles were sized padded; swizzled (the pairs' kernels of a constant length whose
    // column_shape says so) they take less.
    const bool swizzled = constant_pair() && cuda_launch::column_shape<Real>(true, m_, false).swizzled;
    smem_ = shared_bytes(points, columns_, swizzled) / (pair_ ? 2 : 1);
    if (smem_ > shared_optin) throw RunError("the column kernel needs more shared memory a block than this GPU has");
    if (quad_ && !constant_pair())
      throw RunError("a quad's columns run the pairs' kernels of 8192 and 16384 points alone");
    // A pair's tile of kWide threads is one of 2^11 to 2^14 points on pair_threads' (the loops
    // above reach no other), whose kernels are compiled for their length alone.
    if (pair_ && wide_ && !constant_pair())
      throw RunError("the column kernel's pairs of 512 threads take columns of 2^11 to 2^14 points alone");
    tiles_ = (kept_ + columns_ - 1) / columns_;
    // One field's columns of a constant length whose tiles (one column each) leave
    // multiprocessors idle: radix 4, a thread for each four points of a column, so that each
    // thread's chain is shorter (with the rows: row_kernel_eval.cuh). Where there are more
    // tiles than multiprocessors (512² in double: 171 tiles), radix 16, whose kernels run two
    // blocks a multiprocessor (0.103 ms a step against 0.114, H100), and an ensemble's, whose
    // fewer phases won wherever measured. In double, 128-point columns take radix 16 too
    // (0.0443 ms a step against 0.0455 at 128², H100; in single radix 4 wins there). Columns of
    // 512 points take radix 8, one field's or an ensemble's: three stages of 8, as many as radix
    // 16's (2, 16, 16), with radix 16's blocks a multiprocessor (H100, double: 512² 0.0934 ms a
    // step against 0.0977; 512² × 4 members 16,500–16,900 against 14,500–15,100 member-steps/s,
    // × 16 20,500–20,700 against 19,000–19,100). Radix 8 lost at 128² and 256².
    const int radix4_tiles = cuda_launch::column_blocks_per_sm<kThreads, Real, 2>() * sms;
    const int radix4_from = std::is_same_v<Real, double> ? 8 : 7;
    if (pair_) rb_ = 4;
    else if (m_ == 9 && !wide_) rb_ = 3;
    else rb_ = members_ == 1 && !wide_ && m_ >= radix4_from && m_ <= 8 && tiles_ < radix4_tiles ? 2 : 4;
    if (quad_)
      join_twiddles_ = device_table(column_fft::join_twiddles(m_ - 1, rb_, row_fft::twiddle_table<Real>(ny, false)));
    each_instantiation([&](auto* kernel) {
      CASCADE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
    });
    CASCADE_CUDA_CHECK(cudaMalloc(&partials_, sizeof(SpectralSums) * std::size_t(blocks()) * std::size_t(members_)));
  }
  //! The blocks of a member, each with its budget partial (a tile's, half of one in a pair, a
  //! quarter in a quad).
  int blocks() const { return tiles_ * (quad_ ? 4 : pair_ ? 2 : 1); }
  SpectralSums* partials() const { return partials_; }
  //! Whether the budget's sums are a pass of their own before the stage (CudaExec::column_stage,
  //! KeptSums), not the stage kernel's (ColumnShape::sums_apart; the pairs' kernels of a
  //! constant length).
  bool sums_apart() const { return constant_pair() && apart(m_); }
  //! The kept columns (kx < kept()) the tiles cover.
  int kept() const { return kept_; }

  //! The inputs of an evaluation of omega_hat (every member) into a, b: velocity_of at each
  //! kept mode, then the inverse transforms of the columns.
  //! `chained`: launched chained (chained.cuh), as in the step on the device.
  void inputs(const InputsOfColumns<Real>& op, Cplx* a, Cplx* b, bool chained, cudaStream_t stream) const {
    launch<false>(op, a, b, nullptr, 0, nullptr, chained, stream);
  }
  //! A fused stage over the columns (a, b: the row kernel's products on entry, the next
  //! evaluation's inputs on return), its numbers from `clock` (stage `stage`), each member's
  //! coefficients from `each` where given; with op.with_sums the budget's sums into partials().
  void stage(const StageOfColumns<Real>& op, Cplx* a, Cplx* b, const StepClock* clock, int stage,
             const LinearCoefficients* each, bool chained, cudaStream_t stream) const {
    if (op.with_sums && sums_apart()) throw RunError("the column stage's sums are a pass of their own here");
    if (op.with_sums) launch<true>(op, a, b, clock, stage, each, chained, stream);
    else launch<false>(op, a, b, clock, stage, each, chained, stream);
  }
  //! The forward transforms of the columns alone: from a, b (the row kernel's products, rows of
  //! ld()) to a_out, b_out as half spectra at the kept columns (rows of nx/2 + 1; other buffers
  //! than a, b unless ld() is nx/2 + 1).
  void forward(Cplx* a, Cplx* b, Cplx* a_out, Cplx* b_out, cudaStream_t stream) const {
    const StoreColumns<Real> op{a_out, b_out, nx_ / 2 + 1, 0, 0};
    launch<false>(op, a, b, nullptr, 0, nullptr, false, stream);
  }
  //! The work fields' row between the row kernel and the column kernel (y in physical space, kx
  //! in spectral space) where tiles are split over pairs or an ensemble runs: the kept columns,
  //! rounded up to 32 bytes in both precisions (four complex numbers), so that every row starts
  //! a sector and a tile's loads and stores of whole sectors take one sector each, not two on
  //! every other row as with rows of nx/2 + 1, an odd number (ncu, 4096^2 double stage kernel:
  //! 5.4 of its 23.5 million global sectors). The columns past kept are never read or
  //! written; the rows of an ensemble's members run on (a member ny ld). One grid's tiles of
  //! both fields a block keep rows of nx/2 + 1 (make): with these rows 128^2 to 512^2 were
  //! 0.5-1% slower (H200; docs/performance.md).
  static int work_row(int kept) { return (kept + 3) / 4 * 4; }
  //! The work fields' row: work_row(kept) or nx/2 + 1 (make).
  int ld() const { return ld_; }

 private:
  template <class Fn>
  void each_instantiation(const Fn& fn) {
    // The four passes' kernels of one shape; `pair`: a tile over a pair of blocks.
    const auto passes = [&](auto threads, auto m, auto rb, auto pair) {
      constexpr int T = decltype(threads)::value, M = decltype(m)::value, RB = decltype(rb)::value;
      constexpr bool P = decltype(pair)::value;
      fn(cuda_launch::column_kernel<T, false, Real, InputsOfColumns<Real>, M, RB, P>);
      fn(cuda_launch::column_kernel<T, false, Real, StoreColumns<Real>, M, RB, P>);
      fn(cuda_launch::column_kernel<T, false, Real, StageOfColumns<Real>, M, RB, P>);
      if constexpr (!(P && apart(M))) fn(cuda_launch::column_kernel<T, true, Real, StageOfColumns<Real>, M, RB, P>);
    };
    using Threads = std::integral_constant<int, kThreads>;
    using Generic = std::integral_constant<int, 0>;  // the length read at run time
    using Radix16 = std::integral_constant<int, 4>;
    using Radix4 = std::integral_constant<int, 2>;
    using One = std::false_type;  // a tile a block
    using Pair = std::true_type;  // a tile over a pair of blocks
    const auto fixed = [&](auto m) {  // the columns of a constant length (kernel_for)
      passes(Threads{}, m, Radix16{}, One{});
      passes(Threads{}, m, Radix4{}, One{});
    };
    fixed(std::integral_constant<int, 7>{});
    fixed(std::integral_constant<int, 8>{});
    fixed(std::integral_constant<int, 9>{});
    const auto fixed_pair = [&](auto m) {  // the long columns' pairs of a constant length (kernel_for)
      passes(std::integral_constant<int, pair_threads(decltype(m)::value)>{}, m, Radix16{}, Pair{});
    };
    fixed_pair(std::integral_constant<int, 11>{});
    fixed_pair(std::integral_constant<int, 12>{});
    fixed_pair(std::integral_constant<int, 13>{});
    fixed_pair(std::integral_constant<int, 14>{});
    passes(Threads{}, std::integral_constant<int, 9>{}, std::integral_constant<int, 3>{}, One{});  // radix 8
    passes(Threads{}, Generic{}, Radix16{}, One{});
    passes(std::integral_constant<int, kWide>{}, Generic{}, Radix16{}, One{});
    passes(Threads{}, Generic{}, Radix16{}, Pair{});
  }
  //! The threads a block of a pair takes for columns of 2^m points of a square grid (make): in
  //! double 256 for 2^11 (two columns a tile), 512 for 2^12 (two), 2^13 and 2^14 (quads: two and
  //! one, of half the points a block); in single 512 (four, four, and in quads four and two: two
  //! butterflies a thread from 4096 points).
  static constexpr int pair_threads(int m) { return std::is_same_v<Real, double> && m == 11 ? kThreads : kWide; }
  //! Whether the pairs' columns of 2^m points take the budget's sums apart (ColumnShape).
  static constexpr bool apart(int m) { return cuda_launch::column_shape<Real>(true, m, true).sums_apart; }
  //! Whether kernel_for takes a pair's kernel of a constant length (make: pair_, m_, wide_ set).
  bool constant_pair() const { return pair_ && m_ >= 11 && m_ <= 14 && (wide_ ? kWide : kThreads) == pair_threads(m_); }
  //! The kernel for columns of 2^m_ points: a pair's of a constant length from 2^11 to 2^14 on
  //! the threads pair_threads gives it, else (kThreads) of the length read at run time; of
  //! kWide threads the length read at run time; else of kThreads, of a constant length from 2^7
  //! to 2^9 or the length read at run time. The constant lengths compile the index arithmetic
  //! and the phases' dispatch away (H200, 2026-11-28, a 4096^2 double stage: 152 million instructions reading the
  //! length at run time, 129 million compiled for it, 563 -> 529 us; docs/performance.md).
  template <bool kSums, class Op>
  auto kernel_for() const {
    if (constant_pair()) {
      // A pair whose sums are apart has no kernel with them (stage() never asks for it).
      switch (m_) {
        case 11: return cuda_launch::column_kernel<pair_threads(11), kSums && !apart(11), Real, Op, 11, 4, true>;
        case 12: return cuda_launch::column_kernel<pair_threads(12), kSums && !apart(12), Real, Op, 12, 4, true>;
        case 13: return cuda_launch::column_kernel<pair_threads(13), kSums && !apart(13), Real, Op, 13, 4, true>;
        case 14: return cuda_launch::column_kernel<pair_threads(14), kSums && !apart(14), Real, Op, 14, 4, true>;
        default: break;
      }
    }
    if (wide_) return cuda_launch::column_kernel<kWide, kSums, Real, Op>;  // not a pair's (make)
    if (pair_) return cuda_launch::column_kernel<kThreads, kSums, Real, Op, 0, 4, true>;
    if (rb_ == 3 && m_ == 9) return cuda_launch::column_kernel<kThreads, kSums, Real, Op, 9, 3>;
    if (rb_ == 2) {
      switch (m_) {
        case 7: return cuda_launch::column_kernel<kThreads, kSums, Real, Op, 7, 2>;
        case 8: return cuda_launch::column_kernel<kThreads, kSums, Real, Op, 8, 2>;
        case 9: return cuda_launch::column_kernel<kThreads, kSums, Real, Op, 9, 2>;
        default: break;
      }
    }
    switch (m_) {
      case 7: return cuda_launch::column_kernel<kThreads, kSums, Real, Op, 7>;
      case 8: return cuda_launch::column_kernel<kThreads, kSums, Real, Op, 8>;
      case 9: return cuda_launch::column_kernel<kThreads, kSums, Real, Op, 9>;
      default: break;
    }
    return cuda_launch::column_kernel<kThreads, kSums, Real, Op>;
  }
  template <bool kSums, class Op>
  void launch(const Op& op, Cplx* a, Cplx* b, const StepClock* clock, int stage, const LinearCoefficients* each,
              bool chained, cudaStream_t stream) const {
    column_fft::ColumnTile<Real> tile{ny_, m_, columns_, 0, 0, ld_, nullptr, twiddles_};
    if (quad_) {  // a block's half columns (the kernel takes its rows y = 2t + parity)
      tile.n = ny_ / 2;
      tile.m = m_ - 1;
      tile.tw = half_twiddles_;
      tile.tw_join = join_twiddles_;
    }
    const dim3 grid{unsigned(blocks()), unsigned(members_)};
    // work_size is tile.n tile.ld, passed rather than derived in the kernel: derived there, ptxas
    // gave more kernels other registers (the 256^2 single stage kernel 80 -> 84; not timed).
    const std::size_t work_size = std::size_t(ny_) * std::size_t(ld_);
    const std::size_t state_size = std::size_t(ny_) * std::size_t(nx_ / 2 + 1);
    cuda_launch::launch_clustered(chained, quad_ ? 4 : pair_ ? 2 : 1, kernel_for<kSums, Op>(), grid,
                                  dim3(wide_ ? kWide : kThreads), smem_, stream, tile, kept_, op, a, b, work_size,
                                  state_size, clock, stage, each, partials_);
    CASCADE_CUDA_CHECK_LAUNCH();
  }

  int nx_ = 0, ny_ = 0, m_ = 0, kept_ = 0, members_ = 1;
  int ld_ = 1;  //!< the work fields' row (ld())
  int columns_ = 1, tiles_ = 1;
  bool wide_ = false;  //!< kWide threads a block
  bool pair_ = false;  //!< a tile over a pair of blocks, one field each (make)
  bool quad_ = false;  //!< a tile over a quad of blocks, by field and parity (make)
  int rb_ = 4;         //!< log2 of the stages' radix of columns of a constant length (make)
  std::size_t smem_ = 0;
  Cplx* twiddles_ = nullptr;
  Cplx* half_twiddles_ = nullptr;  //!< a quad's half columns' table
  Cplx* join_twiddles_ = nullptr;  //!< a quad's join factors by position (column_fft::join_twiddles)
  SpectralSums* partials_ = nullptr;
};

}  // namespace cascade
