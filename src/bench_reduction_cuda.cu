//! @file GPU rows of `cascade bench reduction`: our reductions against a read-only reference
//! kernel, a device-to-device copy and CUB (DeviceReduce::Max, DeviceReduce::TransformReduce).
//!
//! Method: random data in [-1, 1) (never zeros, half negative), 2 warm-up runs, then
//! options.repeats timed runs, each preceded (outside the timed region) by a cudaMemsetAsync of
//! a buffer of 2 x L2 so that every run reads from HBM; CUDA events on the default stream;
//! the median is reported. GB/s = bytes read / time (copy: bytes read + written). "%read" is
//! relative to the read-only reference kernel at the same element count; "vs_cub" to CUB Max
//! (CFL rows: CUB TransformReduce) at the same count. Rows that return the value to the host
//! (combine "host", cfl columns) include the copy and the synchronisation.
#include <cuda_runtime.h>

#include <cub/device/device_reduce.cuh>
#include <cuda/functional>
#include <cuda/std/tuple>
#include <thrust/iterator/zip_iterator.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "cascade/bench.hpp"
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

//! The CFL speed of a (u, v) tuple, for CUB's TransformReduce over a zip iterator.
template <class Real>
struct CflSpeedOfTuple {
  CflSpeed<Real> speed;
  template <class Tuple>
  __device__ Real operator()(const Tuple& t) const {
    return speed(::cuda::std::get<0>(t), ::cuda::std::get<1>(t));
  }
};

//! Device memory that the benchmark owns (raw bytes).
class DeviceBytes {
 public:
  explicit DeviceBytes(std::size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) CASCADE_CUDA_CHECK(cudaMalloc(&ptr_, bytes_));
  }
  ~DeviceBytes() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  void* get() const { return ptr_; }
  std::size_t size() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

