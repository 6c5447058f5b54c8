//! @file The deck's `ensemble` section (src/core/ensemble.cpp): which keys may vary between the
//! members of a batch and why the others may not, ensemble.vary read from the deck, the checks
//! that join it to the other sections, and each member's own values. Private to src/.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cascade/config.hpp"

namespace cascade::deck {

class Locator;
class Section;

//! The keys ensemble.vary may list ("section.key"), in the order of the table of keys.
const std::vector<std::string>& vary_keys();
//! Why the key "section.key" cannot vary within a batch; empty when it may.
std::string fixed_reason(const std::string& path);

//! ensemble.vary from its section: each key one of vary_keys(), each value a finite number as
//! that key reads one (an integer for a seed, a multiple of pi for a length).
std::vector<std::pair<std::string, std::vector<double>>> read_vary(Section& s, const std::string& key);

//! The section's checks that join keys: one value a member in each list, a forcing or initial
//! key only where its type reads it, and seed + b within 32 bits for every member.
void check_ensemble(const Config& c, const Locator& loc);

//! Member b's own values set in `m`, a copy of `config`: the seeds + b, the keys ensemble.vary lists.
void set_member(Config& m, const Config& config, int b);

}  // namespace cascade::deck
