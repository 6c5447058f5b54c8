//! @file `cascade run`: a deck run from start (or a checkpoint) to t_end, with progress lines
//! and the output directory of docs/output-format.md.
#pragma once

#include <string>
#include <vector>

#include "cascade/config.hpp"

namespace cascade {

//! The columns of diagnostics.csv (docs/output-format.md, Diagnostics), in order.
extern const char* const kDiagnosticsColumns;

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

//! Run; returns the exit code (0 done or stopped by a signal with a checkpoint written).
//! Throws InputError (exit 2) and RunError (exit 1).
int run_command(const RunOptions& options);

}  // namespace cascade
