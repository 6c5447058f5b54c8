//! @file Dispatch of the GPU reductions: grid sizing, scratch layout, launches, combines, checks.
//! The kernels are in kernels/reduction.cuh, their launch policies in kernels/reduction_policy.hpp.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cascade/error.hpp"
#include "cascade/reduction.hpp"
#include "cuda_check.hpp"
#include "kernels/reduction.cuh"
#include "kernels/reduction_ops.cuh"
#include "kernels/reduction_policy.hpp"

namespace cascade {
namespace {

namespace rk = reduction_kernels;
namespace rp = reduction_policy;

static_assert(std::is_same<StreamHandle, cudaStream_t>::value, "StreamHandle must be cudaStream_t");

// ---------------------------------------------------------------- scratch layout
// [ticket (unsigned) | result (Real) | partials (Real x P)], each region 256-byte aligned.
// The ticket must be 0 before a fused launch; fused launches leave it 0.

constexpr std::size_t kSlot = 256;
constexpr std::size_t kTicketOffset = 0;
constexpr std::size_t kResultOffset = kSlot;
constexpr std::size_t kPartialsOffset = 2 * kSlot;

template <class Real>
struct ScratchView {
  unsigned* ticket;
  Real* result;
  Real* partials;
};

template <class Real>
ScratchView<Real> scratch_view(void* d_scratch) {
  auto* base = static_cast<char*>(d_scratch);
  return {reinterpret_cast<unsigned*>(base + kTicketOffset),
          reinterpret_cast<Real*>(base + kResultOffset),
          reinterpret_cast<Real*>(base + kPartialsOffset)};
}

template <class Real>
constexpr std::size_t scratch_bytes_for(std::size_t partials) {
  return kPartialsOffset + partials * sizeof(Real);
}

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// ---------------------------------------------------------------- device limits (cached)

struct DeviceLimits {
  int sms = 0;
  int max_threads_per_sm = 0;
};

int current_device() {
  int device = 0;
  CASCADE_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

DeviceLimits device_limits() {
  static std::mutex mutex;
  static std::map<int, DeviceLimits> cache;
  const int device = current_device();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(device);
  if (it != cache.end()) return it->second;
  DeviceLimits limits;
  CASCADE_CUDA_CHECK(cudaDeviceGetAttribute(&limits.sms, cudaDevAttrMultiProcessorCount, device));
  CASCADE_CUDA_CHECK(cudaDeviceGetAttribute(&limits.max_threads_per_sm,
                                            cudaDevAttrMaxThreadsPerMultiProcessor, device));
  cache.emplace(device, limits);
  return limits;
}

//! Resident blocks per SM of `kernel` at `threads` threads (occupancy calculator), cached.
int blocks_per_sm(const void* kernel, int threads) {
  static std::mutex mutex;
  static std::map<std::tuple<const void*, int, int>, int> cache;
  const int device = current_device();
  const auto key = std::make_tuple(kernel, device, threads);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  int blocks = 0;
  CASCADE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0));
  blocks = std::max(blocks, 1);
  cache.emplace(key, blocks);
  return blocks;
}

//! Upper bound on the resident blocks of any kernel of `threads` threads, times `waves`:
//! what the scratch is sized for, independent of a kernel's actual occupancy.
std::size_t max_wave_blocks(int waves, int threads) {
  const DeviceLimits limits = device_limits();
  return std::size_t(waves) * std::size_t(limits.sms) *
         std::size_t(std::max(1, limits.max_threads_per_sm / threads));
}

std::size_t flat_partials_bound() {
  return max_wave_blocks(rp::Flat::kWaves, rp::Flat::kThreads);
}

// ---------------------------------------------------------------- op dispatch

template <class Real, class F>
Real with_op(ReduceOp op, F&& f) {
  switch (op) {
    case ReduceOp::Max: return f(MaxOp<Real>{});
    case ReduceOp::Min: return f(MinOp<Real>{});
    case ReduceOp::Sum: return f(SumOp<Real>{});
  }
  throw RunError("reduction: unknown ReduceOp");
}

template <class Real>
using ArraySource = rk::OneArray<Real, Identity<Real>>;
template <class Real>
using CflSource = rk::TwoArrays<Real, CflSpeed<Real>>;

template <class Real>
bool aligned16(const Real* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}
template <class Real, class T>
bool aligned16(const rk::OneArray<Real, T>& s) {
  return aligned16(s.a);
}
template <class Real, class T>
bool aligned16(const rk::TwoArrays<Real, T>& s) {
  return aligned16(s.a) && aligned16(s.b);
}

template <class Real, class T>
std::pair<const Real*, const Real*> pointers(const rk::OneArray<Real, T>& s) {
  return {s.a, s.a};
}
template <class Real, class T>
std::pair<const Real*, const Real*> pointers(const rk::TwoArrays<Real, T>& s) {
  return {s.a, s.b};
}

// ---------------------------------------------------------------- combine (shared by both kernels)

//! Runs `launch(fused_tag, d_result) -> blocks` and completes the reduction per `combine`.
//! Fused / TwoPass write *d_result (device). Host returns the value (synchronises `stream`).
template <class Real, class Op, class Launch>
Real run_combined(Launch&& launch, Op op, ScratchView<Real> s, Real* d_result, Combine combine,
                  cudaStream_t stream, Real* h_buffer) {
  switch (combine) {
    case Combine::Fused:
      launch(std::true_type{}, d_result);
      return Op::identity();
    case Combine::TwoPass: {
      const unsigned blocks = launch(std::false_type{}, d_result);
      if (blocks > 1) {  // one block already wrote *d_result
        rk::finalize_kernel<rp::Finalize::kThreads, rp::Finalize::kUnroll>
            <<<1, rp::Finalize::kThreads, 0, stream>>>(s.partials, blocks, op, d_result);
        CASCADE_CUDA_CHECK_LAUNCH();
      }
      return Op::identity();
    }
    case Combine::Host: {
      const unsigned blocks = launch(std::false_type{}, static_cast<Real*>(nullptr));
      CASCADE_CUDA_CHECK(cudaMemcpyAsync(h_buffer, s.partials, blocks * sizeof(Real),
                                         cudaMemcpyDeviceToHost, stream));
      CASCADE_CUDA_CHECK(cudaStreamSynchronize(stream));
      // NaN-propagating op; blocks of 1024 keep the serial chain (a sum's rounding) short.
      constexpr unsigned kHostBlock = 1024;
      Real total = Op::identity();
      for (unsigned b = 0; b < blocks; b += kHostBlock) {
        Real part = Op::identity();
        for (unsigned i = b; i < std::min(blocks, b + kHostBlock); ++i) part = op(part, h_buffer[i]);
        total = op(total, part);
      }
      return total;
    }
  }
  throw RunError("reduction: unknown Combine");
}

//! As run_combined, but always returns the value on the host (Fused/TwoPass go through the
//! scratch's result slot and one 1-value copy).
template <class Real, class Op, class Launch>
Real run_to_host(Launch&& launch, Op op, ScratchView<Real> s, Combine combine, cudaStream_t stream,
                 Real* h_buffer) {
  if (combine == Combine::Host)
    return run_combined(launch, op, s, static_cast<Real*>(nullptr), combine, stream, h_buffer);
  run_combined(launch, op, s, s.result, combine, stream, h_buffer);
  CASCADE_CUDA_CHECK(
      cudaMemcpyAsync(h_buffer, s.result, sizeof(Real), cudaMemcpyDeviceToHost, stream));
  CASCADE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h_buffer[0];
}

void require_device_combine(Combine combine, const char* what) {
  if (combine == Combine::Host)
    throw RunError(std::string(what) +
                   ": Combine::Host returns the value on the host; use the value-returning call");
}

// ---------------------------------------------------------------- flat kernel

//! Cut [0, n) for 16-byte loads (see rk::FlatRange). Sources whose offsets modulo 16 bytes
//! differ cannot share vector indices: they take the scalar grid-stride path.
template <class Real>
rk::FlatRange flat_range(const Real* a, const Real* b, std::size_t n) {
  constexpr std::size_t W = rk::Vec16<Real>::kWidth;
  const std::size_t ma = reinterpret_cast<std::uintptr_t>(a) % 16;
  const std::size_t mb = reinterpret_cast<std::uintptr_t>(b) % 16;
  if (ma != mb || ma % sizeof(Real) != 0) return {0, 0, 0, n};
  const std::size_t head = std::min(n, ((16 - ma) % 16) / sizeof(Real));
  const std::size_t nvec = (n - head) / W;
  return {head, nvec, n - head - nvec * W, 0};
}

template <bool FUSED, class Source, class Op>
unsigned launch_flat(const Source& src, Op op, std::size_t n,
                     ScratchView<typename Source::value_type> s,
                     typename Source::value_type* d_result, cudaStream_t stream) {
  using Real = typename Source::value_type;
  constexpr int kThreads = rp::Flat::kThreads;
  constexpr int kUnroll = rp::Flat::kUnroll;
  constexpr std::size_t W = rk::Vec16<Real>::kWidth;
  auto* kernel = rk::reduce_flat_kernel<kThreads, kUnroll, rp::Finalize::kUnroll, FUSED, Source, Op>;

  const auto ptrs = pointers(src);
  const rk::FlatRange range = flat_range(ptrs.first, ptrs.second, n);
  // Work in 16-byte units; enough blocks that each thread gets one unrolled iteration, at most
  // one wave of resident blocks (then the grid-stride loop takes the rest).
  const std::size_t units = range.scalar_n > 0 ? ceil_div(range.scalar_n, W) : range.nvec;
  const std::size_t wanted = std::max<std::size_t>(1, ceil_div(units, std::size_t(kThreads) * kUnroll));
  const std::size_t resident = std::size_t(rp::Flat::kWaves) * device_limits().sms *
                               blocks_per_sm(reinterpret_cast<const void*>(kernel), kThreads);
  const unsigned blocks = static_cast<unsigned>(std::min(wanted, resident));
  kernel<<<blocks, kThreads, 0, stream>>>(src, op, range, s.partials, s.ticket, d_result);
  CASCADE_CUDA_CHECK_LAUNCH();
  return blocks;
}

template <class Source, class Op>
auto flat_launcher(const Source& src, Op op, std::size_t n, ScratchView<typename Source::value_type> s,
                   cudaStream_t stream) {
  return [=](auto fused, typename Source::value_type* d_result) -> unsigned {
    return launch_flat<decltype(fused)::value>(src, op, n, s, d_result, stream);
  };
}

// ---------------------------------------------------------------- column kernel

struct ColumnPlan {
  unsigned blocks_x = 1;          //!< column blocks
  unsigned chunks = 1;            //!< row chunks (gridDim.y)
  std::size_t rows_per_chunk = 1;
  int width = 1;                  //!< columns per thread
};

template <class Source, int W, bool FUSED, class Op>
auto column_kernel() {
  return rk::reduce_columns_kernel<rp::Columns::kThreads, W, rp::Columns::kRowUnroll,
                                   rp::Finalize::kUnroll, FUSED, Source, Op>;
}

//! Columns per thread, column blocks and row chunks. Automatic chunks (requested <= 0) aim at
//! kWaves x SMs x occupancy blocks in all, with >= kMinRowsPerChunk rows per chunk. Any request
//! is clamped to [1, n1], to gridDim.y's limit and so that the partials fit `max_partials`.
template <bool FUSED, class Source, class Op>
ColumnPlan plan_columns(const Source& src, Op, std::size_t n1, std::size_t n2, int requested,
                        ColumnWidth width, std::size_t max_partials) {
  using Real = typename Source::value_type;
  constexpr int Wv = rk::Vec16<Real>::kWidth;
  constexpr int kThreads = rp::Columns::kThreads;
  ColumnPlan plan;
  const bool vector = width == ColumnWidth::Auto && n2 % Wv == 0 && aligned16(src);
  plan.width = vector ? Wv : 1;
  if (n1 == 0 || n2 == 0) return plan;  // empty: one block writes the identity

  const std::size_t bx = ceil_div(n2 / plan.width, kThreads);
  if (bx > max_partials)
    throw RunError("reduce_columns: " + std::to_string(n2) + " columns exceed the scratch capacity");
  std::size_t chunks;
  if (requested <= 0) {
    const void* kernel = vector ? reinterpret_cast<const void*>(column_kernel<Source, Wv, FUSED, Op>())
                                : reinterpret_cast<const void*>(column_kernel<Source, 1, FUSED, Op>());
    const std::size_t target = std::size_t(rp::Columns::kWaves) * device_limits().sms *
                               blocks_per_sm(kernel, kThreads);
    chunks = std::min(ceil_div(target, bx), ceil_div(n1, rp::Columns::kMinRowsPerChunk));
  } else {
    chunks = std::size_t(requested);
  }
  chunks = std::min({chunks, n1, std::size_t(rp::Columns::kMaxChunks), max_partials / bx});
  chunks = std::max<std::size_t>(chunks, 1);
  plan.rows_per_chunk = ceil_div(n1, chunks);
  plan.chunks = static_cast<unsigned>(ceil_div(n1, plan.rows_per_chunk));  // no empty chunk
  plan.blocks_x = static_cast<unsigned>(bx);
  return plan;
}

template <bool FUSED, class Source, class Op>
unsigned launch_columns(const Source& src, Op op, std::size_t n1, std::size_t n2,
                        const ColumnPlan& plan, ScratchView<typename Source::value_type> s,
                        typename Source::value_type* d_result, cudaStream_t stream) {
  using Real = typename Source::value_type;
  constexpr int Wv = rk::Vec16<Real>::kWidth;
  const dim3 grid(plan.blocks_x, plan.chunks);
  auto* kernel = plan.width == Wv ? column_kernel<Source, Wv, FUSED, Op>()
                                  : column_kernel<Source, 1, FUSED, Op>();
  kernel<<<grid, rp::Columns::kThreads, 0, stream>>>(src, op, n1, n2, plan.rows_per_chunk,
                                                     s.partials, s.ticket, d_result);
  CASCADE_CUDA_CHECK_LAUNCH();
  return plan.blocks_x * plan.chunks;
}

template <class Source, class Op>
auto column_launcher(const Source& src, Op op, std::size_t n1, std::size_t n2, int row_chunks,
                     ColumnWidth width, std::size_t max_partials,
                     ScratchView<typename Source::value_type> s, cudaStream_t stream) {
  return [=](auto fused, typename Source::value_type* d_result) -> unsigned {
    constexpr bool kFused = decltype(fused)::value;
    const ColumnPlan plan = plan_columns<kFused>(src, op, n1, n2, row_chunks, width, max_partials);
    return launch_columns<kFused>(src, op, n1, n2, plan, s, d_result, stream);
  };
}

void check_scratch(const void* d_scratch, std::size_t have, std::size_t need, const char* what) {
  if (have < need)
    throw RunError(std::string(what) + ": scratch of " + std::to_string(have) +
                   " bytes, need " + std::to_string(need));
  if (reinterpret_cast<std::uintptr_t>(d_scratch) % kSlot != 0)
    throw RunError(std::string(what) + ": scratch must be 256-byte aligned (as cudaMalloc returns)");
}

}  // namespace

