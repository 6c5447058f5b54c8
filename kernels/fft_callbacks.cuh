//! @file The cuFFT callbacks of the GPU step (LTO callbacks, cufftXtSetJITCallback): the
//! dealiasing done inside the transforms' own passes.
//!
//! The 2/3 rule removes 5/9 of the modes, and the step's transforms need not move them:
//!   - the forward (R2C) transforms of the products store the modes the dealiasing keeps and
//!     skip the others (store callback); the fused stage writes zeros there without reading;
//!   - where the inverse (C2R) transforms of an evaluation's inputs load the kept modes alone
//!     and read the others as zero (load callback), nothing needs to write those zeros either:
//!     the fused stage then leaves the removed modes alone (FusedStage::skip_removed).
//! Whether this is faster depends on the transform cuFFT picks: Backend::prepare_fused_transforms
//! says when each is used. The callbacks are device functions compiled to LTO-IR
//! (src/fft_callbacks.cu, embedded in the library) and linked into cuFFT's kernels when the
//! plans are made. They read this block of parameters, which the host keeps in device memory.
#pragma once

#include "kernels/ns_ops.cuh"
#include "kernels/spectral_ops.cuh"

namespace cascade {

template <class Real>
struct TransformCallbackParams {
  SpectralShape<Real> shape;
  DealiasMask<Real> mask;
  std::size_t field;  //!< modes in a field: a batched plan's offsets run on into the next field

  //! Whether the mode at flat index `offset` of the half spectrum (of any field of a batch)
  //! survives the dealiasing.
  CASCADE_HD bool keeps(unsigned long long offset) const {
    while (offset >= field) offset -= field;  // the batches are pairs: at most once
    int i, j;
    shape.mode(std::size_t(offset), i, j);
    return mask.keep(shape, i, j);
  }
};

}  // namespace cascade
