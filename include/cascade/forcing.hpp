//! @file The forcings of the vorticity equation: one type each in include/cascade/forcing/, listed
//! once in Forcing. A type names its forcing.type words (kTypes), is made from the deck's
//! `forcing` section and the grid (`from`, which refuses with InputError what the deck's checks
//! cannot see), says whether it is white in time (drawn afresh each step, which the energy
//! budget counts differently), and gives its field F for a step (`field`, a field of
//! include/cascade/fields.hpp: the vorticity forcing, dealiased by the fill). A white one also
//! gives `base_field`, a field whose `at_step(step, h)` is step `step`'s draw: the step fills
//! it from the device's clock (Backend::step_forcing), on the device as on the host.
//!
//! Adding a forcing: its file here (and its field in fields/ if none fits), its line in
//! Forcing, its row in the deck's table of types (src/core/deck_types.cpp), input/README.md.
#pragma once

#include <array>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "cascade/config.hpp"
#include "cascade/error.hpp"
#include "cascade/forcing/kolmogorov.hpp"
#include "cascade/forcing/ring.hpp"
#include "cascade/type_table.hpp"

namespace cascade {

//! forcing.type none.
struct NoForcing {
  static constexpr std::array<const char*, 1> kTypes = {"none"};
  static NoForcing from(const ForcingConfig&, const Grid&) { return {}; }
  bool white_noise() const { return false; }
};

using Forcing = std::variant<NoForcing, KolmogorovForcing, RingForcing>;

//! Whether forcing type F gives base_field (white noise drawn each step from it).
template <class F, class = void>
struct has_base_field : std::false_type {};
template <class F>
struct has_base_field<F, std::void_t<decltype(std::declval<const F&>().template base_field<double>(std::declval<const Grid&>()))>>
    : std::true_type {};

//! The forcing the deck names (InputError for a word no type claims).
inline Forcing make_forcing(const ForcingConfig& forcing, const Grid& grid) {
  return make_by_type<Forcing>(forcing.type, "forcing.type", forcing, grid);
}

}  // namespace cascade
