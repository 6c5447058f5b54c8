//! @file Deck reader: the deck's sections read key by key from the table of keys
//! (src/core/deck_keys.cpp), defaults filled, then checks with one message each (validate): each
//! key's own checks from the table, then those that join keys. Unknown sections and keys are
//! errors. The YAML layer (duplicate keys, bounded reads, numbers) is src/deck_reader.cpp.
#include "cascade/config.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "cascade/error.hpp"
#include "core/deck_keys.hpp"
#include "core/deck_reader.hpp"
#include "core/deck_types.hpp"
#include "core/ensemble.hpp"

namespace cascade {
namespace {

using namespace deck;

//! `--set section.key=value`: the key is put in the tree with the value's text; the section's
//! getter reads that text as the key's type wants it (Section::value_of).
void apply_override(YAML::Node& root, const std::string& item, Locator& loc) {
  const auto eq = item.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(one_line(fmt::format("--set: expected section.key=value, found '{}'", item)));
  const std::string path = item.substr(0, eq);
  const std::string value = item.substr(eq + 1);
  if (path == "ensemble.vary" || path.rfind("ensemble.vary.", 0) == 0)
    throw InputError(one_line(fmt::format("{}: --set {}: expected a key --set can give (ensemble.vary's lists, one "
                                          "value a member, are written in the deck), found '{}'",
                                          escaped(loc.file()), path, value)));
  const auto dot = path.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == path.size() ||
      path.find('.', dot + 1) != std::string::npos)
    throw InputError(one_line(fmt::format("--set: expected section.key=value, found '{}'", item)));
  const std::string section = path.substr(0, dot), key = path.substr(dot + 1);
  if (!root[section] || root[section].IsNull()) root[section] = YAML::Node(YAML::NodeType::Map);
  if (!root[section].IsMap())
    throw InputError(one_line(fmt::format("--set {}: section '{}' is not a mapping", path, section)));
  root[section][key] = YAML::Node(value);
  loc.overridden(path, value);
}

std::string num(double x) { return fmt::format("{}", x); }

// Checks that join keys, or that hold for one forcing or initial type (src/core/deck_types.cpp): each
// section's, after the keys' own checks of that section.

void check_grid(const Config& c, const Locator& loc) {
  const GridConfig& g = c.grid;
  check(double(g.nx) * double(g.ny) <= kMaxPoints, loc, c, "grid.nx",
        "nx * ny <= 65536^2 points", fmt::format("{} x {}", g.nx, g.ny));
  {
    // Spectra are summed over shells 2 pi / max(lx, ly) wide: a box much longer than its grid is
    // fine would need more shells than a spectrum can hold.
    const double shells = c.make_grid().shell_count(), bound = 16.0 * std::max(g.nx, g.ny);
    check(shells <= bound, loc, c, g.ly > g.lx ? "grid.ly" : "grid.lx",
          fmt::format("a box whose spectra fit in 16 max(nx, ny) = {:g} shells of width 2pi/max(lx, ly) "
                      "(an aspect ratio lx/ly near nx/ny)", bound),
          fmt::format("{:g} x {:g}, which needs {:.3g} shells", g.lx, g.ly, shells));
  }
}

void check_forcing(const Config& c, const Locator& loc) {
  check_type(forcing_types(), c.forcing.type, c, loc);
}

void check_initial(const Config& c, const Locator& loc) {
  check_type(initial_types(), c.initial.type, c, loc);
}

void check_time(const Config& c, const Locator& loc) {
  const TimeConfig& t = c.time;
  check(std::isfinite(t.dt_min) && t.dt_min >= 0 && t.dt_min < t.dt_max, loc, c, "time.dt_min",
        "a time step in [0, dt_max)", num(t.dt_min));
  check(t.dt_initial == 0 || t.dt_initial >= t.dt_min, loc, c, "time.dt_initial",
        fmt::format("0 (none) or a first step >= dt_min = {}", num(t.dt_min)), num(t.dt_initial));
  // A step of dt_max must still move t at t_end: beyond, t + dt rounds back to t.
  check(std::nextafter(t.t_end, HUGE_VAL) - t.t_end <= 1e-6 * t.dt_max, loc, c, "time.t_end",
        fmt::format("a time that steps of dt_max = {} can resolve (its rounding step <= dt_max / 1e6)",
                    num(t.dt_max)),
        num(t.t_end));
}

void check_poisson(const Config& c, const Locator& loc) {
  const GridConfig& g = c.grid;
  const PoissonConfig& p = c.poisson;
  check(std::isfinite(p.x0) && p.x0 >= 0 && p.x0 <= g.lx, loc, c, "poisson.x0",
        "a position in [0, lx]", num(p.x0));
  check(std::isfinite(p.y0) && p.y0 >= 0 && p.y0 <= g.ly, loc, c, "poisson.y0",
        "a position in [0, ly]", num(p.y0));
}

//! Small checks, one message each (CaNS sanity.f90 style), section by section: each key's own
//! (from the table), then those of the section that join keys. `only`: these sections alone.
void validate(const Config& c, const Locator& loc, const std::set<std::string>& only = {}) {
  using Joint = void (*)(const Config&, const Locator&);
  const std::map<std::string, Joint> joint = {{"grid", check_grid},       {"forcing", check_forcing},
                                              {"initial", check_initial}, {"time", check_time},
                                              {"poisson", check_poisson}, {"ensemble", check_ensemble}};
  for (const auto& section : deck_sections()) {
    if (!only.empty() && !only.count(section)) continue;
    for (const DeckKey& k : deck_keys()) {
      if (k.section != section) continue;
      for (const KeyCheck& kc : k.checks) {
        const double x = k.number(c);
        check(std::isfinite(x) && kc.ok(x), loc, c, k.path(), kc.expected, k.text(c));
      }
    }
    if (const auto it = joint.find(section); it != joint.end()) it->second(c, loc);
  }
}

//! Each member of an ensemble that varies keys, checked as the deck it is: the keys' own checks and
//! those of their sections that join keys, for its values. A message names the member's entry of
//! ensemble.vary (ensemble.vary.physics.nu[3]), or the member, for a check of another key.
void check_members(const Config& c, const YAML::Node& root, const Locator& loc) {
  if (c.ensemble.vary.empty()) return;  // seed + b: checked with the section
  std::set<std::string> sections;
  for (const auto& entry : c.ensemble.vary) sections.insert(entry.first.substr(0, entry.first.find('.')));
  const YAML::Node& croot = root;  // const access never inserts keys
  const YAML::Node vary = croot["ensemble"]["vary"];
  Config m = c;  // the members differ in the keys set_member sets alone
  m.text.clear();
  m.ensemble = EnsembleConfig();
  for (int b = 0; b < c.ensemble.members; ++b) {
    deck::set_member(m, c, b);
    Locator at = loc;
    at.note(fmt::format("ensemble member {}", b));
    for (const auto& entry : c.ensemble.vary) {
      const YAML::Node list = vary[entry.first];
      const int line = list.IsSequence() && static_cast<std::size_t>(b) < list.size() ? line_of(list[b]) : 0;
      at.alias(entry.first, fmt::format("ensemble.vary.{}[{}]", entry.first, b), line);
    }
    validate(m, at, sections);
  }
}

Config parse_deck_unguarded(const std::string& text, const std::string& source,
                            const std::vector<std::string>& overrides) {
  Locator loc(source);
  Config c;
  c.source = source;
  c.text = text;
  c.overrides = overrides;

  YAML::Node root;
  try {
    root = load_one_document(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(fmt::format("{}:{}: YAML syntax error at column {}: {}", escaped(source), e.mark.line + 1,
                                 e.mark.column + 1, one_line(e.msg)));
  } catch (const ShapeError& e) {
    if (!e.first_line)
      throw InputError(fmt::format("{}:{}: a second YAML document in the deck (a deck is one document)",
                                   escaped(source), e.line));
    const bool section = e.path.find_first_of(".[") == std::string::npos;
    throw InputError(fmt::format("{}:{}: {}: duplicate {} (first at line {})", escaped(source), e.line,
                                 one_line(e.path, 200), section ? "section" : "key", e.first_line));
  }
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap())
    throw InputError(fmt::format("{}:{}: deck: expected a mapping of sections (grid:, run:, ...), found {}",
                                 escaped(source), line_of(root), one_line(describe(root))));
  for (const auto& item : overrides) apply_override(root, item, loc);

  std::string names;
  for (const auto& s : deck_sections()) names += (names.empty() ? "" : ", ") + s;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    const auto& sections = deck_sections();
    if (std::find(sections.begin(), sections.end(), key) == sections.end())
      loc.fail(key, line_of(it->first), "a section name (" + names + ")", "unknown section '" + key + "'");
  }

  // ---- parse, key by key (defaults: the struct initialisers, or derived from keys read before)
  for (const auto& name : deck_sections()) {
    Section s(root, name, loc, c.lines, name == "grid");  // grid: the one required section
    for (const DeckKey& k : deck_keys())
      if (k.section == name) k.read(s, c);
    s.finish();
  }

  // ---- validate
  validate(c, loc);
  check_members(c, root, loc);
  return c;
}
}  // namespace

Config parse_deck(const std::string& text, const std::string& source,
                  const std::vector<std::string>& overrides) {
  try {
    return parse_deck_unguarded(text, source, overrides);
  } catch (const InputError& e) {
    // Values and names are escaped where messages are made; this is the net below them (its
    // cut is far above a file name's length and a 400-character value).
    throw InputError(one_line(e.what(), 16384));
  } catch (const YAML::Exception& e) {
    // A structure the reader did not expect (a mapping as a key, an alias loop, ...): still
    // one line naming the place.
    throw InputError(fmt::format("{}:{}: unexpected YAML structure at column {}: {}", escaped(source),
                                 e.mark.line + 1, e.mark.column + 1, one_line(e.msg)));
  }
}

}  // namespace cascade
