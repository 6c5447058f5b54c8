//! @file Counter-based random numbers: the phases of random fields, the same on every device
//! and in every slab of a decomposed grid, with no state.
#pragma once

#include <cstdint>

#include "cascade/types.hpp"

namespace cascade {

//! SplitMix64's finaliser: a bijective 64-bit mix, so that (seed, stream, counter) keys give
//! independent-looking uniforms on any device without state (Steele et al. 2014).
CASCADE_HD inline std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

//! A uniform number in [0, 1) (53 random bits) keyed by (seed, a, b).
CASCADE_HD inline double uniform_key(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  const std::uint64_t z = mix64(mix64(mix64(seed) ^ a) ^ (b * 0xD1B54A32D192ED03ull));
  return double(z >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace cascade
