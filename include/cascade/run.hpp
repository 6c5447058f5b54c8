//! @file `cascade run`: a deck run from start (or a checkpoint) to t_end, with progress lines
//! and the output directory of docs/output-format.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cascade/config.hpp"
#include "cascade/solver.hpp"

namespace cascade {

struct RunOptions {
  std::string deck;                    //!< the deck (a new run)
  std::string restart;                 //!< a checkpoint to continue from (instead of a deck)
  std::vector<std::string> overrides;  //!< --set section.key=value
  std::string output;                  //!< --output DIR
  std::string backend;                 //!< --backend (overrides run.backend)
  bool overwrite = false;              //!< replace another run's output in the directory
  bool quiet = false;                  //!< only the summary and errors
  bool verbose = false;                //!< more detail (every periodic line kept on screen)
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

}  // namespace cascade
