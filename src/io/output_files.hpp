//! @file Small file-system helpers shared by the output layer's sources (run directory,
//! snapshots, checkpoints): private to src/, not part of the public headers.
#pragma once

#include <string>
#include <vector>

namespace cascade::output_files {

bool exists(const std::string& path);
//! The names in `dir` (without . and ..), sorted; none when it cannot be read.
std::vector<std::string> list_dir(const std::string& dir);
bool starts_with(const std::string& s, const std::string& prefix);
bool ends_with(const std::string& s, const std::string& suffix);
//! The number in "prefix_NNNNNN.h5", or -1.
long numbered(const std::string& name, const std::string& prefix);

}  // namespace cascade::output_files