// ---------------------------------------------------------------- CUB-style free functions

template <class Real>
std::size_t reduction_scratch_bytes() {
  return scratch_bytes_for<Real>(flat_partials_bound());
}

template <class Real>
void reduce_device(void* d_scratch, std::size_t& scratch_bytes, ReduceOp op, const Real* d_a,
                   std::size_t n, Real* d_result, Combine combine, StreamHandle stream) {
  if (d_scratch == nullptr) {
    scratch_bytes = reduction_scratch_bytes<Real>();
    return;
  }
  require_device_combine(combine, "reduce_device");
  check_scratch(d_scratch, scratch_bytes, reduction_scratch_bytes<Real>(), "reduce_device");
  const auto s = scratch_view<Real>(d_scratch);
  with_op<Real>(op, [&](auto o) {
    return run_combined(flat_launcher(ArraySource<Real>{d_a, {}}, o, n, s, stream), o, s,
                        d_result, combine, stream, static_cast<Real*>(nullptr));
  });
}

template <class Real>
void cfl_max_device(void* d_scratch, std::size_t& scratch_bytes, const Real* d_u, const Real* d_v,
                    std::size_t n, Real inv_dx, Real inv_dy, Real* d_result, Combine combine,
                    StreamHandle stream) {
  if (d_scratch == nullptr) {
    scratch_bytes = reduction_scratch_bytes<Real>();
    return;
  }
  require_device_combine(combine, "cfl_max_device");
  check_scratch(d_scratch, scratch_bytes, reduction_scratch_bytes<Real>(), "cfl_max_device");
  const auto s = scratch_view<Real>(d_scratch);
  const MaxOp<Real> op;
  run_combined(flat_launcher(CflSource<Real>{d_u, d_v, {inv_dx, inv_dy}}, op, n, s, stream), op, s,
               d_result, combine, stream, static_cast<Real*>(nullptr));
}

