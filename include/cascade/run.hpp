//! @file `cascade run`: a deck run from start to t_end, with progress lines, deck.yaml and
//! diagnostics.csv in the output directory.
#pragma once

#include <string>

#include "cascade/config.hpp"

namespace cascade {

//! The columns of diagnostics.csv (DESIGN.md section 4), in order.
extern const char* const kDiagnosticsColumns;

//! Run the deck; `backend_request` overrides run.backend when not empty. Returns the exit code.
int run_command(const Config& config, const std::string& backend_request);

}  // namespace cascade
