//! @file `cascade run`: a deck run from start (or a checkpoint) to t_end, with progress lines
//! and the output directory of docs/output-format.md.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cascade/backend.hpp"
#include "cascade/config.hpp"
#include "cascade/console.hpp"
#include "cascade/output.hpp"
#include "cascade/solver.hpp"

namespace cascade {

struct RunOptions {
  std::string deck;                    //!< the deck (a new run)
  std::string deck_text;               //!< the deck's text, when not read from the file `deck` (which names it)
  std::string restart;                 //!< a checkpoint to continue from (instead of a deck)
  std::vector<std::string> overrides;  //!< --set section.key=value
  std::string output;                  //!< --output DIR
  std::string backend;                 //!< --backend (overrides run.backend)
  bool overwrite = false;              //!< replace another run's output in the directory
  bool quiet = false;                  //!< only the summary and errors
  bool verbose = false;                //!< more detail (every periodic line kept on screen)
  bool files = true;                   //!< false: no output directory is checked, locked or written
};

//! Exit codes of `cascade run` besides 0 (done), 1 (RunError) and 2 (InputError).
constexpr int kExitStopped = 3;  //!< stopped by SIGINT/SIGTERM, a checkpoint written: resumable
//! Stopped by signal N before anything was computed, nothing written: 128 + N (the shell's
//! convention); run the same command again.

//! Run; returns the exit code (0 done, kExitStopped, 128 + signal). Throws InputError (exit 2)
//! and RunError (exit 1).
int run_command(const RunOptions& options);

//! What `cascade check` adds to the deck's own checks: everything else a run derives from the
//! deck without running (the output path's length, the initial-condition file and its values).
//! InputError on the first problem; nothing is created. Returns the initial-condition file's
//! field (initial.type file), for the run to start from.
std::optional<InitialField> check_run_inputs(const Config& config);

// ---------------------------------------------------------------- the parts of a run
// run_command is made of these, in this order; the Python module (python/) drives a run with
// the same parts.

//! What a run reads and checks before it computes anything.
struct RunInputs {
  Config config;                         //!< the deck (or the checkpoint's), overrides applied, run_id set
  std::unique_ptr<CheckpointFile> from;  //!< the checkpoint of a restart
  std::optional<InitialField> initial;   //!< the field of initial.type file
  std::optional<RunLock> lock;           //!< the run directory's, held from here when it exists (rank 0)
  BackendKind kind = BackendKind::Cpu;
  std::string why;                       //!< why that backend
  std::vector<std::string> notes;        //!< lines for the log
};
//! The deck or checkpoint with the overrides, the restart's checks, the output directory's
//! lock, run id and overwrite rule (options.files), the backend. InputError on the first
//! problem; nothing is created. Filled in place (a lock does not move).
void prepare_run(const RunOptions& options, RunInputs& inputs);

//! The run's backend, announced (grid, backend, precision) and, on a GPU, refused with one
//! line when the fields would not fit in its free memory.
template <class Real>
std::unique_ptr<Backend<Real>> run_backend(const Config& config, const Grid& grid, BackendKind kind,
                                           const std::string& why, Console& console);
//! The solver's first state: the checkpoint's (`from`, resized when the grid differs) or the
//! deck's initial condition.
template <class Real>
void start_state(Solver<Real>& solver, const Grid& grid, const CheckpointFile* from,
                 const std::optional<InitialField>& initial, Console& console);
//! Rank 0, once every input has been read and checked: the directory made, locked and cleared
//! (options.overwrite), its run id, log, resolved deck and output files begun.
void start_run_directory(const Config& config, const RunOptions& options, bool restart, std::optional<RunLock>& lock,
                         Console& console, DiagnosticsLog& diagnostics, SpectraLog& spectra, SnapshotSeries& snapshots);

}  // namespace cascade