// ---------------------------------------------------------------- DeviceReducer

template <class Real>
DeviceReducer<Real>::DeviceReducer(std::size_t max_n, StreamHandle stream)
    : max_n_(max_n), stream_(stream) {
  // Flat: one wave of blocks. Columns: automatic chunks give < one wave + one row of column
  // blocks, and a row of column blocks is at most ceil(max_n / threads) (n2 <= max_n).
  const std::size_t column_partials =
      max_wave_blocks(rp::Columns::kWaves, rp::Columns::kThreads) +
      ceil_div(std::max<std::size_t>(max_n, 1), rp::Columns::kThreads);
  max_partials_ = std::max(flat_partials_bound(), column_partials);
  scratch_bytes_ = scratch_bytes_for<Real>(max_partials_);
  CASCADE_CUDA_CHECK(cudaMalloc(&d_scratch_, scratch_bytes_));
  try {
    CASCADE_CUDA_CHECK(cudaMemsetAsync(d_scratch_, 0, scratch_bytes_, stream_));  // ticket = 0
    CASCADE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    CASCADE_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&h_partials_),
                                      max_partials_ * sizeof(Real)));
  } catch (...) {
    release();
    throw;
  }
}

template <class Real>
void DeviceReducer<Real>::release() noexcept {
  if (d_scratch_) cudaFree(d_scratch_);
  if (h_partials_) cudaFreeHost(h_partials_);
  d_scratch_ = nullptr;
  h_partials_ = nullptr;
}

