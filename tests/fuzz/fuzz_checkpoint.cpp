//! @file libFuzzer target: the checkpoint reader. The bytes are written to a file and read as
//! a checkpoint: it must load, or raise InputError; anything else is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cascade/error.hpp"
#include "cascade/output.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/cascade-fuzz-checkpoint-" + std::to_string(::getpid()) + ".h5";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    (void)cascade::read_checkpoint(path, {});
  } catch (const cascade::InputError&) {
  }
  std::remove(path.c_str());
  return 0;
}
