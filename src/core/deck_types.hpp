//! @file The forcing and initial-condition types, each declared once (src/core/deck_types.cpp): its
//! word in the deck, the keys of its section it reads, the checks that hold for it alone (after
//! each key's own) and its text in input/README.md. forcing.type and initial.type take their
//! words from here. Adding a type: a row here, its physics (a file of include/cascade/forcing/ or
//! src/physics/initial/, whose kTypes claims the word: the DeckTypes tests hold the two lists
//! equal) and the key reference (check_docs.py write-keys). Private to src/.
#pragma once

#include <string>
#include <vector>

#include "cascade/config.hpp"

namespace cascade::deck {

class Locator;

struct DeckType {
  std::string name;
  std::vector<std::string> keys;                     //!< the keys of its section it reads
  void (*check)(const Config&, const Locator&);      //!< its own checks, one message each; may be null
  std::string doc;                                   //!< "`name` (what it is)" in input/README.md
};

const std::vector<DeckType>& forcing_types();
const std::vector<DeckType>& initial_types();

//! The words of a list of types, in order.
std::vector<std::string> type_names(const std::vector<DeckType>& types);
//! Their docs joined by `separator`: the `allowed` cell of the type key.
std::string type_docs(const std::vector<DeckType>& types, const std::string& separator);
//! The checks of the type named `name` (none when it has none).
void check_type(const std::vector<DeckType>& types, const std::string& name, const Config& c, const Locator& loc);

}  // namespace cascade::deck
