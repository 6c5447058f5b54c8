//! @file GPU rows of `cascade bench reduction`: the max variants of the reduction module
//! (DeviceMax: fused, column two-pass, column host combine) on an N x N field, against CUB
//! (DeviceReduce::Max; TransformReduce for the CFL maximum of u and v), a read-only kernel and a
//! device-to-device copy.
//!
//! Method: data uniform in [-1, 1) (u and v seeded apart), 2 warm-up runs, then options.repeats
//! timed runs, each preceded (outside the timed region) by a cudaMemsetAsync of 2 x L2 so that
//! every run reads from HBM; CUDA events on the default stream; the median is reported.
//! GB/s = bytes read / time (copy: read + written). "%read", "%copy": of the read-only kernel's
//! and of the copy's GB/s at the same N; "vs_cub": of CUB's GB/s at the same N (Max rows:
//! DeviceReduce::Max; CFL rows: TransformReduce).
//! "check": the value equals CUB's, bit for bit. Host-combine rows include the copy of the
//! partials and the wait.
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
#include <string>
#include <vector>

#include "cascade/bench.hpp"
#include "cascade/error.hpp"
#include "cascade/reduction.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "kernels/reduction.cuh"
#include "kernels/reduction_ops.cuh"

namespace cascade {
namespace {

namespace rk = reduction_kernels;

//! The CFL speed of a (u, v) tuple, for CUB's TransformReduce over a zip iterator.
template <class Real>
struct CflSpeedOfTuple {
  CflSpeed<Real> speed;
  template <class Tuple>
  __device__ Real operator()(const Tuple& t) const {
    return speed(::cuda::std::get<0>(t), ::cuda::std::get<1>(t));
  }
};

//! The read-only reference: reads n/W 16-byte vectors of d_a, four in flight a thread, and
//! writes only if one equals `sentinel` (a value the data never hold), so that the loads stay.
template <int BLOCK, class Real>
__global__ void __launch_bounds__(BLOCK) read_reference_kernel(const Real* d_a, std::size_t nvec,
                                                               Real sentinel, Real* d_sink) {
  constexpr int W = rk::Vec16<Real>::kWidth, kUnroll = 4;
  const std::size_t stride = std::size_t(gridDim.x) * BLOCK;
  for (std::size_t base = std::size_t(blockIdx.x) * BLOCK + threadIdx.x; base < nvec; base += kUnroll * stride) {
    rk::Packet<Real, W> p[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const std::size_t u = base + k * stride;
      p[k] = rk::load_packet<W>(d_a + (u < nvec ? u : base) * W);
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k)
#pragma unroll
      for (int j = 0; j < W; ++j)
        if (base + k * stride < nvec && p[k].v[j] == sentinel) *d_sink = p[k].v[j];
  }
}

//! d_a[i] uniform in [-1, 1) from a hash of (seed, i) (splitmix64).
template <class Real>
__global__ void fill_uniform_kernel(Real* d_a, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    std::uint64_t x = seed * 0x100000001B3ull + i + 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    d_a[i] = static_cast<Real>(-1.0 + 2.0 * double(x >> 11) * 0x1.0p-53);
  }
}

//! CUDA-event timer with an L2 flush between runs.
class Timer {
 public:
  Timer(std::size_t flush_bytes, int repeats)
      : flush_(device_buffer<unsigned char>(flush_bytes)), repeats_(std::max(repeats, 1)) {
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
      CASCADE_CUDA_CHECK(cudaMemsetAsync(flush_.data(), r & 0xff, flush_.bytes(), nullptr));
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
  Buffer<unsigned char> flush_;
  int repeats_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

//! Rows on stdout and, with --csv, appended to the CSV file (the CPU part wrote its header).
class Table {
 public:
  Table(const std::string& csv_path, const char* precision) : precision_(precision) {
    if (csv_path.empty()) return;
    csv_.open(csv_path, std::ios::app);
    if (!csv_) throw InputError("--csv: cannot append to " + csv_path);
  }
  //! The GB/s of the read-only kernel and of the copy at this N (0: not yet measured).
  void set_references(double read_gbps, double copy_gbps) { read_gbps_ = read_gbps, copy_gbps_ = copy_gbps; }
  //! bytes moved; cub_gbps CUB's GB/s (0: none); check "" | "ok" | "MISMATCH".
  void add(std::size_t side, const std::string& variant, double us, double bytes, double cub_gbps,
           const std::string& check) {
    const double gbps = bytes / us / 1e3;
    const std::string read = ratio(100.0, gbps, read_gbps_), copy = ratio(100.0, gbps, copy_gbps_),
                      vs = ratio(1.0, gbps, cub_gbps);
    std::printf("%-7s %-9s %6zu %11zu  %-58s %11.2f %9.1f %6s %6s %6s  %s\n", "gpu", precision_, side,
                side * side, variant.c_str(), us, gbps, read.c_str(), copy.c_str(), vs.c_str(), check.c_str());
    std::fflush(stdout);
    if (csv_)
      csv_ << "gpu," << precision_ << "," << side << "," << side * side << ",\"" << variant << "\","
           << us << "," << gbps << "," << read << "," << copy << "," << vs << "," << check << "\n";
    if (check == "MISMATCH") ok_ = false;
  }
  bool ok() const { return ok_; }

 private:
  static std::string ratio(double scale, double gbps, double reference) {
    char text[16] = "";
    if (reference > 0) std::snprintf(text, sizeof text, "%.*f", scale > 1 ? 1 : 3, scale * gbps / reference);
    return text;
  }
  const char* precision_;
  std::ofstream csv_;
  double read_gbps_ = 0, copy_gbps_ = 0;
  bool ok_ = true;
};

const char* same(double a, double b) {
  return (a == b || (std::isnan(a) && std::isnan(b))) ? "ok" : "MISMATCH";
}

//! Everything measured for one precision, on fields of up to max_n values.
template <class Real>
class PrecisionBench {
 public:
  PrecisionBench(const BenchOptions& o, std::size_t max_n, const cudaDeviceProp& prop)
      : table_(o.csv, to_string(precision_of<Real>())),
        timer_(2 * std::size_t(std::max(prop.l2CacheSize, 1 << 20)), o.repeats),
        sms_(prop.multiProcessorCount),
        u_(device_buffer<Real>(max_n)),
        v_(device_buffer<Real>(max_n)),
        out_(device_buffer<Real>(4)),
        max_(max_n) {
    fill(u_, 1);
    fill(v_, 2);
  }

  bool ok() const { return table_.ok(); }

  //! The rows of an N x N field: references, then max of u, then the CFL maximum of u and v.
  void field(std::size_t side) {
    const std::size_t n = side * side;
    const double bytes = double(n) * sizeof(Real);
    table_.set_references(0, 0);
    const double read_gbps = read_reference(side);
    table_.set_references(read_gbps, 0);
    const double copy_us = timer_.median_us([&] {
      CASCADE_CUDA_CHECK(cudaMemcpyAsync(v_.data(), u_.data(), n * sizeof(Real), cudaMemcpyDeviceToDevice, nullptr));
    });
    table_.add(side, "copy: cudaMemcpyAsync D2D (read+write)", copy_us, 2 * bytes, 0, "");
    table_.set_references(read_gbps, 2 * bytes / copy_us / 1e3);
    fill(v_, 2);

    // max of u.
    std::size_t temp_bytes = 0;
    CASCADE_CUDA_CHECK(cub::DeviceReduce::Max(nullptr, temp_bytes, u_.data(), out_.data(), int(n)));
    Buffer<unsigned char> temp = device_buffer<unsigned char>(temp_bytes);
    const double cub_us = timer_.median_us([&] {
      CASCADE_CUDA_CHECK(cub::DeviceReduce::Max(temp.data(), temp_bytes, u_.data(), out_.data(), int(n)));
      CASCADE_CUDA_CHECK_LAUNCH();
    });
    table_.add(side, "cub::DeviceReduce::Max", cub_us, bytes, 0, "");
    ours(side, "", bytes, bytes / cub_us / 1e3,
         [&](MaxVariant v, Real* d_result) { max_.max_to_device(v, u_.data(), side, side, d_result); },
         [&](MaxVariant v) { return max_.max(v, u_.data(), side, side); });

    // CFL maximum of u and v.
    const Real inv_dx = Real(side), inv_dy = Real(side) / 2;
    const auto zip = thrust::make_zip_iterator(u_.data(), v_.data());
    const CflSpeedOfTuple<Real> speed{{inv_dx, inv_dy}};
    CASCADE_CUDA_CHECK(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, zip, out_.data(), int(n),
                                                          ::cuda::maximum<>{}, speed, MaxOp<Real>::identity()));
    temp = device_buffer<unsigned char>(temp_bytes);
    const double cub_cfl_us = timer_.median_us([&] {
      CASCADE_CUDA_CHECK(cub::DeviceReduce::TransformReduce(temp.data(), temp_bytes, zip, out_.data(), int(n),
                                                            ::cuda::maximum<>{}, speed, MaxOp<Real>::identity()));
      CASCADE_CUDA_CHECK_LAUNCH();
    });
    table_.add(side, "CFL: cub TransformReduce (zip u, v)", cub_cfl_us, 2 * bytes, 0, "");
    ours(side, "CFL: ", 2 * bytes, 2 * bytes / cub_cfl_us / 1e3,
         [&](MaxVariant v, Real* d_result) {
           max_.cfl_max_to_device(v, u_.data(), v_.data(), side, side, inv_dx, inv_dy, d_result);
         },
         [&](MaxVariant v) { return max_.cfl_max(v, u_.data(), v_.data(), side, side, inv_dx, inv_dy); });
  }

 private:
  void fill(Buffer<Real>& a, std::uint64_t seed) {
    fill_uniform_kernel<Real><<<sms_ * 8, 256>>>(a.data(), a.size(), seed);
    CASCADE_CUDA_CHECK_LAUNCH();
    CASCADE_CUDA_CHECK(cudaDeviceSynchronize());
  }

  //! Our variants, each checked against CUB's value in out_[0]: on_device(v, d_result) queues v
  //! into d_result, on_host(v) returns its value (ColumnHost, whose time includes the copy).
  template <class OnDevice, class OnHost>
  void ours(std::size_t side, const std::string& prefix, double bytes, double cub_gbps,
            OnDevice&& on_device, OnHost&& on_host) {
    const Real want = to_host(out_)[0];
    const std::string chunks = " (" + std::to_string(max_.column_chunks(u_.data(), side, side)) + " row chunks)";
    for (MaxVariant v : kMaxVariants) {
      Real got{};
      double us = 0;
      if (v == MaxVariant::ColumnHost) {
        us = timer_.median_us([&] { got = on_host(v); });
      } else {
        Real* d_ours = out_.data() + 1;
        us = timer_.median_us([&] { on_device(v, d_ours); });
        got = to_host(out_)[1];
      }
      const std::string label = prefix + "ours " + to_string(v) + (v == MaxVariant::Fused ? "" : chunks) +
                                (v == MaxVariant::ColumnHost ? ", incl. copy" : "");
      table_.add(side, label, us, bytes, cub_gbps, same(got, want));
    }
  }

  //! The read-only kernel over u (N*N rounded down to whole vectors); returns its GB/s.
  double read_reference(std::size_t side) {
    constexpr int kThreads = 256;
    constexpr std::size_t W = rk::Vec16<Real>::kWidth;
    auto* kernel = read_reference_kernel<kThreads, Real>;
    int per_sm = 0;
    CASCADE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
    const std::size_t nvec = side * side / W;
    const std::size_t wanted = std::max<std::size_t>(1, (nvec + kThreads * 4 - 1) / (kThreads * 4));
    const unsigned blocks = unsigned(std::min(wanted, std::size_t(sms_) * std::max(per_sm, 1)));
    const double us = timer_.median_us([&] {
      kernel<<<blocks, kThreads>>>(u_.data(), nvec, Real(1e30), out_.data() + 3);  // data in [-1, 1)
      CASCADE_CUDA_CHECK_LAUNCH();
    });
    const double bytes = double(nvec * W) * sizeof(Real);
    table_.add(side, "read-only reference (16-byte loads)", us, bytes, 0, "");
    return bytes / us / 1e3;
  }

  Table table_;
  Timer timer_;
  int sms_;
  Buffer<Real> u_, v_, out_;
  DeviceMax<Real> max_;
};

template <class Real>
bool run_precision(const BenchOptions& o, const std::vector<std::size_t>& sides, const cudaDeviceProp& prop) {
  std::size_t max_n = 1;
  for (std::size_t s : sides) max_n = std::max(max_n, s * s);
  PrecisionBench<Real> bench(o, max_n, prop);
  for (std::size_t s : sides) bench.field(s);
  return bench.ok();
}

}  // namespace

CopyBandwidth copy_bandwidth_cuda(int device, std::size_t bytes, int repeats) {
  CASCADE_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  CASCADE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::size_t free_bytes = 0, total = 0;
  CASCADE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  // Two buffers and the L2 flush in half the free memory, whole 256-byte blocks.
  bytes = std::min(bytes, free_bytes / 4) / 256 * 256;
  Buffer<unsigned char> from = device_buffer<unsigned char>(bytes), to = device_buffer<unsigned char>(bytes);
  CASCADE_CUDA_CHECK(cudaMemset(from.data(), 1, bytes));
  CASCADE_CUDA_CHECK(cudaMemset(to.data(), 0, bytes));
  Timer timer(2 * std::size_t(std::max(prop.l2CacheSize, 1 << 20)), repeats);
  const double us = timer.median_us([&] {
    CASCADE_CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), bytes, cudaMemcpyDeviceToDevice, nullptr));
  });
  char copy[96];
  std::snprintf(copy, sizeof copy, ": cudaMemcpy device to device of %.0f MiB, median of %d", bytes / 1048576.0,
                std::max(repeats, 1));
  return {2.0 * double(bytes) / us / 1e3, std::string(prop.name) + ", device " + std::to_string(device) + copy};
}