template <class Real>
DeviceReducer<Real>::~DeviceReducer() {
  release();
}

template <class Real>
DeviceReducer<Real>::DeviceReducer(DeviceReducer&& other) noexcept
    : max_n_(other.max_n_),
      max_partials_(other.max_partials_),
      scratch_bytes_(other.scratch_bytes_),
      d_scratch_(std::exchange(other.d_scratch_, nullptr)),
      h_partials_(std::exchange(other.h_partials_, nullptr)),
      stream_(other.stream_) {}

template <class Real>
DeviceReducer<Real>& DeviceReducer<Real>::operator=(DeviceReducer&& other) noexcept {
  if (this != &other) {
    release();
    max_n_ = other.max_n_;
    max_partials_ = other.max_partials_;
    scratch_bytes_ = other.scratch_bytes_;
    d_scratch_ = std::exchange(other.d_scratch_, nullptr);
    h_partials_ = std::exchange(other.h_partials_, nullptr);
    stream_ = other.stream_;
  }
  return *this;
}

namespace {
void check_capacity(std::size_t n1, std::size_t n2, std::size_t max_n, bool has_scratch,
                    const char* what) {
  if (!has_scratch) throw RunError(std::string(what) + ": reducer was moved from");
  if (n1 != 0 && n2 > max_n / n1)
    throw RunError(std::string(what) + ": " + std::to_string(n1) + " x " + std::to_string(n2) +
                   " elements exceed the reducer's capacity of " + std::to_string(max_n));
}
}  // namespace

