//! @file Kernels launched as a chain (programmatic dependent launch, compute capability 9.0 and
//! later): a kernel of the chain may be launched while the one before it still runs, and waits
//! for it (every write of it visible) before it touches memory. What a kernel costs at a
//! boundary of the step on the device is then partly hidden (H100, ten empty kernels a step in a
//! graph's while loop: 15.4 against 12.6 us a step; docs/performance.md, "What the step's
//! launches cost").
//!
//! The rule for a kernel launched chained: every block calls wait_for_previous() before it reads
//! or writes global memory (a block that returned without waiting could let the kernel finish,
//! and the next one start, before the one before it did). It may call let_next_launch() at any
//! point after: the next kernel then only waits for this one's end. So when a kernel starts,
//! every kernel of the chain before the one before it has ended: what those alone wrote, and
//! nothing the one before it reads or writes, may be read or written before the wait (the step
//! clock's budget sums, step_graph.cuh).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include <cooperative_groups.h>

#include "backends/cuda/cuda_check.hpp"

namespace cascade {
namespace cuda_launch {

//! Waits for the kernel before this one in the chain to have finished and its writes to be
//! visible; returns at once where this kernel was not launched chained (or below sm_90).
__device__ __forceinline__ void wait_for_previous() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
}

//! Lets the next kernel of the chain be launched once every block of this one has called it
//! (or ended); it still waits for this one's end before it touches memory.
__device__ __forceinline__ void let_next_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}

//! The barrier of a pair of blocks (a cluster of two, or four: compute capability 9.0 and
//! later): every thread of the cluster has arrived, and the writes of all to shared memory are
//! seen by all.
__device__ __forceinline__ void pair_barrier() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cooperative_groups::this_cluster().sync();
#else
  __trap();  // never launched below 9.0 (ColumnKernelEval::make, RowKernelEval::make)
#endif
}

//! Whether `kernel`, as this build has it for the device `prop` describes, has its code of
//! compute capability 9.0 or later on a device of 9.0 or later: a build whose code for the
//! device is PTX of an earlier architecture has that code compiled away (wait_for_previous's
//! wait, so that the kernel cannot be launched chained; a pair's clusters; staged rows' bulk
//! copies).
template <class Kernel>
bool runs_sm90_code(Kernel* kernel, const cudaDeviceProp& prop) {
  if (prop.major < 9) return false;
  cudaFuncAttributes attr{};
  CASCADE_CUDA_CHECK(cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(kernel)));
  return attr.ptxVersion >= 90 && attr.binaryVersion >= 90;
}

//! kernel<<<grid, block, smem, stream>>>(args...) in clusters of `cluster` blocks along x
//! (1: none; more: compute capability 9.0 and later), launched chained where `chained`.
template <class... Params, class... Args>
void launch_clustered(bool chained, int cluster, void (*kernel)(Params...), dim3 grid, dim3 block,
                      std::size_t smem, cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attr[2];
  unsigned n = 0;
  if (chained) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster > 1) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n].val.clusterDim.x = unsigned(cluster);
    attr[n].val.clusterDim.y = 1;
    attr[n++].val.clusterDim.z = 1;
  }
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = attr;
  config.numAttrs = n;
  CASCADE_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

//! kernel<<<grid, block, smem, stream>>>(args...), launched chained where `chained`.
template <class... Params, class... Args>
void launch_chained(bool chained, void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem,
                    cudaStream_t stream, Args&&... args) {
  launch_clustered(chained, 1, kernel, grid, block, smem, stream, std::forward<Args>(args)...);
}

}  // namespace cuda_launch
}  // namespace cascade
