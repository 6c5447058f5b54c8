//! @file Copies into shared memory that a thread starts and waits for later (cp.async, compute
//! capability 8.0 and later), so that a kernel's reads of global memory go to shared memory
//! without passing through registers; plain copies on the host, which runs the kernels' phases
//! in the tests.
#pragma once

#include "cascade/types.hpp"

namespace cascade {

//! Starts copying *from to *to (shared memory) without waiting for it: 16 bytes through L2
//! alone (cp.async.cg), 8 through L1 (cp.async.ca). wait_copies waits for the thread's copies,
//! after which a barrier shows them to the block.
template <class T>
CASCADE_HD_INLINE void copy_async(T* to, const T* from) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  static_assert(sizeof(T) == 8 || sizeof(T) == 16, "cp.async copies 8 or 16 bytes here");
  const unsigned dst = unsigned(__cvta_generic_to_shared(to));
  if constexpr (sizeof(T) == 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(from));
  else asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(dst), "l"(from));
#else
  *to = *from;
#endif
}
CASCADE_HD_INLINE void wait_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

}  // namespace cascade
