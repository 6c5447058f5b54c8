//! @file The deck's `ensemble` section: `members` realisations of one deck stepped together as one
//! batch. They share the grid, the device, the precision, the time step, the operator's form and
//! the run directory; they differ in their seeds (seed + b) and in the keys `ensemble.vary` lists,
//! each checked, member by member, by that key's own checks and its section's (src/core/config.cpp).
#include "core/ensemble.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <stdexcept>

#include "core/deck_keys.hpp"
#include "core/deck_reader.hpp"
#include "core/deck_types.hpp"

namespace cascade {
namespace deck {
namespace {

bool varied(const Config& c, const std::string& path) {
  return std::any_of(c.ensemble.vary.begin(), c.ensemble.vary.end(), [&](const auto& v) { return v.first == path; });
}

std::string joined(const std::vector<std::string>& words) { return fmt::format("{}", fmt::join(words, ", ")); }

}  // namespace

const std::vector<std::string>& vary_keys() {
  static const std::vector<std::string> keys = {
      "physics.nu",        "physics.mu",     "physics.alpha",  "physics.beta",   "forcing.amplitude",
      "forcing.epsilon",   "forcing.k_f",    "forcing.dk",     "forcing.seed",   "initial.seed",
      "initial.k0",        "initial.energy", "initial.amplitude", "initial.x0",  "initial.y0",
      "initial.radius",    "initial.speed"};
  return keys;
}

std::string fixed_reason(const std::string& path) {
  const auto& may = vary_keys();
  if (std::find(may.begin(), may.end(), path) != may.end()) return "";
  static const std::map<std::string, std::string> keys = {
      {"physics.nu_order", "the batch shares one operator's form"},
      {"physics.alpha_order", "the batch shares one operator's form"},
      {"forcing.type", "the batch shares one forcing type"},
      {"forcing.wavenumber", "an integer that picks the forced modes, which the batch shares"},
      {"initial.type", "the batch shares one initial condition type"},
      {"initial.mode", "an integer that picks the initial modes, which the batch shares"},
      {"initial.path", "the batch shares one initial file"},
      {"initial.vortices", "the batch shares one list of vortices"},
  };
  static const std::map<std::string, std::string> sections = {
      {"grid", "one grid for the batch"},
      {"time", "the batch shares one device, precision and time step"},
      {"run", "the batch shares one device, precision and time step"},
      {"output", "one run directory"},
      {"poisson", "a key of cascade poisson, not of a run"},
      {"ensemble", "the ensemble section describes the batch itself"},
  };
  if (const auto it = keys.find(path); it != keys.end()) return it->second;
  if (const auto it = sections.find(path.substr(0, path.find('.'))); it != sections.end()) return it->second;
  return "it is not one that may vary";
}

std::vector<std::pair<std::string, std::vector<double>>> read_vary(Section& s, const std::string& key) {
  std::vector<std::pair<std::string, std::vector<double>>> out;
  const std::string here = "ensemble." + key;
  const auto got = s.get_mapping(key, "a mapping of keys to lists (section.key: [one value a member])");
  if (!got) return out;
  const Locator& loc = s.locator();
  for (auto it = got->begin(); it != got->end(); ++it) {
    const YAML::Node name = it->first, list = it->second;  // copies: the iterator hands out a temporary
    const int line = line_of(name);
    if (!name.IsScalar()) loc.fail(here, line, "keys section.key", describe(name));
    const std::string path = name.Scalar(), where = here + "." + path;
    s.place(where, line);
    const DeckKey* k = find_key(path);
    if (!k) loc.fail(where, line, "a key of the deck that may vary (" + joined(vary_keys()) + ")",
                     "unknown key '" + path + "'");
    if (const std::string why = fixed_reason(path); !why.empty())
      loc.fail(where, line, "a key that may vary within a batch", path + ", which cannot: " + why);
    if (list.IsNull()) loc.fail(where, line, "a list of values, one a member", "nothing");
    if (!list.IsSequence()) loc.fail(where, line_of(list), "a list of values, one a member", describe(list));
    std::vector<double> values;
    values.reserve(list.size());
    for (const auto& item : list) {
      const std::string entry = fmt::format("{}[{}]", where, values.size());
      if (!item.IsScalar()) loc.fail(entry, line_of(item), k->integer ? "an integer" : "a number", describe(item));
      const double x = k->integer ? s.int_of(item, entry) : s.double_of(item, entry, k->length);
      if (!std::isfinite(x)) loc.fail(entry, line_of(item), "a finite number", describe(item));
      values.push_back(x);
    }
    out.emplace_back(path, std::move(values));
  }
  return out;
}

void check_ensemble(const Config& c, const Locator& loc) {
  const EnsembleConfig& e = c.ensemble;
  for (const auto& [path, values] : e.vary) {
    const std::string where = "ensemble.vary." + path;
    check(values.size() == static_cast<std::size_t>(e.members), loc, c, where,
          fmt::format("{} values, one a member (ensemble.members)", e.members), fmt::format("{} values", values.size()));
    // A key its type does not read would give every member the same run.
    const std::string section = path.substr(0, path.find('.')), name = path.substr(path.find('.') + 1);
    if (section != "forcing" && section != "initial") continue;
    const std::string& type = section == "forcing" ? c.forcing.type : c.initial.type;
    for (const DeckType& t : section == "forcing" ? forcing_types() : initial_types())
      if (t.name == type)
        check(std::find(t.keys.begin(), t.keys.end(), name) != t.keys.end(), loc, c, where,
              fmt::format("a key that {}.type {} reads ({})", section, type, t.keys.empty() ? "it reads none" : joined(t.keys)),
              path);
  }
  for (const auto& [path, seed] : {std::pair<std::string, int>{"initial.seed", c.initial.seed},
                                   std::pair<std::string, int>{"forcing.seed", c.forcing.seed}})
    check(varied(c, path) || seed <= INT_MAX - (e.members - 1), loc, c, path,
          fmt::format("a seed whose members' seeds, seed + 0 to seed + {}, fit in 32 bits", e.members - 1),
          std::to_string(seed));
}

void set_member(Config& m, const Config& config, int b) {
  const auto plus = [b](int seed) {
    const long long s = static_cast<long long>(seed) + b;
    if (s > INT_MAX) throw std::out_of_range(fmt::format("seed {} + member {} beyond 32 bits", seed, b));
    return static_cast<int>(s);
  };
  m.initial.seed = plus(config.initial.seed);
  m.forcing.seed = plus(config.forcing.seed);
  for (const auto& [path, values] : config.ensemble.vary) {
    const DeckKey* k = find_key(path);
    if (!k || !k->assign) throw std::invalid_argument("ensemble.vary: " + path + " is not a numeric key of the deck");
    k->assign(m, values.at(static_cast<std::size_t>(b)));
  }
}

}  // namespace deck

Config member_config(const Config& config, int b) {
  if (b < 0 || b >= config.ensemble.members)
    throw std::out_of_range(fmt::format("member {} of an ensemble of {}", b, config.ensemble.members));
  Config m = config;
  m.ensemble = EnsembleConfig();
  deck::set_member(m, config, b);
  return m;
}

}  // namespace cascade
