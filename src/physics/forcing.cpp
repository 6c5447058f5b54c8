//! @file The forcing the deck names (include/cascade/forcing.hpp).
#include "cascade/forcing.hpp"

#include "cascade/type_table.hpp"

namespace cascade {

Forcing make_forcing(const ForcingConfig& forcing, const Grid& grid) {
  return make_by_type<Forcing>(forcing.type, "forcing.type", forcing, grid);
}

}  // namespace cascade