template <class Real>
Real DeviceReducer<Real>::reduce(ReduceOp op, const Real* d_a, std::size_t n, Combine combine) {
  check_capacity(1, n, max_n_, d_scratch_ != nullptr, "DeviceReducer::reduce");
  const auto s = scratch_view<Real>(d_scratch_);
  return with_op<Real>(op, [&](auto o) {
    return run_to_host(flat_launcher(ArraySource<Real>{d_a, {}}, o, n, s, stream_), o, s, combine,
                       stream_, h_partials_);
  });
}

template <class Real>
void DeviceReducer<Real>::reduce_to_device(ReduceOp op, const Real* d_a, std::size_t n,
                                           Real* d_result, Combine combine) {
  check_capacity(1, n, max_n_, d_scratch_ != nullptr, "DeviceReducer::reduce_to_device");
  require_device_combine(combine, "DeviceReducer::reduce_to_device");
  const auto s = scratch_view<Real>(d_scratch_);
  with_op<Real>(op, [&](auto o) {
    return run_combined(flat_launcher(ArraySource<Real>{d_a, {}}, o, n, s, stream_), o, s,
                        d_result, combine, stream_, h_partials_);
  });
}

template <class Real>
Real DeviceReducer<Real>::cfl_max(const Real* d_u, const Real* d_v, std::size_t n, Real inv_dx,
                                  Real inv_dy, Combine combine) {
  check_capacity(1, n, max_n_, d_scratch_ != nullptr, "DeviceReducer::cfl_max");
  const auto s = scratch_view<Real>(d_scratch_);
  const MaxOp<Real> op;
  return run_to_host(flat_launcher(CflSource<Real>{d_u, d_v, {inv_dx, inv_dy}}, op, n, s, stream_),
                     op, s, combine, stream_, h_partials_);
}

