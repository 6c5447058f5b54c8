//! @file Dispatch of the GPU max variants (kernels/reduction.cuh) for DeviceMax: scratch, the
//! column kernel's plan, launches, the combines; device buffers for the bench and the tests.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

#include "cascade/error.hpp"
#include "cascade/reduction.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "kernels/reduction.cuh"
#include "kernels/reduction_ops.cuh"
#include "kernels/reduction_policy.hpp"

namespace cascade {
namespace {

namespace rk = reduction_kernels;
namespace rp = reduction_policy;

static_assert(std::is_same<StreamHandle, cudaStream_t>::value, "StreamHandle must be cudaStream_t");

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

void free_device(void* p) noexcept {
  if (cudaFree(p) != cudaSuccess) std::fprintf(stderr, "cascade: cudaFree failed\n");
}
void free_pinned(void* p) noexcept {
  if (cudaFreeHost(p) != cudaSuccess) std::fprintf(stderr, "cascade: cudaFreeHost failed\n");
}

// ---------------------------------------------------------------- scratch
// [ticket (unsigned) | result (Real) | partials (Real x capacity)], each 256-byte aligned. The
// ticket is 0 before a fused launch; fused launches leave it 0.

constexpr std::size_t kSlot = 256;

template <class Real>
struct Scratch {
  unsigned* ticket;
  Real* result;
  Real* partials;
  std::size_t capacity;      //!< partials
  std::size_t fused_blocks;  //!< the fused variant's block cap (<= capacity)
  Real* h_partials;          //!< pinned, capacity values
  int sms;
  cudaStream_t stream;
};

int sm_count() {
  int device = 0, sms = 0;
  CASCADE_CUDA_CHECK(cudaGetDevice(&device));
  CASCADE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return std::max(sms, 1);
}

// ---------------------------------------------------------------- column variant

struct ColumnPlan {
  int width = 1;                   //!< columns a thread
  unsigned blocks_x = 1;           //!< column blocks
  unsigned chunks = 1;             //!< row chunks (gridDim.y)
  std::size_t rows_per_chunk = 0;
};

template <int W, class Source>
auto column_kernel() {
  return rk::max_columns_kernel<rp::Columns::kThreads, W, rp::Columns::kRowUnroll, Source>;
}

//! Columns a thread, column blocks and row chunks: 16-byte groups where cols and the alignment
//! allow; chunks aiming at kWaves x SMs x occupancy blocks in all, >= kMinRowsPerChunk rows
//! each, within gridDim.y's limit and the partials' capacity.
template <class Source>
ColumnPlan plan_columns(const Source& src, std::size_t rows, std::size_t cols, int sms,
                        std::size_t capacity) {
  using Real = typename Source::value_type;
  constexpr int Wv = rk::Vec16<Real>::kWidth;
  constexpr int kThreads = rp::Columns::kThreads;
  ColumnPlan plan;
  const bool vector = cols % Wv == 0 && src.aligned();
  plan.width = vector ? Wv : 1;
  const std::size_t bx = std::max<std::size_t>(1, ceil_div(cols / plan.width, kThreads));
  if (bx > capacity)
    throw RunError("column max: " + std::to_string(cols) + " columns exceed the scratch capacity");
  const void* kernel = vector ? reinterpret_cast<const void*>(column_kernel<Wv, Source>())
                              : reinterpret_cast<const void*>(column_kernel<1, Source>());
  int per_sm = 0;
  CASCADE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  const std::size_t target = std::size_t(rp::Columns::kWaves) * sms * std::max(per_sm, 1);
  std::size_t chunks = std::min(ceil_div(target, bx), ceil_div(rows, rp::Columns::kMinRowsPerChunk));
  chunks = std::min({chunks, rows, std::size_t(rp::Columns::kMaxChunks), capacity / bx});
  chunks = std::max<std::size_t>(chunks, 1);
  plan.rows_per_chunk = ceil_div(rows, chunks);
  plan.chunks = rows == 0 ? 1u : static_cast<unsigned>(ceil_div(rows, plan.rows_per_chunk));
  plan.blocks_x = static_cast<unsigned>(bx);
  return plan;
}

//! Launches the column kernel; returns the partials it writes.
template <class Source>
unsigned launch_columns(const Source& src, std::size_t rows, std::size_t cols,
                        const Scratch<typename Source::value_type>& s) {
  using Real = typename Source::value_type;
  constexpr int Wv = rk::Vec16<Real>::kWidth;
  const ColumnPlan plan = plan_columns(src, rows, cols, s.sms, s.capacity);
  auto* kernel = plan.width == Wv ? column_kernel<Wv, Source>() : column_kernel<1, Source>();
  kernel<<<dim3(plan.blocks_x, plan.chunks), rp::Columns::kThreads, 0, s.stream>>>(
      src, rows, cols, plan.rows_per_chunk, s.partials);
  CASCADE_CUDA_CHECK_LAUNCH();
  return plan.blocks_x * plan.chunks;
}

// ---------------------------------------------------------------- the variants

//! Queues variant v with its result in *d_result (device).
template <class Source>
void run_to_device(MaxVariant v, const Source& src, std::size_t rows, std::size_t cols,
                   const Scratch<typename Source::value_type>& s, typename Source::value_type* d_result) {
  using Real = typename Source::value_type;
  switch (v) {
    case MaxVariant::Fused:
      rk::launch_max_for_each(rows * cols, src, s.fused_blocks, s.partials, s.ticket, d_result, s.stream);
      CASCADE_CUDA_CHECK_LAUNCH();
      return;
    case MaxVariant::ColumnTwoPass: {
      const unsigned partials = launch_columns(src, rows, cols, s);
      rk::max_partials_kernel<rp::SecondPass::kThreads, Real>
          <<<1, rp::SecondPass::kThreads, 0, s.stream>>>(s.partials, partials, d_result);
      CASCADE_CUDA_CHECK_LAUNCH();
      return;
    }
    case MaxVariant::ColumnHost:
      throw RunError("max: the column variant with the host's combine has no device result");
  }
  throw RunError("max: unknown variant");
}

//! Runs variant v and returns its value on the host (waits for the stream).
template <class Source>
typename Source::value_type run_to_host(MaxVariant v, const Source& src, std::size_t rows,
                                        std::size_t cols, const Scratch<typename Source::value_type>& s) {
  using Real = typename Source::value_type;
  if (v != MaxVariant::ColumnHost) {
    run_to_device(v, src, rows, cols, s, s.result);
    CASCADE_CUDA_CHECK(cudaMemcpyAsync(s.h_partials, s.result, sizeof(Real), cudaMemcpyDeviceToHost, s.stream));
    CASCADE_CUDA_CHECK(cudaStreamSynchronize(s.stream));
    return s.h_partials[0];
  }
  const unsigned partials = launch_columns(src, rows, cols, s);
  CASCADE_CUDA_CHECK(cudaMemcpyAsync(s.h_partials, s.partials, partials * sizeof(Real),
                                     cudaMemcpyDeviceToHost, s.stream));
  CASCADE_CUDA_CHECK(cudaStreamSynchronize(s.stream));
  const MaxOp<Real> op;
  Real total = MaxOp<Real>::identity();
  for (unsigned i = 0; i < partials; ++i) total = op(total, s.h_partials[i]);
  return total;
}

}  // namespace

const char* to_string(MaxVariant v) {
  switch (v) {
    case MaxVariant::Fused: return "fused";
    case MaxVariant::ColumnTwoPass: return "column, two-pass";
    case MaxVariant::ColumnHost: return "column, host combine";
  }
  return "?";
}

// ---------------------------------------------------------------- device buffers

template <class T>
Buffer<T> device_buffer(std::size_t n) {
  void* p = nullptr;
  CASCADE_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(n * sizeof(T), 1)));
  return Buffer<T>(static_cast<T*>(p), n, MemorySpace::Device, &free_device);
}

