//! @file The processes of a run (include/cascade/parallel.hpp): MPI, or one process.
#include "cascade/parallel.hpp"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "cascade/error.hpp"

#if defined(CASCADE_HAVE_MPI)
#include <mpi.h>
#endif

namespace cascade {
namespace parallel {
namespace {

bool g_active = false;
int g_rank = 0;
int g_size = 1;
int g_local = 1;
int g_local_rank = 0;

//! The number of processes a launcher says it started (OpenMPI's mpirun, MPICH's hydra), 0 if
//! none says. (Not Slurm's variables: a batch script's own single process sees them too.)
long launcher_size() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* s = std::getenv(v)) return std::strtol(s, nullptr, 10);
  return 0;
}
//! This process's rank according to the launcher (0 if none says).
long launcher_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (const char* s = std::getenv(v)) return std::strtol(s, nullptr, 10);
  return 0;
}

#if defined(CASCADE_HAVE_MPI)
//! Whether an MPI launcher started this process (then MPI_Init finds its peers; without one,
//! cascade runs as a plain single process and does not start MPI at all).
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS", "SLURM_STEP_NUM_TASKS"})
    if (std::getenv(v)) return true;
  return false;
}

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw RunError(std::string("MPI: ") + what + " failed: " + std::string(text, std::size_t(len)));
}
#endif

}  // namespace

void init(int& argc, char**& argv) {
#if defined(CASCADE_HAVE_MPI)
  if (!launched_by_mpi()) return;
  int provided = 0;
  // Only the main thread calls MPI (the output writer thread and OpenMP's threads do not).
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  g_active = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm node;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &g_local);
    MPI_Comm_rank(node, &g_local_rank);
    MPI_Comm_free(&node);
  }
  // Errors come back as codes (and become RunError) rather than killing the job silently.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#else
  (void)argc;
  (void)argv;
#endif
}

void finalize() {
#if defined(CASCADE_HAVE_MPI)
  if (g_active) MPI_Finalize();
  g_active = false;
#endif
}

bool built_with_mpi() {
#if defined(CASCADE_HAVE_MPI)
  return true;
#else
  return false;
#endif
}

bool active() { return g_active; }

std::string launch_problem(bool& report) {
  const long launched = launcher_size();
  report = launcher_rank() == 0;
  if (launched <= 1 || launched == g_size) return "";
#if defined(CASCADE_HAVE_MPI)
  return "started as one of " + std::to_string(launched) +
         " processes, but MPI sees only this one: the launcher (mpirun) is not the MPI cascade was built with";
#else
  return "started as one of " + std::to_string(launched) +
         " processes (mpirun), but this cascade was built without MPI: each would run the whole deck alone. "
         "Install libopenmpi-dev and libfftw3-mpi-dev (scripts/install-deps) and rebuild";
#endif
}
int rank() { return g_rank; }
int size() { return g_size; }
int ranks_on_this_node() { return g_local; }
int rank_on_this_node() { return g_local_rank; }

void abort_all(int code) {
#if defined(CASCADE_HAVE_MPI)
  if (g_active && g_size > 1) MPI_Abort(MPI_COMM_WORLD, code);
  if (g_active) MPI_Finalize();
#endif
  std::exit(code);
}

void agree_max(int* values, int n) {
#if defined(CASCADE_HAVE_MPI)
  if (g_size > 1) check(MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
#else
  (void)values;
  (void)n;
#endif
}

void allgather(const void* mine, std::size_t bytes, void* out) {
#if defined(CASCADE_HAVE_MPI)
  if (g_size > 1) {
    if (bytes > std::size_t(INT_MAX)) throw RunError("MPI: allgather of more than 2 GiB");
    check(MPI_Allgather(mine, int(bytes), MPI_BYTE, out, int(bytes), MPI_BYTE, MPI_COMM_WORLD), "MPI_Allgather");
    return;
  }
#endif
  if (bytes) std::memmove(out, mine, bytes);
}

void gatherv(const void* mine, std::size_t elem_bytes, const std::vector<std::size_t>& counts, void* out) {
  if (counts.size() != std::size_t(g_size)) throw RunError("gatherv: one count per rank expected");
#if defined(CASCADE_HAVE_MPI)
  if (g_size > 1) {
    std::vector<int> n(counts.size()), displ(counts.size());
    std::size_t at = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      if (counts[r] > std::size_t(INT_MAX) || at > std::size_t(INT_MAX))
        throw RunError("MPI: a field of more than 2^31 elements (gather in parts is not implemented)");
      n[r] = int(counts[r]);
      displ[r] = int(at);
      at += counts[r];
    }
    MPI_Datatype elem;
    check(MPI_Type_contiguous(int(elem_bytes), MPI_BYTE, &elem), "MPI_Type_contiguous");
    check(MPI_Type_commit(&elem), "MPI_Type_commit");
    const int mine_n = n[std::size_t(g_rank)];
    const int rc = MPI_Gatherv(mine, mine_n, elem, out, n.data(), displ.data(), elem, 0, MPI_COMM_WORLD);
    MPI_Type_free(&elem);
    check(rc, "MPI_Gatherv");
    return;
  }
#endif
  if (counts[0]) std::memmove(out, mine, counts[0] * elem_bytes);
}

void sum_in_rank_order(double* values, int n) {
  if (g_size == 1 || n <= 0) return;
  std::vector<double> all(std::size_t(g_size) * std::size_t(n));
  allgather(values, std::size_t(n) * sizeof(double), all.data());
  for (int k = 0; k < n; ++k) {
    double s = 0;
    for (int r = 0; r < g_size; ++r) s += all[std::size_t(r) * std::size_t(n) + std::size_t(k)];
    values[k] = s;
  }
}

void broadcast(void* data, std::size_t bytes, int from) {
#if defined(CASCADE_HAVE_MPI)
  if (g_size > 1) {
    if (bytes > std::size_t(INT_MAX)) throw RunError("MPI: broadcast of more than 2 GiB");
    check(MPI_Bcast(data, int(bytes), MPI_BYTE, from, MPI_COMM_WORLD), "MPI_Bcast");
  }
#else
  (void)data;
  (void)bytes;
  (void)from;
#endif
}

}  // namespace parallel
}  // namespace cascade
