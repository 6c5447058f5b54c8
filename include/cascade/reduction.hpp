//! @file The cascaded max-reduction, host side: the CPU maximum (OpenMP) and, with CUDA, the GPU
//! variants on device arrays for `cascade bench reduction` and the tests. No CUDA types here.
//!
//! The kernels are kernels/reduction.cuh; the solver launches the fused one itself, inside the
//! kernel that forms the products (src/backends/cuda/launch.cuh). Every function here reduces
//! max(a_i) or the CFL speed max(|u_i| inv_dx + |v_i| inv_dy): -inf when empty, NaN when any
//! input is NaN (kernels/reduction_ops.cuh).
#pragma once

#include <cstddef>
#include <vector>

#include "cascade/buffer.hpp"

struct CUstream_st;  // = cudaStream_t's pointee; declared here so include/ needs no CUDA header

namespace cascade {

using StreamHandle = CUstream_st*;  //!< a cudaStream_t; nullptr = the legacy default stream

// ---------------------------------------------------------------- CPU (OpenMP)

//! max over a[0..n), each thread on one contiguous range, combined in thread order.
template <class Real>
Real max_cpu(const Real* a, std::size_t n);

//! max_i (|u_i| inv_dx + |v_i| inv_dy), as max_cpu.
template <class Real>
Real cfl_max_cpu(const Real* u, const Real* v, std::size_t n, Real inv_dx, Real inv_dy);

// ---------------------------------------------------------------- CUDA

#if defined(CASCADE_HAVE_CUDA)

//! The GPU variants (kernels/reduction.cuh).
enum class MaxVariant {
  Fused,          //!< the solver's: one launch over the indices, the last block combines
  ColumnTwoPass,  //!< the design card's column kernel, then one block combines the partials
  ColumnHost      //!< the column kernel, the partials combined on the host
};
inline constexpr MaxVariant kMaxVariants[] = {MaxVariant::Fused, MaxVariant::ColumnTwoPass,
                                              MaxVariant::ColumnHost};
const char* to_string(MaxVariant v);

//! Device memory of n values (not initialised), host vectors to and from it (blocking).
template <class T>
Buffer<T> device_buffer(std::size_t n);
template <class T>
Buffer<T> to_device(const std::vector<T>& host);
template <class T>
std::vector<T> to_host(const Buffer<T>& device);

//! The variants over row-major arrays of rows x cols values (the fused one sees rows * cols
//! values in a row). Owns its scratch (device: ticket, result, partials; pinned host: partials)
//! for up to max_n values, allocated once; no call allocates. Work runs on `stream`; one
//! DeviceMax per stream, one call in flight at a time.
template <class Real>
class DeviceMax {
 public:
  explicit DeviceMax(std::size_t max_n, StreamHandle stream = nullptr);

  //! The maximum into *d_result (device), queued without waiting. ColumnHost has no device
  //! result: refused (RunError).
  void max_to_device(MaxVariant v, const Real* d_a, std::size_t rows, std::size_t cols, Real* d_result);
  void cfl_max_to_device(MaxVariant v, const Real* d_u, const Real* d_v, std::size_t rows,
                         std::size_t cols, Real inv_dx, Real inv_dy, Real* d_result);

  //! The maximum on the host (waits for the stream; Fused and ColumnTwoPass copy one value).
  Real max(MaxVariant v, const Real* d_a, std::size_t rows, std::size_t cols);
  Real cfl_max(MaxVariant v, const Real* d_u, const Real* d_v, std::size_t rows, std::size_t cols,
               Real inv_dx, Real inv_dy);

  //! The column kernel's row chunks (gridDim.y) and columns a thread for this array.
  int column_chunks(const Real* d_a, std::size_t rows, std::size_t cols) const;
  int column_width(const Real* d_a, std::size_t cols) const;

  std::size_t capacity() const { return max_n_; }

 private:
  std::size_t max_n_ = 0;
  int sms_ = 0;
  std::size_t fused_blocks_ = 0;  //!< policy Fused: kBlocksPerSm x SMs
  Buffer<unsigned char> d_scratch_;  //!< [ticket | result | partials], ticket 0 between calls
  Buffer<Real> h_partials_;          //!< pinned
  StreamHandle stream_ = nullptr;
};

#endif  // CASCADE_HAVE_CUDA

}  // namespace cascade