int run_reduction_bench_cuda(const BenchOptions& o) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    std::printf("no CUDA device: %s; GPU rows skipped\n", rc != cudaSuccess ? cudaGetErrorString(rc) : "none present");
    cudaGetLastError();
    return 0;
  }
  if (o.device < 0 || o.device >= count)
    throw InputError("--device: " + std::to_string(o.device) + " is not one of the " + std::to_string(count) +
                     " CUDA devices");
  CASCADE_CUDA_CHECK(cudaSetDevice(o.device));
  cudaDeviceProp prop{};
  CASCADE_CUDA_CHECK(cudaGetDeviceProperties(&prop, o.device));

  std::vector<Precision> precisions = o.precisions;
  if (precisions.empty()) precisions = {Precision::Single, Precision::Double};
  // Default sweep: 1024^2 .. 16384^2, i.e. 2^20 .. 2^28 values.
  std::vector<std::size_t> sides = {1024, 2048, 4096, 8192, 16384};
  if (!o.sizes.empty()) sides.assign(o.sizes.begin(), o.sizes.end());

  std::printf("# GPU rows: %s, %d SMs, L2 %.1f MiB, device %d; median of %d runs, L2 flushed before each run\n",
              prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1048576.0, o.device, std::max(o.repeats, 1));
  std::printf("%-7s %-9s %6s %11s  %-58s %11s %9s %6s %6s %6s  %s\n", "backend", "precision", "N", "elements",
              "variant", "median_us", "GB/s", "%read", "%copy", "vs_cub", "check");
  bool ok = true;
  for (Precision p : precisions)
    ok = (p == Precision::Single ? run_precision<float>(o, sides, prop) : run_precision<double>(o, sides, prop)) && ok;
  return ok ? 0 : 1;
}

}  // namespace cascade