//! CUDA-event timer with an L2 flush between runs.
class Timer {
 public:
  Timer(std::size_t flush_bytes, int repeats) : flush_(flush_bytes), repeats_(std::max(repeats, 1)) {
    CASCADE_CUDA_CHECK(cudaEventCreate(&start_));
    CASCADE_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~Timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  //! Median time of f() in microseconds.
  template <class F>
  double median_us(F&& f) {
    for (int w = 0; w < 2; ++w) f();
    CASCADE_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> ms;
    for (int r = 0; r < repeats_; ++r) {
      CASCADE_CUDA_CHECK(cudaMemsetAsync(flush_.get(), r & 0xff, flush_.size(), nullptr));
      CASCADE_CUDA_CHECK(cudaEventRecord(start_, nullptr));
      f();
      CASCADE_CUDA_CHECK(cudaEventRecord(stop_, nullptr));
      CASCADE_CUDA_CHECK(cudaEventSynchronize(stop_));
      float t = 0;
      CASCADE_CUDA_CHECK(cudaEventElapsedTime(&t, start_, stop_));
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return 1e3 * ms[ms.size() / 2];
  }

 private:
  DeviceBytes flush_;
  int repeats_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

struct Row {
  std::string shape;
  std::size_t elements = 0;
  std::string variant;
  int chunks = -1;  //!< -1: not a column row
  double us = 0;
  double gbps = 0;
  double pct_read = NAN;
  double vs_cub = NAN;
  std::string check;
};

class Table {
 public:
  Table(const std::string& csv_path, const char* precision) : precision_(precision) {
    if (!csv_path.empty()) {
      csv_.open(csv_path, std::ios::app);  // the CPU part wrote the header
      if (!csv_) throw InputError("--csv: cannot append to " + csv_path);
    }
  }
  void add(const Row& r) {
    char chunks[16] = "";
    if (r.chunks >= 0) std::snprintf(chunks, sizeof chunks, "%d", r.chunks);
    char pct[16] = "", vs[16] = "";
    if (!std::isnan(r.pct_read)) std::snprintf(pct, sizeof pct, "%.1f", r.pct_read);
    if (!std::isnan(r.vs_cub)) std::snprintf(vs, sizeof vs, "%.3f", r.vs_cub);
    std::printf("%-7s %-9s %-12s %11zu  %-44s %6s %11.2f %9.1f %6s %6s  %s\n", "gpu", precision_,
                r.shape.c_str(), r.elements, r.variant.c_str(), chunks, r.us, r.gbps, pct, vs,
                r.check.c_str());
    std::fflush(stdout);
    if (csv_)
      csv_ << "gpu," << precision_ << "," << r.shape << "," << r.elements << ",\"" << r.variant << "\","
           << chunks << "," << r.us << "," << r.gbps << "," << pct << "," << vs << "," << r.check
           << "\n";
    if (r.check == "MISMATCH") ok_ = false;
  }
  bool ok() const { return ok_; }

 private:
  const char* precision_;
  std::ofstream csv_;
  bool ok_ = true;
};

template <class Real>
void fill_uniform(Real* d_a, std::size_t n, std::uint64_t seed, int sms) {
  rk::fill_uniform_kernel<Real><<<sms * 8, 256>>>(d_a, n, seed, -1.0, 1.0);
  CASCADE_CUDA_CHECK_LAUNCH();
  CASCADE_CUDA_CHECK(cudaDeviceSynchronize());
}

template <class Real>
Real read_back(const Real* d_value) {
  Real v{};
  CASCADE_CUDA_CHECK(cudaMemcpy(&v, d_value, sizeof(Real), cudaMemcpyDeviceToHost));
  return v;
}

const char* same(double a, double b) { return (a == b || (std::isnan(a) && std::isnan(b))) ? "ok" : "MISMATCH"; }

//! Everything measured for one precision.
template <class Real>
class PrecisionBench {
 public:
  PrecisionBench(const BenchOptions& o, std::size_t max_n, const cudaDeviceProp& prop)
      : table_(o.csv, to_string(precision_of<Real>())),
        timer_(2 * std::size_t(std::max(prop.l2CacheSize, 1 << 20)), o.repeats),
        sms_(prop.multiProcessorCount),
        max_n_(max_n),
        a_(max_n),
        b_(max_n),
        out_(4),
        reducer_(max_n) {
    // CUB scratch for the largest input, queried up front (not in the timed region).
    std::size_t max_bytes = 0, tr_bytes = 0;
    CASCADE_CUDA_CHECK(cub::DeviceReduce::Max(nullptr, max_bytes, a_.data(), out_.data(), int(max_n)));
    CASCADE_CUDA_CHECK(cub::DeviceReduce::TransformReduce(
        nullptr, tr_bytes, thrust::make_zip_iterator(a_.data(), b_.data()), out_.data(), int(max_n),
        ::cuda::maximum<>{}, CflSpeedOfTuple<Real>{{Real(1), Real(1)}}, MaxOp<Real>::identity()));
    cub_bytes_ = std::max(max_bytes, tr_bytes);
    cub_temp_ = std::make_unique<DeviceBytes>(cub_bytes_);
    fill_uniform(a_.data(), max_n, 1, sms_);
    fill_uniform(b_.data(), max_n, 2, sms_);
  }

  bool ok() const { return table_.ok(); }

  //! Rows for a flat array of n elements.
  void flat(std::size_t n) {
    const std::string shape = "flat";
    const double bytes = double(n) * sizeof(Real);
    const double read_gbps = read_reference(shape, n);

    // Device-to-device copy a -> b (bytes read + written), then restore b's own random data.
    const double copy_us = timer_.median_us([&] {
      CASCADE_CUDA_CHECK(cudaMemcpyAsync(b_.data(), a_.data(), n * sizeof(Real),
                                         cudaMemcpyDeviceToDevice, nullptr));
    });
    add(shape, n, "cudaMemcpyAsync D2D (read+write)", -1, copy_us, 2 * bytes, read_gbps, NAN, "");
    fill_uniform(b_.data(), max_n_, 2, sms_);

    const double cub_gbps = cub_max(shape, n, read_gbps);
    const Real want = read_back(out_.data());
    Real* d_ours = out_.data() + 1;
    for (Combine c : {Combine::Fused, Combine::TwoPass}) {
      const double us = timer_.median_us(
          [&] { reducer_.reduce_to_device(ReduceOp::Max, a_.data(), n, d_ours, c); });
      add(shape, n, std::string("ours flat vectorized, ") + to_string(c), -1, us, bytes, read_gbps,
          cub_gbps, same(read_back(d_ours), want));
    }
    {
      Real got{};
      const double us = timer_.median_us(
          [&] { got = reducer_.reduce(ReduceOp::Max, a_.data(), n, Combine::Host); });
      add(shape, n, "ours flat vectorized, host (incl. copy)", -1, us, bytes, read_gbps, cub_gbps,
          same(got, want));
    }
    cfl(shape, n, read_gbps);
  }

  //! Rows for an n1 x n1 field.
  void field(std::size_t side) {
    const std::size_t n = side * side;
    const std::string shape = std::to_string(side) + "x" + std::to_string(side);
    const double bytes = double(n) * sizeof(Real);
    const double read_gbps = read_reference(shape, n);
    const double cub_gbps = cub_max(shape, n, read_gbps);
    const Real want = read_back(out_.data());
    Real* d_ours = out_.data() + 1;

    struct Case {
      const char* label;
      int chunks;
      Combine combine;
      ColumnWidth width;
    };
    const Case cases[] = {
        {"column 1 chunk scalar (1 thread/column), host", 1, Combine::Host, ColumnWidth::Scalar},
        {"column 1 chunk scalar, fused", 1, Combine::Fused, ColumnWidth::Scalar},
        {"column 1 chunk 16B-columns, fused", 1, Combine::Fused, ColumnWidth::Auto},
        {"column 8 chunks 16B-columns, fused", 8, Combine::Fused, ColumnWidth::Auto},
        {"column 64 chunks 16B-columns, fused", 64, Combine::Fused, ColumnWidth::Auto},
        {"column auto chunks scalar, fused", 0, Combine::Fused, ColumnWidth::Scalar},
        {"column auto chunks 16B-columns, host", 0, Combine::Host, ColumnWidth::Auto},
        {"column auto chunks 16B-columns, two-pass", 0, Combine::TwoPass, ColumnWidth::Auto},
        {"column auto chunks 16B-columns, fused", 0, Combine::Fused, ColumnWidth::Auto},
    };
    for (const Case& k : cases) {
      const int chunks = reducer_.resolved_row_chunks(a_.data(), side, side, k.chunks, k.width);
      if (k.combine == Combine::Host) {
        Real got{};
        const double us = timer_.median_us([&] {
          got = reducer_.reduce_columns(ReduceOp::Max, a_.data(), side, side, k.chunks, k.combine,
                                        k.width);
        });
        add(shape, n, k.label, chunks, us, bytes, read_gbps, cub_gbps, same(got, want));
      } else {
        const double us = timer_.median_us([&] {
          reducer_.reduce_columns_to_device(ReduceOp::Max, a_.data(), side, side, d_ours, k.chunks,
                                            k.combine, k.width);
        });
        add(shape, n, k.label, chunks, us, bytes, read_gbps, cub_gbps,
            same(read_back(d_ours), want));
      }
    }
    // Two-array CFL maximum on the field: flat kernel, column kernel, CUB.
    const double cub_tr_gbps = cfl(shape, n, read_gbps);
    const Real inv_dx = Real(side), inv_dy = Real(side) / 2;
    const Real cfl_want = read_back(out_.data());
    Real got{};
    const double us = timer_.median_us([&] {
      got = reducer_.cfl_max_columns(a_.data(), b_.data(), side, side, inv_dx, inv_dy, 0);
    });
    add(shape, n, "ours CFL column auto chunks (incl. copy)",
        reducer_.resolved_row_chunks(a_.data(), side, side, 0), us, 2 * bytes, read_gbps,
        cub_tr_gbps, same(got, cfl_want));
  }

 private:
  void add(const std::string& shape, std::size_t n, const std::string& variant, int chunks, double us,
           double bytes, double read_gbps, double cub_gbps, const std::string& check) {
    Row r;
    r.shape = shape;
    r.elements = n;
    r.variant = variant;
    r.chunks = chunks;
    r.us = us;
    r.gbps = bytes / us / 1e3;
    r.pct_read = read_gbps > 0 ? 100.0 * r.gbps / read_gbps : NAN;
    r.vs_cub = cub_gbps > 0 ? r.gbps / cub_gbps : NAN;
    r.check = check;
    table_.add(r);
  }

  //! The read-only reference kernel over a_[0, n) (n a multiple of the vector width).
  double read_reference(const std::string& shape, std::size_t n) {
    constexpr int kThreads = rp::Flat::kThreads, kUnroll = rp::Flat::kUnroll;
    constexpr std::size_t W = rk::Vec16<Real>::kWidth;
    auto* kernel = rk::read_reference_kernel<kThreads, kUnroll, Real>;
    int per_sm = 0;
    CASCADE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
    const std::size_t nvec = n / W;
    const std::size_t wanted = std::max<std::size_t>(1, (nvec + kThreads * kUnroll - 1) / (kThreads * kUnroll));
    const unsigned blocks = unsigned(std::min(wanted, std::size_t(sms_) * std::max(per_sm, 1)));
    const Real sentinel = Real(1e30);  // the data lie in [-1, 1)
    Real* d_sink = out_.data() + 3;
    const double us = timer_.median_us([&] {
      kernel<<<blocks, kThreads>>>(a_.data(), nvec, sentinel, d_sink);
      CASCADE_CUDA_CHECK_LAUNCH();
    });
    const double gbps = double(nvec * W) * sizeof(Real) / us / 1e3;
    add(shape, n, "read-only reference (16B loads, no writes)", -1, us, double(nvec * W) * sizeof(Real),
        gbps, NAN, "");
    return gbps;
  }

  //! CUB's scratch is sized at the largest input; grow it (outside the timed region) in case a
  //! smaller input ever asks for more.
  void ensure_cub_scratch(std::size_t bytes) {
    if (bytes <= cub_bytes_) return;
    cub_temp_ = std::make_unique<DeviceBytes>(bytes);
    cub_bytes_ = bytes;
  }

  //! cub::DeviceReduce::Max into out_[0]; returns its GB/s.
  double cub_max(const std::string& shape, std::size_t n, double read_gbps) {
    std::size_t need = 0;
    CASCADE_CUDA_CHECK(cub::DeviceReduce::Max(nullptr, need, a_.data(), out_.data(), int(n)));
    ensure_cub_scratch(need);
    std::size_t bytes = cub_bytes_;
    const double us = timer_.median_us([&] {
      CASCADE_CUDA_CHECK(
          cub::DeviceReduce::Max(cub_temp_->get(), bytes, a_.data(), out_.data(), int(n)));
      CASCADE_CUDA_CHECK_LAUNCH();
    });
    const double data_bytes = double(n) * sizeof(Real);
    add(shape, n, "cub::DeviceReduce::Max", -1, us, data_bytes, read_gbps, NAN, "");
    return data_bytes / us / 1e3;
  }

  //! CFL maximum of (a, b): CUB TransformReduce (result in out_[0]) then ours (flat, fused).
  double cfl(const std::string& shape, std::size_t n, double read_gbps) {
    const Real inv_dx = Real(std::sqrt(double(n))), inv_dy = inv_dx / 2;
    const double bytes = 2.0 * double(n) * sizeof(Real);
    const auto zip = thrust::make_zip_iterator(a_.data(), b_.data());
    const CflSpeedOfTuple<Real> speed{{inv_dx, inv_dy}};
    std::size_t need = 0;
    CASCADE_CUDA_CHECK(cub::DeviceReduce::TransformReduce(nullptr, need, zip, out_.data(), int(n),
                                                          ::cuda::maximum<>{}, speed,
                                                          MaxOp<Real>::identity()));
    ensure_cub_scratch(need);
    std::size_t temp = cub_bytes_;
    const double cub_us = timer_.median_us([&] {
      CASCADE_CUDA_CHECK(cub::DeviceReduce::TransformReduce(cub_temp_->get(), temp, zip, out_.data(),
                                                            int(n), ::cuda::maximum<>{}, speed,
                                                            MaxOp<Real>::identity()));
      CASCADE_CUDA_CHECK_LAUNCH();
    });
    add(shape, n, "cub TransformReduce CFL (zip u,v)", -1, cub_us, bytes, read_gbps, NAN, "");
    const double cub_gbps = bytes / cub_us / 1e3;
    const Real want = read_back(out_.data());
    Real* d_ours = out_.data() + 1;
    for (Combine c : {Combine::Fused, Combine::TwoPass}) {
      const double us = timer_.median_us(
          [&] { reducer_.cfl_max_to_device(a_.data(), b_.data(), n, inv_dx, inv_dy, d_ours, c); });
      add(shape, n, std::string("ours CFL flat 2-array, ") + to_string(c), -1, us, bytes, read_gbps,
          cub_gbps, same(read_back(d_ours), want));
    }
    return cub_gbps;
  }

  Table table_;
  Timer timer_;
  int sms_;
  std::size_t max_n_;
  DeviceArray<Real> a_, b_, out_;
  DeviceReducer<Real> reducer_;
  std::size_t cub_bytes_ = 0;
  std::unique_ptr<DeviceBytes> cub_temp_;
};

template <class Real>
bool run_precision(const BenchOptions& o, const std::vector<std::size_t>& flat_sizes,
                   const std::vector<std::size_t>& sides, const cudaDeviceProp& prop) {
  std::size_t max_n = 1;
  for (std::size_t n : flat_sizes) max_n = std::max(max_n, n);
  for (std::size_t s : sides) max_n = std::max(max_n, s * s);
  PrecisionBench<Real> bench(o, max_n, prop);
  for (std::size_t n : flat_sizes) bench.flat(n);
  for (std::size_t s : sides) bench.field(s);
  return bench.ok();
}

}  // namespace

int run_reduction_bench_cuda(const BenchOptions& o) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    std::printf("no CUDA device: %s; GPU rows skipped\n",
                rc != cudaSuccess ? cudaGetErrorString(rc) : "none present");
    cudaGetLastError();
    return 0;
  }
  if (o.device < 0 || o.device >= count)
    throw InputError("--device: " + std::to_string(o.device) + " is not one of the " +
                     std::to_string(count) + " CUDA devices");
  CASCADE_CUDA_CHECK(cudaSetDevice(o.device));
  cudaDeviceProp prop{};
  CASCADE_CUDA_CHECK(cudaGetDeviceProperties(&prop, o.device));

