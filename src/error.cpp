//! @file Library-call failures become RunError with the call, file and line.
#include "cascade/error.hpp"

#include <cstdio>
#include <cstring>
#include <string>

namespace cascade {

std::string one_line(const std::string& text) {
  std::string out;
  for (char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '\n') out += "\\n";
    else if (ch == '\r') out += "\\r";
    else if (ch == '\t') out += "\\t";
    else if (u < 0x20 || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", unsigned(u));
      out += hex;
    } else {
      out += ch;
    }
    if (out.size() > 2000) return out + "...";
  }
  return out;
}

void fail_call(const char* library, const char* call, const std::string& detail, const char* file,
               int line) {
  const char* base = std::strrchr(file, '/');
  throw RunError(std::string(library) + " call failed at " + (base ? base + 1 : file) + ":" +
                 std::to_string(line) + ": " + call + ": " + detail);
}

}  // namespace cascade
