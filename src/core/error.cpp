//! @file Library-call failures become RunError with the call, file and line.
#include "cascade/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

namespace cascade {

//! Length of the UTF-8 sequence that starts at s[i], or 0 where the bytes there are not UTF-8
//! (a stray continuation byte, an overlong form, a surrogate, a cut sequence).
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  const unsigned c = b(i);
  const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) {
    return b(k) >= lo && b(k) <= hi;
  };
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(i + 1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

bool is_utf8(const std::string& s) {
  for (std::size_t i = 0, n = 0; i < s.size(); i += n)
    if ((n = utf8_length(s, i)) == 0) return false;
  return true;
}

//! Text from outside (a value, a key, a file name) made printable on one line: control
//! characters and bytes that are not UTF-8 are shown escaped (\n, \t, \xff).
std::string escaped(const std::string& text) {
  std::string out;
  for (std::size_t i = 0, n = 0; i < text.size(); i += n) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    n = utf8_length(text, i);
    if (ch == '\n') out += "\\n";
    else if (ch == '\r') out += "\\r";
    else if (ch == '\t') out += "\\t";
    else if (ch < 0x20 || ch == 0x7f || n == 0) out += fmt::format("\\x{:02x}", int(ch));
    else out.append(text, i, n);
    n = std::max<std::size_t>(n, 1);
  }
  return out;
}

//! Messages are one line: text from the deck (a multi-line scalar, a key with a tab) is shown
//! escaped, and a very long value is cut.
std::string one_line(const std::string& text, std::size_t most) {
  const std::string out = escaped(text);
  return out.size() > most ? out.substr(0, most) + "..." : out;
}

void fail_call(const char* library, const char* call, const std::string& detail, const char* file,
               int line) {
  const char* base = std::strrchr(file, '/');
  throw RunError(std::string(library) + " call failed at " + (base ? base + 1 : file) + ":" +
                 std::to_string(line) + ": " + call + ": " + detail);
}

}  // namespace cascade