  std::vector<Precision> precisions = o.precisions;
  if (precisions.empty()) precisions = {Precision::Single, Precision::Double};
  std::vector<std::size_t> flat_sizes, sides;
  if (o.sizes.empty()) {
    // Default sweep: flat 2^20 .. 2^28 (every other power) and fields 1024^2, 4096^2, 16384^2.
    for (int e = 20; e <= 28; e += 2) flat_sizes.push_back(std::size_t(1) << e);
    sides = {1024, 4096, 16384};
  } else {
    for (long s : o.sizes) {
      // 16-byte vectors must tile the flat rows of the read reference: round N*N down to it.
      const std::size_t n = std::size_t(s) * std::size_t(s);
      flat_sizes.push_back(n - n % 4);
      sides.push_back(std::size_t(s));
    }
  }

  std::printf("# GPU rows: %s, %d SMs, L2 %.1f MiB, device %d; median of %d runs, L2 flushed before "
              "each run\n",
              prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1048576.0, o.device,
              std::max(o.repeats, 1));
  std::printf("%-7s %-9s %-12s %11s  %-44s %6s %11s %9s %6s %6s  %s\n", "backend", "precision",
              "shape", "elements", "variant", "chunks", "median_us", "GB/s", "%read", "vs_cub",
              "check");
  bool ok = true;
  for (Precision p : precisions)
    ok = (p == Precision::Single ? run_precision<float>(o, flat_sizes, sides, prop)
                                 : run_precision<double>(o, flat_sizes, sides, prop)) &&
         ok;
  return ok ? 0 : 1;
}

}  // namespace cascade
