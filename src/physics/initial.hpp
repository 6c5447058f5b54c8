//! @file The initial conditions: one type each in src/physics/initial/, listed once in
//! InitialCondition. A type names its initial.type words (kTypes), is made from the deck's
//! `initial` section (`from`) and sets a Solver's state through its public methods (`apply`:
//! fields of include/cascade/fields.hpp, host arrays or a file read before).
//!
//! Adding one: its file in initial/, its line here, its row in the deck's table of types
//! (src/core/deck_types.cpp), input/README.md.
#pragma once

#include <variant>

#include "cascade/type_table.hpp"
#include "physics/initial/file.hpp"
#include "physics/initial/lamb_dipole.hpp"
#include "physics/initial/random.hpp"
#include "physics/initial/taylor_green.hpp"
#include "physics/initial/vortices.hpp"
#include "physics/initial/zero.hpp"

namespace cascade {

using InitialCondition =
    std::variant<RandomInitial, TaylorGreenInitial, VorticesInitial, LambDipoleInitial, FileInitial, ZeroInitial>;

inline InitialCondition make_initial(const InitialConfig& initial, const Grid& grid) {
  return make_by_type<InitialCondition>(initial.type, "initial.type", initial, grid);
}

}  // namespace cascade
