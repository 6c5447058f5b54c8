//! @file libFuzzer target: the deck reader. Any input must either parse or raise InputError
//! with one line; anything else (another exception, a crash, a hang, a leak) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cascade/config.hpp"
#include "cascade/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const cascade::Config c = cascade::parse_deck(text, "fuzz.yaml", {});
    (void)cascade::resolved_yaml(c);
  } catch (const cascade::InputError& e) {
    if (std::string(e.what()).find('\n') != std::string::npos) std::abort();  // one line
  }
  return 0;
}
