//! @file The processes of a run: MPI when cascade is built with it (CASCADE_MPI) and started by
//! mpirun / srun, otherwise one process. No MPI type appears here, so that the rest of the code
//! (and a build without MPI) sees plain functions; with one process every collective below is
//! a copy or nothing.
//!
//! A slab-decomposed run (Slab in grid.hpp) keeps one rule: every rank takes the same path
//! through the run, so that the collectives (the reductions in the backend, the gathers of
//! fields for output) meet. Whatever could differ between ranks (a signal, the wall clock,
//! the file system) is decided on rank 0 or agreed on (agree_max) before anyone acts on it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cascade {
namespace parallel {

//! Start MPI when this process was started by an MPI launcher (OpenMPI's mpirun, MPICH's
//! hydra, Slurm's srun set their environment variables) and cascade was built with MPI;
//! otherwise nothing. Call once, first thing in main.
void init(int& argc, char**& argv);
//! MPI_Finalize when init started MPI.
void finalize();
//! Whether this build has MPI support (it may still run as one process).
bool built_with_mpi();
//! Whether MPI was started (init) in this process.
bool active();
//! Why this process must not run: a launcher started several processes but they do not form
//! one MPI job (a build without MPI, or another MPI's mpirun), so each would run the whole deck
//! and write the same files. "" when all is well; `report` says whether this process is the
//! one to say so (the launcher's rank 0).
std::string launch_problem(bool& report);

int rank();  //!< 0 without MPI
int size();  //!< 1 without MPI
inline bool root() { return rank() == 0; }
//! Ranks sharing this machine (they share its cores: run.threads = 0 divides them).
int ranks_on_this_node();
//! This rank's place among them (0 ..): its GPU, one rank per GPU.
int rank_on_this_node();

//! End every rank of the run with this exit code (MPI_Abort); without MPI, std::exit.
[[noreturn]] void abort_all(int code);

//! Element-wise maximum over the ranks of small integers (flags, counts).
void agree_max(int* values, int n);
//! The values of every rank, in rank order: out holds size() * n values.
void allgather(const void* mine, std::size_t bytes, void* out);
//! Gather blocks of elements of `elem_bytes` each, rank r's block counts[r] long, into `out`
//! in rank order on rank 0 (MPI_Gatherv; `out` is not touched elsewhere).
void gatherv(const void* mine, std::size_t elem_bytes, const std::vector<std::size_t>& counts, void* out);
//! Sum n doubles over the ranks, added in rank order (the same result on every rank and, for
//! a given number of ranks, in every run).
void sum_in_rank_order(double* values, int n);
//! Rank `from`'s bytes, on every rank.
void broadcast(void* data, std::size_t bytes, int from);

}  // namespace parallel
}  // namespace cascade
