//! @file Cascaded reductions (max, min, sum) of device and host arrays; the CFL maximum
//! max_i(|u_i|/dx + |v_i|/dy) computed from u and v on the fly. No CUDA types here.
//!
//! GPU paths (kernels/reduction.cuh, dispatch in src/reduction_cuda.cu):
//!   - flat, bandwidth-bound: grid-stride, 16-byte vector loads, several accumulators per
//!     thread, grid = SMs x occupancy (fewer blocks for small inputs; one block = single-block
//!     path). reduce(), reduce_to_device(), cfl_max(), cfl_max_to_device().
//!   - column kernel: each thread owns one column (or a 16-byte group of adjacent columns) of an
//!     n1 x n2 row-major array and walks the rows of its row chunk; one partial per block.
//!     reduce_columns(), reduce_columns_to_device(), cfl_max_columns().
//! Both end with a Combine: Fused (the last block combines the partials in the same launch),
//! TwoPass (a second single-block kernel) or Host (partials copied back and combined on the
//! host). Fused and TwoPass leave the result on the device.
//!
//! Why Fused is the default: a second launch costs ~2-3 us (launch plus the gap between
//! dependent kernels), a third of CUB's whole 8.9 us at 2^20 floats on an H100 and still ~10% at
//! 2^24; the fused ticket costs one atomic per block and one extra L2 round trip at the end.
//! Small inputs: the grid is sized so that each thread gets at least one unrolled iteration, so
//! inputs up to 256 threads x 4 vectors (4096 floats, 2048 doubles) run as a single block that
//! writes the result itself (no partials, no ticket, no second pass).
//!
//! NaN: max and min return NaN when any element is NaN (every stage propagates it; see
//! kernels/reduction_ops.cuh). Identities: max -inf, min +inf, sum 0 (also the result of n = 0).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

struct CUstream_st;  // = cudaStream_t's pointee; declared here so include/ needs no CUDA header

namespace cascade {

using StreamHandle = CUstream_st*;  //!< a cudaStream_t; nullptr = the legacy default stream

enum class ReduceOp { Max, Min, Sum };

enum class Combine {
  Fused,    //!< on the device, by the last block to finish (atomic ticket): one launch
  TwoPass,  //!< on the device, by a second single-block kernel
  Host      //!< partials copied to the host and combined there (the result is returned)
};

//! Columns per thread in the column kernel: Auto = one 16-byte load of 4 (float) or 2 (double)
//! adjacent columns where n2 and the alignment allow it, else 1; Scalar = always 1 (the
//! original one-thread-per-column design, kept for comparison).
enum class ColumnWidth { Auto, Scalar };

const char* to_string(ReduceOp op);
const char* to_string(Combine c);

//! The identity of `op`: -inf for Max, +inf for Min, 0 for Sum.
template <class Real>
Real reduction_identity(ReduceOp op);

// ---------------------------------------------------------------- CPU (OpenMP)

//! op over a[0..n), deterministic for a given thread count. NaN-propagating for Max/Min.
template <class Real>
Real reduce_cpu(ReduceOp op, const Real* a, std::size_t n);

//! max_i (|u_i| inv_dx + |v_i| inv_dy); -inf for n = 0; NaN if any u_i or v_i is NaN.
template <class Real>
Real cfl_max_cpu(const Real* u, const Real* v, std::size_t n, Real inv_dx, Real inv_dy);

// ---------------------------------------------------------------- CUDA

#if defined(CASCADE_HAVE_CUDA)

//! CUB-style scratch query: bytes of device scratch that reduce_device / cfl_max_device need
//! for any n on the current device (the partials of one full wave of blocks plus a ticket and
//! a result slot). Same value as calling reduce_device with d_scratch == nullptr.
template <class Real>
std::size_t reduction_scratch_bytes();

//! CUB-style flat reduction of d_a[0..n) into *d_result (device), asynchronous on `stream`.
//! With d_scratch == nullptr only sets scratch_bytes and returns (no launch).
//! Precondition for Combine::Fused: the scratch was zeroed (cudaMemset) before its first use;
//! every completed call leaves it so. One scratch must not serve two calls in flight at once.
//! Combine::Host is not accepted here (the result stays on the device).
template <class Real>
void reduce_device(void* d_scratch, std::size_t& scratch_bytes, ReduceOp op, const Real* d_a,
                   std::size_t n, Real* d_result, Combine combine = Combine::Fused,
                   StreamHandle stream = nullptr);

//! CUB-style CFL maximum of d_u, d_v (same contract as reduce_device).
template <class Real>
void cfl_max_device(void* d_scratch, std::size_t& scratch_bytes, const Real* d_u, const Real* d_v,
                    std::size_t n, Real inv_dx, Real inv_dy, Real* d_result,
                    Combine combine = Combine::Fused, StreamHandle stream = nullptr);

//! Owns the scratch (device) and a pinned host buffer for inputs of up to max_n elements,
//! allocated once at construction; no call allocates. All work runs on `stream`; the methods
//! returning a value synchronise that stream, the *_to_device ones do not.
//! Not thread-safe; one reducer per stream.
template <class Real>
class DeviceReducer {
 public:
  explicit DeviceReducer(std::size_t max_n, StreamHandle stream = nullptr);
  ~DeviceReducer();
  DeviceReducer(const DeviceReducer&) = delete;
  DeviceReducer& operator=(const DeviceReducer&) = delete;
  DeviceReducer(DeviceReducer&& other) noexcept;
  DeviceReducer& operator=(DeviceReducer&& other) noexcept;

