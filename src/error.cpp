//! @file Library-call failures become RunError with the call, file and line.
#include "cascade/error.hpp"

#include <cstring>
#include <string>

namespace cascade {

void fail_call(const char* library, const char* call, const std::string& detail, const char* file,
               int line) {
  const char* base = std::strrchr(file, '/');
  throw RunError(std::string(library) + " call failed at " + (base ? base + 1 : file) + ":" +
                 std::to_string(line) + ": " + call + ": " + detail);
}

}  // namespace cascade