template <class T>
Buffer<T> to_device(const std::vector<T>& host) {
  Buffer<T> d = device_buffer<T>(host.size());
  if (!host.empty())
    CASCADE_CUDA_CHECK(cudaMemcpy(d.data(), host.data(), d.bytes(), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
std::vector<T> to_host(const Buffer<T>& device) {
  std::vector<T> host(device.size());
  if (!host.empty())
    CASCADE_CUDA_CHECK(cudaMemcpy(host.data(), device.data(), device.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

// ---------------------------------------------------------------- DeviceMax

template <class Real>
DeviceMax<Real>::DeviceMax(std::size_t max_n, StreamHandle stream)
    : max_n_(max_n), sms_(sm_count()), stream_(stream) {
  fused_blocks_ = std::size_t(rp::Fused::kBlocksPerSm) * sms_;
  // Columns: automatic chunks give less than one wave plus one row of column blocks, and a row
  // of column blocks is at most ceil(max_n / threads); a wave, at most 2048 threads an SM.
  const std::size_t wave = std::size_t(rp::Columns::kWaves) * sms_ * (2048 / rp::Columns::kThreads);
  const std::size_t capacity = std::max(fused_blocks_, wave + ceil_div(std::max<std::size_t>(max_n, 1),
                                                                       rp::Columns::kThreads));
  d_scratch_ = device_buffer<unsigned char>(2 * kSlot + capacity * sizeof(Real));
  CASCADE_CUDA_CHECK(cudaMemsetAsync(d_scratch_.data(), 0, d_scratch_.bytes(), stream_));  // ticket 0
  CASCADE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  void* h = nullptr;
  CASCADE_CUDA_CHECK(cudaMallocHost(&h, capacity * sizeof(Real)));
  h_partials_ = Buffer<Real>(static_cast<Real*>(h), capacity, MemorySpace::Host, &free_pinned);
}

namespace {
template <class Real>
Scratch<Real> scratch_of(Buffer<unsigned char>& d, Buffer<Real>& h, std::size_t fused_blocks, int sms,
                         StreamHandle stream, std::size_t rows, std::size_t cols, std::size_t max_n) {
  if (d.empty()) throw RunError("max: DeviceMax was moved from");
  if (rows != 0 && cols > max_n / rows)
    throw RunError("max: " + std::to_string(rows) + " x " + std::to_string(cols) +
                   " values exceed the capacity of " + std::to_string(max_n));
  unsigned char* base = d.data();
  return {reinterpret_cast<unsigned*>(base), reinterpret_cast<Real*>(base + kSlot),
          reinterpret_cast<Real*>(base + 2 * kSlot), h.size(), fused_blocks, h.data(), sms, stream};
}
}  // namespace

#define CASCADE_SCRATCH(rows, cols) \
  scratch_of(d_scratch_, h_partials_, fused_blocks_, sms_, stream_, rows, cols, max_n_)

template <class Real>
void DeviceMax<Real>::max_to_device(MaxVariant v, const Real* d_a, std::size_t rows, std::size_t cols,
                                    Real* d_result) {
  run_to_device(v, rk::ArraySource<Real>{d_a}, rows, cols, CASCADE_SCRATCH(rows, cols), d_result);
}

template <class Real>
void DeviceMax<Real>::cfl_max_to_device(MaxVariant v, const Real* d_u, const Real* d_v, std::size_t rows,
                                        std::size_t cols, Real inv_dx, Real inv_dy, Real* d_result) {
  run_to_device(v, rk::CflSource<Real>{d_u, d_v, {inv_dx, inv_dy}}, rows, cols, CASCADE_SCRATCH(rows, cols),
                d_result);
}

template <class Real>
Real DeviceMax<Real>::max(MaxVariant v, const Real* d_a, std::size_t rows, std::size_t cols) {
  return run_to_host(v, rk::ArraySource<Real>{d_a}, rows, cols, CASCADE_SCRATCH(rows, cols));
}

template <class Real>
Real DeviceMax<Real>::cfl_max(MaxVariant v, const Real* d_u, const Real* d_v, std::size_t rows,
                              std::size_t cols, Real inv_dx, Real inv_dy) {
  return run_to_host(v, rk::CflSource<Real>{d_u, d_v, {inv_dx, inv_dy}}, rows, cols,
                     CASCADE_SCRATCH(rows, cols));
}

#undef CASCADE_SCRATCH

template <class Real>
int DeviceMax<Real>::column_chunks(const Real* d_a, std::size_t rows, std::size_t cols) const {
  return int(plan_columns(rk::ArraySource<Real>{d_a}, rows, cols, sms_, h_partials_.size()).chunks);
}

template <class Real>
int DeviceMax<Real>::column_width(const Real* d_a, std::size_t cols) const {
  return plan_columns(rk::ArraySource<Real>{d_a}, 1, cols, sms_, h_partials_.size()).width;
}

// ---------------------------------------------------------------- instantiations

template class DeviceMax<float>;
template class DeviceMax<double>;
#define CASCADE_BUFFERS(T)                                  \
  template Buffer<T> device_buffer<T>(std::size_t);         \
  template Buffer<T> to_device<T>(const std::vector<T>&);   \
  template std::vector<T> to_host<T>(const Buffer<T>&);
CASCADE_BUFFERS(float)
CASCADE_BUFFERS(double)
CASCADE_BUFFERS(unsigned char)
#undef CASCADE_BUFFERS

}  // namespace cascade
