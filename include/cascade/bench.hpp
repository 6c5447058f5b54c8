//! @file Benchmarks behind `cascade bench`: programs that print tables and CSV, never timed tests.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cascade/types.hpp"

namespace cascade {

struct BenchOptions {
  std::string what = "reduction";        //!< reduction | fft | step | ensemble
  std::vector<long> sizes;               //!< --n: grid side N (fields N x N); empty = the default sweep
  std::vector<int> members;              //!< bench ensemble --members: batch sizes; empty = 1, 16, 64, 256
  std::string transforms = "auto";       //!< bench step, ensemble --transforms: run.step_transforms
  std::vector<Precision> precisions;     //!< --precision; empty = both
  int repeats = 20;                      //!< timed runs per row (median reported)
  std::string csv;                       //!< --csv FILE; empty = no CSV
  int device = 0;
  std::string stepper = "rk4";       //!< bench step
  std::string form = "basdevant";    //!< bench step: basdevant | advective
  bool include_cpu = false;          //!< bench step: CPU rows too when a GPU is present
  std::string callbacks = "on";      //!< bench step: the GPU's fused transforms on | off | both
  std::string forcing = "none";      //!< bench step, ensemble: none | ring (white noise) | kolmogorov
  FftPlanning fft_planning = FftPlanning::Auto;  //!< fft, step: how the CPU rows plan (as run.fft_planning)
};

//! `cascade bench reduction`: CPU rows always; GPU rows when built with CUDA and a device exists.
int run_reduction_bench(const BenchOptions& options);

#if defined(CASCADE_HAVE_CUDA)
//! GPU part of the reduction benchmark (src/app/bench_reduction_cuda.cu). Returns 0 on success.
int run_reduction_bench_cuda(const BenchOptions& options);
#endif

//! A copy's bandwidth, the one a step's memory-traffic bound is taken at (bench step, bench
//! ensemble): GB/s = 2 bytes / time (each byte read and written), and where it was measured.
struct CopyBandwidth {
  double gbps = 0;
  std::string where;  //!< the device's name, the copy and its size
};

#if defined(CASCADE_HAVE_CUDA)
//! A device-to-device cudaMemcpy of `bytes` (at most a quarter of the free memory) on `device`,
//! median of `repeats` with L2 flushed before each, as `cascade bench reduction`'s copy row
//! (src/app/bench_reduction_cuda.cu).
CopyBandwidth copy_bandwidth_cuda(int device, std::size_t bytes, int repeats);
#endif

//! `cascade bench step`: steps of a turbulent field against the same transforms alone.
int run_step_bench(const BenchOptions& options);

//! `cascade bench ensemble`: member-steps a second of ensembles against their batched transforms.
int run_ensemble_bench(const BenchOptions& options);

//! `cascade bench fft`: forward + inverse 2D real transforms alone, per backend.
int run_fft_bench(const BenchOptions& options);

}  // namespace cascade