  // ---- flat, bandwidth-bound kernel
  Real reduce(ReduceOp op, const Real* d_a, std::size_t n, Combine combine = Combine::Fused);
  //! Result written to d_result (device); no host synchronisation. Combine::Host not accepted.
  void reduce_to_device(ReduceOp op, const Real* d_a, std::size_t n, Real* d_result,
                        Combine combine = Combine::Fused);
  Real cfl_max(const Real* d_u, const Real* d_v, std::size_t n, Real inv_dx, Real inv_dy,
               Combine combine = Combine::Fused);
  void cfl_max_to_device(const Real* d_u, const Real* d_v, std::size_t n, Real inv_dx,
                         Real inv_dy, Real* d_result, Combine combine = Combine::Fused);

  // ---- column kernel over an n1 x n2 row-major array (n1 rows, element (r, c) at r*n2 + c)
  //! row_chunks: blocks along the rows (gridDim.y); 0 = automatic (one wave of blocks, at
  //! least 4 rows per chunk). Clamped to [1, n1], to 65535 and to the scratch capacity.
  Real reduce_columns(ReduceOp op, const Real* d_a, std::size_t n1, std::size_t n2,
                      int row_chunks = 0, Combine combine = Combine::Fused,
                      ColumnWidth width = ColumnWidth::Auto);
  void reduce_columns_to_device(ReduceOp op, const Real* d_a, std::size_t n1, std::size_t n2,
                                Real* d_result, int row_chunks = 0,
                                Combine combine = Combine::Fused,
                                ColumnWidth width = ColumnWidth::Auto);
  Real cfl_max_columns(const Real* d_u, const Real* d_v, std::size_t n1, std::size_t n2,
                       Real inv_dx, Real inv_dy, int row_chunks = 0,
                       Combine combine = Combine::Fused, ColumnWidth width = ColumnWidth::Auto);

  //! The row chunk count reduce_columns(Max, ...) would use for this shape and request.
  int resolved_row_chunks(const Real* d_a, std::size_t n1, std::size_t n2, int row_chunks,
                          ColumnWidth width = ColumnWidth::Auto) const;

  std::size_t capacity() const { return max_n_; }
  std::size_t scratch_bytes() const { return scratch_bytes_; }
  StreamHandle stream() const { return stream_; }

 private:
  void release() noexcept;

  std::size_t max_n_ = 0;
  std::size_t max_partials_ = 0;   //!< partial slots in the scratch (and the pinned buffer)
  std::size_t scratch_bytes_ = 0;
  void* d_scratch_ = nullptr;      //!< [ticket | result | partials], zeroed at construction
  Real* h_partials_ = nullptr;     //!< pinned, max_partials_ values
  StreamHandle stream_ = nullptr;
};

//! RAII device array for tests and benchmarks (cudaMalloc / cudaFree, blocking copies).
template <class Real>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t n);
  explicit DeviceArray(const std::vector<Real>& host);  //!< allocate and upload
  ~DeviceArray();
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& other) noexcept;
  DeviceArray& operator=(DeviceArray&& other) noexcept;

  void upload(const std::vector<Real>& host);  //!< host.size() must equal size()
  std::vector<Real> download() const;
  Real* data() { return d_data_; }
  const Real* data() const { return d_data_; }
  std::size_t size() const { return n_; }

 private:
  Real* d_data_ = nullptr;
  std::size_t n_ = 0;
};

#endif  // CASCADE_HAVE_CUDA

}  // namespace cascade
