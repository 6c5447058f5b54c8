//! @file The cuFFT callbacks of the GPU step (LTO callbacks, cufftXtSetJITCallback): the
//! dealiasing done inside the transforms' own passes.
//!
//! The 2/3 rule removes 5/9 of the modes, and the step's transforms need not move them:
//!   - the forward (R2C) transforms of the products store the modes the dealiasing keeps and
//!     skip the others (store callback); the fused stage writes zeros there without reading;
//!   - where the inverse (C2R) transforms of an evaluation's inputs load the kept modes alone
//!     and read the others as zero (load callback), nothing needs to write those zeros either:
//!     the fused stage then leaves the removed modes alone (FusedStage::skip_removed).
//! The complex pairs' transforms (one complex 2D transform of u + i v each way) take the same
//! callbacks over their full spectrum (keeps_full).
//! The pruned transforms (two 1D passes, the removed columns skipped) take the same callbacks
//! in their passes over the kept columns, and in their passes over the rows, callbacks that
//! store or load the kept columns alone (all rows of them: the columns' pass needs them).
//! Whether this is faster depends on the transform cuFFT picks: Backend::prepare_step
//! says when each is used. The callbacks are device functions compiled to LTO-IR
//! (src/backends/cuda/fft_callbacks.cu, embedded in the library) and linked into cuFFT's kernels when the
//! plans are made. They read this block of parameters, which the host keeps in device memory.
#pragma once

#include "kernels/ns_ops.cuh"
#include "kernels/spectral_ops.cuh"

namespace cascade {

template <class Real>
struct TransformCallbackParams {
  SpectralShape<Real> shape;
  DealiasMask<Real> mask;
  double inv_nx = 0;  //!< 1 / nx: the row of a complex pair's offset (keeps_full)

  //! Whether the mode at flat index `offset` of the half spectrum (of any field of a batch:
  //! a batched plan's offsets run on into the next field, which SpectralShape::mode follows)
  //! survives the dealiasing.
  CASCADE_HD bool keeps(unsigned long long offset) const {
    int i, j;
    shape.mode(std::size_t(offset), i, j);
    return mask.keep(shape, i, j);
  }
  //! Whether the column of flat index `offset` holds modes the dealiasing keeps (the pruned
  //! transforms' passes over the rows: kernels/fft_callbacks.cuh's header, CudaExec).
  CASCADE_HD bool keeps_column(unsigned long long offset) const {
    int i, j;
    shape.mode(std::size_t(offset), i, j);
    return !shape.nyquist_x(i) && (!mask.two_thirds || two_thirds_keeps(i, shape.nx));
  }
  //! Whether the element at `offset` of a complex pair's full spectrum (ny x nx a field, an
  //! ensemble's member after member; ns_ops.cuh PackedLayout) is a mode the dealiasing keeps:
  //! column c holds kx = c, or c - nx past nx/2, and the mask is even in kx.
  CASCADE_HD bool keeps_full(unsigned long long offset) const {
    const std::size_t nx = std::size_t(shape.nx);
    std::size_t row = static_cast<std::size_t>(double(offset) * inv_nx);
    if (row * nx > offset) --row;
    else if ((row + 1) * nx <= offset) ++row;
    const int c = static_cast<int>(offset - row * nx);
    if (row >= std::size_t(shape.ny)) row -= shape.member_rows(row) * std::size_t(shape.ny);  // an ensemble's batch
    return mask.keep(shape, 2 * c <= shape.nx ? c : shape.nx - c, static_cast<int>(row));
  }
};

}  // namespace cascade