template <class Real>
void DeviceReducer<Real>::cfl_max_to_device(const Real* d_u, const Real* d_v, std::size_t n,
                                            Real inv_dx, Real inv_dy, Real* d_result,
                                            Combine combine) {
  check_capacity(1, n, max_n_, d_scratch_ != nullptr, "DeviceReducer::cfl_max_to_device");
  require_device_combine(combine, "DeviceReducer::cfl_max_to_device");
  const auto s = scratch_view<Real>(d_scratch_);
  const MaxOp<Real> op;
  run_combined(flat_launcher(CflSource<Real>{d_u, d_v, {inv_dx, inv_dy}}, op, n, s, stream_), op, s,
               d_result, combine, stream_, h_partials_);
}

template <class Real>
Real DeviceReducer<Real>::reduce_columns(ReduceOp op, const Real* d_a, std::size_t n1,
                                         std::size_t n2, int row_chunks, Combine combine,
                                         ColumnWidth width) {
  check_capacity(n1, n2, max_n_, d_scratch_ != nullptr, "DeviceReducer::reduce_columns");
  const auto s = scratch_view<Real>(d_scratch_);
  return with_op<Real>(op, [&](auto o) {
    return run_to_host(column_launcher(ArraySource<Real>{d_a, {}}, o, n1, n2, row_chunks, width,
                                       max_partials_, s, stream_),
                       o, s, combine, stream_, h_partials_);
  });
}

template <class Real>
void DeviceReducer<Real>::reduce_columns_to_device(ReduceOp op, const Real* d_a, std::size_t n1,
                                                   std::size_t n2, Real* d_result, int row_chunks,
                                                   Combine combine, ColumnWidth width) {
  check_capacity(n1, n2, max_n_, d_scratch_ != nullptr, "DeviceReducer::reduce_columns_to_device");
  require_device_combine(combine, "DeviceReducer::reduce_columns_to_device");
  const auto s = scratch_view<Real>(d_scratch_);
  with_op<Real>(op, [&](auto o) {
    return run_combined(column_launcher(ArraySource<Real>{d_a, {}}, o, n1, n2, row_chunks, width,
                                        max_partials_, s, stream_),
                        o, s, d_result, combine, stream_, h_partials_);
  });
}

