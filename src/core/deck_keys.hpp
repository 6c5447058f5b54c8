//! @file The deck's keys, declared once (src/core/deck_keys.cpp): each row says where the key's value
//! lives in Config, how it is read and written back, its own checks and its documentation. The
//! table drives parsing (src/core/config.cpp), the per-key checks, the resolved deck (deck.yaml and
//! every checkpoint's deck_resolved) and the key reference of input/README.md. Private to src/.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cascade/config.hpp"

namespace YAML {
class Emitter;
}

namespace cascade::deck {

class Section;

constexpr int kMaxSide = 1 << 20;                      // per dimension: beyond any single-node run
constexpr double kMaxPoints = 65536.0 * 65536.0;       // total points
constexpr double kMinLength = 1e-9, kMaxLength = 1e9;  // box lengths
constexpr int kMaxThreads = 4096;
constexpr int kMaxMembers = 65535;                     // ensemble.members (a CUDA grid row a member)

//! A check of a key's own value, with its message: "expected EXPECTED, found VALUE". `ok` is
//! asked only for a finite value; a value that is not finite fails every check.
struct KeyCheck {
  std::function<bool(double)> ok;
  std::string expected;
};

//! The key's row in input/README.md. An empty `default_text` shows the default value in
//! backquotes; an empty `allowed` of a choice shows its words. Keys without units (all of a
//! section's) make a table without that column. `joins_next`: one row with the next key.
struct KeyDoc {
  std::string meaning, units, default_text, allowed;
  bool joins_next = false;
};

struct DeckKey {
  std::string section, name;
  std::vector<std::string> words;  //!< a choice's or a list's allowed words
  std::function<void(Section&, Config&)> read;                //!< from the deck, its default if absent
  std::function<void(YAML::Emitter&, const Config&)> dump;    //!< key and value (nothing: left out)
  std::function<std::string(const Config&)> text;             //!< the value as messages show it
  std::function<double(const Config&)> number;                //!< numeric keys; empty otherwise
  std::function<void(Config&, double)> assign;                //!< numeric keys: set it (an ensemble member's value)
  bool integer = false;                                       //!< numeric keys read as an integer
  bool length = false;                                        //!< numeric keys that may be a multiple of pi
  std::vector<KeyCheck> checks;                               //!< its own checks, in order
  KeyDoc doc;
  std::string path() const { return section + "." + name; }
};

//! Every key, section by section, in the order of the resolved deck.
const std::vector<DeckKey>& deck_keys();
//! The sections, in order.
const std::vector<std::string>& deck_sections();
//! The key "section.key" of the table, or null.
const DeckKey* find_key(const std::string& path);

}  // namespace cascade::deck
