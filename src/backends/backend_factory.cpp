//! @file Backend selection: `auto` picks CUDA when a device is present, else the CPU.
#include <algorithm>
#include <string>

#include "cascade/backend.hpp"
#include "cascade/error.hpp"
#include "cascade/parallel.hpp"

namespace cascade {

std::string cuda_unavailable_reason() {
#if defined(CASCADE_HAVE_CUDA)
  std::string why;
  if (cuda_device_count(&why) > 0) return "";
  return why;
#else
  return "built without CUDA (CASCADE_CUDA=OFF or no nvcc at configure time)";
#endif
}

//! Whether this build can split a grid over MPI ranks on this kind of backend.
bool slabs_built(BackendKind kind) {
#if defined(CASCADE_HAVE_NCCL)
  if (kind == BackendKind::Cuda) return true;
#endif
#if defined(CASCADE_HAVE_FFTW_MPI)
  if (kind == BackendKind::Cpu) return true;
#endif
  (void)kind;
  return false;
}

BackendKind resolve_backend(const std::string& requested, std::string& why, int members) {
  const bool slabs = parallel::size() > 1 && members <= 1;  // an ensemble is split by members
  if (requested == "cpu") {
    why = "requested";
    return BackendKind::Cpu;
  }
  const std::string reason = cuda_unavailable_reason();
  if (requested == "cuda") {
    if (!reason.empty())
      throw InputError("run.backend: cuda was requested but cannot be used: " + reason);
    if (slabs && !slabs_built(BackendKind::Cuda))
      throw InputError("run.backend: cuda over " + std::to_string(parallel::size()) +
                       " MPI ranks needs NCCL, which this cascade was built without; run.backend: cpu runs over MPI");
    why = "requested";
    return BackendKind::Cuda;
  }
  if (requested != "auto")
    throw InputError("run.backend: expected auto, cuda or cpu, found '" + requested + "'");
  if (slabs && reason.empty() && !slabs_built(BackendKind::Cuda)) {
    why = "auto: a CUDA device is present, but this build has no NCCL for " + std::to_string(parallel::size()) +
          " ranks";
    return BackendKind::Cpu;
  }
  if (reason.empty()) {
    why = "auto: a CUDA device is present";
    return BackendKind::Cuda;
  }
  why = "auto: " + reason;
  return BackendKind::Cpu;
}

template <class Real>
std::unique_ptr<Backend<Real>> make_backend(BackendKind kind, const Grid& grid, int device,
                                            int threads, FftPlanning planning, int exchange_chunks, int members) {
  if (members < 1) throw RunError("make_backend: members < 1");
  const int ranks = parallel::size();
  if (members > 1 && ranks > 1) {
    // An ensemble over MPI: each rank a whole-grid backend of its block of members
    // (Slab::of_members), no slabs; the ranks exchange the CFL maximum and the output alone.
    if (members < ranks)
      throw InputError("ensemble.members: " + std::to_string(members) + " members cannot be split over " +
                       std::to_string(ranks) + " MPI ranks (each rank steps at least one member); start at most " +
                       std::to_string(members) + " ranks");
    const Slab part = Slab::of_members(grid, members, parallel::rank(), ranks);
    if (kind == BackendKind::Cuda) {
#if defined(CASCADE_HAVE_CUDA)
      // The ranks of a machine take its GPUs in order; more ranks than GPUs share them.
      const int count = cuda_device_count();
      return make_cuda_backend<Real>(grid, count > 0 ? parallel::rank_on_this_node() % count : 0, part.members,
                                     part.first_member, members);
#else
      throw InputError("run.backend: cuda is not available: " + cuda_unavailable_reason());
#endif
    }
    // run.threads = 0: the one-process rule (a thread per 16384 points), within this rank's
    // share of the machine's cores.
    if (threads <= 0) {
      const std::size_t by_size = std::max<std::size_t>(1, grid.size() / 16384);
      const int share = std::max(1, cpu_cores_available() / std::max(1, parallel::ranks_on_this_node()));
      threads = int(std::min<std::size_t>(by_size, std::size_t(share)));
    }
    return make_cpu_backend<Real>(grid, threads, planning, part.members, part.first_member, members);
  }
  if (kind == BackendKind::Cuda) {
#if defined(CASCADE_HAVE_CUDA)
    if (parallel::size() > 1) return make_cuda_slab_backend<Real>(grid, exchange_chunks);
    return make_cuda_backend<Real>(grid, device, members);
#else
    (void)device;
    (void)exchange_chunks;
    throw InputError("run.backend: cuda is not available: " + cuda_unavailable_reason());
#endif
  }
  if (parallel::size() > 1) return make_mpi_cpu_backend<Real>(grid, threads, planning);
  return make_cpu_backend<Real>(grid, threads, planning, members);
}

template std::unique_ptr<Backend<float>> make_backend<float>(BackendKind, const Grid&, int, int, FftPlanning, int, int);
template std::unique_ptr<Backend<double>> make_backend<double>(BackendKind, const Grid&, int, int, FftPlanning, int, int);

}  // namespace cascade
