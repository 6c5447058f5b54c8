//! @file `cascade info`: build, backends, devices, memory.
#include <fftw3.h>
#include <fmt/format.h>
#include <hdf5.h>
#include <omp.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "cascade/backend.hpp"
#include "cascade/info.hpp"
#include "cascade/parallel.hpp"
#include "cascade/version.hpp"

namespace cascade {

int run_info() {
  fmt::print("cascade {} ({})\n", kVersion, kGitRevision);
  fmt::print("build: {} , {}\n", kBuildType, kCxxCompiler);
  unsigned h5maj = 0, h5min = 0, h5rel = 0;
  H5get_libversion(&h5maj, &h5min, &h5rel);
  fmt::print("libraries: {}, HDF5 {}.{}.{}\n", fftw_version, h5maj, h5min, h5rel);
  fmt::print("python for postprocessing: {}\n",
             *kPython ? kPython : "none found with numpy and h5py (install python3-numpy python3-h5py)");
  fmt::print("backends:\n");
  fmt::print("  cpu: FFTW + OpenMP, {} threads available\n", omp_get_max_threads());
  // Where measured FFTW plans are kept (run.fft_planning: measure, or auto from 512^2 points).
  for (Precision p : {Precision::Double, Precision::Single}) {
    const std::string path = fftw_wisdom_file(p);
    if (path.empty()) {
      fmt::print("    FFTW wisdom ({}): none (CASCADE_FFTW_WISDOM is empty)\n", to_string(p));
      continue;
    }
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    fmt::print("    FFTW wisdom ({}): {} ({})\n", to_string(p), path,
               ec ? std::string("none yet") : fmt::format("{} bytes", bytes));
  }
#if defined(CASCADE_HAVE_CUDA)
  fmt::print("  cuda: built for architectures {}\n", kCudaArchitectures);
  const std::string why = cuda_unavailable_reason();
  if (!why.empty()) {
    fmt::print("    {}\n", why);
  } else {
    for (const auto& d : cuda_devices())
      fmt::print("    device {}: {}, compute capability {}.{}, {} SMs, {:.1f} GiB ({:.1f} GiB free), L2 {:.0f} MiB\n",
                 d.index, d.name, d.major, d.minor, d.multiprocessors, d.total_memory / 1073741824.0,
                 d.free_memory / 1073741824.0, d.l2_bytes / 1048576.0);
  }
#else
  fmt::print("  cuda: not built ({})\n", cuda_unavailable_reason());
#endif
  if (parallel::built_with_mpi())
    fmt::print("mpi: built with MPI (slabs on the CPU: {}; on GPUs: {}); {}\n",
               slabs_built(BackendKind::Cpu) ? "yes, FFTW MPI" : "no, no FFTW MPI",
               slabs_built(BackendKind::Cuda) ? "yes, NCCL" : "no, no NCCL",
               parallel::active() ? fmt::format("rank {} of {}", parallel::rank(), parallel::size())
                                  : std::string("this process was not started by mpirun"));
  else
    fmt::print("mpi: not built (CASCADE_MPI=OFF, or no MPI and fftw3-mpi at configure time)\n");
  std::string reason;
  const BackendKind k = resolve_backend("auto", reason);
  fmt::print("run.backend: auto picks {} ({})\n", to_string(k), reason);
  return 0;
}

}  // namespace cascade