template <class Real>
Real DeviceReducer<Real>::cfl_max_columns(const Real* d_u, const Real* d_v, std::size_t n1,
                                          std::size_t n2, Real inv_dx, Real inv_dy, int row_chunks,
                                          Combine combine, ColumnWidth width) {
  check_capacity(n1, n2, max_n_, d_scratch_ != nullptr, "DeviceReducer::cfl_max_columns");
  const auto s = scratch_view<Real>(d_scratch_);
  const MaxOp<Real> op;
  return run_to_host(column_launcher(CflSource<Real>{d_u, d_v, {inv_dx, inv_dy}}, op, n1, n2,
                                     row_chunks, width, max_partials_, s, stream_),
                     op, s, combine, stream_, h_partials_);
}

template <class Real>
int DeviceReducer<Real>::resolved_row_chunks(const Real* d_a, std::size_t n1, std::size_t n2,
                                             int row_chunks, ColumnWidth width) const {
  const ColumnPlan plan = plan_columns<true>(ArraySource<Real>{d_a, {}}, MaxOp<Real>{}, n1, n2,
                                             row_chunks, width, max_partials_);
  return static_cast<int>(plan.chunks);
}

// ---------------------------------------------------------------- DeviceArray

template <class Real>
DeviceArray<Real>::DeviceArray(std::size_t n) : n_(n) {
  if (n_ > 0) CASCADE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&d_data_), n_ * sizeof(Real)));
}

template <class Real>
DeviceArray<Real>::DeviceArray(const std::vector<Real>& host) : DeviceArray(host.size()) {
  upload(host);
}

template <class Real>
DeviceArray<Real>::~DeviceArray() {
  if (d_data_) cudaFree(d_data_);
}

template <class Real>
DeviceArray<Real>::DeviceArray(DeviceArray&& other) noexcept
    : d_data_(std::exchange(other.d_data_, nullptr)), n_(std::exchange(other.n_, 0)) {}

template <class Real>
DeviceArray<Real>& DeviceArray<Real>::operator=(DeviceArray&& other) noexcept {
  if (this != &other) {
    if (d_data_) cudaFree(d_data_);
    d_data_ = std::exchange(other.d_data_, nullptr);
    n_ = std::exchange(other.n_, 0);
  }
  return *this;
}

template <class Real>
void DeviceArray<Real>::upload(const std::vector<Real>& host) {
  if (host.size() != n_)
    throw RunError("DeviceArray::upload: " + std::to_string(host.size()) + " values for an array of " +
                   std::to_string(n_));
  if (n_ > 0)
    CASCADE_CUDA_CHECK(cudaMemcpy(d_data_, host.data(), n_ * sizeof(Real), cudaMemcpyHostToDevice));
}

template <class Real>
std::vector<Real> DeviceArray<Real>::download() const {
  std::vector<Real> host(n_);
  if (n_ > 0)
    CASCADE_CUDA_CHECK(cudaMemcpy(host.data(), d_data_, n_ * sizeof(Real), cudaMemcpyDeviceToHost));
  return host;
}

// ---------------------------------------------------------------- instantiations

#define CASCADE_REDUCTION_INSTANTIATE(Real)                                                       \
  template std::size_t reduction_scratch_bytes<Real>();                                          \
  template void reduce_device<Real>(void*, std::size_t&, ReduceOp, const Real*, std::size_t,     \
                                    Real*, Combine, StreamHandle);                               \
  template void cfl_max_device<Real>(void*, std::size_t&, const Real*, const Real*, std::size_t, \
                                     Real, Real, Real*, Combine, StreamHandle);                  \
  template class DeviceReducer<Real>;                                                            \
  template class DeviceArray<Real>;

CASCADE_REDUCTION_INSTANTIATE(float)
CASCADE_REDUCTION_INSTANTIATE(double)

#undef CASCADE_REDUCTION_INSTANTIATE

}  // namespace cascade
